"""Process-wide settings: the memory budget."""

from __future__ import annotations

import contextlib
import re

from .errors import PdpxError

_DEFAULT_BUDGET = 256 * 2**20
_config = {"memory_budget": _DEFAULT_BUDGET}

_UNITS = {"": 1, "B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_bytes(value) -> int:
    """``256_000_000``, ``"256MB"``, ``"1.5 GiB"`` -> bytes (units are powers of 1024)."""
    if isinstance(value, bool):
        raise PdpxError(f"memory_budget must be a number of bytes or a string like '512MB', got {value!r}")
    if isinstance(value, (int, float)):
        out = int(value)
    elif isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", value)
        if not m or m.group(2).upper() not in _UNITS:
            raise PdpxError(f"memory_budget {value!r} not understood; write e.g. '512MB' or '2GB'")
        out = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    else:
        raise PdpxError(f"memory_budget must be a number of bytes or a string like '512MB', got {value!r}")
    if out < 2**20:
        raise PdpxError(f"memory_budget of {out} bytes is too small; use at least '1MB'")
    return out


def get_config() -> dict:
    """The current settings (a copy)."""
    return dict(_config)


def set_config(*, memory_budget=None) -> None:
    """Change settings for this process.

    Parameters
    ----------
    memory_budget : int or str, optional
        Bytes that intermediate arrays of one computation may use, e.g. ``"512MB"``.
        The default is 256 MiB.
    """
    if memory_budget is not None:
        _config["memory_budget"] = parse_bytes(memory_budget)


@contextlib.contextmanager
def config_context(**kwargs):
    """Temporarily change settings: ``with pdpx.config_context(memory_budget="1GB"): ...``."""
    old = dict(_config)
    try:
        set_config(**kwargs)
        yield
    finally:
        _config.clear()
        _config.update(old)


def format_bytes(n: float) -> str:
    """A byte count for people: ``1.5 GiB``."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover
