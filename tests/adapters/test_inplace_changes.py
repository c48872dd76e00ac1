"""A model changed in place is read again (issue 40, point 3).

pdpx keeps what it reads of a model (its trees, pattern counts, ...) with the model
object, keyed on a fingerprint of what the predictions depend on. Each test computes
partial dependence, changes the model in place with the library's own mutators (a
model loaded into the same object, a leaf or threshold edited, a warm-start refit, a
pipeline step replaced), computes again with ``method="exact"`` and ``"auto"``, and
compares with the definition computed by hand: set the column (keeping its dtype),
call the model's own predict, average. Each test also checks that the change moved
the curve, so that an answer kept from before the change would fail.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from stacked import predict_copies

import pdpx

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

COLS = ["a", "b", "c", "d"]


def _data(n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=COLS)
    y1 = 2 * X["a"] + np.sin(3 * X["b"]) + X["c"] * X["d"]
    y2 = -3 * X["a"] + X["b"] ** 2 - X["d"]
    return X, y1.to_numpy(), y2.to_numpy()


def by_hand(predict, X: pd.DataFrame, column: str, grid) -> np.ndarray:
    """The definition: set ``column`` to each grid value (its dtype kept), predict, average over the rows."""
    copies = []
    for v in grid:
        Z = X.copy()
        Z[column] = np.full(len(Z), v, dtype=X[column].dtype)
        copies.append(Z)
    out = [np.asarray(p, dtype=np.float64).reshape(len(X), -1).mean(axis=0) for p in predict_copies(predict, copies)]
    return np.array(out).T  # (outputs, grid)


def pd_checked(model, X, column, method, **options):
    """pdpx's partial dependence of ``column``; the trees must answer (no fallback to the model's predict)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = pdpx.partial_dependence(model, X, [column], method=method, grid_resolution=9, **options)
    mismatch = [str(w.message) for w in seen if "disagreed" in str(w.message) or "Mismatch" in w.category.__name__]
    assert not mismatch, mismatch
    assert res.method == "exact", (method, res.method)
    return res


def assert_follows(model, X, predict, change, column="a", **options):
    """PD before ``change()`` equals the definition; after it, ``exact`` and ``auto`` equal the new definition,
    which differs from the old one."""
    before = pd_checked(model, X, column, "exact", **options)
    grid = before.grid_values[0]
    np.testing.assert_allclose(before.average, by_hand(predict, X, column, grid), rtol=1e-6, atol=1e-6)
    change()
    truth = by_hand(predict, X, column, grid)
    assert not np.allclose(truth, before.average, rtol=1e-3, atol=1e-3), "the change did not move the curve"
    for method in ("exact", "auto"):
        after = pd_checked(model, X, column, method, **options)
        np.testing.assert_array_equal(after.grid_values[0], grid)
        np.testing.assert_allclose(after.average, truth, rtol=1e-6, atol=1e-6, err_msg=method)


# ----------------------------------------------------------------- XGBoost
def test_xgbregressor_load_model_into_the_same_object(tmp_path):
    X, y1, y2 = _data()
    model = xgb.XGBRegressor(n_estimators=20, max_depth=3, n_jobs=1).fit(X, y1)
    other = xgb.XGBRegressor(n_estimators=20, max_depth=3, n_jobs=1).fit(X, y2)  # same rounds: only contents differ
    path = str(tmp_path / "other.ubj")
    other.save_model(path)
    assert_follows(model, X, model.predict, lambda: model.load_model(path))


def test_xgboost_booster_load_model(tmp_path):
    X, y1, y2 = _data()
    booster = xgb.train({"max_depth": 3, "nthread": 1}, xgb.DMatrix(X, y1), 15)
    other = xgb.train({"max_depth": 4, "nthread": 1, "eta": 0.5}, xgb.DMatrix(X, y2), 15)
    path = str(tmp_path / "other.json")
    other.save_model(path)
    predict = lambda Z: booster.predict(xgb.DMatrix(Z))  # noqa: E731
    assert_follows(booster, X, predict, lambda: booster.load_model(path))


def test_xgboost_booster_load_model_from_bytes_changes_the_objective():
    X, y1, _ = _data()
    booster = xgb.train({"max_depth": 3, "nthread": 1}, xgb.DMatrix(X, y1), 10)
    # another link (exp) for the same response: trees, base score and objective change, the rounds do not
    other = xgb.train({"max_depth": 3, "nthread": 1, "objective": "count:poisson"}, xgb.DMatrix(X, np.exp(y1 / 3)), 10)
    predict = lambda Z: booster.predict(xgb.DMatrix(Z))  # noqa: E731
    assert_follows(booster, X, predict, lambda: booster.load_model(bytearray(other.save_raw("ubj"))))


