"""Compile the tree kernels ahead of the first call (``make setup`` runs :func:`warm_up`)."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pandas as pd

from ...core.ir import TreeEnsemble, TreeModel, numeric_encoder, numeric_values
from ...core.method import Request
from . import engine


def warm_up() -> float:
    """Compile (or load from numba's on-disk cache) every tree kernel; returns seconds taken.

    ``make setup`` runs this once, so the first partial dependence call of a session
    only loads compiled code.
    """
    t0 = time.perf_counter()
    ens = TreeEnsemble(
        left=np.array([1, -1, -1]), right=np.array([2, -1, -1]), feature=np.array([0, -1, -1]),
        threshold=np.array([0.5, 0.0, 0.0]), missing_left=np.array([True, False, False]),
        value=np.array([0.0, 1.0, 2.0]), node_weight=np.array([2.0, 1.0, 1.0]),
        tree_start=np.array([0, 3]), tree_group=np.array([0]), n_features=2,
    )
    tm = TreeModel(ens, numeric_encoder, numeric_values)

    X = pd.DataFrame({"a": [0.0, 1.0], "b": [0.0, 1.0]})
    for grid in ([0.0, 1.0], [1.0, 0.0]):  # sorted grids (regions as intervals) and others (grid masks)
        for kernel in ("oblivious", "leafsets", "partition"):
            for kind in ("average", "both"):
                req = Request(X=X, features=[0], grid_values=[np.array(grid)], categorical=[False],
                              response="predict", outputs=[0], kind=kind, sample_weight=None, memory_budget=2**24,
                              options={"kernel": kernel})
                engine.exact(tm, req)
        engine.recursion(tm, req)
    # a non-linear link's average: the oblivious products kernel
    logistic = TreeModel(dataclasses.replace(ens, link="logistic"), numeric_encoder, numeric_values)
    req = Request(X=X, features=[1], grid_values=[np.array([0.0, 1.0])], categorical=[False], response="predict",
                  outputs=[0], kind="average", sample_weight=None, memory_budget=2**24, options={"kernel": "oblivious"})
    engine.exact(logistic, req)
    return time.perf_counter() - t0
