"""Settings: the memory budget.

Two levels:

* :func:`set_config` changes the process-wide default (every thread and task that
  has not overridden it sees the new value);
* :func:`config_context` overrides settings for a block, in the current *context*
  only (a ``contextvars.ContextVar``): other threads and asyncio tasks never see it,
  and leaving the block restores exactly what was there, whatever happened meanwhile.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import re
import threading
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from .errors import PdpxError, PdpxTypeError

_DEFAULT_BUDGET = 256 * 2**20
_defaults = {"memory_budget": _DEFAULT_BUDGET}
_defaults_lock = threading.Lock()
#: Overrides of the current context (config_context); an immutable dict per context.
_overrides: contextvars.ContextVar[Mapping] = contextvars.ContextVar("pdpx_config", default=MappingProxyType({}))

_UNITS = {"": 1, "B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
_MIN_BUDGET = 2**20
_MAX_BUDGET = 2**50


def parse_bytes(value, *, name: str = "memory_budget") -> int:
    """``256_000_000``, ``"256MB"``, ``"1.5 GiB"`` -> bytes (units are powers of 1024).

    Between 1 MiB and 1 PiB; NaN, infinity, booleans and other types are refused
    with a message naming ``name``.
    """
    example = "a number of bytes or a string like '512MB' or '2GB'"
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise PdpxTypeError(f"{name} must be {example}; got {value!r} (a {type(value).__name__})")
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", value)
        if not m or m.group(2).upper() not in _UNITS:
            raise PdpxError(f"{name} {value!r} not understood; write e.g. '512MB' or '2GB'")
        number = float(m.group(1)) * _UNITS[m.group(2).upper()]
    else:
        number = float(value)
    if not math.isfinite(number):
        raise PdpxError(f"{name} must be a finite number of bytes, e.g. '512MB'; got {value!r}")
    if number < _MIN_BUDGET:
        raise PdpxError(f"{name} of {value!r} ({int(number)} bytes) is too small; use at least '1MB'")
    if number > _MAX_BUDGET:
        raise PdpxError(f"{name} of {value!r} is more than 1 PiB; give the bytes pdpx may really use, e.g. '8GB'")
    return int(number)


def get_config() -> dict:
    """The settings in effect here: the process defaults with this context's overrides (a copy)."""
    with _defaults_lock:
        out = dict(_defaults)
    out.update(_overrides.get())
    return out


def _checked(kwargs: dict) -> dict:
    unknown = sorted(set(kwargs) - set(_defaults))
    if unknown:
        raise PdpxTypeError(f"unknown setting(s) {unknown}; pdpx's settings: {sorted(_defaults)}")
    out = {}
    if kwargs.get("memory_budget") is not None:
        out["memory_budget"] = parse_bytes(kwargs["memory_budget"])
    return out


def set_config(*, memory_budget=None) -> None:
    """Change the process-wide default settings.

    Parameters
    ----------
    memory_budget : int or str, optional
        Bytes that intermediate arrays of one computation may use, e.g. ``"512MB"``.
        The default is 256 MiB.

    Notes
    -----
    Blocks under :func:`config_context` keep their own values.
    """
    values = _checked({"memory_budget": memory_budget})
    with _defaults_lock:
        _defaults.update(values)


@contextlib.contextmanager
def config_context(**settings) -> Iterator[None]:
    """Override settings in this context only: ``with pdpx.config_context(memory_budget="1GB"): ...``.

    Other threads and asyncio tasks do not see the override; leaving the block
    restores the previous values of this context.
    """
    values = _checked(settings)
    token = _overrides.set(MappingProxyType({**_overrides.get(), **values}))
    try:
        yield
    finally:
        _overrides.reset(token)


def format_bytes(n: float) -> str:
    """A byte count for people: ``1.5 GiB``."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover
