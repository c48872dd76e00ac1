"""Atomic writes (:mod:`pdpx.core.files`) under signals: SIGTERM and SIGINT in the middle of a write, Ctrl-C as the
temporary file is created. The target stays as it was and no temporary file is left beside it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from pdpx.core import files
from pdpx.core.files import atomic_path, write_text_atomic

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")

#: A process that writes half of a new file through atomic_path, says so, then takes its time (a slow writer).
WRITER = """
import signal, sys, time
from pdpx.core.files import atomic_path
target = sys.argv[1]
{setup}
with atomic_path(target) as tmp:
    with open(tmp, "w") as fh:
        fh.write("half of the new content " * 100_000)
        fh.flush()
    print("writing", flush=True)
    time.sleep(60)
print("finished", flush=True)
"""


def _interrupted(tmp_path, sig, setup: str = "") -> subprocess.CompletedProcess:
    target = tmp_path / "report.html"
    target.write_text("the previous report")
    proc = subprocess.Popen([sys.executable, "-c", WRITER.format(setup=textwrap.dedent(setup)), str(target)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing", proc.stderr.read()
        assert len(list(tmp_path.iterdir())) == 2  # the temporary file is there, beside the target
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "finished" not in out
    assert target.read_text() == "the previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"], err
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_sigterm_in_the_middle_of_a_write_removes_the_temporary_file_and_still_ends_the_process(tmp_path):
    done = _interrupted(tmp_path, signal.SIGTERM)
    assert done.returncode == -signal.SIGTERM  # ended by SIGTERM, as without pdpx's handler


def test_sigterm_goes_on_to_the_handler_that_was_there_before(tmp_path):
    setup = """
    def mine(signum, frame):
        print("my handler", flush=True)
        raise SystemExit(3)
    signal.signal(signal.SIGTERM, mine)
    """
    done = _interrupted(tmp_path, signal.SIGTERM, setup)
    assert done.returncode == 3
    assert "my handler" in done.stdout


def test_sigint_in_the_middle_of_a_write_removes_the_temporary_file(tmp_path):
    done = _interrupted(tmp_path, signal.SIGINT)
    assert "KeyboardInterrupt" in done.stderr
    assert done.returncode != 0


def test_ctrl_c_as_the_temporary_file_is_created_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    write_text_atomic(target, "old")
    real_open = os.open
    created = []

    def open_then_interrupted(name, flags, *args):
        os.close(real_open(name, flags, *args))
        created.append(name)
        raise KeyboardInterrupt  # arrives the instant the file exists, before its name is returned

    monkeypatch.setattr(files.os, "open", open_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target):
            pass
    monkeypatch.undo()
    assert created and not os.path.exists(created[0])
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_the_previous_sigterm_handler_is_back_after_a_write_and_after_a_failed_one(tmp_path):
    def mine(signum, frame):  # pragma: no cover - never called
        pass

    before = signal.signal(signal.SIGTERM, mine)
    try:
        write_text_atomic(tmp_path / "a.txt", "a")
        assert signal.getsignal(signal.SIGTERM) is mine
        with pytest.raises(RuntimeError):
            with atomic_path(tmp_path / "b.txt"):
                assert signal.getsignal(signal.SIGTERM) is not mine  # pdpx's, while writing
                raise RuntimeError("drawing failed")
        assert signal.getsignal(signal.SIGTERM) is mine
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_write_on_another_thread_leaves_the_signal_handlers_alone(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    seen = []

    def write():
        with atomic_path(tmp_path / "t.txt") as tmp:
            tmp.write_text("from a thread")
            seen.append(signal.getsignal(signal.SIGTERM))

    t = threading.Thread(target=write)
    t.start()
    t.join()
    assert seen == [before]
    assert (tmp_path / "t.txt").read_text() == "from a thread"
