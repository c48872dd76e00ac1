"""The planner (``plugins/trees/plan.py``) and the kernels' records (``records.py``, ``registry.py``).

* every row of docs/methods.md's "What runs when" is what the planner plans for a model of that row;
* the kernel tables of docs/methods.md name exactly the kernels the records declare;
* the counts' rule in words (three 1-way sets gather at order 1, ...) is the planner's;
* the records: every compiled function a record names is a numba dispatcher of its module, each function is
  declared once, every family the warm-up runs has cases, and the plan's kernels are those of its records.
"""

from __future__ import annotations

import os
import re
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from pdpx.core.errors import PdpxError
from pdpx.core.session import Session
from pdpx.plugins.trees import plan as P
from pdpx.plugins.trees import registry, warmup

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _methods_md() -> str:
    with open(os.path.join(ROOT, "docs", "methods.md"), encoding="utf-8") as f:
        return f.read()


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n#", start + len(heading))
    return text[start: end if end >= 0 else len(text)]


def _table_rows(section: str) -> list[list[str]]:
    rows = [line for line in section.splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in r.strip("|").split("|")] for r in rows]
    return [c for c in cells[2:]]  # past the header and the rule


def _code(cell: str) -> str:
    m = re.fullmatch(r"`([^`]*)`", cell)
    return m.group(1) if m else cell


def _oblivious(link="identity"):
    from treetools import IRAdapter

    sys.path.insert(0, os.path.join(ROOT, "tests", "plugins"))
    try:
        from test_oblivious import oblivious_ensemble
    finally:
        sys.path.pop(0)
    X = pd.DataFrame(np.random.default_rng(2).normal(size=(200, 3)), columns=["f0", "f1", "f2"])
    return IRAdapter(oblivious_ensemble([3, 2, 4], n_features=3, link=link)), X


@pytest.fixture(scope="module")
def models():
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(600, 3)), columns=["a", "b", "c"])
    y = X.a * X.b + X.c
    return {
        "oblivious": _oblivious(),
        "oblivious-logistic": _oblivious("logistic"),
        "shallow": (HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y), X),
        "shallow-proba": (HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y > 0), X),
        "deep": (RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y), X),
    }


def _call_plan(model, X, sets, features=(0,), **options):
    """The planner's plan (:func:`plan.plan`) of one request of a call computing ``sets``."""
    session = Session(model, X, grid_resolution=6, **options)
    session.plan(sets)
    req = session.batch(session.methods["exact"]).planned(session.request(list(features)))  # exact's batch seam
    return P.plan(session.adapter.tree_model(session.response), req)


def _rows_plan(model, X, kind="average", features=(0,)):
    session = Session(model, X, kind=kind, grid_resolution=6)
    req = session.request(list(features))
    return P.plan_rows(session.adapter.tree_model(session.response), req)


def _tm(model, X):
    session = Session(model, X)
    return session.adapter.tree_model(session.response)


def _recursion_plan(model, X):
    session = Session(model, X, grid_resolution=6)
    return P.plan_recursion(session.adapter.tree_model(session.response), session.request([0]))


def _planned(models):
    """The planner's (engine, kernel, link) for the representative model of each row of the table, in order."""
    def rows(name, kind="average"):
        return _rows_plan(*models[name], kind=kind)

    def counts(name, order):  # a call of three 1-way sets (order 1), and of their three pairs too (order 2)
        sets = [(0,), (1,), (2,)] + ([(0, 1), (0, 2), (1, 2)] if order == 2 else [])
        return _call_plan(*models[name], sets)

    return [
        rows("oblivious"), rows("oblivious-logistic"), rows("oblivious", kind="both"),
        rows("shallow"), rows("shallow-proba"), rows("deep"), rows("deep", kind="both"),
        counts("shallow", 2), counts("shallow", 1), counts("deep", 2),
        P.plan_means(_tm(*models["shallow"])), _recursion_plan(*models["deep"]),
    ]


