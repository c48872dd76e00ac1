"""The split search of :func:`pdpx.regions`: candidate features coded once, the statistics per code, the best split.

For a feature's curves, flattened over outputs and grid points into each row's centered ``c_i``,
the loss of a set ``S`` of rows is its weighted sum of squared deviations from its mean curve,
averaged over the grid points and summed over outputs::

    loss(S) = sum_{i in S} w_i q_i - |sum_{i in S} w_i c_i|^2 / (G W_S),   q_i = |c_i|^2 / G

A node's candidate splits are scored from sums per code of each candidate feature (its bin
between thresholds, or its level): rows, weight, ``sum w q`` and ``sum w c``, one compiled pass
over the node's rows for every candidate at once (:mod:`.split_sums`), accumulated along the
thresholds. A node's smaller child is summed from its rows, the larger one as the node's sums
less the smaller's, so a depth costs at most half a pass over the rows after the root's;
and a leaf's sums are its parent's split side, never summed again.

The candidate columns are coded once (:func:`code_candidates`) and shared by every feature
whose curves are split: :func:`pdpx.regions` of several features codes each column once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.dates import date_kind, day_labels, day_numbers, is_date_type, midnight_only
from ..core.errors import PdpxError
from ..core.result import message_value
from ..core.session import Session
from ..core.splits import Unmapped, as_read, comparison, members, split_nodes, thresholds
from ..core.threads import in_threads
from .split_sums import bins, code_sums

#: Categorical features with at most this many levels have every set of levels tried.
ALL_SETS = 10
#: A node whose loss is at most this share of the rows' sum of squared centered curves has curves that agree.
AGREE = 1e-12


@dataclass(frozen=True)
class Split:
    """One split of a node's rows: ``feature`` by a ``threshold`` (with ``op``, ``"<="`` or ``"<"``), by a set of
    ``levels`` (left: the rows at those levels), or by ``missing`` alone (left: the rows missing it).
    ``missing_left``: whether rows missing the value go left (threshold splits)."""

    feature: str
    kind: str
    threshold: float | None = None
    op: str = "<="
    levels: tuple | None = None
    others: tuple | None = None
    missing_left: bool | None = None
    gain: float = 0.0
    depth: int = 0
    shown: str | None = None  # the threshold as the rule shows it, when not a number (a date)

    @property
    def value(self) -> str:
        """The threshold as the rule shows it: a date (``shown``), else the number."""
        return self.shown if self.shown is not None else f"{self.threshold:.4g}"

    def condition(self, side: str) -> str:
        """The condition the rows on ``side`` (``"left"`` / ``"right"``) satisfy, as text."""
        f, left = self.feature, side == "left"
        if self.kind == "missing":
            return f"{f} is missing" if left else f"{f} is not missing"
        if self.kind == "levels":
            shown = ", ".join(message_value(v) for v in (self.levels if left else self.others))
            return f"{f} in {{{shown}}}"
        op = self.op if left else {"<=": ">", "<": ">="}[self.op]
        text = f"{f} {op} {self.value}"
        if self.missing_left is not None and self.missing_left == left:
            text = f"({text} or {f} is missing)"
        return text


def rule_text(conditions: list) -> str:
    """The conditions ``(Split, side)`` from the root joined by ``and`` (``"all rows"`` for none). Threshold conditions
    on one feature that leave no missing rows to a side are folded into one: its tighter bound on each side, both
    as ``lo < x <= hi`` (``x3 <= 0.2 and x3 <= -0.4`` reads ``x3 <= -0.4``)."""
    parts: list = []
    bounds: dict = {}
    for split, side in conditions:
        if split.kind != "threshold" or split.missing_left is not None:
            parts.append(split.condition(side))
            continue
        if split.feature not in bounds:
            bounds[split.feature] = {}
            parts.append(split.feature)  # where the folded condition goes: the feature's first condition
        held, t = bounds[split.feature], split.threshold
        if side not in held or (t < held[side].threshold if side == "left" else t > held[side].threshold):
            held[side] = split
    return " and ".join(_bounded(p, bounds[p]) if p in bounds else p for p in parts) or "all rows"


def _bounded(feature: str, held: dict) -> str:
    """One feature's folded condition from its tightest ``left`` (upper) and ``right`` (lower) threshold splits."""
    up, lo = held.get("left"), held.get("right")
    if lo is None:
        return up.condition("left")
    if up is None:
        return lo.condition("right")
    return f"{lo.value} {'<' if lo.op == '<=' else '<='} {feature} {up.op} {up.value}"


