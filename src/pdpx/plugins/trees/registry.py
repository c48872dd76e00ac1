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
from functools import lru_cache

#: The modules declaring ``RECORDS``, in the planner's order of preference within an engine.
MODULES = ("kernels", "oblivious", "products", "leafsets", "partition", "counts_kernels", "counts_patterns",
           "curve_means")


@lru_cache(maxsize=None)
def records() -> tuple:
    """Every :class:`.records.KernelRecord`, in :data:`MODULES` order."""
    out = []
    for module in MODULES:
        out.extend(importlib.import_module(f"{__package__}.{module}").RECORDS)
    names = [r.name for r in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:  # pragma: no cover - a kernel module's mistake
        raise RuntimeError(f"kernel records named twice: {dup}")
    return tuple(out)


@lru_cache(maxsize=None)
def by_name() -> dict:
    """The records by name."""
    return {r.name: r for r in records()}


def record(name: str):
    """The record named ``name``."""
    return by_name()[name]


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
    """``{module.function: cold-compile seconds}`` of the records of ``families`` and ``engines`` (None: all)."""
    return {f"{r.module}.{f}": s for r in records() for f, s in r.functions.items()
            if (families is None or r.family in families) and (engines is None or r.engine in engines)}


def families() -> tuple:
    """The warm-up families, in record order."""
    return tuple(dict.fromkeys(r.family for r in records() if r.family))


def cases(family: str) -> list:
    """``(record, case)`` of every warm-up case of ``family``."""
    return [(r, c) for r in records() if r.family == family for c in r.cases]
