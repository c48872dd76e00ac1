"""Progress bars (tqdm, imported lazily) shared by methods (their threads: :mod:`pdpx.core.threads`).

Where a bar goes (:func:`progress_bar`):

* ``progress=False``: nowhere;
* ``progress=None`` (the default): only for long work (the bar appears once the run has
  taken :data:`DELAY` seconds, and is removed when it ends), and only where someone is
  watching: a terminal (stderr is one) or a Jupyter kernel (a notebook, JupyterLab, VS
  Code), never under CI (the ``CI`` environment variable set) nor when stderr is a file or
  a pipe;
* ``progress=True``: always, from the start, and kept when done.

In a Jupyter kernel the bar is tqdm's notebook widget where ipywidgets is installed, and
tqdm's text bar otherwise (pdpx chooses itself rather than through ``tqdm.auto``, which
warns "IProgress not found" without ipywidgets). A terminal IPython is a terminal.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable

#: Seconds a default (``progress=None``) run takes before its bar appears.
DELAY = 3.0


def progress_bar(total: int, *, progress: bool | None, desc: str):
    """A tqdm bar (the notebook widget in a Jupyter kernel with ipywidgets), or a no-op one.

    ``progress=None`` (the default) shows a bar only in a terminal or a Jupyter kernel
    outside CI, and only once the run has taken :data:`DELAY` seconds, so quick calls
    show nothing; ``progress=True`` shows it at once, anywhere (stderr outside a kernel).
    """
    if progress is False:
        return _NoBar(total)
    kernel = in_kernel()
    if progress is None and (os.environ.get("CI") or not (kernel or _stderr_is_terminal())):
        return _NoBar(total)
    if progress:
        return _open(kernel, total=total, desc=desc, leave=True)
    return _LateBar(total, lambda n, start: _open(kernel, total=total, desc=desc, leave=False, initial=n,
                                                   start=start))


def _open(kernel: bool, *, start: float | None = None, **options):
    """A tqdm bar now: the notebook widget in a kernel with ipywidgets, else the text bar on stderr."""
    make = (_widget_bar() if kernel else None) or _text_bar()
    if make is None:  # pragma: no cover - tqdm is a dependency
        return _NoBar(options["total"])
    bar = make(**options)
    if start is not None:
        bar.start_t = start  # the elapsed time and rate count from the start of the work
    return bar


def in_kernel() -> bool:
    """Whether this code runs in a Jupyter (IPython) kernel: a notebook, JupyterLab, VS Code, Colab.

    A terminal IPython is not a kernel. Nothing is imported to find out: a kernel has
    imported IPython and ipykernel already.
    """
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001 - a broken IPython is no kernel to draw in
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def _widget_bar():
    """tqdm's notebook bar, or None where ipywidgets is missing (or the frontend draws no widgets)."""
    if any(k == "QT_API" or k.startswith("SPYDER") for k in os.environ):
        return None  # Jupyter QtConsole and Spyder draw no widgets
    try:
        import ipywidgets  # noqa: F401
        from tqdm import notebook
    except Exception:  # noqa: BLE001 - missing or broken: the text bar will do
        return None
    return notebook.tqdm if getattr(notebook, "IProgress", None) is not None else None


def _text_bar():
    try:
        from tqdm.std import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # pragma: no cover
        return False


class _LateBar:
    """Counts like a tqdm bar and opens the real one (``make(n, start)``) once the work has taken
    :data:`DELAY` seconds: quick calls create no bar at all (in a notebook, no widget)."""

    def __init__(self, total: int, make: Callable):
        self._total, self.n = total, 0
        self._make, self._bar, self._start = make, None, time.time()
        self._postfix = ""

    @property
    def total(self):
        """The number of steps (settable, like tqdm's)."""
        return self._total

    @total.setter
    def total(self, value):
        self._total = value
        if self._bar is not None:
            self._bar.total = value

    def update(self, n=1):
        self.n += n
        if self._bar is not None:
            self._bar.update(n)
        elif (self._total is None or self.n < self._total) and time.time() - self._start >= DELAY:  # work left
            self._bar = self._make(self.n, self._start)
            self._bar.total = self._total
            if self._postfix:
                self._bar.set_postfix_str(self._postfix)

    def set_postfix_str(self, s):
        self._postfix = s
        if self._bar is not None:
            self._bar.set_postfix_str(s)

    def refresh(self):
        if self._bar is not None:
            self._bar.refresh()

    def close(self):
        if self._bar is not None:
            self._bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _NoBar:
    """Counts like a tqdm bar (``n``, ``total``) and shows nothing."""

    def __init__(self, total: int = 0):
        self.total, self.n = total, 0

    def update(self, n=1):
        self.n += n

    def set_postfix_str(self, s):
        pass

    def refresh(self):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