def test_what_runs_when_is_the_planners(models):
    table = _table_rows(_section(_methods_md(), "### What runs when"))
    documented = [(_code(r[1]), _code(r[2]), _code(r[3])) for r in table]
    planned = [(p.engine, p.kernel, p.link) for p in _planned(models)]
    assert documented == planned


def test_the_kernel_tables_name_the_recorded_kernels():
    text = _methods_md()
    exact = [_code(r[0]) for r in _table_rows(_section(text, "Three compiled kernels"))]
    assert exact == [r.name for r in registry.records() if r.engine == "rows"]
    gathers = [_code(r[0]) for r in _table_rows(_section(text, "## Every feature and every pair in one pass"))][:3]
    assert sorted(gathers) == sorted(r.name.split(".", 1)[1] for r in registry.records()
                                     if r.engine == "counts" and r.name != "counts")


def test_the_kernel_option_forces_a_kernel_or_says_why(models):
    model, X = models["shallow"]
    tm = _tm(model, X)
    assert P.row_kernel(tm.ensemble, "partition") == "partition"
    assert P.row_kernel(tm.ensemble, "leafsets") == "leafsets"
    with pytest.raises(PdpxError, match="not oblivious"):
        P.row_kernel(tm.ensemble, "oblivious")
    with pytest.raises(PdpxError, match="expected one of"):
        P.exact_options({"kernel": "fast"})
    assert P.row_kernel(_tm(*models["oblivious"]).ensemble, "leafsets") == "leafsets"


def test_one_set_ice_or_engine_rows_walk_the_rows_and_engine_counts_gathers(models):
    model, X = models["shallow"]
    many = [(0,), (1,), (2,)]
    assert _call_plan(model, X, [(0,)]).engine == "rows"  # one set: a gather would not pay
    assert _call_plan(model, X, many).engine == "counts"
    assert _call_plan(model, X, many, kind="both").engine == "rows"  # counts keep no rows: no ICE
    assert _call_plan(model, X, many, method_options={"engine": "rows"}).engine == "rows"
    forced = _call_plan(model, X, [(0,)], method_options={"engine": "counts"})
    assert (forced.engine, forced.order) == ("counts", 1)
    assert _call_plan(*models["shallow-proba"], many).engine == "rows"  # a probability is no sum of leaves


def _req(planned, features):
    return SimpleNamespace(planned=tuple(tuple(s) for s in planned), features=list(features))


def test_the_counts_rule_in_words():
    """docs/methods.md: "a call of three or more 1-way sets gathers at order 1, and a call of at least six sets of
    which at least three are pairs gathers at order 2" and, with pairs counted alone, "four 1-way sets and two
    pairs: one gather"."""
    assert P.gather_order(_req([(0,), (1,)], [0]))[0] is None
    assert P.gather_order(_req([(0,), (1,), (2,)], [0]))[0] == 1
    six = [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]
    assert P.gather_order(_req(six, [0]))[0] == 2
    assert P.gather_order(_req([(0,), (1,), (2,), (3,), (0, 1)], [0]))[0] == 1  # too few pairs: order 1
    four_two = [(0,), (1,), (2,), (3,), (0, 1), (2, 3)]
    assert P.gather_order(_req(four_two, [0]))[0] == 1
    assert P.gather_order(_req(four_two, [0]), pairs_only=True)[0] == 2
    # engine="counts": the least order answering every planned set, whatever the cost
    assert P.counts_order(_req([(0,)], [0]), "counts") == 1
    assert P.counts_order(_req([(0,), (0, 1)], [0]), "counts") == 2
    assert P.counts_order(_req([(0,), (1,)], [0]), "auto") is None
    assert P.counts_fit(50, 100) and not P.counts_fit(51, 100)  # at most half the budget


