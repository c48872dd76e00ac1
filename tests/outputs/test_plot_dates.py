"""Figures of date features: datetime axes with calendar breaks and ISO labels; collections mixing dates with others."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("plotnine")

import pdpx  # noqa: E402
from pdpx.outputs.plot import layer_data, save  # noqa: E402
from pdpx.outputs.plot_dates import date_break_days, format_days  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from test_dates import AcceptsMissing, DateModel, frame  # noqa: E402

ISO = re.compile(r"^\d{4}(-\d{2}(-\d{2}( \d{2}:\d{2})?)?)?$")


def drawn_panels(p):
    """(scale class names, each panel's x labels, each panel's y labels) of the drawn figure."""
    import matplotlib.pyplot as plt

    fig = p.draw()
    try:
        return ([type(s).__name__ for s in p.scales], [list(pp.x.labels) for pp in p.layout.panel_params],
                [list(pp.y.labels) for pp in p.layout.panel_params])
    finally:
        plt.close(fig)


@pytest.mark.parametrize("kind", ["naive", "tz", "period"])
def test_oneway_date_axis(kind, tmp_path):
    X = frame(kind)
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], kind="both", grid_resolution=25)
    p = res.plot()
    scales, xlabels, _ = drawn_panels(p)
    assert "scale_x_datetime" in scales
    labels = xlabels[0]
    assert len(labels) >= 3 and all(ISO.match(s) for s in labels), labels
    assert pd.to_datetime(labels).is_monotonic_increasing
    assert len(layer_data(p, "pd_line")) == len(res.grid_values[0])
    # the line's dates are the grid's (on the zone's clock)
    raw = pd.DatetimeIndex(res.grid_values[0].to_timestamp() if kind == "period" else res.grid_values[0])
    if raw.tz is not None:
        raw = raw.tz_localize(None)
    drawn = p.layers[p._pdpx_layers.index("pd_line")]._data["x"]
    assert list(pd.DatetimeIndex(drawn)) == list(raw)
    if kind == "tz":
        assert p.labels.x == "when (Europe/Paris)"
    out = save(p, tmp_path / f"dates_{kind}.png", dpi=60)
    assert out.stat().st_size > 5_000


def test_calendar_breaks():
    days, fmt = date_break_days(18597.0, 19236.0)  # 2020-12-01 to 2022-09-01: every six months, on January and July
    assert fmt == "%Y-%m" and format_days(days, fmt) == ["2021-01", "2021-07", "2022-01", "2022-07"]
    lo = 18628.0  # 2021-01-01
    days, fmt = date_break_days(lo, lo + 4)  # days; none at the panel's very edges
    assert fmt == "%Y-%m-%d" and format_days(days, fmt) == ["2021-01-02", "2021-01-03", "2021-01-04"]
    days, fmt = date_break_days(lo, lo + 365 * 30)
    assert format_days(days, fmt) == ["2025", "2030", "2035", "2040", "2045", "2050"]
    days, fmt = date_break_days(lo + 0.2, lo + 0.9)
    assert fmt == "%Y-%m-%d %H:%M" and all(s.startswith("2021-01-01 ") for s in format_days(days, fmt))


def test_twoway_date_and_number():
    X = frame("tz")
    model = DateModel(X["when"].dtype)
    p = pdpx.partial_dependence(model, X, ["when", "x"], grid_resolution=6).plot()
    scales, xlabels, ylabels = drawn_panels(p)
    assert "scale_x_datetime" in scales and all(ISO.match(s) for s in xlabels[0])
    assert not any(ISO.match(s) for s in ylabels[0])
    p = pdpx.partial_dependence(model, X, ["x", "when"], grid_resolution=6).plot()
    scales, xlabels, ylabels = drawn_panels(p)
    assert "scale_y_datetime" in scales and all(ISO.match(s) for s in ylabels[0])
    p = pdpx.partial_dependence(model, X, ["when", "c"], grid_resolution=6).plot()
    scales, xlabels, _ = drawn_panels(p)
    assert "scale_x_datetime" in scales and all(ISO.match(s) for s in xlabels[0])


def test_collection_mixes_dates_numbers_and_categories(tmp_path):
    X = frame("naive")
    coll = pdpx.partial_dependence_many(DateModel(X["when"].dtype), X, [["when"], ["x"], ["c"]], grid_resolution=12)
    p = coll.plot()
    _, xlabels, _ = drawn_panels(p)
    when, x, c = xlabels
    assert len(when) >= 2 and all(ISO.match(s) for s in when), when
    assert all(re.match(r"^-?\d+(\.\d+)?$", s.replace("\u2212", "-")) for s in x if s), x
    assert [s for s in c if s] == ["a", "b", "c"]
    assert save(coll.plot(), tmp_path / "mixed.png", dpi=60).stat().st_size > 5_000  # a fresh figure: a collection
    # drawn once is not saved again (plotnine keeps its facet layout)


def test_missing_date_point_is_labelled():
    X = frame("naive")
    X.loc[X.index[:10], "when"] = pd.NaT
    res = pdpx.partial_dependence(AcceptsMissing(X["when"].dtype), X, ["when"], grid_resolution=8)
    _, xlabels, _ = drawn_panels(res.plot())
    assert xlabels[0][-1] == "missing" and all(ISO.match(s) for s in xlabels[0][:-1])


def test_report_prints_dates(tmp_path):
    X = frame("tz")
    path = pdpx.report(DateModel(X["when"].dtype), X, tmp_path / "dates.html", features=["when", "x"],
                       interactions=0, progress=False)
    page = Path(path).read_text()
    table = page[page.index('<table class="columns"'):]
    table = table[:table.index("</table>")]
    row = table[table.index("<td>when"):]
    row = row[:row.index("</tr>")]
    first, last = X["when"].min().strftime("%Y-%m-%d"), X["when"].max().strftime("%Y-%m-%d")
    assert f"min {first}" in row and f"max {last}" in row and "<td>date</td>" in row
    assert "e+1" not in table  # no epoch numbers


def test_groups_and_derivative_figures_have_date_axes():
    X = frame("tz")
    model = DateModel(X["when"].dtype)
    for res in (pdpx.partial_dependence(model, X, ["when"], by="c", grid_resolution=8),
                pdpx.derivative_ice(model, X, "when", grid_resolution=8)):
        p = res.plot()
        scales, xlabels, _ = drawn_panels(p)
        assert "scale_x_datetime" in scales, type(res).__name__
        assert all(ISO.match(s) for s in xlabels[0]) and len(xlabels[0]) >= 3
    assert "per day" in p.labels.y


def test_missing_date_point_in_a_mixed_collection():
    X = frame("naive")
    X.loc[X.index[:10], "when"] = pd.NaT
    coll = pdpx.partial_dependence_many(AcceptsMissing(X["when"].dtype), X, [["when"], ["c"]], grid_resolution=6)
    _, (when, c), _ = drawn_panels(coll.plot())
    assert when[-1] == "missing" and all(ISO.match(s) for s in when[:-1]) and len(when) >= 3
    assert [s for s in c if s] == ["a", "b", "c"]


@pytest.mark.parametrize("other", ["x", "c"])
def test_missing_date_point_in_two_way_figures(other):
    X = frame("naive")
    X.loc[X.index[:10], "when"] = pd.NaT
    res = pdpx.partial_dependence(AcceptsMissing(X["when"].dtype), X, ["when", other], grid_resolution=6)
    assert pd.isna(res.grid_values[0][len(res.grid_values[0]) - 1])
    scales, xlabels, _ = drawn_panels(res.plot())
    assert "scale_x_datetime" in scales
    assert xlabels[0][-1] == "missing" and all(ISO.match(s) for s in xlabels[0][:-1]) and len(xlabels[0]) >= 3


@pytest.mark.parametrize("kind", ["naive", "tz"])
def test_regions_of_a_date_feature_are_drawn_on_a_date_axis(kind):
    X = frame(kind)
    res = pdpx.regions(DateModel(X["when"].dtype), X, "when", method="brute", grid_resolution=12, ice=True)
    p = res.plot()
    scales, xlabels, _ = drawn_panels(p)
    assert "scale_x_datetime" in scales
    assert all(labels and all(ISO.match(s) for s in labels) for labels in xlabels), xlabels
    assert p.labels.x == ("when (Europe/Paris)" if kind == "tz" else "when")
    # the regions' own curves sit at the grid's dates (on the zone's clock)
    raw = pd.DatetimeIndex(res.grid_values)
    if raw.tz is not None:
        raw = raw.tz_localize(None)
    line = layer_data(p, 2)  # each region's PD line
    shown = pd.to_datetime(line["x"], unit="D") if line["x"].dtype.kind == "f" else pd.DatetimeIndex(line["x"])
    assert set(pd.DatetimeIndex(shown).tz_localize(None).floor("s")) == set(raw.floor("s"))
