"""pdpx's own checks run a model library's code on one thread, so that they never start a thread pool.

OpenMP's thread pool does not survive ``fork``: a forked child that enters a parallel region its
parent had started waits for ever on threads that do not exist in it. A model fitted and used on
one thread never starts one; pdpx must not start one behind the user's back either, in the calls it
makes on its own (an adapter's self-check of the trees it read, the check of a tree method against
the model's predict on a few rows). Those calls run under :func:`single_threaded`: every OpenMP
runtime loaded in the process uses one thread for the calling thread's parallel regions (through
threadpoolctl, when it is installed). Other threads are not affected. An adapter whose library
ignores that setting passes the library's own thread count to its self-check as well.
"""

from __future__ import annotations

import contextlib
import sys
import threading

#: The OpenMP runtimes found (a threadpoolctl selection) and ``len(sys.modules)`` when they were looked for:
#: looking costs about 10 ms, so it is done again only when modules were imported since (a library may have
#: brought its runtime).
_FOUND: list = [None, -1]
_LOCK = threading.Lock()


def _openmp():
    with _LOCK:
        if _FOUND[1] != len(sys.modules):
            from threadpoolctl import ThreadpoolController

            _FOUND[:] = [ThreadpoolController().select(user_api="openmp"), len(sys.modules)]
        return _FOUND[0]


@contextlib.contextmanager
def single_threaded():
    """OpenMP runtimes use one thread for this thread's parallel regions during the block (a no-op without
    threadpoolctl)."""
    try:
        runtimes = _openmp()
    except ImportError:  # pragma: no cover - no threadpoolctl: the adapters' own settings only
        yield
        return
    with runtimes.limit(limits=1):
        yield
