"""The pdpx plugin of CatBoost: the hook pdpx calls through the entry point ``pdpx: catboost``."""

from __future__ import annotations

from pdpx.extend import hookimpl

from .adapter import CatBoostAdapter, is_catboost_model


@hookimpl
def pdpx_adapt_model(model):
    """The CatBoost adapter for CatBoost models (recognised without importing catboost), else None."""
    if is_catboost_model(model):
        return CatBoostAdapter(model)
    return None
