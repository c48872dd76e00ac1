"""R (issue 5): pdpx ``exact`` called from R versus a batched R brute-force loop, in one R process.

randomForest regression, 2,000 rows x 10 predictors, 100 trees. The reference is
the fastest plain-R brute force: one ``predict`` over all grid points stacked
(``data`` repeated once per grid point, the target features set), then the means.
pdpx is called through the R package (reticulate) with its default method, which
runs ``exact``. Both are timed in the same R process, best of a few runs, after one
warm-up call (numba compilation and the one-time transfer of the forest, reported
separately as ``first_call_s``). Both must agree to 1e-9.
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

R_SCRIPT = r"""
suppressMessages({
  pkgload::load_all(Sys.getenv("PDPX_R_PKG"), quiet = TRUE, export_all = FALSE)
  library(randomForest)
})
repeats <- as.integer(Sys.getenv("PDPX_BENCH_REPEATS", "3"))
set.seed(20240601)
n <- 2000; p <- 10
X <- as.data.frame(matrix(runif(n * p), n, p, dimnames = list(NULL, paste0("x", 1:p))))
y <- 10 * sin(pi * X$x1 * X$x2) + 20 * (X$x3 - 0.5)^2 + 10 * X$x4 + 5 * X$x5 + rnorm(n)
rf <- randomForest(x = X, y = y, ntree = 100)

best <- function(f) {
  f()
  min(vapply(seq_len(repeats), function(i) { gc(FALSE); system.time(f())[["elapsed"]] }, 0))
}

brute <- function(features, grid) {
  # grid: data.frame of grid points (one column per feature); one predict over all of them
  k <- nrow(grid)
  big <- X[rep(seq_len(n), k), , drop = FALSE]
  for (f in features) big[[f]] <- rep(grid[[f]], each = n)
  pred <- predict(rf, big)
  colMeans(matrix(pred, nrow = n))
}

case <- function(features, resolution) {
  first <- system.time(pd <- partial_dependence(rf, X, features, grid_resolution = resolution))[["elapsed"]]
  meta <- attr(pd, "pdpx")
  grid <- expand.grid(rev(meta$grid_values), KEEP.OUT.ATTRS = FALSE)[, rev(features), drop = FALSE]
  ref <- brute(features, grid)
  diff <- max(abs(ref - pd$yhat))
  t_pdpx <- best(function() partial_dependence(rf, X, features, grid_resolution = resolution))
  t_ref <- best(function() brute(features, grid))
  sprintf('{"features": "%s", "grid": %d, "method": "%s", "pdpx_s": %.6f, "reference_s": %.6f, "first_call_s": %.6f, "max_abs_diff": %.3e}',
          paste(features, collapse = ", "), nrow(grid), meta$method, t_pdpx, t_ref, first, diff)
}

.pdpx_first <- system.time(pdpx:::.pdpx_py())[["elapsed"]]
cat("PDPX_JSON[", case("x1", 51L), ",", case(c("x1", "x2"), 20L), "]\n", sep = "")
"""


def _rscript() -> str | None:
    return shutil.which("Rscript")


def run() -> list[dict]:
    rscript = _rscript()
    if rscript is None:
        raise RuntimeError("Rscript is not on PATH: install R (make setup) to run the R benchmark")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_r.R"
        script.write_text(R_SCRIPT)
        env = dict(os.environ, PDPX_R_PKG=str(PKG), PDPX_PYTHON=sys.executable,
                   PDPX_BENCH_REPEATS="2" if QUICK else "5")
        proc = subprocess.run([rscript, str(script)], capture_output=True, text=True, env=env, timeout=1800)
    out = proc.stdout
    if proc.returncode != 0 or "PDPX_JSON" not in out:
        raise RuntimeError(f"the R benchmark failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}\n{out[-2000:]}")
    payload = json.loads(out[out.index("PDPX_JSON") + len("PDPX_JSON"):].strip())
    rows = []
    for case, target in zip(payload, (20.0, 100.0)):
        if case["max_abs_diff"] > 1e-9:
            raise RuntimeError(f"pdpx and R brute disagree on {case['features']}: max |diff| {case['max_abs_diff']}")
        shape = "51 grid points" if case["grid"] == 51 else "20 x 20 grid"
        ways = "1-way" if "," not in case["features"] else "2-way"
        r = row(
            "R randomForest (2,000 rows, 10 predictors, 100 trees)",
            f"{ways} PD, {shape}: pdpx {case['method']} from R (first call incl. forest transfer "
            f"{case['first_call_s'] * 1000:.0f} ms)",
            case["pdpx_s"], "R brute, one predict over the stacked grid", case["reference_s"],
            target, case["reference_s"] / case["pdpx_s"] >= target,
        )
        r["target"] = f">= {target:.0f}x"
        r["first_call_s"] = case["first_call_s"]
        r["max_abs_diff"] = case["max_abs_diff"]
        rows.append(r)
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
