"""Scale (issue 7): time and peak memory against rows, and Dask against one process.

Rows of 20 features (make_friedman1 + noise columns); a HistGradientBoostingRegressor
(100 iterations) fitted on 20,000 of them. Peak memory is the highest resident set
size during the call, minus the resident size just before it
(so the input, already in memory, is excluded): Linux's exact high-water mark
(VmHWM, reset through /proc/self/clear_refs before the call), not a sampled one.
Each case runs in a fresh process holding only the input and the model, so memory
freed by earlier work cannot hide the call's own needs.
"""

from __future__ import annotations

import gc
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor

import pdpx

try:
    from .common import row
except ImportError:  # run as a script
    from common import row

HERE = Path(__file__).resolve().parent
SIZES = [10_000, 100_000, 300_000, 1_000_000]
BUDGET = 256 * 2**20
_table: list[dict] = []


def make_rows(n: int, seed: int = 0) -> pd.DataFrame:
    X, _ = make_friedman1(n_samples=n, n_features=20, random_state=seed)
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(20)])


def cheap_model(frame: pd.DataFrame):
    return frame["x0"].to_numpy() * 2 + frame["x1"].to_numpy() - frame["x2"].to_numpy()


def _status_mib() -> dict:
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":")
                out[key] = int(value.split()[0]) * 1024
    return out


def measure(fn):
    """(seconds, peak bytes over the resident size before the call) of fn().

    Linux keeps the exact high-water mark of the resident set (VmHWM); writing 5 to
    /proc/self/clear_refs resets it to the current size, so after the call VmHWM minus
    the size before is the call's own peak, however briefly it lasted.
    """
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = _status_mib()["VmRSS"]
    t0 = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - t0
    peak = _status_mib()["VmHWM"]
    return elapsed, max(0, peak - base)


GRID50 = {"x0": np.linspace(0.05, 0.95, 50), "x1": np.linspace(0.05, 0.95, 50)}
GRID5 = {"x0": np.linspace(0.05, 0.95, 5), "x1": np.linspace(0.05, 0.95, 5)}


def _call(case: str, model, X):
    if case == "exact":
        return lambda: pdpx.partial_dependence(model, X, ["x0", "x1"], method="exact", custom_values=GRID50,
                                               memory_budget=BUDGET)
    if case == "brute":
        return lambda: pdpx.partial_dependence(model, X, ["x0", "x1"], method="brute", custom_values=GRID5,
                                               memory_budget=BUDGET)
    if case == "cheap":
        return lambda: pdpx.partial_dependence(cheap_model, X, ["x0", "x1"], method="brute", custom_values=GRID50,
                                               memory_budget=BUDGET)
    if case == "ice":
        return lambda: pdpx.partial_dependence(model, X, ["x0", "x1"], method="exact", kind="both",
                                               ice_sample=10_000, custom_values=GRID50, memory_budget=BUDGET)
    raise ValueError(case)


def one(n: int, case: str, model_path: str) -> dict:
    """Measure one case in this (fresh) process: only the input and the model are in memory."""
    import pickle

    with open(model_path, "rb") as fh:
        model = pickle.load(fh)
    X = make_rows(n)
    _call(case, model, X.head(200))()  # load compiled kernels, import what the call imports
    t, peak = measure(_call(case, model, X))
    return {"seconds": t, "peak": peak}


def measure_fresh(n: int, case: str, model_path: str) -> tuple[float, int]:
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, __file__, "--one", str(n), case, model_path],
                         capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return r["seconds"], r["peak"]


def run() -> list[dict]:
    import pickle
    import tempfile

    Xfit = make_rows(20_000, seed=1)
    y = make_friedman1(n_samples=20_000, n_features=20, random_state=1)[1]
    model = HistGradientBoostingRegressor(max_iter=100, early_stopping=False, random_state=0).fit(Xfit, y)
    tmp = tempfile.NamedTemporaryFile(suffix=".pkl", delete=False)
    pickle.dump(model, tmp)
    tmp.close()
    rows = []
    mem = "peak memory over input (budget 256 MiB); ratio = budget / peak"
    for n in SIZES:
        input_mb = n * 20 * 8 / 2**20
        t_e, m_e = measure_fresh(n, "exact", tmp.name)
        t_b, m_b = measure_fresh(n, "brute", tmp.name)
        entry = {"rows": n, "input_mb": input_mb, "exact_s": t_e, "exact_peak_mb": m_e / 2**20,
                 "brute_s": t_b, "brute_peak_mb": m_b / 2**20}
        _table.append(entry)
        print(f"    {n:>9,} rows: exact 50x50 {t_e:.2f} s peak +{m_e / 2**20:.0f} MiB; "
              f"brute 5x5 {t_b:.2f} s peak +{m_b / 2**20:.0f} MiB (input {input_mb:.0f} MiB)", flush=True)
        rows.append(row("memory (issue 7)", f"exact 2-way 50 x 50, {n:,} rows x 20", t_e, mem, m_e / 2**20,
                        "peak <= budget", m_e <= BUDGET, ratio=BUDGET / max(m_e, 2**20), unit="MiB"))
        rows.append(row("memory (issue 7)", f"brute 2-way 5 x 5, {n:,} rows x 20", t_b, mem, m_b / 2**20,
                        "peak <= budget", m_b <= BUDGET, ratio=BUDGET / max(m_b, 2**20), unit="MiB"))
        if n == SIZES[-1]:
            t_c, m_c = measure_fresh(n, "cheap", tmp.name)
            rows.append(row("memory (issue 7)", "brute 2-way 50 x 50, 1,000,000 rows x 20, a cheap model "
                            "(2 x0 + x1 - x2, a plain function, so pdpx's own memory shows)", t_c, mem, m_c / 2**20,
                            "peak <= budget", m_c <= BUDGET, ratio=BUDGET / max(m_c, 2**20), unit="MiB"))
            t_i, m_i = measure_fresh(n, "ice", tmp.name)
            rows.append(row("memory (issue 7)", "exact 2-way 50 x 50 PD + ICE of 10,000 sampled rows, 1,000,000 rows",
                            t_i, mem, m_i / 2**20, "peak <= budget", m_i <= BUDGET, ratio=BUDGET / max(m_i, 2**20),
                            unit="MiB"))
    first, last = _table[0], _table[-1]
    growth = last["rows"] / first["rows"]
    for key, label in (("exact_s", "exact"), ("brute_s", "brute")):
        per_row_small = first[key] / first["rows"]
        per_row_big = last[key] / last["rows"]
        rows.append(row("linear growth (issue 7)", f"{label}: time per row at 10^6 vs 10^4 rows ({growth:.0f}x rows)",
                        last[key], f"time at 10^4 rows x {growth:.0f}", first[key] * growth,
                        "per-row cost no worse than 1.5x", per_row_big <= 1.5 * per_row_small))
    rows.extend(dask_vs_single(model))
    plot()
    os.unlink(tmp.name)
    return rows


