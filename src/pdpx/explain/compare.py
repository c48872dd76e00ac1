"""Where ``exact`` and ``recursion`` part: :func:`compare_methods`.

Both methods compute "partial dependence" of a tree model, but not the same quantity:

* ``exact`` (``auto``) is brute force's answer, the interventional PD: every row of X
  with the target features set to the grid value, predicted, averaged;
* ``recursion`` (Friedman's weighted traversal) follows both children at a split on
  another feature, weighted by the fractions of the *training* rows that went each way
  in that node. Below a split on the target feature, those fractions are conditional on
  the target feature's region: the PD only if the features are independent.

:func:`compare_methods` runs both on one grid and reports where and by how much they
differ (``docs/ale.md`` has a worked example where they give 950 and 500).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..core.compute import compute
from ..core.drawing import Drawable
from ..core.errors import ExtrapolationWarning, PdpxError
from ..core.options import PDOptions
from ..core.result import PartialDependenceResult, feature_columns, grid_label


class MethodComparison(Drawable):
    """``exact`` and ``recursion`` partial dependence on one grid.

    Attributes
    ----------
    exact, recursion : PartialDependenceResult
        The two results (``exact.method`` says which exact method ran: ``exact``, or
        ``brute`` where the trees cannot be read for that response).
    """

    figure = "comparison"

    def __init__(self, exact: PartialDependenceResult, recursion: PartialDependenceResult):
        self.exact = exact
        self.recursion = recursion

    @property
    def features(self) -> list[str]:
        return list(self.exact.features)

    @property
    def difference(self) -> np.ndarray:
        """``recursion - exact`` on the grid, (n_outputs, *grid_shape)."""
        return np.asarray(self.recursion.average) - np.asarray(self.exact.average)

    def __repr__(self) -> str:
        s = self.summary()
        worst = s.loc[s["max_abs_difference"].idxmax()]
        return (f"<MethodComparison features={self.features} max |recursion - exact| = "
                f"{worst['max_abs_difference']:.6g} at {worst['at']} (output {worst['output']!r})>")

    def to_frame(self) -> pd.DataFrame:
        """One row per output and grid point: the feature columns, ``exact``, ``recursion``, ``difference``.

        ``difference`` is ``recursion - exact``.
        """
        df = self.exact.to_frame(kind="average")
        rec = self.recursion.to_frame(kind="average")
        keep = ["feature_set", "output"] + [c for j in range(len(self.features)) for c in feature_columns(j + 1)]
        out = df[keep].copy()
        out["exact"] = df["yhat"].to_numpy()
        out["recursion"] = rec["yhat"].to_numpy()
        out["difference"] = out["recursion"] - out["exact"]
        out.attrs.update(exact_method=self.exact.method, response=self.exact.response)
        return out

    def summary(self) -> pd.DataFrame:
        """Per output: the largest absolute difference, where it is, the mean absolute difference,
        and the largest difference relative to the range of the exact curve."""
        rows = []
        diff = self.difference
        for k, out in enumerate(self.exact.outputs):
            d = np.abs(diff[k])
            at = np.unravel_index(int(np.nanargmax(d)), d.shape)
            spread = float(np.nanmax(self.exact.average[k]) - np.nanmin(self.exact.average[k]))
            top = float(d[at])
            rows.append({
                "output": out,
                "max_abs_difference": top,
                "at": ", ".join(f"{f} = {grid_label(self.exact.grid_values[j][at[j]])}"
                                for j, f in enumerate(self.features)),
                "exact_at": float(self.exact.average[k][at]),
                "recursion_at": float(self.recursion.average[k][at]),
                "mean_abs_difference": float(np.nanmean(d)),
                "relative_to_range": top / spread if spread > 0 else (0.0 if top == 0 else np.inf),
            })
        return pd.DataFrame(rows)


def compare_methods(model, X, features, **pd_options) -> MethodComparison:
    """Partial dependence by ``exact`` (brute's answer) and by ``recursion`` on the same grid.

    Parameters
    ----------
    model
        A tree model whose trees carry node weights (scikit-learn trees, forests and
        boosting, XGBoost, LightGBM; see ``docs/methods.md``).
    X, features
        As in :func:`pdpx.partial_dependence` (one or two features).
    **pd_options
        Options of :func:`pdpx.partial_dependence` for the grid, response and target;
        ``method``, ``kind``, ``by``, ``interval``, ``centered`` and ``ice_sample`` are
        refused (the comparison is of the two average curves, as computed).

    Returns
    -------
    MethodComparison
        ``to_frame()`` (exact, recursion, difference), ``summary()``, ``plot()``.
    """
    options = PDOptions.checked("compare_methods", pd_options)
    if isinstance(model, dict):
        raise PdpxError("compare_methods(): model must be one fitted model, not a dict; call it once per model")
    fixed = {"method": None, "kind": "average", "by": None, "interval": None, "centered": False, "ice_sample": None}
    for name, default in fixed.items():
        if name in pd_options and pd_options[name] != default:
            raise PdpxError(f"compare_methods(): {name}={pd_options[name]!r} is not supported; it compares the "
                            "average curves of 'exact' and 'recursion', uncentered (leave it out)")
    try:
        rec = compute(model, X, features, options.but(method="recursion"))
    except PdpxError as exc:
        text = str(exc)
        if text.startswith("method 'recursion' cannot run here: "):
            raise PdpxError(f"compare_methods(): recursion cannot run for {type(model).__name__}: "
                            f"{text.split(': ', 1)[1]}. It needs a tree model whose trees carry node weights "
                            "(docs/methods.md)") from None
        raise
    with warnings.catch_warnings():  # the same grid and data: the recursion call has warned already
        warnings.simplefilter("ignore", ExtrapolationWarning)
        exact = compute(model, X, features, options.but(method="auto"))
    return MethodComparison(exact, rec)
