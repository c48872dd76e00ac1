"""Column rules: what pdpx knows about each column-wise scikit-learn transformer.

A *rule* reads one fitted transformer and says, for the ``n_inputs`` columns it
receives, which input column each of its output columns comes from and how each
input column is treated. Three treatments are enough to turn a tree split on a
transformed column back into a split on the user's own column:

* ``"increasing"`` / ``"decreasing"``: a monotone map of numbers (scalers, an
  ordinal binning, an element-wise function the user declared monotone); a
  threshold on the output is a threshold on the input;
* ``"preserve"``: non-missing values pass unchanged (imputers fill missing ones,
  ``passthrough``);
* ``"encoder"``: a categorical encoder; ``categories[i]`` lists the values it was
  fitted on, and a split on any of its outputs is a set of those values;
* ``"sentinel"``: values pass unchanged except those listed in ``categories[i]``
  (an imputer's ``missing_values=0``), which become another value. Not a monotone
  map, so a numeric column treated so runs ``brute``; in front of an encoder, the
  listed values get their own entries in the column's table of values.
* ``"derived"``: each output column computed from this input is some function of
  its value alone, not necessarily monotone, and there may be several (a spline
  basis, one-hot bins, powers, sin and cos of an hour). A split on any of them is
  a set of the input's values: pdpx evaluates the steps on the finite set of
  values a call meets (:mod:`pdpx.adapters.column_values`), numeric columns only.

A rule found through a base class applies only when the step's class keeps that
base class's ``transform`` (a subclass that overrides it is not followed).

pdpx never inverts a transformer's arithmetic: it evaluates the fitted
transformer itself (see :mod:`pdpx.adapters.sklearn_pipeline`), so a rule only
states facts that hold for every value. A rule returns a :class:`ColumnMap`, or a
string saying why the transformer is not column-wise (the pipeline then runs
``brute`` and the result's notes carry that sentence).

Adding a transformer is one rule::

    from pdpx.adapters.sklearn_transforms import ColumnMap, register_rule

    def my_scaler_rule(step, n_inputs):
        return ColumnMap.one_to_one(n_inputs, "increasing")

    register_rule("mypackage.MyScaler", my_scaler_rule)

Element-wise :class:`~sklearn.preprocessing.FunctionTransformer` functions are
declared with :func:`declare_elementwise`; functions that make several columns of
each column (sin and cos of an hour) with :func:`declare_columnwise`. A class of
your own that makes several columns of each column gets a rule whose treatment is
``"derived"``::

    def my_encoder_rule(step, n_inputs):
        k = step.n_outputs_per_column
        return ColumnMap([i for i in range(n_inputs) for _ in range(k)], ["derived"] * n_inputs)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

#: What a rule may say about one input column.
TREATMENTS = ("increasing", "decreasing", "preserve", "encoder", "sentinel", "derived")


@dataclass
class ColumnMap:
    """How a column-wise transformer maps its input columns to its output columns.

    Attributes
    ----------
    source : list of int
        For each output column, the position (among the transformer's inputs) of the
        input column it is computed from.
    treatment : list of str
        For each input column, one of :data:`TREATMENTS`.
    categories : dict
        For each ``"encoder"`` input column, the values it was fitted on; for each
        ``"sentinel"`` input column, the values it replaces.
    """

    source: list
    treatment: list
    categories: dict = field(default_factory=dict)

    @classmethod
    def one_to_one(cls, n_inputs: int, treatment: str) -> "ColumnMap":
        """Output ``i`` is input ``i`` transformed with ``treatment``."""
        return cls(list(range(n_inputs)), [treatment] * n_inputs)


Rule = Callable[[object, int], "ColumnMap | str"]

_RULES: dict[str, Rule] = {}
_ELEMENTWISE: dict[int, tuple[Callable, str]] = {}
_COLUMNWISE: dict[int, tuple[Callable, int, str]] = {}
_VERSION = [object()]  # replaced at every registration: cached pipeline readings made before it are stale


def rules_version() -> object:
    """An object that changes whenever a rule or an element-wise function is registered."""
    return _VERSION[0]


def register_rule(class_path: str, rule: Rule) -> None:
    """Teach pdpx a column-wise transformer: ``class_path`` is ``"module.ClassName"``.

    ``rule(fitted_transformer, n_inputs)`` returns a :class:`ColumnMap`, or a sentence
    saying why this fitted instance cannot be followed column by column. A rule
    registered for a class also applies to its subclasses unless they have their own.
    """
    if not isinstance(class_path, str) or "." not in class_path:
        raise ValueError(f"register_rule: class_path must be 'module.ClassName', got {class_path!r}")
    _RULES[class_path] = rule
    _VERSION[0] = object()


def declare_elementwise(func: Callable, monotone: str = "increasing") -> Callable:
    """Declare that ``FunctionTransformer(func)`` maps every value on its own, monotonically.

    ``monotone`` is ``"increasing"`` or ``"decreasing"`` (non-strict). Without this
    declaration a FunctionTransformer with a function makes pipelines run ``brute``.
    Returns ``func`` (usable as a decorator).
    """
    if monotone not in ("increasing", "decreasing"):
        raise ValueError(f"declare_elementwise: monotone must be 'increasing' or 'decreasing', got {monotone!r}")
    _ELEMENTWISE[id(func)] = (func, monotone)
    _VERSION[0] = object()
    return func


def declare_columnwise(func: Callable, n_outputs: int, layout: str = "stacked") -> Callable:
    """Declare that ``FunctionTransformer(func)`` makes ``n_outputs`` columns of each column, each a function
    of that column's value alone (not necessarily monotone), e.g. sin and cos of an hour.

    ``layout`` says where they go for ``m`` input columns: ``"stacked"`` (output ``k * m + i`` is the
    ``k``-th column made of input ``i``, as ``np.hstack([f1(X), f2(X)])`` gives) or ``"interleaved"``
    (output ``i * n_outputs + k``). With one input column the two agree. A split on any of them is then
    a set of the column's values, and ``exact`` answers (numeric columns, and ``datetime64`` columns whose dates
    go straight into it: ``func`` is then given dates of the column's dtype, e.g. to make date parts). pdpx
    checks, on rows of X, that the columns the pipeline makes are those of each value alone, and runs ``brute``
    (saying why) where they are not. Returns ``func`` (usable as a decorator).
    """
    if not isinstance(n_outputs, (int, np.integer)) or isinstance(n_outputs, bool) or n_outputs < 1:
        raise ValueError(f"declare_columnwise: n_outputs must be a positive integer, got {n_outputs!r}")
    if layout not in ("stacked", "interleaved"):
        raise ValueError(f"declare_columnwise: layout must be 'stacked' or 'interleaved', got {layout!r}")
    _COLUMNWISE[id(func)] = (func, int(n_outputs), layout)
    _VERSION[0] = object()
    return func


def rule_for(step) -> Rule | None:
    """The rule registered for ``step``'s class or its nearest registered base class.

    A base class's rule is returned only when ``step``'s class keeps that base class's
    ``transform``; a subclass that overrides it gets a rule that refuses (says why).
    """
    mro = type(step).__mro__
    owner = next((i for i, k in enumerate(mro) if "transform" in vars(k)), len(mro))
    for i, klass in enumerate(mro):
        rule = _RULES.get(f"{klass.__module__}.{klass.__qualname__}")
        if rule is None:
            rule = _RULES.get(f"{klass.__module__.split('._')[0]}.{klass.__qualname__}")
        if rule is None:
            continue
        return rule if owner >= i else _overridden(klass)
    return None


def _overridden(base) -> Rule:
    def refuse(step, n):
        return (f"{type(step).__name__} overrides transform of {base.__name__}, so pdpx cannot tell what it does "
                f"to each column; register a rule for {type(step).__module__}.{type(step).__qualname__}")

    return refuse


def column_map(step, n_inputs: int) -> "ColumnMap | str":
    """The :class:`ColumnMap` of a fitted transformer, or why it mixes or hides columns."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return ColumnMap.one_to_one(n_inputs, "preserve")
    rule = rule_for(step)
    if rule is None:
        return f"{type(step).__name__} is not known to transform each column on its own"
    out = rule(step, n_inputs)
    if isinstance(out, ColumnMap):
        if len(out.treatment) != n_inputs or any(not 0 <= s < n_inputs for s in out.source):
            return f"{type(step).__name__}: its column rule does not match its {n_inputs} input column(s)"
        if any(t not in TREATMENTS for t in out.treatment):
            return f"{type(step).__name__}: its column rule names an unknown treatment"
    return out


# ------------------------------------------------------------------ the built-in rules
def _scaler(step, n):
    return ColumnMap.one_to_one(n, "increasing")


def _standard_scaler(step, n):
    scale = getattr(step, "scale_", None)
    if scale is not None and np.any(np.asarray(scale) <= 0):  # pragma: no cover - scikit-learn keeps them positive
        return "StandardScaler has a non-positive scale"
    return ColumnMap.one_to_one(n, "increasing")


def _minmax(step, n):
    scale = np.asarray(getattr(step, "scale_", np.ones(n)))
    if np.any(scale < 0):  # pragma: no cover
        return "MinMaxScaler with a decreasing feature_range"
    return ColumnMap.one_to_one(n, "increasing")


def _imputer(step, n):
    mv = getattr(step, "missing_values", np.nan)
    if mv is None or (not _is_missing(mv) and _is_missing_like(mv)):
        return (f"SimpleImputer(missing_values={mv!r}) fills {mv!r} but not NaN, and pdpx reads both as one missing "
                "value; use missing_values=np.nan")
    treatment, replaced = ("preserve", {}) if _is_missing(mv) else ("sentinel", {i: [mv] for i in range(n)})
    kept = list(range(n))
    stats = getattr(step, "statistics_", None)
    if stats is not None and not getattr(step, "keep_empty_features", False) and step.strategy != "constant":
        kept = [i for i in range(n) if not _is_float_nan(stats[i])]  # a column without a statistic is dropped
    source = list(kept)
    indicator = getattr(step, "indicator_", None)
    if indicator is not None:
        source += [int(i) for i in indicator.features_]  # "is missing" of input i: a function of input i
    return ColumnMap(source, [treatment] * n, replaced)


def _is_missing(v) -> bool:
    try:
        return bool(np.isnan(v))
    except TypeError:
        return v is None


def _is_float_nan(v) -> bool:
    return isinstance(v, (float, np.floating)) and v != v


def _is_missing_like(v) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _onehot(step, n):
    counts = None
    compute = getattr(step, "_compute_n_features_outs", None)
    if callable(compute):
        counts = list(compute())
    if counts is None or len(counts) != n:  # pragma: no cover - older scikit-learn
        return "OneHotEncoder: this scikit-learn version does not say how many columns each input makes"
    source = [i for i in range(n) for _ in range(int(counts[i]))]
    return ColumnMap(source, ["encoder"] * n, {i: list(step.categories_[i]) for i in range(n)})


def _ordinal(step, n):
    return ColumnMap(list(range(n)), ["encoder"] * n, {i: list(step.categories_[i]) for i in range(n)})


def _target_encoder(step, n):
    per = len(step.classes_) if getattr(step, "target_type_", "") == "multiclass" else 1
    source = [i for i in range(n) for _ in range(per)]
    return ColumnMap(source, ["encoder"] * n, {i: list(step.categories_[i]) for i in range(n)})


def _kbins(step, n):
    if step.encode == "ordinal":
        return ColumnMap.one_to_one(n, "increasing")
    bins = [int(b) for b in step.n_bins_]  # one indicator per bin, the bins of each column together
    return ColumnMap([i for i in range(n) for _ in range(bins[i])], ["derived"] * n)


def _spline(step, n):
    out = int(step.n_features_out_)
    if n == 0 or out % n:  # pragma: no cover - scikit-learn makes as many splines for every column
        return f"SplineTransformer makes {out} columns of {n}, not as many of each"
    return ColumnMap([i for i in range(n) for _ in range(out // n)], ["derived"] * n)


def _polynomial(step, n):
    powers = np.asarray(step.powers_)
    source = []
    for row in powers:
        used = np.flatnonzero(row)
        if len(used) > 1:
            return ("PolynomialFeatures makes products of several columns (interaction terms); exact follows it "
                    "on one column at a time (e.g. inside a ColumnTransformer, one PolynomialFeatures per column)")
        source.append(int(used[0]) if len(used) else 0)  # the bias column: a constant, of any input
    return ColumnMap(source, ["derived"] * n)


def _monotone_transformer(step, n):
    return ColumnMap.one_to_one(n, "increasing")


def _selector(step, n):
    support = np.asarray(step.get_support(), dtype=bool)
    if len(support) != n:  # pragma: no cover
        return f"{type(step).__name__}: its support has {len(support)} entries for {n} columns"
    return ColumnMap([int(i) for i in np.flatnonzero(support)], ["preserve"] * n)


def _function(step, n):
    func = step.func
    if func is None:
        return ColumnMap.one_to_one(n, "preserve")
    declared = _ELEMENTWISE.get(id(func))
    name = getattr(func, "__name__", repr(func))
    columnwise = _COLUMNWISE.get(id(func))
    if columnwise is not None and columnwise[0] is func:
        k, layout = columnwise[1], columnwise[2]
        source = [i for q in range(k) for i in range(n)] if layout == "stacked" else [
            i for i in range(n) for _ in range(k)]
        return ColumnMap(source, ["derived"] * n)
    if declared is None or declared[0] is not func:
        return (f"FunctionTransformer({name}) may mix columns; if it maps each value on its own and monotonically, "
                "declare it with pdpx.extend.declare_elementwise (or pdpx.extend.declare_columnwise when "
                "it makes several columns of each)")
    if step.kw_args:
        return (f"FunctionTransformer({name}, kw_args={step.kw_args!r}): {name} was declared element-wise and "
                "monotone when called on the values alone, not with these keyword arguments")
    return ColumnMap.one_to_one(n, declared[1])


for _path, _rule in {
    "sklearn.preprocessing.StandardScaler": _standard_scaler,
    "sklearn.preprocessing.MinMaxScaler": _minmax,
    "sklearn.preprocessing.RobustScaler": _scaler,
    "sklearn.preprocessing.MaxAbsScaler": _scaler,
    "sklearn.impute.SimpleImputer": _imputer,
    "sklearn.preprocessing.OneHotEncoder": _onehot,
    "sklearn.preprocessing.OrdinalEncoder": _ordinal,
    "sklearn.preprocessing.TargetEncoder": _target_encoder,
    "sklearn.preprocessing.KBinsDiscretizer": _kbins,
    "sklearn.preprocessing.FunctionTransformer": _function,
    "sklearn.preprocessing.SplineTransformer": _spline,
    "sklearn.preprocessing.PolynomialFeatures": _polynomial,
    "sklearn.preprocessing.QuantileTransformer": _monotone_transformer,
    "sklearn.preprocessing.PowerTransformer": _monotone_transformer,
    "sklearn.feature_selection.SelectorMixin": _selector,
}.items():
    register_rule(_path, _rule)


from ..core.oldpaths import watch as _watch  # noqa: E402 - last: the names above moved to pdpx.extend (core/oldpaths.py)

_watch(__name__)
