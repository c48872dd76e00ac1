"""pdpx.ale against the definitions of Apley & Zhu (2020), written out here with loops over bins."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingClassifier, RandomForestRegressor
from sklearn.linear_model import LinearRegression

import pdpx
from pdpx.core.errors import PdpxError

# ----------------------------------------------------------------------------- references


def edges_of(x, n_bins):
    """The k / n_bins quantiles of the empirical distribution: the smallest value whose ECDF reaches k / n_bins."""
    xs = np.sort(x)
    n = xs.size
    out = []
    for k in range(n_bins + 1):
        p = k / n_bins
        i = max(int(np.ceil(p * n - 1e-9)) - 1, 0)  # the smallest i with (i + 1) / n >= p
        out.append(xs[i])
    return np.unique(out)


def in_bin(x, z, k):
    """Rows in bin k (1-based): (z[k-1], z[k]], the first bin closed on the left."""
    return (x >= z[0]) & (x <= z[1]) if k == 1 else (x > z[k - 1]) & (x <= z[k])


def ref_ale_1way(predict, X, col, n_bins, w=None):
    tz = getattr(X[col].dtype, "tz", None)  # dates with a time zone are binned as UTC dates, set in their zone
    x = X[col].dt.tz_convert(None).to_numpy() if tz is not None else X[col].to_numpy()
    x = x if x.dtype.kind == "M" else x.astype(float)  # dates are binned as dates
    at = (lambda v: pd.Timestamp(v, tz="UTC").tz_convert(tz)) if tz is not None else (lambda v: v)
    w = np.ones(len(X)) if w is None else np.asarray(w, float)
    z = edges_of(x, n_bins)
    effects, mass = [], []
    for k in range(1, len(z)):
        rows = in_bin(x, z, k)
        lo, hi = X[rows].copy(), X[rows].copy()
        lo[col], hi[col] = at(z[k - 1]), at(z[k])
        diff = predict(hi) - predict(lo)
        mass.append(w[rows].sum())
        effects.append((w[rows][:, None] * diff).sum(axis=0) / w[rows].sum())
    acc = np.vstack([np.zeros_like(effects[0]), np.cumsum(effects, axis=0)])  # (n_edges, K)
    level = sum(m * (acc[k] + acc[k + 1]) / 2 for k, m in enumerate(mass)) / sum(mass)
    return z, (acc - level).T


def ref_ale_2way(predict, X, c1, c2, n_bins):
    x1, x2 = X[c1].to_numpy(float), X[c2].to_numpy(float)
    z1, z2 = edges_of(x1, n_bins), edges_of(x2, n_bins)
    K1, K2 = len(z1) - 1, len(z2) - 1
    delta = np.full((K1, K2), np.nan)
    count = np.zeros((K1, K2))
    for a in range(1, K1 + 1):
        for b in range(1, K2 + 1):
            rows = in_bin(x1, z1, a) & in_bin(x2, z2, b)
            count[a - 1, b - 1] = rows.sum()
            if not rows.any():
                continue
            total = 0
            for da, db, sign in [(0, 0, 1), (-1, 0, -1), (0, -1, -1), (-1, -1, 1)]:
                Xc = X[rows].copy()
                Xc[c1], Xc[c2] = z1[a + da], z2[b + db]
                total = total + sign * predict(Xc)[:, 0]
            delta[a - 1, b - 1] = total.mean()
    # empty cells: the nearest cell with rows, centres scaled by the ranges, first in row-major order on ties
    centres = [((z1[a] + z1[a + 1]) / 2 / (z1[-1] - z1[0]), (z2[b] + z2[b + 1]) / 2 / (z2[-1] - z2[0]))
               for a in range(K1) for b in range(K2)]
    filled = delta.copy()
    for a in range(K1):
        for b in range(K2):
            if count[a, b] == 0:
                best, where = np.inf, None
                for i, (p, q) in enumerate(centres):
                    if count.flat[i] > 0:
                        d = (p - centres[a * K2 + b][0]) ** 2 + (q - centres[a * K2 + b][1]) ** 2
                        if d < best:
                            best, where = d, i
                filled[a, b] = delta.flat[where]
    F = np.zeros((K1 + 1, K2 + 1))
    for a in range(1, K1 + 1):
        for b in range(1, K2 + 1):
            F[a, b] = filled[:a, :b].sum()
    # remove each feature's own effect in F: the mean over rows of its local change, rows at their cell's middle
    g1 = np.zeros(K1 + 1)
    for a in range(1, K1 + 1):
        num = sum(count[a - 1, b] * ((F[a, b] - F[a - 1, b]) + (F[a, b + 1] - F[a - 1, b + 1])) / 2 for b in range(K2))
        g1[a] = g1[a - 1] + num / count[a - 1].sum()
    g2 = np.zeros(K2 + 1)
    for b in range(1, K2 + 1):
        num = sum(count[a, b - 1] * ((F[a, b] - F[a, b - 1]) + (F[a + 1, b] - F[a + 1, b - 1])) / 2 for a in range(K1))
        g2[b] = g2[b - 1] + num / count[:, b - 1].sum()
    for a in range(K1 + 1):
        for b in range(K2 + 1):
            F[a, b] -= g1[a] + g2[b]
    level = sum(count[a, b] * (F[a, b] + F[a + 1, b] + F[a, b + 1] + F[a + 1, b + 1]) / 4
                for a in range(K1) for b in range(K2)) / count.sum()
    return z1, z2, F - level, count


def ref_order(X, col):
    """Apley & Zhu's ordering: KS (numeric, 100 quantiles) / total variation (categorical) distances, 1-D MDS."""
    levels = sorted(X[col].unique())
    L = len(levels)
    D = np.zeros((L, L))
    for other in X.columns:
        if other == col:
            continue
        for a in range(L):
            for b in range(L):
                xa = X.loc[X[col] == levels[a], other]
                xb = X.loc[X[col] == levels[b], other]
                if not pd.api.types.is_numeric_dtype(X[other]):
                    pa, pb = xa.value_counts(normalize=True), xb.value_counts(normalize=True)
                    keys = set(pa.index) | set(pb.index)
                    D[a, b] += sum(abs(pa.get(k, 0) - pb.get(k, 0)) for k in keys) / 2
                else:
                    q = np.quantile(X[other], np.linspace(0, 1, 100))
                    Fa = np.array([(xa <= t).mean() for t in q])
                    Fb = np.array([(xb <= t).mean() for t in q])
                    D[a, b] += np.max(np.abs(Fa - Fb))
    C = np.eye(L) - np.ones((L, L)) / L
    vals, vecs = np.linalg.eigh(-0.5 * C @ (D ** 2) @ C)
    coord = vecs[:, -1]
    if coord[0] > coord[-1]:
        coord = -coord
    return [levels[i] for i in np.argsort(np.round(coord * np.sqrt(vals[-1]), 12), kind="stable")]