def dask_vs_single(model) -> list[dict]:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster, wait

    X = make_rows(SIZES[-1])
    grid2 = dict(custom_values={"x0": np.linspace(0.05, 0.95, 50), "x1": np.linspace(0.05, 0.95, 50)})
    t_single, _ = measure(lambda: pdpx.partial_dependence(model, X, ["x0", "x1"], method="exact", **grid2))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=50) as lc, Client(lc):
        # the rows live on the workers, as when they read them from storage; shipping 150 MB
        # from this process to theirs is timed separately
        with warnings.catch_warnings():  # dask warns about the large graph: that is the point here
            warnings.simplefilter("ignore", UserWarning)
            t_ship, _ = measure(lambda: wait(dd.from_pandas(X, npartitions=8).persist()))
            ddf = dd.from_pandas(X, npartitions=8).persist()
            wait(ddf)
        pdpx.partial_dependence(model, ddf.partitions[:2], ["x0"], method="exact", grid_resolution=5)  # warm workers
        t_dask, _ = measure(lambda: pdpx.partial_dependence(model, ddf, ["x0", "x1"], method="exact", **grid2))
    return [row("dask (issue 7)", "exact 2-way 50 x 50, 1,000,000 rows held by a LocalCluster (2 workers x 1 "
                f"thread, 8 partitions; sending them there from this process took {t_ship:.1f} s more) vs one "
                "process (2 threads)", t_dask, "one process", t_single, "report (same 2 cores)", True)]


def plot():
    from plotnine import aes, facet_wrap, geom_line, geom_point, ggplot, labs, scale_x_log10, scale_y_log10, theme_bw

    df = pd.DataFrame(_table)
    long = pd.concat([
        pd.DataFrame({"rows": df.rows, "method": "exact (50 x 50)", "measure": "time (s)", "value": df.exact_s}),
        pd.DataFrame({"rows": df.rows, "method": "brute (5 x 5)", "measure": "time (s)", "value": df.brute_s}),
        pd.DataFrame({"rows": df.rows, "method": "exact (50 x 50)", "measure": "peak memory over input (MiB)",
                      "value": df.exact_peak_mb.clip(lower=1)}),
        pd.DataFrame({"rows": df.rows, "method": "brute (5 x 5)", "measure": "peak memory over input (MiB)",
                      "value": df.brute_peak_mb.clip(lower=1)}),
    ])
    p = (ggplot(long, aes("rows", "value", color="method")) + geom_line() + geom_point()
         + facet_wrap("measure", scales="free_y") + scale_x_log10() + scale_y_log10()
         + labs(x="rows (20 features)", y="", color="", title="pdpx: time and memory against rows")
         + theme_bw())
    p.save(HERE / "scale.png", width=8, height=3.5, dpi=110, verbose=False)


def markdown() -> str:
    lines = ["## Scale: time and peak memory against rows", "",
             "HistGradientBoostingRegressor (100 iterations), 20 features, memory budget 256 MiB.", "",
             "| rows | input | exact 50 x 50 | exact peak over input | brute 5 x 5 | brute peak over input |",
             "|---|---|---|---|---|---|"]
    for e in _table:
        lines.append(f"| {e['rows']:,} | {e['input_mb']:.0f} MiB | {e['exact_s']:.2f} s | {e['exact_peak_mb']:.0f} MiB "
                     f"| {e['brute_s']:.2f} s | {e['brute_peak_mb']:.0f} MiB |")
    lines += ["", "![time and memory against rows](scale.png)"]
    return "\n".join(lines)


if __name__ == "__main__":
    import json
    import sys

    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(one(int(sys.argv[2]), sys.argv[3], sys.argv[4])))
        raise SystemExit(0)
    for r in run():
        print(r)
    print(markdown())
