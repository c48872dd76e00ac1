"""Bands from the model, not the rows: ``interval="members"`` and ``interval="quantiles"``.

Three sources of a band around a PD curve, each labelled with what it is
(:attr:`MemberResult.band`):

* **the members of a forest or a bagged ensemble** (``interval="members"`` on one model): each
  member's own PD, the member standing alone (a tree's own prediction, a bagged member's own
  ``predict`` / ``predict_proba``). They come from one pass of ``exact`` over the trees: every
  member's trees are handed to it as an output of their own (a forest of ``T`` trees read as a
  model of ``T`` outputs), so the rows are walked once for all the members. The model's PD is
  the weighted mean of its members' PDs (forests average their trees, bagging its members).
  When the trees cannot be read (or ``method="brute"``), ``brute`` calls the members the model
  exposes (:func:`exposed_members`) side by side, and the band is refused unless their
  weighted mean is the model's own PD.
  Boosted models are refused: each tree corrects the ones before it, so a tree is no predictor.
* **a dict of refit or fold models** (``interval="members"`` on ``{"fold1": m1, ...}``): each
  model's PD on the same X and grid; the curve is their mean.
* **a dict of quantile models** (``interval="quantiles"`` on ``{0.1: m, 0.5: m, 0.9: m}``): the
  curve is the PD of the 0.5 model, the band the PDs of the lowest and highest quantile
  models (the rows' average of each model's conditional quantile, not a quantile of the PD).

For members, ``lower`` and ``upper`` are the ``(1 - level) / 2`` and ``(1 + level) / 2``
quantiles of the members' PDs at each grid point (``level=``, default 0.95: the central
95% of the members): numpy's default (linear) quantiles when the members weigh the same,
the weighted inverted-CDF quantiles otherwise. ``res.members`` holds every member's PD, so
another summary (``res.members.std(axis=0)``) is one line away.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from .adapter import Adapter, trees_read_once
from .errors import PdpxError
from .ir import TreeEnsemble, TreeModel
from .method import MethodResult
from .options import PDOptions
from .result import PartialDependenceResult
from .rows import require
from .session import Session, center_curves
from .stacked import stacked_partial_dependence
from .treesum import TreeSum, TreeTerm

#: The level of a band when ``level=`` is not given.
DEFAULT_LEVEL = 0.95

#: What to tell the user of a boosted model.
BOOSTED = ("its trees are summed, as boosting sums them: each tree corrects the ones before it, so no tree is a "
           "predictor on its own and there is no spread of members to draw. Use interval='bootstrap' (the "
           "spread over the rows), or refit the model on resamples or folds and pass them as a dict "
           "{'fold1': model1, ...} with interval='members'")


@dataclass
class MemberResult(PartialDependenceResult):
    """A PD with a band from the model (:mod:`pdpx.core.members`): a :class:`PartialDependenceResult` plus
    the members' curves.

    Attributes
    ----------
    band : str
        What ``lower`` / ``upper`` are, e.g. ``"members: central 95% of 100 trees"``.
    members : ndarray of shape (n_members, n_outputs, *grid_shape)
        Each member's PD (centered if ``centered``).
    member_labels : list of str
        The members' names (tree numbers, the dict's keys).
    member_weights : ndarray of shape (n_members,)
        Each member's weight in the curve (summing to 1).
    """

    band: str = ""
    members: np.ndarray | None = field(default=None, repr=False)
    member_labels: list = field(default_factory=list, repr=False)
    member_weights: np.ndarray | None = field(default=None, repr=False)

    def to_frame(self, *, kind: str | None = None, n_features: int | None = None, memory_budget=None):
        """The tidy frame (:mod:`pdpx.core.result`); ``frame.attrs["band"]`` says what the band is."""
        df = super().to_frame(kind=kind, n_features=n_features, memory_budget=memory_budget)
        df.attrs["band"] = self.band
        return df


def model_interval(model, X, features, options: PDOptions) -> MemberResult:
    """``partial_dependence`` with ``interval="members"`` or ``"quantiles"`` (see the module docstring)."""
    if options.by is not None:
        raise PdpxError(f"interval={options.interval!r} and by= cannot be combined; compute each group's rows "
                        "in a call of its own")
    if options.interval == "quantiles":
        if options.level is not None:
            raise PdpxError("level= sets the share of members a band covers; interval='quantiles' draws the "
                            "lowest and highest quantile models' PDs: leave level out")
        return _quantile_models(model, X, features, options)
    if isinstance(model, dict):
        return _dict_members(model, X, features, options)
    return _tree_members(model, X, features, options)


def band(curves: np.ndarray, weights: np.ndarray | None, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper): the central ``level`` share of ``curves`` (n_members, ...) at each point; ``weights``
    (None: equal) as in the module docstring."""
    alpha = (1.0 - level) / 2.0
    if weights is None or np.allclose(weights, weights[0], rtol=1e-12, atol=0):
        lower, upper = np.quantile(curves, [alpha, 1.0 - alpha], axis=0)
    else:
        lower, upper = np.quantile(curves, [alpha, 1.0 - alpha], axis=0, weights=np.broadcast_to(
            weights.reshape((-1,) + (1,) * (curves.ndim - 1)), curves.shape), method="inverted_cdf")
    return lower, upper


