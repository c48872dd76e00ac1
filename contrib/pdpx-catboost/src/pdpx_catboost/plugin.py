"""The pdpx plugin of CatBoost: the hook pdpx calls through the entry point ``pdpx: catboost``."""

from __future__ import annotations

import pdpx

from .adapter import CatBoostAdapter, is_catboost_model


@pdpx.hookimpl
def pdpx_adapt_model(model):
    """The CatBoost adapter for CatBoost models (recognised without importing catboost), else None."""
    if is_catboost_model(model):
        return CatBoostAdapter(model)
    return None
