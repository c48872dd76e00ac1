"""Whether the kernels a call needs are compiled, what compiling them would cost, and compiling in the background.

numba compiles a kernel the first time it runs and keeps the machine code in its
on-disk cache, so a kernel costs its compilation once per installation (and per
change of pdpx or numba), then a load of a few milliseconds per process. On a fresh
installation the first ``exact`` call would wait for compilation: seconds, when
brute force on a small data set takes a fraction of one and returns the same
numbers. So ``method="auto"`` asks :func:`defer_reason` before it runs ``exact``:

* the kernels the request needs (:func:`needed`: read from the tree structure and
  the request with numpy only, nothing compiled) that are neither compiled in this
  process nor in numba's cache (:func:`pending`);
* their cold compile time (:data:`COLD_SECONDS`, measured per kernel) against
  brute force's estimated time (rows x grid points x a predict's measured time per
  row, :func:`brute_seconds`);
* when brute is quicker, ``auto`` runs brute now and a separate process compiles
  every kernel into numba's cache (:func:`compile_in_background`; a process, so it
  never competes for this one's GIL), so later calls, in this process or another,
  take ``exact``. Once this process has spent the compile time in brute force,
  ``auto`` compiles instead (caches that cannot be written, a background process
  that cannot start).

Nothing here changes a number: brute is exact too, ``res.method`` says which ran and
``res.notes`` why ``exact`` did not.

Every process started here runs this interpreter with a safe import path (:func:`module_command`:
``-P`` and ``PYTHONSAFEPATH=1``, working folder this user's private folder), so a ``numpy.py`` in the
folder pdpx is run from is never imported. Where numba can cache nothing (:mod:`pdpx.core.compiler`), kernels
compile in memory, nothing starts in the background, and :func:`noted` says so in ``res.notes``.
"""

from __future__ import annotations

import atexit
import importlib
import os
import subprocess
import sys
import threading
import time
import warnings

from ...core import compiler
from ...core.userdir import private_dir
from . import registry

#: The cold-compile tables, read from the kernels' records (:mod:`.registry`) when first asked: ``COLD_SECONDS``
#: (``exact``'s and recursion's kernels), ``COUNTS_COLD_SECONDS`` (the pattern counts'), ``MEANS_COLD_SECONDS``
#: (the averaged curves' own), ``MEANS_KERNELS`` (every function :func:`.curve_means.curve_means` runs). Keys:
#: ``module.function`` of this package; values: seconds measured with an empty numba cache.
_TABLES = {
    "COLD_SECONDS": lambda: _exact_table(),
    "COUNTS_COLD_SECONDS": lambda: registry.cold_seconds_table(families=("counts",), engines=("counts", "shared")),
    "MEANS_COLD_SECONDS": lambda: registry.cold_seconds_table(engines=("means",)),
    "MEANS_KERNELS": lambda: registry.runs(["means"], None),
}


#: The warm-up families of ``exact``'s and recursion's kernels (the counts' family compiles the rest).
EXACT_FAMILIES = ("leafsets", "partition", "oblivious")


def _exact_table() -> dict:
    return registry.cold_seconds_table(families=EXACT_FAMILIES)