def with_band(base: PartialDependenceResult, average, curves, weights, lower, upper, level, label: str,
               labels) -> MemberResult:
    """``base`` as a :class:`MemberResult` with this curve and band."""
    values = {f.name: getattr(base, f.name) for f in fields(PartialDependenceResult) if f.init}
    values.update(average=average, lower=lower, upper=upper, interval=level)
    return MemberResult(**values, band=label, members=curves, member_labels=[str(x) for x in labels],
                        member_weights=weights)


# ---------------------------------------------------------------- dicts of models
def _stacked(model, X, features, options: PDOptions, what: str):
    """Each model's result on the same grid (a dict of at least two models), no band of their own."""
    if not isinstance(model, dict):
        raise PdpxError(f"interval={what!r} takes a dict of models: {{0.1: model_q10, 0.5: model_q50, 0.9: "
                        "model_q90}, each fitted for its quantile")
    if len(model) < 2:
        raise PdpxError(f"interval={options.interval!r} needs at least two models in the dict; it has {len(model)}")
    if options.kind != "average":
        raise PdpxError(f"interval={options.interval!r} draws a band around one PD; kind={options.kind!r} asks "
                        "for ICE curves, which are each model's own: leave kind out, or call without interval")
    stacked = stacked_partial_dependence(model, X, features, options.but(interval=None, level=None))
    first = stacked.results[0]
    for lab, r in zip(stacked.labels, stacked.results):
        if any(not _same_grid(a, b) for a, b in zip(r.grid_values, first.grid_values)):
            raise PdpxError(f"model {lab!r} has another grid than model {stacked.labels[0]!r} (grid='thresholds' "
                            "reads each model's own splits); pass custom_values, or grid='uniform'")
    return stacked


def _same_grid(a, b) -> bool:
    """Whether two grids hold the same values (NaN equal to NaN; text levels compared as they are)."""
    a, b = np.asarray(a), np.asarray(b)
    if len(a) != len(b):
        return False
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(all(x == y or (pd.isna(x) and pd.isna(y)) for x, y in zip(a.tolist(), b.tolist())))


def _dict_members(model: dict, X, features, options: PDOptions) -> MemberResult:
    """The mean PD of a dict of refit or fold models, with the band of their spread."""
    stacked = _stacked(model, X, features, options, "members")
    curves = np.stack([np.asarray(r.average, dtype=np.float64) for r in stacked.results])
    level = DEFAULT_LEVEL if options.level is None else options.level
    lower, upper = band(curves, None, level)
    weights = np.full(len(curves), 1.0 / len(curves))
    base = stacked.results[0]
    base = replace(base, method=_one_method(stacked.method), notes=_notes(stacked),
                   model_name=f"{len(curves)} models")
    label = f"members: central {100 * level:g}% of {len(curves)} models"
    return with_band(base, curves.mean(axis=0), curves, weights, lower, upper, level, label, stacked.labels)


