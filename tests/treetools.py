"""The reference toolkit every tree adapter's tests use.

References are written from the definitions, plainly, never from pdpx's own
kernels:

* :class:`IRAdapter`: a bare IR ensemble as a model, so ``brute`` is the IR's own
  prediction (for kernel tests);
* :func:`friedman_reference`: Friedman's weighted traversal, one grid point and
  one tree at a time;
* :func:`adversarial_rows`: rows that sit on split thresholds, one ulp either
  side, at zero, missing, and in categories unused in training;
* :func:`assert_exact_equals_brute`, :func:`assert_recursion_is_friedman`: the
  checks each adapter runs on its models;
* :func:`mixed_categories_frame`: few categories (one-hot splits) and integer
  category labels;
* :func:`assert_library_not_imported`: recognising a model never imports its library.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
from stacked import predict_copies

import pdpx
from pdpx.core.adapter import Adapter
from pdpx.core.ir import TreeModel, numeric_encoder, numeric_values
from pdpx.core.plugins import adapt


class IRAdapter(Adapter):
    """Predicts with the ensemble itself, so brute is the IR's own prediction."""

    def __init__(self, ens):
        super().__init__(ens)
        self.ens = ens

    def responses(self):
        return ["predict"]

    def output_names(self, response):
        return [f"out{k}" for k in range(self.ens.n_outputs)]

    def default_outputs(self, response):
        return list(range(self.ens.n_outputs))

    def predict(self, X, response):
        return self.ens.predict(numeric_encoder(X))

    def tree_model(self, response):
        return TreeModel(self.ens, numeric_encoder, numeric_values)


def friedman_reference(ens, points, features, margin=0, node_weight=None) -> np.ndarray:
    """Friedman's weighted traversal for margin ``margin`` at each grid point: shape (n_points,).

    ``points``: (n_points, len(features)) values in the ensemble's input space;
    ``features``: their column positions. At a split on a target feature the point
    decides; elsewhere both children are followed, weighted by their share of the
    parent's node weight (``node_weight``, default the ensemble's), as Friedman
    (2001) defines it.
    """
    w = ens.effective_tree_weight()
    weights = ens.node_weight if node_weight is None else node_weight
    features = list(features)
    out = []
    for point in np.atleast_2d(points):
        total = ens.base_score[margin]
        for t in range(ens.n_trees):
            group = ens.tree_group[t]
            if group not in (margin, -1):
                continue
            col = margin if group < 0 else 0
            stack = [(int(ens.tree_start[t]), 1.0)]
            while stack:
                node, frac = stack.pop()
                if ens.left[node] < 0:
                    total += w[t] * frac * ens.value[node, col]
                    continue
                f = ens.feature[node]
                if f in features:
                    go = bool(ens.goes_left(node, np.array([point[features.index(f)]]))[0])
                    stack.append((int(ens.left[node] if go else ens.right[node]), frac))
                    continue
                wp = weights[node]
                stack.append((int(ens.left[node]), frac * weights[ens.left[node]] / wp))
                stack.append((int(ens.right[node]), frac * weights[ens.right[node]] / wp))
        out.append(total)
    return np.array(out)


def adversarial_rows(ens, X: pd.DataFrame, *, seed: int = 1, float32: bool = False) -> pd.DataFrame:
    """Rows of X (resampled) with cells replaced by values that test routing.

    Numeric cells: split thresholds, one ulp either side (float32 ulps and
    ``t +- 1e-12`` when the model compares in float32: same float32, different
    float64), zeros of both signs, NaN, and values around LightGBM's zero threshold
    (+-1e-36, 1e-34). Categorical cells: random categories, including ones
    unused in training, and missing values.
    """
    rng = np.random.default_rng(seed)
    out = X.sample(len(X), replace=True, random_state=seed).reset_index(drop=True)
    internal = (ens.left >= 0) & (ens.cat_offset < 0)
    for j, name in enumerate(out.columns):
        if isinstance(out[name].dtype, pd.CategoricalDtype):
            cats = list(out[name].cat.categories)
            vals = pd.Categorical(rng.choice(cats, len(out)), categories=cats)
            take = rng.random(len(out)) < 0.5
            col = out[name].copy()
            col[take] = vals[take]
            col[rng.random(len(out)) < 0.1] = np.nan
            out[name] = col
            continue
        t = ens.threshold[internal & (ens.feature == j)]
        t = np.unique(t) if t.size else np.array([0.0])
        if float32:
            t32 = t.astype(np.float32)
            cand = [t, np.nextafter(t32, np.float32(np.inf)).astype(np.float64),
                    np.nextafter(t32, np.float32(-np.inf)).astype(np.float64), t + 1e-12, t - 1e-12]
        else:
            cand = [t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)]
        cand = np.concatenate(cand + [np.array([0.0, -0.0, np.nan, 1e-36, -1e-36, 1e-34])])
        take = rng.random(len(out)) < 0.6
        col = out[name].to_numpy(dtype=np.float64).copy()
        col[take] = rng.choice(cand, take.sum())
        out[name] = col
    return out


