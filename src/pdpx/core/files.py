"""Writing files safely: every file pdpx writes goes through :func:`atomic_path`.

The content is written to a temporary file in the destination's folder, flushed to
disk, then renamed over the destination (``os.replace``, atomic on one file
system). If anything fails on the way (a full disk, an error while drawing, an
interrupt: Ctrl-C, or SIGTERM while the main thread writes), the previous file is left
as it was and the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import threading
from pathlib import Path

from .errors import PdpxError


def check_writable(path, *, what: str = "path", suffixes: tuple[str, ...] | None = None) -> Path:
    """Check, before any work, that ``path`` can be written; returns it as a Path.

    The folder may not exist yet (it is created when writing), but the nearest
    existing one must be a writable folder, and ``path`` must not be a folder.
    ``suffixes``: the file name must end in one of them.
    """
    p = Path(os.fspath(path)).expanduser()
    if suffixes is not None and p.suffix.lower() not in suffixes:
        raise PdpxError(f"{what} {str(path)!r} must end in one of {list(suffixes)}")
    if p.is_dir():
        raise PdpxError(f"{what} {str(path)!r} is a folder; give a file name inside it")
    parent = p.parent
    while not parent.exists():
        if parent.parent == parent:
            break
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise PdpxError(f"{what} {str(path)!r}: {str(parent)!r} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PdpxError(f"{what} {str(path)!r} cannot be written: no permission to write in {str(parent)!r}")
    if p.exists() and not os.access(p, os.W_OK):
        raise PdpxError(f"{what} {str(path)!r} exists and is read-only")
    return p


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path next to ``path`` (same suffix); on success it replaces ``path``.

    Write to the yielded path (any library that takes a file name can). Missing
    folders are created. On an exception the temporary file is removed and ``path``
    is untouched; so it is on SIGTERM (while the main thread writes, a handler removes
    the temporary file, then does what the previous handler did: by default, end the
    process as SIGTERM does) and on Ctrl-C (its ``KeyboardInterrupt``), even one that
    arrives as the temporary file is created: its name is known before it exists.
    """
    dest = Path(os.fspath(path)).expanduser()
    dest.parent.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []  # the temporary file, named here before it is created
    try:
        with _removed_on_sigterm(made):
            _create_temporary(dest, made)
            tmp_path = made[0]
            yield tmp_path
            with open(tmp_path, "rb+") as fh:  # on disk before the rename
                os.fsync(fh.fileno())
            if dest.exists():
                os.chmod(tmp_path, dest.stat().st_mode & 0o777)
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp_path, 0o666 & ~umask)
            os.replace(tmp_path, dest)
            made.clear()
    except BaseException:
        _remove(made)
        raise


def _create_temporary(dest: Path, made: list) -> None:
    """Create a new hidden file beside ``dest`` (``.<name>.<random>.tmp<suffix>``), its name put in ``made``
    before the file exists, so that whatever interrupts its creation can remove it."""
    for _ in range(100):
        made[:] = [dest.parent / f".{dest.name}.{secrets.token_hex(6)}.tmp{dest.suffix}"]
        try:
            fd = os.open(made[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another file has that name: not ours to remove
            made.clear()
            continue
        os.close(fd)
        return
    raise PdpxError(f"could not create a temporary file in {str(dest.parent)!r} to write {dest.name!r}: "
                    "100 random names were taken; remove the hidden .tmp files there")  # pragma: no cover


def _remove(made: list) -> None:
    for tmp in made:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    made.clear()


@contextlib.contextmanager
def _removed_on_sigterm(made: list):
    """While the block runs on the main thread: on SIGTERM, remove the files in ``made``, then hand the signal to
    the handler that was there before (by default: the process ends as SIGTERM ends it). The previous handler
    is back when the block ends. Elsewhere (another thread, a handler set outside Python, SIGTERM ignored) the
    block runs as it is."""
    previous = None
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGTERM"):
        previous = signal.getsignal(signal.SIGTERM)
    if previous is None or previous is signal.SIG_IGN:
        yield
        return

    def on_sigterm(signum, frame):
        _remove(made)
        if callable(previous):
            previous(signum, frame)
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # what SIGTERM does without a handler: end the process
        signal.raise_signal(signal.SIGTERM)
        raise SystemExit(128 + signum)  # pragma: no cover - a platform where the default did not end it

    try:
        signal.signal(signal.SIGTERM, on_sigterm)
    except ValueError:  # not the main interpreter's main thread after all (a subinterpreter): no handler
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def write_text_atomic(path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`); returns the path."""
    dest = Path(os.fspath(path)).expanduser()
    with atomic_path(dest) as tmp, open(tmp, "w", encoding=encoding) as fh:
        fh.write(text)
    return dest
