"""R randomForest: the forest -> IR translation, the plain-data and rpy2 adapters.

The first part needs neither R nor rpy2 (hand-made forests). The second part
fits small forests in R through rpy2 and checks, against R's own ``predict``:
the IR's predictions (regression values, ``type = "prob"``) on training and
random data, ``exact`` == ``brute`` for average and ICE, 1-way and 2-way, numeric
and factor features, and ``recursion`` on routed training counts. Those tests
skip, with the reason, when R, rpy2 or randomForest is missing (never in CI).
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from rforests import as_layouts, hand_prediction, hand_X, padded_forest  # noqa: E402
from treetools import friedman_reference  # noqa: E402

import pdpx
from pdpx.adapters import randomforest_trees as rfmod
from pdpx.adapters import rfunction
from pdpx.adapters.randomforest import RandomForestAdapter
from pdpx.adapters.randomforest_trees import forest_ensemble, read_forest, route_counts
from pdpx.adapters.rfunction import RFunctionAdapter, decode_prediction
from pdpx.core.ir import MalformedTreeError


@pytest.mark.parametrize("layout", ["padded", "flat", "compact"])
def test_forest_layouts_give_the_hand_computed_prediction(layout):
    forest = as_layouts(padded_forest())[layout]
    fd = read_forest(forest)
    assert fd.feature_names == ["x", "f"]
    ens = forest_ensemble(fd)
    X = hand_X()
    enc = rfmod.ForestEncoder(fd).encode(X)
    got = ens.predict(enc)[:, 0]
    want = [hand_prediction(x, f) for x, f in zip(X["x"], X["f"])]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert ens.aggregation == "mean" and ens.comparison == "<=" and not ens.float32_input


def test_treemap_classification_is_vote_fractions():
    forest = padded_forest()
    ld, rd = forest.pop("leftDaughter"), forest.pop("rightDaughter")
    forest["treemap"] = np.stack([ld, rd], axis=1)  # nrnodes x 2 x ntree
    # leaves predict classes: tree 1 -> (1, 2), tree 2 -> (2, 3), tree 3 -> (3, 1, 2)
    pred = np.zeros_like(forest["nodepred"])
    pred[1:3, 0] = [1, 2]
    pred[1:3, 1] = [2, 3]
    pred[2:5, 2] = [3, 1, 2]
    forest["nodepred"] = pred
    forest["nodestatus"] = np.where(forest["nodestatus"] == -3, 1, forest["nodestatus"])
    fd = read_forest(forest, classes=["u", "v", "w"])
    ens = forest_ensemble(fd)
    assert ens.n_margins == 3 and np.all(ens.tree_group == -1)
    X = hand_X()
    P = ens.predict(rfmod.ForestEncoder(fd).encode(X))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.all(np.isin(np.round(P * 3), [0, 1, 2, 3]))
    # row 0: x=0 -> tree1 class 1; f=a -> tree2 class 2; x<=.25 and f!=b -> tree3 node 5, class 2
    np.testing.assert_allclose(P[0], [1 / 3, 2 / 3, 0])
    # row 4: x=.75 -> tree1 class 2; f=a -> tree2 class 2; x>.25 -> tree3 class 3
    np.testing.assert_allclose(P[4], [0, 2 / 3, 1 / 3])


def test_bias_correction_coefficients():
    fd = read_forest(padded_forest(), coefs=[-0.5, 1.25])
    ens = forest_ensemble(fd)
    X = hand_X()
    got = ens.predict(rfmod.ForestEncoder(fd).encode(X))[:, 0]
    want = [-0.5 + 1.25 * hand_prediction(x, f) for x, f in zip(X["x"], X["f"])]
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_factor_masks_beyond_32_levels():
    levels = [f"L{i:02d}" for i in range(1, 41)]
    forest = {
        "ndbigtree": [3], "nodestatus": [-3, -1, -1], "leftDaughter": [2, 0, 0], "rightDaughter": [3, 0, 0],
        "bestvar": [1, 0, 0], "xbestsplit": [float(2**35 + 2**2 + 1), 0, 0], "nodepred": [0, 1.0, 2.0],
        "ncat": [40], "xlevels": {"g": levels},
    }
    fd = read_forest(forest)
    ens = forest_ensemble(fd)
    assert ens.cat_nwords.max() == 2
    X = pd.DataFrame({"g": pd.Categorical(["L01", "L02", "L03", "L36", "L37", "L40"], categories=levels)})
    got = ens.predict(rfmod.ForestEncoder(fd).encode(X))[:, 0]
    np.testing.assert_array_equal(got, [1.0, 2.0, 1.0, 1.0, 2.0, 2.0])  # bits 0, 2 and 35 go left


def test_malformed_forests_fail_clearly():
    forest = padded_forest()
    forest["nodepred"] = forest["nodepred"].copy()
    with pytest.raises(MalformedTreeError, match="class index"):
        read_forest(forest, classes=["a"])  # leaf predictions 1, 3, ... are not all class 1
    bad = padded_forest()
    bad["leftDaughter"][0, 0] = 7  # child outside its tree
    with pytest.raises(MalformedTreeError, match="tree 0"):
        forest_ensemble(read_forest(bad))
    missing = padded_forest()
    del missing["xbestsplit"]
    with pytest.raises(pdpx.PdpxError, match="keep.forest"):
        read_forest(missing)


def test_route_counts_are_consistent():
    fd = read_forest(padded_forest())
    ens = forest_ensemble(fd)
    X = hand_X()
    enc = rfmod.ForestEncoder(fd).encode(X)
    c = route_counts(ens, enc)
    internal = ens.left >= 0
    np.testing.assert_array_equal(c[ens.tree_start[:-1]], len(X))
    np.testing.assert_array_equal(c[internal], c[ens.left[internal]] + c[ens.right[internal]])
    w = np.arange(1.0, len(X) + 1)
    cw = route_counts(ens, enc, w)
    np.testing.assert_allclose(cw[ens.tree_start[:-1]], w.sum())


def test_encoder_rejects_what_r_would_turn_into_na():
    fd = read_forest(padded_forest())
    enc = rfmod.ForestEncoder(fd)
    X = hand_X()
    X2 = X.assign(f=X["f"].astype(str))
    np.testing.assert_array_equal(enc.encode(X2), enc.encode(X))  # strings are matched by label
    X3 = X.assign(f=pd.Categorical(X["f"].astype(str), categories=["c", "b", "a"]))
    np.testing.assert_array_equal(enc.encode(X3), enc.encode(X))  # any category order
    with pytest.raises(pdpx.PdpxError, match="not levels of the factor"):
        enc.encode(X.assign(f=["a", "b", "zz", "a", "a", "a", "a"]))
    with pytest.raises(pdpx.PdpxError, match="holds numbers"):
        enc.encode(X.assign(f=X["f"].cat.codes))
    with pytest.raises(pdpx.PdpxError, match="missing value"):
        enc.encode(X.assign(x=[np.nan] + [0.1] * 6))


def _python_adapter(forest=None, classes=None):
    """A randomForest adapter whose predict is the hand-computed model (stands in for R)."""
    forest = forest or padded_forest()

    def predict(frame):
        return np.array([hand_prediction(x, f) for x, f in zip(frame["x"], frame["f"])])

    return RandomForestAdapter(forest, predict)


def test_python_stand_in_exact_equals_brute():
    ad = _python_adapter()
    X = hand_X()
    for feats in (["x"], ["f"], ["x", "f"]):
        b = pdpx.partial_dependence(ad, X, feats, method="brute", kind="both")
        e = pdpx.partial_dependence(ad, X, feats, kind="both")
        assert e.method == "exact"
        np.testing.assert_allclose(e.average, b.average, atol=1e-12)
        np.testing.assert_allclose(e.individual, b.individual, atol=1e-12)


def test_adapters_ask_for_a_single_thread():
    assert RandomForestAdapter.thread_safe is False
    assert RFunctionAdapter.thread_safe is False
    assert isinstance(rfunction.R_LOCK, type(threading.RLock()))


def test_decode_prediction_forms():
    n = 3
    col = np.array([1.0, 2.0, 3.0])
    mat = np.array([[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
    np.testing.assert_array_equal(decode_prediction(bytearray(col.astype("<f8").tobytes()), n), col[:, None])
    np.testing.assert_array_equal(decode_prediction(bytearray(mat.ravel(order="F").astype("<f8").tobytes()), n), mat)
    np.testing.assert_array_equal(decode_prediction([1.0, 2.0, 3.0], n), col[:, None])
    np.testing.assert_array_equal(decode_prediction({"a": [1.0, 2.0, 3.0], "b": [4.0, 5.0, 6.0]}, n), mat)
    with pytest.raises(pdpx.PdpxError):
        decode_prediction(bytearray(np.zeros(4).tobytes()), n)


# ---------------------------------------------------------------------------
# R through rpy2
# ---------------------------------------------------------------------------
def _r_skip_reason() -> str | None:
    try:
        import rpy2.robjects as ro  # noqa: F401
        from rpy2.robjects.packages import importr
    except Exception as exc:  # noqa: BLE001 - ImportError, or R not found by rpy2
        return f"rpy2 is not usable ({type(exc).__name__}: {exc}); install R and rpy2==3.5.17 (make setup)"
    try:
        importr("randomForest")
    except Exception as exc:  # noqa: BLE001
        return f"the R package randomForest is missing ({exc}); apt-get install r-cran-randomforest"
    return None


R_CODE = r"""
suppressMessages(library(randomForest))
set.seed(11)
n <- 240
d <- data.frame(
  x1 = round(runif(n), 3),
  x2 = rnorm(n),
  f = factor(sample(letters[1:5], n, TRUE)),
  g = factor(sample(sprintf("L%02d", 1:40), n, TRUE)),
  o = factor(sample(c("lo", "mid", "hi"), n, TRUE), levels = c("lo", "mid", "hi"), ordered = TRUE),
  b = sample(c(TRUE, FALSE), n, TRUE),
  i = sample(1:10, n, TRUE)
)
d$y <- 2 * d$x1 + d$x2 * (d$f %in% c("a", "c")) + (as.integer(d$g) %% 7) * 0.3 +
  as.integer(d$o) * 0.2 + d$b * 0.5 + d$i * 0.05 + rnorm(n, sd = 0.2)
