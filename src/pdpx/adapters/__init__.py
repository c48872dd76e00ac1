"""Adapters: one module per model library, each a pdpx plugin."""
