"""brute through the scikit-learn adapter equals sklearn.inspection.partial_dependence(method="brute")."""

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
from sklearn.inspection import partial_dependence as sk_pd
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeRegressor

import pdpx

TOL = 1e-10


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.iloc[:150], y.iloc[:150]


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, y


def compare(model, X, features, *, sample_weight=None, categorical_features=None, grid_resolution=12, **kw):
    ours = pdpx.partial_dependence(
        model, X, features, kind="both", method="brute", grid_resolution=grid_resolution,
        sample_weight=sample_weight, categorical_features=categorical_features, **kw,
    )
    theirs = sk_pd(
        model, X, features, kind="both", method="brute", grid_resolution=grid_resolution,
        sample_weight=sample_weight, categorical_features=categorical_features,
    )
    assert len(ours.grid_values) == len(theirs["grid_values"])
    for a, b in zip(ours.grid_values, theirs["grid_values"]):
        if a.dtype == object:
            assert list(a) == list(b)
        else:
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    assert ours.average.shape == theirs["average"].shape
    assert ours.individual.shape == theirs["individual"].shape
    np.testing.assert_allclose(ours.average, theirs["average"], rtol=0, atol=TOL)
    np.testing.assert_allclose(ours.individual, theirs["individual"], rtol=0, atol=TOL)
    return ours


@pytest.mark.parametrize("features", [["bmi"], ["bmi", "s5"], [2, 8]])
def test_regressor(diabetes, features):
    X, y = diabetes
    compare(RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y), X, features)


def test_regressor_fitted_on_array_takes_array_or_frame(diabetes):
    X, y = diabetes
    model = Ridge().fit(X.to_numpy(), y)
    res = compare(model, X.to_numpy(), [2])
    assert res.features == ["x2"]


def test_sample_weight(diabetes):
    X, y = diabetes
    w = np.random.default_rng(0).uniform(0, 3, len(X))
    compare(LinearRegression().fit(X, y), X, ["bmi", "bp"], sample_weight=w)


def test_binary_classifier_probability_of_positive_class(iris):
    X, y = iris
    yb = (y == 1).astype(int)
    res = compare(LogisticRegression(max_iter=500).fit(X, yb), X, ["petal length (cm)"])
    assert res.outputs == ["1"]
    assert res.response == "predict_proba"


def test_binary_decision_function(iris):
    X, y = iris
    model = LogisticRegression(max_iter=500).fit(X, (y == 1).astype(int))
    ours = pdpx.partial_dependence(model, X, [0], response="decision_function", kind="both", grid_resolution=8)
    theirs = sk_pd(model, X, [0], response_method="decision_function", kind="both", grid_resolution=8)
    np.testing.assert_allclose(ours.average, theirs["average"], atol=TOL)
    np.testing.assert_allclose(ours.individual, theirs["individual"], atol=TOL)


def test_multiclass(iris):
    X, y = iris
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    res = compare(model, X, ["sepal width (cm)", "petal width (cm)"], grid_resolution=6)
    assert res.outputs == ["0", "1", "2"]


def test_multiclass_target_selects_class(iris):
    X, y = iris
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = LogisticRegression(max_iter=500).fit(X, names)
    full = pdpx.partial_dependence(model, X, [0], grid_resolution=5)
    one = pdpx.partial_dependence(model, X, [0], grid_resolution=5, target="virginica")
    assert one.outputs == ["virginica"]
    np.testing.assert_allclose(one.average[0], full.average[2])


def test_multi_output_regressor(diabetes):
    X, y = diabetes
    Y = np.c_[y, np.log(y)]
    model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, Y)
    res = compare(model, X, ["bmi"])
    assert res.outputs == ["target 0", "target 1"]
    second = pdpx.partial_dependence(model, X, ["bmi"], target=1, grid_resolution=12)
    np.testing.assert_allclose(second.average[0], res.average[1])


@pytest.fixture(scope="module")
def penguins():
    from palmerpenguins import load_penguins

    df = load_penguins().dropna().reset_index(drop=True)
    X = df[["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "island", "sex"]].copy()
    X["island"] = X["island"].astype(object)
    X["sex"] = X["sex"].astype(object)
    return X, df["body_mass_g"].to_numpy(dtype=float)


def pipeline():
    pre = ColumnTransformer([
        ("num", StandardScaler(), ["bill_length_mm", "bill_depth_mm", "flipper_length_mm"]),
        ("cat", OneHotEncoder(handle_unknown="ignore"), ["island", "sex"]),
    ])
    return make_pipeline(pre, Ridge(alpha=1.0))


def test_pipeline_with_column_transformer_numeric_and_categorical(penguins):
    X, y = penguins
    model = pipeline().fit(X, y)
    res = compare(model, X, ["flipper_length_mm"])
    assert res.features == ["flipper_length_mm"]
    res = compare(model, X, ["island"], categorical_features=["island"])
    assert res.categorical == [True]
    assert list(res.grid_values[0]) == ["Biscoe", "Dream", "Torgersen"]
    w = np.linspace(0.5, 2, len(X))
    compare(model, X, ["island", "bill_depth_mm"], sample_weight=w, categorical_features=["island"])


def test_object_columns_are_categorical_by_default(penguins):
    X, y = penguins
    model = pipeline().fit(X, y)
    res = pdpx.partial_dependence(model, X, ["sex"])
    assert res.categorical == [True]
    assert list(res.grid_values[0]) == ["female", "male"]


def test_binary_decision_function_target_is_the_positive_class(iris):
    X, y = iris
    model = LogisticRegression(max_iter=500).fit(X, (y == 1).astype(int))
    res = pdpx.partial_dependence(model, X, [0], response="decision_function", target=1, grid_resolution=4)
    assert res.outputs == ["1"]
    with pytest.raises(pdpx.PdpxError, match="binary decision_function has one output, for class 1"):
        pdpx.partial_dependence(model, X, [0], response="decision_function", target=0)
