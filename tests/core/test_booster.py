"""What the boosting libraries' adapters share (core/booster.py): a column read as numbers, the prediction of a
library's scikit-learn interface, and the check of the trees' link against the library's own prediction."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from pdpx.core.booster import BoosterAdapter, link_problem, numeric_column
from pdpx.core.errors import PdpxError


def test_numeric_column_reads_numbers_with_missing_values_as_nan():
    col = pd.Series([1, None, 3], dtype="Int64")
    out = numeric_column(col, "n", "the library takes numbers")
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [1.0, np.nan, 3.0])


def test_numeric_column_refuses_text_naming_the_column_and_what_the_library_takes():
    with pytest.raises(PdpxError, match=r"column 'city' is not numeric; the library takes numbers or categories"):
        numeric_column(pd.Series(["a", "b"]), "city", "the library takes numbers or categories")


class _Wrapper:
    """A model of a library's scikit-learn interface that says what it was asked."""

    def predict(self, data, **kw):
        return np.full(len(data), 2.0 if kw else 1.0)

    def predict_proba(self, data):
        return np.tile([0.25, 0.75], (len(data), 1))


@pytest.mark.parametrize("response, expected", [("predict", 1.0), ("raw", 2.0), ("predict_proba", [0.25, 0.75])])
def test_wrapper_predict_asks_the_margin_by_the_librarys_keyword(response, expected):
    adapter = types.SimpleNamespace(model=_Wrapper())
    out = BoosterAdapter.wrapper_predict(adapter, np.zeros((3, 1)), response, {"margin_please": True})
    assert out.shape[0] == 3 and out.ndim == 2
    np.testing.assert_array_equal(out, np.broadcast_to(expected, out.shape))


def test_wrapper_predict_refuses_a_response_the_model_has_not():
    with pytest.raises(PdpxError, match="_Wrapper has no response 'decision_function'"):
        BoosterAdapter.wrapper_predict(types.SimpleNamespace(model=_Wrapper()), np.zeros((1, 1)),
                                       "decision_function", {})


def test_link_problem_compares_the_trees_with_the_models_own_probability():
    xgb = pytest.importorskip("xgboost")
    from pdpx.core.plugins import adapt

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    model = xgb.XGBClassifier(n_estimators=5, max_depth=2).fit(X, (X["a"] + X["b"] > 0).astype(int))
    ens = adapt(model).tree_model("predict_proba").ensemble
    theirs = model.predict_proba(pd.DataFrame({"a": [np.nan], "b": [np.nan]}))[:, 1:]  # the definition
    assert link_problem(ens, theirs, rtol=1e-5, atol=1e-7, theirs_are="its prediction is") is None
    message = link_problem(ens, theirs + 0.1, rtol=1e-5, atol=1e-7, theirs_are="its prediction is")
    assert message is not None and "where its prediction is [" in message and "binary_logistic" in message
