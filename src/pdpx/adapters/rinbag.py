"""The in-bag counts R's forests keep when fitted with ``keep.inbag = TRUE`` (randomForest's ``inbag``, ranger's
``inbag.counts``), as the R package sends them: ``{"counts": raw float64 bytes, "n": training rows}``, the
counts of tree 1 for every row, then tree 2's, and so on (randomForest's ``n x ntree`` matrix in R's column
order; ranger's list of one vector per tree, unlisted). :func:`inbag_counts` returns them as pdpx reads in-bag
counts, ``(n_training_rows, n_trees)``, or refuses, saying how to refit."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import PdpxError
from ..r_wire import as_array


def inbag_counts(inbag: Any, library: str, n_trees: int) -> np.ndarray:
    """``(n, n_trees)`` int64 counts from the R package's ``inbag`` (module docstring); ``library`` names the
    model in the message when there are none."""
    if inbag is None:
        raise PdpxError(f"this {library} forest kept no in-bag counts; refit it with keep.inbag = TRUE (and "
                        "replace = TRUE, the default: rows drawn with replacement)")
    n = int(as_array([inbag["n"]])[0])
    flat = as_array(inbag["counts"])
    if n <= 0 or flat.size != n * n_trees or np.any(~np.isfinite(flat)):
        raise PdpxError(f"the {library} forest's in-bag counts hold {flat.size} values, not {n} rows x {n_trees} "
                        "trees; refit it with keep.inbag = TRUE")
    return np.ascontiguousarray(flat.reshape(n_trees, n).T.astype(np.int64))
