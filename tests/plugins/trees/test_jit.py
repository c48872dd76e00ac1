"""The first call on a fresh installation: ``auto`` never waits for a compilation that costs more than brute.

* while the kernels a request needs are not compiled, ``auto`` runs ``brute`` if that is
  quicker (the same numbers: brute is the definition), says why in ``res.notes`` and
  compiles them in a background process; explicit ``method="exact"`` always runs exact;
* on a request where brute would take longer than compiling, ``auto`` compiles and runs
  exact;
* end to end, in fresh processes with their own empty numba cache: the first call runs
  brute, the background process fills the cache, the next process runs exact and
  compiles nothing;
* the kernels :func:`jit.needed` names are the ones ``exact`` runs, and the warm-up
  compiles them for the argument types real calls give them (after it, real calls
  compile nothing).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.plugins.trees import jit

BUSY_FACTOR = jit.busy_factor
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture
def data():
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, X.a * X.b + X.c)
    return model, X


@pytest.fixture
def cold(monkeypatch):
    """As if no kernel were compiled: ``pending`` lists what a request needs; background starts are recorded."""
    started = []
    jit.reset()
    monkeypatch.setattr(jit, "pending", lambda names: sorted(names))
    monkeypatch.setattr(jit, "compile_in_background", lambda: started.append(1) or True)
    monkeypatch.setattr(jit, "busy_factor", lambda: 1.0)  # the machine's load is not the test's
    yield started
    jit.reset()


def test_a_small_first_call_runs_brute_says_why_and_compiles_in_the_background(data, cold):
    model, X = data
    res = pdpx.partial_dependence(model, X, "a", grid_resolution=20, kind="both")
    assert res.method == "brute"
    note = [n for n in res.notes if n.startswith("exact not used:")]
    assert len(note) == 1 and "compiled in the background" in note[0] and "same numbers" in note[0], res.notes
    assert cold == [1]
    exact = pdpx.partial_dependence(model, X, "a", grid_resolution=20, kind="both", method="exact")
    assert exact.method == "exact" and not any("not used" in n for n in exact.notes)
    # brute is the definition: set the column, predict, average
    for k, v in enumerate(res.grid_values[0]):
        np.testing.assert_allclose(res.average[0, k], model.predict(X.assign(a=v)).mean(), rtol=1e-12)
    np.testing.assert_allclose(exact.average, res.average, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(exact.individual, res.individual, rtol=1e-9, atol=1e-9)


def test_auto_compiles_when_brute_would_take_longer(data, cold, monkeypatch):
    model, X = data
    monkeypatch.setattr(jit, "brute_seconds", lambda adapter, req, decide_at=None: 1e6)
    res = pdpx.partial_dependence(model, X, "a", grid_resolution=20)
    assert res.method == "exact" and not any("not used" in n for n in res.notes) and cold == []


def test_brute_time_spent_counts_towards_compiling(data, cold, monkeypatch):
    """Where compiling in the background cannot help (no cache), brute runs until it has cost the compile time."""
    model, X = data
    monkeypatch.setattr(jit, "cold_seconds", lambda names: 1.0)
    monkeypatch.setattr(jit, "brute_seconds", lambda adapter, req, decide_at=None: 0.4)
    methods = [pdpx.partial_dependence(model, X, "a", grid_resolution=5).method for _ in range(4)]
    assert methods == ["brute", "brute", "exact", "exact"]


def test_the_brute_estimate_follows_the_rows_and_the_grid(data):
    model, X = data
    from pdpx.core.session import Session

    session = Session(model, X)
    small = session.request([0])
    big = Session(model, pd.concat([X] * 20, ignore_index=True), grid_resolution=100).request([0])
    t_small, t_big = jit.brute_seconds(session.adapter, small), jit.brute_seconds(session.adapter, big)
    assert 0 < t_small < t_big
    t0 = time.perf_counter()
    pdpx.partial_dependence(model, X, "a", method="brute")
    assert t_small < 20 * (time.perf_counter() - t0) + 0.5  # the same order as brute itself


def test_an_explicit_exact_never_defers(data, cold):
    model, X = data
    assert pdpx.partial_dependence(model, X, "a", method="exact").method == "exact"
    assert cold == []


def _calls(monkeypatch):
    """The kernels called from Python during a call, by ``module.function``."""
    seen = set()
    for name in jit.COLD_SECONDS:
        module, function = name.split(".")
        mod = sys.modules[f"pdpx.plugins.trees.{module}"]
        fn = getattr(mod, function)

        def spy(*a, _fn=fn, _name=name, **k):
            seen.add(_name)
            return _fn(*a, **k)

        monkeypatch.setattr(mod, function, spy)
        for other in ("kernels", "leafsets", "partition", "oblivious", "products", "rows", "prep", "engine"):
            target = sys.modules.get(f"pdpx.plugins.trees.{other}")
            if target is not None and getattr(target, function, None) is fn:
                monkeypatch.setattr(target, function, spy)
    return seen


def _models():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
        VotingRegressor,
    )
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    y = X.a * X.b + X.c
    only_bc = make_pipeline(ColumnTransformer([("bc", "passthrough", ["b", "c"])]), RandomForestRegressor(
        n_estimators=3, random_state=0))
    out = {
        "voting (a member without a)": VotingRegressor([("hgb", HistGradientBoostingRegressor(max_iter=5)),
                                                        ("bc", only_bc)]).fit(X, y),
        "hgb": HistGradientBoostingRegressor(max_iter=10).fit(X, y),
        "hgb-binary": HistGradientBoostingClassifier(max_iter=10).fit(X, y > 0),
        "hgb-3": HistGradientBoostingClassifier(max_iter=10).fit(X, pd.cut(y, 3, labels=False)),
        "forest": RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y),
        "forest-3": RandomForestClassifier(n_estimators=3, random_state=0).fit(X, pd.cut(y, 3, labels=False)),
    }
    return out, X


def _oblivious():
    from treetools import IRAdapter

    sys.path.insert(0, os.path.join(ROOT, "tests", "plugins"))
    try:
        from test_oblivious import oblivious_ensemble
    finally:
        sys.path.pop(0)
    return {"oblivious": IRAdapter(oblivious_ensemble([3, 2, 4], n_features=3)),
            "oblivious-logistic": IRAdapter(oblivious_ensemble([3, 2, 4], n_features=3, link="logistic"))}


@pytest.mark.parametrize("kind", ["average", "both"])
def test_needed_names_every_kernel_exact_runs(monkeypatch, kind):
    models, X = _models()
    models.update(_oblivious())
    Xo = pd.DataFrame(np.random.default_rng(2).normal(size=(300, 3)), columns=["f0", "f1", "f2"])
    from pdpx.core.session import Session

    for name, model in models.items():
        XX = Xo if name.startswith("oblivious") else X
        unsorted = {XX.columns[0]: [1.0, -1.0, 0.5]}  # regions as grid masks, not intervals
        for features, custom in (([0], None), ([0, 1], None), ([0], unsorted), ([1, 0], unsorted)):
            options = dict(kind=kind, grid_resolution=6, custom_values=custom)
            session = Session(model, XX, **options)
            req = session.request(features)
            want = jit.needed(session.adapter.tree_model(session.response), req)
            seen = _calls(monkeypatch)
            pdpx.partial_dependence(model, XX, [XX.columns[f] for f in features], method="exact", **options)
            monkeypatch.undo()
            assert seen and seen <= want, (name, features, custom, sorted(seen - want))


def test_after_the_warm_up_real_calls_compile_nothing():
    """The warm-up compiles each kernel for the argument types real calls give it (conftest ran it)."""
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            if ev.data["dispatcher"].py_func.__module__.startswith("pdpx"):
                compiled.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    models, X = _models()
    models.update(_oblivious())
    Xo = pd.DataFrame(np.random.default_rng(2).normal(size=(300, 3)), columns=["f0", "f1", "f2"])
    w = np.random.default_rng(3).uniform(0.5, 2, 400)
    listener = Listener()
    with event.install_listener("numba:compile", listener):
        for name, model in models.items():
            XX = Xo if name.startswith("oblivious") else X
            for features in (XX.columns[0], list(XX.columns[:2])):
                for kind in ("average", "both"):
                    pdpx.partial_dependence(model, XX, features, kind=kind, grid_resolution=6,
                                            sample_weight=w[:len(XX)], method="exact")
            pdpx.partial_dependence(model, XX, XX.columns[0], custom_values={XX.columns[0]: [1.0, -1.0, 0.5]},
                                    method="exact")
        pdpx.partial_dependence(models["forest"], X, "a", method="recursion")
    assert compiled == []


FIRST = """
    import json, sys, time
    import numpy as np, pandas as pd, pdpx
    from sklearn.ensemble import HistGradientBoostingRegressor
    from numba.core import event
    from pdpx.plugins.trees import jit

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, X.a * X.b + X.c)
    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            if ev.data["dispatcher"].py_func.__module__.startswith("pdpx"):
                compiled.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    method = "exact" if sys.argv[1] == "exact" else "auto"
    with event.install_listener("numba:compile", Listener()):
        res = pdpx.partial_dependence(model, X, "a", grid_resolution=20, method=method)
    proc = jit.background_process()
    if sys.argv[1] == "wait" and proc is not None:
        proc.wait(timeout=600)
    brute = pdpx.partial_dependence(model, X, "a", grid_resolution=20, method="brute")
    print(json.dumps({"method": res.method, "notes": res.notes, "compiled": compiled,
                      "background": proc is not None, "off_brute": float(np.abs(res.average - brute.average).max())}))