def test_a_sum_of_members_plans_each_member(models):
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor, VotingRegressor

    _, X = models["shallow"]
    y = X.a - X.b
    vote = VotingRegressor([("h", HistGradientBoostingRegressor(max_iter=5)),
                            ("f", RandomForestRegressor(n_estimators=2, random_state=0))]).fit(X, y)
    plan = _rows_plan(vote, X)
    assert plan.engine == "sum" and [m.kernel for m in plan.members] == ["leafsets", "partition"]
    assert plan.kernels == plan.members[0].kernels | plan.members[1].kernels


def test_every_recorded_function_is_a_compiled_function_of_its_module_declared_once():
    import importlib

    seen = {}
    for rec in registry.records():
        for fn in rec.functions:
            name = f"{rec.module}.{fn}"
            assert name not in seen, (name, seen.get(name), rec.name)
            seen[name] = rec.name
            dispatcher = getattr(importlib.import_module(f"pdpx.plugins.trees.{rec.module}"), fn)
            assert hasattr(dispatcher, "py_func") and dispatcher.py_func.__name__ == fn, name
        for used in (rec.uses(P.Plan("rows")) if rec.uses else ()):
            assert used in registry.by_name(), (rec.name, used)


def test_a_row_walk_reads_the_row_modules_only():
    """The counts' and means' modules declare the counts family only, so exact's tables and a row plan's kernels
    are read without importing them."""
    for rec in registry.records(registry.COUNTS_MODULES):
        assert rec.family == "counts", rec.name
    for rec in registry.row_records():
        for used in (rec.uses(P.Plan("rows")) if rec.uses else ()):
            assert used in registry.by_name(registry.ROW_MODULES), (rec.name, used)
    assert {r.name for r in registry.records()} == {r.name for r in registry.records(registry.MODULES)}


def test_every_family_the_warm_up_runs_has_cases_and_every_record_a_family():
    assert set(registry.families()) | {warmup.MEASURES} == set(warmup.FAMILIES)  # measures: compiler.ELSEWHERE
    for family in registry.families():
        assert registry.cases(family), family
    assert all(r.family in warmup.FAMILIES for r in registry.records())
    for rec in registry.records():  # a kernel the planner can choose is compiled by some case of its family
        if rec.engine in ("rows", "counts", "means", "recursion") and rec.name != "counts":
            assert rec.cases, rec.name


def test_the_plan_is_frozen(models):
    plan = _rows_plan(*models["shallow"])
    with pytest.raises(AttributeError):
        plan.kernel = "partition"


# ------------------------------------------------------------------ the executors run the plan, and only the plan
def _execute(model, tm, req, plan):
    """Run ``plan`` for ``req`` on ``tm`` by its executor; the names of the kernel records that ran."""
    from pdpx.plugins.trees import counts_use, curve_means, engine

    with registry.recording() as ran:
        if plan.engine == "means":
            G = len(req.grid_values[0])
            curve_means.curve_means(tm, [req], [np.full(G, 1.0 / G)], n_jobs=1)
        elif plan.engine == "recursion":
            engine.recursion(tm, req)
        elif plan.source == "rows":
            engine.exact(tm, req, plan)
        else:
            counts_use.run(model, tm, req, plan)
    return ran


