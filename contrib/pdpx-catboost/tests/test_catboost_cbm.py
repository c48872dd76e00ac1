"""The binary-model reader (``.cbm``) against the JSON export and CatBoost's own predict."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from catboost_cases import at_borders, catboost, data, plugin_from_entry_point, tree_model_of  # noqa: F401
from pdpx_catboost.adapter import CatBoostAdapter
from pdpx_catboost.cbm import read_cbm
from pdpx_catboost.trees import read_model
from test_catboost_fidelity import fit

ARRAYS = ["left", "right", "feature", "threshold", "missing_left", "value", "tree_start", "node_weight", "nan_mode",
          "cat_offset", "cat_nwords", "cat_words", "tree_weight", "tree_group", "base_score"]


def models():
    """Symmetric-tree models of every kind the plugin reads: NaN modes, one-hot categories, every loss family."""
    X, y = data()
    Xn, yn = data(nan=False)
    num = Xn[["a", "b"]]
    out = {}
    for nan_mode in ("Min", "Max"):
        for size in (4, 255):
            out[f"regressor {nan_mode} one_hot_max_size={size}"] = (
                fit(catboost.CatBoostRegressor, y, X, nan_mode=nan_mode, one_hot_max_size=size), X)
    out["forbidden"] = (fit(catboost.CatBoostRegressor, yn, num, nan_mode="Forbidden"), num)
    out["binary"] = (fit(catboost.CatBoostClassifier, np.where(y > np.median(y), "high", "low"), X,
                         one_hot_max_size=8), X)
    out["multiclass"] = (fit(catboost.CatBoostClassifier, np.digitize(y, np.quantile(y, [0.33, 0.66])), X,
                             loss_function="MultiClass", one_hot_max_size=8), X)
    out["poisson"] = (fit(catboost.CatBoostRegressor, np.round(np.exp(0.5 * y)), X, loss_function="Poisson",
                          one_hot_max_size=8), X)
    out["ranker"] = (catboost.CatBoostRanker(iterations=20, depth=4, verbose=0, thread_count=1,
                                             allow_writing_files=False).fit(num, yn, group_id=np.arange(len(yn)) // 20),
                     num)
    out["multi-target"] = (fit(catboost.CatBoostRegressor, np.column_stack([yn, -2 * yn + num["b"]]), num,
                               loss_function="MultiRMSE"), num)
    out["depth 8"] = (fit(catboost.CatBoostRegressor, y, X[["a", "b"]], depth=8), X[["a", "b"]])
    return out


@pytest.fixture(scope="module")
def fitted():
    return models()


def test_binary_reader_equals_json_reader_on_every_model(fitted):
    for name, (model, X) in fitted.items():
        ad = CatBoostAdapter(model)
        ad.validate_columns(X)
        arrays = read_cbm(ad.binary_model())
        assert arrays is not None, name
        fast, fast_facts = ad.read_trees()
        ref, ref_facts = read_model(ad.export(), n_features=ad.n_features())
        for key in ARRAYS:
            np.testing.assert_array_equal(getattr(fast, key), getattr(ref, key), err_msg=f"{name}: {key}")
        assert fast.n_margins == ref.n_margins, name
        assert fast_facts.one_hot_values == ref_facts.one_hot_values, name
        assert fast_facts.locations == ref_facts.locations, name
        assert fast_facts.symmetric and fast_facts.n_trees == ref_facts.n_trees == model.tree_count_, name


def test_binary_reader_predicts_as_catboost(fitted):
    """The ensemble read from the binary model gives CatBoost's raw margins at the borders, NaN, unseen
    categories."""
    for name, (model, X) in fitted.items():
        ad, tm = tree_model_of(model, X, "raw")
        rows = at_borders(model, X)
        ref = np.asarray(catboost.CatBoost.predict(model, rows, prediction_type="RawFormulaVal"), dtype=float).reshape(len(rows), -1)
        mine = tm.ensemble.predict(tm.encode(rows))
        np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12, err_msg=name)


def test_models_the_binary_reader_leaves_to_the_json_export():
    """Non-symmetric trees and CTR splits: read_cbm declines; the JSON reader reads them or says why."""
    X, y = data(nan=False)
    num = X[["a", "b"]]
    d = fit(catboost.CatBoostRegressor, y, num, grow_policy="Depthwise", depth=5)
    assert read_cbm(CatBoostAdapter(d).binary_model()) is None
    _, tm = tree_model_of(d, num, "predict")
    np.testing.assert_allclose(tm.ensemble.predict(tm.encode(num))[:, 0], d.predict(num), rtol=1e-12, atol=1e-12)
    ctr = fit(catboost.CatBoostRegressor, y, X, one_hot_max_size=1)
    assert read_cbm(CatBoostAdapter(ctr).binary_model()) is None
    ad = CatBoostAdapter(ctr)
    ad.validate_columns(X)
    assert ad.tree_model("predict") is None
    assert "CTR" in ad.tree_model_unavailable("predict")


def test_binary_model_through_a_file_when_serialize_is_missing(monkeypatch):
    X, y = data()
    m = fit(catboost.CatBoostRegressor, y, X, one_hot_max_size=8)
    in_memory = CatBoostAdapter(m).binary_model()
    monkeypatch.setattr(type(m), "_serialize_model", property(lambda self: None), raising=False)
    through_file = CatBoostAdapter(m).binary_model()
    assert read_cbm(through_file)["tree_splits"].tolist() == read_cbm(in_memory)["tree_splits"].tolist()


def test_not_a_binary_model():
    with pytest.raises(ValueError, match="CBM1"):
        read_cbm(b"{not a model}")


@pytest.mark.parametrize("how", ["load_model", "pickle"])
def test_loaded_and_unpickled_models(tmp_path, how):
    """A model read back from a file or a pickle (``n_features_in_`` is 0 there) gets exact, equal to brute."""
    import pdpx

    X, y = data()
    m = fit(catboost.CatBoostRegressor, y, X, one_hot_max_size=8)
    if how == "load_model":
        path = tmp_path / "m.cbm"
        m.save_model(str(path))
        back = catboost.CatBoostRegressor()
        back.load_model(str(path))
    else:
        back = pickle.loads(pickle.dumps(m))
    Xs = pd.DataFrame(X.iloc[:120])
    e = pdpx.partial_dependence(back, Xs, "a", method="exact", grid_resolution=8)
    b = pdpx.partial_dependence(back, Xs, "a", method="brute", grid_resolution=8)
    assert e.method == "exact"
    np.testing.assert_allclose(e.average, b.average, rtol=1e-9, atol=1e-12)
