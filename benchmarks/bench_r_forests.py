"""R (issue 16): pdpx ``exact`` from R on ranger and gbm models versus brute force through each
library's own ``predict``, in one R process; and the first call of a fresh R session.

2,000 rows x 10 predictors; ranger regression with 100 trees, gbm gaussian with 100 trees
(depth 3). The reference stacks ``data`` once per grid point with the features set and calls
``predict`` once (``ranger``: ``$predictions``; ``gbm``: ``n.trees = 100, type = "response"``),
then takes the means. pdpx runs through the R package with its default method (``exact``).
Both are timed in the same R process, best of a few runs after a warm-up call; they must agree
to 1e-9. ``first_call_s`` of the last row is a fresh ``Rscript`` process: loading the package,
starting Python and importing pdpx, and one partial dependence of a small ranger model. The
package is installed the way users install it (``R CMD INSTALL``, into a temporary library),
so the timing is what an R user sees, not ``pkgload::load_all`` from the source directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from .common import row
except ImportError:  # run as a script
    from common import row

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "r" / "pdpx"
QUICK = os.environ.get("PDPX_BENCH_QUICK") == "1"

R_SCRIPT = r"""
suppressMessages({
  library(pdpx, lib.loc = Sys.getenv("PDPX_R_LIB"))
  library(ranger); library(gbm)
})
repeats <- as.integer(Sys.getenv("PDPX_BENCH_REPEATS", "3"))
set.seed(20240601)
n <- 2000; p <- 10
X <- as.data.frame(matrix(runif(n * p), n, p, dimnames = list(NULL, paste0("x", 1:p))))
y <- 10 * sin(pi * X$x1 * X$x2) + 20 * (X$x3 - 0.5)^2 + 10 * X$x4 + 5 * X$x5 + rnorm(n)
d <- cbind(X, y = y)
models <- list(
  ranger = ranger(y ~ ., data = d, num.trees = 100, seed = 1),
  gbm = gbm(y ~ ., data = d, distribution = "gaussian", n.trees = 100, interaction.depth = 3)
)
pred <- list(
  ranger = function(m, nd) predict(m, nd)$predictions,
  gbm = function(m, nd) predict(m, nd, n.trees = 100, type = "response")
)
best <- function(f) {
  f()
  min(vapply(seq_len(repeats), function(i) { gc(FALSE); system.time(f())[["elapsed"]] }, 0))
}
brute <- function(lib, features, grid) {
  k <- nrow(grid)
  big <- X[rep(seq_len(n), k), , drop = FALSE]
  for (f in features) big[[f]] <- rep(grid[[f]], each = n)
  colMeans(matrix(pred[[lib]](models[[lib]], big), nrow = n))
}
case <- function(lib, features, resolution) {
  m <- models[[lib]]
  pd_fun <- function() partial_dependence(m, X, features, grid_resolution = resolution, n_trees = 100)
  first <- system.time(pd <- pd_fun())[["elapsed"]]
  meta <- attr(pd, "pdpx")
  grid <- expand.grid(rev(meta$grid_values), KEEP.OUT.ATTRS = FALSE)[, rev(features), drop = FALSE]
  ref <- brute(lib, features, grid)
  diff <- max(abs(ref - pd$yhat))
  t_pdpx <- best(pd_fun)
  t_ref <- best(function() brute(lib, features, grid))
  sprintf('{"lib": "%s", "features": "%s", "grid": %d, "method": "%s", "pdpx_s": %.6f, "reference_s": %.6f, "first_call_s": %.6f, "max_abs_diff": %.3e}',
          lib, paste(features, collapse = ", "), nrow(grid), meta$method, t_pdpx, t_ref, first, diff)
}
invisible(pdpx:::.pdpx_py())
cat("PDPX_JSON[", case("ranger", "x1", 51L), ",", case("ranger", c("x1", "x2"), 20L), ",",
    case("gbm", "x1", 51L), ",", case("gbm", c("x1", "x2"), 20L), "]\n", sep = "")
