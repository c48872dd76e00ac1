"""Before the first test: pdpx's tree kernels compiled into numba's cache (as ``make setup`` does), so that
``method="auto"`` takes ``exact`` on these small data sets instead of brute while they would compile."""

import subprocess
import sys

import pytest


@pytest.fixture(scope="session", autouse=True)
def _compiled_kernels():
    subprocess.run([sys.executable, "-m", "pdpx.plugins.trees.warmup"], check=True, capture_output=True)
