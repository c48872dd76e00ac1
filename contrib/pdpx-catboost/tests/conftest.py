"""Before the first test: pdpx's tree kernels compiled into numba's cache (as ``make setup`` does), so that
``method="auto"`` takes ``exact`` on these small data sets instead of brute while they would compile."""

import subprocess
import sys

import pytest


@pytest.hookimpl(trylast=True)  # after pdpx's tests/conftest.py, when both run
def pytest_sessionstart(session):
    """Once per run, and not in pytest-xdist's workers (their controller warms up before starting them), nor when
    pdpx's own tests/conftest.py did it already in this run."""
    config = session.config
    if hasattr(config, "workerinput") or getattr(config, "pdpx_kernels_compiled", False):
        return
    subprocess.run([sys.executable, "-m", "pdpx.plugins.trees.warmup"], check=True, capture_output=True)
    config.pdpx_kernels_compiled = True
