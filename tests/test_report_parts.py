"""``pdpx.report`` never comes back short without saying so: a part that failed is named, with why, in an
``IncompleteReportWarning`` raised before the page is written (so that, as an error, it keeps an old file as it
was); a model that fails outright raises and keeps the old file; an extension the report does not write is refused
before any work; users' names holding ``$`` and backslashes make a whole report."""

from __future__ import annotations

import html
import re
import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine")

import pdpx  # noqa: E402
from pdpx import reporting  # noqa: E402
from pdpx.core.errors import IncompleteReportWarning, PdpxError, PdpxWarning  # noqa: E402

FAST = dict(method="brute", grid_resolution=6, pair_grid_resolution=4, ice_sample=8, dpi=30, progress=False)
OLD = "<html>an old report, to be kept</html>"


class Refusal(Exception):
    """A model's own exception that cannot be made from a message alone (pdpx then raises ModelPredictError)."""

    def __init__(self, what, why):
        super().__init__(f"{what}: {why}")


def failing_on_b(d):
    """A model that refuses rows whose column b holds a few values only (b set to its grid values, as b's PD
    asks); c is constant (it has no grid)."""
    if d["b"].nunique() <= FAST["grid_resolution"] < len(d):
        raise Refusal("b", "cannot predict with b on a grid")
    return d["a"].to_numpy() * 2 + d["b"].to_numpy()


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120), "c": np.ones(120)})


def _missing(caught) -> IncompleteReportWarning:
    found = [w.message for w in caught if isinstance(w.message, IncompleteReportWarning)]
    assert len(found) == 1, [str(w.message) for w in caught]
    return found[0]


def test_a_feature_whose_pd_failed_is_named_in_the_warning_and_a_constant_column_is_not(X, tmp_path):
    with pytest.warns(IncompleteReportWarning) as caught:
        path = pdpx.report(failing_on_b, X, tmp_path / "r.html", interactions=None, heterogeneity=None, **FAST)
    warning = _missing(caught)
    assert isinstance(warning, PdpxWarning) and pdpx.IncompleteReportWarning is IncompleteReportWarning
    [(part, why)] = warning.missing  # b's PD, not c (constant: it has no PD, and the page lists it as left out)
    assert part == "the PD of b" and "Refusal" in why and "cannot predict with b on a grid" in why
    assert warning.path == str(path) and "the PD of b" in str(warning)
    text = html.unescape(path.read_text(encoding="utf-8"))
    assert "Left out:" in text and "cannot predict with b on a grid" in text and "is constant" in text


def test_as_an_error_the_warning_keeps_the_old_file(X, tmp_path):
    path = tmp_path / "r.html"
    path.write_text(OLD, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteReportWarning)
        with pytest.raises(IncompleteReportWarning, match="the PD of b"):
            pdpx.report(failing_on_b, X, path, interactions=None, heterogeneity=None, **FAST)
    assert path.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]  # no temporary file left


def test_a_model_that_fails_in_a_later_section_raises_and_keeps_the_old_file(X, tmp_path):
    def failing_in_pairs(d):  # fine for every 1-way PD; fails on the 2-way grid of (a, b)
        if max(d["a"].nunique(), d["b"].nunique()) <= FAST["pair_grid_resolution"] < len(d):
            raise RuntimeError("no joint grids here")
        return d["a"].to_numpy() * d["b"].to_numpy()

    path = tmp_path / "r.html"
    path.write_text(OLD, encoding="utf-8")
    with pytest.raises(RuntimeError, match="no joint grids here"):
        pdpx.report(failing_in_pairs, X[["a", "b"]], path, interactions=[("a", "b")], heterogeneity=None, **FAST)
    assert path.read_text(encoding="utf-8") == OLD


def test_a_failing_section_part_is_named_with_the_others(X, tmp_path, monkeypatch):
    def broken(*a, **k):
        raise MemoryError("the regions would pass the budget")  # any exception: the section keeps the page

    monkeypatch.setattr(reporting, "regions_of", broken)
    monkeypatch.setattr(reporting, "HETEROGENEITY_SHARE", 0.0)  # regions for a, then b
    with pytest.warns(IncompleteReportWarning) as caught:
        path = pdpx.report(failing_on_b, X, tmp_path / "r.html", interactions=None, **FAST)
    parts = [p for p, _ in _missing(caught).missing]
    assert parts[0] == "the PD of b" and "the regions of a" in parts
    assert all(why == "MemoryError: the regions would pass the budget" for p, why in _missing(caught).missing
               if p.startswith("the regions"))
    assert "the regions of a could not be computed" in html.unescape(path.read_text(encoding="utf-8"))


def test_a_dict_of_models_names_a_feature_that_failed(X, tmp_path):
    models = {"plain": lambda d: d["a"].to_numpy() + d["b"].to_numpy(), "picky": failing_on_b}
    with pytest.warns(IncompleteReportWarning) as caught:
        pdpx.report(models, X, tmp_path / "r.html", method="brute", grid_resolution=6, dpi=30, progress=False)
    [(part, why)] = _missing(caught).missing
    assert part == "the PD of b" and "picky" in why


def test_a_complete_report_warns_nothing(X, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteReportWarning)
        pdpx.report(lambda d: d["a"].to_numpy() * d["b"].to_numpy(), X[["a", "b"]], tmp_path / "r.html", **FAST)


@pytest.mark.parametrize("name", ["r.pdf", "r.docx", "r", "r.html.txt", "r.png"])
def test_an_extension_the_report_does_not_write_is_refused_before_any_work(X, tmp_path, monkeypatch, name):
    def never(*a, **k):
        raise AssertionError("computed before the name was checked")

    monkeypatch.setattr(reporting, "Session", never)
    with pytest.raises(PdpxError, match=r"the report is written as \.html, \.htm \(not .*\); pdpx writes the report "
                                        r"as one HTML file"):
        pdpx.report(failing_on_b, X, tmp_path / name, **FAST)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["r.html", "R.HTM"])
def test_html_names_are_written(X, tmp_path, name):
    model = lambda d: d["a"].to_numpy() + d["b"].to_numpy()  # noqa: E731
    assert pdpx.report(model, X[["a", "b"]], tmp_path / name, interactions=None, heterogeneity=None,
                       **FAST).name == name


def test_names_with_dollars_and_backslashes_make_a_whole_report(tmp_path):
    """Column names and levels matplotlib would read as mathtext: every section, figures included."""
    rng = np.random.default_rng(1)
    a, b, c = "Q1_$_vs_Q2_$", "b\\x^{2}_{i}$", "lvl_{$\\alpha$}"
    levels = ["$x$", "\\beta_1^2", "5$ to 10$"]
    X = pd.DataFrame({a: rng.uniform(-1, 1, 400), b: rng.uniform(-1, 1, 400),
                      c: pd.Categorical(rng.choice(levels, 400), categories=levels)})

    def model(d):
        codes = pd.Categorical(d[c], categories=levels).codes
        return 3 * d[a].to_numpy() * np.where(codes == 0, 1.0, -1.0) + d[b].to_numpy() + codes

    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteReportWarning)
        text = pdpx.report(model, X, tmp_path / "r.html", **FAST).read_text(encoding="utf-8")
    sections = re.findall(r'<section id="([^"]+)"', text)
    assert {"features", "interactions", "heterogeneity"} <= set(sections)
    assert "could not be" not in text and text.count("<img") >= 8
    for name in (a, b, c):
        assert html.escape(name, quote=True) in text