@dataclass
class Candidate:
    """A column the rows may be split by (position ``column`` in X): each row's code (numeric: its bin between the
    thresholds ``cuts``, the missing rows last; categorical: its level among ``labels``)."""

    name: str
    column: int
    codes: np.ndarray
    n_codes: int
    numeric: bool
    cuts: np.ndarray | None = None
    op: str = "<="
    labels: list | None = None
    show: object = None  # a date column's: threshold -> the date the rule shows (:func:`_date_shown`)


@dataclass
class Coded:
    """The candidates of a search, coded once: ``cands``, their codes side by side (``codes`` (n, len(cands))
    int32) and code counts ``sizes``, and the columns left out: ``unused`` (no tree splits on them), ``dated`` (none
    now: date columns are split by dates; kept for the notes' form)."""

    cands: list
    codes: np.ndarray
    sizes: np.ndarray
    unused: list
    dated: list

    def notes_for(self, name: str) -> list:
        """The notes on the columns left out, for the search of ``name``'s curves (never naming ``name``)."""
        notes = []
        unused = [c for c in self.unused if c != name]
        dated = [c for c in self.dated if c != name]
        if unused:
            notes.append(f"not split by: {', '.join(unused)} (no tree of the model splits on them)")
        if dated:
            notes.append(f"not split by: {', '.join(dated)} (date columns)")
        return notes

    def without(self, j: int) -> tuple[list, np.ndarray]:
        """(the candidates other than column ``j``, their positions among ``cands``)."""
        keep = [s for s, c in enumerate(self.cands) if c.column != j]
        return [self.cands[s] for s in keep], np.asarray(keep, dtype=np.int64)


def code_candidates(session: Session, idx: list, n_thresholds: int) -> Coded:
    """The columns ``idx`` the rows may be split by, each coded once (numeric columns no tree splits on are left
    out, with a note). A date column is split at dates: the trees' own thresholds when the trees read its dates
    (``tm.dated``: an R ``Date`` or ``POSIXct``), else quantiles of its days (:func:`_date_column`)."""
    tm = None
    try:
        tm = session.adapter.tree_model(session.response)
    except PdpxError:  # a model without readable trees: quantile thresholds
        pass
    out, unused, dated = [], [], []
    pending = []  # (numeric candidate, its column as the trees read it): coded two at a time below
    for c in idx:
        col = session.X.iloc[:, c]
        name = session.names[c]
        if is_date_type(col.dtype):
            x, cuts, op, show = _date_column(tm, c, col, n_thresholds)
            if cuts is None:
                unused.append(name)
                continue
            out.append(Candidate(name, c, None, len(cuts) + 2, True, cuts=cuts, op=op, show=show))
            pending.append((out[-1], x))
            continue
        numeric = (not session.categorical[c] and pd.api.types.is_numeric_dtype(col.dtype)
                   and not pd.api.types.is_bool_dtype(col.dtype))
        if not numeric:
            codes, labels = pd.factorize(col, use_na_sentinel=False, sort=True)
            out.append(Candidate(name, c, np.asarray(codes, dtype=np.int32), len(labels), False,
                                 labels=[None if pd.isna(v) else v for v in labels]))
            continue
        x = col.to_numpy(dtype=np.float64, na_value=np.nan)
        cuts, op = _thresholds(tm, c, x, n_thresholds)
        if cuts is None:
            unused.append(name)
            continue
        if tm is not None:
            x = _as_read(tm, c, x)
        out.append(Candidate(name, c, None, len(cuts) + 2, True, cuts=cuts, op=op))
        pending.append((out[-1], x))
    for part in in_threads(lambda part: [(cand, _code(cand, x)) for cand, x in part], [pending[::2], pending[1::2]]):
        for cand, codes in part:
            cand.codes = codes
    n = session.n_rows
    codes = (np.ascontiguousarray(np.stack([c.codes for c in out], axis=1)) if out
             else np.zeros((n, 0), dtype=np.int32))
    return Coded(out, codes, np.array([c.n_codes for c in out], dtype=np.int64), unused, dated)