def _quantile_models(model, X, features, options: PDOptions) -> MemberResult:
    """The PD of the median model, with the PDs of the lowest and highest quantile models as the band."""
    if isinstance(model, dict):
        bad = [k for k in model if isinstance(k, bool) or not isinstance(k, numbers.Real) or not 0 < k < 1]
        if bad:
            raise PdpxError(f"interval='quantiles': the dict's keys are the models' quantiles, numbers between 0 "
                            f"and 1 (e.g. {{0.1: m10, 0.5: m50, 0.9: m90}}); got {bad[:3]}")
        if 0.5 not in model:
            raise PdpxError(f"interval='quantiles': the dict has no median model (key 0.5; keys: "
                            f"{sorted(model)}); add one, its PD is the curve")
        model = dict(sorted(model.items()))
    stacked = _stacked(model, X, features, options, "quantiles")
    keys = list(model)
    curves = np.stack([np.asarray(r.average, dtype=np.float64) for r in stacked.results])
    base = stacked.results[keys.index(0.5)]
    base = replace(base, method=_one_method(stacked.method), notes=_notes(stacked),
                   model_name=f"{len(keys)} quantile models")
    label = f"quantiles: PDs of the {keys[0]:g} and {keys[-1]:g} quantile models"
    return with_band(base, base.average, curves, None, curves[0], curves[-1], None, label, keys)


def _one_method(methods: dict) -> str:
    """The method that ran, or the methods by model when they differ."""
    names = set(methods.values())
    return names.pop() if len(names) == 1 else ", ".join(f"{k}: {v}" for k, v in methods.items())


def _notes(stacked) -> list:
    """The models' notes, each once."""
    return list(dict.fromkeys(n for r in stacked.results for n in r.notes))


# ---------------------------------------------------------------- members of one model
def _tree_members(model, X, features, options: PDOptions) -> MemberResult:
    """The members of a forest or bagged ensemble: from one ``exact`` pass over their trees, or by brute force
    over the members the model exposes (:func:`exposed_members`) when its trees cannot be read."""
    res, curves, weights, what, how = member_curves(model, X, features, options)
    level = DEFAULT_LEVEL if options.level is None else options.level
    lower, upper = band(curves, weights, level)
    label = f"members: central {100 * level:g}% of {len(weights)} {what}"
    res.notes.append(f"band: each of the {len(weights)} {what}' own PD ({how}); the curve is the model's PD, "
                     "their weighted mean")
    return with_band(res, res.average, curves, weights, lower, upper, level, label, range(len(weights)))


def member_curves(model, X, features, options: PDOptions, session_class=None, prepare=None):
    """``(result, curves, weights, what, how)``: the model's result, every member's PD ``curves`` (n_members,
    n_outputs, *grid_shape; centered if ``options.centered``), the members' ``weights``, what they are
    ("trees", "members") and how their PDs were computed; as ``interval="members"`` computes them (one ``exact``
    pass over the trees, or brute force over the members the model exposes). ``session_class``: a subclass of
    the members' session (:mod:`pdpx.core.oob`'s); ``prepare(session)``: called once the inputs are validated,
    before any member is computed (a check that may refuse)."""
    session = (session_class or MembersSession)(model, X, options.but(interval=None, level=None))
    feats = session.resolve_features(features)
    inp = session.inputs
    name = model_name(inp)
    require(inp.data, "members", "partial_dependence")  # Dask's and Spark's tasks rebuild the views
    if prepare is not None:
        prepare(session)
    exact = inp.methods.get("exact")
    with trees_read_once(inp.adapter):
        tm = inp.adapter.tree_model(inp.response) if exact is not None and inp.method in ("auto", "exact") else None
        forest = getattr(inp.adapter, "forest_members", None)  # summed trees that are a forest (see split_members)
        tm = forest(inp.response, tm) or tm if forest is not None and tm is not None else tm
        if tm is not None:
            session.trees = tm  # the model's own trees (oob.py gates each tree by the rows it did not draw)
            session.split, weights, what = split_members(tm, inp.outputs, f"this {name}")
            session.exact, how = exact, "from one exact pass over the trees"
        else:
            exposed = exposed_members(inp) if "brute" in inp.methods else None
            if exposed is None:
                why = (f"method={inp.method!r}" if inp.method not in ("auto", "exact") else
                       inp.adapter.tree_model_unavailable(inp.response) if exact is not None else "no 'exact' method")
                raise PdpxError(f"interval='members' reads the members of forests and bagged ensembles from their "
                                f"trees, and pdpx cannot read this {name}'s ({why}); nor does it expose members "
                                "(estimators_) whose mean is its prediction. Pass the members as a dict "
                                "{'m1': member1, ...} with interval='members'")
            session.predicts, weights = exposed
            what, how = "members", "by brute force over each member's own prediction"
        session.weights = weights
        res = session.compute(feats)
    curves = session.curves
    if options.centered:
        curves = center_curves(curves, lead=2)
    return res, curves, weights, what, how


