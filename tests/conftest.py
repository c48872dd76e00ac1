"""Shared test set-up.

* Installed third-party pdpx plugins are kept out of the run (PDPX_DISABLE_PLUGINS=1);
  tests that need entry points turn loading on explicitly.
* In CI (CI=true) a skipped test fails the run: everything must be installed there.
* The tree kernels are compiled (or loaded from numba's cache) before the first test (once, in
  pytest-xdist's controller when ``make test`` runs the tests on two workers), so
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


def _xdist_worker(config) -> bool:
    """Whether this process is a pytest-xdist worker (``make test`` runs two)."""
    return hasattr(config, "workerinput")


def pytest_sessionstart(session):
    """The kernels compiled once, before any test: here, or under pytest-xdist in the controller before it starts its
    workers (xdist starts them in its own ``pytest_sessionstart``, which runs last), so that the workers only load
    them from the cache and never compile the same kernels side by side."""
    if _xdist_worker(session.config) or getattr(session.config, "pdpx_kernels_compiled", False):
        return
    from pdpx.plugins.trees.warmup import warm_up

    warm_up(jobs=min(3, os.cpu_count() or 1))
    session.config.pdpx_kernels_compiled = True  # the CatBoost plugin's conftest then does not warm up again


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under ``pytest -n N --dist loadgroup`` (``make test``), the tests of a module run on one worker (its module
    fixtures, fitted models, are built once), and every module using the ``spark`` fixture on one and the same
    worker: one Spark session, one JVM, for the whole run."""
    if config.getoption("dist", "no") != "loadgroup":
        return
    spark_modules = {item.path for item in items if "spark" in getattr(item, "fixturenames", ())}
    for item in items:
        group = "spark" if item.path in spark_modules else item.path.relative_to(config.rootpath).as_posix()
        item.add_marker(pytest.mark.xdist_group(group))


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
