"""A Spark ML decision tree's or random forest's *classifier* trees, read from the model's saved form.

Their class probabilities come from each leaf's class counts (``impurityStats``), which the model's
debug text does not print. ``model.write().save(path)`` stores them: Parquet under ``path/data``, one
row per node (a random forest: a ``treeID`` and the node as the struct ``nodeData``) holding ``id``,
``impurityStats``, ``leftChild`` and ``rightChild`` (``-1`` at a leaf) and ``split``
(``featureIndex``; ``leftCategoriesOrThreshold``, the threshold of a numeric split or the categories
going left; ``numCategories``, ``-1`` for a numeric split). pdpx saves the model into a temporary
folder on this machine (``file://``: the driver's own disk), reads the Parquet with pandas (pyarrow)
and deletes the folder. Saving goes through the model's own writer, so it works under Spark Connect
(no JVM object is walked from Python); the files must be where this Python can read them, which
holds for a local session and for a Connect server on this machine. When Spark writes them
elsewhere (on a cluster, its executors' disks), :class:`SavedFormUnreadable` says so and the model
is averaged through its ``transform`` instead.

Spark's rule, which the trees here reproduce (checked against ``transform``'s ``probability`` in
tests/adapters/test_sparkml.py): a tree's probabilities are its leaf's class counts
divided by their sum; a forest adds its trees' normalised vectors and divides by their sum, which
is the mean of the trees' vectors (each sums to one). A leaf whose counts sum to zero (Spark then
leaves the tree out of the vote) is refused.
"""

from __future__ import annotations

import glob
import os
import tempfile

import numpy as np
import pandas as pd

from ..core.errors import PdpxError


class SavedFormUnreadable(PdpxError):
    """The model's saved form could not be written or read here (the trees then are not read)."""


def saved_nodes(tree) -> pd.DataFrame:
    """The node rows of ``tree``'s saved form (columns ``treeID``, ``id``, ``impurityStats``, ``leftChild``,
    ``rightChild``, ``split``), saved into a temporary folder of this machine and read back."""
    with tempfile.TemporaryDirectory(prefix="pdpx-sparkml-") as folder:
        path = os.path.join(folder, "model")
        try:
            tree.write().overwrite().save("file://" + path)
        except Exception as exc:  # noqa: BLE001 - any failure of Spark's writer: the trees are not read
            raise SavedFormUnreadable(f"Spark could not save the model to a temporary folder of this machine "
                                      f"({type(exc).__name__}: {str(exc)[:200]})") from exc
        files = sorted(glob.glob(os.path.join(path, "data", "*.parquet")))
        if not files:
            raise SavedFormUnreadable(
                "Spark saved the model where this Python cannot read it (on a cluster its executors write the "
                "files to their own disks); pdpx reads a decision tree's or forest's class counts from the saved "
                "model on the driver's disk")
        frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    if "nodeData" in frame.columns:  # a forest: one struct per node, with its tree's id
        nodes = pd.DataFrame(list(frame["nodeData"]))
        nodes.insert(0, "treeID", frame["treeID"].to_numpy())
        return nodes
    return frame.assign(treeID=0)


def classifier_trees(frame: pd.DataFrame, n_classes: int) -> list:
    """The trees of a saved frame (:func:`saved_nodes`) as ``[(1.0, nodes)]`` in the node lists of
    :func:`pdpx.adapters.sparkml_trees.parse`, each leaf's value its class counts divided by their sum."""
    trees = []
    for _, rows in sorted(frame.groupby("treeID"), key=lambda kv: kv[0]):
        rows = rows.sort_values("id")
        where = {int(node): k for k, node in enumerate(rows["id"])}
        nodes: dict = {k: [] for k in ("feature", "threshold", "left", "right", "value", "cats")}
        for node in rows.itertuples(index=False):
            stats = np.asarray(node.impurityStats, dtype=np.float64)
            split = node.split
            leaf = int(node.leftChild) < 0
            if leaf and (len(stats) != n_classes or not stats.sum() > 0):
                raise PdpxError(f"a leaf of the saved Spark ML model holds {len(stats)} class counts summing to "
                                f"{stats.sum()!r}; pdpx reads leaves with {n_classes} counts of positive sum")
            bounds = [float(v) for v in split["leftCategoriesOrThreshold"]]
            numeric = int(split["numCategories"]) < 0
            nodes["feature"].append(-1 if leaf else int(split["featureIndex"]))
            nodes["threshold"].append(bounds[0] if numeric and not leaf else 0.0)
            nodes["cats"].append(None if numeric or leaf else [int(v) for v in bounds])
            nodes["left"].append(-1 if leaf else where[int(node.leftChild)])
            nodes["right"].append(-1 if leaf else where[int(node.rightChild)])
            nodes["value"].append(stats / stats.sum() if leaf else np.zeros(n_classes))
        trees.append((1.0, nodes))
    return trees
