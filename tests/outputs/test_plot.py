"""plotnine figures: the data of every layer, labels, facets, and rendering to files.

Small models on bundled data, ``method="brute"`` (no JIT warm-up), small grids.
"""

import copy
import struct
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine")
sklearn = pytest.importorskip("sklearn")

import pdpx  # noqa: E402
from pdpx.core.errors import ExtrapolationWarning, PdpxError  # noqa: E402
from pdpx.outputs import plot as P  # noqa: E402
from pdpx.outputs import plot_twoway  # noqa: E402

GRID = 12
OPTS = dict(method="brute", grid_resolution=GRID)


# ----------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def diabetes():
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:150], y.iloc[:150]
    return GradientBoostingRegressor(n_estimators=20, max_depth=2, random_state=0).fit(X, y), X


@pytest.fixture(scope="module")
def penguins():
    """Regression of body mass on numeric and categorical (pandas category) features."""
    palmerpenguins = pytest.importorskip("palmerpenguins")
    from sklearn.ensemble import HistGradientBoostingRegressor

    df = palmerpenguins.load_penguins().dropna().reset_index(drop=True).iloc[::3]
    X = df[["species", "sex", "flipper_length_mm", "bill_depth_mm"]].copy()
    for c in ("species", "sex"):
        X[c] = X[c].astype("category")
    model = HistGradientBoostingRegressor(max_iter=15, categorical_features="from_dtype", random_state=0)
    return model.fit(X, df["body_mass_g"]), X


@pytest.fixture(scope="module")
def iris():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    data = load_iris(as_frame=True)
    y = data.target_names[data.target]
    return LogisticRegression(max_iter=500).fit(data.data, y), data.data


def built(p):
    b = copy.deepcopy(p)
    b._build()
    return b


def panel_x(p, i=0):
    """(breaks, labels) of the x axis of panel i."""
    view = built(p).layout.panel_params[i].x
    return list(view.breaks), list(view.labels)


# -------------------------------------------------------------- 1-way numeric
def test_numeric_pd_line_points_and_rug(diabetes):
    model, X = diabetes
    res = pdpx.partial_dependence(model, X, "bmi", **OPTS)
    p = res.plot()
    assert P.layer_names(p) == ["pd_line", "pd_points", "rug"]
    line = P.layer_data(p, "pd_line")
    np.testing.assert_allclose(line["x"], res.grid_values[0])
    np.testing.assert_allclose(line["y"], res.average[0])
    np.testing.assert_allclose(P.layer_data(p, "pd_points")["y"], res.average[0])
    rug = P.layer_data(p, "rug")
    g = res.grid_values[0]
    inside = X["bmi"][(X["bmi"] >= g.min()) & (X["bmi"] <= g.max())]
    assert len(rug) == len(inside)
    assert set(np.round(rug["x"], 12)) == set(np.round(inside, 12))
    labels = built(p).labels
    assert labels.x == "bmi"
    assert labels.y == "partial dependence (prediction)"
    assert P.layer_names(res.plot(rug=False, points=False)) == ["pd_line"]


def test_ice_is_a_seeded_subsample_under_the_pd_line(diabetes):
    model, X = diabetes
    res = pdpx.partial_dependence(model, X, "bmi", kind="both", **OPTS)
    p = res.plot(n_ice=10, seed=3)
    assert P.layer_names(p) == ["ice", "pd_line", "pd_points", "rug"]  # PD drawn after (on top of) ICE
    ice = P.layer_data(p, "ice")
    assert ice["group"].nunique() == 10
    assert len(ice) == 10 * GRID
    assert 0 < ice["alpha"].iloc[0] < 1
    # the curves are the ICE of the sampled rows, in X's row numbers
    src = P.layer_data(p, 0).sort_values(["group", "x"])
    rows = np.sort(np.random.default_rng(3).choice(len(X), 10, replace=False))
    np.testing.assert_allclose(src["y"].to_numpy().reshape(10, GRID), res.individual[0, rows])
    assert "10 of 150 rows" in built(p).labels.caption
    # same seed, same rows; another seed, other rows
    same = P.layer_data(res.plot(n_ice=10, seed=3), "ice")
    other = P.layer_data(res.plot(n_ice=10, seed=4), "ice")
    np.testing.assert_array_equal(same["y"], ice["y"])
    assert not np.array_equal(other["y"].to_numpy(), ice["y"].to_numpy())
    everyone = P.layer_data(res.plot(n_ice=None), "ice")
    assert everyone["group"].nunique() == len(X)
    assert P.layer_names(res.plot(ice=False)) == ["pd_line", "pd_points", "rug"]