def assert_exact_equals_brute(model, X, features, *, kernel="auto", rtol=1e-9, atol=1e-9, grid_resolution=12,
                              **options):
    """``exact`` (ICE and average, and the average-only path) equals ``brute`` on ``X``.

    ``options``: more options of :func:`pdpx.partial_dependence` (response, weights, ...).
    """
    kw = dict(kind="both", grid_resolution=grid_resolution, **options)
    opts = {"kernel": kernel}
    e = pdpx.partial_dependence(model, X, features, method="exact", method_options=opts, **kw)
    b = pdpx.partial_dependence(model, X, features, method="brute", **kw)
    # kind="average" alone takes another path for responses linear in the trees
    a = pdpx.partial_dependence(model, X, features, method="exact", method_options=opts,
                                **{**kw, "kind": "average"})
    assert e.method == "exact"
    assert e.average.shape == b.average.shape
    np.testing.assert_allclose(e.average, b.average, rtol=rtol, atol=atol)
    np.testing.assert_allclose(e.individual, b.individual, rtol=rtol, atol=atol)
    np.testing.assert_allclose(a.average, b.average, rtol=rtol, atol=atol)
    return e, b


def assert_recursion_is_friedman(model, X, features, *, response, grid_resolution=6, atol=1e-10):
    """``recursion`` equals :func:`friedman_reference` on the adapter's own IR, every output."""
    res = pdpx.partial_dependence(model, X, features, method="recursion", response=response,
                                  grid_resolution=grid_resolution)
    ad = adapt(model)
    ad.validate_columns(X)
    tm = ad.tree_model(response)
    pos = [list(X.columns).index(f) for f in features]
    grids = [tm.encode_values(p, g) for p, g in zip(pos, res.grid_values)]
    mesh = np.stack([m.ravel() for m in np.meshgrid(*grids, indexing="ij")], axis=1)
    ens = tm.ensemble
    for k in range(res.average.shape[0]):
        margin = k if ens.n_margins > 1 else 0
        ref = friedman_reference(ens, mesh, pos, margin=margin)
        np.testing.assert_allclose(res.average[k].ravel(), ref, rtol=atol, atol=atol)
    return res


#: Categories of the booster tests' categorical column: unsorted, the last two never in training.
CATS = ["tau", "alpha", "mu", "beta", "kappa", "unused1", "unused2"]


def booster_data(n: int, *, cat_weight: float, zero_weight: float, seed: int = 0) -> dict:
    """Data with missing values, zeros and an unsorted categorical column, and targets of every kind.

    Returns ``{"X", "f" (the signal plus noise), "bin", "multi", "pos"}``.
    """
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "z", "d"])
    X["z"] = np.where(rng.random(n) < 0.3, 0.0, X["z"])  # zeros
    X.loc[rng.random(n) < 0.1, "a"] = np.nan  # missing values
    X["c"] = pd.Categorical(np.array(CATS[:5])[rng.integers(0, 5, n)], categories=CATS)
    code = X["c"].cat.codes.to_numpy()
    signal = (np.nan_to_num(X["a"].to_numpy()) + 0.7 * np.sin(3 * X["b"]) + cat_weight * (code % 3)
              + zero_weight * (X["z"] == 0))
    f = (signal + rng.normal(scale=0.3, size=n)).to_numpy()
    return {"X": X, "f": f, "bin": (f > np.median(f)).astype(int),
            "multi": np.digitize(f, np.quantile(f, [0.33, 0.66])), "pos": np.exp(0.4 * f)}


def mixed_categories_frame(seed: int = 2, n: int = 300) -> tuple[pd.DataFrame, pd.Series]:
    """A numeric column, a string category with few levels (one-hot splits) and an integer-labelled one."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "a": rng.normal(size=n),
        "k": pd.Categorical(rng.choice(["x", "y", "w"], n), categories=["y", "x", "w", "v"]),
        "m": pd.Categorical(rng.choice([40, 10, 30], n), categories=[40, 30, 20, 10]),
    })
    y = X["a"] + (X["k"] == "x") * 2 - (X["k"] == "w") + 0.5 * (X["m"].astype(int) == 30)
    return X, y


def assert_library_not_imported(module: str, predicate: str, library: str) -> None:
    """In a fresh process, building the plugin manager and asking ``predicate`` does not import ``library``."""
    code = (
        "import sys; import pdpx; from pdpx.core.plugins import get_plugin_manager; get_plugin_manager(); "
        f"from {module} import {predicate}; assert not {predicate}(object()); "
        f"assert {library!r} not in sys.modules, 'imported {library}'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def by_definition(model, X: pd.DataFrame, feature, grid, *, response: str = "predict", weights=None) -> np.ndarray:
    """Partial dependence by its definition: for each grid value, a copy of X with the column set to it (keeping
    the column's dtype), the model's own ``response`` method called, the rows averaged. Shape (n_grid, n_outputs)."""
    fn = getattr(model, response)
    copies = []
    for v in grid:
        Z = X.copy()
        Z[feature] = pd.Series([v] * len(Z), index=Z.index).astype(X[feature].dtype)
        copies.append(Z)
    out = [np.average(np.asarray(p, dtype=np.float64).reshape(len(X), -1), axis=0, weights=weights)
           for p in predict_copies(fn, copies)]
    return np.array(out)
