"""core.inputs: a call's inputs validated once, when its session is built.

Method options are checked there, for the method asked for (or each method ``method="auto"`` may choose), before
any model call; the kind a method run computes is derived there once.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor

import pdpx
from pdpx.core.errors import PdpxError
from pdpx.core.session import Session


class CountingModel:
    """``2 a + b``, counting its predict calls."""

    def __init__(self):
        self.calls = 0

    def predict(self, X):
        self.calls += 1
        return 2 * X["a"].to_numpy(dtype=float) + X["b"].to_numpy(dtype=float)


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})


BOUNDARY_CASES = [
    ("exact", {"kernel": "fast"},
     r"method_options=\{'kernel': 'fast'\} of method 'exact': expected one of \['auto', 'oblivious', 'leafsets', "
     r"'partition'\]"),
    ("exact", {"engine": 3}, r"\{'engine': 3\} of method 'exact': expected one of \['auto', 'counts', 'rows'\]"),
    ("exact", {"stack": False}, r"\['stack'\] are not options of method 'exact'; its options: \['kernel', 'engine'\]"),
    ("brute", {"stack": "no"}, r"\{'stack': 'no'\} of method 'brute': expected True .* or False"),
    ("brute", {"stack": 1}, r"\{'stack': 1\} of method 'brute': expected True"),
    ("auto", {"speed": 1}, r"\['speed'\] are not options of method 'exact' \(which method='auto' may choose\); "
                           r"its options: \['kernel', 'engine'\]; .*\['speed'\] are not options of method 'brute'"),
    ("auto", {"kernel": "fast"}, r"\{'kernel': 'fast'\} of method 'exact'.*expected one of.*\['kernel'\] are not "
                                 r"options of method 'brute'.*its options: \['stack'\]"),
]


@pytest.mark.parametrize("method, given, message", BOUNDARY_CASES, ids=[f"{c[0]}-{c[1]}" for c in BOUNDARY_CASES])
def test_method_options_are_refused_when_the_session_is_built(X, method, given, message):
    model = CountingModel()
    with pytest.raises(PdpxError, match=message):
        Session(model, X, method=method, method_options=given)
    with pytest.raises(PdpxError, match=message):
        pdpx.partial_dependence(model, X, "a", method=method, method_options=given)
    assert model.calls == 0  # before any model call (not even the probe of the response)


def test_auto_raises_for_the_method_it_chose_when_its_options_are_for_another(X):
    model = CountingModel()
    session = Session(model, X, method_options={"kernel": "partition"})  # exact's option: accepted at the boundary
    with pytest.raises(PdpxError, match=r"\['kernel'\] are not options of method 'brute' \(chosen by "
                                        r"method='auto'\); its options: \['stack'\]; exact not used"):
        session.compute([0])
    assert model.calls <= 1  # the probe at most: nothing was computed


def test_requests_carry_the_methods_frozen_options(X):
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, X["a"])
    session = Session(model, X, method="exact", method_options={"kernel": "partition"}, grid_resolution=5)
    opts = session.request([0]).options
    assert opts.kernel == "partition" and opts.engine == "auto"  # typed: the default where nothing was given
    assert dict(opts) == {"kernel": "partition"} and opts.get("engine", "rows") == "rows"  # as the dict was
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.kernel = "leafsets"
    brute = Session(model, X, method="brute", grid_resolution=5).request([0]).options
    assert brute.stack is True and dict(brute) == {}
    res = session.compute([0])
    want = [model.predict(X.assign(a=g)).mean() for g in res.grid_values[0]]
    np.testing.assert_allclose(res.average[0], want, rtol=1e-12)


def test_kind_is_derived_once(X):
    model = CountingModel()
    session = Session(model, X, kind="average", interval=0.9, n_boot=20, grid_resolution=4)
    assert session.inputs.kind == "average" and session.inputs.request_kind == "both"
    assert session.request([0]).kind == "both"  # the bootstrap resamples every row's curve
    assert session.request([0], kind="average").kind == "average"
    res = session.compute([0])
    assert res.kind == "average" and res.individual is None and res.lower is not None
    want = [(2 * g + X["b"]).mean() for g in res.grid_values[0]]
    np.testing.assert_allclose(res.average[0], want, rtol=1e-12)
    plain = Session(model, X, kind="individual", grid_resolution=4)
    assert plain.inputs.request_kind == "individual" and plain.request([0]).kind == "individual"
