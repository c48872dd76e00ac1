"""A process forked after ``exact`` can compute again: nothing pdpx did in the parent leaves a thread pool
the child would wait on for ever.

OpenMP's thread pool (LightGBM's, XGBoost's, scikit-learn's) does not survive ``fork``: a child that
enters a parallel region the parent had started waits for threads that do not exist. The models here
are fitted on one thread (so fitting starts no pool), pdpx computes ``exact`` with ``n_jobs=1``, and the
process forks; the child computes ``exact`` again, on the same model and on a fresh copy (whose trees
are read and self-checked in the child), and checks one value against the model's own predict. Each
child has a hard timeout: a deadlock fails the test (the child's stacks are printed) instead of hanging it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import pdpx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODELS = {
    "scikit-learn": ("sklearn", """
        from sklearn.ensemble import HistGradientBoostingRegressor
        from threadpoolctl import threadpool_limits
        with threadpool_limits(1):
            model = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    """),
    "xgboost": ("xgboost", """
        import xgboost
        # one thread, as the user set it: pdpx's own calls must start no pool. (A booster set to every core starts
        # its pool whenever it is called, by pdpx's brute as by the user's own predict; pdpx does not change the
        # process's thread settings to prevent that: xgboost.config_context(nthread=1) would leave them at one.)
        model = xgboost.XGBRegressor(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y)
    """),
    "lightgbm": ("lightgbm", """
        import lightgbm
        model = lightgbm.LGBMRegressor(n_estimators=10, num_leaves=8, n_jobs=1, verbose=-1).fit(X, y)
    """),
    "catboost": ("pdpx_catboost", """
        import catboost
        model = catboost.CatBoostRegressor(iterations=10, depth=3, thread_count=1, verbose=0).fit(X, y)
    """),
}

SCRIPT = """
import faulthandler, os, pickle, sys
import numpy as np, pandas as pd
import pdpx

rng = np.random.default_rng(0)
X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
y = X.a + X.b * X.c
{fit}
res = pdpx.partial_dependence(model, X, "a", method="exact", n_jobs=1, grid_resolution=5)
assert res.method == "exact"
pid = os.fork()
if pid == 0:
    faulthandler.dump_traceback_later(240, exit=True)  # a deadlock: stacks on stderr, exit code 1
    for m in (model, pickle.loads(pickle.dumps(model))):
        again = pdpx.partial_dependence(m, X, "b", method="exact", n_jobs=1, grid_resolution=5)
        g = again.grid_values[0][2]
        want = float(np.mean(np.asarray(m.predict(X.assign(b=g))).reshape(-1)))
        assert again.method == "exact" and np.isclose(again.average[0][2], want), (again.average, want)
    os._exit(0)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.parametrize("library", list(MODELS))
def test_a_child_forked_after_exact_computes_again(library, tmp_path):
    module, fit = MODELS[library]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    script = tmp_path / "fork.py"
    script.write_text(SCRIPT.format(fit=textwrap.dedent(fit)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src")]
                                                        + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    if module == "pdpx_catboost":  # the suite keeps installed plugins out; this child loads the CatBoost one
        env["PDPX_DISABLE_PLUGINS"] = "0"
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=400)
    assert done.returncode == 0, done.stderr[-4000:]


def test_pdpx_leaves_the_processs_thread_settings_as_it_found_them():
    """pdpx's one-thread checks are scoped: after exact on an XGBoost model, OpenMP's thread count and XGBoost's
    global configuration are what they were (xgboost.config_context(nthread=1) left them at one thread)."""
    xgb = pytest.importorskip("xgboost")
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    model = xgb.XGBRegressor(n_estimators=5, max_depth=3).fit(X, X["a"] * 2)
    model.predict(X)

    def settings():
        omp = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openmp"]
        return omp, xgb.get_config().get("nthread")

    before = settings()
    res = pdpx.partial_dependence(model, X, ["a"], grid_resolution=5)
    assert res.method == "exact"
    assert settings() == before