def ref_ale_categorical(predict, X, col, order):
    code = X[col].map({c: i for i, c in enumerate(order)}).to_numpy()
    L = len(order)
    counts = np.array([(code == i).sum() for i in range(L)])
    steps = []
    for i in range(L - 1):
        lower, upper = X[code == i].copy(), X[code == i + 1].copy()
        lo_up = lower.copy()
        lo_up[col] = order[i + 1]
        up_lo = upper.copy()
        up_lo[col] = order[i]
        total = (predict(lo_up) - predict(lower)).sum(axis=0) + (predict(upper) - predict(up_lo)).sum(axis=0)
        steps.append(total / (counts[i] + counts[i + 1]))
    acc = np.vstack([np.zeros_like(steps[0]), np.cumsum(steps, axis=0)])
    return (acc - (counts[:, None] * acc).sum(axis=0) / counts.sum()).T


# ----------------------------------------------------------------------------- data


@pytest.fixture(scope="module")
def correlated():
    rng = np.random.default_rng(0)
    n = 600
    x1 = rng.uniform(-1, 1, n)
    X = pd.DataFrame({"x1": x1, "x2": x1 + rng.normal(0, 0.15, n), "x3": rng.normal(size=n)})
    y = X.x1 + X.x2 ** 2 + X.x1 * X.x3 + rng.normal(0, 0.05, n)
    return X, y


