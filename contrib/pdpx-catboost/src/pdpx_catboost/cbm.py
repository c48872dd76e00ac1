"""Reading CatBoost's binary model format (``.cbm``) with numpy: the fast path of the tree reader.

A ``.cbm`` buffer is the 4 bytes ``CBM1``, a little-endian ``uint32`` size, then a
FlatBuffers table ``TModelCore`` whose field 1 is the trees (``TObliviousTrees`` in
CatBoost's schema ``catboost/libs/model/flatbuffers/model.fbs``). The fields read here
(field numbers as in the schema):

* trees: 0 ``ApproxDimension`` int, 1 ``TreeSplits`` [int] (per tree and depth, an index
  into the model's *binary features*), 2 ``TreeSizes`` [int] (depths), 4 ``CatFeatures``,
  5 ``FloatFeatures``, 6 ``OneHotFeatures``, 7 ``CtrFeatures``, 8 ``LeafValues`` [double],
  9 ``LeafWeights`` [double], 10 ``NonSymmetricStepNodes``, 12 ``TextFeatures``,
  13 ``EstimatedFeatures``, 18 ``EmbeddingFeatures`` (14-17, the scale, bias and a
  repacked copy of the splits, are not needed: the scale and bias come from
  ``get_scale_and_bias()``);
* a float feature: 1 ``Index``, 2 ``FlatIndex``, 3 ``Borders`` [float], 5
  ``NanValueTreatment`` (0 ``AsIs``, 1 ``AsFalse``, 2 ``AsTrue``);
* a categorical feature: 1 ``FlatIndex``; a one-hot feature: 0 ``Index`` (of the
  categorical feature), 1 ``Values`` [int] (the category hashes).

The binary features are numbered as CatBoost lists them: every border of every float
feature in order, then every value of every one-hot feature. Models with anything else
(CTRs, text or embedding features, non-symmetric trees) are left to the JSON reader
(:func:`read_cbm` returns None), which names what it cannot read. The JSON reader stays
the reference: a test checks that both give the same ensemble on every model of the tests.
"""

from __future__ import annotations

import struct

import numpy as np

#: CatBoost's ``ENanValueTreatment`` by number, as the JSON export names it.
NAN_TREATMENTS = ("AsIs", "AsFalse", "AsTrue")


class FlatTable:
    """One FlatBuffers table of a little-endian buffer: fields by number (None when absent)."""

    def __init__(self, buf: bytes, pos: int):
        self.buf = buf
        self.pos = pos
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        vt_size = struct.unpack_from("<H", buf, vt)[0]
        self.slots = struct.unpack_from(f"<{(vt_size - 4) // 2}H", buf, vt + 4)

    def _at(self, field: int) -> int | None:
        if field >= len(self.slots) or self.slots[field] == 0:
            return None
        return self.pos + self.slots[field]

    def scalar(self, field: int, fmt: str, default):
        """A scalar field (``struct`` format ``fmt``), or its schema default when absent."""
        at = self._at(field)
        return default if at is None else struct.unpack_from("<" + fmt, self.buf, at)[0]

    def _target(self, field: int) -> int | None:
        at = self._at(field)
        return None if at is None else at + struct.unpack_from("<I", self.buf, at)[0]

    def vector(self, field: int, dtype) -> np.ndarray:
        """A vector of scalars as a numpy array (empty when absent)."""
        at = self._target(field)
        if at is None:
            return np.zeros(0, dtype=dtype)
        n = struct.unpack_from("<I", self.buf, at)[0]
        return np.frombuffer(self.buf, dtype=np.dtype(dtype).newbyteorder("<"), count=n, offset=at + 4)

    def length(self, field: int) -> int:
        """The number of elements of a vector field (0 when absent)."""
        at = self._target(field)
        return 0 if at is None else struct.unpack_from("<I", self.buf, at)[0]

    def tables(self, field: int) -> list[FlatTable]:
        """A vector of tables."""
        at = self._target(field)
        if at is None:
            return []
        n = struct.unpack_from("<I", self.buf, at)[0]
        offs = struct.unpack_from(f"<{n}I", self.buf, at + 4)
        return [FlatTable(self.buf, at + 4 + 4 * i + o) for i, o in enumerate(offs)]

    def table(self, field: int) -> FlatTable | None:
        """A sub-table."""
        at = self._target(field)
        return None if at is None else FlatTable(self.buf, at)


