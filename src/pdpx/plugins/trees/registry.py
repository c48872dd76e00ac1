"""The kernels' records, collected from their modules: what the planner, the compiler and the warm-up read.

Each module of :data:`MODULES` declares ``RECORDS``, a tuple of
:class:`.records.KernelRecord` (its kernels' names, when they fit, their compiled
functions and cold-compile seconds, what they run besides, their warm-up cases).
Adding a kernel: a module with its ``RECORDS`` and its name here; the planner
(:mod:`.plan`) picks it where its ``fits`` says so, :mod:`.jit` knows its
compile cost and :mod:`.warmup` compiles it.

The modules are imported by name when first asked (they import numba), so reading
this module costs nothing.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from functools import lru_cache

#: The modules of ``exact``'s row kernels, of recursion and of what they share (warm-up families ``leafsets``,
#: ``partition``, ``oblivious``, and the NaN scan of :mod:`.partition`), in the planner's order of preference.
ROW_MODULES = ("kernels", "oblivious", "products", "leafsets", "partition")
#: The modules of the pattern counts and the averaged curves (warm-up family ``counts``): a call that walks its
#: rows never imports them.
COUNTS_MODULES = ("counts_kernels", "counts_patterns", "curve_means", "curve_moments")
#: Every module declaring ``RECORDS``.
MODULES = ROW_MODULES + COUNTS_MODULES


@lru_cache(maxsize=None)
def records(modules: tuple = MODULES) -> tuple:
    """Every :class:`.records.KernelRecord` of ``modules`` (default: all), in their order."""
    out = []
    for module in modules:
        out.extend(importlib.import_module(f"{__package__}.{module}").RECORDS)
    names = [r.name for r in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:  # pragma: no cover - a kernel module's mistake
        raise RuntimeError(f"kernel records named twice: {dup}")
    return tuple(out)


def row_records() -> tuple:
    """The records of :data:`ROW_MODULES` (what walking the rows and recursion run)."""
    return records(ROW_MODULES)


@lru_cache(maxsize=None)
def by_name(modules: tuple = MODULES) -> dict:
    """The records of ``modules`` by name."""
    return {r.name: r for r in records(modules)}


def record(name: str):
    """The record named ``name`` (the row modules' first, so that planning a row walk imports no other)."""
    rec = by_name(ROW_MODULES).get(name)
    return rec if rec is not None else by_name()[name]


def runs(names, plan) -> frozenset:
    """The compiled functions (``module.function``) the records ``names`` run for ``plan``: theirs and those of
    the records they use (:attr:`.records.KernelRecord.uses`), recursively."""
    out: set = set()
    todo = list(names)
    seen: set = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        rec = record(name)
        out |= rec.compiled
        if rec.uses is not None:
            todo.extend(rec.uses(plan))
    return frozenset(out)


@lru_cache(maxsize=None)
def cold_seconds_table(families: tuple | None = None, engines: tuple | None = None) -> dict:
    """``{module.function: cold-compile seconds}`` of the records of ``families`` and ``engines`` (None: all).

    Families without ``"counts"`` are read from the row modules alone (:data:`COUNTS_MODULES` declare that
    family only; ``tests/plugins/trees/test_plan.py`` checks it)."""
    pool = row_records() if families is not None and "counts" not in families else records()
    return {f"{r.module}.{f}": s for r in pool for f, s in r.functions.items()
            if (families is None or r.family in families) and (engines is None or r.engine in engines)}


def families() -> tuple:
    """The warm-up families, in record order."""
    return tuple(dict.fromkeys(r.family for r in records() if r.family))


def cases(family: str) -> list:
    """``(record, case)`` of every warm-up case of ``family``."""
    return [(r, c) for r in records() if r.family == family for c in r.cases]


_recorders: list = []


def ran(*names: str) -> None:
    """Executors call this with the records (:attr:`.records.KernelRecord.name`) they run, at the point they run
    them; :func:`recording` collects them (to compare with the plan's :attr:`.plan.Plan.records`). Nothing is
    kept when nobody records."""
    for got in _recorders:
        got.extend(names)


@contextmanager
def recording():
    """``with recording() as got:`` the names of the records run inside the block (:func:`ran`), in order."""
    got: list = []
    _recorders.append(got)
    try:
        yield got
    finally:
        _recorders.remove(got)