def test_linear_model_is_the_line_itself(correlated):
    X, y = correlated
    model = LinearRegression().fit(X, y)
    res = pdpx.ale(model, X, "x1", grid_resolution=15)
    z = res.grid_values[0]
    np.testing.assert_allclose(z, edges_of(X.x1.to_numpy(), 15))
    # a straight line of the model's slope ...
    np.testing.assert_allclose(np.diff(res.average[0]), model.coef_[0] * np.diff(z), rtol=1e-10, atol=1e-12)
    # ... centered: the mean over rows, each at the middle of its bin, is 0
    _, ref = ref_ale_1way(lambda d: model.predict(d)[:, None], X, "x1", 15)
    np.testing.assert_allclose(res.average, ref, atol=1e-12)
    assert res.method == "ale" and res.individual is None and res.counts.sum() == len(X)


@pytest.mark.parametrize("n_bins", [5, 20])
def test_tree_model_1way_matches_definition(correlated, n_bins):
    X, y = correlated
    model = GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    z, ref = ref_ale_1way(lambda d: model.predict(d)[:, None], X, "x2", n_bins)
    res = pdpx.ale(model, X, "x2", grid_resolution=n_bins)
    np.testing.assert_allclose(res.grid_values[0], z)
    np.testing.assert_allclose(res.average, ref, atol=1e-10)


def test_classifier_every_class_and_target(correlated):
    X, y = correlated
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, labels)
    _, ref = ref_ale_1way(model.predict_proba, X, "x1", 10)
    res = pdpx.ale(model, X, "x1", grid_resolution=10)
    assert res.outputs == ["0", "1", "2"] and res.response == "predict_proba"
    np.testing.assert_allclose(res.average, ref, atol=1e-10)
    one = pdpx.ale(model, X, "x1", grid_resolution=10, target=2)
    np.testing.assert_allclose(one.average, ref[2:], atol=1e-10)
    margin = pdpx.ale(model, X, "x1", grid_resolution=10, response="decision_function")
    _, ref_m = ref_ale_1way(model.decision_function, X, "x1", 10)
    np.testing.assert_allclose(margin.average, ref_m, atol=1e-10)


def test_sample_weight_weights_every_mean(correlated):
    X, y = correlated
    model = RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0).fit(X, y)
    w = np.random.default_rng(1).uniform(0, 3, len(X))
    _, ref = ref_ale_1way(lambda d: model.predict(d)[:, None], X, "x1", 8, w=w)
    res = pdpx.ale(model, X, "x1", grid_resolution=8, sample_weight=w)
    np.testing.assert_allclose(res.average, ref, atol=1e-10)
    unweighted = pdpx.ale(model, X, "x1", grid_resolution=8)
    assert np.abs(unweighted.average - res.average).max() > 1e-4  # the weights matter ...
    same = pdpx.ale(model, X, "x1", grid_resolution=8, sample_weight=np.full(len(X), 2.5))
    np.testing.assert_allclose(same.average, unweighted.average, atol=1e-12)  # ... and equal weights do not


def test_2way_matches_definition_with_empty_cells(correlated):
    X, y = correlated
    model = GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    predict = lambda d: model.predict(d)[:, None]
    z1, z2, ref, count = ref_ale_2way(predict, X, "x1", "x2", 8)
    assert (count == 0).sum() > 10  # correlated features: most off-diagonal cells are empty
    res = pdpx.ale(model, X, ["x1", "x2"], grid_resolution=8)
    np.testing.assert_allclose(res.grid_values[0], z1)
    np.testing.assert_allclose(res.grid_values[1], z2)
    np.testing.assert_allclose(res.counts, count)
    np.testing.assert_allclose(res.average[0], ref, atol=1e-10)
    assert any("nearest cell" in n for n in res.notes)