def _cases(models):
    """(name, model, tree model, request, plan) of every case of :func:`_planned` (the table's rows)."""
    def rows(name, kind="average"):
        model, X = models[name]
        session = Session(model, X, kind=kind, grid_resolution=6)
        req = session.request([0])
        tm = session.adapter.tree_model(session.response)
        return (f"rows {name} {kind}", model, tm, req, P.plan_rows(tm, req))

    def counts(name, order):
        model, X = models[name]
        sets = [(0,), (1,), (2,)] + ([(0, 1), (0, 2), (1, 2)] if order == 2 else [])
        session = Session(model, X, grid_resolution=6)
        session.plan(sets)
        req = session.batch(session.methods["exact"]).planned(session.request([0]))
        tm = session.adapter.tree_model(session.response)
        return (f"counts {name} {order}", model, tm, req, P.plan(tm, req))

    def other(name, planner):
        model, X = models[name]
        session = Session(model, X, grid_resolution=6)
        req = session.request([0])
        tm = session.adapter.tree_model(session.response)
        return (f"{planner.__name__} {name}", model, tm, req,
                planner(tm) if planner is P.plan_means else planner(tm, req))

    return [
        rows("oblivious"), rows("oblivious-logistic"), rows("oblivious", kind="both"),
        rows("shallow"), rows("shallow-proba"), rows("deep"), rows("deep", kind="both"),
        counts("shallow", 2), counts("shallow", 1), counts("deep", 2),
        other("shallow", P.plan_means), other("deep", P.plan_recursion),
    ]


def test_the_kernels_that_run_are_the_plans_on_every_case(models):
    cases = _cases(models)
    assert [(p.engine, p.kernel, p.link) for *_, p in cases] == [(p.engine, p.kernel, p.link) for p in _planned(models)]
    for name, model, tm, req, plan in cases:
        ran = _execute(model, tm, req, plan)
        assert ran and set(ran) == set(plan.records), (name, ran, plan.records)
        assert registry.runs(set(ran), plan) == plan.kernels, name


def test_near_the_memory_budget_the_gather_runs_the_planned_kernel(models):
    """Histograms that fit the budget but not what the counts leave of it: the plan takes another kernel (it
    once planned ``patterns`` with the whole budget while the gather ran ``leafsets``), and the gather runs it."""
    from dataclasses import replace

    from pdpx.plugins.trees.counts_kernels import kernel_shape

    name, model, tm, req, _ = _cases(models)[7]  # three 1-way sets and their pairs: an order-2 gather
    hist = 8 * kernel_shape(tm.ensemble)[1]
    counts = P.counts_bytes(tm, 2)
    for budget in (counts + hist - 8, counts + hist, 4 * (counts + hist)):
        near = replace(req, memory_budget=budget, options=P.ExactOptions.checked({"engine": "counts"}, "exact"),
                       memo={})
        plan = P.plan(tm, near)
        assert plan.source == "gather" and plan.order == 2
        assert plan.kernel == ("patterns" if budget - counts >= hist else "leafsets"), budget
        if budget == counts + hist - 8:  # the whole budget would have taken the histograms
            assert P.counts_kernel(tm.ensemble, "auto", budget, 2) == "patterns"
        ran = _execute(model, tm, near, plan)
        assert set(ran) == set(plan.records) == {"counts", f"counts.{plan.kernel}"}, (budget, ran)


def test_trees_oblivious_in_shape_only_are_planned_and_run_as_leafsets():
    """Leaves at one depth but one level's nodes splitting apart: the planner reads the splits (numpy only) and
    plans ``leafsets``, which runs; the kernel builder no longer falls back from the plan."""
    from test_oblivious import oblivious_ensemble
    from treetools import IRAdapter

    from pdpx.plugins.trees import engine, oblivious

    ens = oblivious_ensemble([3, 3], seed=11)
    thr = ens.threshold.copy()
    thr[int(ens.right[0])] += 0.25
    changed = oblivious_ensemble([3, 3], seed=11, threshold=thr)
    assert oblivious.maybe_oblivious(changed) and not oblivious.is_oblivious(changed)
    assert oblivious.is_oblivious(ens)
    X = pd.DataFrame(np.random.default_rng(2).normal(size=(100, 4)), columns=["f0", "f1", "f2", "f3"])
    session = Session(IRAdapter(changed), X, grid_resolution=5)
    req = session.request([0])
    tm = session.adapter.tree_model(session.response)
    plan = P.plan_rows(tm, req)
    assert plan.kernel == "leafsets"
    with registry.recording() as ran:
        engine.exact(tm, req, plan)
    assert ran == ["leafsets"]
