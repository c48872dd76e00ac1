"""R tree models exported with pdpx::export_model() (.pdpx.json), read without R (pdpx.adapters.rexport).

R fits randomForest, ranger and gbm models (regression and classification, factors, missing values), exports
them with the R package's own ``R/export.R`` and computes the partial dependence by the definition (set the
column, R's ``predict``, average); pdpx reads the file and must give the same numbers, from the Python API and
from the command line. The exporter the command line ships is the same file; the .rds route (opt-in) writes the
same document; a file that is not a well-formed export is refused.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import pdpx
from pdpx.adapters.rexport import ExportError, parse_export, read_export, tree_predict
from pdpx.cli import main
from pdpx.cli.rds_export import exporter_script

ROOT = Path(__file__).resolve().parents[2]
EXPORTER = ROOT / "r" / "pdpx" / "R" / "export.R"
R_MISSING = shutil.which("Rscript") is None
needs_r = pytest.mark.skipif(R_MISSING, reason="R is not installed (make setup installs it)")
#: model -> (library, prediction columns R's predict gives, as pdpx's outputs)
MODELS = ["rf_reg", "rf_class", "ranger_reg", "ranger_prob", "ranger_vote", "ranger_partition", "gbm_gauss",
          "gbm_bern"]
#: feature -> grid (numbers, or the factor's levels)
GRIDS = {"x1": [0.1, 0.35, 0.6, 0.95], "x2": [-1.0, 0.0, 0.7], "f": ["a", "b", "c", "d"]}

R_CODE = """
suppressMessages({{library(randomForest); library(ranger); library(gbm)}})
source("{exporter}")
d <- read.csv("{data}", stringsAsFactors = TRUE)
d$y <- d$x1 + 0.5 * (d$f %in% c("b", "d")) + ifelse(is.na(d$x2), 0.3, d$x2 / 4) + rnorm(nrow(d), sd = 0.1)
d$k <- factor(ifelse(d$y > 1.2, "hi", ifelse(d$y > 0.7, "mid", "lo")))
d$b <- as.integer(d$y > 0.9)
full <- d[!is.na(d$x2), ]
set.seed(5)
m <- list(
  rf_reg = randomForest(y ~ x1 + x2 + f, data = full, ntree = 30),
  rf_class = randomForest(k ~ x1 + x2 + f, data = full, ntree = 30),
  ranger_reg = ranger(y ~ x1 + x2 + f, data = full, num.trees = 30, respect.unordered.factors = "order"),
  ranger_prob = ranger(k ~ x1 + x2 + f, data = full, num.trees = 30, probability = TRUE,
                       respect.unordered.factors = "order"),
  ranger_vote = ranger(k ~ x1 + x2 + f, data = full, num.trees = 30, respect.unordered.factors = "order"),
  ranger_partition = ranger(y ~ x1 + x2 + f, data = full, num.trees = 30, respect.unordered.factors = "partition"),
  gbm_gauss = gbm(y ~ x1 + x2 + f, data = d, n.trees = 60, distribution = "gaussian", interaction.depth = 3,
                  train.fraction = 0.8, n.minobsinnode = 5),
  gbm_bern = gbm(b ~ x1 + x2 + f, data = d, n.trees = 40, distribution = "bernoulli", interaction.depth = 2,
                 n.minobsinnode = 5))
