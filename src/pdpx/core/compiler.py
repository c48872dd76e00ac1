"""The one compile helper: :func:`njit`, which every numba kernel of pdpx is decorated with, and where they are cached.

Every compiled function of pdpx goes through :func:`njit`: the tree machinery's kernels
(:mod:`pdpx.plugins.trees`, each declared in its module's records) and the kernels of
the modules of :data:`ELSEWHERE` (the regions' split sums, :mod:`pdpx.explain.split_sums`).
The warm-up (``python -m pdpx.plugins.trees.warmup``) compiles both: the records' cases,
and each module of :data:`ELSEWHERE` by its ``warm_up()`` (:func:`warm_up_elsewhere`, by
module name at run time, so this module imports nothing above the core).
``tests/core/test_compiler.py`` checks that no module compiles otherwise, that
:data:`ELSEWHERE` names every module outside the tree machinery that uses :func:`njit`,
and that after the warm-up a real call compiles nothing more.

numba picks a writable folder for a ``cache=True`` function when it is decorated (at import):
``NUMBA_CACHE_DIR``, the package's ``__pycache__``, then the user's cache folder (``~/.cache/numba``).
With none writable (a read-only install and a read-only home, as in many containers) the decoration
raises ``RuntimeError: no locator available``, and importing the kernels would fail every call, brute
force included. :func:`where` decides once per process, asking numba itself (it builds numba's cache
object for a function of this folder, :func:`_probe`: every kernel module sits in the same installation):

* ``"numba"``: numba has its place; nothing changes;
* ``"private"``: numba has none, so the kernels are cached in this user's private folder
  (:func:`pdpx.core.userdir.private_dir`, subfolder ``numba-cache``); only the kernels' decoration sees
  that folder (numba's setting is restored at once), and processes pdpx starts are given it as
  ``NUMBA_CACHE_DIR``;
* ``"memory"``: nowhere to write: the kernels are compiled in memory, for this process only
  (``cache=False``), and :func:`note` says so in ``res.notes``.
"""

from __future__ import annotations

import contextlib
import importlib
import threading

from .userdir import private_dir

#: The modules outside the tree machinery whose kernels compile through :func:`njit`, each with a ``warm_up()``
#: that compiles them for the argument types its real calls give them (named, not imported: they sit above the
#: core). The tree machinery's kernels are declared in its records (:mod:`pdpx.plugins.trees.registry`).
ELSEWHERE = ("pdpx.explain.split_sums",)

_state: dict[str, str | None] = {}
_lock = threading.RLock()


def _probe():
    """A plain function of this folder: numba would cache it where it caches the kernels."""


def _can_cache(cache_dir: str | None = None) -> bool:
    """Whether numba finds a writable cache folder for a function of this folder (with ``cache_dir`` as
    ``NUMBA_CACHE_DIR``, when given)."""
    from numba.core import caching

    try:
        with _cache_dir(cache_dir):
            caching.FunctionCache(_probe)
    except Exception:  # noqa: BLE001 - "no locator available" (RuntimeError), or an unwritable folder
        return False
    return True


@contextlib.contextmanager
def _cache_dir(path: str | None):
    """numba's ``CACHE_DIR`` set to ``path`` for the block (unchanged when None)."""
    if path is None:
        yield
        return
    from numba.core import config

    with _lock:
        old = config.CACHE_DIR
        config.CACHE_DIR = path
        try:
            yield
        finally:
            config.CACHE_DIR = old


def where() -> str:
    """``"numba"``, ``"private"`` or ``"memory"``: where the kernels are cached (see the module docstring)."""
    with _lock:
        if "where" not in _state:
            if _can_cache():
                _state.update(where="numba", dir=None)
            else:
                folder = private_dir("numba-cache")
                if folder is not None and _can_cache(folder):
                    _state.update(where="private", dir=folder)
                else:
                    _state.update(where="memory", dir=None)
        return _state["where"]


def cache_dir() -> str | None:
    """The private folder the kernels are cached in when :func:`where` is ``"private"``, else None."""
    where()
    return _state["dir"]


def note() -> str | None:
    """What ``res.notes`` says when numba could not cache the kernels where it looks, or None."""
    place = where()
    if place == "memory":
        return ("numba found no writable folder for its cache (not next to pdpx, not in the home folder, and no "
                "private one in the temporary folder), so pdpx's kernels were compiled in memory for this "
                "process only; set the environment variable NUMBA_CACHE_DIR to a writable folder before starting "
                "Python to keep them between processes")
    if place == "private":
        return (f"numba could write its cache in none of the places it looks (NUMBA_CACHE_DIR, next to pdpx, its "
                f"user cache folder), so pdpx's kernels are cached in pdpx's private folder {_state['dir']}; "
                "set NUMBA_CACHE_DIR to a writable folder to choose the place")
    return None


def njit(*args, **kwargs):
    """``numba.njit``, for every kernel of pdpx: with ``cache=True`` kept where numba can cache (:func:`where`)
    and dropped where it cannot (compiled in memory instead of failing at import). Each function it compiles
    is listed by :func:`kernels`."""
    import numba

    if args and callable(args[0]):  # @njit without arguments
        return _listed(numba.njit(*args, **kwargs))
    if not kwargs.get("cache"):
        return _listed_by(numba.njit(*args, **kwargs))
    place = where()
    if place == "memory":
        return _listed_by(numba.njit(*args, **dict(kwargs, cache=False)))
    decorate = numba.njit(*args, **kwargs)
    if place == "numba":
        return _listed_by(decorate)

    def in_private_cache(fn):
        with _cache_dir(_state["dir"]):
            return _listed(decorate(fn))

    return in_private_cache


_kernels: dict = {}


def _listed(dispatcher):
    """``dispatcher``, listed under ``module.name`` of its Python function."""
    fn = dispatcher.py_func
    with _lock:
        _kernels[f"{fn.__module__}.{fn.__qualname__}"] = dispatcher
    return dispatcher


def _listed_by(decorate):
    """The decorator ``decorate``, listing what it makes (:func:`_listed`)."""
    return lambda fn: _listed(decorate(fn))


def kernels() -> dict:
    """``{module.name: dispatcher}`` of every function :func:`njit` has compiled (or will compile on its first
    call) in this process so far: those of every kernel module imported."""
    with _lock:
        return dict(_kernels)


def warm_up_elsewhere() -> None:
    """Compile the kernels of every module of :data:`ELSEWHERE` (its ``warm_up()``)."""
    for name in ELSEWHERE:
        importlib.import_module(name).warm_up()


def forget() -> None:
    """Decide again on the next decoration (tests)."""
    with _lock:
        _state.clear()