def test_kind_individual_still_draws_the_pd_line(diabetes):
    model, X = diabetes
    res = pdpx.partial_dependence(model, X, "bmi", kind="individual", **OPTS)
    p = res.plot(n_ice=5)
    assert P.layer_names(p)[:2] == ["ice", "pd_line"]
    np.testing.assert_allclose(P.layer_data(p, "pd_line")["y"], res.average[0])


def test_centered_ice(diabetes):
    model, X = diabetes
    res = pdpx.partial_dependence(model, X, "bmi", kind="both", **OPTS)
    p = res.plot(centered=True, n_ice=20)
    ice = P.layer_data(p, "ice")
    first = ice[np.isclose(ice["x"], res.grid_values[0][0])]
    np.testing.assert_allclose(first["y"], 0.0, atol=1e-9)
    line = P.layer_data(p, "pd_line")
    np.testing.assert_allclose(line["y"], res.average[0] - res.average[0, 0])
    assert built(p).labels.y == "centered partial dependence (prediction)"

    cres = pdpx.partial_dependence(model, X, "bmi", kind="both", centered=True, **OPTS)
    np.testing.assert_allclose(P.layer_data(cres.plot(), "pd_line")["y"], line["y"])
    assert built(cres.plot()).labels.y.startswith("centered")
    with pytest.raises(PdpxError, match="un-centered"):
        cres.plot(centered=False)


# ---------------------------------------------------------- 1-way categorical
def test_categorical_points_and_connected_ice(penguins):
    model, X = penguins
    res = pdpx.partial_dependence(model, X, "species", kind="both", **OPTS)
    p = res.plot(n_ice=15)
    assert P.layer_names(p) == ["ice", "ice_points", "pd_categories", "padding"]
    pts = P.layer_data(p, "pd_categories")
    np.testing.assert_allclose(pts["x"], [0, 1, 2])
    np.testing.assert_allclose(pts["y"], res.average[0])
    ice = P.layer_data(p, "ice")
    assert ice["group"].nunique() == 15 and len(ice) == 15 * 3  # one connected curve per row
    assert len(P.layer_data(p, "ice_points")) == 15 * 3
    breaks, labels = panel_x(p)
    assert labels == ["Adelie", "Chinstrap", "Gentoo"]
    np.testing.assert_allclose(breaks, [0, 1, 2])


# ---------------------------------------------------------------- outputs
def test_several_outputs_are_facets(iris):
    model, X = iris
    res = pdpx.partial_dependence(model, X, "petal length (cm)", **OPTS)
    p = res.plot()
    line = P.layer_data(p, "pd_line")
    assert sorted(line["PANEL"].unique()) == [1, 2, 3]
    for k in range(3):
        np.testing.assert_allclose(line[line["PANEL"] == k + 1]["y"], res.average[k])
    b = built(p)
    assert [str(v) for v in b.layout.layout["output"]] == ["setosa", "versicolor", "virginica"]
    assert not b.facet.free["y"]  # one y scale
    assert built(res.plot(share_y=False)).facet.free["y"]
    assert b.labels.y == "partial dependence (probability)"


def test_binary_classifier_label_names_the_class():
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression

    data = load_breast_cancer(as_frame=True)
    X = data.data.iloc[:, :3]
    model = LogisticRegression(max_iter=500).fit(X, data.target_names[data.target])
    with pytest.warns(ExtrapolationWarning, match="'mean perimeter'"):  # radius and perimeter: r = 0.998
        res = pdpx.partial_dependence(model, X, "mean radius", **OPTS)
    assert built(res.plot()).labels.y == "partial dependence (probability of malignant)"


