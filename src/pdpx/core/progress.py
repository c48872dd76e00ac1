"""Progress bars (tqdm, imported lazily) and thread pools (joblib) shared by methods."""

from __future__ import annotations

import os
import sys
from typing import Callable, Iterable, Sequence


def progress_bar(total: int, *, progress: bool | None, desc: str):
    """A tqdm bar, or a no-op one.

    ``progress=None`` (the default) shows a bar only in an interactive terminal and
    only once the run has taken 3 seconds, so quick calls print nothing.
    """
    if progress is False or (progress is None and not _interactive()):
        return _NoBar(total)
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the 'fast' extra
        return _NoBar(total)
    return tqdm(total=total, desc=desc, delay=0 if progress else 3, leave=bool(progress))


def _interactive() -> bool:
    try:
        return sys.stderr.isatty() and not os.environ.get("CI")
    except (AttributeError, ValueError):  # pragma: no cover
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


def effective_jobs(n_jobs: int | None) -> int:
    """Threads for ``n_jobs`` (None: 1; negative: counted back from the number of cores)."""
    if n_jobs is None:
        return 1
    cores = os.cpu_count() or 1
    if n_jobs < 0:
        return max(1, cores + 1 + n_jobs)
    return max(1, int(n_jobs))


def run_tasks(fn: Callable, tasks: Sequence, *, n_jobs: int | None, bar) -> Iterable:
    """Run ``fn(task)`` for each task, in threads when ``n_jobs`` > 1, yielding results in order.

    Threads, not processes: the model and data are shared, never pickled, and the
    heavy work (numpy, compiled predict code, numba kernels) releases the GIL.
    """
    jobs = min(effective_jobs(n_jobs), len(tasks)) if tasks else 1
    if jobs <= 1:
        for t in tasks:
            out = fn(t)
            bar.update(1)
            yield out
        return
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=jobs, backend="threading", return_as="generator")
    for out in parallel(delayed(fn)(t) for t in tasks):
        bar.update(1)
        yield out