def core_table(buf: bytes) -> FlatTable:
    """The ``TModelCore`` table of a ``.cbm`` buffer (ValueError when the buffer is not one)."""
    if len(buf) < 12 or buf[:4] != b"CBM1":
        raise ValueError("not a CatBoost binary model (no CBM1 header)")
    size = struct.unpack_from("<I", buf, 4)[0]
    core = memoryview(buf)[8:8 + size].tobytes() if size + 8 < len(buf) else bytes(buf[8:])
    return FlatTable(core, struct.unpack_from("<I", core, 0)[0])


def read_cbm(buf: bytes) -> dict | None:
    """The trees of a ``.cbm`` buffer as arrays, or None when the JSON reader must read them.

    Returns a dict with ``dim``, ``depths`` (n_trees,), ``leaf_values`` (flat, leaf-major,
    ``dim`` per leaf), ``leaf_weights`` (flat, one per leaf, or None), and per binary
    feature ``split_feature`` (flat position), ``split_threshold`` (float32 border, NaN for
    one-hot), ``split_nan_left``, ``split_value`` (one-hot hash, 0 for numeric) and
    ``split_is_cat``; ``one_hot_values`` (flat position -> hashes in order);
    ``tree_splits`` (per tree and depth, the binary feature).
    """
    trees = core_table(buf).table(1)
    if trees is None:
        return None
    for field in (7, 10, 12, 13, 18):  # CTRs, non-symmetric trees, text, estimated, embedding features
        if trees.length(field):
            return None
    if len(trees.slots) > 19 and any(trees.slots[19:]):  # fields newer than the schema read here
        return None
    cat_flat = {}
    for cf in trees.tables(4):
        cat_flat[cf.scalar(0, "i", -1)] = cf.scalar(1, "i", -1)
    feat, thr, nan_left, value, is_cat = [], [], [], [], []
    for ff in trees.tables(5):
        borders = np.asarray(ff.vector(3, np.float32), dtype=np.float64)
        nan = NAN_TREATMENTS[ff.scalar(5, "b", 0)]
        feat.append(np.full(len(borders), ff.scalar(2, "i", -1), dtype=np.int64))
        thr.append(borders)
        nan_left.append(np.full(len(borders), nan != "AsTrue"))
        value.append(np.zeros(len(borders), dtype=np.int64))
        is_cat.append(np.zeros(len(borders), dtype=bool))
    one_hot_values: dict[int, list[int]] = {}
    for oh in trees.tables(6):
        index = oh.scalar(0, "i", -1)
        if index not in cat_flat:
            return None
        vals = oh.vector(1, np.int32).astype(np.int64)
        one_hot_values[int(cat_flat[index])] = [int(v) for v in vals]
        feat.append(np.full(len(vals), cat_flat[index], dtype=np.int64))
        thr.append(np.full(len(vals), np.nan))
        nan_left.append(np.ones(len(vals), dtype=bool))
        value.append(vals)
        is_cat.append(np.ones(len(vals), dtype=bool))
    cat = lambda parts, dtype: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)  # noqa: E731
    depths = trees.vector(2, np.int32).astype(np.int64)
    splits = trees.vector(1, np.int32).astype(np.int64)
    n_binary = sum(len(t) for t in thr)
    if len(splits) != depths.sum() or (len(splits) and (splits.min() < 0 or splits.max() >= n_binary)):
        return None
    dim = int(trees.scalar(0, "i", 0)) or 1
    n_leaves = int((2 ** depths).sum())
    values = trees.vector(8, np.float64)
    weights = trees.vector(9, np.float64)
    if len(values) != n_leaves * dim:
        return None
    return {
        "dim": dim, "depths": depths, "tree_splits": splits, "leaf_values": np.array(values),
        "leaf_weights": np.array(weights) if len(weights) == n_leaves else None,
        "split_feature": cat(feat, np.int64), "split_threshold": cat(thr, np.float64),
        "split_nan_left": cat(nan_left, bool), "split_value": cat(value, np.int64),
        "split_is_cat": cat(is_cat, bool), "one_hot_values": one_hot_values,
    }