# ---------------------------------------------------------------- 2-way
def test_numeric_by_numeric_tiles_and_contours(diabetes):
    model, X = diabetes
    res = pdpx.partial_dependence(model, X, ["bmi", "s5"], **OPTS)
    p = res.plot(unsupported="show")  # shading: tests/outputs/test_support_plots.py
    assert P.layer_names(p) == ["tiles", "contours", "rug"]
    tiles = P.layer_data(p, "tiles")
    assert len(tiles) == GRID * GRID
    g1, g2 = res.grid_values
    assert np.all(tiles["xmin"] < tiles["xmax"]) and np.all(tiles["ymin"] < tiles["ymax"])
    # each tile is centred on its grid point (even grid) and they share edges
    np.testing.assert_allclose(np.sort(np.unique(np.round((tiles["xmin"] + tiles["xmax"]) / 2, 12))), g1)
    assert np.isclose(tiles["xmin"].min(), g1[0] - (g1[1] - g1[0]) / 2)
    assert tiles["fill"].nunique() > 1
    src = pdpx.partial_dependence(model, X, ["bmi", "s5"], **OPTS).to_frame()
    assert len(src) == len(tiles)
    lines = P.layer_data(p, "contours")
    assert len(lines) > 0
    eps = 1e-12
    assert lines["x"].between(g1.min() - eps, g1.max() + eps).all()
    assert lines["y"].between(g2.min() - eps, g2.max() + eps).all()
    levels = plot_twoway.contour_levels(res.average[0])
    assert np.all((levels > res.average.min()) & (levels < res.average.max()))
    b = built(p)
    assert (b.labels.x, b.labels.y) == ("bmi", "s5")
    assert P.layer_names(res.plot(contours=False, rug=False, unsupported="show")) == ["tiles"]


def test_numeric_by_numeric_centered_uses_a_diverging_scale(diabetes):
    model, X = diabetes
    res = pdpx.partial_dependence(model, X, ["bmi", "s5"], centered=True, **OPTS)
    p = res.plot()
    assert type(built(p).scales.get_scales("fill")).__name__ == "scale_fill_gradient2"


def test_numeric_by_categorical_one_line_per_category(penguins):
    model, X = penguins
    # the categorical feature first: the numeric one still goes on x
    res = pdpx.partial_dependence(model, X, ["species", "flipper_length_mm"], **OPTS)
    p = res.plot(unsupported="show")  # shading: tests/outputs/test_support_plots.py
    assert P.layer_names(p) == ["lines", "points", "rug"]
    lines = P.layer_data(p, "lines")
    assert lines["group"].nunique() == 3 and lines["color"].nunique() == 3
    grid = res.grid_values[1]
    for k, _sp in enumerate(res.grid_values[0]):
        one = lines[lines["group"] == lines["group"].unique()[k]].sort_values("x")
        np.testing.assert_allclose(one["x"], grid)
        np.testing.assert_allclose(one["y"], res.average[0, k])
    b = built(p)
    assert b.labels.x == "flipper_length_mm" and b.labels.color == "species"


def test_categorical_by_categorical_tiles_with_values(penguins):
    model, X = penguins
    res = pdpx.partial_dependence(model, X, ["species", "sex"], **OPTS)
    p = res.plot()
    assert P.layer_names(p) == ["tiles", "values"]
    tiles = P.layer_data(p, "tiles")
    assert len(tiles) == 6
    text = P.layer_data(p, "values")
    expected = [f"{v:,.0f}" for v in res.average[0].reshape(-1)]  # grams: no decimals
    assert list(text["label"]) == expected
    assert set(text["color"]) <= {"white", "#1a1a1a"}


def test_two_way_several_outputs_are_facets(iris):
    model, X = iris
    with pytest.warns(ExtrapolationWarning):  # petal length and width: r = 0.96
        res = pdpx.partial_dependence(model, X, ["petal length (cm)", "petal width (cm)"], method="brute",
                                      grid_resolution=6)
    p = res.plot()
    tiles = P.layer_data(p, "tiles")
    assert sorted(tiles["PANEL"].unique()) == [1, 2, 3]
    assert len(tiles) == 3 * 36


def test_three_features_cannot_be_plotted(diabetes):
    model, X = diabetes
    res = pdpx.partial_dependence(model, X, ["bmi", "s5", "bp"], method="brute", grid_resolution=3)
    with pytest.raises(PdpxError, match="1- or 2-feature"):
        res.plot()


# ------------------------------------------------------------- collections
def test_collection_facets_free_x_shared_y(diabetes):
    model, X = diabetes
    coll = pdpx.partial_dependence_many(model, X, ["s5", "bmi", "bp"], kind="both", **OPTS)
    p = coll.plot(n_ice=5)
    b = built(p)
    assert b.facet.free["x"] and not b.facet.free["y"]
    assert [str(v) for v in b.layout.layout["feature_set"]] == ["s5", "bmi", "bp"]  # the order asked for
    line = P.layer_data(p, "pd_line")
    for k, r in enumerate(coll):
        np.testing.assert_allclose(line[line["PANEL"] == k + 1]["y"], r.average[0])
    assert P.layer_data(p, "ice")["group"].nunique() == 3 * 5
    assert set(P.layer_data(p, "rug")["PANEL"]) == {1, 2, 3}
    assert built(coll.plot(share_y=False)).facet.free["y"]


