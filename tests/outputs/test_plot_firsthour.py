"""Figures a new user meets first (issue 36, item 5): the missing-value point drawn in 2-way figures with no
plotnine warning, tick labels that never run into each other, whole-number ticks for integer features, and dots
only on small grids. Values are checked against the definition (set the column, call predict, average)."""

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine")
sklearn = pytest.importorskip("sklearn")

import pdpx  # noqa: E402
from pdpx.outputs import plot as P  # noqa: E402


@pytest.fixture(scope="module")
def holes():
    """A model that takes missing values, on a float feature ``a`` and a whole-number feature ``b`` with NaN,
    integer columns ``c`` (0 to 4) and ``d`` (0 to 2) and a category ``s``."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(150, 240, size=n).astype(float),
                      "c": rng.integers(0, 5, size=n), "s": pd.Categorical(rng.choice(["p", "q", "r"], n)),
                      "d": rng.integers(0, 3, size=n)})
    X.loc[rng.random(n) < 0.15, "a"] = np.nan
    X.loc[rng.random(n) < 0.15, "b"] = np.nan
    y = np.where(X["a"].isna(), 3.0, X["a"] * 2) + X["b"].fillna(260) / 50 + X["c"] + (X["s"] == "q") - X["d"]
    model = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype", random_state=0)
    return model.fit(X, y), X


def by_definition(model, X, values: dict) -> float:
    """The average prediction with each column of ``values`` set to its value in every row (dtype kept)."""
    Z = X.copy()
    for col, v in values.items():
        Z[col] = pd.Series([v] * len(Z), index=Z.index).astype(X[col].dtype)
    return float(np.mean(model.predict(Z)))


def removed_rows(caught) -> list[str]:
    from plotnine.exceptions import PlotnineWarning

    return [str(w.message) for w in caught if issubclass(w.category, PlotnineWarning)]


def axis_labels(p, axis: str = "x", i: int = 0):
    import copy

    built = copy.deepcopy(p)
    built._build()
    view = getattr(built.layout.panel_params[i], axis)
    return list(view.breaks), list(view.labels), tuple(view.range)


def drawn_tick_boxes(figure):
    """Window extents of every visible, non-empty x tick label of every axes of a drawn figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes = []
    for ax in figure.axes:
        for label in ax.get_xticklabels():
            if label.get_visible() and label.get_text():
                boxes.append((label.get_text(), ax, label.get_window_extent(renderer)))
    return boxes


# -------------------------------------------------------------- the missing point in 2-way figures
def test_two_way_tiles_draw_the_missing_row_and_column_without_plotnine_warnings(holes, tmp_path):
    model, X = holes
    res = pdpx.partial_dependence(model, X, ["a", "b"], method="brute", grid_resolution=6)
    assert np.isnan(res.grid_values[0][-1]) and np.isnan(res.grid_values[1][-1])  # the result holds them
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = res.plot()
        fig = p.draw()
        import matplotlib.pyplot as plt

        plt.close(fig)
        res.save(tmp_path / "ab.png")
    assert removed_rows(caught) == []

    p = res.plot()  # undrawn: its layers hold the frame as pdpx made it
    tiles = p.layers[P.layer_names(p).index("tiles")].geom.data
    assert len(tiles) == 7 * 7  # every cell, the missing row and column and their corner included
    g1 = res.grid_values[0][:-1]
    band = tiles[tiles["x_1"].isna()]
    assert len(band) == 7 and (band["xmin"] > g1.max()).all()  # a band right of the grid, apart from it
    corner = tiles[tiles["x_1"].isna() & tiles["x_2"].isna()]
    assert len(corner) == 1
    assert corner["yhat"].iloc[0] == pytest.approx(by_definition(model, X, {"a": np.nan, "b": np.nan}), rel=1e-9)
    b0 = res.grid_values[1][0]
    row = band[band["x_2"] == b0]
    assert row["yhat"].iloc[0] == pytest.approx(by_definition(model, X, {"a": np.nan, "b": b0}), rel=1e-9)

    _, xlabels, _ = axis_labels(p, "x")
    _, ylabels, _ = axis_labels(p, "y")
    assert xlabels[-1] == "missing" and ylabels[-1] == "missing"
    assert xlabels.count("missing") == 1 and ylabels.count("missing") == 1


