"""Issue 49 point 3: column rules for QuantileTransformer, PowerTransformer, the selectors and FeatureUnion.

Each step is column-wise, so a pipeline through it must answer with ``exact`` and equal the
definition (the pipeline's own predict, averaged with the raw column set to each grid value), at the
default grid and at grid="thresholds"; what is not column-wise (a FeatureUnion subclass, a branch
that mixes columns) runs ``brute`` and says why.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.decomposition import PCA
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.feature_selection import (
    GenericUnivariateSelect,
    SelectFromModel,
    SelectKBest,
    SelectPercentile,
    VarianceThreshold,
    f_regression,
)
from sklearn.linear_model import Lasso
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import (
    OneHotEncoder,
    PowerTransformer,
    QuantileTransformer,
    SplineTransformer,
    StandardScaler,
)
from sklearn.tree import DecisionTreeRegressor
from stacked import predict_copies

import pdpx

N = 300
rng = np.random.default_rng(493)
X = pd.DataFrame({"a": rng.normal(size=N) * 3, "b": rng.exponential(size=N) + 0.1, "c": rng.normal(size=N),
                  "const": np.ones(N), "city": rng.choice(["x", "y", "z"], N)})
Y = X.a ** 2 + np.log(X.b) * 2 + X.c + (X.city == "y") + rng.normal(scale=0.1, size=N)
NUMS = ["a", "b", "c", "const"]

STEPS = {
    "quantile uniform": lambda: QuantileTransformer(n_quantiles=50),
    "quantile normal": lambda: QuantileTransformer(n_quantiles=80, output_distribution="normal"),
    "power yeo-johnson": lambda: PowerTransformer(),
    "power unstandardised": lambda: PowerTransformer(standardize=False),
    "select k best": lambda: SelectKBest(f_regression, k=2),
    "select percentile": lambda: SelectPercentile(f_regression, percentile=50),
    "generic univariate": lambda: GenericUnivariateSelect(f_regression, mode="k_best", param=3),
    "variance threshold": lambda: VarianceThreshold(),
    "select from model": lambda: SelectFromModel(Lasso(alpha=0.05)),
    "union": lambda: FeatureUnion([("scaled", StandardScaler()), ("quantiles", QuantileTransformer(n_quantiles=40)),
                                   ("dropped", "drop"), ("raw", "passthrough")]),
    "union weighted": lambda: FeatureUnion([("scaled", StandardScaler()), ("power", PowerTransformer())],
                                           transformer_weights={"scaled": -2.0, "power": 0.5}),
    "union with a spline": lambda: FeatureUnion([("spline", SplineTransformer(n_knots=5)),
                                                 ("scaled", StandardScaler())]),
}


def model_with(step, final=None):
    pre = make_column_transformer((OneHotEncoder(sparse_output=False), ["city"]), (step, NUMS))
    return make_pipeline(pre, final or HistGradientBoostingRegressor(max_iter=20, random_state=0)).fit(X, Y)


def definition(model, col, values):
    return np.array([p.mean() for p in predict_copies(model.predict, [X.assign(**{col: v}) for v in values])])


def check(model, col, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", pdpx.TreeMismatchWarning)
        res = pdpx.partial_dependence(model, X, [col], **kw)
    assert res.method == "exact", res.notes
    np.testing.assert_allclose(np.asarray(res.average).ravel(),
                               definition(model, col, np.asarray(res.grid_values[0], dtype=float)), atol=1e-9)


@pytest.mark.parametrize("name", sorted(STEPS))
def test_column_wise_steps_are_exact(name):
    model = model_with(STEPS[name]())  # standardised Yeo-Johnson refuses huge numbers: read within what it takes
    for col in ("a", "b"):
        check(model, col, grid_resolution=12)
        check(model, col, grid="thresholds")
    check(make_pipeline(make_column_transformer((STEPS[name](), NUMS), remainder="drop"),
                        DecisionTreeRegressor(max_depth=6, random_state=0)).fit(X, Y), "c", grid_resolution=9)


def test_a_selector_drops_columns_the_model_then_never_reads():
    model = model_with(SelectKBest(f_regression, k=1))
    kept = np.asarray(NUMS)[model[0].named_transformers_["pipeline"].get_support()] if hasattr(
        model[0], "named_transformers_") and "pipeline" in model[0].named_transformers_ else None
    res = pdpx.partial_dependence(model, X, ["c"])
    assert res.method == "exact" or kept is not None
    np.testing.assert_allclose(np.asarray(res.average).ravel(),
                               definition(model, "c", np.asarray(res.grid_values[0])), atol=1e-9)


def test_box_cox_is_read_on_the_positive_numbers_it_takes_and_refuses_others_as_the_model_does():
    """Box-Cox is defined for positive numbers only: its splits are read on them (exact), and a grid point the
    model refuses is refused before any work, in the model's words."""
    for standardize in (True, False):
        model = make_pipeline(make_column_transformer((PowerTransformer(method="box-cox", standardize=standardize),
                                                       ["b"]), remainder="drop"),
                              DecisionTreeRegressor(max_depth=4, random_state=0)).fit(X, Y)
        check(model, "b", grid_resolution=15)
        check(model, "b", grid="thresholds")
        with pytest.raises(Exception, match="(?i)positive"):
            model.predict(X.assign(b=-1.0))
        for method in ("auto", "exact", "brute"):  # refused before any work, whatever read the model before
            with pytest.raises(pdpx.PdpxError, match=r"refuses as input: \[-1.0\] \(below every value of 'b' in X; "
                                                     "ValueError: The Box-Cox transformation can only be applied to "
                                                     "strictly positive data"):
                pdpx.partial_dependence(model, X, ["b"], custom_values={"b": [-1.0, 1.0]}, method=method)


def test_union_branches_that_mix_columns_run_brute():
    model = model_with(FeatureUnion([("scaled", StandardScaler()), ("pca", PCA(n_components=2))]))
    res = pdpx.partial_dependence(model, X, ["a"])
    assert res.method == "brute" and any("PCA" in n for n in res.notes), res.notes


def test_a_feature_union_subclass_is_not_followed():
    class MyUnion(FeatureUnion):
        pass

    model = model_with(MyUnion([("scaled", StandardScaler())]))
    res = pdpx.partial_dependence(model, X, ["a"])
    assert res.method == "brute" and any("subclass of FeatureUnion" in n for n in res.notes), res.notes


def test_a_union_as_a_pipeline_step_of_its_own():
    model = make_pipeline(make_column_transformer((OneHotEncoder(sparse_output=False), ["city"]),
                                                  remainder="passthrough"),
                          FeatureUnion([("scaled", StandardScaler()), ("q", QuantileTransformer(n_quantiles=30))]),
                          HistGradientBoostingRegressor(max_iter=15, random_state=0)).fit(X, Y)
    check(model, "a", grid_resolution=10)