def model_name(inp) -> str:
    """The model as messages name it: its class, or its library's for a model handed over as its own adapter (the
    R package's models: "<library> model", not the adapter's class)."""
    if inp.model is inp.adapter or type(inp.model).__name__.endswith("Adapter"):
        return f"{getattr(inp.adapter, 'library', 'this')} model"
    return type(inp.model).__name__


class MembersSession(Session):
    """A session whose method run also gives every member's PD (``curves``): one ``exact`` pass over ``split``
    (each member's trees an output of their own), whose weighted mean is the model's PD; or, for ``predicts``
    (members the model exposes), one ``brute`` pass over them beside the model's own run."""

    split = predicts = weights = exact = curves = trees = None

    def _run(self, batch, req):
        inp = self.inputs
        K, n = len(req.outputs), len(self.weights)
        need = n * K * req.n_grid * 8
        if need > inp.memory_budget:
            raise PdpxError(f"interval='members': the PDs of {n} members, {K} output(s) and {req.n_grid:,} grid "
                            f"points would take {need / 2**20:,.0f} MiB, over the memory budget; lower "
                            "grid_resolution, ask for fewer outputs (target=), or raise memory_budget")
        if self.split is not None and batch.name != self.exact.name:
            raise PdpxError(f"interval='members': the trees of this {model_name(inp)} did not answer for "
                            f"it (method {batch.name!r} was chosen), so its members cannot be read from them. Pass "
                            "the members as a dict {'m1': member1, ...} with interval='members'")
        own = self.split is None or req.needs_individual  # the model's own run: its ICE curves, or brute's check
        out, elapsed = super()._run(batch, req) if own else (None, 0.0)
        if self.split is not None:
            view, method = MembersView(inp.adapter, self.split), self.exact
        else:
            view, method = BruteMembersView(inp.adapter, self.predicts, K), inp.methods["brute"]
        t0 = time.perf_counter()
        got = inp.data.run(method.plan(view, [tuple(req.features)]), view,
                           replace(req, kind="average", outputs=list(range(n * K)), options=inp.options_for(method)),
                           model=inp.model, ice_rows=None)
        avg = np.asarray(got.average, dtype=np.float64)
        self.curves = avg.reshape((n, K) + avg.shape[1:])
        average = np.tensordot(self.weights, self.curves, axes=1)
        if self.split is None:  # the members the model exposes must average to it: else they are no members of it
            if not np.allclose(average, out.average, rtol=1e-7, atol=1e-9):
                raise PdpxError(f"interval='members': the mean of this {model_name(inp)}'s members "
                                "(estimators_) is not its prediction, so they are no members whose spread the band "
                                "could show. Pass refit models as a dict {'m1': model1, ...} with interval='members'")
            return out, elapsed + time.perf_counter() - t0
        notes = list(out.notes) if own else list(got.notes)
        individual = out.individual if own else None
        return MethodResult(average=average, individual=individual, notes=notes), elapsed + time.perf_counter() - t0


