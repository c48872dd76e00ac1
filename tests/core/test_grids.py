"""core.grids: each feature's grid built once from the full data, and shared by the sessions of by= groups.

Each group's result is computed on the full data's grid object itself (no custom values passed down, nothing
patched afterwards) and equals the definition on the group's rows: set the column to the grid value (keeping its
dtype), call the model's own predict, average.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from stacked import predict_copies

import pdpx
from pdpx.core.session import Session


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(3)
    n = 300
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(-2, 2, size=n),
                      "g": pd.Categorical(rng.choice(["p", "q"], n))})
    X.loc[rng.choice(n, 25, replace=False), "a"] = np.nan
    y = np.nan_to_num(X["a"].to_numpy(), nan=1.5) * (1 + (X["g"] == "q")) + X["b"] ** 2
    X.loc[X["g"] == "p", "a"] = X.loc[X["g"] == "p", "a"].fillna(0.0)  # group p holds no missing a
    X.loc[X["g"] == "p", "b"] = X.loc[X["g"] == "p", "b"].clip(-0.5, 0.5)  # and a narrow range of b
    model = HistGradientBoostingRegressor(max_iter=30, random_state=0, categorical_features="from_dtype").fit(X, y)
    return model, X


def definition(model, rows: pd.DataFrame, feature: str, grid) -> np.ndarray:
    copies = []
    for v in grid:
        Z = rows.copy()
        Z[feature] = pd.Series(np.full(len(Z), v), index=Z.index, dtype=rows[feature].dtype)
        copies.append(Z)
    return np.asarray([p.mean() for p in predict_copies(model.predict, copies)])


def test_groups_share_the_full_data_grids_object(fitted):
    model, X = fitted
    main = Session(model, X, grid_resolution=6)
    feats = main.resolve_features(["a", "b"])
    full = [main.grid_for(j) for j in feats]
    assert np.isnan(full[0][-1])  # the full data holds missing a: its grid ends with the missing point
    for lab in ("p", "q"):
        rows = np.flatnonzero((X["g"] == lab).to_numpy())
        group = Session.of(main.inputs.group(rows, None), main.grids)
        assert group.grids is main.grids and group.n_rows == len(rows)
        for j, grid in zip(feats, full):
            r = group.compute([j])
            assert r.grid_values[0] is grid  # the full data's grid itself, not one rebuilt from the group
            name = main.names[j]
            np.testing.assert_allclose(r.average[0], definition(model, X.iloc[rows], name, grid), rtol=1e-10)


def test_by_groups_get_the_full_grid_where_their_own_would_differ(fitted):
    model, X = fitted
    res = pdpx.partial_dependence(model, X, "a", by="g", grid_resolution=6, kind="both")
    alone = pdpx.partial_dependence(model, X, "a", grid_resolution=6)
    p_alone = pdpx.partial_dependence(model, X[X["g"] == "p"], "a", grid_resolution=6)
    assert len(p_alone.grid_values[0]) != len(alone.grid_values[0])  # p alone has no missing point
    for lab in ("p", "q"):
        r = res[lab]
        np.testing.assert_array_equal(r.grid_values[0], alone.grid_values[0])
        rows = np.flatnonzero((X["g"] == lab).to_numpy())
        np.testing.assert_allclose(r.average[0], definition(model, X.iloc[rows], "a", r.grid_values[0]),
                                   rtol=1e-10)
        np.testing.assert_array_equal(r.ice_rows, rows)  # ICE rows: positions in the full X
        assert r.background is not None and len(r.background) == len(X)


def test_by_groups_on_thresholds_count_their_rows_on_the_full_steps(fitted):
    model, X = fitted
    res = pdpx.partial_dependence(model, X, "b", by="g", grid="thresholds")
    alone = pdpx.partial_dependence(model, X, "b", grid="thresholds")
    for lab in ("p", "q"):
        r = res[lab]
        np.testing.assert_array_equal(r.grid_values[0], alone.grid_values[0])
        assert r.steps == alone.steps and r.steps
        rows = np.flatnonzero((X["g"] == lab).to_numpy())
        np.testing.assert_allclose(r.average[0], definition(model, X.iloc[rows], "b", r.grid_values[0]),
                                   rtol=1e-10)
        # the group's own rows, counted on the full data's steps: every row in exactly one step
        assert r.support_frame()["support"].sum() == pytest.approx(len(rows))


@pytest.mark.filterwarnings("ignore::pdpx.ExtrapolationWarning")  # a 2-way grid of correlated columns
def test_by_groups_of_a_pair_with_the_missing_point_on_one_feature_only(fitted):
    """Each feature keeps the full data's missing-point decision (refused before grids were shared)."""
    model, X = fitted
    res = pdpx.partial_dependence(model, X, ["a", "b"], by="g", grid_resolution=3)
    ga, gb = res.grid_values
    assert np.isnan(ga[-1]) and not np.isnan(gb).any()
    for lab in ("p", "q"):
        rows = X.iloc[np.flatnonzero((X["g"] == lab).to_numpy())]
        want = np.empty((len(ga), len(gb)))
        for i, va in enumerate(ga):
            for k, vb in enumerate(gb):
                Z = rows.copy()
                Z["a"] = pd.Series(np.full(len(Z), va), index=Z.index, dtype=rows["a"].dtype)
                Z["b"] = pd.Series(np.full(len(Z), vb), index=Z.index, dtype=rows["b"].dtype)
                want[i, k] = model.predict(Z).mean()
        np.testing.assert_allclose(res[lab].average[0], want, rtol=1e-10)
