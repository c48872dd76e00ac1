"""Settings: the memory budget, and whether tree methods are checked against the model (``check_trees``).

The budget's default (``"auto"``) follows the machine: half of the memory this
process can still take (:func:`available_memory`: the machine's available memory,
a container's limit, the address-space limit), read again when a call needs it;
256 MiB where none of these can be read.

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
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from .errors import PdpxError, PdpxTypeError

#: The budget where the memory available cannot be read; the smallest the machine's default takes.
_FALLBACK_BUDGET = 256 * 2**20
_MIN_AUTO_BUDGET = 16 * 2**20
_defaults = {"memory_budget": "auto", "check_trees": True}
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
    """The settings in effect here: the process defaults with this context's overrides (a copy).

    ``memory_budget`` is in bytes: ``"auto"`` (the default) is resolved to half of the
    memory available now (:func:`machine_budget`).
    """
    with _defaults_lock:
        out = dict(_defaults)
    out.update(_overrides.get())
    if out["memory_budget"] == "auto":
        out["memory_budget"] = machine_budget()
    return out


def setting(name: str):
    """One setting in effect here, as stored (``memory_budget`` may be ``"auto"``): cheaper than :func:`get_config`."""
    value = _overrides.get().get(name)
    if value is None:
        with _defaults_lock:
            value = _defaults[name]
    return value


def _checked(kwargs: dict) -> dict:
    unknown = sorted(set(kwargs) - set(_defaults))
    if unknown:
        raise PdpxTypeError(f"unknown setting(s) {unknown}; pdpx's settings: {sorted(_defaults)}")
    out = {}
    budget = kwargs.get("memory_budget")
    if isinstance(budget, str) and budget.strip().lower() == "auto":
        out["memory_budget"] = "auto"
    elif budget is not None:
        out["memory_budget"] = parse_bytes(budget)
    check = kwargs.get("check_trees")
    if check is not None:
        if not isinstance(check, bool):
            raise PdpxTypeError(f"check_trees must be True or False; got {check!r}")
        out["check_trees"] = check
    return out


def set_config(*, memory_budget=None, check_trees=None) -> None:
    """Change the process-wide default settings.

    Parameters
    ----------
    memory_budget : int or str, optional
        Bytes that intermediate arrays, results and tidy frames of one computation may
        use, e.g. ``"512MB"``. ``"auto"`` (the default): half of the memory this
        process can still take, read when a call needs it (see :func:`available_memory`).
    check_trees : bool, optional
        Whether the first answer of a tree method (``exact``) for a model, response, column dtypes and feature
        is checked against the model's own predict on a sample of grid points (:mod:`pdpx.core.trust`).
        True by default; False only for benchmarks of the engine alone.

    Notes
    -----
    Blocks under :func:`config_context` keep their own values.
    """
    values = _checked({"memory_budget": memory_budget, "check_trees": check_trees})
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


_machine = {"at": -1.0, "key": None, "budget": _FALLBACK_BUDGET}


def machine_budget() -> int:
    """The default memory budget: half of :func:`available_memory` (256 MiB when it cannot be read).

    Read at most once a second, and again whenever the process's address-space
    limit changes, so that the settings of one call agree with themselves.
    """
    key = _address_space_limit()
    now = time.monotonic()
    if key != _machine["key"] or now - _machine["at"] > 1.0:
        free = available_memory()
        _machine.update(at=now, key=key,
                        budget=_FALLBACK_BUDGET if free is None else int(min(max(free // 2, _MIN_AUTO_BUDGET),
                                                                                 _MAX_BUDGET)))
    return _machine["budget"]


def available_memory() -> int | None:
    """Bytes this process can still allocate, or None when nothing says.

    The least of: the machine's available memory (``MemAvailable`` of
    ``/proc/meminfo``, or psutil's where installed), a container's (cgroup's) memory
    limit less what it uses, and the process's address-space limit
    (``RLIMIT_AS``) less the address space it holds.
    """
    found = [_machine_available(), _cgroup_available(), _address_space_available()]
    found = [v for v in found if v is not None]
    return max(0, min(found)) if found else None


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def _machine_available() -> int | None:
    text = _read("/proc/meminfo")
    if text:
        for line in text.splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    try:
        import psutil
    except ImportError:
        return None
    return int(psutil.virtual_memory().available)


def _cgroup_available() -> int | None:
    """A cgroup's limit less its usage (v2, then v1); None without a limit."""
    for limit_path, usage_path in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read(limit_path), _read(usage_path)
        if limit is None or usage is None or not limit.strip().isdigit():
            continue  # "max": no limit
        limit_b, usage_b = int(limit), int(usage)
        if limit_b >= 2**60:  # v1's "no limit"
            continue
        return limit_b - usage_b
    return None


def _address_space_limit() -> int | None:
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


def _address_space_available() -> int | None:
    limit = _address_space_limit()
    if limit is None:
        return None
    statm = _read("/proc/self/statm")
    if not statm:
        return None
    return limit - int(statm.split()[0]) * os.sysconf("SC_PAGE_SIZE")
