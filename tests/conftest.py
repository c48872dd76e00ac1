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
from pathlib import Path

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


#: What ``make test-fast`` leaves out (marked ``slow``; ``make test`` runs everything), by module or by test
#: (``path::function``, every parametrization), with why; every test using the ``spark`` fixture is slow too (a
#: JVM). The costliest first: under pytest-xdist their groups are also handed out first, so that no long module
#: starts last and leaves one worker idle. A module fixture's cost falls on the first test that uses it: list the
#: module, not that test.
SLOW = {
    "tests/test_generated_models.py": "hypothesis draws 80 fitted models per library, pipelines the slowest (75 s)",
    "tests/plugins/trees/test_jit.py::test_end_to_end_a_fresh_cache_first_runs_brute_then_the_next_process_runs_exact":
        "compiles every kernel into an empty numba cache (45 s)",
    "tests/rows/test_spark.py": "Spark sessions in processes of their own (Spark Connect, a retried task)",
    "tests/test_docs_examples.py": "runs every page's examples and builds the site",
    "tests/adapters/test_ensembles.py": "fits stacking, bagging and voting ensembles of boosted models",
    "tests/outputs/test_notebook.py": "a Jupyter kernel per test",
    "tests/outputs/test_report_browser.py": "a headless Chromium",
    "tests/cli/test_cli_help.py": "runs every bash example of the docs in a process",
    "tests/core/test_properties.py": "hypothesis: random ensembles, exact against brute",
    "tests/adapters/test_pipeline_exactness.py": "fits every pipeline step with several models",
    "tests/adapters/test_pipelines.py": "a pipeline fitted per encoder and step, exact against brute (3-4 s each)",
    "tests/adapters/test_rexport.py": "R processes",
    "tests/cli/test_cli_rds.py": "R processes, R CMD INSTALL",
    "tests/cli/test_rds_check.py": "R processes",
    "tests/plugins/trees/test_nbcache.py": "Python processes with caches of their own",
    "tests/rows/test_dask.py": "Dask clusters of worker processes",
    "tests/rows/test_dask_counts.py": "Dask clusters",
    "tests/sklearn/test_display_upstream.py": "scikit-learn's own display tests",
    "tests/plugins/trees/test_counts.py::test_deep_trees_many_rows_weights_and_chunks": "deep trees, many rows",
    "tests/adapters/test_lightgbm.py::test_ir_reproduces_lightgbm": "every model against LightGBM, adversarial rows",
    "tests/adapters/test_inplace_changes.py::test_hist_gradient_boosting_refit_and_edit": "refits, edits, refits",
    "tests/outputs/test_report_survival.py": "four reports of survival models, every figure drawn (40 s)",
}


#: Modules whose Spark Connect scripts run in one shared process per worker (tests/spark_connect.py): they join the
#: Spark group, so that one worker starts the one Connect server (two would race for its port).
CONNECT_MODULES = {"tests/rows/test_spark.py", "tests/rows/test_spark_checks.py"}


def _slow_rank(item, rel: str, uses_spark: bool) -> int | None:
    """The item's place in :data:`SLOW` (the ``spark`` fixture: just after the first), or None."""
    for rank, key in enumerate(SLOW):
        if rel == key or (rel + "::" + item.name).split("[")[0] == key:
            return rank
    return 1 if uses_spark else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Marks the tests of :data:`SLOW` ``slow``. Under ``pytest -n N --dist loadgroup`` (``make test``) also: the
    tests of a module run on one worker (its module fixtures, fitted models, are built once), every module using
    the ``spark`` fixture on one and the same worker (one Spark session, one JVM, for the whole run), and the groups
    holding slow tests are handed out first (with ``--no-loadscope-reorder``, xdist keeps this order)."""
    spark_modules = {item.path for item in items if "spark" in getattr(item, "fixturenames", ())}
    ranks = {}
    for item in items:
        rel = Path(os.path.relpath(item.path, config.rootpath)).as_posix()
        rank = _slow_rank(item, rel, item.path in spark_modules and "spark" in getattr(item, "fixturenames", ()))
        if rank is not None:
            item.add_marker(pytest.mark.slow)
        group = "spark" if item.path in spark_modules or rel in CONNECT_MODULES else rel
        ranks[group] = min(ranks.get(group, len(SLOW)), len(SLOW) if rank is None else rank)
        item.pdpx_group = group
    if not getattr(config.option, "loadgroup", False):  # set in xdist's workers (their own "dist" is "no")
        return
    for item in items:
        item.add_marker(pytest.mark.xdist_group(item.pdpx_group))
    items.sort(key=lambda item: ranks[item.pdpx_group])  # stable: the order within a group is kept


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