def __getattr__(name: str):
    if name in _TABLES:
        return _TABLES[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: What the first compilation of a process costs on top of its kernel (numba's and LLVM's start-up).
FIRST_COMPILE_SECONDS = 1.0
#: Most bytes one of brute's stacked predict calls takes (as :mod:`pdpx.plugins.brute` sizes them).
BRUTE_CHUNK_BYTES = 256 * 2**20

_ready: set[str] = set()
_state = {"background": None, "brute_seconds": 0.0}
_lock = threading.Lock()


def needed(tm, req) -> set[str]:
    """The kernels ``exact`` runs for ``req`` on tree model ``tm`` (a TreeModel or a TreeSum): the plan's
    (:func:`.plan.plan_rows`)."""
    from .plan import plan_rows

    return set(plan_rows(tm, req).kernels)


def counts_needed(tm, order: int = 2, kernel: str = "auto", memory_budget: int = 256 << 20) -> set[str]:
    """The kernels a gather of pattern counts at ``order`` on ``tm`` (TreeModel or TreeSum) and the partial
    dependence from them (:func:`.counts_pd.partial_dependence`) run: the plan's (:func:`.plan.plan_counts`);
    read with numpy only, nothing compiled."""
    from .plan import plan_counts

    return set(plan_counts(tm, order, kernel, memory_budget).kernels)


def counts_ready(tm, order: int = 2, kernel: str = "auto", memory_budget: int = 256 << 20) -> bool:
    """Whether every kernel of a pattern-counts gather at ``order`` on ``tm`` and of the PD from the counts is
    compiled in this process or in numba's on-disk cache (so using counts now costs no compilation).

    Parameters
    ----------
    tm : TreeModel or TreeSum
        What an adapter's ``tree_model(response)`` returns.
    order : {1, 2}
        The order the counts would be gathered at.
    kernel, memory_budget
        As for :func:`.counts.gather` (they decide which gather kernel runs).

    Returns
    -------
    bool
    """
    return not pending(counts_needed(tm, order, kernel, memory_budget))


def deferred_counts(tm, order: int = 2, alternative_seconds: float | None = None, kernel: str = "auto",
                    memory_budget: int = 256 << 20) -> str | None:
    """Why ``auto`` should not use pattern counts now (their kernels would have to be compiled first), or None.

    The caller passes ``alternative_seconds``, its estimate of the time of what it would run instead (``exact``
    one feature set at a time, or ``brute``); None means "not known: do not wait for a compilation". When
    the counts' kernels are pending and their cold compile time (:data:`COUNTS_COLD_SECONDS`) exceeds that,
    a background process compiles them (:func:`compile_in_background`, as for ``exact``'s kernels) and the
    reason is returned; later calls find them ready. Returns None when the kernels are ready, or when
    compiling now is cheaper than the alternative.
    """
    missing = pending(counts_needed(tm, order, kernel, memory_budget))
    if not missing:
        return None
    compile_s = cold_seconds_of(missing)
    if alternative_seconds is not None and alternative_seconds >= compile_s:
        return None
    if not compile_in_background():  # no background compilation here (embedded, or it failed): compile now
        return None
    return (f"the pattern counts' compiled kernels are not ready yet ({len(missing)} to compile, about "
            f"{compile_s:.0f} s), so each feature set was computed on its own; they are being compiled in the "
            "background, and later calls will use them")


def deferred_means(kernels=None) -> bool:
    """Whether the averaged ICE curves should be left to the row kernels now: their one-pass kernels
    (``kernels``, a plan's; None: every one, ``MEANS_KERNELS``) are not compiled and a background process has
    started compiling them (later calls use them). Where no background compilation can run, they compile now
    (False)."""
    if not pending(registry.runs(["means"], None) if kernels is None else kernels):
        return False
    return compile_in_background()


def compile_seconds(kernels) -> float:
    """The compile state as the planner reads it (:func:`.plan.plan`'s ``compile_seconds``): the seconds compiling
    those of ``kernels`` (``module.function`` names, a plan's) that are neither compiled in this process nor in
    numba's cache would take (:func:`cold_seconds_of` of :func:`pending`); 0.0 when all are."""
    missing = pending(kernels)
    return cold_seconds_of(missing) if missing else 0.0


def cold_seconds_of(names) -> float:
    """:func:`cold_seconds` of exact's and the counts' kernels alike."""
    if not names:
        return 0.0
    table = registry.cold_seconds_table()
    return FIRST_COMPILE_SECONDS + sum(table.get(n, 1.0) for n in names)


def _dispatcher(name: str):
    module, function = name.split(".")
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)