def test_collection_mixes_numeric_and_categorical_features(penguins):
    model, X = penguins
    coll = pdpx.partial_dependence_many(model, X, ["flipper_length_mm", "species", "sex"], kind="both", **OPTS)
    p = coll.plot(n_ice=4)
    assert P.layer_names(p) == ["ice", "ice_points", "pd_line", "pd_points", "pd_categories", "rug", "padding"]
    b = built(p)
    assert [str(v) for v in b.layout.layout["feature_set"]] == ["flipper_length_mm", "species", "sex"]
    # numeric panel: ordinary numbers; categorical panels: their categories
    breaks, labels = panel_x(p, 0)
    assert all(lab.replace(".", "").isdigit() for lab in labels)
    assert panel_x(p, 1)[1] == ["Adelie", "Chinstrap", "Gentoo"]
    assert panel_x(p, 2)[1] == ["female", "male"]
    cats = P.layer_data(p, "pd_categories")
    np.testing.assert_allclose(cats[cats["PANEL"] == 2]["y"], coll["species"].average[0])
    np.testing.assert_allclose(cats[cats["PANEL"] == 3]["y"], coll["sex"].average[0])
    # categorical positions sit far beyond every numeric value
    assert cats["x"].min() > 10 * X["flipper_length_mm"].max()


def test_collection_several_outputs_is_a_grid(iris):
    model, X = iris
    coll = pdpx.partial_dependence_many(model, X, ["petal length (cm)", "sepal width (cm)"], **OPTS)
    b = built(coll.plot())
    assert type(b.facet).__name__ == "facet_grid"
    assert len(b.layout.layout) == 3 * 2


def test_collection_with_two_way_results_is_a_composition(diabetes):
    from plotnine import ggplot
    from plotnine.composition import Compose

    model, X = diabetes
    coll = pdpx.partial_dependence_many(model, X, ["bmi", ("bmi", "s5"), "s5"], **OPTS)
    fig = coll.plot()
    assert isinstance(fig, Compose)
    plots = [item for item in fig]
    assert isinstance(plots[0], ggplot) and P.layer_names(plots[0])[0] == "pd_line"
    assert P.layer_names(plots[1])[0] == "tiles"


def test_plot_options_are_checked(diabetes):
    model, X = diabetes
    res = pdpx.partial_dependence(model, X, "bmi", kind="both", **OPTS)
    with pytest.raises(PdpxError, match="n_ice"):
        res.plot(n_ice=0)
    with pytest.raises(PdpxError, match="ice_alpha"):
        res.plot(ice_alpha=2)


# ---------------------------------------------------------------- rendering
def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def _all_plots(diabetes, penguins, iris):
    dm, dX = diabetes
    pm, pX = penguins
    im, iX = iris
    return {
        "numeric": pdpx.partial_dependence(dm, dX, "bmi", **OPTS).plot(),
        "ice": pdpx.partial_dependence(dm, dX, "bmi", kind="both", **OPTS).plot(n_ice=20),
        "centered": pdpx.partial_dependence(dm, dX, "bmi", kind="both", centered=True, **OPTS).plot(n_ice=20),
        "categorical": pdpx.partial_dependence(pm, pX, "species", kind="both", **OPTS).plot(n_ice=20),
        "outputs": pdpx.partial_dependence(im, iX, "petal length (cm)", **OPTS).plot(),
        "num_num": pdpx.partial_dependence(dm, dX, ["bmi", "s5"], **OPTS).plot(),
        "num_cat": pdpx.partial_dependence(pm, pX, ["flipper_length_mm", "sex"], **OPTS).plot(),
        "cat_cat": pdpx.partial_dependence(pm, pX, ["species", "sex"], **OPTS).plot(),
        "collection": pdpx.partial_dependence_many(pm, pX, ["bill_depth_mm", "species"], **OPTS).plot(),
    }


def test_every_plot_type_renders_to_png_at_its_size(diabetes, penguins, iris, tmp_path):
    dpi = 30
    for name, p in _all_plots(diabetes, penguins, iris).items():
        out = P.save(p, tmp_path / f"{name}.png", dpi=dpi)
        w, h = p.theme.getp("figure_size")
        assert png_size(out) == (round(w * dpi), round(h * dpi)), name
        assert out.stat().st_size > 1000, name


