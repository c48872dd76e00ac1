"""The times of a survival model's curves (``times=``): checked, defaulted, named.

A survival model's ``survival`` and ``cumulative_hazard`` responses
(:data:`pdpx.core.adapter.TIME_RESPONSES`) have one output per time: the result's outputs are the times,
``res.times`` holds them and ``to_frame()`` has a numeric ``time`` column. :func:`resolve` is the one place a
call's times are decided, once, before the model is called: the times given (finite, non-negative, strictly
increasing, within the model's domain: up to its last training time), or by default a handful of quantiles of
the model's distinct training times, said in a note. The adapter reads each output at its time by the model's
own step-function rule. :func:`aft_curves` is the survival curve of an accelerated failure time model
from each row's margin (the boosting libraries' AFT losses).
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from .adapter import TIME_RESPONSES, Adapter
from .errors import PdpxError

#: The quantiles of the training times ``times=`` defaults to.
DEFAULT_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def checked_times(times, function: str = "partial_dependence") -> np.ndarray:
    """``times`` as a float64 array: finite, non-negative, strictly increasing, at least one (else a PdpxError
    saying which value is wrong)."""
    if isinstance(times, (str, bytes, dict)):
        raise PdpxError(f"{function}(): times= must be numbers (a list or array of times), got {type(times).__name__}")
    if isinstance(times, numbers.Real) and not isinstance(times, bool):
        times = [times]
    try:
        t = np.asarray(times, dtype=np.float64)
    except (TypeError, ValueError):
        raise PdpxError(f"{function}(): times= must be numbers, got {times!r}") from None
    if t.ndim != 1 or t.size == 0:
        raise PdpxError(f"{function}(): times= must be a non-empty list of times, got shape {t.shape}")
    bad = ~np.isfinite(t)
    if bad.any():
        raise PdpxError(f"{function}(): times= must be finite; times[{int(np.argmax(bad))}] is {t[bad][0]}")
    if (t < 0).any():
        i = int(np.argmax(t < 0))
        raise PdpxError(f"{function}(): times= must be >= 0; times[{i}] is {t[i]:g}")
    step = np.diff(t) <= 0
    if step.any():
        i = int(np.argmax(step))
        raise PdpxError(f"{function}(): times= must be strictly increasing; times[{i + 1}] = {t[i + 1]:g} follows "
                        f"{t[i]:g} (sort them and drop repeats: np.unique(times))")
    return t


def default_times(training: np.ndarray) -> np.ndarray:
    """The quantiles :data:`DEFAULT_QUANTILES` of the distinct training times, each one of them (repeats
    dropped)."""
    return np.unique(np.quantile(np.asarray(training, dtype=np.float64), DEFAULT_QUANTILES, method="lower"))


def step_columns(steps: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The position in ``steps`` (a step function's increasing step times) of the value each of ``times`` reads:
    the largest step time <= t, the first one for a t before it (the rule of the step functions survival models
    return, which clip a time before the first step to it)."""
    return np.maximum(np.searchsorted(steps, times, side="right") - 1, 0)


def time_names(times: np.ndarray) -> list[str]:
    """One output name per time: ``"t=<time>"`` (9 significant digits; in full where two would read alike)."""
    names = [f"t={t:.9g}" for t in times]
    if len(set(names)) < len(names):
        names = [f"t={t!r}" for t in map(float, times)]
    return names


def resolve(adapter: Adapter, response: str, times, function: str = "partial_dependence") -> list[str]:
    """Decide the call's times for ``response`` and hand them to the adapter (:meth:`Adapter.set_times`); returns
    the notes to show (the default times, said). ``times`` given with a response that has no time axis is an
    error."""
    if response not in TIME_RESPONSES:
        if times is not None:
            raise PdpxError(f"{function}(): times= reads a survival model's curves at those times; it goes with "
                            f"response='survival' or 'cumulative_hazard', not {response!r}")
        return []
    training = adapter.training_times()
    if training is None or len(training) == 0:  # a model defined at every time >= 0 that keeps no training times
        if times is None:
            raise PdpxError(f"{function}(): {type(adapter.model).__name__} keeps no training times to choose "
                            f"default times from; pass times= (the times to read its {response} at)")
        adapter.set_times(checked_times(times, function))
        return []
    last = float(training[-1])
    notes = []
    if times is None:
        t = default_times(training)
        notes.append(f"times= not given: the {', '.join(f'{q:g}' for q in DEFAULT_QUANTILES)} quantiles of the "
                     f"model's {len(training):,} distinct training times: {[float(v) for v in t]}")
    else:
        t = checked_times(times, function)
        if t[-1] > last:
            raise PdpxError(f"{function}(): times= reach {t[-1]:.9g}, past the model's last training time "
                            f"{last:.9g}: its {response.replace('_', ' ')} is not defined there (its own step "
                            f"functions refuse it); ask for times up to {last:.9g}")
    adapter.set_times(t)
    return notes


