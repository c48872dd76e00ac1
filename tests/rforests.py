"""A hand-made randomForest forest (no R needed) and its prediction written out by hand.

Used by the randomForest adapter's tests and the R bridge's tests.
"""

import numpy as np
import pandas as pd

# tree 1: x <= 0.5 ? 1.0 : 3.0            (nodes 1..3)
# tree 2: f in {a, c} ? 10.0 : 20.0       (factor with 3 levels: mask 0b101 = 5)
# tree 3: x <= 0.25 ? (f in {b} ? 5 : 7) : 9


def padded_forest():
    nrnodes = 5
    ld = np.zeros((nrnodes, 3))
    rd = np.zeros((nrnodes, 3))
    status = np.zeros((nrnodes, 3))
    bestvar = np.zeros((nrnodes, 3))
    split = np.zeros((nrnodes, 3))
    pred = np.zeros((nrnodes, 3))
    # tree 1
    ld[0, 0], rd[0, 0], status[:3, 0], bestvar[0, 0], split[0, 0] = 2, 3, [-3, -1, -1], 1, 0.5
    pred[1:3, 0] = [1.0, 3.0]
    # tree 2
    ld[0, 1], rd[0, 1], status[:3, 1], bestvar[0, 1], split[0, 1] = 2, 3, [-3, -1, -1], 2, 5
    pred[1:3, 1] = [10.0, 20.0]
    # tree 3
    ld[:2, 2], rd[:2, 2] = [2, 4], [3, 5]
    status[:5, 2] = [-3, -3, -1, -1, -1]
    bestvar[:2, 2] = [1, 2]
    split[:2, 2] = [0.25, 2]
    pred[2:5, 2] = [9.0, 5.0, 7.0]
    return {
        "ndbigtree": [3, 3, 5], "nrnodes": nrnodes, "leftDaughter": ld, "rightDaughter": rd,
        "nodestatus": status, "bestvar": bestvar, "xbestsplit": split, "nodepred": pred,
        "ncat": [1, 3], "xlevels": {"x": 0.0, "f": ["a", "b", "c"]},
    }


def hand_prediction(x, f):
    t1 = 1.0 if x <= 0.5 else 3.0
    t2 = 10.0 if f in ("a", "c") else 20.0
    t3 = (5.0 if f == "b" else 7.0) if x <= 0.25 else 9.0
    return (t1 + t2 + t3) / 3


def hand_X():
    x = np.array([0.0, 0.25, 0.2500001, 0.5, 0.75, 1.0, 0.1])
    f = pd.Categorical(["a", "b", "c", "b", "a", "c", "b"], categories=["a", "b", "c"])
    return pd.DataFrame({"x": x, "f": f})


def as_layouts(forest):
    """The same forest as padded 2-D arrays, flat column-major lists, compact raw bytes."""
    flat = {k: (np.asarray(v).ravel(order="F").tolist() if isinstance(v, np.ndarray) else v) for k, v in forest.items()}
    nd = np.asarray(forest["ndbigtree"])
    compact = dict(forest)
    for k in ("leftDaughter", "rightDaughter", "nodestatus", "bestvar", "xbestsplit", "nodepred"):
        a = forest[k]
        compact[k] = bytearray(np.concatenate([a[: nd[t], t] for t in range(a.shape[1])]).astype("<f8").tobytes())
    compact.pop("nrnodes")
    compact["ndbigtree"] = bytearray(nd.astype("<f8").tobytes())
    return {"padded": forest, "flat": flat, "compact": compact}


