"""The public API: one documented return type per function, every returned type and warning exported by pdpx."""

from __future__ import annotations

import inspect
import typing

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import errors

#: Functions whose value is a figure of an optional library (plotnine): their annotation cannot resolve without it.
FIGURES = {"plot_importance"}


def public_functions():
    out = []
    for name in pdpx.__all__:
        obj = getattr(pdpx, name)
        if inspect.isfunction(obj) and name not in FIGURES:
            out.append((name, obj))
    return out


def classes_in(annotation) -> list[type]:
    """The classes an annotation names (through unions and generics)."""
    if isinstance(annotation, type):
        return [annotation]
    return [c for arg in typing.get_args(annotation) for c in classes_in(arg)]


@pytest.mark.parametrize("name, fn", public_functions(), ids=[n for n, _ in public_functions()])
def test_every_public_function_returns_an_exported_type(name, fn):
    hints = typing.get_type_hints(fn)  # resolvable: no name only a type checker knows
    assert "return" in hints, f"pdpx.{name} has no return annotation"
    for cls in classes_in(hints["return"]):
        if cls.__module__.split(".")[0] == "pdpx":
            assert getattr(pdpx, cls.__name__, None) is cls, f"pdpx.{name} returns {cls.__name__}, not exported"
            assert cls.__name__ in pdpx.__all__


def test_every_error_and_warning_class_is_exported():
    for name, obj in vars(errors).items():
        if isinstance(obj, type) and issubclass(obj, (Exception, Warning)) and obj.__module__ == errors.__name__:
            assert getattr(pdpx, name) is obj and name in pdpx.__all__, name


def test_everything_in_all_resolves():
    for name in pdpx.__all__:
        assert getattr(pdpx, name) is not None, name


def test_partial_dependence_returns_one_family():
    """Plain, by=, a dict of models and kind="derivative": each a CurveResult, with the shared interface."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60), "g": rng.choice(["u", "v"], 60)})
    f = lambda d: d["a"].to_numpy() * d["b"].to_numpy()
    with pytest.warns(DeprecationWarning, match="derivative_ice"):  # kind="derivative": deprecated, still one of them
        derivative = pdpx.partial_dependence(f, X, "a", grid_resolution=5, kind="derivative")
    results = {
        "plain": pdpx.partial_dependence(f, X, "a", grid_resolution=5),
        "by": pdpx.partial_dependence(f, X, "a", grid_resolution=5, by="g"),
        "models": pdpx.partial_dependence({"f": f, "g": lambda d: d["b"]}, X, "a", grid_resolution=5),
        "derivative": derivative,
    }
    expected = {"plain": pdpx.PartialDependenceResult, "by": pdpx.StackedResult, "models": pdpx.StackedResult,
                "derivative": pdpx.DerivativeResult}
    assert typing.get_type_hints(pdpx.partial_dependence)["return"] is pdpx.CurveResult
    for key, res in results.items():
        assert isinstance(res, pdpx.CurveResult) and isinstance(res, expected[key]), key
        assert res.features == ["a"] and len(res.grid_values[0]) == 5 and res.outputs
        assert {"feature_set", "yhat"} <= set(res.to_frame().columns)
        assert callable(res.plot) and callable(res.save)
    assert issubclass(pdpx.DerivativeResult, pdpx.PartialDependenceResult)
    assert issubclass(pdpx.ALEResult, pdpx.PartialDependenceResult)
