"""``exact`` equals ``brute`` on CatBoost models; what runs ``brute`` says why; the plugin's API surface."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from catboost_cases import catboost, data, plugin_from_entry_point  # noqa: F401
from treetools import assert_exact_equals_brute, assert_library_not_imported

import pdpx

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "pdpx_catboost"
#: pdpx's public plugin API (docs/plugins.md): what a plugin may import from pdpx (the extension API, and the
#: public functions of pdpx itself).
PUBLIC = {"pdpx", "pdpx.extend"}


def fit(cls, X, y, **params):
    params = {"iterations": 25, "depth": 4, "verbose": 0, "random_seed": 0, "thread_count": 1,
              "allow_writing_files": False, **params}
    cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X.dtypes[c])]
    return cls(cat_features=cats or None, **params).fit(X, y)


@pytest.fixture(scope="module")
def frame():
    return data(300)


@pytest.mark.parametrize("features", ["a", "c", "d", ["a", "b"], ["b", "c"]])
def test_regressor_exact_equals_brute(frame, features):
    X, y = frame
    m = fit(catboost.CatBoostRegressor, X, y, one_hot_max_size=8)
    e, _ = assert_exact_equals_brute(m, X, features, grid_resolution=15)
    auto = pdpx.partial_dependence(m, X, features, grid_resolution=5)
    assert auto.method == "exact"


def test_weights_and_every_kernel(frame):
    X, y = frame
    m = fit(catboost.CatBoostRegressor, X, y, one_hot_max_size=8, nan_mode="Max")
    w = np.random.default_rng(3).random(len(X))
    for kernel in ("oblivious", "leafsets", "partition"):
        assert_exact_equals_brute(m, X, ["a", "d"], kernel=kernel, sample_weight=w)


def test_classifiers_every_target(frame):
    X, y = frame
    b = fit(catboost.CatBoostClassifier, X, np.where(y > np.median(y), "yes", "no"), one_hot_max_size=8)
    assert_exact_equals_brute(b, X, ["a", "c"])
    assert_exact_equals_brute(b, X, "b", response="raw")
    k = fit(catboost.CatBoostClassifier, X, np.digitize(y, np.quantile(y, [0.3, 0.7])), loss_function="MultiClass",
            one_hot_max_size=8)
    e, _ = assert_exact_equals_brute(k, X, ["a", "c"], target=[0, 2])
    assert e.average.shape[0] == 2
    assert_exact_equals_brute(k, X, "d", response="raw")


def test_poisson_ranker_and_plain(frame):
    X, y = frame
    p = fit(catboost.CatBoostRegressor, X, np.round(np.exp(0.5 * y)), loss_function="Poisson", one_hot_max_size=8)
    assert_exact_equals_brute(p, X, ["a", "d"])
    num = X[["a", "b"]]
    r = catboost.CatBoostRanker(iterations=15, depth=3, verbose=0, thread_count=1, allow_writing_files=False).fit(
        num, y, group_id=np.arange(len(y)) // 20)
    assert_exact_equals_brute(r, num, ["a", "b"])
    c = catboost.CatBoost({"iterations": 15, "depth": 3, "verbose": 0, "thread_count": 1, "allow_writing_files": False}).fit(num, y)
    assert_exact_equals_brute(c, num, "b")


def test_ctr_features_run_brute_and_the_note_names_the_feature(frame):
    X, y = frame
    X = X.assign(e=np.random.default_rng(1).choice(list("abcdefghij"), len(X)))
    y = y + (X["e"].isin(list("abc"))).to_numpy()
    m = fit(catboost.CatBoostRegressor, X, y, one_hot_max_size=2)
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=5)
    assert res.method == "brute"
    note = " ".join(res.notes)
    assert "CTR" in note and "'e'" in note
    with pytest.raises(pdpx.PdpxError, match="CTR"):
        pdpx.partial_dependence(m, X, "a", method="exact")


def test_text_features_run_brute_with_the_reason():
    rng = np.random.default_rng(0)
    words = np.array(["good film", "bad film", "great plot", "dull plot", "good plot"])
    X = pd.DataFrame({"a": rng.normal(size=200), "t": words[rng.integers(0, 5, 200)]})
    y = (X["t"].str.contains("good|great")).astype(int).to_numpy()
    m = catboost.CatBoostClassifier(iterations=10, verbose=0, text_features=["t"], thread_count=1,
                                   allow_writing_files=False).fit(X, y)
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=5)
    assert res.method == "brute"
    assert "text features ('t')" in " ".join(res.notes)


def test_missing_categories_are_refused_naming_the_column(frame):
    X, y = frame
    m = fit(catboost.CatBoostRegressor, X, y, one_hot_max_size=8)
    bad = X.astype({"c": object})
    bad.loc[3, "c"] = None
    with pytest.raises(pdpx.PdpxError, match="'c' has missing values"):
        pdpx.partial_dependence(m, bad, "a")


def test_refit_model_is_read_again(frame):
    X, y = frame
    m = fit(catboost.CatBoostRegressor, X[["a", "b"]], y)
    first = pdpx.partial_dependence(m, X[["a", "b"]], "b", method="exact", grid_resolution=5).average
    m.fit(X[["a", "b"]], -y)
    again = pdpx.partial_dependence(m, X[["a", "b"]], "b", method="exact", grid_resolution=5).average
    brute = pdpx.partial_dependence(m, X[["a", "b"]], "b", method="brute", grid_resolution=5).average
    np.testing.assert_allclose(again, brute, rtol=1e-9, atol=1e-9)
    assert not np.allclose(first, again)


def test_report_accepts_a_catboost_model(frame, tmp_path):
    pytest.importorskip("plotnine", reason="plotnine is not installed")
    X, y = frame
    m = fit(catboost.CatBoostRegressor, X, y, one_hot_max_size=8, iterations=10)
    out = pdpx.report(m, X, path=tmp_path / "report.html", features=["a", "c"])
    text = Path(out if isinstance(out, (str, Path)) else tmp_path / "report.html").read_text()
    assert "catboost" in text.lower() or "CatBoost" in text


def test_unfitted_model_is_refused():
    with pytest.raises(pdpx.NotFittedError, match="not fitted"):
        pdpx.partial_dependence(catboost.CatBoostRegressor(), pd.DataFrame({"a": [1.0, 2.0]}), "a")


def test_recognising_a_model_does_not_import_catboost():
    assert_library_not_imported("pdpx_catboost.adapter", "is_catboost_model", "catboost")


def test_the_plugin_imports_only_pdpx_public_api():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("pdpx"):
                names = [node.module] if node.module.split(".")[0] == "pdpx" else []
                bad += [f"{path.name}: from {node.module} import {a.name}" for a in node.names
                        if names and a.name.startswith("_")]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.split(".")[0] == "pdpx"]
            bad += [f"{path.name}: {n}" for n in names if n not in PUBLIC]
    assert not bad, f"the plugin imports what is not pdpx's public plugin API: {bad}"


def test_entry_point_is_declared_and_loaded():
    from importlib.metadata import entry_points

    eps = [ep for ep in entry_points(group="pdpx") if ep.name == "catboost"]
    assert eps and eps[0].value == "pdpx_catboost.plugin"
    pm = pdpx.get_plugin_manager(load_entry_points=True)
    assert any(name == "catboost" or getattr(p, "__name__", "") == "pdpx_catboost.plugin"
               for name, p in pm.list_name_plugin())
