"""The ranger and gbm tree readers and their level encoder, on small forests written by hand.

Each forest is the plain data the R package sends (``r/pdpx/R/ranger.R``, ``gbm.R``);
the expected predictions are worked out by hand from the trees below, following the
rules the modules document (ranger: ``x <= value`` left, a partition bitmask sends
level k right when bit k-1 is set; gbm: ``x < value`` left, NaN and unseen levels to
the missing child, ``init_f`` plus the leaves). ``exact`` is then compared with
brute force through a predict function written plainly from the same trees.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.adapters.gbm import GbmAdapter
from pdpx.adapters.gbm_trees import gbm_ensemble
from pdpx.adapters.ranger import RangerAdapter
from pdpx.adapters.ranger_trees import ranger_ensemble, ranger_outputs
from pdpx.adapters.rlevels import LevelEncoder
from pdpx.core.errors import PdpxError
from pdpx.core.ir import MalformedTreeError

LEVELS = ["a", "b", "c"]


# ---------------------------------------------------------------- ranger
def ranger_regression(is_ordered=(True, False)) -> dict:
    """Tree 1: x0 <= 0.5 -> 1, else 2. Tree 2 on factor x1: partition mask 2 (level b right) -> 10 / 20,
    or, when x1 is ordered, x1 <= 2 (levels a, b) -> 10, else 20."""
    return {
        "treetype": "Regression",
        "n_nodes": [3, 3],
        "split_var": [0, 0, 0, 1, 0, 0],
        "split_value": [0.5, 1.0, 2.0, 2.0, 10.0, 20.0],
        "left": [1, 0, 0, 1, 0, 0],
        "right": [2, 0, 0, 2, 0, 0],
        "is_ordered": list(is_ordered),
        "levels": [None, LEVELS],
        "feature_names": ["x0", "x1"],
    }


def ranger_frame() -> pd.DataFrame:
    return pd.DataFrame({"x0": [0.5, 0.7, 0.2, 0.9], "x1": pd.Categorical(["b", "a", "c", "c"], categories=LEVELS)})


def test_ranger_partition_split_routes_by_bitmask():
    ens = ranger_ensemble(ranger_regression())
    X = np.array([[0.5, 1.0], [0.7, 0.0], [0.2, 2.0]])  # x1 as 0-based level positions: b, a, c
    # row 1: 0.5 <= 0.5 left (1), b right (20); row 2: 2 and a left (10); row 3: 1 and c left (10)
    np.testing.assert_allclose(ens.predict(X)[:, 0], [(1 + 20) / 2, (2 + 10) / 2, (1 + 10) / 2])


def test_ranger_ordered_factor_split_compares_level_positions():
    ens = ranger_ensemble(ranger_regression(is_ordered=(True, True)))
    X = np.array([[0.0, 0.0], [0.0, 1.0], [0.0, 2.0]])  # a, b go left (position <= 2), c right
    np.testing.assert_allclose(ens.predict(X)[:, 0], [(1 + 10) / 2, (1 + 10) / 2, (1 + 20) / 2])


def test_ranger_probability_forest_reorders_leaf_fractions_to_response_levels():
    spec = {
        "treetype": "Probability estimation", "response_levels": ["no", "yes"], "class_values": [2, 1],
        "n_nodes": [3], "split_var": [0, 0, 0], "split_value": [0.5, 0.0, 0.0], "left": [1, 0, 0],
        "right": [2, 0, 0], "is_ordered": [True], "levels": [None],
        # per leaf, in class_values order (yes, no)
        "class_counts": [0.8, 0.2, 0.1, 0.9],
    }
    assert ranger_outputs(spec) == ["no", "yes"]
    got = ranger_ensemble(spec).predict(np.array([[0.1], [0.6]]))
    np.testing.assert_allclose(got, [[0.2, 0.8], [0.9, 0.1]])


def test_ranger_classification_forest_gives_vote_fractions():
    spec = {
        "treetype": "Classification", "response_levels": ["no", "yes"], "class_values": [1, 2],
        "n_nodes": [3, 1], "split_var": [0, 0, 0, 0], "split_value": [0.5, 1.0, 2.0, 2.0],
        "left": [1, 0, 0, 0], "right": [2, 0, 0, 0], "is_ordered": [True], "levels": [None],
    }
    # tree 1 votes "no" (code 1) left of 0.5 and "yes" right; tree 2 is a single leaf voting "yes"
    got = ranger_ensemble(spec).predict(np.array([[0.1], [0.6]]))
    np.testing.assert_allclose(got, [[0.5, 0.5], [0.0, 1.0]])


def test_ranger_survival_forest_averages_leaf_hazards_at_the_step_times():
    spec = {
        "treetype": "Survival", "death_times": [1.0, 3.0, 7.0],
        "n_nodes": [3, 1], "split_var": [0, 0, 0, 0], "split_value": [0.5, 0.0, 0.0, 0.0],
        "left": [1, 0, 0, 0], "right": [2, 0, 0, 0], "is_ordered": [True], "levels": [None],
        # per leaf (tree 1's two leaves, tree 2's one), the cumulative hazard at each death time
        "chf": [0.1, 0.2, 0.4, 0.0, 0.5, 1.0, 0.3, 0.3, 0.6],
    }
    # times 1 (a death time), 5 (reads 3's column) and 7 (the last)
    got = ranger_ensemble(spec, times=[1.0, 5.0, 7.0]).predict(np.array([[0.1], [0.6]]))
    np.testing.assert_allclose(got, [[(0.1 + 0.3) / 2, (0.2 + 0.3) / 2, (0.4 + 0.6) / 2],
                                     [(0.0 + 0.3) / 2, (0.5 + 0.3) / 2, (1.0 + 0.6) / 2]])
    # the survival: exp(-x) of each row's averaged hazard (ranger's $survival)
    surv = ranger_ensemble(spec, times=[1.0, 5.0, 7.0], survival=True)
    np.testing.assert_allclose(surv.apply_link(surv.predict_raw(np.array([[0.1], [0.6]]))), np.exp(-got))
    with pytest.raises(PdpxError, match="9 values; expected 3 leaves x 2"):
        ranger_ensemble({**spec, "death_times": [1.0, 3.0]}, times=[1.0])


@pytest.mark.parametrize("change, error, message", [
    ({"treetype": "Quantile regression"}, PdpxError, "not supported"),
    ({"treetype": "Survival", "death_times": [1.0, 2.0], "chf": []}, PdpxError, "chosen times"),
    ({"n_nodes": []}, PdpxError, "no trees"),
    ({"n_nodes": [3, 2]}, PdpxError, "disagree with n_nodes"),
    ({"split_var": [5, 0, 0, 1, 0, 0]}, MalformedTreeError, "out of range"),
    ({"split_value": [0.5, 1.0, 2.0, -1.0, 10.0, 20.0]}, MalformedTreeError, "bitmask"),
])
def test_ranger_reader_refuses_bad_forests(change, error, message):
    with pytest.raises(error, match=message):
        ranger_ensemble({**ranger_regression(), **change})


def test_ranger_classification_leaf_without_class_code_is_refused():
    spec = {"treetype": "Classification", "response_levels": ["no", "yes"], "class_values": [1, 2],
            "n_nodes": [1], "split_var": [0], "split_value": [3.0], "left": [0], "right": [0],
            "is_ordered": [True], "levels": [None]}
    with pytest.raises(MalformedTreeError, match="class code"):
        ranger_ensemble(spec)


def ranger_by_hand(X: pd.DataFrame) -> np.ndarray:
    t1 = np.where(X["x0"].to_numpy() <= 0.5, 1.0, 2.0)
    t2 = np.where(X["x1"].astype(str).to_numpy() == "b", 20.0, 10.0)
    return ((t1 + t2) / 2)[:, None]


def test_ranger_exact_equals_brute_through_a_plain_predict():
    adapter = RangerAdapter(ranger_regression(), ranger_by_hand)
    X = ranger_frame()
    for feature in ("x0", "x1"):
        ex = pdpx.partial_dependence(adapter, X, feature, method="exact", kind="both")
        br = pdpx.partial_dependence(adapter, X, feature, method="brute", kind="both")
        np.testing.assert_allclose(ex.average, br.average, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ex.individual, br.individual, rtol=0, atol=1e-12)
    grid = pdpx.partial_dependence(adapter, X, "x0", custom_values={"x0": [0.5, 0.6]}, method="exact")
    # at 0.5 tree 1 gives 1 for every row, at 0.6 it gives 2; tree 2 averages (20 + 10 + 10 + 10) / 4
    np.testing.assert_allclose(grid.average[0], [(1 + 12.5) / 2, (2 + 12.5) / 2])


# ---------------------------------------------------------------- gbm
def gbm_spec(distribution="gaussian") -> dict:
    """Tree 1: x0 < 0.5 -> -1, else 1, missing 0.25. Tree 2 on factor x1 (c.splits[[1]] = a left,
    b right, c unseen -> missing): 0.1 / 0.2 / 0.3. init_f 0.5."""
    return {
        "distribution": distribution,
        "n_nodes": [4, 4],
        "split_var": [0, -1, -1, -1, 1, -1, -1, -1],
        "split_code": [0.5, -1.0, 1.0, 0.25, 0.0, 0.1, 0.2, 0.3],
        "left": [1, -1, -1, -1, 1, -1, -1, -1],
        "right": [2, -1, -1, -1, 2, -1, -1, -1],
        "missing": [3, -1, -1, -1, 3, -1, -1, -1],
        "weight": [10.0, 4.0, 5.0, 1.0, 10.0, 3.0, 6.0, 1.0],
        "c_splits": [-1, 1, 0], "c_split_len": [3],
        "var_type": [0, 3], "init_f": [0.5],
        "feature_names": ["x0", "x1"], "levels": [None, LEVELS],
    }


def test_gbm_routes_numbers_factors_and_missing_values():
    ens = gbm_spec()
    X = np.array([[0.2, 0.0], [0.5, 1.0], [np.nan, 2.0], [np.nan, np.nan]])
    # -1 + 0.1; 1 + 0.2 (0.5 is not < 0.5); missing 0.25 + unseen level 0.3; both missing
    want = 0.5 + np.array([-1 + 0.1, 1 + 0.2, 0.25 + 0.3, 0.25 + 0.3])
    np.testing.assert_allclose(gbm_ensemble(ens).predict(X)[:, 0], want)


@pytest.mark.parametrize("distribution, inverse", [
    ("bernoulli", lambda z: 1 / (1 + math.exp(-z))), ("poisson", math.exp), ("laplace", lambda z: z)])
def test_gbm_response_scale_applies_the_inverse_link(distribution, inverse):
    X = np.array([[0.2, 0.0], [0.7, 1.0]])
    link = np.array([0.5 - 1 + 0.1, 0.5 + 1 + 0.2])
    got = gbm_ensemble(gbm_spec(distribution)).predict(X)[:, 0]
    np.testing.assert_allclose(got, [inverse(z) for z in link], rtol=1e-12)
    raw = gbm_ensemble(gbm_spec(distribution), response_scale=False).predict(X)[:, 0]
    np.testing.assert_allclose(raw, link)


def test_gbm_without_na_inputs_still_sends_unseen_levels_to_the_missing_child():
    ens = gbm_ensemble(gbm_spec(), na_inputs=[])
    np.testing.assert_allclose(ens.predict(np.array([[0.7, 2.0]]))[:, 0], [0.5 + 1 + 0.3])


@pytest.mark.parametrize("change, error, message", [
    ({"distribution": "huberized"}, PdpxError, "not read"),
    ({"n_nodes": []}, PdpxError, "no trees"),
    ({"weight": [1.0]}, PdpxError, "disagree with n_nodes"),
    ({"split_var": [7, -1, -1, -1, 1, -1, -1, -1]}, MalformedTreeError, "out of range"),
    ({"split_code": [0.5, -1.0, 1.0, 0.25, 4.0, 0.1, 0.2, 0.3]}, MalformedTreeError, "outside c.splits"),
])
def test_gbm_reader_refuses_bad_models(change, error, message):
    with pytest.raises(error, match=message):
        gbm_ensemble({**gbm_spec(), **change})


def gbm_by_hand(X: pd.DataFrame) -> np.ndarray:
    x0 = X["x0"].to_numpy(dtype=float)
    x1 = X["x1"].astype(object).to_numpy()
    t1 = np.where(np.isnan(x0), 0.25, np.where(x0 < 0.5, -1.0, 1.0))
    t2 = np.array([0.1 if v == "a" else 0.2 if v == "b" else 0.3 for v in x1])
    f = 0.5 + t1 + t2
    return np.column_stack([f, f])  # response and link (gaussian: the same)


def test_gbm_exact_equals_brute_through_a_plain_predict():
    spec = {**gbm_spec(), "na_inputs": [0]}
    adapter = GbmAdapter(spec, gbm_by_hand)
    X = pd.DataFrame({"x0": [0.2, np.nan, 0.8, 0.4], "x1": pd.Categorical(["a", "b", "c", "a"], categories=LEVELS)})
    for feature in ("x0", "x1"):
        ex = pdpx.partial_dependence(adapter, X, feature, method="exact", kind="both")
        br = pdpx.partial_dependence(adapter, X, feature, method="brute", kind="both")
        np.testing.assert_allclose(ex.average, br.average, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ex.individual, br.individual, rtol=0, atol=1e-12)


def test_gbm_adapter_refuses_missing_values_outside_na_inputs():
    adapter = GbmAdapter({**gbm_spec(), "na_inputs": []}, gbm_by_hand)
    X = pd.DataFrame({"x0": [0.2, np.nan], "x1": pd.Categorical(["a", "b"], categories=LEVELS)})
    with pytest.raises(PdpxError, match="'x0' has missing values"):
        pdpx.partial_dependence(adapter, X, "x1", method="exact")


# ---------------------------------------------------------------- the level encoder
def test_level_encoder_gives_level_positions_and_numbers():
    enc = LevelEncoder(["x0", "x1"], [None, LEVELS], "ranger", allow_missing=False)
    X = pd.DataFrame({"x0": [1.5, 2.5, 3.5], "x1": pd.Categorical(["c", "a", "b"], categories=["b", "c", "a"])})
    # positions in the model's levels, whatever order the frame's categories are in
    np.testing.assert_array_equal(enc.encode(X), [[1.5, 2.0], [2.5, 0.0], [3.5, 1.0]])
    text = pd.DataFrame({"x0": [1, 2], "x1": ["b", "a"]})  # integers and plain strings too
    np.testing.assert_array_equal(enc.encode(text), [[1.0, 1.0], [2.0, 0.0]])
    np.testing.assert_array_equal(enc.encode_values(1, ["a", "c"]), [0.0, 2.0])


def test_level_encoder_reads_unknown_levels_as_missing_when_asked():
    enc = LevelEncoder(["x1"], [LEVELS], "gbm", allow_missing=True, unknown_as_missing=True)
    got = enc.encode(pd.DataFrame({"x1": ["a", "z", None]}))
    np.testing.assert_array_equal(got[:, 0], [0.0, np.nan, np.nan])


@pytest.mark.parametrize("X, message", [
    (pd.DataFrame({"x0": [1.0, np.nan], "x1": ["a", "b"]}), "'x0' has 1 missing value"),
    (pd.DataFrame({"x0": [1.0, 2.0], "x1": ["a", None]}), "'x1' has 1 missing value"),
    (pd.DataFrame({"x0": [1.0, 2.0], "x1": ["a", "z"]}), r"not levels of the factor.*\['z'\]"),
    (pd.DataFrame({"x0": ["1", "2"], "x1": ["a", "b"]}), "'x0' is numeric in the ranger model"),
    (pd.DataFrame({"x0": [1.0, 2.0]}), "X has 1 columns; the ranger model has 2 inputs"),
])
def test_level_encoder_refuses_bad_columns(X, message):
    enc = LevelEncoder(["x0", "x1"], [None, LEVELS], "ranger", allow_missing=False)
    with pytest.raises(PdpxError, match=message):
        enc.encode(X)


def test_level_encoder_needs_one_level_list_per_input():
    with pytest.raises(PdpxError, match="1 level lists for 2 gbm inputs"):
        LevelEncoder(["x0", "x1"], [None], "gbm", allow_missing=True)
