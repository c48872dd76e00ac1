"""R (issue 24): ``pdpx::partial()`` against ``pdp::partial()`` (pdp 0.8.2) on the same model, in one R process.

pdp cannot be installed by this project (it is not a Debian package, and CRAN may be unreachable),
so this benchmark runs only when the environment variable ``PDPX_PDP_LIB`` names an R library that
holds pdp (``R CMD INSTALL -l <dir> <pdp source>``); otherwise it returns no rows and a note.

2,000 rows x 10 predictors, 1-way PD on pdp's default grid (51 points), one case per path:
``exact`` (a randomForest regression of 100 trees, read as trees; a caret ``train`` object
wrapping a randomForest classifier, centered logit) and ``brute`` (a binomial glm, centered logit;
``MASS::lda`` posterior probabilities). pdp loops over the grid calling ``predict`` once per grid
point; pdpx reads the trees, or stacks the grid and calls ``predict`` once per batch. Both are
timed in the same R process, best of a few runs after a warm-up call; they must agree to 1e-8.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from .common import row
except ImportError:  # run as a script
    from common import row

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "r" / "pdpx"
QUICK = os.environ.get("PDPX_BENCH_QUICK") == "1"
_NOTE: list[str] = []

R_SCRIPT = r"""
.libPaths(c(Sys.getenv("PDPX_PDP_LIB"), .libPaths()))
suppressMessages({
  pkgload::load_all(Sys.getenv("PDPX_R_PKG"), quiet = TRUE, export_all = FALSE)
  loadNamespace("pdp")
  library(randomForest); library(MASS); library(caret)
})
repeats <- as.integer(Sys.getenv("PDPX_BENCH_REPEATS", "3"))
set.seed(20240601)
n <- 2000; p <- 10
X <- as.data.frame(matrix(runif(n * p), n, p, dimnames = list(NULL, paste0("x", 1:p))))
y <- 10 * sin(pi * X$x1 * X$x2) + 20 * (X$x3 - 0.5)^2 + 10 * X$x4 + 5 * X$x5 + rnorm(n)
d <- cbind(X, y = y)
dc <- cbind(X, y = factor(ifelse(y > median(y), "hi", "lo")))
models <- list(
  rf = randomForest(y ~ ., data = d, ntree = 100),
  train_rf = train(y ~ ., data = dc, method = "rf", ntree = 100, tuneGrid = data.frame(mtry = 3),
                   trControl = trainControl(method = "none", classProbs = TRUE)),
  glm = glm(y ~ ., data = dc, family = binomial),
  lda = lda(y ~ ., data = dc)
)
args <- list(rf = list(), train_rf = list(), glm = list(), lda = list(prob = TRUE))
quiet <- function(expr) suppressWarnings(suppressMessages(expr))
best <- function(f) {
  f()
  min(vapply(seq_len(repeats), function(i) { gc(FALSE); system.time(f())[["elapsed"]] }, 0))
}
case <- function(name, path) {
  call <- function(fn) function() quiet(do.call(fn, c(list(models[[name]], pred.var = "x1", train = X), args[[name]])))
  a <- call(pdp::partial)()
  b <- call(pdpx::partial)()
  same <- identical(class(a), class(b)) && identical(names(a), names(b)) && isTRUE(all.equal(a$x1, b$x1))
  sprintf('{"model": "%s", "path": "%s", "pdpx_s": %.6f, "reference_s": %.6f, "max_abs_diff": %.3e, "same_shape": %s}',
          name, path, best(call(pdpx::partial)), best(call(pdp::partial)), max(abs(a$yhat - b$yhat)),
          tolower(same))
}
cat("PDPX_JSON[", case("rf", "exact"), ",", case("train_rf", "exact"), ",", case("glm", "brute"), ",",
    case("lda", "brute"), "]\n", sep = "")
"""

LABELS = {
    "rf": "randomForest regression, 100 trees",
    "train_rf": "caret train(method = \"rf\") classifier, 100 trees, centered logit",
    "glm": "binomial glm, centered logit",
    "lda": "MASS::lda, posterior probability",
}
# exact: the forest read as trees, at least 10x pdp's loop (5x for the centered logit of a classifier, whose
# per-row logits need ICE curves); brute: pdpx's stacked predict plus the transfer to Python and back within 2x
TARGETS = {"rf": 10.0, "train_rf": 5.0, "glm": 0.5, "lda": 0.5}


def _pdp_library() -> str | None:
    lib = os.environ.get("PDPX_PDP_LIB")
    if not lib or not (Path(lib) / "pdp" / "DESCRIPTION").exists():
        return None
    return lib


def run() -> list[dict]:
    _NOTE.clear()
    rscript = shutil.which("Rscript")
    lib = _pdp_library()
    if rscript is None or lib is None:
        _NOTE.append("bench_r_pdp (pdpx::partial against pdp::partial) was skipped: set PDPX_PDP_LIB to an R "
                     "library holding pdp 0.8.2 (R CMD INSTALL -l <dir> <pdp source>) to run it.")
        print(_NOTE[0])
        return []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_r_pdp.R"
        script.write_text(R_SCRIPT)
        env = dict(os.environ, PDPX_R_PKG=str(PKG), PDPX_PYTHON=sys.executable, PDPX_PDP_LIB=lib,
                   PDPX_BENCH_REPEATS="2" if QUICK else "3")
        proc = subprocess.run([rscript, str(script)], capture_output=True, text=True, env=env, timeout=3600, cwd=tmp)
    out = proc.stdout
    if proc.returncode != 0 or "PDPX_JSON" not in out:
        raise RuntimeError(f"the pdp benchmark failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}\n{out[-2000:]}")
    payload = json.loads(out[out.index("PDPX_JSON") + len("PDPX_JSON"):].strip())
    rows = []
    for case in payload:
        if case["max_abs_diff"] > 1e-8 or not case["same_shape"]:
            raise RuntimeError(f"pdpx and pdp disagree on {case['model']}: max |diff| {case['max_abs_diff']}")
        target = TARGETS[case["model"]]
        r = row(
            "R partial() against pdp 0.8.2 (2,000 rows, 10 predictors)",
            f"{LABELS[case['model']]}: pdpx {case['path']}, 1-way, 51 grid points",
            case["pdpx_s"], "pdp::partial (one predict per grid point)", case["reference_s"],
            target, case["reference_s"] / case["pdpx_s"] >= target,
        )
        r["target"] = f">= {target:g}x"
        r["max_abs_diff"] = case["max_abs_diff"]
        rows.append(r)
    return rows


def markdown() -> str:
    """The note of a skipped run (empty when it ran)."""
    return "\n".join(_NOTE)


if __name__ == "__main__":
    for r in run():
        print(r)
