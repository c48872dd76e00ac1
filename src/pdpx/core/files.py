"""Writing files safely: every file pdpx writes goes through :func:`atomic_path`.

The content is written to a temporary file in the destination's folder, flushed to
disk, then renamed over the destination (``os.replace``, atomic on one file
system). If anything fails on the way (a full disk, an error while drawing, an
interrupt), the previous file is left as it was and the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
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
    is untouched.
    """
    dest = Path(os.fspath(path)).expanduser()
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=f".tmp{dest.suffix}", dir=dest.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
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
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise


def write_text_atomic(path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`); returns the path."""
    dest = Path(os.fspath(path)).expanduser()
    with atomic_path(dest) as tmp, open(tmp, "w", encoding=encoding) as fh:
        fh.write(text)
    return dest
