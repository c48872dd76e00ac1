"""Model files that would crash their library's loader (or its predict) are refused first (pdpx.cli.model_prechecks).

Each hostile file goes through the command line in a fresh Python process, so that a crash (SIGSEGV, SIGABRT,
an endless loop) fails the test instead of killing pytest: the process must exit 1 with one line naming the
problem. One file of each kind is first shown to crash its library when loaded directly (so that the check can
fail); models the libraries write (categorical, multi-class, multi-target, DART, linear boosters, linear trees,
single-leaf trees, random forests) pass and give the library's own predictions.
"""

from __future__ import annotations

import copy
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pdpx.cli.model_prechecks import PrecheckError, json_depth, precheck_model_file

xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")

CLI = "import sys; from pdpx.cli import main; sys.argv[0] = 'pdpx'; main()"
LOAD = {"json": "import xgboost, sys; b = xgboost.Booster(); b.load_model(sys.argv[1]); "
                "b.predict(xgboost.DMatrix(__import__('numpy').zeros((2, 3))))",
        "txt": "import lightgbm, sys, numpy; lightgbm.Booster(model_file=sys.argv[1]).predict(numpy.zeros((2, 3)))"}


def child(code: str, *args, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PDPX_ALLOW_PICKLE"}
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("boosters")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = X["a"] + X["b"] ** 2 + rng.normal(scale=0.1, size=300)
    X.to_csv(d / "data.csv", index=False)
    booster = xgb.train({"max_depth": 3}, xgb.DMatrix(X, y), 5)
    booster.save_model(str(d / "m.json"))
    booster.save_model(str(d / "m.ubj"))
    lgb.train({"num_leaves": 7, "verbose": -1}, lgb.Dataset(X, y), 5).save_model(str(d / "m.txt"))
    return {"dir": d, "X": X, "y": y, "json": json.loads((d / "m.json").read_text()),
            "txt": (d / "m.txt").read_text()}


def xgb_variant(models, change) -> dict:
    doc = copy.deepcopy(models["json"])
    change(doc, doc["learner"]["gradient_booster"]["model"]["trees"][0], doc["learner"]["learner_model_param"])
    return doc


def lgb_variant(models, pattern: str, replacement: str) -> str:
    return re.sub(pattern, replacement, models["txt"], count=1, flags=re.M)


def deep_json(depth: int = 200_000) -> str:
    """1.2 MB of nested objects under the learner (the issue's file that made XGBoost's loader segfault)."""
    return '{"learner":' + '{"a":' * depth + "1" + "}" * depth + "}"


HOSTILE_XGB = {
    "nested 200,000 levels": (None, "nests 200001 levels deep"),
    "child index outside the tree": (lambda doc, t, p: t["left_children"].__setitem__(0, 1000), "child index"),
    "negative child index": (lambda doc, t, p: t["left_children"].__setitem__(0, -7), "child index"),
    "a cycle": (lambda doc, t, p: t["left_children"].__setitem__(1, 0), "child index"),
    "two parents": (lambda doc, t, p: t["right_children"].__setitem__(1, 2), "reach a node twice"),
    "split feature out of range": (lambda doc, t, p: t["split_indices"].__setitem__(0, 10**8), "outside the model's"),
    "num_feature 2e9": (lambda doc, t, p: p.__setitem__("num_feature", "2000000000"), "num_feature is 2,000,000,000"),
    "num_class 2e9": (lambda doc, t, p: p.__setitem__("num_class", "2000000000"), "num_class"),
    "num_nodes 2e9": (lambda doc, t, p: t["tree_param"].__setitem__("num_nodes", "2000000000"), "num_nodes"),
    "an array one short": (lambda doc, t, p: t["split_conditions"].pop(), "split_conditions"),
    "category set outside its array": (lambda doc, t, p: t.update(
        categories_nodes=[0], categories_segments=[0], categories_sizes=[2_000_000_000], categories=[1],
        split_type=[1] + t["split_type"][1:]), "categorical splits"),
}
HOSTILE_LGB = {
    "num_leaves 2e9": (r"^num_leaves=7", "num_leaves=2000000000", "num_leaves is 2,000,000,000"),
    "num_leaves -5": (r"^num_leaves=7", "num_leaves=-5", "num_leaves is -5"),
    "num_leaves one more than the arrays": (r"^num_leaves=7", "num_leaves=8", "needs 8"),
    "a cycle among the children": (r"^left_child=(\S+) (\S+)", r"left_child=\1 0", "child index"),
    "child index outside the tree": (r"^left_child=(\S+)", "left_child=1000", "child index"),
    "split feature out of range": (r"^split_feature=(\S+)", "split_feature=100000", "max_feature_idx"),
    "categories without bounds": (r"^num_cat=0", "num_cat=5", "cat_boundaries"),
    "num_tree_per_iteration 0": (r"^num_tree_per_iteration=.*$", "num_tree_per_iteration=0", "num_tree_per_iteration"),
    "num_class 2e9": (r"^num_class=.*$", "num_class=2000000000", "num_class"),
    "max_feature_idx 2e9": (r"^max_feature_idx=.*$", "max_feature_idx=2000000000", "max_feature_idx"),
    "a line without =": (r"^is_linear=0", "is_linear", "key=value lines"),
    "objective's num_class 2e9 (SIGSEGV)": (r"^objective=.*$", "objective=multiclass num_class:2000000000",
                                            "objective's num_class:2000000000"),
}


#: runs the command line on each file named (one process for many: a crash kills it and fails the test)
CLI_EACH = """
import json, sys
from click.testing import CliRunner
from pdpx.cli import main
data, paths = sys.argv[1], sys.argv[2:]
for path in paths:
    result = CliRunner().invoke(main, ["pd", path, data, "--feature", "a"], catch_exceptions=False)
    print(json.dumps([path, result.exit_code, result.stderr]), flush=True)
"""


def refused_in_a_child(cases: dict, data_csv) -> None:
    """``cases``: path -> words its one-line refusal must hold. All go through one fresh process."""
    done = child(CLI_EACH, data_csv, *cases, timeout=600)
    seen = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and len(seen) == len(cases), (done.returncode, seen[-1:], done.stderr[-2000:])
    for path, code, stderr in seen:
        lines = stderr.strip().splitlines()
        assert code == 1 and len(lines) == 1 and lines[0].startswith("pdpx: error: refusing to load"), stderr
        assert cases[path] in lines[0] and "its loader could crash" in lines[0], (path, lines[0])


def test_the_hostile_files_do_crash_their_libraries(models, tmp_path):
    """The check below can fail: loaded directly, these files kill the process."""
    deep = tmp_path / "deep.json"
    deep.write_text(deep_json())
    assert child(LOAD["json"], deep).returncode == -11  # SIGSEGV
    big = tmp_path / "big.txt"
    big.write_text(lgb_variant(models, r"^num_leaves=7", "num_leaves=2000000000"))
    assert child(LOAD["txt"], big).returncode == -6  # SIGABRT
    cycle = tmp_path / "cycle.txt"
    cycle.write_text(lgb_variant(models, r"^left_child=(\S+) (\S+)", r"left_child=\1 0"))
    with pytest.raises(subprocess.TimeoutExpired):  # predict never returns
        child(LOAD["txt"], cycle, timeout=10)


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_hostile_xgboost_files_are_refused(models, tmp_path, suffix):
    cases = {}
    for i, (case, (change, words)) in enumerate(sorted(HOSTILE_XGB.items())):
        path = tmp_path / f"model{i}{suffix}"
        if suffix == ".json":
            path.write_text(deep_json() if change is None else json.dumps(xgb_variant(models, change)))
            assert change is not None or path.stat().st_size > 1_200_000, case
        elif change is None:  # UBJSON: 200,000 nested arrays
            path.write_bytes(b"{L" + struct.pack(">q", 7) + b"learner" + b"[" * 200_000 + b"]" * 200_000 + b"}")
            words = "nests deeper"
        else:
            path.write_bytes(_to_ubj(xgb_variant(models, change)))
        cases[str(path)] = words
    refused_in_a_child(cases, models["dir"] / "data.csv")


def _to_ubj(doc) -> bytes:
    """A JSON document as UBJSON (strings, integers, floats, arrays, objects), as XGBoost writes it."""
    def value(v) -> bytes:
        if isinstance(v, dict):
            return b"{" + b"".join(key(k) + value(x) for k, x in v.items()) + b"}"
        if isinstance(v, list):
            return b"[" + b"".join(value(x) for x in v) + b"]"
        if isinstance(v, bool):
            return b"T" if v else b"F"
        if isinstance(v, int):
            return b"L" + struct.pack(">q", v)
        if isinstance(v, float):
            return b"D" + struct.pack(">d", v)
        return b"S" + key(v)
    def key(k: str) -> bytes:
        data = k.encode()
        return b"L" + struct.pack(">q", len(data)) + data
    return value(doc)


def test_hostile_lightgbm_files_are_refused(models, tmp_path):
    cases = {}
    for i, (_case, (pattern, replacement, words)) in enumerate(sorted(HOSTILE_LGB.items())):
        path = tmp_path / f"model{i}.txt"
        path.write_text(lgb_variant(models, pattern, replacement))
        cases[str(path)] = words
    refused_in_a_child(cases, models["dir"] / "data.csv")


def test_ubjson_counts_are_bounded(tmp_path):
    """A container declaring 10^12 nulls (a zero-byte type) or a negative count: refused, nothing allocated."""
    for body in (b"[$Z#L" + struct.pack(">q", 10**12), b"[#L" + struct.pack(">q", -5), b"{#L" + struct.pack(">q", 10**9)):
        path = tmp_path / "m.ubj"
        path.write_bytes(b"{L" + struct.pack(">q", 7) + b"learner" + body + b"}")
        with pytest.raises(PrecheckError, match="not valid UBJSON"):
            precheck_model_file(path, "xgboost-ubj")


def test_a_file_larger_than_the_budget_is_refused_unread(models, tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(models["json"]) + " " * (2 << 20))
    with pytest.raises(PrecheckError, match=r"more than the memory budget \(4.0 MiB"):
        precheck_model_file(path, "xgboost-json", budget=4 << 20)


def test_json_depth_skips_strings():
    assert json_depth(b'{"a": "[[[{{{", "b": [[1]], "c": "\\"[[[["}') == 3
    assert json_depth(b"[" * 70 + b"]" * 70) == 70


def test_models_the_libraries_write_pass_and_predict_as_before(models, tmp_path):
    X, y = models["X"], models["y"]
    cats = X.assign(c=pd.Categorical(np.where(X["c"] > 0, "p", "q")))
    Y2 = np.column_stack([y, -y])
    k = pd.cut(y, 3, labels=False)
    boosters = {
        "cat.json": xgb.train({"max_depth": 3, "tree_method": "hist"}, xgb.DMatrix(cats, y, enable_categorical=True), 5),
        "multi.ubj": xgb.train({"objective": "multi:softprob", "num_class": 3}, xgb.DMatrix(X, k), 4),
        "target2.json": xgb.train({"multi_strategy": "multi_output_tree", "tree_method": "hist"}, xgb.DMatrix(X, Y2), 3),
        "dart.json": xgb.train({"booster": "dart", "rate_drop": 0.1}, xgb.DMatrix(X, y), 4),
        "linear.ubj": xgb.train({"booster": "gblinear"}, xgb.DMatrix(X, y), 4),
        "forest.json": xgb.train({"num_parallel_tree": 3, "subsample": 0.8}, xgb.DMatrix(X, y), 2),
        "cat.txt": lgb.train({"verbose": -1}, lgb.Dataset(cats, y), 5),
        "multi.txt": lgb.train({"objective": "multiclass", "num_class": 3, "verbose": -1}, lgb.Dataset(X, k), 3),
        "linear.txt": lgb.train({"linear_tree": True, "verbose": -1, "num_leaves": 5}, lgb.Dataset(X, y), 3),
        "one_leaf.txt": lgb.train({"min_data_in_leaf": 1000, "verbose": -1}, lgb.Dataset(X, y), 2),
        "rf.txt": lgb.train({"boosting": "rf", "bagging_fraction": 0.5, "bagging_freq": 1, "verbose": -1},
                            lgb.Dataset(X, y), 3),
    }
    from pdpx.cli.model_files import load_model_file

    for name, booster in boosters.items():
        path = tmp_path / name
        booster.save_model(str(path))
        loaded = load_model_file(path)
        data = cats if name.startswith("cat") else X
        if name.endswith(".txt"):
            np.testing.assert_allclose(loaded.predict(data), booster.predict(data), rtol=1e-12, err_msg=name)
        else:
            dm = xgb.DMatrix(data, enable_categorical=True)
            np.testing.assert_allclose(loaded.predict(dm), booster.predict(dm), rtol=1e-6, err_msg=name)
