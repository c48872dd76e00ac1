"""numba's threads for kernels written with numba's parallel loops: a fork-safe layer, the caller's settings kept.

The kernels of ``exact`` and ``recursion`` do not use numba's parallel loops: they run
on one thread each without the GIL, and :mod:`.rows` shares the rows among Python
threads, so numba's threading layer is never started by them (forked processes and
concurrent callers are then safe on every platform, and compiling costs a third).
What follows applies to kernels that do use ``prange``:

* **Layer.** numba runs parallel kernels on one of three threading layers. GNU
  OpenMP (numba's usual pick on Linux when TBB is absent) does not survive a
  fork: a child process forked after the parent started its threads (the
  ``fork`` start method of ``multiprocessing``, joblib or Dask process pools) is
  killed as soon as it runs a parallel kernel. TBB survives forks and concurrent
  callers, so before numba starts any threads pdpx asks for TBB when it is
  installed (``pip install tbb``), unless the user chose a layer
  (``NUMBA_THREADING_LAYER``). A layer already running is never changed.
* **Fork fallback.** If the layer that runs is OpenMP and this process is a fork
  of one that had started its threads, the tree methods say so and ``auto`` runs
  ``brute`` (the same answer, slower) instead of crashing.
* **Workqueue.** numba's built-in layer allows one caller at a time: kernel runs
  are then serialised with a lock.
* **Thread count.** ``numba.set_num_threads`` is changed for a kernel run only and
  restored afterwards (it is per calling thread).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading

_LOCK = threading.Lock()
_state = {"launched": False, "forked_after_launch": False, "configured": False}


def _mark_fork() -> None:
    if _state["launched"]:
        _state["forked_after_launch"] = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_mark_fork)


def tbb_library() -> str | None:
    """Path of the TBB runtime the ``tbb`` package installs (``<prefix>/lib/libtbb.so.12``), or None."""
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        for name in ("libtbb.so.12", "libtbb.12.dylib", "tbb12.dll"):
            path = os.path.join(prefix, "lib", name)
            if os.path.exists(path):
                return path
    return None


def _load_tbb() -> bool:
    """Make the TBB runtime visible to numba (its pip wheel finds it only on the library path)."""
    path = tbb_library()
    if path is None:
        return False
    try:
        ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
    except OSError:
        return False
    return True


def prefer_safe_layer() -> None:
    """Before numba's first parallel launch: ask for TBB if installed and nobody chose a layer."""
    if _state["configured"]:
        return
    _state["configured"] = True
    import numba

    if os.environ.get("NUMBA_THREADING_LAYER") or str(numba.config.THREADING_LAYER) != "default":
        return
    if _load_tbb():
        numba.config.THREADING_LAYER = "tbb"


def current_layer() -> str | None:
    """The layer numba runs on, or None before its first parallel launch."""
    import numba

    try:
        return str(numba.threading_layer())
    except ValueError:
        return None


def fork_problem() -> str | None:
    """Why parallel kernels cannot run in this process (an OpenMP fork), or None."""
    if _state["forked_after_launch"] and current_layer() == "omp":
        return ("this process was forked from one that had started numba's OpenMP threads, which do not "
                "survive a fork; install the tbb package (pip install tbb) for a fork-safe threading layer, "
                "or start worker processes with the 'spawn' or 'forkserver' method")
    return None


def effective_threads(n_jobs: int | None) -> int:
    """Threads for a kernel run: ``n_jobs`` (None: numba's maximum; negative: counted back from the cores)."""
    import numba

    cores = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        jobs = cores
    elif n_jobs < 0:
        jobs = max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    else:
        jobs = max(1, int(n_jobs))
    return min(jobs, cores)


@contextlib.contextmanager
def kernel_threads(n_jobs: int | None):
    """Run kernels with ``n_jobs`` threads; yields the count; the caller's count is restored after."""
    import numba

    prefer_safe_layer()
    jobs = effective_threads(n_jobs)
    before = numba.get_num_threads()
    # workqueue takes one caller at a time; so does the first launch, which picks the layer
    serial = current_layer() in (None, "workqueue")
    with _LOCK if serial else contextlib.nullcontext():
        numba.set_num_threads(jobs)
        try:
            yield jobs
        finally:
            numba.set_num_threads(before)
            _state["launched"] = True
