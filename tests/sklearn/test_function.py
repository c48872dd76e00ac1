"""pdpx.sklearn.partial_dependence against sklearn.inspection.partial_dependence itself.

Every case calls both functions with the same arguments: where scikit-learn returns, the
Bunch keys, the grids and the numbers must agree (method "auto" and "brute" compared with
scikit-learn's "brute", "recursion" with its "recursion"); where scikit-learn raises, pdpx
must raise the same type with the same message.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.inspection import partial_dependence as sk_pd  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.neighbors import KNeighborsRegressor  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

from pdpx.sklearn import partial_dependence as pdpx_pd  # noqa: E402

N = 120
RNG = np.random.default_rng(7)
X = pd.DataFrame({
    "a": RNG.normal(size=N),
    "b": RNG.uniform(-2, 2, size=N),
    "c": RNG.normal(size=N),
    "d": RNG.integers(0, 4, size=N).astype(float),   # few values: a categorical candidate
})
X["c"] = X["c"] + 0.8 * X["a"]                       # correlated: recursion != brute
Y = X["a"] ** 2 + np.sin(2 * X["b"]) + 0.5 * X["c"] * X["d"] + RNG.normal(scale=0.1, size=N)
Y2 = (Y > Y.median()).astype(int)
Y3 = pd.cut(Y, 3, labels=False).astype(int)
YM = np.column_stack([Y, -Y + X["b"]])


def _fit(make, y):
    return make().fit(X, y)


MODELS = {
    "LinearRegression": lambda: _fit(LinearRegression, Y),
    "KNeighborsRegressor": lambda: _fit(lambda: KNeighborsRegressor(5), Y),
    "DecisionTreeRegressor": lambda: _fit(lambda: DecisionTreeRegressor(max_depth=5, random_state=0), Y),
    "RandomForestRegressor": lambda: _fit(lambda: RandomForestRegressor(10, max_depth=5, random_state=0), Y),
    "RandomForestRegressor-multioutput": lambda: _fit(lambda: RandomForestRegressor(5, max_depth=4, random_state=0), YM),
    "ExtraTreesRegressor": lambda: _fit(lambda: ExtraTreesRegressor(5, max_depth=5, random_state=0), Y),
    "GradientBoostingRegressor": lambda: _fit(lambda: GradientBoostingRegressor(n_estimators=20, random_state=0), Y),
    "HistGradientBoostingRegressor": lambda: _fit(lambda: HistGradientBoostingRegressor(max_iter=20), Y),
    "LogisticRegression-binary": lambda: _fit(LogisticRegression, Y2),
    "LogisticRegression-multi": lambda: _fit(LogisticRegression, Y3),
    "Pipeline-binary": lambda: make_pipeline(StandardScaler(), LogisticRegression()).fit(X, Y2),
    "SVC-binary": lambda: _fit(SVC, Y2),  # no predict_proba: decision_function
    "DecisionTreeClassifier-multi": lambda: _fit(lambda: DecisionTreeClassifier(max_depth=4, random_state=0), Y3),
    "RandomForestClassifier-binary": lambda: _fit(lambda: RandomForestClassifier(10, max_depth=4, random_state=0), Y2),
    "GradientBoostingClassifier-binary": lambda: _fit(lambda: GradientBoostingClassifier(n_estimators=15, random_state=0), Y2),
    "GradientBoostingClassifier-multi": lambda: _fit(lambda: GradientBoostingClassifier(n_estimators=10, random_state=0), Y3),
    "HistGradientBoostingClassifier-binary": lambda: _fit(lambda: HistGradientBoostingClassifier(max_iter=15), Y2),
    "HistGradientBoostingClassifier-multi": lambda: _fit(lambda: HistGradientBoostingClassifier(max_iter=10), Y3),
}
RECURSION_MODELS = ["DecisionTreeRegressor", "RandomForestRegressor",
                    "GradientBoostingRegressor", "HistGradientBoostingRegressor", "GradientBoostingClassifier-binary",
                    "GradientBoostingClassifier-multi", "HistGradientBoostingClassifier-binary",
                    "HistGradientBoostingClassifier-multi"]


@pytest.fixture(scope="module")
def models():
    return {name: make() for name, make in MODELS.items()}


def _call(fn, *args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return fn(*args, **kw), None, [str(w.message) for w in caught]
        except Exception as exc:  # noqa: BLE001 - the exception is what is compared
            return None, exc, [str(w.message) for w in caught]


def _options_as_sets(message: str) -> str:
    import re

    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


def assert_same(model, X_, features, *, sk_method=None, atol=1e-9, **kw):
    """pdpx.sklearn gives what scikit-learn gives: the same Bunch, or the same error."""
    sk_kw = dict(kw)
    if sk_method is not None:
        sk_kw["method"] = sk_method
    theirs, their_exc, _ = _call(sk_pd, model, X_, features, **sk_kw)
    ours, our_exc, _ = _call(pdpx_pd, model, X_, features, **kw)
    if their_exc is not None:
        assert our_exc is not None, f"scikit-learn raised {their_exc!r}, pdpx returned"
        assert type(our_exc).__name__ == type(their_exc).__name__, (our_exc, their_exc)
        assert isinstance(our_exc, type(their_exc).__mro__[1]), (our_exc, their_exc)
        if type(their_exc).__name__ == "InvalidParameterError":
            # "a str among {...}": scikit-learn iterates a set whose order comes from its compiled
            # module, not from anything a caller controls; the options are compared as a set
            assert _options_as_sets(str(our_exc)) == _options_as_sets(str(their_exc))
        else:
            assert str(our_exc) == str(their_exc)
        return None
    assert our_exc is None, f"pdpx raised {our_exc!r}, scikit-learn returned"
    assert list(ours) == list(theirs)
    assert len(ours["grid_values"]) == len(theirs["grid_values"])
    for g_ours, g_theirs in zip(ours["grid_values"], theirs["grid_values"]):
        assert g_ours.dtype == g_theirs.dtype
        np.testing.assert_array_equal(g_ours, g_theirs)
    for key in ("average", "individual"):
        if key in theirs:
            assert ours[key].shape == theirs[key].shape, key
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-9, atol=atol, err_msg=key)
    return ours


# ------------------------------------------------------------------ numbers, across parameters
FEATURES = [0, "a", ["b"], ("a", "c"), [1, 3], np.array([2]), [True, False, False, False], ["d", "a"]]


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("kind", ["average", "individual", "both"])
def test_brute_and_auto_equal_sklearns_brute(models, name, kind):
    model = models[name]
    for features, method in zip(FEATURES, itertools.cycle(["brute", "auto"])):
        assert_same(model, X, features, kind=kind, method=method, sk_method="brute", grid_resolution=7)


@pytest.mark.parametrize("name", ["RandomForestRegressor", "GradientBoostingClassifier-multi",
                                  "HistGradientBoostingRegressor", "LogisticRegression-binary"])
@pytest.mark.parametrize("features,percentiles,grid_resolution", [
    (["a"], (0.05, 0.95), 100), (["a", "b"], (0, 1), 2), (["b", "a"], (0.1, 0.7), 13), (["d"], (0.05, 0.95), 100)])
def test_grids_and_percentiles(models, name, features, percentiles, grid_resolution):
    assert_same(models[name], X, features, method="brute", percentiles=percentiles,
                grid_resolution=grid_resolution, kind="both")


@pytest.mark.parametrize("name", ["GradientBoostingRegressor", "HistGradientBoostingClassifier-multi",
                                  "LogisticRegression-multi", "RandomForestClassifier-binary"])
def test_sample_weight_categorical_and_custom_values(models, name):
    model = models[name]
    w = RNG.uniform(0.1, 3, N)
    for kw in (
        {"sample_weight": w},
        {"sample_weight": list(w), "kind": "both"},
        {"categorical_features": ["d"]},
        {"categorical_features": [3]},
        {"categorical_features": [False, False, False, True], "kind": "both"},
        {"custom_values": {"a": [-1.0, 0.0, 2.5]}},
        {"custom_values": {"d": [3.0, 1.0]}, "categorical_features": ["d"]},
    ):
        assert_same(model, X, ["a", "d"], method="auto", sk_method="brute", grid_resolution=6, **kw)


@pytest.mark.parametrize("name", ["LogisticRegression-binary", "LogisticRegression-multi", "GradientBoostingClassifier-binary",
                                  "HistGradientBoostingClassifier-multi", "SVC-binary", "Pipeline-binary"])
@pytest.mark.parametrize("response_method", ["auto", "predict_proba", "decision_function"])
def test_response_methods_of_classifiers(models, name, response_method):
    assert_same(models[name], X, "b", method="brute", response_method=response_method, grid_resolution=9, kind="both")


@pytest.mark.parametrize("name", RECURSION_MODELS)
@pytest.mark.parametrize("features", ["a", ["a", "c"], [0, 3]])
def test_recursion_equals_sklearns_recursion(models, name, features):
    out = assert_same(models[name], X, features, method="recursion", grid_resolution=8, atol=1e-7)
    assert out is not None and "average" in out


def test_recursion_on_multioutput_regressors_gives_every_output(models):
    # scikit-learn's recursion returns a single row for a multi-output forest that equals neither
    # output's partial dependence (nor their mean); pdpx returns one row per output, each checked
    # against brute on independent data below.
    model = models["RandomForestRegressor-multioutput"]
    out = pdpx_pd(model, X, ["b"], method="recursion", grid_resolution=6)
    assert out["average"].shape == (2, 6)
    rng = np.random.default_rng(1)
    Xi = pd.DataFrame(rng.normal(size=(3000, 4)), columns=list("abcd"))  # independent: recursion == brute
    fr = RandomForestRegressor(3, max_depth=3, random_state=0, bootstrap=False).fit(Xi, np.column_stack([Xi["b"], -Xi["a"] * Xi["b"]]))
    rec = pdpx_pd(fr, Xi, ["b"], method="recursion", grid_resolution=6)["average"]
    bru = sk_pd(fr, Xi, ["b"], method="brute", grid_resolution=6)["average"]
    assert rec.shape == bru.shape == (2, 6)
    np.testing.assert_allclose(rec, bru, atol=0.05)


def test_numpy_input_and_feature_names(models):
    model = models["RandomForestRegressor"]
    arr = X.to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "X does not have valid feature names", from both
        assert_same(model, arr, [0, 2], method="brute", grid_resolution=5, kind="both")
        assert_same(model, arr, [0, 3], method="brute", grid_resolution=5, feature_names=["p", "q", "r", "s"],
                    categorical_features=["s"])
        assert_same(model, arr.tolist(), 1, method="brute", grid_resolution=5)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["GradientBoostingRegressor", "HistGradientBoostingClassifier-binary", "RandomForestClassifier-binary",
                          "LogisticRegression-multi", "DecisionTreeRegressor"]),
    features=st.sampled_from(FEATURES),
    kind=st.sampled_from(["average", "individual", "both"]),
    grid_resolution=st.integers(2, 12),
    lo=st.floats(0, 0.45), width=st.floats(0.1, 0.55),
    weighted=st.booleans(),
)
def test_random_combinations(models, name, features, kind, grid_resolution, lo, width, weighted):
    w = np.linspace(0.5, 2, N) if weighted else None
    assert_same(models[name], X, features, method="auto", sk_method="brute", kind=kind,
                grid_resolution=grid_resolution, percentiles=(lo, min(1.0, lo + width)), sample_weight=w)


# ------------------------------------------------------------------ the same mistakes, the same errors
ERRORS = [
    ({"kind": "foo"}, None),
    ({"method": "fast"}, None),
    ({"response_method": "predict"}, "LogisticRegression-binary"),
    ({"response_method": "predict_proba"}, None),
    ({"grid_resolution": 1}, None),
    ({"grid_resolution": 0}, None),
    ({"grid_resolution": 2.5}, None),
    ({"percentiles": [0.1, 0.9]}, None),
    ({"percentiles": (0.9, 0.1)}, None),
    ({"percentiles": (0.0, 2.0)}, None),
    ({"percentiles": (0.1,)}, None),
    ({"percentiles": (0.5, 0.5 + 1e-12)}, None),
    ({"custom_values": "a"}, None),
    ({"custom_values": {"a": [[1.0, 2.0]]}}, None),
    ({"categorical_features": []}, None),
    ({"categorical_features": [True, False]}, None),
    ({"categorical_features": [0.5]}, None),
    ({"categorical_features": ["zz"]}, None),
    ({"feature_names": ["a", "a", "b", "c"]}, None),
    ({"method": "recursion", "kind": "both"}, "GradientBoostingRegressor"),
    ({"method": "recursion", "sample_weight": np.ones(N)}, "GradientBoostingRegressor"),
    ({"method": "recursion"}, "LinearRegression"),
    ({"method": "recursion"}, "RandomForestClassifier-binary"),
    ({"method": "recursion"}, "ExtraTreesRegressor"),
    ({"method": "recursion", "response_method": "predict_proba"}, "GradientBoostingClassifier-binary"),
    ({"sample_weight": np.ones(N - 1)}, None),
    ({"sample_weight": np.ones((N, 2))}, None),
    ({"sample_weight": np.zeros(N)}, None),
    ({"sample_weight": 3}, None),
]


@pytest.mark.parametrize("kw,name", ERRORS, ids=[str(k) for k, _ in ERRORS])
def test_same_errors_for_the_same_mistakes(models, kw, name):
    model = models[name or "RandomForestRegressor"]
    assert_same(model, X, ["a"], **kw)


@pytest.mark.parametrize("features", [-1, 4, [0, 7], "zzz", ["a", 0], [0.5], slice(0, 2), [["a"]], {"a": 1}, None, 1.5])
def test_same_errors_for_bad_features(models, features):
    assert_same(models["RandomForestRegressor"], X, features)


def test_same_errors_for_bad_models_and_data(models):
    assert_same(RandomForestRegressor(), X, ["a"])                   # not fitted
    assert_same(object(), X, ["a"])                                  # not an estimator
    assert_same(StandardScaler().fit(X), X, ["a"])                   # neither regressor nor classifier
    assert_same(models["RandomForestRegressor"], X.to_numpy(), "a")  # names on an array
    assert_same(models["RandomForestRegressor"], "X", ["a"])
    Xi = X.assign(d=X["d"].astype(int))
    assert_same(models["RandomForestRegressor"], Xi, ["d"])          # integer column, not categorical
    assert_same(models["RandomForestRegressor"], Xi, ["d"], categorical_features=["d"], method="brute")
    multi = DecisionTreeClassifier(max_depth=2).fit(X, np.column_stack([Y2, Y3]))
    assert_same(multi, X, ["a"])                                     # multiclass-multioutput


def test_recursion_on_hgb_fitted_with_weights_and_gb_with_init():
    hgb = HistGradientBoostingRegressor(max_iter=5).fit(X, Y, sample_weight=np.linspace(0.5, 2, N))
    assert_same(hgb, X, ["a"], method="recursion")
    from sklearn.dummy import DummyRegressor

    gb = GradientBoostingRegressor(n_estimators=5, init=DummyRegressor(), random_state=0).fit(X, Y)
    _, _, their_warnings = _call(sk_pd, gb, X, ["a"], method="recursion", grid_resolution=5)
    _, _, our_warnings = _call(pdpx_pd, gb, X, ["a"], method="recursion", grid_resolution=5)
    assert [w for w in their_warnings if "init" in w] == [w for w in our_warnings if "init" in w] != []
    assert_same(gb, X, ["a"], method="recursion", grid_resolution=5)


def test_signature_and_defaults_match():
    import inspect

    ours, theirs = inspect.signature(pdpx_pd), inspect.signature(sk_pd)
    assert list(ours.parameters) == list(theirs.parameters)
    for name, p in theirs.parameters.items():
        assert ours.parameters[name].default == p.default, name
        assert ours.parameters[name].kind == p.kind, name


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_boosters_scikit_learn_api_and_native(library):
    lib = pytest.importorskip(library, reason=f"{library} is not installed")
    import pdpx

    if library == "xgboost":
        wrapped = lib.XGBRegressor(n_estimators=10, max_depth=3).fit(X, Y)
        native = wrapped.get_booster()
    else:
        wrapped = lib.LGBMRegressor(n_estimators=10, num_leaves=7, verbose=-1).fit(X, Y)
        native = wrapped.booster_
    assert_same(wrapped, X, ["a", "c"], kind="both", method="auto", sk_method="brute", grid_resolution=6, atol=1e-6)
    out = pdpx_pd(native, X, ["a"], kind="both", grid_resolution=6)   # scikit-learn refuses a Booster
    ref = sk_pd(wrapped, X, ["a"], kind="both", method="brute", grid_resolution=6)
    np.testing.assert_allclose(out["average"], ref["average"], rtol=1e-6)
    rec = pdpx_pd(native, X, ["a"], method="recursion", grid_resolution=6)["average"]
    np.testing.assert_allclose(rec, pdpx.partial_dependence(native, X, ["a"], method="recursion",
                                                            custom_values={"a": out["grid_values"][0]}).average)
