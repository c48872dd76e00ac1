"""core.method: method options declared as a typed frozen class, or as a tuple of key names (wrapped).

A third-party method reads its options from ``request.options`` (attributes, or ``.get`` as the dict it received
before); keys or values its declaration refuses are errors when the session is built, before any model call.
"""

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import plugins
from pdpx.core.errors import PdpxError
from pdpx.core.method import Method, MethodOptions, MethodResult, checked_options, option, options_class


@dataclass(frozen=True)
class ShiftOptions(MethodOptions):
    shift: float = option(0.0, types=(int, float))
    mode: str = option("plain", choices=("plain", "double"))


def average(adapter, request) -> np.ndarray:
    """The average of ``request`` by its definition: one predict per grid point."""
    out = []
    for v in request.grid_values[0]:
        Z = request.X.copy()
        Z.iloc[:, request.features[0]] = v
        out.append(adapter.predict(Z, request.response)[:, request.outputs].mean(axis=0))
    return np.asarray(out).T


class Shifted(Method):
    """The average plus ``shift``; ``mode="double"`` doubles the average first."""

    name = "test-shifted"
    options = ShiftOptions
    seen: list = []

    def compute(self, adapter, request):
        Shifted.seen.append(request.options)
        scale = 2 if request.options.mode == "double" else 1
        return MethodResult(average=scale * average(adapter, request) + request.options.shift)


class Tupled(Method):
    """The average plus ``shift``, its options declared the old way: a tuple of names (any value), read with
    ``.get`` as from the dict methods received before."""

    name = "test-tupled"
    options = ("shift",)

    def compute(self, adapter, request):
        Shifted.seen.append(request.options)
        return MethodResult(average=average(adapter, request) + request.options.get("shift", 0.0))


class Plugin:
    @pdpx.hookimpl
    def pdpx_register_methods(self, register):
        register(Shifted())
        register(Tupled())


class Line:
    def __init__(self):
        self.calls = 0

    def predict(self, X):
        self.calls += 1
        return 3 * X["a"].to_numpy(dtype=float) - X["b"].to_numpy(dtype=float)


@pytest.fixture
def registered():
    pm = plugins.plugin_manager()
    plugin = Plugin()
    pm.register(plugin)
    yield
    pm.unregister(plugin)


@pytest.fixture
def X():
    rng = np.random.default_rng(1)
    return pd.DataFrame({"a": rng.normal(size=30), "b": rng.normal(size=30)})


def definition(model, X, grid):
    return np.array([model.predict(X.assign(a=g)).mean() for g in grid])


def test_typed_options_reach_the_method_frozen(registered, X):
    model = Line()
    res = pdpx.partial_dependence(model, X, "a", method="test-shifted", grid_resolution=4,
                                  method_options={"shift": 2, "mode": "double"})
    got = Shifted.seen[-1]
    assert isinstance(got, ShiftOptions) and got.shift == 2 and got.mode == "double"
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.shift = 3
    np.testing.assert_allclose(res.average[0], 2 * definition(model, X, res.grid_values[0]) + 2, rtol=1e-12)


@pytest.mark.parametrize("given, message", [
    ({"mode": "triple"}, r"\{'mode': 'triple'\} of method 'test-shifted': expected one of \['plain', 'double'\]"),
    ({"shift": "1"}, r"\{'shift': '1'\} of method 'test-shifted': expected int or float"),
    ({"shfit": 1}, r"\['shfit'\] are not options of method 'test-shifted'; its options: \['shift', 'mode'\]"),
])
def test_typed_options_refused_before_any_model_call(registered, X, given, message):
    model = Line()
    with pytest.raises(PdpxError, match=message):
        pdpx.partial_dependence(model, X, "a", method="test-shifted", method_options=given)
    assert model.calls == 0


def test_a_tuple_declaration_still_works(registered, X):
    model = Line()
    res = pdpx.partial_dependence(model, X, "a", method="test-tupled", grid_resolution=4,
                                  method_options={"shift": 5})
    got = Shifted.seen[-1]
    assert got.shift == 5 and dict(got) == {"shift": 5} and got.get("other", "x") == "x"
    np.testing.assert_allclose(res.average[0], definition(model, X, res.grid_values[0]) + 5, rtol=1e-12)
    with pytest.raises(PdpxError, match=r"\['mode'\] are not options of method 'test-tupled'; its options: "
                                        r"\['shift'\]"):
        pdpx.partial_dependence(model, X, "a", method="test-tupled", method_options={"mode": "double"})
    assert options_class(Tupled()) is options_class(Tupled())  # wrapped once


def test_defaults_and_the_mapping_of_keys_given():
    none = checked_options(Shifted(), None)
    assert none == ShiftOptions() and dict(none) == {} and none.shift == 0.0
    some = checked_options(Shifted(), {"mode": "double"})
    assert dict(some) == {"mode": "double"} and "shift" not in some and some["mode"] == "double"
    with pytest.raises(KeyError):
        some["shift"]
    assert checked_options(Method(), None) == options_class(Method())()  # no options declared


def test_checked_options_travel_by_pickle():
    """Dask sends each partition's request, options included, to its workers."""
    import pickle

    for method, given in ((Shifted(), {"mode": "double"}), (Tupled(), {"shift": 4})):
        sent = checked_options(method, given)
        got = pickle.loads(pickle.dumps(sent))
        assert type(got) is type(sent) and got == sent and dict(got) == given
