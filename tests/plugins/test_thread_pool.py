"""The kernels' thread pool (:func:`pdpx.plugins.trees.rows.in_threads`): order, errors, nesting, fork."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest

from pdpx.plugins.trees import rows


def test_results_in_order_and_the_first_item_on_the_calling_thread():
    seen = {}

    def fn(i):
        seen[i] = threading.current_thread().name
        return i * i

    assert rows.in_threads(fn, list(range(7))) == [i * i for i in range(7)]
    assert seen[0] == threading.current_thread().name
    if rows.cores() > 1:
        assert all(seen[i].startswith("pdpx") for i in range(1, 7))


def test_an_error_of_any_item_is_raised_after_every_item_ran():
    done = []

    def fn(i):
        if i == 2:
            raise ValueError("item 2")
        done.append(i)
        return i

    with pytest.raises(ValueError, match="item 2"):
        rows.in_threads(fn, [0, 1, 2, 3])
    assert sorted(done) == [0, 1, 3]
    # the pool still works afterwards
    assert rows.in_threads(lambda i: i + 1, [1, 2, 3]) == [2, 3, 4]


def test_a_call_from_a_pool_thread_runs_serially_instead_of_waiting_for_itself():
    def inner(i):
        return rows.in_threads(lambda k: (threading.current_thread().name, k), [0, 1, 2])

    out = rows.in_threads(inner, [0, 1, 2, 3])
    for i, part in enumerate(out):
        assert [k for _, k in part] == [0, 1, 2]
        if i > 0 and rows.cores() > 1:  # run on a pool thread: its items stayed there
            assert len({name for name, _ in part}) == 1


def test_run_covers_every_row_once():
    n = 10_000

    def fn(r0, r1):
        return np.arange(r0, r1)

    parts = rows.run(fn, n, 4)
    assert np.array_equal(np.concatenate(parts), np.arange(n))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_gets_its_own_pool():
    rows.in_threads(lambda i: i, [0, 1, 2])  # the parent's pool exists
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        signal.alarm(30)  # a child waiting on the parent's (absent) pool threads dies instead of hanging
        try:
            ok = rows.in_threads(lambda i: i * 2, [1, 2, 3]) == [2, 4, 6]
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    got = os.read(r, 1)
    os.close(r)
    assert status == 0 and got == b"1", (status, got)
