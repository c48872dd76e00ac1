"""Shared test set-up.

* Installed third-party pdpx plugins are kept out of the run (PDPX_DISABLE_PLUGINS=1);
  tests that need entry points turn loading on explicitly.
* In CI (CI=true) a skipped test fails the run: everything must be installed there.
"""

import os

os.environ.setdefault("PDPX_DISABLE_PLUGINS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        skipped = reporter.stats.get("skipped", []) if reporter else []
        if skipped:
            reporter.write_line(f"CI: {len(skipped)} test(s) skipped; in CI nothing may skip", red=True)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _fresh_plugin_manager():
    from pdpx.core.plugins import reset_plugin_manager

    reset_plugin_manager()
    yield
    reset_plugin_manager()
