"""The questions users ask after a PD curve: which features matter, which interact, what ALE says.

* :mod:`.importance`: :func:`importance` (PD / ICE based variable importance);
* :mod:`.interaction`: :func:`h_statistic` (Friedman and Popescu's H), on the ``exact``
  engine for tree models (:mod:`.evaluate` evaluates PD functions at the rows of X);
* :mod:`.ale`: :func:`ale` (accumulated local effects);
* :mod:`.derivative`: :func:`derivative_ice` (derivative ICE, ``kind="derivative"``);
* :mod:`.compare`: :func:`compare_methods` (``exact`` against ``recursion``).

This layer sits above the core and the methods and below the outputs; its results draw
themselves with :mod:`pdpx.outputs` (imported lazily).
"""

from __future__ import annotations

from importlib import import_module

#: public name -> the module that defines it
_WHERE = {
    "importance": ".importance",
    "plot_importance": ".importance",
    "h_statistic": ".interaction",
    "HStatistic": ".interaction",
    "ale": ".ale",
    "derivative_ice": ".derivative",
    "compare_methods": ".compare",
}

__all__ = sorted(_WHERE)


def resolve(name: str):
    """The public object ``name`` (a function or class), imported on first use.

    ``pdpx.<name>`` goes through here: a submodule named like its function
    (``importance.py``), once imported, shadows the lazy attribute of this package.
    """
    return getattr(import_module(_WHERE[name], __name__), name)


def __getattr__(name):  # lazy: each measure imports what it needs
    if name in _WHERE:
        return resolve(name)
    raise AttributeError(f"module 'pdpx.explain' has no attribute {name!r}")