pred <- function(name, x, nd) {{
  if (startsWith(name, "rf")) return(if (x$type == "classification") predict(x, nd, type = "prob") else predict(x, nd))
  if (name == "ranger_vote") {{
    v <- predict(x, nd, predict.all = TRUE)$predictions
    return(sapply(seq_along(x$forest$levels), function(j) rowMeans(v == j)))
  }}
  if (startsWith(name, "ranger")) return(predict(x, nd)$predictions)
  predict(x, nd, n.trees = if (x$train.fraction < 1) which.min(x$valid.error) else x$n.trees, type = "response")
}}
grids <- list(x1 = c(0.1, 0.35, 0.6, 0.95), x2 = c(-1, 0, 0.7, NA), f = c("a", "b", "c", "d"))
rows <- c()
for (name in names(m)) {{
  export_model(m[[name]], file.path("{out}", paste0(name, ".pdpx.json")),
               data = if (name == "ranger_partition") full else NULL)
  saveRDS(m[[name]], file.path("{out}", paste0(name, ".rds")))
  nd <- if (startsWith(name, "gbm")) d else full
  p <- as.matrix(pred(name, m[[name]], nd))
  write.csv(p, file.path("{out}", paste0(name, "_rows.csv")), row.names = FALSE)
  for (f in names(grids)) for (i in seq_along(grids[[f]])) {{
    v <- grids[[f]][i]
    if (is.na(v) && !anyNA(nd[[f]])) next  # the missing-value point: only where the data has missing values
    nd2 <- nd
    nd2[[f]] <- if (is.factor(nd[[f]])) factor(v, levels = levels(nd[[f]])) else v
    means <- colMeans(as.matrix(pred(name, m[[name]], nd2)))
    rows <- c(rows, sprintf("%s,%s,%d,%d,%.17g", name, f, i, seq_along(means), means))
  }}
}}
writeLines(c("model,feature,point,output,yhat", rows), file.path("{out}", "reference.csv"))
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    if R_MISSING:
        pytest.skip("R is not installed (make setup installs it)")
    out = tmp_path_factory.mktemp("exports")
    rng = np.random.default_rng(2)
    n = 240
    data = pd.DataFrame({"x1": rng.uniform(size=n), "x2": rng.normal(size=n),
                         "f": rng.choice(["a", "b", "c", "d"], size=n)})
    data.loc[rng.random(n) < 0.1, "x2"] = np.nan
    data.to_csv(out / "data.csv", index=False)
    code = R_CODE.format(exporter=EXPORTER, data=out / "data.csv", out=out)
    done = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return out


def frame(out: Path, model: str) -> pd.DataFrame:
    X = pd.read_csv(out / "data.csv")
    return X if model.startswith("gbm") else X.dropna().reset_index(drop=True)


def reference(out: Path, model: str, feature: str) -> np.ndarray:
    ref = pd.read_csv(out / "reference.csv")
    ref = ref[(ref.model == model) & (ref.feature == feature)]
    return ref.pivot(index="point", columns="output", values="yhat").sort_index().to_numpy()


def test_the_command_lines_exporter_is_the_r_packages():
    assert exporter_script().read_bytes() == EXPORTER.read_bytes()


@needs_r
@pytest.mark.parametrize("model", MODELS)
def test_partial_dependence_of_an_export_is_rs_predict_averaged(exported, model):
    adapter = read_export(exported / f"{model}.pdpx.json")
    X = frame(exported, model)[adapter.feature_names()]
    rows = pd.read_csv(exported / f"{model}_rows.csv").to_numpy()
    response = adapter.responses()[0]
    np.testing.assert_allclose(adapter.predict(X, response), rows, rtol=1e-12, atol=1e-12)
    for feature, grid in GRIDS.items():
        for method in ("exact", "brute"):
            res = pdpx.partial_dependence(adapter, X, feature, custom_values={feature: grid}, method=method)
            got = np.asarray(res.average).reshape(len(res.outputs), -1).T  # a column with missing values: NaN last
            assert len(got) == len(grid) + int(X[feature].isna().any())
            np.testing.assert_allclose(got, reference(exported, model, feature), rtol=1e-10, atol=1e-12)
            assert res.method == method


