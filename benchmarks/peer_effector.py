"""effector, the peer of bench_heterogeneity.py, in an environment of its own.

effector is not a pdpx dependency. :func:`effector_python` makes ``benchmarks/.venv-effector``
(ignored by git; ``PDPX_EFFECTOR_ENV`` names another one) on first use with effector and the
XGBoost of the benchmark's own environment (the same version, so the saved model predicts the
same numbers), and :func:`run_effector` hands it the model (XGBoost's JSON) and the rows (.npy)
in a temporary folder, runs this file there, and reads back what effector answered (JSON).

In the peer's environment this file imports only effector, numpy and xgboost. effector sees the
model through a predict function (the booster's ``inplace_predict`` on its numpy rows), as a
user of a model-agnostic tool would hand it over; it subsamples to ``nof_instances`` rows (its
default: 10,000 for PDP, 1,000 for ShapDP). What is timed there, for ``effector.PDP`` and (when shap
is installed there) ``effector.ShapDP``: building it on the rows, ``fit("all")`` (the model calls),
every feature's ``heter_score`` and ``find_regions(features="all")`` with its default finder (depth 2).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = Path(os.environ.get("PDPX_EFFECTOR_ENV") or HERE / ".venv-effector")
EFFECTOR = "effector>=0.6,<0.7"  # find_regions / Partition / heter_score are 0.6's API


def effector_python(build: bool = True) -> tuple[Path | None, str]:
    """The peer environment's python and ``""``, or None and why it is absent (made on first use when ``build``)."""
    py = ENV / "bin" / "python"
    check = [str(py), "-c", "import effector, xgboost; print(effector.__version__ if hasattr(effector, "
             "'__version__') else '')"]
    if py.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return py, ""
    if not build:
        return None, f"{ENV.name} is absent (`python benchmarks/bench_heterogeneity.py` makes it)"
    import xgboost

    try:
        subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", EFFECTOR, "shap", f"xgboost=={xgboost.__version__}"],
                       check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        return None, f"effector could not be installed in {ENV.name} ({exc})"
    return py, ""


def effector_version(py: Path) -> str:
    out = subprocess.run([str(py), "-m", "pip", "show", "effector"], capture_output=True, text=True).stdout
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Version:")), "?")


def run_effector(model, X, *, build: bool = True, timeout: float = 3600) -> dict:
    """effector's answer on ``model`` (an XGBoost scikit-learn model) and the rows ``X`` (a DataFrame): a dict
    with ``ran`` (bool), ``why`` (when not), ``version``, ``max_prediction_gap`` (the peer's predictions against
    the model's own on the first 1,000 rows), and per method (``pdp``, ``shapdp``; ``why`` when not run):
    ``seconds``, ``fit_seconds``, ``heterogeneity`` {feature: heter_score}, ``splits`` {feature: [first split or
    None, the rules of the leaves]}, ``nof_instances``."""
    import numpy as np

    py, why = effector_python(build)
    if py is None:
        return {"ran": False, "why": why}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model.get_booster().save_model(str(tmp / "model.json"))
        np.save(tmp / "X.npy", X.to_numpy(dtype=np.float64))
        np.save(tmp / "check.npy", model.predict(X.iloc[:1000]))
        (tmp / "names.json").write_text(json.dumps([str(c) for c in X.columns]))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
        try:
            done = subprocess.run([str(py), str(Path(__file__).resolve()), str(tmp)], capture_output=True,
                                  text=True, env=env, timeout=timeout)
            failed = done.returncode != 0 and "effector failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
        except subprocess.TimeoutExpired:
            failed = f"effector did not finish within {timeout:.0f} s"
        if not (tmp / "answer.json").exists():
            return {"ran": False, "why": failed or "effector wrote no answer"}
        out = json.loads((tmp / "answer.json").read_text())
    out.update(ran=True, version=effector_version(py))
    return out


# --------------------------------------------------------------- inside the peer's environment
def _first_split(part, names: list) -> dict | None:
    """The split of the root (the level-1 regions' one condition): feature and position."""
    import numpy as np

    kids = [r for r in part.regions if r.parent_idx == 0]
    if not kids:
        return None
    f = kids[0].rule.features[0]
    sub = kids[0].rule[f]
    if hasattr(sub, "lo"):
        pos = sub.hi if np.isfinite(sub.hi) else sub.lo
        return {"feature": names[f], "position": float(pos)}
    return {"feature": names[f], "levels": sorted(float(v) for v in sub.levels)}


def _peer_main(folder: str) -> None:
    import effector
    import numpy as np
    import xgboost as xgb

    tmp = Path(folder)
    names = json.loads((tmp / "names.json").read_text())
    X = np.load(tmp / "X.npy")
    booster = xgb.Booster()
    booster.load_model(str(tmp / "model.json"))
    booster.feature_names = None  # numpy rows, as effector passes them

    def predict(x):
        return booster.inplace_predict(np.ascontiguousarray(x, dtype=np.float64))

    gap = float(np.max(np.abs(predict(X[:1000]) - np.load(tmp / "check.npy"))))
    schema = {"feature_names": names}
    answer = {"max_prediction_gap": gap, "pdp": _measure(lambda: effector.PDP(X, predict, schema=schema), names),
              "shapdp": {"why": "ShapDP did not finish in the time given"}}
    (tmp / "answer.json").write_text(json.dumps(answer))  # kept if ShapDP runs out of time
    if os.environ.get("PDPX_EFFECTOR_SHAPDP") == "0":
        answer["shapdp"] = {"why": "skipped: PDPX_EFFECTOR_SHAPDP=0"}
    elif importlib.util.find_spec("shap") is None:
        answer["shapdp"] = {"why": "shap is not installed in the peer's environment"}
    else:
        try:
            answer["shapdp"] = _measure(lambda: effector.ShapDP(X, predict, schema=schema), names)
        except Exception as exc:  # the PDP answer stands; say why ShapDP has none
            answer["shapdp"] = {"why": f"ShapDP failed: {type(exc).__name__}: {exc}"}
    (tmp / "answer.json").write_text(json.dumps(answer))


def _measure(make, names: list) -> dict:
    """One effector method: its time (the object on the rows, ``fit("all")``, every ``heter_score``,
    ``find_regions(features="all")``), its scores and its root splits."""
    t0 = time.perf_counter()
    effect = make()
    effect.fit("all")
    t_fit = time.perf_counter() - t0
    heter = {names[f]: effect.heter_score(f) for f in range(len(names))}
    parts = effect.find_regions(features="all")
    seconds = time.perf_counter() - t0
    splits = {}
    for name, part in parts.items():
        leaves = [part.label(r.idx) for r in part.leaves] if len(part.regions) > 1 else []
        splits[name] = [_first_split(part, names), leaves]
    return {"seconds": seconds, "fit_seconds": t_fit, "heterogeneity": heter, "splits": splits,
            "nof_instances": int(effect.nof_instances)}


if __name__ == "__main__":
    _peer_main(sys.argv[1])
