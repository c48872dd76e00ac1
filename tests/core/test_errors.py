"""Bad input: one table of cases, each with a message that says what to do."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LogisticRegression

import pdpx
from pdpx import NotFittedError, PdpxError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({
        "a": rng.normal(size=200),
        "b": rng.normal(size=200),
        "const": np.ones(200),
        "flag": rng.random(200) > 0.5,
    })
    y = X.a + X.b
    reg = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    Xi, yi = load_iris(return_X_y=True, as_frame=True)
    clf = LogisticRegression(max_iter=300).fit(Xi, yi)
    return X, reg, Xi, clf


CASES = [
    # id, call(X, reg, Xi, clf), exception, message pattern
    ("unknown feature", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["aa"]),
     PdpxError, r"unknown feature 'aa'.*Did you mean 'a'"),
    ("index out of range", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, [7]),
     PdpxError, r"index 7 is out of range: X has 4 columns, indices 0 to 3"),
    ("duplicate features", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a", "a"]),
     PdpxError, r"lists \['a'\] more than once"),
    ("duplicate by name and index", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a", 0]),
     PdpxError, r"more than once"),
    ("empty features", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, []),
     PdpxError, r"features is empty"),
    ("empty X", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X.iloc[:0], ["a"]),
     PdpxError, r"X has no rows"),
    ("other columns than fitted", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X.rename(columns={"b": "B"}), ["a"]),
     PdpxError, r"missing \['b'\]; not seen at fit time \['B'\]"),
    ("fewer columns than fitted (array)", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X.to_numpy()[:, :3], [0]),
     PdpxError, r"X has 3 columns but RandomForestRegressor was fitted on 4"),
    ("unfitted model", lambda X, reg, Xi, clf: pdpx.partial_dependence(RandomForestRegressor(), X, ["a"]),
     NotFittedError, r"not fitted yet: call \.fit\(X, y\)"),
    ("response the model lacks", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], response="predict_proba"),
     PdpxError, r"has no response 'predict_proba'; use one of \['predict'\]"),
    ("labels of a classifier", lambda X, reg, Xi, clf: pdpx.partial_dependence(clf, Xi, [0], response="predict"),
     PdpxError, r"predicted labels are not numbers"),
    ("unknown response", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], response="proba"),
     PdpxError, r"response must be one of 'auto', 'predict', 'predict_proba'"),
    ("target not a class", lambda X, reg, Xi, clf: pdpx.partial_dependence(clf, Xi, [0], target=5),
     PdpxError, r"target 5 is not a class of this model; its classes are \[.*0.*1.*2.*\]"),
    ("target of a single-output regressor", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], target=3),
     PdpxError, r"target 3 is not an output of this model"),
    ("negative sample weights", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], sample_weight=np.r_[-1.0, np.ones(199)]),
     PdpxError, r"1 negative value\(s\); weights must be >= 0"),
    ("all-zero sample weights", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], sample_weight=np.zeros(200)),
     PdpxError, r"zero for every row"),
    ("sample weights of wrong length", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], sample_weight=np.ones(3)),
     PdpxError, r"one weight per row of X \(200\)"),
    ("NaN sample weight", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], sample_weight=np.r_[np.nan, np.ones(199)]),
     PdpxError, r"NaN or infinite"),
    ("percentiles out of order", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], percentiles=(0.95, 0.05)),
     PdpxError, r"increasing order.*did you mean \(0\.05, 0\.95\)"),
    ("percentiles outside [0, 1]", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], percentiles=(5, 95)),
     PdpxError, r"numbers in \[0, 1\].*fractions: did you mean \(0\.05, 0\.95\)"),
    ("grid over the memory budget", lambda X, reg, Xi, clf: pdpx.partial_dependence(
        reg, X, ["a", "b"], kind="individual", grid_resolution=100, memory_budget="1MB"),
     PdpxError, r"ICE curves on a grid of 101 \('a'\) x 101 \('b'\).*200 rows would take 16\.0 MiB, over the memory budget of "
     r"1\.0 MiB.*kind='average'"),
    ("constant feature", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["const"]),
     PdpxError, r"'const' is constant.*custom_values"),
    ("grid_resolution too small", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], grid_resolution=1),
     PdpxError, r"grid_resolution must be an integer >= 2; got 1"),
    ("unknown kind", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], kind="ice"),
     PdpxError, r"kind must be one of"),
    ("unknown method", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], method="fast"),
     PdpxError, r"unknown method 'fast'; available: \['auto', .*'brute'"),
    ("custom values not categories", lambda X, reg, Xi, clf: pdpx.partial_dependence(
        reg, X.assign(flag=X.flag.astype("category")), ["flag"], custom_values={"flag": [True, "x"]}),
     PdpxError, r"not categories of the column: \['x'\]"),
    ("custom values with NaN", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], custom_values={"a": [0.0, np.nan]}),
     PdpxError, r"contains NaN"),
    ("not a model", lambda X, reg, Xi, clf: pdpx.partial_dependence(object(), X, ["a"]),
     PdpxError, r"does not know how to use a builtins.object: it has no predict method"),
    ("memory budget not understood", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X, ["a"], memory_budget="lots"),
     PdpxError, r"memory_budget 'lots' not understood"),
    ("Series as X", lambda X, reg, Xi, clf: pdpx.partial_dependence(reg, X["a"], ["a"]),
     PdpxError, r"X is a Series; pass a DataFrame"),
    ("recursion on probabilities of a boosted classifier", lambda X, reg, Xi, clf: pdpx.partial_dependence(
        __import__("sklearn.ensemble", fromlist=["x"]).GradientBoostingClassifier(n_estimators=3).fit(Xi, Xi.iloc[:, 0] > 5.8),
        Xi, [0], method="recursion"),
     PdpxError, r"method 'recursion' cannot run here: .*non-linear link.*method='exact'"),
    ("exact on a model without trees", lambda X, reg, Xi, clf: pdpx.partial_dependence(clf, Xi, [0], method="exact"),
     PdpxError, r"method 'exact' cannot run here: LogisticRegression is not a tree model"),
    ("feature_sets given a single name", lambda X, reg, Xi, clf: pdpx.partial_dependence_many(reg, X, "a"),
     PdpxError, r"feature_sets must be a list of feature sets"),
]


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(data, call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call(*data)


def test_errors_are_value_errors():
    assert issubclass(PdpxError, ValueError)
    assert issubclass(NotFittedError, PdpxError)


def test_no_warnings_on_the_happy_path(data):
    X, reg, Xi, clf = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpx.partial_dependence(reg, X, ["a"], kind="both")
        pdpx.partial_dependence(reg, X.to_numpy(), [0])
        pdpx.partial_dependence(clf, Xi, [0, 1], grid_resolution=5)
        pdpx.partial_dependence_many(reg, X)


def test_every_column_skips_constant_ones_and_says_why(data):
    X, reg, *_ = data
    coll = pdpx.partial_dependence_many(reg, X)
    assert [r.features for r in coll] == [["a"], ["b"], ["flag"]]
    assert list(coll.skipped) == [("const",)]
    assert re.search("constant", coll.skipped[("const",)])
