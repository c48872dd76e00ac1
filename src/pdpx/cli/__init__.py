"""The ``pdpx`` command line (:mod:`.main`, the entry point ``pdpx = pdpx.cli:main``) and what only it uses.

* :mod:`.main`: the commands (``report``, ``plot``, ``pd``, ``demo``), their flags and messages.
* :mod:`.data`: data files (CSV, Parquet) read with ``--dates``, ``--dtypes``, ``--weights``, ``--drop``.
* :mod:`.output`: output names, atomic writes, and CSV cells a spreadsheet would read as formulas kept as text.
* :mod:`.model_files`: model files, read by their extension (pickles and R files only with ``--allow-pickle``).
* :mod:`.model_prechecks`: a model file's declared sizes checked, before any memory is spent on it.
* :mod:`.model_categories`: the categories a model stored for its columns, given to a CSV's columns.
* :mod:`.rds_check`: an R file (.rds, .rda, .RData) read byte by byte and refused when it declares too much.
* :mod:`.rds_export`: an opted-in R file exported by a fenced R process (``export_model.R``, a copy of the R
  package's ``pdpx::export_model()``).

``import pdpx`` does not import this package (nor click).
"""

from .main import main

__all__ = ["main"]