def _date_column(tm, c: int, col: pd.Series, n_thresholds: int):
    """(the column as numbers, thresholds, comparison, threshold -> shown date) of date column ``c``: the numbers
    the trees split on and their thresholds when they read its dates (``tm.dated``), else its wall-clock days since
    1970-01-01 and their quantiles."""
    if (tm is not None and c in getattr(tm, "dated", ()) and c not in (getattr(tm, "value_sets", None) or {})
            and date_kind(col.dtype) == "datetime"):  # (one split by sets of its dates, made into parts: its days)
        x = np.asarray(tm.encode_values(c, col.array), dtype=np.float64)
        cuts, op = _thresholds(tm, c, x, n_thresholds)
        tz = getattr(col.dtype, "tz", None)
        epoch = pd.Timestamp("1970-01-01", tz="UTC")
        probe = pd.Series(pd.DatetimeIndex([epoch, epoch + pd.Timedelta(days=1)]))
        probe = probe.dt.tz_convert(tz) if tz is not None else probe.dt.tz_localize(None)
        zero, day = tm.encode_values(c, probe.astype(col.dtype).array)
        per_day = day - zero

        def wall_days(t):  # the model's number -> wall-clock days since 1970-01-01 on the column's zone
            utc = epoch + pd.Timedelta(days=float((t - zero) / per_day))
            return day_numbers([utc.tz_convert(tz) if tz is not None else utc.tz_localize(None)], wall=True)[0]
    else:
        x = day_numbers(col, wall=True)
        cuts, op = _thresholds(None, c, x, n_thresholds)

        def wall_days(t):
            return t
    whole_days = midnight_only(col)
    return x, cuts, op, lambda t, op_=op: _date_shown(wall_days(t), op_, whole_days)


def _date_shown(days: float, op: str, whole_days: bool) -> str:
    """A threshold at wall-clock ``days`` since 1970-01-01 as the date a rule shows: for a column of whole days,
    the last day at or below it (``<=``) or the first at or above it (``<``), which split the column's days alike;
    else the time, to the second (rounded the same way)."""
    unit = 1.0 if whole_days else 1.0 / 86400
    at = (np.floor(days / unit) if op == "<=" else np.ceil(days / unit)) * unit
    return day_labels([at])[0]


def _code(cand: Candidate, x: np.ndarray) -> np.ndarray:
    """The rows' bins of a numeric candidate's column ``x`` between its thresholds, the missing rows last (the
    compiled search leaves the GIL free: two columns at once)."""
    return bins(cand.cuts, x, strict=cand.op == "<=")


def _thresholds(tm, c: int, x: np.ndarray, n_thresholds: int):
    """(increasing thresholds, comparison) of column ``c``: the trees' own, else quantiles; (None, ...) if none."""
    if tm is not None:
        try:
            found = [thresholds(ens, split_nodes(ens, k)) for ens, k in members(tm, c)]
        except Unmapped:
            found = None
        if found is not None:
            cuts = np.unique(np.concatenate(found)) if found else np.empty(0)
            return (cuts, comparison(tm)) if cuts.size else (None, "<=")
    finite = x[np.isfinite(x)]
    if finite.size == 0:
        return None, "<="
    cuts = np.unique(np.quantile(finite, np.arange(1, n_thresholds + 1) / (n_thresholds + 1)))
    return cuts, "<="


def _as_read(tm, c: int, x: np.ndarray) -> np.ndarray:
    """``x`` as the trees compare it (float32 when they round their inputs)."""
    try:
        for ens, _ in members(tm, c):
            return as_read(ens, x)
    except Unmapped:
        pass
    return x


