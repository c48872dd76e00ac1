"""The columns of X behind a Spark ML tree model's feature vector, read from the ``PipelineModel`` before it.

pdpx reads pipelines whose stages before the tree model are ``StringIndexer`` models, ``OneHotEncoder``
models of their outputs and one ``VectorAssembler``. The assembler's inputs, in order, fill the
feature vector's slots: a number one slot (its value), a ``StringIndexer``'s output one slot (the
text's code: its position in the indexer's labels), a ``OneHotEncoder``'s output as many slots as
its vector has. A missing text is the code after the labels where the indexer keeps invalid values
(``handleInvalid="keep"``; Spark refuses it otherwise). Spark's encoder puts code ``k`` in slot ``k``
and leaves the others 0; the vector
has one slot per category of its input, one more with ``handleInvalid="keep"`` (where invalid codes
go) and one fewer with ``dropLast`` (the default: the last category is all zeros). :func:`slots_of`
gives each slot's column and, for a one-hot slot, its value at each of the column's codes, so that
:func:`pdpx.adapters.sparkml_trees.onto_columns` moves every split onto the column it reads: partial
dependence is then over the text column's levels (tests/adapters/test_sparkml.py checks it
against the pipeline's own ``transform``).
"""

from __future__ import annotations

from ..core.errors import PdpxError

READ = ("StringIndexerModel", "OneHotEncoderModel", "VectorAssembler")


def _pairs(stage) -> list:
    """``(input column, output column)`` of each column a one- or many-column stage transforms."""
    if stage.isSet("inputCols"):
        return list(zip(stage.getInputCols(), stage.getOutputCols()))
    return [(stage.getInputCol(), stage.getOutputCol())]


def _onehot_slots(stage, labels: dict, indexed: dict, keeps: dict) -> dict:
    """Per output column of a ``OneHotEncoderModel``: (the text column, the slots' values at its codes, the code
    of a missing value or None)."""
    sizes = list(stage.categorySizes)
    extra = (1 if stage.getHandleInvalid() == "keep" else 0) - (1 if stage.getDropLast() else 0)
    out = {}
    for (source, target), size in zip(_pairs(stage), sizes):
        if source not in indexed:
            raise PdpxError(f"the OneHotEncoder of {source!r} encodes a column no StringIndexer of the pipeline "
                            "makes; pdpx reads one-hot encoders of StringIndexer outputs only. Pass a function "
                            "that predicts a pandas DataFrame instead")
        column = indexed[source]
        codes = range(len(labels[column]) + (column in keeps))
        out[target] = (column, [tuple(1.0 if k == j else 0.0 for k in codes) for j in range(int(size) + extra)],
                       keeps.get(column))
    return out


def slots_of(stages: list, n_slots: int) -> tuple[list, list, list]:
    """X's columns (names), their StringIndexer labels (None: a number) and each slot's ``(column position,
    values or None, the code of a missing value or None)`` for the stages before a tree model reading ``n_slots``
    slots."""
    kinds = [type(s).__name__ for s in stages]
    other = [k for k in kinds if k not in READ]
    if other or kinds.count("VectorAssembler") != 1:
        raise PdpxError(f"pdpx reads a Spark ML pipeline of StringIndexer and OneHotEncoder models, one "
                        f"VectorAssembler and a tree model; this one has {other or kinds}. Pass a function that "
                        "predicts a pandas DataFrame instead")
    labels: dict = {}
    indexed: dict = {}  # an indexer's output column -> its input (text) column
    keeps: dict = {}  # a text column whose indexer keeps invalid values -> their code (after the labels)
    for stage in stages:
        if type(stage).__name__ == "StringIndexerModel":
            for (source, target), lab in zip(_pairs(stage), stage.labelsArray):
                labels[source], indexed[target] = tuple(lab), source
                if stage.getHandleInvalid() == "keep":
                    keeps[source] = len(lab)
    onehot: dict = {}
    for stage in stages:
        if type(stage).__name__ == "OneHotEncoderModel":
            onehot.update(_onehot_slots(stage, labels, indexed, keeps))
    names: list = []
    slots: list = []
    for col in next(s for s in stages if type(s).__name__ == "VectorAssembler").getInputCols():
        source = indexed.get(col, col)
        column, values, missing = onehot.get(col, (source, [None], keeps.get(source)))
        if column not in names:
            names.append(column)
        slots.extend((names.index(column), v, missing) for v in values)
    if len(slots) != n_slots:
        raise PdpxError(f"the VectorAssembler makes {len(slots)} slots but the tree model reads {n_slots}; pdpx "
                        "reads assemblers of numbers, StringIndexer and OneHotEncoder outputs")
    return names, [labels.get(c) for c in names], slots