"""


def test_end_to_end_a_fresh_cache_first_runs_brute_then_the_next_process_runs_exact(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), OMP_NUM_THREADS="1")
    script = tmp_path / "first.py"
    script.write_text(textwrap.dedent(FIRST))
    import json

    def run(mode):
        out = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, env=env,
                             timeout=900, cwd=ROOT)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = run("wait")
    assert first["method"] == "brute" and first["background"] and first["compiled"] == [], first
    assert any("compiled in the background" in n for n in first["notes"])
    assert first["off_brute"] == 0.0
    second = run("no-wait")
    assert second["method"] == "exact" and second["compiled"] == [] and not second["background"], second
    assert second["off_brute"] < 1e-9 and not any("first compiled" in n for n in second["notes"])


def test_end_to_end_an_exact_call_on_a_fresh_cache_says_it_compiled_first(tmp_path):
    """method="exact" asked on an empty cache compiles before answering: the result says so (and how long)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), OMP_NUM_THREADS="1")
    script = tmp_path / "first.py"
    script.write_text(textwrap.dedent(FIRST))
    import json

    out = subprocess.run([sys.executable, str(script), "exact"], capture_output=True, text=True, env=env,
                         timeout=900, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["method"] == "exact" and got["compiled"] and got["off_brute"] < 1e-9, got
    said = [n for n in got["notes"] if n.startswith("this call first compiled")]
    assert len(said) == 1 and "numba keeps them in its cache" in said[0], got["notes"]


def test_a_busy_machine_makes_compiling_dearer(data, cold, monkeypatch):
    """The compile table is an idle machine's: with the load average at 10 per core, a compilation the table puts
    at 6 s costs 60 s, and brute, timed now at 10 s, answers."""
    model, X = data
    monkeypatch.setattr(jit, "cold_seconds", lambda names: 6.0)
    monkeypatch.setattr(jit, "brute_seconds", lambda adapter, req, decide_at=None: 10.0)
    monkeypatch.setattr(jit, "busy_factor", BUSY_FACTOR)
    monkeypatch.setattr(jit.os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    assert pdpx.partial_dependence(model, X, "a", grid_resolution=5).method == "exact"
    jit.reset()
    monkeypatch.setattr(jit.os, "getloadavg", lambda: (10.0 * (os.cpu_count() or 1),) * 3)
    assert jit.busy_factor() == pytest.approx(10.0)
    res = pdpx.partial_dependence(model, X, "a", grid_resolution=5)
    assert res.method == "brute" and any("about 60 s" in n for n in res.notes), res.notes


def test_the_brute_estimate_stops_timing_once_it_is_decided(data, monkeypatch):
    model, X = data
    from pdpx.core.session import Session

    session = Session(model, X)
    req = session.request([0])
    calls = []
    predict = session.adapter.predict
    monkeypatch.setattr(session.adapter, "predict", lambda *a: calls.append(1) or predict(*a))
    jit.brute_seconds(session.adapter, req)
    undecided = len(calls)
    calls.clear()
    jit.brute_seconds(session.adapter, req, decide_at=1e9)  # far above any estimate: one round decides
    assert undecided == 7 and len(calls) == 3


def test_a_compilation_before_the_answer_is_said_once(data, cold):
    model, X = data
    res = pdpx.partial_dependence(model, X, "a", grid_resolution=5, method="exact")
    said = [n for n in res.notes if n.startswith("this call first compiled")]
    assert len(said) == 1, res.notes
    brute = pdpx.partial_dependence(model, X, "a", grid_resolution=5, method="brute")
    np.testing.assert_allclose(res.average, brute.average, rtol=1e-9, atol=1e-9)
    assert jit.compiled_said(deliver=True) is None  # delivered with the call's result


# --------------------------------------------------------------- the pattern counts' kernels
def _counts_calls(monkeypatch, *tables):
    """The counts' kernels (and exact's they share, and those of ``tables``) called from Python, by
    ``module.function``."""
    import importlib

    seen = set()
    for name in set().union(jit.COLD_SECONDS, jit.COUNTS_COLD_SECONDS, *tables):
        module, function = name.split(".")
        mod = importlib.import_module(f"pdpx.plugins.trees.{module}")
        fn = getattr(mod, function)

        def spy(*a, _fn=fn, _name=name, **k):
            seen.add(_name)
            return _fn(*a, **k)

        monkeypatch.setattr(mod, function, spy)
    return seen


def _gather_and_pd(tm, X, order, kernel, w=None, grid=(1.0, -1.0, 0.5)):
    from pdpx.core.method import Request
    from pdpx.plugins.trees import counts, counts_pd

    got = counts.gather(tm, X, w, order=order, kernel=kernel)
    for features in ([0], [0, 1])[:order]:
        for g in (sorted(grid), list(grid)):  # regions as intervals, then as grid masks
            req = Request(X=X, features=features, grid_values=[np.array(g)] * len(features),
                          categorical=[False] * len(features), response="predict", outputs=[0], kind="average",
                          sample_weight=None, memory_budget=2**28, n_jobs=None)
            counts_pd.partial_dependence(tm, got, req)
    return got


def _fits(tm, kernel) -> bool:
    """Whether every tree of ``tm`` fits ``kernel`` (deep forests do not fit leafsets or patterns)."""
    from pdpx.core.errors import PdpxError
    from pdpx.core.treesum import TreeSum
    from pdpx.plugins.trees import counts

    models = [t.model for t in tm.terms] if isinstance(tm, TreeSum) else [tm]
    try:
        for m in models:
            counts.choose_kernel(m.ensemble, kernel, 2**28)
    except PdpxError:
        return False
    return True


def _counts_models():
    from sklearn.ensemble import VotingRegressor

    models, X = _models()
    models["voting"] = VotingRegressor([("hgb", models["hgb"]), ("forest", models["forest"])]).fit(X, X.a * X.b)
    out = {}
    for name in ("hgb", "forest", "voting"):
        ad = pdpx.core.plugins.adapt(models[name])
        Xv = ad.validate_columns(X)
        out[name] = (ad.tree_model("predict"), Xv)
    assert type(out["voting"][0]).__name__ == "TreeSum"
    return out


def test_counts_needed_compiles_nothing_to_tell():
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    from pdpx.core.ir import TreeEnsemble, TreeModel, numeric_encoder, numeric_values

    n = 7  # a tree of depth 2 never seen before: its layouts are not built yet
    ens = TreeEnsemble(left=np.array([1, 3, 5, -1, -1, -1, -1]), right=np.array([2, 4, 6, -1, -1, -1, -1]),
                       feature=np.array([0, 1, 1, -1, -1, -1, -1]), threshold=np.array([0.1, 0.2, 0.3, 0, 0, 0, 0.]),
                       missing_left=np.zeros(n, dtype=bool), value=np.arange(n, dtype=float), node_weight=np.ones(n),
                       tree_start=np.array([0, n]), tree_group=np.array([0]), n_features=2, n_margins=1,
                       base_score=np.zeros(1), link="identity")
    with event.install_listener("numba:compile", Listener()):
        names = jit.counts_needed(TreeModel(ens, numeric_encoder, numeric_values), 2)
    assert compiled == []
    assert "counts_patterns.gather_patterns" in names  # a shallow tree: histograms of patterns


def test_after_the_warm_up_the_counts_compile_nothing():
    """The warm-up's counts family covers the argument types real gathers give the kernels (conftest ran it)."""
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            if ev.data["dispatcher"].py_func.__module__.startswith("pdpx"):
                compiled.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    w = np.random.default_rng(3).uniform(0.5, 2, 400)
    with event.install_listener("numba:compile", Listener()):
        for tm, X in _counts_models().values():
            for order in (1, 2):
                for kernel in [k for k in ("auto", "leafsets", "partition", "patterns") if _fits(tm, k)]:
                    _gather_and_pd(tm, X, order, kernel)
                    _gather_and_pd(tm, X, order, kernel, w=w)
    assert compiled == []
    for name, (tm, _) in _counts_models().items():
        assert jit.counts_ready(tm, 2) and jit.counts_ready(tm, 1), name


@pytest.mark.parametrize("order", [1, 2])
def test_counts_needed_names_every_kernel_the_counts_run(monkeypatch, order):
    for name, (tm, X) in _counts_models().items():
        for kernel in [k for k in ("auto", "leafsets", "partition", "patterns") if _fits(tm, k)]:
            want = jit.counts_needed(tm, order, kernel)
            seen = _counts_calls(monkeypatch)
            _gather_and_pd(tm, X, order, kernel)
            monkeypatch.undo()
            assert seen and seen <= want, (name, kernel, sorted(seen - want))
            assert any(n.endswith(f"gather_{kernel}") for n in seen) or kernel == "auto", (name, kernel, seen)


def test_counts_are_deferred_while_their_kernels_compile_unless_waiting_pays(cold):
    tm, _ = _counts_models()["hgb"]
    why = jit.deferred_counts(tm, 2, alternative_seconds=0.01)
    assert why and "compiled in the background" in why and cold == [1]
    assert not jit.counts_ready(tm, 2)
    assert jit.deferred_counts(tm, 2, alternative_seconds=1e6) is None  # the alternative takes longer: compile
    assert "about" in jit.deferred_counts(tm, 1)  # no estimate of the alternative: do not wait


def test_counts_are_not_deferred_when_no_background_compilation_can_start(cold, monkeypatch):
    tm, _ = _counts_models()["forest"]
    monkeypatch.setattr(jit, "compile_in_background", lambda: False)
    assert jit.deferred_counts(tm, 2, alternative_seconds=0.01) is None


def test_counts_are_not_deferred_once_compiled():
    jit.reset()
    tm, X = _counts_models()["forest"]
    _gather_and_pd(tm, X, 2, "auto")
    assert jit.counts_ready(tm, 2)
    assert jit.deferred_counts(tm, 2, alternative_seconds=0.0) is None


def test_a_missing_kernel_is_looked_up_in_the_cache_at_most_once_per_recheck_interval(monkeypatch):
    """Reading numba's cache index is a file read: a kernel still missing is not looked up on every call."""
    jit.reset()
    looked = []
    monkeypatch.setattr(jit, "_dispatcher", lambda name: SimpleNamespace(overloads={}))  # not compiled here
    monkeypatch.setattr(jit, "_compiled_or_cached", lambda d: looked.append(d) or False)
    name = "kernels.exp_columns"
    assert jit.pending([name]) == [name] and jit.pending([name]) == [name]
    assert len(looked) == 1
    jit._missing_at[name] -= jit.RECHECK_SECONDS  # the interval has passed: looked up again
    assert jit.pending([name]) == [name] and len(looked) == 2
    compiled_here = SimpleNamespace(overloads={"sig": object()})  # compiled in this process meanwhile: seen at once
    monkeypatch.setattr(jit, "_dispatcher", lambda name: compiled_here)
    monkeypatch.setattr(jit, "_compiled_or_cached", lambda d: bool(d.overloads))
    assert jit.pending([name]) == [] and jit.pending([name]) == []
    jit.reset()


# --------------------------------------------------------------- every row's averaged ICE curve (H's PD_-j)
def _means(tm, X):
    from pdpx.core.method import Request
    from pdpx.plugins.trees.curve_means import curve_means

    out = None
    for g in ([-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]):  # regions as intervals, then as grid masks
        req = Request(X=X, features=[0], grid_values=[np.array(g)], categorical=[False], response="predict",
                      outputs=[0], kind="average", sample_weight=None, memory_budget=2**28, n_jobs=None)
        out = curve_means(tm, [req], [np.full(3, 1 / 3)])
    return out


def test_means_kernels_name_every_kernel_and_the_warm_up_compiles_them(monkeypatch):
    from numba.core import event

    from pdpx.plugins.trees import curve_means

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            if ev.data["dispatcher"].py_func.__module__.startswith("pdpx"):
                compiled.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    for name, (tm, X) in _counts_models().items():
        if not curve_means.available(tm):  # the forest's trees are deeper than 64 leaves
            assert name in ("forest", "voting")  # voting holds the forest
            continue
        seen = _counts_calls(monkeypatch, jit.MEANS_COLD_SECONDS)
        with event.install_listener("numba:compile", Listener()):
            assert _means(tm, X) is not None
        monkeypatch.undo()
        assert "curve_means.means_walk" in seen and seen <= jit.MEANS_KERNELS, (name, sorted(seen))
    assert compiled == []  # conftest ran the warm-up: nothing compiles


def test_means_are_left_to_the_curves_while_their_kernels_compile(cold, monkeypatch):
    assert jit.deferred_means() is True and cold == [1]
    monkeypatch.setattr(jit, "compile_in_background", lambda: False)
    assert jit.deferred_means() is False  # no background compilation here: compile now
