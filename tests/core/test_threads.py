"""The process's thread pool (:mod:`pdpx.core.threads`): order, errors, nesting, fork; the kernels' row spans
(:func:`pdpx.plugins.trees.rows.run`) and a call's extrapolation check run on it."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import session as S
from pdpx.core import threads
from pdpx.plugins.trees import rows


def test_results_in_order_and_the_first_item_on_the_calling_thread():
    seen = {}

    def fn(i):
        seen[i] = threading.current_thread().name
        return i * i

    assert threads.in_threads(fn, list(range(7))) == [i * i for i in range(7)]
    assert seen[0] == threading.current_thread().name
    if threads.cores() > 1:
        assert all(seen[i].startswith("pdpx") for i in range(1, 7))


def test_an_error_of_any_item_is_raised_after_every_item_ran():
    done = []

    def fn(i):
        if i == 2:
            raise ValueError("item 2")
        done.append(i)
        return i

    with pytest.raises(ValueError, match="item 2"):
        threads.in_threads(fn, [0, 1, 2, 3])
    assert sorted(done) == [0, 1, 3]
    # the pool still works afterwards
    assert threads.in_threads(lambda i: i + 1, [1, 2, 3]) == [2, 3, 4]


def test_a_call_from_a_pool_thread_runs_serially_instead_of_waiting_for_itself():
    def inner(i):
        return threads.in_threads(lambda k: (threading.current_thread().name, k), [0, 1, 2])

    out = threads.in_threads(inner, [0, 1, 2, 3])
    for i, part in enumerate(out):
        assert [k for _, k in part] == [0, 1, 2]
        if i > 0 and threads.cores() > 1:  # run on a pool thread: its items stayed there
            assert len({name for name, _ in part}) == 1


def test_run_covers_every_row_once():
    n = 10_000

    def fn(r0, r1):
        return np.arange(r0, r1)

    parts = rows.run(fn, n, 4)
    assert np.array_equal(np.concatenate(parts), np.arange(n))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_gets_its_own_pool():
    threads.in_threads(lambda i: i, [0, 1, 2])  # the parent's pool exists
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        signal.alarm(30)  # a child waiting on the parent's (absent) pool threads dies instead of hanging
        try:
            ok = threads.in_threads(lambda i: i * 2, [1, 2, 3]) == [2, 4, 6]
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    got = os.read(r, 1)
    os.close(r)
    assert status == 0 and got == b"1", (status, got)


def test_in_background_runs_beside_the_caller_or_here_when_one_thread_is_asked():
    names = []
    job = threads.in_background(lambda: names.append(threading.current_thread().name) or 7, beside=True)
    assert job.result() == 7
    if threads.cores() > 1:
        assert names[-1].startswith("pdpx")
    job = threads.in_background(lambda: names.append(threading.current_thread().name) or 8, beside=False)
    assert job.done() and job.result() == 8 and names[-1] == threading.current_thread().name
    failing = threads.in_background(lambda: 1 / 0, beside=False)
    with pytest.raises(ZeroDivisionError):
        failing.result()


def _correlated(n):
    rng = np.random.default_rng(3)
    a = rng.normal(size=n)
    return pd.DataFrame({"a": a, "b": a + rng.normal(scale=0.05, size=n), "c": rng.normal(size=n)})


def _trees(X):
    from sklearn.ensemble import GradientBoostingRegressor

    return GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, X["a"] + X["b"])


def _spy_check(monkeypatch):
    where = []
    real = S.Session._support_values

    def spy(self, *a):
        where.append(threading.current_thread().name)
        return real(self, *a)

    monkeypatch.setattr(S.Session, "_support_values", spy)
    return where


@pytest.mark.parametrize("n_jobs", [None, 1], ids=["check beside the method", "check after it"])
def test_the_check_beside_exact_warns_on_the_call_and_equals_the_check_after_it(monkeypatch, n_jobs):
    X = _correlated(S.BACKGROUND_ROWS + 500)
    model = _trees(X)
    where = _spy_check(monkeypatch)
    with pytest.warns(pdpx.ExtrapolationWarning, match="a"):
        res = pdpx.partial_dependence(model, X, "a", method="exact", grid_resolution=8, n_jobs=n_jobs)
    side = n_jobs is None and threads.cores() > 1
    assert where == [where[0]] and where[0].startswith("pdpx") == side
    monkeypatch.undo()
    with pytest.warns(pdpx.ExtrapolationWarning):
        ref = pdpx.partial_dependence(model, X, "a", method="exact", grid_resolution=8, n_jobs=1)
    assert res.extrapolation == ref.extrapolation and res.extrapolation.warns


@pytest.mark.parametrize("method", ["brute", "recursion"])
def test_the_check_stays_on_the_calling_thread_beside_python_work(monkeypatch, method):
    """brute's predict calls and recursion (no rows) would take turns with the check for the GIL."""
    X = _correlated(S.BACKGROUND_ROWS + 500)
    where = _spy_check(monkeypatch)
    with pytest.warns(pdpx.ExtrapolationWarning):
        pdpx.partial_dependence(_trees(X), X, "a", method=method, grid_resolution=8)
    assert where == [threading.current_thread().name]


