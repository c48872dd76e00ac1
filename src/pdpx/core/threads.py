"""One pool of threads per process for the work pdpx runs side by side.

Three users: the tree kernels share a call's rows among threads
(:func:`pdpx.plugins.trees.rows.run`), ``brute`` calls the model on several chunks at once
(:func:`in_order`, ``n_jobs`` > 1), and a session computes a call's extrapolation check
while the method runs (:meth:`pdpx.core.session.Session.compute`).

``n_jobs`` means the same everywhere (:func:`thread_count`): None is every core for pdpx's own
compiled work; the model's predict is called from one thread at a time unless ``n_jobs`` asks
for more (:func:`model_threads`), since most models' predict already uses the cores itself.

The pool starts on first use, with one thread per core, and is kept: starting threads
for every call cost about 0.2 ms (more right after a ``gc.collect``). A process forked
from one that used the pool starts its own (the parent's threads do not exist in the
child). Work submitted from one of the pool's own threads runs there and then, never
queued behind the work that occupies the pool. Concurrent callers share the pool.

Work handed to another thread runs in a copy of the caller's ``contextvars`` context
(:func:`run_in_context`): the settings of :func:`pdpx.config_context` (the memory
budget) follow it onto every thread pdpx starts.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Iterator, Sequence

_POOL: list = [None, None]  # (process id, executor)
_POOL_LOCK = threading.Lock()
_WORKER = threading.local()


def cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def thread_count(n_jobs: int | None) -> int:
    """Threads for ``n_jobs`` (None: every core; negative: counted back from the cores), at most the cores."""
    n = cores()
    if n_jobs is None:
        return n
    if n_jobs < 0:
        return max(1, n + 1 + n_jobs)
    return max(1, min(int(n_jobs), n))


def model_threads(n_jobs: int | None) -> int:
    """Threads that call the model at once for ``n_jobs``: one for None (a model's predict usually spreads
    over the cores itself), else :func:`thread_count`."""
    return 1 if n_jobs is None else thread_count(n_jobs)


def _pool() -> ThreadPoolExecutor:
    with _POOL_LOCK:
        if _POOL[0] != os.getpid():
            _POOL[:] = [os.getpid(), ThreadPoolExecutor(max(1, cores()), thread_name_prefix="pdpx")]
        return _POOL[1]


def run_in_context(fn):
    """``fn`` bound to a copy of the calling thread's context: called on another thread, it sees the caller's
    :func:`pdpx.config_context` settings (a thread starts in an empty context otherwise)."""
    context = contextvars.copy_context()

    def bound(*args, **kwargs):
        return context.run(fn, *args, **kwargs)

    return bound


def _as_worker(fn, *args):
    _WORKER.active = True
    return fn(*args)


def in_pool_thread() -> bool:
    """Whether the calling thread is one of the pool's."""
    return getattr(_WORKER, "active", False)


def in_threads(fn, items: list) -> list:
    """``[fn(item) for item in items]``, the calling thread running the first and the pool the others at the
    same time; the others finish before any error is raised. From a pool thread, one after another."""
    if len(items) <= 1 or in_pool_thread():
        return [fn(item) for item in items]
    # one copy of the caller's context per item: a context is entered by one thread at a time
    futures = [_pool().submit(_as_worker, run_in_context(fn), item) for item in items[1:]]
    try:
        first = fn(items[0])
    finally:  # the pool's items finish before any exception of the first is raised
        errors = [f.exception() for f in futures]
    for e in errors:
        if e is not None:
            raise e
    return [first] + [f.result() for f in futures]


def in_order(fn: Callable, items: Sequence, threads: int) -> Iterator:
    """``fn(item)`` for each item, yielded in the items' order, at most ``threads`` of them running at once on
    the pool (one after another on the calling thread for one thread, or from a pool thread).

    An error of ``fn`` is raised when its item's turn comes; the items still running then finish, and those
    not started never start, before it leaves (also when the caller stops reading early)."""
    threads = min(int(threads), len(items), cores())
    if threads <= 1 or in_pool_thread():
        for item in items:
            yield fn(item)
        return
    pool, waiting, running = _pool(), iter(items), deque()

    def submit():
        item = next(waiting, _END)
        if item is not _END:  # one copy of the caller's context per item
            running.append(pool.submit(_as_worker, run_in_context(fn), item))

    try:
        for _ in range(threads):
            submit()
        while running:
            out = running[0].result()
            running.popleft()
            submit()
            yield out
    finally:
        for f in running:
            f.cancel()
        for f in running:
            if not f.cancelled():
                f.exception()  # wait: nothing of this call runs after it returns


_END = object()


def in_background(fn, *args, beside: bool = True) -> Future:
    """``fn(*args)`` on a pool thread while the caller goes on (``.result()`` waits for it), or done here and
    now when not ``beside``, the process has one core, or the caller is a pool thread."""
    if beside and cores() > 1 and not in_pool_thread():
        return _pool().submit(_as_worker, run_in_context(fn), *args)
    done: Future = Future()
    try:
        done.set_result(fn(*args))
    except BaseException as exc:  # noqa: BLE001 - handed to whoever reads the result, as the pool would
        done.set_exception(exc)
    return done


class ModelLock:
    """One model's lock: many holders of :meth:`shared` (its predict calls) or one of :meth:`exclusive` (reading
    its contents, its fingerprint, a setting changed for a block), never both at once from different threads.

    The thread that holds it exclusively may take it again, either way (the trust check predicts inside a block
    that holds the model's thread count at one). A thread waiting for :meth:`exclusive` goes first: new shared
    holders wait for it, so a stream of predict calls cannot starve it. Taking :meth:`exclusive` while holding
    only :meth:`shared` is refused (two threads doing it would wait for each other forever).
    """

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._readers: dict = {}  # thread id -> how many times it holds the lock shared
        self._writer: int | None = None
        self._depth = 0  # how many times the writer holds it
        self._waiting = 0  # threads waiting to hold it exclusively

    def shared(self):
        """A context holding the lock shared (or within the calling thread's exclusive hold)."""
        return _Held(self, False)

    def exclusive(self):
        """A context holding the lock alone (reentrant)."""
        return _Held(self, True)

    def _acquire(self, alone: bool) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                if alone:
                    self._depth += 1
                else:
                    self._readers[me] = self._readers.get(me, 0) + 1
                return
            if alone:
                if self._readers.get(me):
                    raise RuntimeError("ModelLock: exclusive asked while holding it shared")
                self._waiting += 1
                try:
                    while self._writer is not None or self._readers:
                        self._cond.wait()
                finally:
                    self._waiting -= 1
                self._writer, self._depth = me, 1
                return
            while self._writer is not None or (self._waiting and not self._readers.get(me)):
                self._cond.wait()
            self._readers[me] = self._readers.get(me, 0) + 1

    def _release(self, alone: bool) -> None:
        me = threading.get_ident()
        with self._cond:
            if alone:
                self._depth -= 1
                if self._depth == 0:
                    self._writer = None
            else:
                left = self._readers[me] - 1
                if left:
                    self._readers[me] = left
                else:
                    del self._readers[me]
            self._cond.notify_all()


class _Held:
    __slots__ = ("lock", "alone")

    def __init__(self, lock: ModelLock, alone: bool):
        self.lock, self.alone = lock, alone

    def __enter__(self):
        self.lock._acquire(self.alone)
        return self

    def __exit__(self, *exc):
        self.lock._release(self.alone)
        return False