def test_2way_known_answers():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.uniform(-1, 1, 400), "b": rng.uniform(-1, 1, 400)})
    additive = pdpx.ale(lambda d: 3 * d["a"] - d["b"] ** 2, X, ["a", "b"], grid_resolution=6)
    np.testing.assert_allclose(additive.average, 0, atol=1e-12)  # no interaction
    product = pdpx.ale(lambda d: d["a"] * d["b"], X, ["a", "b"], grid_resolution=6)
    z1, z2 = product.grid_values
    # independent uniform features: a*b's pure interaction is (a - m_a)(b - m_b) up to the bin discretisation
    _, _, ref, _ = ref_ale_2way(lambda d: (d["a"] * d["b"]).to_numpy()[:, None], X, "a", "b", 6)
    np.testing.assert_allclose(product.average[0], ref, atol=1e-12)
    shape = np.outer(z1 - X['a'].mean(), z2 - X['b'].mean())
    assert np.corrcoef(product.average[0].ravel(), shape.ravel())[0, 1] > 0.99


@pytest.fixture(scope="module")
def categorical_data():
    rng = np.random.default_rng(5)
    n = 500
    grade = rng.choice(["a", "b", "c", "d"], n)
    level = {"a": 0.0, "b": 3.0, "c": 1.0, "d": 2.0}  # the other features follow this order, not a-b-c-d
    num = np.array([level[g] for g in grade]) + rng.normal(0, 0.7, n)
    colour = np.where(rng.uniform(size=n) < np.array([level[g] for g in grade]) / 4, "red", "blue")
    X = pd.DataFrame({"grade": grade, "num": num, "colour": colour})
    return X


def _cat_model(d):
    bonus = d["grade"].map({"a": 1.0, "b": -2.0, "c": 0.5, "d": 4.0}).to_numpy()
    return bonus * (1 + 0.3 * d["num"].to_numpy()) + (d["colour"] == "red").to_numpy()


def test_categorical_order_and_values_match_definition(categorical_data):
    X = categorical_data
    order = ref_order(X, "grade")
    assert order in (["a", "c", "d", "b"], ["b", "d", "c", "a"])  # the similarity order, not the alphabet
    res = pdpx.ale(_cat_model, X, "grade")
    assert list(res.grid_values[0]) == order and res.order == "mds" and res.categorical == [True]
    predict = lambda d: _cat_model(d)[:, None]
    np.testing.assert_allclose(res.average, ref_ale_categorical(predict, X, "grade", order), atol=1e-12)
    counts = X["grade"].value_counts()
    assert abs(sum(counts[c] * v for c, v in zip(order, res.average[0]))) < 1e-9  # centered on the data


def test_categorical_given_order(categorical_data):
    X = categorical_data
    res = pdpx.ale(_cat_model, X, "grade", order=["d", "a", "b", "c"])
    assert list(res.grid_values[0]) == ["d", "a", "b", "c"] and res.order == "given"
    ref = ref_ale_categorical(lambda d: _cat_model(d)[:, None], X, "grade", ["d", "a", "b", "c"])
    np.testing.assert_allclose(res.average, ref, atol=1e-12)
    with pytest.raises(PdpxError, match="order lists 'e'"):
        pdpx.ale(_cat_model, X, "grade", order=["a", "b", "c", "e"])
    with pytest.raises(PdpxError, match=r"order leaves out \['d'\]"):
        pdpx.ale(_cat_model, X, "grade", order=["a", "b", "c"])


def test_frame_and_plot(correlated, tmp_path):
    X, y = correlated
    model = LinearRegression().fit(X, y)
    res = pdpx.ale(model, X, "x1", grid_resolution=10)
    df = res.to_frame()
    assert list(df["x_1"]) == list(res.grid_values[0]) and np.allclose(df["yhat"], res.average[0])
    assert set(df["kind"]) == {"average"} and df.attrs["method"] == "ale"
    pytest.importorskip("plotnine")
    from pdpx.outputs.plot import layer_names

    p = res.plot()
    assert layer_names(p)[:2] == ["zero", "ale_line"]
    res.save(tmp_path / "ale.png")
    two = pdpx.ale(model, X, ["x1", "x3"], grid_resolution=5)
    assert "ale_tiles" in layer_names(two.plot())


def test_refusals(correlated, categorical_data):
    X, y = correlated
    model = LinearRegression().fit(X, y)
    with pytest.raises(PdpxError, match="one or two columns"):
        pdpx.ale(model, X, ["x1", "x2", "x3"])
    with pytest.raises(PdpxError, match="second-order ALE needs two numeric features"):
        pdpx.ale(_cat_model, categorical_data, ["grade", "num"])
    with pytest.raises(PdpxError, match="order= orders the categories"):
        pdpx.ale(model, X, "x1", order=[1, 2])
    with pytest.raises(PdpxError, match="grid_resolution"):
        pdpx.ale(model, X, "x1", grid_resolution=0)
    with pytest.raises(PdpxError, match="constant"):
        pdpx.ale(model, X.assign(x3=1.0), "x3")


