"""The version of pdpx (one place: ``pdpx.__version__`` and the report read it here)."""

__version__ = "0.1.0"
