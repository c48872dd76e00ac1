"""Helpers for benchmarks: best-of-k wall-clock timing and result rows."""

from __future__ import annotations

import gc
import time


def best_time(fn, *, repeat: int = 3, min_total: float = 0.0) -> float:
    """Smallest wall-clock time of ``repeat`` calls (after one warm-up call)."""
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < repeat or (time.perf_counter() - start) < min_total:
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= 50:
            break
    return min(times)


def once(fn) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def row(benchmark, case, pdpx_s, reference, reference_s, target, met, ratio=None, unit="s"):
    """One result row. ``unit="MiB"``: the reference column holds a memory figure, not a time."""
    return {
        "unit": unit,
        "benchmark": benchmark,
        "case": case,
        "pdpx_s": pdpx_s,
        "reference": reference,
        "reference_s": reference_s,
        "ratio": ratio if ratio is not None else reference_s / pdpx_s,
        "target": target,
        "met": bool(met),
    }