class MembersView(Adapter):
    """The adapter of a model, but whose trees are ``split``: each member's trees an output of their own.

    Every member of the :class:`~pdpx.core.adapter.Adapter` interface is the model's adapter's, written out
    below (nothing else of that adapter is reachable through the view), except the trees: :meth:`tree_model`
    gives ``split``.
    """

    def __init__(self, adapter: Adapter, split):
        self._adapter = adapter
        self._split = split
        # the caches of tree methods key on it: the split trees (kept with the model's), never the model itself
        self.model = self if split is None else getattr(split, "ensemble", split)

    @property
    def library(self) -> str:
        """The model's adapter's library."""
        return self._adapter.library

    @property
    def thread_safe(self) -> bool:
        """Whether the model's predict may run on several threads at once (its adapter's)."""
        return getattr(self._adapter, "thread_safe", True)

    @property
    def library_roots(self) -> tuple:
        """The model library's top-level packages (its adapter's)."""
        return self._adapter.library_roots

    def check_fitted(self) -> None:
        """The model's adapter's check."""
        self._adapter.check_fitted()

    def feature_names(self) -> list[str] | None:
        """The model's columns."""
        return self._adapter.feature_names()

    def is_classifier(self) -> bool:
        """Whether the model is a classifier."""
        return self._adapter.is_classifier()

    def classes(self) -> list | None:
        """The model's classes."""
        return self._adapter.classes()

    def responses(self) -> list[str]:
        """The model's responses."""
        return self._adapter.responses()

    def output_names(self, response: str) -> list[str]:
        """The model's output names."""
        return self._adapter.output_names(response)

    def response_refused(self, response: str) -> str | None:
        """The model's own reason for a response it has not."""
        return self._adapter.response_refused(response)

    def default_outputs(self, response: str) -> list[int]:
        """The model's default outputs."""
        return self._adapter.default_outputs(response)

    def response_label(self, response: str) -> str:
        """How the model's adapter names ``response``."""
        return self._adapter.response_label(response)

    def column_key(self, name: str) -> str:
        """A column's name as the model's library stores it."""
        return self._adapter.column_key(name)

    @property
    def times(self):
        """The times a survival model's outputs are read at (its adapter's)."""
        return self._adapter.times

    def training_times(self):
        """A survival model's training times (its adapter's)."""
        return self._adapter.training_times()

    def set_times(self, times) -> None:
        """Read a survival model's outputs at ``times`` (its adapter does)."""
        self._adapter.set_times(times)

    def time_bytes(self, response: str) -> int:
        """0: the split trees are read already, at every time (never a block of times at a time)."""
        return 0

    def validate_columns(self, X: pd.DataFrame) -> pd.DataFrame:
        """The model's adapter's check of the columns."""
        return self._adapter.validate_columns(X)

    def check_grid(self, name: str, values: np.ndarray) -> None:
        """The model's adapter's check of a grid."""
        self._adapter.check_grid(name, values)

    def predict(self, X: pd.DataFrame, response: str) -> np.ndarray:
        """The model's prediction."""
        return self._adapter.predict(X, response)

    def prediction_path(self, response: str) -> list:
        """The calls the model's trees stand for."""
        return self._adapter.prediction_path(response)

    def one_thread(self):
        """The model's adapter's single-threaded context."""
        return self._adapter.one_thread()

    def user_code(self, response: str) -> str | None:
        """The model's adapter's answer."""
        return self._adapter.user_code(response)

    def fingerprint(self) -> str:
        """The model's fingerprint."""
        return self._adapter.fingerprint()

    def tree_model(self, response: str):
        """The split trees."""
        return self._split

    def rebuilt(self) -> tuple:
        """``(build, args)``: ``build(adapter, *args)`` is this view over ``adapter``, the model's adapter made again
        where the rows are (a Spark task: the model and the trees travel, adapters do not)."""
        return type(self), (self._split,)

    def tree_model_unavailable(self, response: str) -> str:  # pragma: no cover - never asked
        """Never unavailable."""
        return ""


