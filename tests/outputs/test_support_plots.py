"""``unsupported="shade" | "drop" | "show"``: the layers and their data, checked against ``res.unsupported``.

Brute force on a plain function (no JIT, no model library) over data with a gap, a
near-copy pair of features and a categorical column.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine")

import pdpx  # noqa: E402
from pdpx.core.errors import ExtrapolationWarning, PdpxError  # noqa: E402
from pdpx.core.support import intervals  # noqa: E402
from pdpx.outputs import plot as P  # noqa: E402


def f(Z):
    num = Z.select_dtypes("number").fillna(0)
    return np.asarray(num.sum(axis=1) + (Z["c"] == "v").to_numpy() * num["x"], dtype=float)


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    n = 300
    x = np.concatenate([rng.uniform(0, 3, n // 2), rng.uniform(7, 10, n - n // 2)])  # no rows in (3, 7)
    return pd.DataFrame({
        "x": x,
        "z": rng.normal(size=n),
        "c": pd.Categorical(np.where(x > 5, "v", rng.choice(["u", "v"], size=n))),  # "u" only below 5
    })


def pd_(X, features, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        return pdpx.partial_dependence(f, X, features, method="brute", **kw)


def test_shade_bands_cover_exactly_the_unsupported_points(X):
    res = pd_(X, "x", grid_resolution=21, percentiles=(0, 1), kind="both")
    bad = res.unsupported
    assert bad.any() and not bad.all()
    p = res.plot()  # shade is the default
    assert P.layer_names(p)[0] == "unsupported"
    bands = P.layer_data(p, "unsupported")
    g = res.grid_values[0]
    lo, hi = intervals(g)
    # one band: from the first unsupported point's interval to the last one's
    assert len(bands) == 1
    assert bands["xmin"].iloc[0] == pytest.approx(lo[bad].min())
    assert bands["xmax"].iloc[0] == pytest.approx(hi[bad].max())
    # every grid point under a band is unsupported, every other one is not
    under = (g >= bands["xmin"].iloc[0]) & (g <= bands["xmax"].iloc[0])
    assert under.tolist() == bad.tolist()
    # the curves are drawn whole
    assert len(P.layer_data(p, "pd_line")) == len(g)
    assert "grey: no rows of the data within a grid step" in p.labels.caption


def test_drop_leaves_the_points_out_and_breaks_the_curves(X):
    res = pd_(X, "x", grid_resolution=21, percentiles=(0, 1), kind="both")
    bad = res.unsupported
    p = res.plot(unsupported="drop", n_ice=5)
    assert "unsupported" not in P.layer_names(p)
    line = P.layer_data(p, "pd_line")
    np.testing.assert_allclose(np.sort(line["x"].to_numpy()), res.grid_values[0][~bad])
    assert line["group"].nunique() == 2  # one piece each side of the gap
    ice = P.layer_data(p, "ice")
    assert len(ice) == 5 * (~bad).sum() and ice["group"].nunique() == 10


def test_show_draws_as_before(X):
    res = pd_(X, "x", grid_resolution=21, percentiles=(0, 1))
    p = res.plot(unsupported="show")
    assert P.layer_names(p) == ["pd_line", "pd_points", "rug"]
    assert len(P.layer_data(p, "pd_line")) == 21


def test_nothing_drawn_when_everything_is_supported():
    rng = np.random.default_rng(1)
    Xs = pd.DataFrame({"x": rng.uniform(0, 1, 500), "z": rng.uniform(0, 1, 500), "c": pd.Categorical(
        rng.choice(["u", "v"], 500))})
    res = pd_(Xs, "x", grid_resolution=20)
    assert not res.unsupported.any()
    assert P.layer_names(res.plot()) == P.layer_names(res.plot(unsupported="show"))
    two = pd_(Xs, ["x", "z"], grid_resolution=8)
    assert not two.unsupported.any()
    p = two.plot()
    assert P.layer_names(p) == ["tiles", "contours", "rug"] and p.labels.caption is None


def test_a_category_without_rows_is_shaded_one_slot_wide(X):
    Xm = X.assign(c=pd.Categorical(X["c"], categories=["u", "v", "w"]))
    res = pd_(Xm, "c", custom_values={"c": ["u", "v", "w"]})
    np.testing.assert_array_equal(res.support, [(X["c"] == "u").sum(), (X["c"] == "v").sum(), 0])
    bands = P.layer_data(res.plot(), "unsupported")
    assert bands[["xmin", "xmax"]].to_numpy().tolist() == [[1.5, 2.5]]


def test_a_missing_point_without_rows_is_shaded_one_step_wide():
    rng = np.random.default_rng(3)
    Xs = pd.DataFrame({"x": rng.uniform(0, 1, 300), "z": rng.uniform(0, 1, 300), "c": pd.Categorical(["u"] * 300)})
    res = pd_(Xs, "x", grid_resolution=11, percentiles=(0, 1), include_missing=True)
    assert np.isnan(res.grid_values[0][-1]) and res.support[-1] == 0
    assert res.unsupported.tolist() == [False] * 11 + [True]
    p = res.plot()
    bands = P.layer_data(p, "unsupported")
    miss = P.layer_data(p, "pd_categories")["x"].iloc[0]  # where the missing point is drawn
    step = np.diff(res.grid_values[0][:2])[0]
    assert bands["xmin"].iloc[0] == pytest.approx(miss - step / 2)
    assert bands["xmax"].iloc[0] == pytest.approx(miss + step / 2)


def test_two_way_numeric_shade_and_drop(X):
    rng = np.random.default_rng(2)
    a = rng.normal(size=400)
    Xc = pd.DataFrame({"x": a, "z": a + rng.normal(scale=0.1, size=400), "c": pd.Categorical(["u"] * 400)})
    res = pd_(Xc, ["x", "z"], grid_resolution=10)
    bad = res.unsupported.reshape(-1)
    assert bad.sum() > 30
    p = res.plot()
    assert P.layer_names(p) == ["tiles", "contours", "unsupported", "rug"]
    grey = P.layer_data(p, "unsupported")
    assert len(grey) == bad.sum()
    assert "convex hull" in p.labels.caption
    drop = res.plot(unsupported="drop")
    assert len(P.layer_data(drop, "tiles")) == (~bad).sum()
    assert len(P.layer_data(res.plot(unsupported="show"), "tiles")) == 100


def test_numeric_by_category_lines(X):
    res = pd_(X, ["x", "c"], grid_resolution=21, percentiles=(0, 1))
    bad = res.unsupported  # (x, c): the gap for both levels, and "u" above 5
    assert bad[:, 0].sum() > bad[:, 1].sum()
    p = res.plot()
    assert P.layer_names(p)[:2] == ["unsupported", "lines"]
    assert len(P.layer_data(p, "unsupported")) == bad.size  # the dotted curves: every point
    assert len(P.layer_data(p, "lines")) == (~bad).sum()  # the solid ones: supported points
    d = res.plot(unsupported="drop")
    assert "unsupported" not in P.layer_names(d)
    assert len(P.layer_data(d, "points")) == (~bad).sum()


def test_categorical_tiles(X):
    Xc = X.assign(d=pd.Categorical(np.where(X["x"] > 5, "hi", "lo")))
    res = pd_(Xc, ["c", "d"])
    assert res.unsupported.sum() == 1  # ("u", "hi") never occurs
    p = res.plot()
    assert P.layer_names(p) == ["tiles", "unsupported", "values"]
    assert len(P.layer_data(res.plot(unsupported="drop"), "tiles")) == 3


def test_overlay_by_group(X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        st = pdpx.partial_dependence(f, X, "x", by="c", method="brute", grid_resolution=21, percentiles=(0, 1))
    bad = np.concatenate([r.unsupported for r in st.results])
    p = st.plot()
    assert P.layer_names(p)[0] == "unsupported"
    assert len(P.layer_data(p, "pd_line")) == (~bad).sum()
    assert len(P.layer_data(st.plot(unsupported="drop"), "pd_line")) == (~bad).sum()
    assert "unsupported" not in P.layer_names(st.plot(unsupported="drop"))
    assert len(P.layer_data(st.plot(unsupported="show"), "pd_line")) == bad.size


def test_bad_value_is_a_clear_error(X):
    res = pd_(X, "x", grid_resolution=5)
    with pytest.raises(PdpxError, match=r"unsupported.*'shade', 'drop', 'show'.*'grey'"):
        res.plot(unsupported="grey")
    with pytest.raises(PdpxError, match="unsupported"):
        res.save("/tmp/never.png", unsupported=True)


def test_save_draws_every_mode(X, tmp_path):
    res = pd_(X, ["x", "c"], grid_resolution=15)
    for mode in ("shade", "drop", "show"):
        out = res.save(tmp_path / f"{mode}.png", unsupported=mode, dpi=40)
        assert out.stat().st_size > 1000
