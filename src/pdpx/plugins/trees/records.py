"""What a kernel module declares about itself, once: :class:`KernelRecord` (and its warm-up :class:`Case`).

Each kernel module (:mod:`.kernels`, :mod:`.oblivious`, :mod:`.products`,
:mod:`.leafsets`, :mod:`.partition`, :mod:`.counts_kernels`,
:mod:`.counts_patterns`, :mod:`.curve_means`) ends with its records: the name the
planner (:mod:`.plan`) gives the kernel, the engine it serves, when it fits a model,
its compiled functions with each one's cold-compile seconds, the shared functions it
runs besides its own, and the tiny cases the warm-up (:mod:`.warmup`) runs to compile
it for the argument types real calls give it. :mod:`.registry` collects them; the
planner, the first-call logic (:mod:`.jit`) and the warm-up read them, so nothing else
names a compiled function. :mod:`.routing` declares none: its functions (the routing rule
and its block forms) are inlined into the kernels that call them and compiled with them.

This module imports nothing of the tree machinery: every kernel module can import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Case:
    """One warm-up run: ``run`` names what :mod:`.warmup` runs (``"exact"``, ``"recursion"``, ``"counts"``,
    ``"means"``); the tiny model's link, margins and depth; the kernel option, the kind and the grids."""

    run: str = "exact"
    kernel: str = "auto"
    kind: str = "average"
    link: str = "identity"
    n_margins: int = 1
    depth: int = 1
    grids: tuple = ((0.0, 1.0), (1.0, 0.0))  # sorted (regions as intervals) and not (grid masks)


#: A sorted grid only (regions as intervals): for the cases that add a link or margins to the common ones.
SORTED = ((0.0, 1.0),)


@dataclass(frozen=True)
class KernelRecord:
    """A kernel's facts, declared once in its module (see the module docstring).

    Attributes
    ----------
    name : str
        The kernel's name in a :class:`.plan.Plan` (``plan.kernel``) and in ``method_options``.
    module : str
        Its module in this package (``"leafsets"``); compiled functions are named ``module.function``.
    engine : str
        What it serves: ``"rows"`` (``exact``'s row kernels), ``"counts"`` (pattern counts),
        ``"means"`` (averaged ICE curves), ``"recursion"``, or ``"shared"`` (parts the others run).
    functions : dict
        Its compiled functions (names in ``module``) and the seconds each takes to compile from
        scratch, measured with an empty numba cache (``benchmarks/bench_first_call.py``; rounded up).
    fits : callable or None
        ``fits(ensemble, budget, order) -> bool``, read with numpy only (nothing compiled): whether ``auto``
        may take it for a :class:`~pdpx.core.ir.TreeEnsemble` (None: any).
    uses : callable or None
        ``uses(plan) -> iterable`` of the names of the other records whose functions it runs too, for a
        :class:`.plan.Plan` (regions, corners, the link: what the plan's flags decide);
        :func:`.registry.runs` follows them.
    family : str
        The warm-up process that compiles it (:data:`.warmup.FAMILIES`).
    cases : tuple of Case
        What the warm-up runs to compile it for the argument types of real calls.
    """

    name: str
    module: str
    engine: str
    functions: dict = field(default_factory=dict)
    fits: Callable | None = None
    uses: Callable | None = None
    family: str = ""
    cases: tuple = ()

    @property
    def compiled(self) -> frozenset:
        """Its own compiled functions, as ``module.function``."""
        return frozenset(f"{self.module}.{f}" for f in self.functions)
