"""The whole curve: :func:`threshold_grid` lives in :mod:`pdpx.core.steps` (a session builds ``grid="thresholds"``
from it, and core cannot import the methods); it is named here too for the counts machinery and its tests."""

from __future__ import annotations

from ...core.steps import threshold_grid

__all__ = ["threshold_grid"]