def test_discrete_feature_keeps_its_steps():
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"k": rng.integers(0, 5, 700), "u": rng.uniform(size=700)})
    f = lambda d: 10.0 * (d["k"] >= 2.5) + 3.0 * (d["k"] >= 0.5) + d["u"]
    res = pdpx.ale(f, X, "k", grid_resolution=20)
    assert set(res.grid_values[0]) == {0, 1, 2, 3, 4}  # the edges are observed values
    np.testing.assert_allclose(np.diff(res.average[0]), [3.0, 0.0, 10.0, 0.0], atol=1e-12)


def test_missing_values_take_no_part(correlated):
    X, y = correlated
    model = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    Xm = X.copy()
    Xm.loc[:49, "x1"] = np.nan
    f = lambda d: model.predict(d.fillna(0.0))[:, None]
    res = pdpx.ale(lambda d: f(d)[:, 0], Xm, "x1", grid_resolution=6)
    _, ref = ref_ale_1way(f, Xm.iloc[50:], "x1", 6)
    np.testing.assert_allclose(res.average, ref, atol=1e-10)
    assert any("50 row(s)" in n for n in res.notes)


def test_integer_column_marked_categorical_and_missing_categories(categorical_data):
    X = categorical_data.assign(grade=categorical_data["grade"].map({"a": 1, "b": 2, "c": 3, "d": 4}))
    f = lambda d: _cat_model(d.assign(grade=d["grade"].map({1: "a", 2: "b", 3: "c", 4: "d"})))
    res = pdpx.ale(f, X, "grade", categorical_features=["grade"], order=[4, 1, 2, 3])
    ref = ref_ale_categorical(lambda d: f(d)[:, None], X, "grade", [4, 1, 2, 3])
    np.testing.assert_allclose(res.average, ref, atol=1e-12)
    Xm = categorical_data.astype({"grade": object})
    Xm.loc[:29, "grade"] = None
    g = lambda d: _cat_model(d.fillna({"grade": "a"}))
    res = pdpx.ale(g, Xm, "grade", order=["a", "b", "c", "d"])
    ref = ref_ale_categorical(lambda d: g(d)[:, None], Xm.iloc[30:], "grade", ["a", "b", "c", "d"])
    np.testing.assert_allclose(res.average, ref, atol=1e-12)
    assert any("30 row(s)" in n for n in res.notes)


def test_predictions_in_batches_within_the_budget():
    rng = np.random.default_rng(6)
    X = pd.DataFrame({"a": rng.uniform(size=10_000), "b": rng.uniform(size=10_000)})
    sizes = []

    def f(d):
        sizes.append(len(d))
        return np.sin(3 * d["a"]) * d["b"]

    res = pdpx.ale(f, X, "a", grid_resolution=10, memory_budget="1MB")
    assert len(sizes) > 2 and max(sizes) < 10_000  # several calls, none over every row
    _, ref = ref_ale_1way(lambda d: np.asarray(np.sin(3 * d["a"]) * d["b"])[:, None], X, "a", 10)
    np.testing.assert_allclose(res.average, ref, atol=1e-12)


def test_a_cluster_x_is_refused_with_how_to_sample_it():
    dd = pytest.importorskip("dask.dataframe", reason="dask is an optional dependency")
    X = pd.DataFrame({"a": np.linspace(0, 1, 50), "b": np.linspace(1, 0, 50)})
    from pdpx.core.rows import message

    with pytest.raises(PdpxError) as err:
        pdpx.ale(lambda d: d["a"].to_numpy() * 2, dd.from_pandas(X, npartitions=2), "a")
    assert str(err.value) == message("ale", "dask", "ale") and "X.sample(frac=...).compute()" in str(err.value)


# ----------------------------------------------------------------------------- dates