# ---------------------------------------------------------------- LightGBM
def test_lightgbm_model_from_string_into_the_same_booster():
    X, y1, y2 = _data()
    booster = lgb.train({"verbose": -1, "num_threads": 1}, lgb.Dataset(X, y1), 15)
    other = lgb.train({"verbose": -1, "num_threads": 1, "learning_rate": 0.3}, lgb.Dataset(X, y2), 15)
    text = other.model_to_string()
    assert_follows(booster, X, booster.predict, lambda: booster.model_from_string(text))


def test_lightgbm_set_leaf_output():
    X, y1, _ = _data()
    model = lgb.LGBMRegressor(n_estimators=15, num_leaves=8, verbose=-1, n_jobs=1).fit(X, y1)

    def change():
        for t in range(5):
            model.booster_.set_leaf_output(t, 0, model.booster_.get_leaf_output(t, 0) + 2.0)

    assert_follows(model, X, model.predict, change)


# ------------------------------------------------------------ scikit-learn
@pytest.mark.parametrize("edit", ["value", "threshold"])
def test_decision_tree_edited_in_place(edit):
    X, y1, _ = _data()
    model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y1)

    def change():
        if edit == "value":
            model.tree_.value[...] *= -2.0
        else:
            f = model.tree_.feature[0]
            model.tree_.threshold[0] = float(X.iloc[:, f].quantile(0.9))

    assert_follows(model, X, model.predict, change, column=COLS[model.tree_.feature[0]])


def test_decision_tree_classifier_value_edited():
    X, y1, _ = _data()
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y1 > 0)

    def change():
        model.tree_.value[...] = model.tree_.value[..., ::-1].copy()  # swap the classes' fractions

    assert_follows(model, X, lambda Z: model.predict_proba(Z)[:, 1], change)  # pdpx: the positive class


def test_random_forest_value_and_threshold_edited():
    X, y1, _ = _data()
    model = RandomForestRegressor(n_estimators=8, max_depth=5, random_state=0, n_jobs=1).fit(X, y1)

    def change():
        for e in model.estimators_[:4]:
            e.tree_.value[...] += 1.5
        t = model.estimators_[5].tree_
        t.threshold[0] = t.threshold[0] + 1.0

    assert_follows(model, X, model.predict, change)


def test_random_forest_classifier_value_edited():
    X, y1, _ = _data()
    model = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0, n_jobs=1).fit(X, y1 > 0)

    def change():
        for e in model.estimators_:
            e.tree_.value[...] = e.tree_.value[..., ::-1].copy()

    assert_follows(model, X, lambda Z: model.predict_proba(Z)[:, 1], change)


def test_random_forest_warm_start_refit():
    X, y1, y2 = _data()
    model = RandomForestRegressor(n_estimators=4, max_depth=4, warm_start=True, random_state=0, n_jobs=1)
    model.fit(X, y1)

    def change():
        model.set_params(n_estimators=12)
        model.fit(X, y2)  # eight more trees, fitted on y2

    assert_follows(model, X, model.predict, change)


def test_gradient_boosting_warm_start_and_edit():
    X, y1, y2 = _data()
    model = GradientBoostingRegressor(n_estimators=10, max_depth=3, warm_start=True, random_state=0).fit(X, y1)

    def change():
        model.set_params(n_estimators=20)
        model.fit(X, y2)

    assert_follows(model, X, model.predict, change)
    assert_follows(model, X, model.predict, lambda: model.set_params(learning_rate=0.5))


def test_hist_gradient_boosting_refit_and_edit():
    X, y1, y2 = _data()
    model = HistGradientBoostingRegressor(max_iter=15, early_stopping=False, random_state=0).fit(X, y1)
    assert_follows(model, X, model.predict, lambda: model.fit(X, y2))

    def change():
        for it in model._predictors[:5]:
            nodes = it[0].nodes
            nodes["value"][nodes["is_leaf"].astype(bool)] += 1.0

    assert_follows(model, X, model.predict, change)


# --------------------------------------------------------------- pipelines
def test_pipeline_step_replaced_and_edited():
    X, y1, y2 = _data()
    pipe = Pipeline([("scale", StandardScaler()), ("tree", DecisionTreeRegressor(max_depth=4, random_state=0))])
    pipe.fit(X, y1)
    other = Pipeline([("scale", StandardScaler()), ("tree", DecisionTreeRegressor(max_depth=4, random_state=0))])
    other.fit(X, y2)
    assert_follows(pipe, X, pipe.predict, lambda: pipe.set_params(tree=other.named_steps["tree"]))

    def edit_final():
        pipe.named_steps["tree"].tree_.value[...] *= -1.0

    assert_follows(pipe, X, pipe.predict, edit_final)

    def edit_scaler():
        pipe.named_steps["scale"].mean_[:] = pipe.named_steps["scale"].mean_ + 0.7

    assert_follows(pipe, X, pipe.predict, edit_scaler)


# ------------------------------------------------------------ pattern counts
def _many_checked(model, X, method):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        many = pdpx.partial_dependence_many(model, X, COLS, method=method, grid_resolution=7)
    mismatch = [str(w.message) for w in seen if "disagreed" in str(w.message) or "Mismatch" in w.category.__name__]
    assert not mismatch, mismatch
    return many