"""

# A fresh R session: the package, Python and pdpx start-up, one call on a small ranger model.
FIRST_SCRIPT = r"""
suppressMessages({ library(ranger) })
set.seed(1)
m <- ranger(mpg ~ ., data = mtcars, num.trees = 50, seed = 1)
now <- function() proc.time()[["elapsed"]]
t0 <- now()
library(pdpx, lib.loc = Sys.getenv("PDPX_R_LIB"))
t1 <- now()
invisible(pdpx:::.pdpx_py())  # reticulate starts Python; pdpx and its bridge are imported
t2 <- now()
pd <- partial_dependence(m, mtcars, "wt")
t3 <- now()
cat(sprintf("PDPX_FIRST %.6f %s %.3f %.3f %.3f\n", t3 - t0, attr(pd, "pdpx")$method, t1 - t0, t2 - t1, t3 - t2))
"""


def run() -> list[dict]:
    rscript = shutil.which("Rscript")
    if rscript is None:
        raise RuntimeError("Rscript is not on PATH: install R (make setup) to run the R benchmark")
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "lib"
        lib.mkdir()
        inst = subprocess.run([str(Path(rscript).with_name("R")), "CMD", "INSTALL", "--no-test-load", "-l", str(lib),
                               str(PKG)], capture_output=True, text=True, timeout=600)
        if inst.returncode != 0:
            raise RuntimeError(f"R CMD INSTALL r/pdpx failed:\n{inst.stderr[-3000:]}")
        # run in the temporary directory: reticulate looks for a pyproject.toml in the working directory
        env = dict(os.environ, PDPX_R_LIB=str(lib), PDPX_PYTHON=sys.executable,
                   PDPX_BENCH_REPEATS="2" if QUICK else "5")
        script = Path(tmp) / "bench.R"
        script.write_text(R_SCRIPT)
        proc = subprocess.run([rscript, str(script)], capture_output=True, text=True, env=env, timeout=1800, cwd=tmp)
        first_script = Path(tmp) / "first.R"
        first_script.write_text(FIRST_SCRIPT)
        t0 = time.perf_counter()
        first = subprocess.run([rscript, str(first_script)], capture_output=True, text=True, env=env, timeout=600,
                               cwd=tmp)
        first_wall = time.perf_counter() - t0
    out = proc.stdout
    if proc.returncode != 0 or "PDPX_JSON" not in out:
        raise RuntimeError(f"the R benchmark failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}\n{out[-2000:]}")
    if first.returncode != 0 or "PDPX_FIRST" not in first.stdout:
        raise RuntimeError(f"the fresh-session R run failed:\n{first.stderr[-3000:]}")
    payload = json.loads(out[out.index("PDPX_JSON") + len("PDPX_JSON"):].strip())
    rows = []
    for case in payload:
        target = 20.0 if case["grid"] == 51 else 100.0
        if case["max_abs_diff"] > 1e-9:
            raise RuntimeError(f"pdpx and R brute disagree on {case['lib']} {case['features']}: {case['max_abs_diff']}")
        shape = "51 grid points" if case["grid"] == 51 else "20 x 20 grid"
        ways = "1-way" if "," not in case["features"] else "2-way"
        r = row(
            f"R {case['lib']} (2,000 rows, 10 predictors, 100 trees)",
            f"{ways} PD, {shape}: pdpx {case['method']} from R",
            case["pdpx_s"], f"R brute, one {case['lib']} predict over the stacked grid", case["reference_s"],
            target, case["reference_s"] / case["pdpx_s"] >= target,
        )
        r["target"] = f">= {target:.0f}x"
        r["first_call_s"] = case["first_call_s"]
        r["max_abs_diff"] = case["max_abs_diff"]
        rows.append(r)
    secs, method, t_pkg, t_py, t_call = first.stdout.split("PDPX_FIRST", 1)[1].split()[:5]
    r = row("R fresh session", f"installed pdpx: library(pdpx) {t_pkg} s + start Python, import pdpx {t_py} s "
            f"+ first partial_dependence (ranger, {method}; numba loads its cached kernels) {t_call} s; "
            f"whole Rscript process {first_wall:.2f} s", float(secs), "target", 1.5, 1.0, float(secs) < 1.5,
            ratio=1.5 / float(secs))
    r["target"] = "< 1.5 s"
    rows.append(r)
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
