"""pdpx.sklearn.PartialDependenceDisplay on the models pdpx reads beyond scikit-learn's own.

XGBoost and LightGBM (their scikit-learn models and their native Boosters), CatBoost
(through the pdpx-catboost plugin), Pipelines and R models through rpy2. Where
scikit-learn's display takes the model, both displays are compared; where it does not
(a Booster, an R model), the drawn curves are checked against the definition: set the
column, call the model's own predict, average.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn", reason="scikit-learn is not installed")
matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is not installed (the display draws with it)")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.ensemble import GradientBoostingRegressor  # noqa: E402
from sklearn.inspection import PartialDependenceDisplay as SkDisplay  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from pdpx.sklearn import PartialDependenceDisplay  # noqa: E402

N = 140
RNG = np.random.default_rng(11)
X = pd.DataFrame(RNG.normal(size=(N, 4)), columns=["a", "b", "c", "d"])
Y = X["a"] ** 2 + np.sin(2 * X["b"]) + X["c"] * X["d"] + RNG.normal(scale=0.1, size=N)
Y3 = pd.cut(Y, 3, labels=False).astype(int).to_numpy()
FEATURES = ["a", ("b", "c")]


@pytest.fixture(autouse=True)
def _close_figures():
    plt.close("all")
    yield
    plt.close("all")


def draw(cls, model, X_, features, **kw):
    plt.figure()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls.from_estimator(model, X_, features, grid_resolution=kw.pop("grid_resolution", 7), **kw)


def by_hand(predict, X_, names, grids) -> np.ndarray:
    """The partial dependence from its definition: (n_outputs, *grid shape)."""
    cells = np.array(np.meshgrid(*grids, indexing="ij"), dtype=object).reshape(len(names), -1).T

    def column(name, value):  # the value in every row, a category of the column's own categories if it has them
        if isinstance(X_[name].dtype, pd.CategoricalDtype):
            return pd.Categorical([value] * len(X_), categories=X_[name].cat.categories)
        return np.full(len(X_), value, dtype=float)

    means = [np.asarray(predict(X_.assign(**{n: column(n, v) for n, v in zip(names, cell)})), dtype=float)
             .reshape(len(X_), -1).mean(axis=0) for cell in cells]
    return np.stack(means, axis=-1).reshape(-1, *[len(g) for g in grids])


def assert_definition(disp, predict, X_, names_of_sets, output=0):
    for i, (names, result) in enumerate(zip(names_of_sets, disp.pd_results)):
        expected = by_hand(predict, X_, names, result["grid_values"])[output]
        np.testing.assert_allclose(result["average"][disp.target_idx], expected, rtol=1e-6, atol=1e-9)
        if disp.lines_.ndim == disp.axes_.ndim and disp.lines_.ravel()[i] is not None:  # a PD line (not bars)
            np.testing.assert_allclose(disp.lines_.ravel()[i].get_ydata(), expected, rtol=1e-6, atol=1e-9)


def assert_same_as_scikit_learn(model, X_, features, **kw):
    ours = draw(PartialDependenceDisplay, model, X_, features, **kw)
    theirs = draw(SkDisplay, model, X_, features, method="brute", **kw)
    assert ours.target_idx == theirs.target_idx
    for mine, ref in zip(ours.pd_results, theirs.pd_results):
        assert list(mine) == list(ref)
        for key in ("average", "individual"):
            if key in ref:
                np.testing.assert_allclose(mine[key], ref[key], rtol=1e-6, atol=1e-7)
    for mine, ref in zip(ours.lines_.ravel(), theirs.lines_.ravel()):
        assert (mine is None) == (ref is None)
        if ref is not None:
            np.testing.assert_allclose(mine.get_xydata(), ref.get_xydata(), rtol=1e-6, atol=1e-7)
    for mine, ref in zip(ours.contours_.ravel(), theirs.contours_.ravel()):
        if ref is not None:
            np.testing.assert_allclose(mine.levels, ref.levels, rtol=1e-6, atol=1e-7)
    return ours


def test_pipeline_with_trees_at_the_end():
    pipe = make_pipeline(StandardScaler(), GradientBoostingRegressor(n_estimators=15, random_state=0)).fit(X, Y)
    assert_same_as_scikit_learn(pipe, X, FEATURES + ["d"], kind=["both", "average", "individual"], random_state=0)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_boosters_through_their_scikit_learn_models_and_natively(library):
    lib = pytest.importorskip(library, reason=f"{library} is not installed")
    if library == "xgboost":
        reg = lib.XGBRegressor(n_estimators=12, max_depth=3).fit(X, Y)
        clf = lib.XGBClassifier(n_estimators=8, max_depth=2).fit(X, Y3)
        native, native_clf = reg.get_booster(), clf.get_booster()
        predict = lambda Z: native.predict(lib.DMatrix(Z))  # noqa: E731
        predict_clf = lambda Z: native_clf.predict(lib.DMatrix(Z))  # noqa: E731
    else:
        reg = lib.LGBMRegressor(n_estimators=12, num_leaves=7, verbose=-1).fit(X, Y)
        clf = lib.LGBMClassifier(n_estimators=8, num_leaves=5, verbose=-1).fit(X, Y3)
        native, native_clf = reg.booster_, clf.booster_
        predict, predict_clf = native.predict, native_clf.predict
    assert_same_as_scikit_learn(reg, X, FEATURES, kind="average")
    assert_same_as_scikit_learn(reg, X, ["a", "b"], kind="both", random_state=0, subsample=30)
    assert_same_as_scikit_learn(clf, X, FEATURES, target=2)
    # scikit-learn refuses a native Booster; pdpx draws it, from the Booster's own predictions
    with pytest.raises((TypeError, ValueError)):
        draw(SkDisplay, native, X, FEATURES)
    assert_definition(draw(PartialDependenceDisplay, native, X, FEATURES), predict, X, [["a"], ["b", "c"]])
    disp = draw(PartialDependenceDisplay, native_clf, X, FEATURES, target=1)
    assert disp.target_idx == 1
    assert_definition(disp, predict_clf, X, [["a"], ["b", "c"]], output=1)


def test_catboost_through_its_plugin():
    catboost = pytest.importorskip("catboost", reason="catboost is not installed")
    pytest.importorskip("pdpx_catboost", reason="the pdpx-catboost plugin (contrib/pdpx-catboost) is not installed")
    kw = dict(iterations=15, depth=3, verbose=0, random_seed=0, allow_writing_files=False, thread_count=1)
    reg = catboost.CatBoostRegressor(**kw).fit(X, Y)
    disp = draw(PartialDependenceDisplay, reg, X, FEATURES + ["d"], kind=["both", "average", "average"],
                random_state=0)
    assert_definition(disp, reg.predict, X, [["a"], ["b", "c"], ["d"]])
    clf = catboost.CatBoostClassifier(**kw).fit(X, Y3)
    disp = draw(PartialDependenceDisplay, clf, X, FEATURES, target=2)
    assert disp.target_idx == 2
    assert_definition(disp, clf.predict_proba, X, [["a"], ["b", "c"]], output=2)


# ------------------------------------------------------------------ R models through rpy2
R_CODE = r"""
suppressMessages(library(randomForest))
set.seed(5)
n <- 150
disp_d <- data.frame(x1 = runif(n), x2 = rnorm(n), f = factor(sample(c("u", "v", "w"), n, TRUE)))
disp_d$y <- 2 * disp_d$x1 + disp_d$x2 * (disp_d$f == "u") + rnorm(n, sd = 0.2)
disp_reg <- randomForest(y ~ x1 + x2 + f, data = disp_d, ntree = 10)
disp_iris <- randomForest(Species ~ ., data = iris, ntree = 10)
"""


@pytest.fixture(scope="module")
def R():
    try:
        import rpy2.robjects as ro
        from rpy2.robjects.packages import importr
    except Exception as exc:  # noqa: BLE001 - ImportError, or R not found by rpy2
        pytest.skip(f"rpy2 is not usable ({type(exc).__name__}: {exc}); install R and rpy2==3.5.17 (make setup)")
    try:
        importr("randomForest")
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"the R package randomForest is missing ({exc}); apt-get install r-cran-randomforest")
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    ro.r(R_CODE)

    def to_pandas(name):
        with localconverter(ro.default_converter + pandas2ri.converter) as cv:
            return cv.rpy2py(ro.r(name)).reset_index(drop=True)

    def r_predict(model, frame, prob=False):
        with localconverter(ro.default_converter + pandas2ri.converter) as cv:
            rframe = cv.py2rpy(frame)
        out = ro.r["predict"](model, newdata=rframe, type="prob" if prob else "response")
        return np.asarray(out, dtype=float).reshape(len(frame), -1, order="F")

    return ro, to_pandas, r_predict


def test_r_randomforest_regression(R):
    ro, to_pandas, r_predict = R
    model, data = ro.r("disp_reg"), to_pandas("disp_d")[["x1", "x2", "f"]]
    disp = draw(PartialDependenceDisplay, model, data, ["x1", ("x1", "x2"), "f"], categorical_features=["f"])
    assert disp.bars_[0, 2] is not None and disp.contours_[0, 1] is not None
    assert_definition(disp, lambda Z: r_predict(model, Z), data, [["x1"], ["x1", "x2"], ["f"]])
    heights = [p.get_height() for p in disp.axes_[0, 2].patches]
    np.testing.assert_allclose(heights, disp.pd_results[2]["average"][0])


def test_r_randomforest_classes_by_name(R):
    ro, to_pandas, r_predict = R
    model = ro.r("disp_iris")
    iris = to_pandas("iris").drop(columns="Species")
    with pytest.raises(ValueError, match="target must be specified for multi-class"):
        draw(PartialDependenceDisplay, model, iris, ["Petal.Length"])
    with pytest.raises(ValueError, match="target not in est.classes_, got tulip"):
        draw(PartialDependenceDisplay, model, iris, ["Petal.Length"], target="tulip")
    disp = draw(PartialDependenceDisplay, model, iris, ["Petal.Length", ("Petal.Width", "Sepal.Length")],
                target="virginica")
    assert disp.target_idx == 2
    assert_definition(disp, lambda Z: r_predict(model, Z, prob=True), iris,
                      [["Petal.Length"], ["Petal.Width", "Sepal.Length"]], output=2)
