"""Compile every kernel of pdpx (the tree machinery's and the measures') ahead of the first call, into numba's cache.

``make setup`` and the R package's ``install_pdpx()`` run ``python -m
pdpx.plugins.trees.warmup`` once after installing; ``method="auto"`` starts it in the
background when a call would otherwise wait for a compilation
(:mod:`.jit`). Each kernel is compiled for the argument types real calls give it,
so a later call only loads machine code.

    python -m pdpx.plugins.trees.warmup [--jobs N] [--background]

Every kernel of pdpx is compiled: the tree machinery's, by the cases of their records
(:mod:`.registry`), and those of the modules outside it that compile through
:func:`pdpx.core.compiler.njit` (:data:`pdpx.core.compiler.ELSEWHERE`: the regions' split sums), by
their ``warm_up()`` (family ``measures``).

``--jobs``: compile the kernel families (``exact``'s three, the pattern counts' and the measures') in up
to N processes at once (default: the cores, at most 4), this one included; the families are shared out so
that each process has about the same compile time (:func:`shares`, from the records' cold seconds).
``--background``: on otherwise idle cores only, and only if no other background compilation holds the lock
(one per user and cache, a file in the user's private folder,
:func:`pdpx.core.userdir.private_dir`; without such a folder, no lock: at worst two compilations at once).
Processes started here import nothing from the working folder (:func:`.jit.module_command`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd

from ...core import compiler
from ...core.ir import TreeEnsemble, TreeModel, numeric_encoder, numeric_values
from ...core.method import Request
from ...core.userdir import open_private, private_dir
from . import engine, registry
from .jit import module_command

#: The family of the kernels outside the tree machinery (:data:`pdpx.core.compiler.ELSEWHERE`), which declare
#: no records: their modules' ``warm_up()`` compiles them.
MEASURES = "measures"
#: The kernel families, each compiled by one process when several run at once (the records' ``family``,
#: :mod:`.records`, names one of them; :data:`MEASURES` the rest).
FAMILIES = ("leafsets", "partition", "oblivious", "counts", MEASURES)


def _model(link: str = "identity", n_margins: int = 1, depth: int = 1) -> TreeModel:
    """Tiny ensembles of oblivious trees of ``depth`` on two features, one tree per margin (every kernel can
    run them)."""
    left, right, feature, threshold, value = [], [], [], [], []
    n_internal = 2**depth - 1
    size = 2 * n_internal + 1
    for m in range(n_margins):
        base = m * size
        for i in range(size):
            inner = i < n_internal
            left.append(base + 2 * i + 1 if inner else -1)
            right.append(base + 2 * i + 2 if inner else -1)
            feature.append(((i + 1).bit_length() - 1) % 2 if inner else -1)  # level l splits on feature l % 2
            threshold.append(0.5 if inner else 0.0)
            value.append(0.0 if inner else float(i - n_internal + m))
    n = len(left)
    ens = TreeEnsemble(
        left=np.array(left), right=np.array(right), feature=np.array(feature), threshold=np.array(threshold),
        missing_left=np.zeros(n, dtype=bool), value=np.array(value), node_weight=np.ones(n),
        tree_start=np.arange(n_margins + 1) * size, tree_group=np.arange(n_margins), n_features=2,
        n_margins=n_margins, base_score=np.zeros(n_margins), link=link,
    )
    return TreeModel(ens, numeric_encoder, numeric_values)


def _run(tm: TreeModel, kernel: str, kind: str, grid, features=(0,), method=engine.exact) -> None:
    X = pd.DataFrame({"a": [0.0, 1.0, np.nan], "b": [1.0, 0.0, 0.3]})
    outputs = list(range(tm.ensemble.n_margins if tm.ensemble.link != "binary_logistic" else 2))
    req = Request(X=X, features=list(features), grid_values=[np.array(g, dtype=float) for g in grid],
                  categorical=[False] * len(features), response="predict", outputs=outputs, kind=kind,
                  sample_weight=None, memory_budget=2**24, n_jobs=1, options={"kernel": kernel})
    method(tm, req)


def _family(name: str) -> None:
    """Run the warm-up case of every kernel of one family (its records', :mod:`.registry`; for :data:`MEASURES`,
    :func:`pdpx.core.compiler.warm_up_elsewhere`) on the argument types real calls use; ``name`` may list several,
    comma-separated, run in that order."""
    names = name.split(",")
    for one in names:
        if one not in FAMILIES:
            raise ValueError(f"unknown kernel family {one!r}; one of {FAMILIES}")
    for one in names:
        if one == MEASURES:
            compiler.warm_up_elsewhere()
            continue
        for _, case in registry.cases(one):
            run_case(case)


def shares(jobs: int) -> list[list[str]]:
    """The families shared out among ``jobs`` processes, the costliest share first: each family, costliest first
    by its records' cold-compile seconds, goes to the share with the least so far. The critical path is the
    costliest share (on two cores: counts and partition in one process, leafsets and oblivious in the other,
    instead of oblivious then counts in one process beside two others)."""
    cost = {f: sum(registry.cold_seconds_table(families=(f,)).values()) for f in FAMILIES}
    out: list[list[str]] = [[] for _ in range(max(1, min(jobs, len(FAMILIES))))]
    load = [0.0] * len(out)
    for f in sorted(FAMILIES, key=lambda f: -cost[f]):
        i = load.index(min(load))
        out[i].append(f)
        load[i] += cost[f]
    return [s for _, s in sorted(zip(load, out), key=lambda x: -x[0]) if s]


def run_case(case) -> None:
    """Run one :class:`.records.Case`."""
    if case.run == "counts":
        _counts(case.kernel)
    elif case.run == "means":
        _means()
    elif case.run == "moments":
        _moments()
    else:
        tm = _model(case.link, case.n_margins, case.depth)
        method = engine.recursion if case.run == "recursion" else engine.exact
        for grid in case.grids:
            _run(tm, case.kernel, case.kind, [list(grid)], method=method)


def _counts(kernel: str) -> None:
    """A pattern-counts gather kernel at both orders, unweighted and weighted, and the PD from counts
    (1-way and 2-way, sorted and unsorted grids): the argument types :func:`.counts.gather` gives them."""
    from . import counts, counts_pd

    tm = _model(depth=2)
    X = pd.DataFrame({"a": [0.0, 1.0, np.nan, 2.0], "b": [1.0, 0.0, 0.3, 2.0]})
    for order in counts.ORDERS:
        for w in (None, np.ones(len(X))):
            got = counts.gather(tm, X, w, order=order, kernel=kernel, n_jobs=1)
        for grid in ([0.0, 1.0], [1.0, 0.0]):
            for features in ([0], [0, 1])[:order]:
                req = Request(X=X, features=features, grid_values=[np.array(grid)] * len(features),
                              categorical=[False] * len(features), response="predict", outputs=[0],
                              kind="average", sample_weight=None, memory_budget=2**24, n_jobs=1)
                counts_pd.partial_dependence(tm, got, req)


def _means() -> None:
    """The kernel of every row's averaged ICE curve (:mod:`.curve_means`), unweighted shares on sorted and
    unsorted grids."""
    from .curve_means import curve_means

    tm = _model(depth=2)
    X = pd.DataFrame({"a": [0.0, 1.0, np.nan, 2.0], "b": [1.0, 0.0, 0.3, 2.0]})
    for grid in ([0.0, 1.0], [1.0, 0.0]):
        req = Request(X=X, features=[0], grid_values=[np.array(grid)], categorical=[False], response="predict",
                      outputs=[0], kind="average", sample_weight=None, memory_budget=2**24, n_jobs=1)
        curve_means(tm, [req], [np.array([0.5, 0.5])], n_jobs=1)


def _moments() -> None:
    """The kernel of the ICE curves' moments over the rows (:mod:`.curve_moments`), unweighted and weighted, on
    sorted and unsorted grids, for a margin and for a logistic link."""
    from .curve_moments import curve_moments

    X = pd.DataFrame({"a": [0.0, 1.0, np.nan, 2.0], "b": [1.0, 0.0, 0.3, 2.0]})
    for link in ("identity", "logistic"):
        tm = _model(link, 1, 2)
        for grid in ([0.0, 1.0], [1.0, 0.0]):
            for w in (None, np.ones(len(X))):
                req = Request(X=X, features=[0], grid_values=[np.array(grid)], categorical=[False],
                              response="predict", outputs=[0], kind="average", sample_weight=w, memory_budget=2**24,
                              n_jobs=1)
                curve_moments(tm, [req], n_jobs=1)


def warm_up(jobs: int = 1) -> float:
    """Compile (or load from numba's on-disk cache) every kernel of pdpx; returns seconds taken.

    ``jobs`` > 1: the kernel families compile in that many processes at once, this one and ``jobs - 1`` started
    here (:func:`shares`; each writes its own kernels to the cache).
    """
    t0 = time.perf_counter()
    if jobs <= 1:
        for name in FAMILIES:
            _family(name)
        return time.perf_counter() - t0
    mine, *theirs = shares(jobs)
    commands = [module_command(f"{__package__}.warmup", "--family", ",".join(share)) for share in theirs]
    if any(c is None for c in commands):  # not a Python interpreter to start: all here
        warm_up(1)
        return time.perf_counter() - t0
    procs = [subprocess.Popen(argv, **where) for argv, where in commands]
    for name in mine:  # the costliest share here: this process has imported pdpx already
        _family(name)
    codes = [p.wait() for p in procs]
    if any(codes):
        raise RuntimeError(f"compiling the tree kernels failed in a subprocess (exit codes {codes})")
    return time.perf_counter() - t0


def _hold_lock():
    """An open file holding this user's background-compilation lock, or None if another process holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock, at worst two compilations
        return open(os.devnull)
    folder = private_dir()
    if folder is None:  # no folder of this user's alone: no lock rather than one another user could hold
        return open(os.devnull)
    cache = compiler.cache_dir() or os.environ.get("NUMBA_CACHE_DIR", "")
    key = hashlib.sha256(f"{os.path.dirname(os.path.abspath(__file__))}\0{cache}".encode()).hexdigest()[:16]
    try:
        handle = os.fdopen(open_private(os.path.join(folder, f"compile-{key}.lock")), "a")
    except OSError:
        return open(os.devnull)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def _lowest_priority() -> None:
    """Run only on otherwise idle cores (Linux's idle class; elsewhere the lowest nice level), so that the
    compilation never slows the process that started it (whose model may predict on every core)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        if hasattr(os, "nice"):
            os.nice(19)


def main(argv: list[str]) -> int:
    """``python -m pdpx.plugins.trees.warmup [--jobs N] [--background] [--family NAME]``."""
    if "--family" in argv:
        _family(argv[argv.index("--family") + 1])
        return 0
    background = "--background" in argv
    if compiler.where() == "memory":
        print(f"nothing to compile ahead: {compiler.note()}", file=sys.stderr)
        return 0
    jobs = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else min(len(FAMILIES), os.cpu_count() or 1)
    if background:
        lock = _hold_lock()
        if lock is None:
            return 0  # another process is compiling into this cache
        _lowest_priority()
        jobs = 1
    seconds = warm_up(jobs)
    if not background:
        print(f"compiled pdpx's kernels in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