class Stats:
    """Per-row statistics of the split search: weights ``w``, ``wq`` (w times the squared centered curve averaged
    over the grid) and the centered curves ``C`` (n, K * G), the candidates' codes (``coded``, the columns ``cols``
    of it), and the loss of a set of rows from their sums. ``squares``: each row's ``|c|^2`` when known."""

    def __init__(self, w: np.ndarray, C: np.ndarray, G: int, min_rows: int, coded: Coded, cols: np.ndarray,
                 squares: np.ndarray | None = None):
        self.w, self.G, self.min_rows = w, G, min_rows
        self.wq = w * (np.einsum("ij,ij->i", C, C) if squares is None else squares) / G
        self.C = C
        self.coded, self.cols = coded, cols
        self.sizes = coded.sizes[cols]

    def by_candidate(self, rows: np.ndarray) -> list:
        """Per candidate, (n_codes, 3 + KG): [rows, weight, sum wq, sums of wc] per code over ``rows``, from one
        compiled pass over the rows for every candidate (:mod:`.split_sums`)."""
        return code_sums(self.coded.codes, self.sizes, rows, self.w, self.wq, self.C, self.cols)

    def total(self, rows: np.ndarray) -> np.ndarray:
        """(3 + KG,): [rows, weight, sum wq, sums of wc] over ``rows``: the node's sums as one code."""
        w = self.w[rows]
        return np.concatenate([[len(rows), w.sum(), self.wq[rows].sum()], w @ self.C[rows]])

    def loss(self, s: np.ndarray) -> np.ndarray:
        """Loss of the sets whose sums are the rows of ``s`` (see the module docstring)."""
        W = s[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            between = np.where(W > 0, (s[..., 3:] ** 2).sum(axis=-1) / (self.G * W), 0.0)
        return s[..., 2] - between

    def best(self, total: np.ndarray, left: np.ndarray):
        """(index, loss of both sides) of the best of the candidate left sides ``left`` (sums), or None."""
        right = total - left
        ok = (left[:, 0] >= self.min_rows) & (right[:, 0] >= self.min_rows)
        if not ok.any():
            return None
        loss = np.where(ok, self.loss(left) + self.loss(right), np.inf)
        i = int(np.argmin(loss))
        return i, float(loss[i])


def _numeric_split(stats: Stats, cand: Candidate, rows: np.ndarray, depth: int, sums: np.ndarray):
    """(loss, Split, the left mask over ``rows`` (a function: made for the chosen split only), left side's sums)
    of the best threshold (or missing) split by ``cand`` (``sums``: its :meth:`Stats.by_candidate` over ``rows``),
    or None."""
    B = len(cand.cuts) + 1
    miss = sums[B]
    cum = np.cumsum(sums[:B], axis=0)[:-1]  # left of threshold k: bins 0..k
    total = sums.sum(axis=0)
    options = [(cum, False)]
    if miss[0] > 0:
        options += [(cum + miss, True), (miss[None, :], None)]
    lefts = np.concatenate([o for o, _ in options])
    got = stats.best(total, lefts)
    if got is None:
        return None
    i, loss = got
    if miss[0] > 0 and i == lefts.shape[0] - 1:
        return loss, Split(cand.name, "missing", depth=depth), lambda: cand.codes[rows] == B, lefts[i]
    k, which = i % len(cand.cuts), options[i // len(cand.cuts)][1]

    def left():  # only the chosen split's: one gather over the node's rows
        codes = cand.codes[rows]
        return (codes <= k) | (codes == B) if which else codes <= k

    return loss, Split(cand.name, "threshold", threshold=float(cand.cuts[k]), op=cand.op,
                       missing_left=which if miss[0] > 0 else None, depth=depth,
                       shown=None if cand.show is None else cand.show(float(cand.cuts[k]))), left, lefts[i]


def _level_split(stats: Stats, cand: Candidate, rows: np.ndarray, depth: int, sums: np.ndarray):
    """(loss, Split, the left mask over ``rows`` (a function, as :func:`_numeric_split`), left side's sums) of the
    best set of levels of ``cand`` against the others (``sums``: its :meth:`Stats.by_candidate` over ``rows``), or
    None."""
    present = np.flatnonzero(sums[:, 0] > 0)
    L = len(present)
    if L < 2:
        return None
    P = sums[present]
    if L <= ALL_SETS:  # every set holding the last level on the right
        masks = ((np.arange(1, 2 ** (L - 1))[:, None] >> np.arange(L)) & 1).astype(np.float64)
    else:  # the prefixes of the levels ordered along their mean curves' first principal direction
        W = np.maximum(P[:, 1:2], 1e-300)
        means = P[:, 3:] / W
        centre = (P[:, 3:].sum(axis=0) / W.sum())
        _, _, vt = np.linalg.svd(np.sqrt(W) * (means - centre), full_matrices=False)
        order = np.argsort(means @ vt[0], kind="stable")
        masks = np.zeros((L - 1, L))
        for i in range(L - 1):
            masks[i, order[:i + 1]] = 1.0
    lefts = masks @ P
    got = stats.best(P.sum(axis=0), lefts)
    if got is None:
        return None
    i, loss = got
    on = masks[i] > 0
    labels = cand.labels
    split = Split(cand.name, "levels", levels=tuple(labels[c] for c in present[on]),
                  others=tuple(labels[c] for c in present[~on]), depth=depth)
    return loss, split, lambda: np.isin(cand.codes[rows], present[on]), lefts[i]


def grow(stats: Stats, cands: list, max_depth: int, min_gain: float, everything: np.ndarray):
    """(leaves as (rows, conditions, why it stopped), the splits made), depth first, left before right, from the
    root's rows ``everything`` (every row: ``np.arange(n)``)."""
    root_per = stats.by_candidate(everything) if cands and max_depth > 0 else None
    root_total = root_per[0].sum(axis=0) if root_per else stats.total(everything)
    root_loss = float(stats.loss(root_total))
    scale = float(root_total[2])  # the weighted sum of the squared centered curves: the size of rounding
    leaves, made = [], []

    def visit(rows, conditions, depth, total, per):
        node = float(stats.loss(total))
        if node <= AGREE * scale:
            leaves.append((rows, conditions, "its curves agree (no heterogeneity left)"))
            return
        if depth >= max_depth:
            leaves.append((rows, conditions, f"max_depth={max_depth} reached"))
            return
        best = None
        for cand, sums in zip(cands, per or ()):
            got = (_numeric_split if cand.numeric else _level_split)(stats, cand, rows, depth, sums)
            if got is not None and (best is None or got[0] < best[0]):
                best = got
        if best is None:
            why = (f"no split leaves min_rows={stats.min_rows} rows on each side" if cands else
                   "no feature to split by (see the notes)")
            leaves.append((rows, conditions, why))
            return
        loss, split, left, left_total = best
        left = left()
        gain = (node - loss) / root_loss
        if gain < min_gain:
            leaves.append((rows, conditions, f"the best split ({split.condition('left')}) removes {gain:.1%} of "
                                             f"the feature's heterogeneity, below min_gain={min_gain:g}"))
            return
        split = Split(**{**split.__dict__, "gain": gain})
        made.append(split)
        sides = [(rows[left], left_total, "left"), (rows[~left], total - left_total, "right")]
        pers = [None, None]
        if depth + 1 < max_depth:  # the smaller child summed from its rows, the larger as the rest
            small = 0 if len(sides[0][0]) <= len(sides[1][0]) else 1
            pers[small] = stats.by_candidate(sides[small][0])
            pers[1 - small] = [p - q for p, q in zip(per, pers[small])]
        for (sub, sub_total, side), sub_per in zip(sides, pers):
            visit(sub, conditions + [(split, side)], depth + 1, sub_total, sub_per)

    try:
        visit(everything, [], 0, root_total, root_per)
    finally:  # visit refers to itself: a cycle that would keep stats (every row's curves) until the collector runs
        visit = None
    return leaves, made