class BruteMembersView(MembersView):
    """The adapter of a model whose prediction is its members' predictions side by side (``K`` outputs each)."""

    def __init__(self, adapter, predicts, K: int):
        super().__init__(adapter, None)
        self._predicts, self._K = predicts, K

    def output_names(self, response: str) -> list:
        """One name per member and output."""
        return [f"{m}:{k}" for m in range(len(self._predicts)) for k in range(self._K)]

    def rebuilt(self) -> tuple:
        """``(build, args)`` as :meth:`MembersView.rebuilt`: the members' predicts travel."""
        return type(self), (self._predicts, self._K)

    def predict(self, X, response: str) -> np.ndarray:
        """Each member's own prediction of the requested outputs, side by side."""
        return np.concatenate([p(X) for p in self._predicts], axis=1)

    def tree_model(self, response: str):
        """No trees: brute force."""
        return None


def exposed_members(inp) -> tuple[list, np.ndarray] | None:
    """``(predicts, weights)`` of the members a model exposes (``estimators_``: fitted estimators with the
    response's method, ``estimators_features_``: the columns each reads, ``weights``: theirs), each ``predict``
    returning the requested outputs; None when there are none or they cannot answer for two rows."""
    model, response, outputs = inp.model, inp.response, np.asarray(inp.outputs)
    ests = getattr(model, "estimators_", None)
    if not isinstance(ests, (list, tuple)) or len(ests) < 2 or not all(hasattr(e, response) for e in ests):
        return None
    cols = getattr(model, "estimators_features_", None)
    w = getattr(model, "weights", None)
    try:
        weights = np.ones(len(ests)) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        return None
    if (cols is not None and len(cols) != len(ests)) or len(weights) != len(ests) or np.any(weights < 0) \
            or not weights.sum() > 0:
        return None

    def member(est, columns):
        method, named = getattr(est, response), hasattr(est, "feature_names_in_")

        def predict(frame):
            data = frame if named and columns is None else frame.to_numpy()
            data = data if columns is None else data[:, np.asarray(columns)]
            return np.asarray(method(data), dtype=np.float64).reshape(len(frame), -1)[:, outputs]
        return predict

    predicts = [member(e, None if cols is None else cols[m]) for m, e in enumerate(ests)]
    try:
        if any(p(inp.X.iloc[:2]).shape != (min(2, inp.n_rows), len(outputs)) for p in predicts):
            return None
    except Exception:  # noqa: BLE001 - a member that cannot answer: no members to show
        return None
    return predicts, weights / weights.sum()


def split_members(tm, outputs: list, name: str = "this model") -> tuple[object, np.ndarray, str]:
    """``(model, weights, what)``: ``tm`` read as one output per member and requested output (member ``m``'s
    output ``k`` is output ``m * len(outputs) + k``), each member's weight in the model, and what members are.

    A forest (trees averaged, :class:`TreeModel` with ``aggregation == "mean"``): each tree is a member, its
    own prediction its leaf values. An ensemble of models summed with weights (:class:`TreeSum`): each term
    whose weights are one number times a 0/1 map of outputs, with no offset and the numbers summing to 1.
    Refused otherwise (boosted trees; sums that are no weighted mean of their members).

    A library may train a random forest as one round of parallel trees that it sums, each tree's leaf values
    scaled by one over their number: its adapter's optional ``forest_members(response, tree_model)`` returns the
    same trees as a forest (leaf values times the number of trees, averaged), None when its trees are not such
    a forest (boosted: refused here), or raises saying why they cannot be members.
    """
    if isinstance(tm, TreeSum):
        return _split_sum(tm, outputs, name)
    ens = tm.ensemble
    if ens.aggregation != "mean":
        raise PdpxError(f"interval='members' cannot draw the members of {name}: {BOOSTED}")
    if ens.n_trees < 2:
        raise PdpxError("interval='members': this model has one tree, so there is no spread of members; use "
                        "interval='bootstrap', or pass refit models as a dict with interval='members'")
    if ens.link != "identity" or not (ens.n_margins == 1 or np.all(ens.tree_group < 0)):
        raise PdpxError("interval='members': the members of this forest are not single trees summed into the "
                        "response (a link, or trees per class); pass the members as a dict with "
                        "interval='members', or ask for the margin the trees sum to (response='raw', where the "
                        "model has it)")
    w = ens.effective_tree_weight()
    if not np.isclose(w.sum(), 1.0, rtol=1e-9) or np.any(w <= 0):
        raise PdpxError("interval='members': this forest's tree weights do not make its prediction a weighted "
                        "mean of its trees; pass the members as a dict with interval='members'")
    key = "members:" + ",".join(str(int(o)) for o in outputs)  # kept with the trees: later calls reuse its tables
    split = ens.derived(key, lambda: _one_output_per_tree(ens, outputs))
    return TreeModel(ensemble=split, encode=tm.encode, encode_values=tm.encode_values, notes=list(tm.notes),
                     recursion_weights=tm.recursion_weights), w / w.sum(), "trees"


