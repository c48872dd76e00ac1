"""A folder of this user's alone for pdpx's own files (locks, and numba's cache when it has no other place).

A shared folder such as the system's temporary folder is written by every local user, so a name
chosen in advance there can be planted by another one: a symbolic link to somewhere else, a folder
they own, a file that takes the name. :func:`private_dir` hands out a folder only when it is this
user's own: created with permissions 0o700, and when it already exists, a real folder (not a link;
never followed), owned by this user, that nobody else can read or write. A candidate that fails the
test is refused and the next one tried; with none, the answer is None and the caller goes without
(no lock, no cache on disk) rather than use a place another user controls.

Candidates, in order: ``$XDG_RUNTIME_DIR/pdpx`` (a per-user folder the system made),
``$XDG_CACHE_HOME/pdpx`` (default ``~/.cache/pdpx``), then ``pdpx-<uid>`` in the temporary folder.
"""

from __future__ import annotations

import os
import stat
import tempfile

_FOUND: dict[str, str | None] = {}


def _uid() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None


def candidates() -> list[str]:
    """The folders :func:`private_dir` tries, in order (absolute paths; none need exist)."""
    out = []
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        out.append(os.path.join(runtime, "pdpx"))
    cache = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache):
        home = os.path.expanduser("~")
        cache = os.path.join(home, ".cache") if os.path.isabs(home) else ""
    if cache:
        out.append(os.path.join(cache, "pdpx"))
    if os.name == "nt":  # pragma: no cover - Windows: the user's own local application data
        local = os.environ.get("LOCALAPPDATA", "")
        if os.path.isabs(local):
            out.append(os.path.join(local, "pdpx"))
    uid = _uid()
    out.append(os.path.join(tempfile.gettempdir(), f"pdpx-{uid if uid is not None else 'user'}"))
    return out


def checked_dir(path: str, parents: bool = False) -> str | None:
    """``path`` as a private folder of this user's: created (mode 0o700) if missing, else accepted only when
    it is a real folder (a symbolic link is refused, never followed), owned by this user, closed to others
    and writable. None when refused or when it cannot be created (a read-only disk).

    ``parents``: create missing parent folders too (for a folder under the user's home, not for a shared one).
    """
    try:
        if parents:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):  # a symbolic link or a file planted under the name
        return None
    uid = _uid()
    if uid is not None and (st.st_uid != uid or st.st_mode & 0o077):
        return None  # another user's, or open to others: what is inside may not be ours
    if not os.access(path, os.W_OK | os.X_OK):
        return None
    return path


def private_dir(sub: str | None = None) -> str | None:
    """This user's private folder for pdpx (see the module docstring), or its subfolder ``sub`` (created
    private too); None when no candidate is safe and writable. Found once per process."""
    key = sub or ""
    if key in _FOUND:
        return _FOUND[key]
    found = None
    if sub:
        base = private_dir()
        found = checked_dir(os.path.join(base, sub)) if base is not None else None
    else:
        shared = os.path.realpath(tempfile.gettempdir())
        for path in candidates():
            found = checked_dir(path, parents=os.path.realpath(os.path.dirname(path)) != shared)
            if found is not None:
                break
    _FOUND[key] = found
    return found


def open_private(path: str) -> int:
    """Open (creating, mode 0o600) the file ``path`` in a private folder for reading and writing, never
    through a symbolic link; a file descriptor."""
    return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)


def forget() -> None:
    """Forget the folders found (tests that change the environment)."""
    _FOUND.clear()