def test_save_formats_and_sizes(diabetes, tmp_path):
    model, X = diabetes
    p = pdpx.partial_dependence(model, X, "bmi", **OPTS).plot()
    out = P.save(p, tmp_path / "sub" / "f.png", width=4, height=3, dpi=50)
    assert png_size(out) == (200, 150)
    svg = P.save(p, tmp_path / "f.svg")
    assert svg.read_text()[:200].lstrip().startswith("<?xml") and "<svg" in svg.read_text()[:2000]
    pdf = P.save(p, tmp_path / "f.pdf")
    assert pdf.read_bytes()[:5] == b"%PDF-"
    with pytest.raises(PdpxError, match=r"\.png"):
        P.save(p, tmp_path / "f.gif")
    with pytest.raises(PdpxError, match="both width and height"):
        P.save(p, tmp_path / "f.png", width=3)
    coll = pdpx.partial_dependence_many(model, X, ["bmi", ("bmi", "s5")], method="brute", grid_resolution=5)
    out = P.save(coll.plot(), tmp_path / "compose.png", width=5, height=6, dpi=20)
    assert png_size(out) == (100, 120)


def test_plots_restyle_like_any_ggplot(diabetes, tmp_path):
    from plotnine import labs, theme_classic

    model, X = diabetes
    p = pdpx.partial_dependence(model, X, "bmi", **OPTS).plot() + theme_classic() + labs(title="BMI")
    assert built(p).labels.title == "BMI"
    assert P.save(p, tmp_path / "x.png", dpi=20).exists()


def test_plotnine_is_imported_lazily():
    code = (
        "import sys, numpy as np, pandas as pd, pdpx\n"
        "import pdpx.outputs.plot, pdpx.reporting, pdpx.demo.gallery\n"
        "X = pd.DataFrame({'a': np.arange(5.0), 'b': np.ones(5)})\n"
        "pdpx.partial_dependence(lambda d: d['a'] * 2, X, 'a')\n"
        "assert 'plotnine' not in sys.modules, 'plotnine imported'\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_numeric_values_treated_as_categories_keep_their_labels(diabetes):
    model, X = diabetes
    opts = dict(OPTS, categorical_features=["sex"])
    res = pdpx.partial_dependence(model, X, "sex", **opts)
    labels = list(res.to_frame()["label_1"])
    assert panel_x(res.plot())[1] == labels
    two = pdpx.partial_dependence(model, X, ["sex", "bmi"], **opts)
    lines = P.layer_data(two.plot(), "lines")
    assert lines["group"].nunique() == 2 and lines["y"].notna().all()


def test_many_categories_in_a_small_facet_are_upright_and_thinned():
    X = pd.DataFrame({"a": np.linspace(0, 1, 60), "c": pd.Categorical([f"level {i % 30:02d}" for i in range(60)])})
    f = lambda d: d["a"] + d["c"].cat.codes.to_numpy()  # noqa: E731
    coll = pdpx.partial_dependence_many(f, X, ["a", "c"], grid_resolution=5)
    p = coll.plot(ncol=2)
    assert p.theme.getp(("axis_text_x", "rotation")) == 90
    breaks, labels = panel_x(p, 1)
    assert 5 <= len(labels) < 30 and labels[0] == "level 00"


@pytest.mark.parametrize("color_by", [None, "age"])
def test_ice_curves_drawn_at_once_have_geom_lines_pixels(diabetes, monkeypatch, color_by):
    """geom_curves (one Line2D per curve, no data frame per curve) renders what plotnine's geom_line renders."""
    import io

    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt
    from plotnine import geom_line

    from pdpx.outputs import plot_lines

    model, X = diabetes
    res = pdpx.partial_dependence(model, X, "bmi", kind="both", ice_sample=40, **OPTS)
    slow = []
    real = geom_line.draw_panel
    monkeypatch.setattr(geom_line, "draw_panel", lambda self, *a, **k: slow.append(1) or real(self, *a, **k))

    def png():
        fig = res.plot(color_by=color_by).draw()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=60)
        plt.close(fig)
        buf.seek(0)
        return mpimg.imread(buf)

    fast = png()
    assert color_by is not None or not slow  # one style per curve: drawn without geom_line's per-group path
    slow.clear()
    monkeypatch.setattr(plot_lines, "to_rgba", None)  # every layer through geom_line's own drawing
    reference = png()
    assert slow
    np.testing.assert_array_equal(fast, reference)