def _day_numbers(d):
    d = d.copy()
    d["day"] = (d["day"] - pd.Timestamp("2020-01-01", tz=d["day"].dt.tz)) / pd.Timedelta(days=1)
    return d


@pytest.fixture(scope="module")
def dated():
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    rng = np.random.default_rng(5)
    n = 600
    day = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 730, n), unit="D")
    X = pd.DataFrame({"day": day, "x": rng.normal(size=n)})
    y = np.sin(X["day"].dt.month / 12 * 6.28) + X["x"] + rng.normal(size=n) * 0.1
    model = make_pipeline(FunctionTransformer(_day_numbers), HistGradientBoostingRegressor(max_iter=30)).fit(X, y)
    return X, y, model


def test_date_feature_matches_definition_with_dates_as_its_grid(dated, tmp_path):
    X, _, model = dated
    res = pdpx.ale(model, X, "day", grid_resolution=8)
    z, ref = ref_ale_1way(lambda d: model.predict(d)[:, None], X, "day", 8)
    assert res.grid_values[0].dtype == X["day"].dtype  # dates of the column's own type, at observed dates
    np.testing.assert_array_equal(res.grid_values[0], z)
    np.testing.assert_allclose(res.average, ref, rtol=0, atol=1e-12)
    frame = res.to_frame()
    assert frame["x_1"].dtype == X["day"].dtype
    p = res.plot()
    assert "datetime" in type(p.scales.get_scales("x")).__name__
    p.save(tmp_path / "ale_day.png", verbose=False, dpi=50)
    assert (tmp_path / "ale_day.png").stat().st_size > 0


def test_date_feature_with_a_time_zone_and_missing_dates(dated):
    from sklearn.base import clone

    X, y, model = dated
    Xz = X.assign(day=X["day"].dt.tz_localize("Europe/Paris"))
    modelz = clone(model).fit(Xz, y)
    Xz.loc[:9, "day"] = pd.NaT  # rows without a date take no part
    res = pdpx.ale(modelz, Xz, "day", grid_resolution=5)
    z, ref = ref_ale_1way(lambda d: modelz.predict(d)[:, None], Xz.dropna(), "day", 5)
    assert str(res.grid_values[0].dtype) == "datetime64[us, Europe/Paris]"
    np.testing.assert_array_equal(res.grid_values[0].tz_convert(None).to_numpy(), z)
    np.testing.assert_allclose(res.average, ref, rtol=0, atol=1e-12)
    assert any("10 row(s)" in n for n in res.notes)


def test_a_date_feature_in_second_order_ale_is_refused_saying_what_works(dated):
    X, _, model = dated
    with pytest.raises(PdpxError, match=r"second-order ALE takes two numeric features.*pdpx.ale\(model, X, 'day'\)"):
        pdpx.ale(model, X, ["day", "x"])


# ----------------------------------------------------------------------------- batch-dependent models


def _standardise_within_the_call(Z):
    """A user's step that depends on the other rows of the call (it standardises within predict)."""
    Z = np.asarray(Z, dtype=float)
    return (Z - Z.mean(axis=0)) / (Z.std(axis=0) + 1.0)


def test_a_model_that_reads_the_whole_call_is_called_once_per_bin_edge(correlated):
    """Stacking every row at its own edge into one call would change such a model's predictions: ALE then calls
    it once per bin edge with that bin's rows, which is the definition written per bin, says so and warns."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = correlated
    model = make_pipeline(FunctionTransformer(_standardise_within_the_call),
                          GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0)).fit(X, y)
    with pytest.warns(pdpx.StackingWarning):
        res = pdpx.ale(model, X, "x1", grid_resolution=6)
    _, ref = ref_ale_1way(lambda d: model.predict(d)[:, None], X, "x1", 6)
    np.testing.assert_allclose(res.average, ref, rtol=0, atol=1e-12)
    assert any("once per point" in n and "_standardise_within_the_call" in n for n in res.notes), res.notes
    rowwise = make_pipeline(FunctionTransformer(np.tanh), GradientBoostingRegressor(n_estimators=20, random_state=0))
    rowwise.fit(X, y)
    assert not any("once per point" in n for n in pdpx.ale(rowwise, X, "x1", grid_resolution=6).notes)
