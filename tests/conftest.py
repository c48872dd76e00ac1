"""Shared test set-up.

* Installed third-party pdpx plugins are kept out of the run (PDPX_DISABLE_PLUGINS=1);
  tests that need entry points turn loading on explicitly.
* In CI (CI=true) a skipped test fails the run: everything must be installed there.
* The tree kernels are compiled (or loaded from numba's cache) before the first test, so
  ``method="auto"`` takes ``exact`` whatever the size of a test's data; the rule that
  makes a first call on a fresh installation run ``brute`` while they compile is tested
  in fresh processes with their own cache (tests/plugins/trees/test_jit.py).
* Initialising R through rpy2 prepends R's and the system's library folders to
  LD_LIBRARY_PATH in os.environ; Python processes started afterwards (Dask
  workers, subprocess checks) then load the system's libpython next to this
  interpreter's and fail. Each test leaves LD_LIBRARY_PATH as it found it (R,
  already loaded, does not need it again).
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


@pytest.fixture(scope="session", autouse=True)
def _compiled_kernels():
    from pdpx.plugins.trees.warmup import warm_up

    warm_up(jobs=min(3, os.cpu_count() or 1))


@pytest.fixture(autouse=True)
def _fresh_plugin_manager():
    from pdpx.core.plugins import reset_plugin_manager

    reset_plugin_manager()
    yield
    reset_plugin_manager()


_LIBRARY_PATH = os.environ.get("LD_LIBRARY_PATH")


def _restore_library_path():
    if os.environ.get("LD_LIBRARY_PATH") != _LIBRARY_PATH:
        if _LIBRARY_PATH is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = _LIBRARY_PATH


@pytest.fixture(autouse=True)
def _keep_library_path():
    _restore_library_path()  # a module fixture may have initialised R before this test
    yield
    _restore_library_path()


@pytest.fixture(scope="session")
def spark():
    """One local Spark session (two cores) for the whole run, its Python workers this interpreter; skipped only
    where Java is absent (make setup installs Debian's headless JRE)."""
    import shutil
    import sys

    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pdpx[spark]')")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java, which is not installed (Debian: apt-get install default-jre-headless)")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("pdpx-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.memory", "1g").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
