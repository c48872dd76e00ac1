"""brute's stacking check (issue 49): what it costs on the first call and on later calls.

A model whose prediction goes through the user's own code (here a FunctionTransformer with a function of the
user's, row by row) is checked once, on 8 rows at 3 grid points, for predictions that depend on the other rows
of the call (:mod:`pdpx.plugins.stacking`). Each row times the same brute call with the check (the default)
and without it (``method_options={"stack": True}``: stacked as told, nothing checked), side by side:

* first call: a fresh copy of the fitted pipeline each time (the check runs in the first column only);
* later calls: the same pipeline, verdict kept: the check costs a look-up (and the pipeline's fingerprint).
"""

from __future__ import annotations

import copy
import os

import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

import pdpx

try:
    from .common import best_time, row
except ImportError:  # run as a script
    from common import best_time, row

QUICK = os.environ.get("PDPX_BENCH_QUICK") == "1"


def clipped(A):
    """A user's function of each value alone (what the check finds safe to stack)."""
    return np.clip(np.asarray(A, dtype=np.float64), 0.05, 0.95)


def _models():
    n = 2000 if QUICK else 20000
    X, y = make_friedman1(n_samples=n, n_features=10, random_state=0)
    X = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
    return {
        f"FunctionTransformer(user func) + Ridge, {n:,} rows": (Pipeline(
            [("f", FunctionTransformer(clipped)), ("m", Ridge())]).fit(X, y), X),
        f"FunctionTransformer(user func) + HistGradientBoosting(50), {n:,} rows": (Pipeline(
            [("f", FunctionTransformer(clipped)),
             ("m", HistGradientBoostingRegressor(max_iter=50, random_state=0))]).fit(X, y), X),
    }


def _call(model, X, check: bool):
    options = {} if check else {"stack": True}
    res = pdpx.partial_dependence(model, X, [X.columns[0]], grid_resolution=50, method="brute",
                                  method_options=options)
    assert not any("once per grid point" in n for n in res.notes), res.notes
    return res


def _check_alone(model, X):
    """(the check's time on a fresh copy, best of 5; its time once its verdict is kept): the check itself, without
    the call around it (whose time a loaded machine's thread pools make noisy)."""
    import time

    from pdpx.core.method import Request
    from pdpx.core.plugins import adapt
    from pdpx.plugins import stacking
    from pdpx.plugins.brute import stacked_frame

    req = Request(X=X, features=[0], grid_values=[np.linspace(0, 1, 50)], categorical=[False], response="predict",
                  outputs=[0], kind="average", sample_weight=None, memory_budget=2**30)

    def frame(rows, values):
        return stacked_frame(rows, [0], values)

    first = []
    for _ in range(5):
        adapter = adapt(copy.deepcopy(model))
        adapter.validate_columns(X)
        t0 = time.perf_counter()
        assert stacking.verdict(adapter, req, frame) is None
        first.append(time.perf_counter() - t0)
    later = best_time(lambda: stacking.verdict(adapter, req, frame), repeat=5)
    return min(first), later


def run():
    rows = []
    for name, (model, X) in _models().items():
        alone_first, alone_later = _check_alone(model, X)
        rows.append(row("brute's stacking check (issue 49)", f"{name}: the check alone, first call (4 predict calls "
                        "on 24 rows in all, one thread) against its later calls (verdict kept)", alone_first,
                        "later calls", alone_later, "first call <= 0.1 s", alone_first <= 0.1))
        fresh = [copy.deepcopy(model) for _ in range(8)]  # copied before the timing: each call meets a new model
        first_on = best_time(lambda: _call(fresh.pop(), X, True), repeat=3)
        first_off = best_time(lambda: _call(fresh.pop(), X, False), repeat=3)
        rows.append(row("brute's stacking check (issue 49)", f"{name}, 1-way grid 50, first call (fresh model): "
                        "checked", first_on, "same call, stack=True given (no check)", first_off,
                        "checked <= 1.2x the call without", first_on <= 1.2 * first_off))
        _call(model, X, True)
        later_on = best_time(lambda: _call(model, X, True), repeat=5)
        later_off = best_time(lambda: _call(model, X, False), repeat=5)
        rows.append(row("brute's stacking check (issue 49)", f"{name}, 1-way grid 50, later calls: checked "
                        "(verdict kept)", later_on, "same call, stack=True given (no check)", later_off,
                        "within noise: ratio >= 0.95", later_off / later_on >= 0.95))
    return rows


if __name__ == "__main__":  # pragma: no cover
    for r in run():
        print(r)