def _compiled_or_cached(dispatcher) -> bool | None:
    """Whether a numba dispatcher has machine code here or in numba's cache; None when that cannot be told."""
    try:  # numba's cache index: entries keyed by (signature, machine, bytecode hashes), stamped with the source
        if dispatcher.overloads:
            return True
        if compiler.where() == "memory":  # no cache: compiled in this process or not at all
            return False
        cache = dispatcher._cache
        key = cache._index_key(None, dispatcher.targetctx.codegen())[1:]
        return any(k[1:] == key for k in cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - another numba version: cannot tell
        return None


#: Seconds a kernel found missing is taken as still missing before numba's cache index is read again (the
#: index is a file: reading it on every call would cost each call a tenth of a millisecond per kernel)
RECHECK_SECONDS = 2.0
_missing_at: dict[str, float] = {}


def pending(names) -> list[str]:
    """The kernels of ``names`` that would have to be compiled (neither compiled here nor in the cache).

    A kernel found compiled or cached is remembered for the process; one found missing is
    looked up again after :data:`RECHECK_SECONDS` (a background compilation fills the cache).
    """
    out = []
    now = time.monotonic()
    for name in sorted(names):
        if name in _ready:
            continue
        dispatcher = _dispatcher(name)
        seen = _missing_at.get(name)
        if seen is not None and now - seen < RECHECK_SECONDS and not getattr(dispatcher, "overloads", None):
            out.append(name)  # still missing a moment ago, and not compiled in this process since
            continue
        if _compiled_or_cached(dispatcher) is False:
            _missing_at[name] = now
            out.append(name)
        else:
            _missing_at.pop(name, None)
            _ready.add(name)
    return out


def cold_seconds(names) -> float:
    """Estimated seconds to compile ``names`` from scratch in this process."""
    if not names:
        return 0.0
    table = _exact_table()
    return FIRST_COMPILE_SECONDS + sum(table.get(n, 1.0) for n in names)


def busy_factor() -> float:
    """How much slower than on an idle machine a compilation runs now: the load average over the cores (at least
    1; 1 where the system does not tell). The cold-compile tables are measured on an idle machine, while brute's
    estimate is timed now, under the same load as a compilation would run."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return 1.0
    return max(1.0, load / max(1, os.cpu_count() or 1))


def brute_seconds(adapter, req, decide_at: float | None = None) -> float:
    """Estimated seconds of ``brute`` for ``req``: its predict calls (the rows times the grid points, stacked
    as brute stacks them) timed by predict calls on 8 and 512 rows (a per-call and a per-row time), each the best
    of up to three.

    ``decide_at``: the time the estimate is compared with (a compilation's); once a round of timings puts
    the estimate clearly on one side of it (half or twice), no more calls are timed: on a busy machine each call
    of a model that spreads over threads can take seconds, and the estimate must not cost what it would save."""
    from ...core.adapter import checked_predict
    from ...core.threads import model_threads

    X, n = req.X, len(req.X)
    small, large = min(n, 8), min(n, 512)
    bytes_per_row = max(8.0, X.memory_usage(index=False, deep=False).sum() / max(n, 1)) + 8 * (len(req.outputs) + 8)
    rows_per_call = max(1, int(min(req.memory_budget, BRUTE_CHUNK_BYTES) // (bytes_per_row * 4)))
    stacked = n * req.n_grid
    jobs = model_threads(req.n_jobs) if getattr(adapter, "thread_safe", True) else 1

    def timed(m):
        t0 = time.perf_counter()
        checked_predict(adapter, X.iloc[:m], req.response)
        return time.perf_counter() - t0

    def estimate(t_small, t_large):
        per_row = (t_large - t_small) / (large - small) if large > small else t_small / small
        per_row = max(per_row, 0.0)
        per_call = max(t_small - small * per_row, 0.0)
        return (-(-stacked // rows_per_call) * per_call + stacked * per_row) / jobs

    timed(1)  # a first call's one-off costs are not per call
    t_small = t_large = float("inf")
    for _ in range(3):  # the best of up to three rounds: a stall of the machine is not the model's cost
        t_small = min(t_small, timed(small))
        t_large = min(t_large, timed(large)) if large > small else t_small
        got = estimate(t_small, t_large)
        if decide_at is not None and not 0.5 * decide_at <= got <= 2.0 * decide_at:
            break
    return got


def defer_reason(adapter, req) -> str | None:
    """Why ``auto`` should run brute now instead of waiting for ``exact``'s compilation, or None.

    Once every kernel is compiled or cached (checked once per process, then remembered), this is a
    look at one flag: a call costs what its kernel costs.
    """
    if _state.get("all_ready"):
        return None
    exact_kernels = _exact_table()
    if not pending(exact_kernels):
        _state["all_ready"] = True
        return None
    try:
        names = needed(adapter.tree_model(req.response), req)
    except Exception:  # noqa: BLE001 - a model this cannot read ahead: count every kernel
        names = set(exact_kernels)
    missing = pending(names)
    if not missing:
        return None
    compile_s = cold_seconds(missing) * busy_factor()
    try:
        brute_s = brute_seconds(adapter, req, decide_at=compile_s)
    except Exception:  # noqa: BLE001 - the estimate never fails a call: compile and run exact then
        return None
    with _lock:
        if brute_s + _state["brute_seconds"] >= compile_s:  # compiling now pays for itself
            return None
        _state["brute_seconds"] += brute_s
    started = compile_in_background()
    later = ("they are being compiled in the background, and later calls will use exact" if started else
             "later calls compile them once brute force has taken as long")
    cache = compiler.note()
    return (f"its compiled kernels are not ready yet ({len(missing)} to compile, about {compile_s:.0f} s; brute force "
            f"takes about {max(brute_s, 0.01):.2g} s here and returns the same numbers); {later}"
            + (f" ({cache})" if cache else ""))


def compiling(tm, req) -> list[str]:
    """The kernels ``exact`` is about to compile for ``req`` on ``tm`` in this process (empty once every kernel is
    compiled or cached: then a look at one flag)."""
    if _state.get("all_ready"):
        return []
    try:
        return pending(needed(tm, req))
    except Exception:  # noqa: BLE001 - a model this cannot read ahead: nothing to say
        return []


def compiled_now(names, seconds: float) -> None:
    """Remember that ``exact`` compiled ``names`` (in ``seconds``, with its answer) before answering: the call's
    result says so (:func:`compiled_said`)."""
    with _lock:
        done, spent = _state.get("compiled", ((), 0.0))
        _state["compiled"] = (tuple(sorted(set(done) | set(names))), spent + seconds)


def compiled_said(deliver: bool) -> str | None:
    """The note on kernels this process compiled before answering and has not yet said so in a call's result
    (``deliver``: this result is the call's own, not a check on a sample: the note is then said)."""
    with _lock:
        got = _state.get("compiled")
        if got is None:
            return None
        if deliver:
            del _state["compiled"]
    names, seconds = got
    return (f"this call first compiled {len(names)} of the tree engine's kernels (about {seconds:.0f} s, with the "
            "answer); numba keeps them in its cache, so later calls and processes skip this (python -m "
            "pdpx.plugins.trees.warmup compiles them ahead of time)")


def noted(res):
    """``res`` (a MethodResult of the tree kernels) with :func:`pdpx.core.compiler.note` added to its notes, if any."""
    text = compiler.note()
    if text and text not in res.notes:
        res.notes.append(text)
    return res


def module_command(module: str, *args: str) -> tuple[list[str], dict] | None:
    """How to run ``python -m module args`` with this interpreter, safely: the command and ``subprocess.Popen``'s
    ``cwd`` and ``env``. None when ``sys.executable`` is not a Python interpreter (embedded in R or an app).

    The working folder is never on the child's import path (``-P`` from Python 3.11, ``PYTHONSAFEPATH=1``,
    and the working folder is this user's private folder, or the file system's root without one), pdpx is
    imported from where this process imports it, and numba caches where this process does.
    """
    exe = sys.executable or ""
    if not os.path.basename(exe).lower().startswith("python") or not os.access(exe, os.X_OK):
        return None
    env = dict(os.environ)
    env["PYTHONSAFEPATH"] = "1"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    if compiler.cache_dir() is not None:
        env["NUMBA_CACHE_DIR"] = compiler.cache_dir()
    safe = ["-P"] if sys.version_info >= (3, 11) else []
    return [exe, *safe, "-m", module, *args], {"cwd": private_dir() or os.path.abspath(os.sep), "env": env}


def compile_in_background() -> bool:
    """Start (once per process) a low-priority process that compiles every kernel into numba's cache;
    whether one is running. A process already compiling for this cache makes the new one exit at once."""
    with _lock:
        proc = _state["background"]
        if proc is not None:
            return proc.poll() is None
        command = module_command(f"{__package__}.warmup", "--background")
        if command is None or compiler.where() == "memory":
            _state["background"] = _NotStarted()
            return False  # embedded (R, an app): no interpreter to start; or no cache for it to fill
        argv, where = command
        try:
            atexit.register(_quiet_at_exit)
            _state["background"] = subprocess.Popen(
                argv, **where, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        except OSError:
            _state["background"] = _NotStarted()
            return False
        return True


def _quiet_at_exit() -> None:
    """The background compilation outlives this process on purpose: no "still running" warning at exit."""
    warnings.filterwarnings("ignore", message=r"subprocess \d+ is still running", category=ResourceWarning)


class _NotStarted:
    """Stands for a background compilation that could not start."""

    def poll(self):
        return 1


def background_process():
    """The background compilation started by this process (a ``subprocess.Popen``), or None."""
    proc = _state["background"]
    return proc if isinstance(proc, subprocess.Popen) else None


def reset() -> None:
    """Forget what this process learnt (tests): readiness, brute time spent, the background process."""
    with _lock:
        _ready.clear()
        _missing_at.clear()
        _state["brute_seconds"] = 0.0
        _state["background"] = None
        _state["all_ready"] = False
        _state.pop("compiled", None)