d$k3 <- cut(d$y, quantile(d$y, c(0, 1/3, 2/3, 1)), labels = c("low", "mid", "high"), include.lowest = TRUE)
d$k2 <- factor(ifelse(d$y > median(d$y), "yes", "no"))
preds <- c("x1", "x2", "f", "g", "o", "b", "i")
reg <- randomForest(y ~ x1 + x2 + f + g + o + b + i, data = d, ntree = 12)
cls3 <- randomForest(k3 ~ x1 + x2 + f + g + o + b + i, data = d, ntree = 12)
cls2 <- randomForest(k2 ~ x1 + x2 + f + g + o + b + i, data = d, ntree = 12)
reg_xy <- randomForest(x = d[, preds], y = d$y, ntree = 12)
reg_mat <- randomForest(x = as.matrix(d[, c("x1", "x2", "i")]), y = d$y, ntree = 12)
reg_bias <- randomForest(y ~ x1 + x2 + f, data = d, ntree = 12, corr.bias = TRUE)
reg_minus <- randomForest(y ~ . - x2, data = d[, c("x1", "x2", "f", "y")], ntree = 8)
iris_rf <- randomForest(Species ~ ., data = iris, ntree = 12)
no_forest <- randomForest(y ~ x1 + x2, data = d, ntree = 5, keep.forest = FALSE)
unsup <- randomForest(d[, c("x1", "x2")], ntree = 5)
lm_fit <- lm(y ~ x1, data = d)
"""


@pytest.fixture(scope="module")
def R():
    reason = _r_skip_reason()
    if reason:
        pytest.skip(reason)
    import rpy2.robjects as ro
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    ro.r(R_CODE)
    with localconverter(ro.default_converter + pandas2ri.converter) as cv:
        d = cv.rpy2py(ro.r("d"))
        iris = cv.rpy2py(ro.r("iris"))
    d = d.reset_index(drop=True)
    iris = iris.reset_index(drop=True)

    class Env:
        r = ro.r
        data = d
        iris_data = iris
        preds = ["x1", "x2", "f", "g", "o", "b", "i"]

        def model(self, name):
            return ro.r(name)

        def r_predict(self, name, X, prob=False):
            """R's predict on X (built in R from the same values), as numpy."""
            from pdpx.adapters.rpy2 import RandomForestRpy2Adapter

            ad = RandomForestRpy2Adapter(ro.r(name))
            return ad.predict(ad.validate_columns(X), "predict_proba" if prob else "predict")

    return Env()


