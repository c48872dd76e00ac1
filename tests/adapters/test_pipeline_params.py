"""Pipelines as people build them (issue 49, point 1): a step switched off, X's columns matched by name, and a
step's parameters changed after a first call.

Every number is compared with the definition: the feature set to each grid value on every row, the pipeline's own
predict, averaged.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer, OrdinalEncoder, StandardScaler  # noqa: E402
from stacked import predict_copies  # noqa: E402

import pdpx  # noqa: E402
from pdpx.adapters.sklearn_transforms import declare_elementwise  # noqa: E402
from pdpx.core.errors import PdpxError  # noqa: E402


def _frame(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": rng.choice(["x", "y", "z"], size=n), "d": rng.integers(0, 4, size=n).astype(float)})
    return X, _target(X)


def _target(X):
    return X.d + 2 * X.a + np.sin(3 * X.b) + (X.c == "y")


def definition(model, X, feature, grid):
    """The average of the model's predict with ``feature`` set to each grid value on every row."""
    copies = []
    for v in grid:
        Z = X.copy()
        Z[feature] = v
        copies.append(Z)
    return np.array([np.mean(p) for p in predict_copies(model.predict, copies)])


def assert_definition(res, model, X, feature):
    np.testing.assert_allclose(res.average[0], definition(model, X, feature, res.grid_values[0]),
                               rtol=1e-9, atol=1e-9)


def _numeric(first):
    X, y = _frame()
    X = X[["a", "b", "d"]]
    model = Pipeline([("pre", first), ("sc", StandardScaler()),
                      ("m", HistGradientBoostingRegressor(max_iter=15, random_state=0))]).fit(X, y)
    return model, X


@pytest.mark.parametrize("first", ["passthrough", None])
@pytest.mark.parametrize("method", ["auto", "exact"])
def test_a_step_switched_off_is_read_and_stays_exact(first, method):
    model, X = _numeric(first)
    res = pdpx.partial_dependence(model, X, "b", method=method)
    assert res.method == "exact"
    assert_definition(res, model, X, "b")


def test_a_step_switched_off_in_the_middle_and_in_a_column_transformer():
    X, y = _frame()
    ct = ColumnTransformer([("num", Pipeline([("imp", "passthrough"), ("sc", StandardScaler())]), ["a", "b", "d"]),
                            ("cat", OrdinalEncoder(), ["c"])])
    model = Pipeline([("ct", ct), ("off", None),
                      ("m", HistGradientBoostingRegressor(max_iter=15, random_state=0))]).fit(X, y)
    for f in ("a", "c"):
        res = pdpx.partial_dependence(model, X, f, method="exact")
        assert_definition(res, model, X, f)


@pytest.mark.parametrize("first", ["passthrough", None])
def test_x_is_matched_by_name_when_the_first_step_is_switched_off(first):
    """The pipeline itself has no ``feature_names_in_`` then; its first real step has them, and X in another
    column order is computed on the right columns (a numpy array handed over would read them by position)."""
    model, X = _numeric(first)
    shuffled = X[["d", "b", "a"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X does not have valid feature names": a frame reaches the scaler
        for method in ("exact", "brute"):
            res = pdpx.partial_dependence(model, shuffled, "b", method=method)
            assert_definition(res, model, X, "b")


def test_x_without_a_column_the_pipeline_was_fitted_on_is_refused():
    model, X = _numeric("passthrough")
    with pytest.raises(ValueError):  # the model's own refusal: pdpx's must match it
        model.predict(X.rename(columns={"d": "e"}))
    with pytest.raises(PdpxError, match="missing \\['d'\\]"):
        pdpx.partial_dependence(model, X.rename(columns={"d": "e"}), "b")


def test_every_step_switched_off_matches_x_by_the_final_estimators_names():
    X, y = _frame()
    X = X[["a", "b", "d"]]
    model = Pipeline([("pre", "passthrough"), ("m", HistGradientBoostingRegressor(max_iter=15))]).fit(X, y)
    res = pdpx.partial_dependence(model, X[["b", "d", "a"]], "a", method="exact")
    assert_definition(res, model, X, "a")


# ------------------------------------------------------------------ parameters changed after a first call
def f_double(x):
    """Element-wise, increasing."""
    return x * 2.0


def f_cube(x):
    """Element-wise, increasing."""
    return x ** 3


def f_affine(x):
    """Element-wise, increasing (its code is swapped for f_exp's below)."""
    return x * 0.5 + 1.0


def f_exp(x):
    """Element-wise, increasing."""
    return np.exp(x)


for _f in (f_double, f_cube, f_affine, f_exp):
    declare_elementwise(_f)


def _composed(weights=None, func=None, X=None):
    X = _frame()[0] if X is None else X
    y = _target(X)
    ct = ColumnTransformer(
        [("num", Pipeline([("imp", SimpleImputer()), ("sc", StandardScaler())]), ["a", "b"]),
         ("d", SimpleImputer(), ["d"]),
         ("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1), ["c"])],
        transformer_weights=weights)
    model = Pipeline([("ct", ct), ("f", FunctionTransformer(func)),
                      ("m", HistGradientBoostingRegressor(max_iter=20, random_state=0))]).fit(X, y)
    return model, X


def _with_mean(m):
    m.named_steps["ct"].named_transformers_["num"].set_params(sc__with_mean=False)


def _weights(m):
    m.named_steps["ct"].transformer_weights = {"num": 2.0, "d": 1.0, "cat": 1.0}


def _missing_values(m):
    m.named_steps["ct"].named_transformers_["d"].set_params(missing_values=0.0)


def _func(m):
    m.named_steps["f"].set_params(func=f_cube)


def _code(m):
    f_affine.__code__ = f_exp.__code__


CHANGES = {
    "set_params(sc__with_mean=False)": (_with_mean, {}, "a"),
    "transformer_weights": (_weights, {"weights": {"num": 1.0, "d": 1.0, "cat": 1.0}}, "b"),
    "missing_values": (_missing_values, {}, "d"),
    "FunctionTransformer func": (_func, {"func": f_double}, "b"),
    "a function's code": (_code, {"func": f_affine}, "b"),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_parameter_changed_after_a_first_call_gives_the_new_answer(name):
    change, kwargs, feature = CHANGES[name]
    original = f_affine.__code__
    try:
        model, X = _composed(**kwargs)
        first = pdpx.partial_dependence(model, X, feature, method="auto")
        assert_definition(first, model, X, feature)
        change(model)
        again = pdpx.partial_dependence(model, X, feature, method="auto")
        assert not np.allclose(again.average[0], first.average[0])  # the change matters (else this cannot fail)
        assert_definition(again, model, X, feature)
    finally:
        f_affine.__code__ = original


@pytest.mark.parametrize("feature", ["c", "a"])
def test_a_fitted_encoders_unknown_value_changed_after_a_first_call(feature):
    X, _ = _frame()
    X.loc[::5, "c"] = "w"  # a category the encoder never saw at fit time
    model, _ = _composed(X=X[X.c != "w"].reset_index(drop=True))
    first = pdpx.partial_dependence(model, X, feature, method="exact")
    assert_definition(first, model, X, feature)
    model.named_steps["ct"].named_transformers_["cat"].set_params(unknown_value=5)
    again = pdpx.partial_dependence(model, X, feature, method="auto")
    assert again.method == "exact"
    assert not np.allclose(again.average[0], first.average[0])
    assert_definition(again, model, X, feature)