def test_a_planned_session_checks_on_the_calling_thread(monkeypatch):
    """Several feature sets planned: exact may answer them from pattern counts, in moments."""
    X = _correlated(S.BACKGROUND_ROWS + 500)
    where = _spy_check(monkeypatch)
    with pytest.warns(pdpx.ExtrapolationWarning):
        pdpx.partial_dependence_many(_trees(X), X, ["a", "b", "c"], method="exact", grid_resolution=8)
    assert where == [threading.current_thread().name] * 3


def test_small_calls_check_after_the_method(monkeypatch):
    X = _correlated(300)
    where = _spy_check(monkeypatch)
    pdpx.partial_dependence(_trees(X), X, "a", method="exact", grid_resolution=5)
    assert where == [threading.current_thread().name]


def test_a_failing_method_leaves_no_check_running(monkeypatch):
    from pdpx.plugins import exact

    X = _correlated(S.BACKGROUND_ROWS + 100)
    model = _trees(X)
    state = {"running": False, "finished": False}
    real = S.Session._support_values

    def slow(self, *a):
        state["running"] = True
        time.sleep(0.2)
        out = real(self, *a)
        state["finished"] = True
        return out

    real_exact = exact.engine.exact

    def broken(tm, req, *a, **k):
        if len(req.X) < 100:  # the check of the trees on a sample of rows (pdpx.core.trust) passes
            return real_exact(tm, req, *a, **k)
        time.sleep(0.02)  # the check has started by then
        raise RuntimeError("the kernel failed")

    monkeypatch.setattr(S.Session, "_support_values", slow)
    monkeypatch.setattr(exact.engine, "exact", broken)
    with pytest.raises(RuntimeError, match="the kernel failed"):
        pdpx.partial_dependence(model, X, "c", method="exact", grid_resolution=5)
    assert state["running"] and state["finished"]  # the check had finished when the error arrived


def test_in_order_yields_in_order_with_at_most_the_threads_asked():
    lock, now, most, names = threading.Lock(), [0], [0], set()

    def fn(i):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.01 * (7 - i))  # the first items finish last
        names.add(threading.current_thread().name)
        with lock:
            now[0] -= 1
        return i * 10

    assert list(threads.in_order(fn, list(range(7)), 2)) == [i * 10 for i in range(7)]
    assert most[0] <= min(2, threads.cores())
    if threads.cores() > 1:
        assert all(n.startswith("pdpx") for n in names)  # the process's one pool, no other
    names.clear()
    assert list(threads.in_order(fn, [0, 1, 2], 1)) == [0, 10, 20]
    assert names == {threading.current_thread().name}  # one thread: the caller's


def test_in_order_raises_at_the_items_turn_and_leaves_nothing_running():
    started, finished = [], []

    def fn(i):
        started.append(i)
        if i == 1:
            raise ValueError("item 1")
        time.sleep(0.02)
        finished.append(i)
        return i

    out = threads.in_order(fn, list(range(20)), 2)
    assert next(out) == 0
    with pytest.raises(ValueError, match="item 1"):
        next(out)
    count = len(started)
    time.sleep(0.1)
    assert len(started) == count < 20  # nothing started after the error left
    assert sorted(finished) == sorted(i for i in started if i != 1)  # what had started finished first


def test_n_jobs_means_one_thing_for_the_model_and_for_the_kernels(monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 4)
    assert [threads.thread_count(n) for n in (None, 1, 2, -1, -2, 9)] == [4, 1, 2, 4, 3, 4]
    # None: pdpx's own compiled work on every core, the model called from one thread (its predict has its own)
    assert [threads.model_threads(n) for n in (None, 1, 2, -1, -2, 9)] == [1, 1, 2, 4, 3, 4]