def _one_output_per_tree(ens: TreeEnsemble, outputs: list) -> TreeEnsemble:
    """``ens``'s trees, copied once per requested output, tree ``t``'s copy for output ``k`` (its leaf values
    for that margin) summed into margin ``t * K + k`` alone, with the base score added to each."""
    K, T, n = len(outputs), ens.n_trees, len(ens.left)
    vec = ens.tree_group < 0
    cols = [np.where(np.repeat(vec, np.diff(ens.tree_start)), ens.value[:, min(o, ens.value.shape[1] - 1)],
                     ens.value[:, 0]) for o in outputs]

    def stacked(a):  # one output: the model's own arrays, not copied
        return a if K == 1 else np.concatenate([a] * K)

    def moved(child):
        return child if K == 1 else np.concatenate([np.where(child >= 0, child + k * n, child) for k in range(K)])

    starts = np.concatenate([ens.tree_start[:-1] + k * n for k in range(K)] + [[K * n]])
    group = np.concatenate([np.arange(T) * K + k for k in range(K)])
    return TreeEnsemble(
        left=moved(ens.left), right=moved(ens.right), feature=stacked(ens.feature),
        threshold=stacked(ens.threshold), missing_left=stacked(ens.missing_left), value=np.concatenate(cols),
        tree_start=starts, tree_group=group, n_features=ens.n_features, n_margins=T * K,
        node_weight=stacked(ens.node_weight), nan_mode=stacked(ens.nan_mode),
        cat_offset=stacked(ens.cat_offset), cat_nwords=stacked(ens.cat_nwords), cat_words=ens.cat_words,
        tree_weight=np.ones(T * K), base_score=np.tile(ens.base_score[np.asarray(outputs)], T),
        comparison=ens.comparison, float32_input=ens.float32_input, categories_go_left=ens.categories_go_left,
        aggregation="sum", link="identity", description=ens.description,
    )


def _split_sum(ts: TreeSum, outputs: list, name: str) -> tuple[TreeSum, np.ndarray, str]:
    """A :class:`TreeSum` whose terms are weighted members (see :func:`split_members`), one output per member."""
    outputs = np.asarray(outputs, dtype=np.int64)
    K, M = len(outputs), len(ts.terms)
    scales = []
    for term in ts.terms:
        W = np.asarray(term.weights, dtype=np.float64)
        c = W.sum(axis=1)
        if not (c[0] > 0 and np.allclose(c, c[0], rtol=1e-9) and np.all((W == 0) | np.isclose(W, c[0]))):
            raise PdpxError(f"interval='members' cannot draw the members of {name}: it is no weighted mean of its "
                            "members (a stacked or boosted combination). Use interval='bootstrap' (the spread over "
                            "the rows), or pass refit models as a dict {'fold1': model1, ...} with interval='members'")
        scales.append(c[0])
    scales = np.asarray(scales)
    if M < 2 or np.any(np.asarray(ts.offset) != 0) or not np.isclose(scales.sum(), 1.0, rtol=1e-9):
        raise PdpxError(f"interval='members' cannot draw the members of {name}: it is no weighted mean of two or "
                        "more members; pass refit models as a dict {'m1': member1, ...} with interval='members'")
    terms = []
    for m, (term, c) in enumerate(zip(ts.terms, scales)):
        W = np.zeros((M * K, np.asarray(term.weights).shape[1]))
        W[m * K:(m + 1) * K] = np.asarray(term.weights, dtype=np.float64)[outputs] / c
        terms.append(TreeTerm(term.model, W, term.columns))
    return TreeSum(terms, np.zeros(M * K), list(ts.notes)), scales, "members"
