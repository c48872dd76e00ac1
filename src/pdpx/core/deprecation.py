"""Old names of the public API, kept working for one release with a warning that names the new one.

:func:`deprecated` warns with a :class:`DeprecationWarning` attributed to the user's line
(:func:`pdpx.core.errors.warn`), saying what to write instead and in which release the old
spelling goes (:data:`REMOVED_IN`). :func:`renamed_arguments` takes a function's renamed
keyword arguments out of its ``**kwargs``: each old name warns, is checked under its own
name, and its value answers for the new name. ``docs/api.md`` ("Deprecated names") lists
every old name.
"""

from __future__ import annotations

from typing import Any, Mapping, MutableMapping

from .errors import PdpxError, warn
from .validation import check_param

#: The release in which the deprecated names stop working (they work, with a warning, until then).
REMOVED_IN = "0.2.0"


def deprecated(old: str, new: str) -> None:
    """Warn that ``old`` (what the caller wrote) is deprecated in favour of ``new`` (what to write instead)."""
    warn(DeprecationWarning(f"{old} is deprecated; use {new} instead (the same result). "
                            f"{old} will stop working in pdpx {REMOVED_IN}."))


def renamed_arguments(function: str, kwargs: MutableMapping[str, Any], renames: Mapping[str, tuple[str, list]],
                      current: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The values of the new names, with the old names of ``renames`` taken out of ``kwargs``.

    ``renames`` maps an old keyword to ``(new keyword, its constraints)``; ``current`` holds the
    new keywords' values as called, ``defaults`` their defaults. An old name given warns
    (:func:`deprecated`), is checked under its own name, and its value is returned for the new
    name; an old and a new name both given (the new one not at its default) is an error.
    """
    values = dict(current)
    for old, (new, constraints) in renames.items():
        if old not in kwargs:
            continue
        value = kwargs.pop(old)
        if current[new] is not defaults[new] and current[new] != defaults[new]:
            raise PdpxError(f"{function}(): pass {new}= only; {old}= is its old name (deprecated), and both were "
                            f"given ({old}={value!r}, {new}={current[new]!r})")
        deprecated(f"{function}({old}=...)", f"{function}({new}=...)")
        check_param(function, old, value, constraints)
        values[new] = value
    return values
