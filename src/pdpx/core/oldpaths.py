"""The old import paths of the extension API: each name :mod:`pdpx.extend` makes public, read from the module that
defines it by code outside pdpx, warns once per place with a :class:`DeprecationWarning` naming
``pdpx.extend``; it keeps working.

``docs/plugins.md`` once taught ``from pdpx.core.adapter import Adapter`` and the like; those modules are pdpx's
implementation and may change. Each module listed in :data:`MOVED` ends with ``watch(__name__)``, which gives it a
module class whose attribute lookup checks, for the names moved only, who asks: pdpx's own modules (and, in a
source checkout, pdpx's tests and benchmarks, which test the implementation itself) read them silently. This
module imports nothing of pdpx, so any module may call it.
"""

from __future__ import annotations

import sys
import types
import warnings
from pathlib import Path

#: Module -> the names of :mod:`pdpx.extend` it defines (``tests/test_extend.py`` keeps the two in step).
MOVED = {
    "pdpx.core.adapter": frozenset({"Adapter", "as_2d"}),
    "pdpx.core.booster": frozenset({"BoosterAdapter", "Extracted", "Unavailable", "self_check", "library_classes"}),
    "pdpx.core.hookspecs": frozenset({"hookimpl"}),
    "pdpx.core.ir": frozenset({"TreeEnsemble", "TreeModel", "NAN_MISSING", "NAN_AS_ZERO", "ZERO_OR_NAN_MISSING",
                               "model_cache", "numeric_encoder", "numeric_values", "fingerprint"}),
    "pdpx.core.method": frozenset({"Method", "Batch", "MethodResult", "Request", "MethodOptions", "option"}),
    "pdpx.core.plugins": frozenset({"adapt", "get_methods", "get_plugin_manager", "plugin_manager",
                                    "reset_plugin_manager"}),
    "pdpx.plugins.brute": frozenset({"grid_points"}),
    "pdpx.adapters.sklearn_transforms": frozenset({"ColumnMap", "register_rule", "declare_columnwise",
                                                   "declare_elementwise"}),
}

_PACKAGE = Path(__file__).resolve().parents[1]
_REPO = _PACKAGE.parents[1]
#: pdpx's own files (a module run as ``python -m pdpx...`` is ``__main__``), and in a source checkout the folders
#: whose code reads the implementation on purpose (white-box tests, benchmarks).
_OWN = (str(_PACKAGE),) + (tuple(str(_REPO / d) for d in ("tests", "benchmarks", "contrib"))
                           if (_REPO / "pyproject.toml").is_file() else ())


def _outside(frame) -> bool:
    """Whether ``frame`` (the code reading a name) is outside pdpx."""
    name = frame.f_globals.get("__name__", "") or ""
    if name == "pdpx" or name.startswith("pdpx.") or name.startswith("importlib"):
        return False
    return not frame.f_code.co_filename.startswith(_OWN)


class _OldPath(types.ModuleType):
    """A module some of whose names moved to :mod:`pdpx.extend` (see the module docstring)."""

    def __getattribute__(self, name):
        if name in MOVED.get(types.ModuleType.__getattribute__(self, "__name__"), ()) and \
                _outside(sys._getframe(1)):
            module = types.ModuleType.__getattribute__(self, "__name__")
            warnings.warn(f"importing {name} from {module} is deprecated: that module is pdpx's implementation "
                          f"and may change; write `from pdpx.extend import {name}` (the same object)",
                          DeprecationWarning, stacklevel=2)
        return types.ModuleType.__getattribute__(self, name)


def watch(module_name: str) -> None:
    """Make the names :data:`MOVED` lists for ``module_name`` warn when read from outside pdpx."""
    sys.modules[module_name].__class__ = _OldPath