@needs_r
@pytest.mark.parametrize("model", ["rf_class", "gbm_gauss"])
def test_the_command_line_reads_an_export(exported, model):
    """No opt-in, no warning; a factor column of the CSV takes the model's levels."""
    data = exported / "data.csv"
    if not model.startswith("gbm"):
        frame(exported, model).to_csv(exported / "full.csv", index=False)
        data = exported / "full.csv"
    for feature, grid in GRIDS.items():
        values = [] if feature == "f" else ["--values", f"{feature}={','.join(map(str, grid))}"]
        result = CliRunner().invoke(main, ["pd", str(exported / f"{model}.pdpx.json"), str(data), "--feature",
                                           feature, *values], catch_exceptions=False,
                                    env={"PDPX_ALLOW_PICKLE": None})
        assert result.exit_code == 0, result.stderr
        assert "warning" not in result.stderr
        table = pd.read_csv(io.StringIO(result.stdout))
        got = np.column_stack([table.loc[table.output == o, "yhat"] for o in table.output.unique()])
        if feature == "f":  # the grid of a factor: its levels, in the model's order
            assert list(table.drop_duplicates("x_1")["label_1"]) == GRIDS["f"]
        np.testing.assert_allclose(got, reference(exported, model, feature), rtol=1e-10, atol=1e-12)


@needs_r
@pytest.mark.parametrize("model", ["rf_class", "ranger_prob", "gbm_bern"])
def test_the_rds_route_writes_the_same_document(exported, tmp_path, model):
    from pdpx.cli.rds_check import check_r_file
    from pdpx.cli.rds_export import export_r_file

    facts = check_r_file(exported / f"{model}.rds")
    out = export_r_file(exported / f"{model}.rds", kind="rds", name=facts.name, budget=1 << 30, folder=tmp_path)
    assert parse_export(out.read_bytes())["trees"].keys() == parse_export(
        (exported / f"{model}.pdpx.json").read_bytes())["trees"].keys()
    mine, theirs = (json.loads(p.read_text()) for p in (out, exported / f"{model}.pdpx.json"))
    assert mine == theirs


@needs_r
def test_tree_predictions_follow_the_ensembles_routing_rule(exported):
    for model in MODELS:
        adapter = read_export(exported / f"{model}.pdpx.json")
        X = frame(exported, model)[adapter.feature_names()]
        for response in adapter.responses():
            tm = adapter.tree_model(response)
            encoded = tm.encode(X)
            np.testing.assert_allclose(tree_predict(tm.ensemble, encoded), tm.ensemble.predict(encoded), rtol=1e-12)


# ------------------------------------------------------------------ what is not an export
def minimal() -> dict:
    return {"format": "pdpx-trees", "version": 1, "library": "ranger", "trees": {
        "n_nodes": [3], "split_var": [0, 0, 0], "split_value": [0.5, 1.0, 2.0], "left": [1, 0, 0],
        "right": [2, 0, 0], "is_ordered": [True], "treetype": "Regression", "feature_names": ["x"],
        "levels": [None]}}


def test_a_minimal_export_reads():
    adapter = read_export_bytes(json.dumps(minimal(), separators=(",", ":")).encode())
    np.testing.assert_allclose(adapter.predict(pd.DataFrame({"x": [0.2, 0.7]}), "predict")[:, 0], [1.0, 2.0])


def read_export_bytes(data: bytes):
    from pdpx.adapters.rexport import export_adapter

    return export_adapter(parse_export(data))


def altered(path: list, value) -> bytes:
    doc = minimal()
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return json.dumps(doc).encode()