@pytest.mark.parametrize("library", ["lightgbm", "sklearn"])
def test_pattern_counts_after_a_change(library):
    """``partial_dependence_many`` answers from pattern counts kept with the model; after the model changes in
    place (leaf values only, or a threshold: the routing) every feature's curve is the new model's."""
    X, y1, _ = _data(n=3000)
    if library == "lightgbm":
        model = lgb.LGBMRegressor(n_estimators=30, num_leaves=8, verbose=-1, n_jobs=1).fit(X, y1)

        def change():
            for t in range(10):
                model.booster_.set_leaf_output(t, 1, model.booster_.get_leaf_output(t, 1) - 3.0)
    else:
        model = RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0, n_jobs=1).fit(X, y1)

        def change():
            for e in model.estimators_:
                e.tree_.threshold[0] = e.tree_.threshold[0] + 0.8
                e.tree_.value[...] += 0.5

    first = _many_checked(model, X, "exact")
    assert any("pattern counts" in n for r in first for n in r.notes), [r.notes for r in first]
    for r in first:
        col = r.features[0]
        np.testing.assert_allclose(r.average, by_hand(model.predict, X, col, r.grid_values[0]), rtol=1e-6, atol=1e-6)
    change()
    for method in ("exact", "auto"):
        again = _many_checked(model, X, method)
        assert any("pattern counts" in n for r in again for n in r.notes), [r.notes for r in again]
        moved = False
        for r, old in zip(again, first):
            col = r.features[0]
            truth = by_hand(model.predict, X, col, r.grid_values[0])
            np.testing.assert_allclose(r.average, truth, rtol=1e-6, atol=1e-6, err_msg=f"{method} {col}")
            moved |= not np.allclose(truth, old.average, atol=1e-3)
        assert moved, "the change did not move any curve"


# ------------------------------------------------------------- the trees' check
@pytest.mark.parametrize("library", ["sklearn", "xgboost"])
def test_the_check_of_the_trees_runs_again_after_a_change(monkeypatch, tmp_path, library):
    """The check of exact against the model's predict (pdpx.core.trust) is kept with the trees: asked once for a
    model, and again once the model changed in place."""
    from pdpx.core import trust

    calls = []
    real = trust._check
    monkeypatch.setattr(trust, "_check", lambda *a, **k: calls.append(1) or real(*a, **k))
    X, y1, y2 = _data()
    if library == "sklearn":
        model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y1)

        def change():
            model.tree_.value[...] += 1.0
    else:
        model = xgb.XGBRegressor(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y1)
        path = str(tmp_path / "other.ubj")
        xgb.XGBRegressor(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y2).save_model(path)

        def change():
            model.load_model(path)

    for expected in (1, 1):  # a first call checks, a second one does not
        pd_checked(model, X, "a", "exact")
        assert len(calls) == expected
    change()
    after = pd_checked(model, X, "a", "exact")
    assert len(calls) == 2, "the check was not asked again after the model changed"
    np.testing.assert_allclose(after.average, by_hand(model.predict, X, "a", after.grid_values[0]), rtol=1e-6,
                               atol=1e-6)


# -------------------------------------------------------------- R, through rpy2
def test_rpy2_random_forest_replaced_in_place():
    """An R randomForest held through rpy2 whose forest is replaced in the same R object."""
    try:
        import rpy2.robjects as ro
        from rpy2.robjects import pandas2ri
        from rpy2.robjects.conversion import localconverter
        from rpy2.robjects.packages import importr

        importr("randomForest")
    except Exception as exc:  # noqa: BLE001 - ImportError, R or the package missing
        pytest.skip(f"R with randomForest is not usable through rpy2 ({type(exc).__name__}: {exc}); make setup")
    ro.r("""set.seed(3); n <- 300
    d_ip <- data.frame(a = runif(n), b = rnorm(n), c = factor(sample(letters[1:4], n, TRUE)))
    d_ip$y <- 2 * d_ip$a + d_ip$b * (d_ip$c == "a"); d_ip$y2 <- -3 * d_ip$a + d_ip$b
    rf_ip <- randomForest(y ~ a + b + c, data = d_ip, ntree = 15)
    rf_ip2 <- randomForest(y2 ~ a + b + c, data = d_ip, ntree = 15)""")
    model, other = ro.r("rf_ip"), ro.r("rf_ip2")
    with localconverter(ro.default_converter + pandas2ri.converter) as cv:
        X = cv.rpy2py(ro.r("d_ip[, c('a', 'b', 'c')]")).reset_index(drop=True)

    def predict(Z):
        with localconverter(ro.default_converter + pandas2ri.converter) as cv:
            frame = cv.py2rpy(Z)
        return np.asarray(ro.r("predict")(model, frame), dtype=np.float64)

    def change():
        model.rx2["forest"] = other.rx2("forest")

    assert_follows(model, X, predict, change)
