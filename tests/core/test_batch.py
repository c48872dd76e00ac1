"""core.method: the method interface is four members (compute, the one to write; unavailable; plan, the batch entry
a session calls once with all its feature sets; reduce_curves, the fused walks of the curve reducers) and its Batch three
more (compute, deferred, beside): seven a method author may implement."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

import pdpx
from pdpx.core import plugins
from pdpx.core.method import Batch, Method, MethodResult, Request
from pdpx.plugins.brute import Brute


def hooks(cls) -> set:
    """The public functions of ``cls`` a method author may implement (its own, not inherited from object)."""
    return {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}


def test_method_has_at_most_four_members_and_with_its_batch_at_most_seven():
    assert hooks(Method) == {"unavailable", "plan", "reduce_curves", "compute"}
    assert hooks(Batch) == {"compute", "deferred", "beside"}
    assert len(hooks(Method)) <= 4 and len(hooks(Method)) + len(hooks(Batch)) <= 7
    # besides, a method declares who it is (no code): its name, whether it equals brute, its rank and options
    declared = {n for n, v in vars(Method).items() if not n.startswith("_") and not callable(v)}
    assert declared == {"name", "equals_brute", "cost_rank", "options"}


def test_the_default_method_has_no_fused_walk():
    assert Method().reduce_curves("adapter", [], object()) is None


def test_the_default_batch_computes_each_request_alone():
    calls = []

    class Constant(Method):
        name = "constant"

        def compute(self, adapter, request):
            calls.append(request)
            return MethodResult(average=np.full((1,) + request.grid_shape, 7.0))

    method = Constant()
    batch = method.plan("adapter", [(0,), (1, 2)])
    assert type(batch) is Batch and batch.feature_sets == ((0,), (1, 2)) and batch.name == "constant"
    request = Request(X=pd.DataFrame({"a": [1.0]}), features=[0], grid_values=[np.arange(3.0)], categorical=[False],
                      response="predict", outputs=[0], kind="average", sample_weight=None, memory_budget=1 << 20)
    assert batch.deferred(request) is None and batch.beside(request) is False
    elsewhere = type("Elsewhere", (), {"here": False})()  # rows in partitions: no answer as a whole by default
    assert batch.compute("adapter", replace(request, rows=elsewhere)) is None
    np.testing.assert_array_equal(batch.compute("adapter", request).average, np.full((1, 3), 7.0))
    assert calls == [request]


class _Recorded(Batch):
    plans: list = []
    computed: list = []

    def compute(self, adapter, request):
        _Recorded.computed.append((self.feature_sets, tuple(request.features)))
        return super().compute(adapter, request)


class _Planning(Brute):
    """brute's numbers through a batch of its own, which records what the session told it."""

    name = "planning-brute"
    equals_brute = False  # no check against brute on a sample (it would plan its own one-set batches)

    def plan(self, adapter, feature_sets):
        _Recorded.plans.append(tuple(feature_sets))
        return _Recorded(self, adapter, feature_sets)


class _Plugin:
    @pdpx.hookimpl
    def pdpx_register_methods(self, register):
        register(_Planning())


@pytest.fixture
def planning_method():
    pm = plugins.plugin_manager()
    plugin = _Plugin()
    pm.register(plugin)
    _Recorded.plans.clear()
    _Recorded.computed.clear()
    yield
    pm.unregister(plugin)


@pytest.mark.filterwarnings("ignore::pdpx.ExtrapolationWarning")  # the 2-way grid's corners: not asked here
def test_a_session_plans_once_with_all_its_feature_sets_and_runs_every_request_through_the_batch(planning_method):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    model = LinearRegression().fit(X, X.a * 2 - X.b + 0.5 * X.c)
    coll = pdpx.partial_dependence_many(model, X, ["a", ("b", "c")], method="planning-brute", grid_resolution=4)
    sets = ((0,), (1, 2))
    assert _Recorded.plans == [sets]  # asked once, with every set of the call
    assert _Recorded.computed == [(sets, (0,)), (sets, (1, 2))]
    res = coll[0]
    assert res.method == "planning-brute"
    for g, value in enumerate(res.grid_values[0]):  # the definition: set the column, predict, average
        Xg = X.copy()
        Xg["a"] = value
        assert res.average[0, g] == pytest.approx(model.predict(Xg).mean(), rel=1e-12)


def test_a_method_still_defining_the_retired_curve_hooks_is_told(planning_method):
    """curve_means / curve_moments / curve_rows are no longer called: the registration says so (the numbers stay
    right, the session computes the curves)."""

    class Old(Brute):
        name = "old-curves"

        def curve_means(self, adapter, requests, shares):
            return None

    class OldPlugin:
        @pdpx.hookimpl
        def pdpx_register_methods(self, register):
            register(Old())

    pm = plugins.plugin_manager()
    plugin = OldPlugin()
    pm.register(plugin)
    try:
        with pytest.warns(DeprecationWarning, match="'old-curves' defines curve_means.*reduce_curves"):
            plugins.get_methods()
    finally:
        pm.unregister(plugin)