@pytest.mark.parametrize(("data", "words"), [
    (b'{"format":"pdpx-trees","version":1,"library":"ranger","trees":{"x":NaN}}', "NaN"),
    (b'{"format":"pdpx-trees","format":"pdpx-trees"}', "appears twice"),
    (altered(["version"], 2), "version 2"),
    (altered(["library"], "lm"), "library 'lm'"),
    (altered(["code"], "system('x')"), "unknown fields code"),
    (altered(["trees", "evil"], [1]), "fields no export has: evil"),
    (altered(["trees", "split_value"], ["1", 2, 3]), "'split_value' is not a list of finite numbers"),
    (altered(["trees", "left"], [True, 0, 0]), "'left' is not a list of whole numbers"),
    (altered(["trees", "left"], [1.5, 0, 0]), "'left' is not a list of whole numbers"),
    (altered(["trees", "split_value"], [1e300, 1, 2]).replace(b"1e+300", b"1e400"), "finite numbers"),
    (altered(["trees", "treetype"], KeyError), "lack the field 'treetype'"),
    (altered(["trees", "left"], [0, 0, 0]), "not well formed"),  # the root its own child
    (altered(["trees", "split_var"], [7, 0, 0]), "not well formed"),
    (b"[" * 100000 + b"]" * 100000, "nests deeper"),
    (b"\xff\xfe", "not valid JSON"),
])
def test_what_is_not_a_well_formed_export_is_refused(data, words):
    with pytest.raises(ExportError) as info:
        read_export_bytes(data)
    assert words in str(info.value), str(info.value)


def test_numbers_that_size_arrays_are_capped():
    """gbm's var_type sizes each categorical split's bitset: a crafted 2^40 would allocate terabytes."""
    doc = {"format": "pdpx-trees", "version": 1, "library": "gbm", "trees": {
        "n_nodes": [4], "split_var": [0, -1, -1, -1], "split_code": [0, 1.0, 2.0, 3.0], "left": [1, 0, 0, 0],
        "right": [2, 0, 0, 0], "missing": [3, 0, 0, 0], "weight": [4, 2, 2, 0], "c_splits": [-1, 1],
        "c_split_len": [2], "var_type": [2], "init_f": [0.0], "distribution": "gaussian", "feature_names": ["x"],
        "levels": [["a", "b"]], "n_trees": 1, "n_trees_fitted": 1}}
    adapter = read_export_bytes(json.dumps(doc).encode())
    np.testing.assert_allclose(adapter.predict(pd.DataFrame({"x": ["a", "b"]}), "predict")[:, 0], [1.0, 2.0])
    doc["trees"]["var_type"] = [2**40]
    with pytest.raises(ExportError, match="'var_type' holds a number above 1024"):
        read_export_bytes(json.dumps(doc).encode())


def test_an_export_larger_than_the_budget_is_refused_unread(tmp_path):
    path = tmp_path / "big.pdpx.json"
    path.write_bytes(json.dumps(minimal()).encode() + b" " * (2 << 20))
    with pytest.raises(ExportError, match=r"more than the memory budget \(1.0 MiB"):
        read_export(path, budget=1 << 20)


def test_the_extension_tells_an_export_from_an_xgboost_model(tmp_path):
    data = json.dumps(minimal(), separators=(",", ":")).encode()
    (tmp_path / "model.json").write_bytes(data)
    (tmp_path / "d.csv").write_text("x\n0.2\n0.7\n")
    run = CliRunner().invoke
    result = run(main, ["pd", str(tmp_path / "model.json"), str(tmp_path / "d.csv"), "--feature", "x"])
    assert result.exit_code == 1 and "rename it model.pdpx.json" in result.stderr, result.stderr
    (tmp_path / "xgb.pdpx.json").write_text(textwrap.dedent('{"learner": {}}'))
    result = run(main, ["pd", str(tmp_path / "xgb.pdpx.json"), str(tmp_path / "d.csv"), "--feature", "x"])
    assert result.exit_code == 1 and "looks like JSON (an XGBoost .json model?)" in result.stderr, result.stderr
    (tmp_path / "model.pdpx.json").write_bytes(data)
    result = run(main, ["pd", str(tmp_path / "model.pdpx.json"), str(tmp_path / "d.csv"), "--feature", "x",
                        "--values", "x=0.2,0.7"])
    assert result.exit_code == 0, result.stderr
    assert list(pd.read_csv(io.StringIO(result.stdout))["yhat"]) == [1.0, 2.0]