def _random_rows(R, n=200, seed=0):
    """Random data in the predictors' ranges, with ties at the forest's own x1 thresholds."""
    rng = np.random.default_rng(seed)
    d = R.data
    thr = np.asarray(R.r("unique(reg$forest$xbestsplit[reg$forest$bestvar == 1 & reg$forest$nodestatus == -3])"))
    x1 = rng.uniform(-0.2, 1.2, n)
    x1[: n // 4] = rng.choice(thr, n // 4)
    return pd.DataFrame({
        "x1": x1,
        "x2": rng.normal(size=n) * 2,
        "f": pd.Categorical(rng.choice(list("abcde"), n), categories=list(d["f"].cat.categories)),
        "g": pd.Categorical(rng.choice(list(d["g"].cat.categories), n), categories=list(d["g"].cat.categories)),
        "o": pd.Categorical(rng.choice(["lo", "mid", "hi"], n), categories=["lo", "mid", "hi"], ordered=True),
        "b": rng.random(n) < 0.5,
        "i": rng.integers(-2, 14, n).astype(np.int32),
    })


def _ir_predict(adapter, X, response):
    tm = adapter.tree_model(response)
    return tm.ensemble.predict(tm.encode(adapter.validate_columns(X)))


@pytest.mark.parametrize("name,prob", [("reg", False), ("cls3", True), ("cls2", True), ("reg_xy", False),
                                       ("reg_bias", False)])
def test_ir_reproduces_r_predict(R, name, prob):
    from pdpx.adapters.rpy2 import RandomForestRpy2Adapter

    ad = RandomForestRpy2Adapter(R.model(name))
    cols = ad.feature_names()
    response = "predict_proba" if prob else "predict"
    assert ad.responses() == [response]
    for X in (R.data[cols], _random_rows(R)[cols]):
        r_pred = ad.predict(ad.validate_columns(X), response)
        np.testing.assert_allclose(_ir_predict(ad, X, response), r_pred, rtol=0, atol=1e-12)


def test_ir_reproduces_r_predict_matrix_and_iris(R):
    from pdpx.adapters.rpy2 import RandomForestRpy2Adapter

    ad = RandomForestRpy2Adapter(R.model("reg_mat"))
    X = R.data[["x1", "x2", "i"]]
    np.testing.assert_allclose(_ir_predict(ad, X, "predict"), ad.predict(X, "predict"), atol=1e-12)
    ad = RandomForestRpy2Adapter(R.model("iris_rf"))
    X = R.iris_data.drop(columns="Species")
    assert ad.classes() == ["setosa", "versicolor", "virginica"]
    P = ad.predict(X, "predict_proba")
    want = np.asarray(R.r("predict(iris_rf, iris, type = 'prob')"))
    np.testing.assert_allclose(P, want, atol=0)
    np.testing.assert_allclose(_ir_predict(ad, X, "predict_proba"), want, atol=1e-12)


CASES = [["x1"], ["f"], ["g"], ["o"], ["b"], ["i"], ["x1", "f"], ["g", "x2"]]


@pytest.mark.parametrize("name", ["reg", "cls3", "cls2"])
@pytest.mark.parametrize("features", CASES, ids=["+".join(c) for c in CASES])
def test_exact_equals_r_brute(R, name, features):
    model = R.model(name)
    X = R.data[R.preds]
    res = 6 if len(features) == 2 else 10
    b = pdpx.partial_dependence(model, X, features, method="brute", kind="both", grid_resolution=res)
    e = pdpx.partial_dependence(model, X, features, kind="both", grid_resolution=res)
    assert e.method == "exact" and b.method == "brute"
    np.testing.assert_allclose(e.average, b.average, rtol=0, atol=1e-12)
    np.testing.assert_allclose(e.individual, b.individual, rtol=0, atol=1e-12)
    assert e.outputs == b.outputs


def test_exact_equals_brute_weighted_and_centered(R):
    model = R.model("cls3")
    X = R.data[R.preds]
    w = np.random.default_rng(0).uniform(0, 2, len(X))
    kw = dict(grid_resolution=7, sample_weight=w, centered=True, target=["low", "high"])
    b = pdpx.partial_dependence(model, X, ["x2", "f"], method="brute", **kw)
    e = pdpx.partial_dependence(model, X, ["x2", "f"], method="exact", **kw)
    assert e.outputs == ["low", "high"]
    np.testing.assert_allclose(e.average, b.average, atol=1e-12)


def test_other_data_than_the_training_rows(R):
    model = R.model("reg_xy")
    X = _random_rows(R, n=60, seed=3)
    b = pdpx.partial_dependence(model, X, ["x1", "g"], method="brute", kind="both", grid_resolution=5)
    e = pdpx.partial_dependence(model, X, ["x1", "g"], kind="both", grid_resolution=5)
    np.testing.assert_allclose(e.individual, b.individual, atol=1e-12)


@pytest.mark.parametrize("name,feature", [("reg", "x1"), ("reg", "f"), ("cls3", "g")])
def test_recursion_on_routed_training_counts(R, name, feature):
    from pdpx.adapters.rpy2 import RandomForestRpy2Adapter

    model = R.model(name)
    X = R.data[R.preds]
    with pytest.raises(pdpx.PdpxError, match="node weights"):
        pdpx.partial_dependence(model, X, feature, method="recursion")
    ad = RandomForestRpy2Adapter(model, training_data=X)
    res = pdpx.partial_dependence(ad, X, feature, method="recursion", grid_resolution=8)
    assert res.method == "recursion"
    assert any("routed" in n for n in res.notes)
    tm = ad.tree_model(ad.responses()[0])
    j = ad.feature_names().index(feature)
    codes = tm.encode_values(j, res.grid_values[0])
    ens = tm.ensemble
    ref = np.array([friedman_reference(ens, np.asarray(codes)[:, None], [j], margin=k)
                    for k in range(ens.n_margins)])  # (margins, grid)
    np.testing.assert_allclose(res.average, ref[res_outputs(ad, res)], atol=1e-12)
    # auto never picks recursion
    assert pdpx.partial_dependence(ad, X, feature, grid_resolution=4).method == "exact"


def res_outputs(ad, res):
    names = ad.output_names(ad.responses()[0])
    return [names.index(o) for o in res.outputs]


def test_formula_variables_that_are_not_predictors(R):
    """``y ~ . - x2``: R's predict needs x2, no tree splits on it."""
    from pdpx.adapters.rpy2 import RandomForestRpy2Adapter

    model = R.model("reg_minus")
    ad = RandomForestRpy2Adapter(model)
    assert ad.feature_names() == ["x1", "x2", "f"]
    X = R.data[["x1", "x2", "f"]]
    np.testing.assert_allclose(_ir_predict(ad, X, "predict"), ad.predict(X, "predict"), atol=1e-12)
    for feats in (["x1"], ["x2"], ["x2", "f"]):
        b = pdpx.partial_dependence(model, X, feats, method="brute", kind="both", grid_resolution=5)
        e = pdpx.partial_dependence(model, X, feats, kind="both", grid_resolution=5)
        assert e.method == "exact"
        np.testing.assert_allclose(e.individual, b.individual, atol=1e-12)
    flat = pdpx.partial_dependence(model, X, "x2", grid_resolution=5).average
    np.testing.assert_allclose(flat, flat[:, :1].repeat(5, axis=1), atol=1e-12)
    want = [np.mean(np.asarray(R.r["predict"](model, _r_frame(X.assign(x1=v)))))
            for v in pdpx.partial_dependence(model, X, "x1", grid_resolution=4).grid_values[0]]
    np.testing.assert_allclose(pdpx.partial_dependence(model, X, "x1", grid_resolution=4).average[0], want,
                               atol=1e-12)


def _r_frame(X):
    import rpy2.robjects as ro
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    with localconverter(ro.default_converter + pandas2ri.converter) as cv:
        return cv.py2rpy(X)


def test_clear_errors(R):
    X = R.data[R.preds]
    model = R.model("reg")
    bad = X.assign(f=X["f"].astype(str))
    bad.loc[3, "f"] = "zz"
    with pytest.raises(pdpx.PdpxError, match=r"not levels of the factor.*'zz'"):
        pdpx.partial_dependence(model, bad, "x1", method="brute")
    with pytest.raises(pdpx.PdpxError, match="holds numbers"):
        pdpx.partial_dependence(model, X.assign(f=X["f"].cat.codes), "x1")
    nan = X.copy()
    nan.loc[5, "x2"] = np.nan
    with pytest.raises(pdpx.PdpxError, match="missing value"):
        pdpx.partial_dependence(model, nan, "x1", method="brute")
    with pytest.raises(pdpx.PdpxError, match="not seen at fit time"):
        pdpx.partial_dependence(model, R.data, "x1")
    with pytest.raises(pdpx.PdpxError, match="class randomForest through rpy2"):
        pdpx.partial_dependence(R.model("lm_fit"), X, "x1")
    with pytest.raises(pdpx.NotFittedError, match="keep.forest"):
        pdpx.partial_dependence(R.model("no_forest"), X[["x1", "x2"]], "x1")
    with pytest.raises(pdpx.PdpxError, match="unsupervised"):
        pdpx.partial_dependence(R.model("unsup"), X[["x1", "x2"]], "x1")
    with pytest.raises(pdpx.PdpxError, match="classifier's predicted labels"):
        pdpx.partial_dependence(R.model("cls3"), X, "x1", response="predict")


def test_brute_calls_r_in_batches_and_threads_are_serialised(R):
    from pdpx.adapters.rpy2 import RandomForestRpy2Adapter

    ad = RandomForestRpy2Adapter(R.model("reg"))
    calls = []
    original = ad.predict

    def counting(X, response):
        calls.append(len(X))
        return original(X, response)

    ad.predict = counting
    X = R.data[R.preds]
    pdpx.partial_dependence(ad, X, ["x1", "f"], method="brute", grid_resolution=10)
    assert len(calls) == 1 and calls[0] == len(X) * 50  # one predict over the stacked 10 x 5 grid
    a = pdpx.partial_dependence(R.model("reg"), X, ["x1", "f"], method="brute", grid_resolution=10, n_jobs=2,
                                memory_budget="1MB")
    b = pdpx.partial_dependence(R.model("reg"), X, ["x1", "f"], method="exact", grid_resolution=10)
    np.testing.assert_allclose(a.average, b.average, atol=1e-12)


def test_recognised_without_importing_rpy2():
    from pdpx.adapters.rpy2 import is_rpy2_object

    fake = type("ListVector", (), {"__module__": "rpy2.robjects.vectors"})
    assert is_rpy2_object(fake())
    assert not is_rpy2_object(fake)
    assert not is_rpy2_object(pd.DataFrame())


def test_forest_read_once_per_r_object(R, monkeypatch):
    from pdpx.adapters import rpy2 as rpy2_adapter

    calls = []
    original = rpy2_adapter._read_r_forest
    monkeypatch.setattr(rpy2_adapter, "_read_r_forest", lambda m: calls.append(1) or original(m))
    model = R.model("reg_bias")  # a fresh rpy2 object
    X = R.data[["x1", "x2", "f"]]
    for _ in range(3):
        assert pdpx.partial_dependence(model, X, "x1", grid_resolution=4).method == "exact"
    assert len(calls) == 1
