"""Budgets and settings follow the work onto every thread pdpx starts (issue 40, point 6): the process pool's
threads and the report's drawing thread see the caller's ``config_context``; the report's ``memory_budget`` bounds
the frames its figures draw; the scikit-learn adapter's domain check reads X in blocks within the budget."""

from __future__ import annotations

import threading
import tracemalloc

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import threads
from pdpx.core.config import get_config

pytest.importorskip("plotnine")
pytest.importorskip("sklearn")

from sklearn.linear_model import LinearRegression  # noqa: E402

from pdpx.adapters import sklearn as sk  # noqa: E402
from pdpx.outputs import plot_style  # noqa: E402


@pytest.fixture
def small_default_budget():
    """The process default at 1 MiB: a thread that does not see the caller's context sees this."""
    before = pdpx.get_config()["memory_budget"]
    pdpx.set_config(memory_budget="1MB")
    try:
        yield
    finally:
        pdpx.set_config(memory_budget=before)


def test_the_pools_threads_see_the_callers_context(small_default_budget):
    seen = []

    def budget(_):
        seen.append((threading.current_thread().name, get_config()["memory_budget"]))
        return get_config()["memory_budget"]

    with pdpx.config_context(memory_budget="300MB"):
        got = threads.in_threads(budget, list(range(6)))
        beside = threads.in_background(budget, 0).result()
    assert got == [300 * 2**20] * 6 and beside == 300 * 2**20
    if threads.cores() > 1:
        assert any(name.startswith("pdpx") for name, _ in seen)  # some ran on the pool's threads
    assert threads.in_threads(budget, list(range(3))) == [2**20] * 3  # outside the block: the default


def _spy_frames(monkeypatch):
    """Record, for each 1-way figure drawn: the thread, the budget it saw, the ICE curves drawn, the frame's bytes
    and the note."""
    drawn = []
    real = plot_style.result_frame

    def spy(res, opts):
        df, note = real(res, opts)
        drawn.append(dict(thread=threading.current_thread().name, budget=get_config()["memory_budget"],
                          curves=int(df.loc[df["kind"] == "individual", "row"].nunique()),
                          nbytes=int(df.memory_usage(deep=True).sum()), note=note, rows=res.n_rows))
        return df, note

    monkeypatch.setattr(plot_style, "result_frame", spy)
    return drawn


def _model(n):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return LinearRegression().fit(X, X["a"] + X["b"] * X["c"]), X


def test_the_drawing_thread_obeys_the_callers_config_context(tmp_path, monkeypatch, small_default_budget):
    model, X = _model(3000)
    drawn = _spy_frames(monkeypatch)
    with pdpx.config_context(memory_budget="1GB"):
        pdpx.report(model, X, tmp_path / "r.html", method="brute", grid_resolution=10, ice_sample=3000,
                    interactions=None, heterogeneity=None, dpi=30, progress=False)
    assert len(drawn) == 3
    assert all(d["thread"].startswith("pdpx-report") for d in drawn)  # drawn beside (Agg)
    assert all(d["budget"] == 2**30 for d in drawn)  # the caller's setting, not the 1 MiB default
    assert all(d["curves"] == 3000 and "all 3,000 rows" in d["note"] for d in drawn)  # every curve fits 1 GB


def test_the_reports_memory_budget_bounds_what_its_figures_draw(tmp_path, monkeypatch):
    model, X = _model(20000)
    drawn = _spy_frames(monkeypatch)
    budget = 4 * 2**20
    pdpx.report(model, X, tmp_path / "r.html", method="brute", grid_resolution=20, ice_sample=20000,
                interactions=None, heterogeneity=None, dpi=30, progress=False, memory_budget="4MB")
    assert len(drawn) == 3
    for d in drawn:
        assert d["budget"] == budget
        assert 0 < d["curves"] < 20000  # a sample of the curves asked for ...
        assert f"ICE curves of {d['curves']} of 20,000 rows" in d["note"] and "memory budget of 4.0 MiB" in d["note"]
        assert d["nbytes"] <= budget  # ... whose frame fits the budget (it takes an eighth, estimated)
    # the same report without the budget draws every curve: what the budget changed was the sample
    drawn.clear()
    with pdpx.config_context(memory_budget="2GB"):
        pdpx.report(model, X, tmp_path / "big.html", method="brute", grid_resolution=20, ice_sample=20000,
                    features=["a"], interactions=None, heterogeneity=None, dpi=30, progress=False)
    assert drawn[0]["curves"] == 20000 and drawn[0]["nbytes"] > 4 * budget


def test_a_figure_too_large_for_the_budget_even_without_ice_is_refused_with_what_to_do():
    model, X = _model(200)
    res = pdpx.partial_dependence(model, X, ["a", "b"], method="brute", grid_resolution=400, kind="average")
    with pdpx.config_context(memory_budget="1MB"), pytest.raises(pdpx.PdpxError, match="grid_resolution"):
        res.plot()


def _out_of_domain_reference(X: pd.DataFrame) -> list:
    """Columns holding an infinite value or one beyond float32's range, read one by one."""
    out = []
    for c in X.columns:
        v = X[c].to_numpy(dtype=np.float64)
        if (np.isinf(v) | (np.abs(v) > np.finfo(np.float32).max)).any():
            out.append(c)
    return out


def test_the_domain_check_reads_blocks_within_the_budget(monkeypatch):
    n, p = 20000, 300
    X = pd.DataFrame(np.random.default_rng(1).normal(size=(n, p)), columns=[f"c{i}" for i in range(p)])
    X.iloc[17, 5] = np.inf
    X.iloc[19_999, 250] = 1e39
    blocks = []
    real = sk.out_of_domain

    def spy(values):
        blocks.append(values.nbytes)
        return real(values)

    monkeypatch.setattr(sk, "out_of_domain", spy)
    with pdpx.config_context(memory_budget="4MB"):
        found = sk.candidates(X)
    assert [c for c, _ in found] == _out_of_domain_reference(X) == ["c5", "c250"]
    np.testing.assert_array_equal(found[0][1], X["c5"].to_numpy())
    assert len(blocks) > 1 and max(blocks) <= 4 * 2**20 // 4  # a quarter of the budget, in float64 values

    # through partial_dependence: the call's memory_budget= is the budget of the check
    blocks.clear()
    X.iloc[17, 5] = 0.0
    X.iloc[19_999, 250] = 0.0
    model = LinearRegression().fit(X.iloc[:500], X["c0"].iloc[:500])
    pdpx.partial_dependence(model, X, ["c0"], method="brute", grid_resolution=3, memory_budget="8MB")
    assert blocks and max(blocks) <= 8 * 2**20 // 4


def test_the_domain_check_on_a_wide_frame_stays_near_its_budget():
    X = pd.DataFrame(np.random.default_rng(2).normal(size=(65536, 200)))
    X.columns = [f"c{i}" for i in range(200)]
    tracemalloc.start()
    try:
        with pdpx.config_context(memory_budget="32MB"):
            assert sk.candidates(X) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the whole frame is 100 MiB; one read of it all with the check's temporaries took about 240 MiB
    assert peak < 32 * 2**20