def test_two_way_lines_per_category_draw_the_missing_point_per_category(holes):
    model, X = holes
    res = pdpx.partial_dependence(model, X, ["a", "s"], method="brute", grid_resolution=6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import matplotlib.pyplot as plt

        plt.close(res.plot().draw())
    assert removed_rows(caught) == []
    p = res.plot()
    assert "missing" in P.layer_names(p)
    apart = P.layer_data(p, "missing")
    assert len(apart) == 3  # one point per category
    assert (apart["x"] > np.nanmax(res.grid_values[0])).all()
    want = sorted(by_definition(model, X, {"a": np.nan, "s": level}) for level in ("p", "q", "r"))
    np.testing.assert_allclose(sorted(apart["y"]), want, rtol=1e-9)
    lines = P.layer_data(p, "lines")
    assert np.isfinite(lines["x"]).all() and len(lines) == 3 * 6
    breaks, labels, _ = axis_labels(p)
    assert labels[-1] == "missing" and labels.count("missing") == 1


# ---------------------------------------------------------------------- labels never collide
def test_collection_labels_stand_on_their_own(holes):
    """Facets side by side, each with its own ticks: the 'missing' label inside its panel and clear of the
    neighbours' labels; a facet without a missing point has no 'missing' tick; an integer column whole numbers."""
    model, X = holes
    coll = pdpx.partial_dependence_many(model, X, ["a", "b", "c"], method="brute", grid_resolution=10)
    p = coll.plot()
    import matplotlib.pyplot as plt

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = p.draw()
        boxes = drawn_tick_boxes(fig)
    plt.close(fig)
    assert removed_rows(caught) == []
    for i, (t1, _, b1) in enumerate(boxes):
        for t2, _, b2 in boxes[i + 1:]:
            assert not b1.overlaps(b2), f"tick labels {t1!r} and {t2!r} overlap"
    hair = 0.08 * fig.dpi  # pixels
    for text, ax, box in boxes:  # every label within its own panel's width (no label reaches the next facet)
        panel = ax.get_window_extent()
        assert box.x0 >= panel.x0 - hair and box.x1 <= panel.x1 + hair, text
    missing_in = [ax for text, ax, _ in boxes if text == "missing"]
    assert len(missing_in) == 2 and missing_in[0] is not missing_in[1]  # a and b; not c
    c_labels = [text for text, ax, _ in boxes if ax is fig.axes[2]]
    assert c_labels == ["0", "1", "2", "3", "4"]


def test_labels_of_one_facet_never_leak_into_another(holes):
    """A missing point's x can fall inside another facet's range (here 'a' ends near 2, 'c' spans 0 to 4): that
    facet keeps its own ticks."""
    model, X = holes
    coll = pdpx.partial_dependence_many(model, X, ["a", "c"], method="brute", grid_resolution=10)
    p = coll.plot()
    a_breaks, a_labels, _ = axis_labels(p, "x", 0)
    c_breaks, c_labels, _ = axis_labels(p, "x", 1)
    assert a_labels[-1] == "missing"
    assert "missing" not in c_labels and c_labels == ["0", "1", "2", "3", "4"]


# ---------------------------------------------------------------------- integer ticks
def test_integer_features_get_whole_number_ticks(holes):
    model, X = holes
    one = pdpx.partial_dependence(model, X, "d", method="brute")
    breaks, labels, _ = axis_labels(one.plot())
    assert breaks == [0, 1, 2] and labels == ["0", "1", "2"]  # not 0, 0.5, 1, 1.5, 2

    two = pdpx.partial_dependence(model, X.assign(a=X["a"].fillna(0.0)), ["d", "a"], method="brute",
                                  grid_resolution=6)
    breaks, labels, _ = axis_labels(two.plot(), "x")
    assert labels == ["0", "1", "2"]

    lines = pdpx.partial_dependence(model, X, ["d", "s"], method="brute")
    breaks, labels, _ = axis_labels(lines.plot(), "x")
    assert labels == ["0", "1", "2"]

    coll = pdpx.partial_dependence_many(model, X.assign(a=X["a"].fillna(0.0) / 4), ["a", "d"], method="brute",
                                        grid_resolution=10, include_missing=False)
    p = coll.plot()
    assert axis_labels(p, "x", 1)[1] == ["0", "1", "2"]
    breaks, _, _ = axis_labels(p, "x", 0)
    assert not all(float(b).is_integer() for b in breaks)  # a float feature keeps its finer ticks


# ---------------------------------------------------------------------- dots only on small grids
def test_dots_only_on_small_grids_and_always_on_categories(holes):
    model, X = holes
    small = pdpx.partial_dependence(model, X, "a", method="brute", grid_resolution=12)
    large = pdpx.partial_dependence(model, X, "a", method="brute", grid_resolution=100)
    assert "pd_points" in P.layer_names(small.plot())
    names = P.layer_names(large.plot())
    assert "pd_points" not in names and "pd_line" in names
    assert "pd_categories" in names  # the missing point stays marked
    cat = pdpx.partial_dependence(model, X, "s", method="brute")
    assert "pd_categories" in P.layer_names(cat.plot())
    coll = pdpx.partial_dependence_many(model, X, ["a", "c"], method="brute", grid_resolution=100)
    p = coll.plot()
    dots = P.layer_data(p, "pd_points")
    assert set(dots["PANEL"].astype(int)) == {2}  # only the integer column's five points
    lines = pdpx.partial_dependence(model, X, ["a", "s"], method="brute", grid_resolution=100)
    assert "points" not in P.layer_names(lines.plot())
    assert "points" in P.layer_names(pdpx.partial_dependence(model, X, ["a", "s"], method="brute",
                                                            grid_resolution=10).plot())


def test_overlays_of_groups_get_the_same_ticks(holes):
    model, X = holes
    by_group = pdpx.partial_dependence(model, X, "d", by="s", method="brute")
    assert axis_labels(by_group.plot())[1] == ["0", "1", "2"]
    with_missing = pdpx.partial_dependence(model, X, "b", by="s", method="brute", grid_resolution=8)
    p = with_missing.plot()
    breaks, labels, (lo, hi) = axis_labels(p)
    assert labels[-1] == "missing" and labels.count("missing") == 1
    assert all(float(b).is_integer() for b in breaks[:-1])  # b holds whole numbers
    assert "pd_points" in P.layer_names(p)
    assert "pd_points" not in P.layer_names(pdpx.partial_dependence(model, X, "a", by="s", method="brute").plot())
