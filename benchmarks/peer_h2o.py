"""H2O's ``partial_plot``, the second peer of bench_spark.py, in an environment of its own.

H2O is not a pdpx dependency. :func:`h2o_python` makes ``benchmarks/.venv-h2o`` (ignored by git;
``PDPX_H2O_ENV`` names another one) on first use with the pinned ``h2o`` release below, whose
bundled server runs on Java 8 to 17 (the machine's headless JRE is 17; Java 17 is supported from
3.36.0.1 on, and 3.46 still refuses 21). :func:`run_h2o` writes the benchmark's rows (the features
and the target) to a Parquet file in a temporary folder, runs this file there with the venv's python,
and reads back what H2O answered (JSON).

In the peer's environment this file imports only ``h2o``. It starts a local H2O server of its own
(bounded memory, two threads, a free port, so it never joins another H2O already running), imports
the rows, fits an H2O GBM of the benchmark's shape (trees, depth, XGBoost's default learning rate)
on the same fitting rows, then times ``partial_plot`` of one feature on its grid and of one pair on
its grid (``col_pairs_2dpdp``), both on every row and on exactly pdpx's grid values (``user_splits``),
and shuts the server down. The model differs from the benchmark's XGBoost, so only the times compare,
never the numbers.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = Path(os.environ.get("PDPX_H2O_ENV") or HERE / ".venv-h2o")
H2O = "h2o==3.46.0.12"  # its server runs on Java 8-17; the machine's JRE is 17


def h2o_python(build: bool = True) -> tuple[Path | None, str]:
    """The peer environment's python and ``""``, or None and why it is absent (made on first use when ``build``)."""
    py = ENV / "bin" / "python"
    if py.exists() and subprocess.run([str(py), "-c", "import h2o"], capture_output=True).returncode == 0:
        return py, ""
    if not build:
        return None, f"{ENV.name} is absent (`python benchmarks/bench_spark.py` makes it)"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", H2O], check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        first = ((exc.stderr or "").strip().splitlines() or [str(exc)])[0]
        return None, f"h2o could not be installed in {ENV.name}: {first}"
    except OSError as exc:
        return None, f"h2o could not be installed in {ENV.name}: {exc}"
    return py, ""


def run_h2o(X, y, *, fit_rows: int, trees: int, depth: int, one: tuple[str, list], pair: tuple[list, list],
            build: bool = True, timeout: float = 3600) -> dict:
    """H2O's ``partial_plot`` timed on the rows ``X`` (a DataFrame) with target ``y``, a GBM fitted on the first
    ``fit_rows``: ``one`` is (feature, grid values), ``pair`` ([feature, feature], [grid, grid]). A dict with
    ``ran`` (bool) and ``why`` (the error's first line, when not), ``version``, ``java``, ``fit_seconds``,
    ``one_seconds``, ``pair_seconds`` (each one ``partial_plot`` call), ``one_average`` and ``pair_average``
    (H2O's mean responses, for the record: they are another model's)."""
    py, why = h2o_python(build)
    if py is None:
        return {"ran": False, "why": why}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        X.assign(y=y).to_parquet(tmp / "rows.parquet", index=False)
        task = {"fit_rows": fit_rows, "trees": trees, "depth": depth, "one": [one[0], [float(v) for v in one[1]]],
                "pair": [list(pair[0]), [[float(v) for v in g] for g in pair[1]]]}
        (tmp / "task.json").write_text(json.dumps(task))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
        try:
            done = subprocess.run([str(py), str(Path(__file__).resolve()), str(tmp)], capture_output=True,
                                  text=True, env=env, timeout=timeout)
            failed = done.returncode != 0 and "H2O failed: " + _first_error(done.stderr)
        except subprocess.TimeoutExpired:
            failed = f"H2O did not finish within {timeout:.0f} s"
        answer = json.loads((tmp / "answer.json").read_text()) if (tmp / "answer.json").exists() else {}
    if "pair_seconds" not in answer:
        return {"ran": False, "why": answer.get("why") or failed or "H2O wrote no answer"}
    answer.update(ran=True, java=_java())
    return answer


def _java() -> str:
    """The first line of ``java -version`` (the Java the H2O server ran on), or ``"java ?"``."""
    try:
        done = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "java ?"
    return (done.stderr.strip().splitlines() or ["java ?"])[0]


def _first_error(stderr: str) -> str:
    """The line of a child's traceback that names the error (its last line), or its first line otherwise."""
    lines = [ln for ln in (stderr or "").strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if "Error" in ln.split(":", 1)[0] or "Exception" in ln.split(":", 1)[0]]
    return (errors or lines or ["no message"])[-1].strip()


# --------------------------------------------------------------- inside the peer's environment
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _averages(tables) -> list[float]:
    """The mean responses of ``partial_plot``'s first table (plot=False returns a list of H2OTwoDimTable)."""
    return [float(v) for v in tables[0]["mean_response"]]


def _peer_main(folder: str) -> None:
    import h2o
    from h2o.estimators import H2OGradientBoostingEstimator

    tmp = Path(folder)
    task = json.loads((tmp / "task.json").read_text())
    answer = {"version": h2o.__version__}
    try:
        h2o.init(ip="127.0.0.1", port=_free_port(), nthreads=2, max_mem_size="4G", ice_root=str(tmp),
                 verbose=False)
    except Exception as exc:  # Java absent or refused, the server did not come up: say why in one line
        answer["why"] = "H2O could not start: " + (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        (tmp / "answer.json").write_text(json.dumps(answer))
        raise
    try:
        frame = h2o.import_file(str(tmp / "rows.parquet"))
        names = [c for c in frame.columns if c != "y"]
        t0 = time.perf_counter()
        model = H2OGradientBoostingEstimator(ntrees=task["trees"], max_depth=task["depth"], learn_rate=0.3, seed=0)
        model.train(x=names, y="y", training_frame=frame[:task["fit_rows"], :])
        answer["fit_seconds"] = time.perf_counter() - t0
        feature, grid = task["one"]
        t0 = time.perf_counter()
        got = model.partial_plot(frame=frame, cols=[feature], nbins=len(grid), user_splits={feature: grid},
                                 plot=False)
        answer["one_seconds"] = time.perf_counter() - t0
        answer["one_average"] = _averages(got)
        (tmp / "answer.json").write_text(json.dumps(answer))
        (a, b), (ga, gb) = task["pair"]
        t0 = time.perf_counter()
        got = model.partial_plot(frame=frame, col_pairs_2dpdp=[[a, b]], nbins=max(len(ga), len(gb)),
                                 user_splits={a: ga, b: gb}, plot=False)
        answer["pair_seconds"] = time.perf_counter() - t0
        answer["pair_average"] = _averages(got)
        (tmp / "answer.json").write_text(json.dumps(answer))
    finally:
        h2o.cluster().shutdown()


if __name__ == "__main__":
    _peer_main(sys.argv[1])