def time_blocks(adapter: Adapter, response: str, n_times: int, budget: int) -> list[slice] | None:
    """Blocks of the times whose trees fit half of ``budget`` (what each block's trees take, twice over: their
    reading and its check), or None when all of them fit at once."""
    per_time = 2 * int(adapter.time_bytes(response))
    if response not in TIME_RESPONSES or per_time <= 0 or per_time * n_times <= budget // 2:
        return None
    size = max(1, (budget // 2) // per_time)
    return [slice(a, min(a + size, n_times)) for a in range(0, n_times, size)]


def needs_blocks(session) -> bool:
    """Whether ``session``'s times are computed a block at a time (:func:`in_blocks`)."""
    inp = session.inputs
    return (inp.times is not None and list(inp.outputs) == list(range(len(inp.times)))
            and time_blocks(inp.adapter, inp.response, len(inp.times), inp.memory_budget) is not None)


def in_blocks(session, features: list[int]):
    """The result of ``session`` for ``features`` computed a block of times at a time (:func:`time_blocks`), the
    blocks' outputs joined in order; None when the times fit at once or ``target=`` picked some of them (then the
    session computes as usual). The adapter reads each block's times, and all of them again after."""
    from .config import config_context
    from .result import PartialDependenceResult

    inp = session.inputs
    if not needs_blocks(session):
        return None
    blocks = time_blocks(inp.adapter, inp.response, len(inp.times), inp.memory_budget)
    parts: list[PartialDependenceResult] = []
    try:
        for block in blocks:  # the adapter reads the trees within the call's budget
            inp.adapter.set_times(inp.times[block])
            part = dataclasses.replace(inp, times=inp.times[block], outputs=list(range(block.stop - block.start)))
            with config_context(memory_budget=inp.memory_budget):
                parts.append(type(session).of(part, session.grids).compute(features))
    finally:
        inp.adapter.set_times(inp.times)
    first = parts[0]

    def joined(name):
        arrays = [getattr(p, name) for p in parts]
        return None if arrays[0] is None else np.concatenate(arrays, axis=0)

    notes = list(dict.fromkeys(n for p in parts for n in p.notes))
    notes.append(f"computed {len(blocks)} blocks of at most {blocks[0].stop} times each, so that the trees of a "
                 "block fit the memory budget")
    return dataclasses.replace(
        first, average=joined("average"), individual=joined("individual"), lower=joined("lower"),
        upper=joined("upper"), outputs=[o for p in parts for o in p.outputs], times=inp.times.copy(),
        elapsed=sum(p.elapsed for p in parts), notes=notes,
        method=first.method if all(p.method == first.method for p in parts) else "+".join(
            dict.fromkeys(p.method for p in parts)))


#: The distributions of :func:`aft_curves`.
AFT_DISTRIBUTIONS = ("normal", "logistic", "extreme")


def aft_curves(margin: np.ndarray, times: np.ndarray, distribution: str, scale: float, response: str) -> np.ndarray:
    """(rows, times) survival ``S(t) = 1 - F((log t - margin) / scale)`` of an accelerated failure time model
    (``log T = margin + scale * Z``, ``F`` the CDF of ``Z``: standard normal, logistic, or extreme value
    ``1 - exp(-exp(z))``), or the cumulative hazard ``-log S(t)``; ``S(0) = 1``."""
    from scipy.special import expit, log_ndtr, ndtr

    with np.errstate(divide="ignore"):
        z = (np.log(np.asarray(times, dtype=np.float64))[None, :] - np.asarray(margin, np.float64)[:, None]) / scale
    if distribution == "normal":
        return ndtr(-z) if response == "survival" else -log_ndtr(-z)
    if distribution == "logistic":
        return expit(-z) if response == "survival" else np.logaddexp(0.0, z)
    if distribution == "extreme":
        return np.exp(-np.exp(z)) if response == "survival" else np.exp(z)
    raise PdpxError(f"AFT distribution {distribution!r} is not one pdpx knows {list(AFT_DISTRIBUTIONS)}")
