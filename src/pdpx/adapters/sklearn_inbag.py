"""The in-bag counts of scikit-learn's bagged forests: how many times each training row went into each member.

``interval="jackknife"`` and ``oob=True`` (:mod:`pdpx.core.jackknife`, :mod:`pdpx.core.oob`) need, for every
member ``b`` and training row ``i``, the number of times ``N[i, b]`` the member drew row ``i``. scikit-learn
does not keep them: it draws them again from each member's seed when asked (``estimators_samples_``, the
installed scikit-learn's own sampling rule, for ``RandomForest*``, ``ExtraTrees*`` and ``Bagging*``), and
records the number of training rows (``_n_samples``). :func:`inbag_counts` counts those draws (kept with the
model until it is refit); it refuses,
saying why, a model fitted without drawing with replacement (``bootstrap=False``: every member saw every row,
or a subsample without replacement), a scikit-learn too old to redraw them (before 1.4), and any other model.
A Pipeline's counts are its last step's.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..core.errors import PdpxError

#: The counts last read from each model, with the list of members they are of (a refit makes a new list).
_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: The classes whose members were drawn by a bootstrap scikit-learn can redraw.
BAGGED = ("RandomForestRegressor", "RandomForestClassifier", "ExtraTreesRegressor", "ExtraTreesClassifier",
          "BaggingRegressor", "BaggingClassifier")


def inbag_counts(model) -> np.ndarray:
    """``N`` of shape (n_training_rows, n_members), integers: how many times member ``b`` drew training row ``i``
    (see the module docstring); raises :class:`~pdpx.core.errors.PdpxError` saying why it cannot."""
    est = model[-1] if _is_pipeline(model) else model
    name = type(est).__name__
    if not any(f"{k.__module__}.{k.__name__}".startswith("sklearn.ensemble.") and k.__name__ in BAGGED
               for k in type(est).__mro__):
        raise PdpxError(f"pdpx reads in-bag counts from scikit-learn's {', '.join(BAGGED)}; a {name} has none "
                        "(boosted and single models draw no bootstrap samples)")
    if not getattr(est, "bootstrap", False):
        raise PdpxError(f"this {name} was fitted with bootstrap=False: each member saw every row (or a subsample "
                        "drawn without replacement), so there are no bootstrap in-bag counts; refit it with "
                        "bootstrap=True")
    n = getattr(est, "_n_samples", None)
    if n is None or not hasattr(type(est), "estimators_samples_"):
        import sklearn

        raise PdpxError(f"scikit-learn {sklearn.__version__} does not record the rows each member of a {name} drew "
                        "(estimators_samples_ and the training size arrived in scikit-learn 1.4); upgrade "
                        "scikit-learn and refit")
    kept = _KEPT.get(est)
    if kept is not None and kept[0] is est.estimators_:
        return kept[1]
    samples = est.estimators_samples_
    # a row is drawn at most as many times as a member draws rows: the smallest integers that hold that
    most = max((len(idx) for idx in samples), default=0)
    counts = np.empty((int(n), len(samples)), dtype=np.uint16 if most < 2 ** 16 else np.int64)
    for b, idx in enumerate(samples):
        counts[:, b] = np.bincount(np.asarray(idx, dtype=np.int64), minlength=int(n))
    counts.setflags(write=False)
    try:
        _KEPT[est] = (est.estimators_, counts)
    except TypeError:  # pragma: no cover - an estimator that cannot be weakly referenced: read each time
        pass
    return counts


def _is_pipeline(model) -> bool:
    """A fitted scikit-learn Pipeline (by class path)."""
    return any(f"{k.__module__}.{k.__name__}" == "sklearn.pipeline.Pipeline" for k in type(model).__mro__)
