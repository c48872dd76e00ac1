"""The options of partial_dependence are defined once (core/options.py) and checked once per call."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import options as O
from pdpx.core.errors import PdpxTypeError


def test_the_signature_of_partial_dependence_is_the_options_object():
    sig = inspect.signature(pdpx.partial_dependence)
    keyword = [p for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert tuple(p.name for p in keyword) == O.OPTION_NAMES_IN_ORDER
    for p in keyword:
        assert p.default == O.DEFAULTS[p.name], p.name


@pytest.mark.parametrize("name", O.OPTION_NAMES_IN_ORDER)
def test_partial_dependence_hands_on_every_option_it_is_given(name, monkeypatch):
    """Each keyword option set to a value other than its default reaches PDOptions.checked, alone and unchanged
    (the options are passed by name, not gathered from locals())."""
    seen = {}

    class Stop(Exception):
        pass

    def checked(function, given, **kwargs):
        seen.update(given)
        raise Stop

    monkeypatch.setattr(O.PDOptions, "checked", staticmethod(checked))
    value = object()
    with pytest.raises(Stop):
        pdpx.partial_dependence(lambda d: d["a"], pd.DataFrame({"a": [1.0, 2.0]}), "a", **{name: value})
    assert seen == {name: value}


def test_checked_parses_and_remembers_what_was_given():
    opts = O.PDOptions.checked("f", {"memory_budget": "2MB", "percentiles": [0.1, 0.9], "interval": 0.9})
    assert opts.memory_budget == 2 * 2**20 and opts.percentiles == (0.1, 0.9) and opts.interval == 0.9
    assert opts.given == {"memory_budget", "percentiles", "interval"}
    derived = opts.but(kind="both")
    assert derived.kind == "both" and opts.kind == "average" and "kind" in derived.given


def test_unknown_options_name_the_function():
    with pytest.raises(PdpxTypeError, match=r"f\(\): unknown option\(s\) \['grid_res'\]; the options of "):
        O.PDOptions.checked("f", {"grid_res": 3})


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80), "g": rng.choice(["u", "v"], 80)})
    return (lambda d: 2 * d["a"].to_numpy() + d["b"].to_numpy()), X


def count_checks(monkeypatch):
    seen = []
    real = O.check_param

    def spy(function, name, value, constraints):
        seen.append((function, name))
        return real(function, name, value, constraints)

    monkeypatch.setattr(O, "check_param", spy)
    return seen


@pytest.mark.parametrize("call", [
    lambda f, X: pdpx.partial_dependence(f, X, "a", grid_resolution=7, memory_budget="64MB", by="g"),
    lambda f, X: pdpx.partial_dependence({"m1": f, "m2": f}, X, "a", grid_resolution=7, n_jobs=1),
    lambda f, X: pdpx.partial_dependence(f, X, "a", kind="derivative", grid_resolution=7, ice_sample=20),
    lambda f, X: pdpx.partial_dependence_many(f, X, ["a", "b"], grid_resolution=7, method="brute"),
    lambda f, X: pdpx.importance(f, X, ["a", "b"], grid_resolution=7, memory_budget="64MB"),
    lambda f, X: pdpx.h_statistic(f, X, ["a", "b"], n_jobs=1, method="brute"),
    lambda f, X: pdpx.derivative_ice(f, X, "a", grid_resolution=7),
], ids=["by", "dict", "derivative", "many", "importance", "h_statistic", "derivative_ice"])
def test_each_option_is_checked_once_per_call(data, monkeypatch, call):
    f, X = data
    seen = count_checks(monkeypatch)
    call(f, X)
    assert seen, "nothing was checked"
    repeated = sorted({c for c in seen if seen.count(c) > 1})
    assert not repeated, f"checked more than once: {repeated}"
