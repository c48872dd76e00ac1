"""``pdpx.report``'s section "Where the average misleads": on the known-answer model (x1's slope flips with the
sign of x2) its numbers equal pdpx.heterogeneity / regions / explained_variance on the report's sampled rows, x1's
regions split on x2, it is left out when asked, and a measure that fails leaves a note and the rest of the report."""

import html
import re

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine")

import pdpx  # noqa: E402
from pdpx import reporting  # noqa: E402
from pdpx.core.errors import IncompleteReportWarning, PdpxError  # noqa: E402
from pdpx.outputs.report_heterogeneity import number  # noqa: E402

FAST = dict(method="brute", grid_resolution=8, pair_grid_resolution=6, ice_sample=10, dpi=30, progress=False,
            interactions=None)
N, SAMPLE, SEED = 600, 400, 0


def _f(d):
    """y = 3 x1 1[x2 > 0] - 3 x1 1[x2 <= 0] + x3."""
    return 3 * d["x1"].to_numpy() * np.where(d["x2"].to_numpy() > 0, 1.0, -1.0) + d["x3"].to_numpy()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    return pd.DataFrame({"x1": rng.uniform(-1, 1, N), "x2": rng.uniform(-1, 1, N), "x3": rng.uniform(-1, 1, N)})


@pytest.fixture(scope="module")
def page(data, tmp_path_factory):
    path = reporting.report(_f, data, tmp_path_factory.mktemp("het") / "r.html", sample=SAMPLE,
                            random_state=SEED, **FAST)
    return path.read_text(encoding="utf-8")


def _sampled(data):
    """The rows the report averages over (its seeded sample, as reporting._report_rows draws it)."""
    return data.iloc[np.sort(np.random.default_rng(SEED).choice(len(data), SAMPLE, replace=False))]


def _section(text):
    found = re.search(r'<section id="heterogeneity">(.*?)</section>', text, re.S)
    assert found, "no heterogeneity section"
    return found.group(1)


def _rows(text, table):
    """The cells (unescaped text) of each body row of the first ``<table class="{table}">`` in ``text``."""
    body = re.search(rf'<table class="{table}">.*?<tbody>(.*?)</tbody>', text, re.S).group(1)
    return [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
            for tr in re.findall(r"<tr>(.*?)</tr>", body)]


def _ranked(text):
    return re.findall(r'<a href="#feature-[^"]*">([^<]*)</a>', text.split('id="ranking"')[1].split("</section>")[0])


def test_section_is_on_the_page_between_interactions_and_method(page):
    ids = re.findall(r'<section id="([^"]+)"', page)
    assert ids == ["summary", "ranking", "features", "heterogeneity", "method"]
    assert '<a href="#heterogeneity">Where the average misleads</a>' in page
    assert "<h2>Where the average misleads</h2>" in page


def test_heterogeneity_table_equals_pdpx_heterogeneity_on_the_sampled_rows(data, page):
    sec = _section(page)
    het = pdpx.heterogeneity(_f, _sampled(data), method="brute", grid_resolution=8)
    shown = [(f, o, h, sd) for f, o, h, sd, _ in _rows(sec, "heterogeneity")]
    expected = [(f, str(o), number(h), number(sd)) for f, o, h, sd in
                zip(het.table.feature, het.table.output, het.table.heterogeneity, het.table.sd)]
    assert shown == expected
    assert shown[-1][0] == "x3"  # x3 acts additively: its curves agree
    assert het.n_rows == SAMPLE and f"Heterogeneity on {SAMPLE:,} rows" in sec


def test_regions_name_x2_in_x1s_rule_and_equal_pdpx_regions(data, page):
    sec = _section(page)
    shown = re.findall(r'<figure class="regions" id="regions-([^"]+)">', sec)
    assert shown == ["x1", "x2"]  # x3's heterogeneity is 0: below the rule's share, no regions
    x1 = sec.split('id="regions-x1"')[1].split("</figure>")[0]
    res = pdpx.regions(_f, _sampled(data), "x1", method="brute", grid_resolution=8)
    cells = _rows(x1, "regions")
    assert [c[1] for c in cells] == res.rules and all("x2" in c[1] for c in cells)
    assert [int(c[2].replace(",", "")) for c in cells] == [r.n_rows for r in res.regions]
    assert [c[3] for c in cells] == [number(r.heterogeneity.sum()) for r in res.regions]
    assert abs(res.splits[0].threshold) < 0.3  # within a grid step of the true split at 0
    assert f"remove {res.removed:.1%} of its heterogeneity" in x1
    assert x1.count("<img") == 1


def test_ledger_equals_pdpx_explained_variance(data, page):
    sec = _section(page)
    features = _ranked(page)
    assert sorted(features) == ["x1", "x2", "x3"]
    ev = pdpx.explained_variance(_f, _sampled(data), features[:reporting.LEDGER_FEATURES], threeway=0,
                                 random_state=SEED, method="brute")
    led = ev.ledger
    expected = [[str(s), w, a, str(o), number(r2), number(g)]
                for s, w, a, o, r2, g in zip(led.step, led.what, led.added, led.output, led.r2, led.gain)]
    assert _rows(sec, "ledger") == expected
    assert led.r2.max() > 0.99  # the pair x1 x x2 explains the model
    assert sec.count("<img") == 1 + 2 + 1  # bars, two features' regions, the ledger


@pytest.mark.parametrize("off", [None, 0])
def test_section_is_left_out_when_asked(data, tmp_path, off):
    path = reporting.report(_f, data, tmp_path / "r.html", heterogeneity=off, **FAST)
    text = path.read_text(encoding="utf-8")
    assert 'id="heterogeneity"' not in text and "#heterogeneity" not in text
    assert re.findall(r'<section id="([^"]+)"', text) == ["summary", "ranking", "features", "method"]


def test_an_integer_bounds_the_features_with_regions(data, tmp_path):
    text = reporting.report(_f, data, tmp_path / "r.html", heterogeneity=1, **FAST).read_text(encoding="utf-8")
    assert re.findall(r'<figure class="regions" id="regions-([^"]+)">', _section(text)) == ["x1"]


def test_heterogeneity_argument_is_checked(data, tmp_path):
    with pytest.raises(PdpxError, match="heterogeneity"):
        reporting.report(_f, data, tmp_path / "r.html", heterogeneity="all", **FAST)


@pytest.mark.parametrize("name, part, kept", [
    ("regions_of", "the regions of x1", ["heterogeneity", "ledger"]),
    ("heterogeneity_of", "heterogeneity", ["ledger"]),
    ("explained_variance", "the explained variance", ["heterogeneity", "regions"]),
])
def test_a_failing_measure_leaves_a_note_the_rest_of_the_report_and_a_warning(data, tmp_path, monkeypatch, name, part,
                                                                               kept):
    real = getattr(reporting, name)

    def broken(model, X, feature, *a, **k):
        if name != "regions_of" or feature == "x1":
            raise PdpxError("broken here")
        return real(model, X, feature, *a, **k)

    monkeypatch.setattr(reporting, name, broken)
    with pytest.warns(IncompleteReportWarning) as caught:
        text = reporting.report(_f, data, tmp_path / "r.html", **FAST).read_text(encoding="utf-8")
    [warning] = [w.message for w in caught if isinstance(w.message, IncompleteReportWarning)]
    assert warning.missing == ((part, "PdpxError: broken here"),) and warning.path == str(tmp_path / "r.html")
    assert f"{part} (PdpxError: broken here)" in str(warning)
    words = f"{part} could not be computed: PdpxError: broken here"
    assert re.findall(r'<section id="([^"]+)"', text) == ["summary", "ranking", "features", "heterogeneity", "method"]
    sec = _section(text)
    assert f'<p class="flag">{html.escape(words, quote=True)}</p>' in sec
    for table in kept:
        assert f'<table class="{table}">' in sec
    assert ('<table class="ledger">' in sec) == ("ledger" in kept)
    assert ('<table class="heterogeneity">' in sec) == ("heterogeneity" in kept)
    if name == "regions_of":
        assert 'id="regions-x1"' not in sec and 'id="regions-x2"' in sec  # the other feature's regions stay


def test_no_section_for_a_dict_of_models(data, tmp_path):
    text = reporting.report({"a": _f, "b": _f}, data, tmp_path / "r.html", method="brute", grid_resolution=8,
                            dpi=30, progress=False).read_text(encoding="utf-8")
    assert 'id="heterogeneity"' not in text


def test_the_ledger_runs_on_a_sample_when_the_rows_are_more(data, tmp_path, monkeypatch):
    monkeypatch.setattr(reporting, "LEDGER_SAMPLE", 250)
    text = reporting.report(_f, data, tmp_path / "r.html", sample=SAMPLE, random_state=SEED,
                            **FAST).read_text(encoding="utf-8")
    sec = _section(text)
    ev = pdpx.explained_variance(_f, _sampled(data), _ranked(text), threeway=0, random_state=SEED, method="brute",
                                 sample=250)
    assert ev.n_rows == 250 and "On 250 rows" in sec
    assert [c[4] for c in _rows(sec, "ledger")] == [number(v) for v in ev.ledger.r2]
    het = pdpx.heterogeneity(_f, _sampled(data), method="brute", grid_resolution=8)
    assert f"Heterogeneity on {het.n_rows:,} rows" in sec  # heterogeneity and regions keep every row


def test_a_figure_that_fails_to_draw_leaves_a_note_and_its_table(data, tmp_path, monkeypatch):
    from pdpx.explain.ice_spread import HeterogeneityResult

    def broken(self, *a, **k):
        raise RuntimeError("cannot draw here")

    monkeypatch.setattr(HeterogeneityResult, "plot", broken)
    with pytest.warns(IncompleteReportWarning) as caught:
        text = reporting.report(_f, data, tmp_path / "r.html", **FAST).read_text(encoding="utf-8")
    [warning] = [w.message for w in caught if isinstance(w.message, IncompleteReportWarning)]
    assert warning.missing == (("the figure of heterogeneity", "RuntimeError: cannot draw here"),)
    sec = _section(text)
    assert ('<p class="flag">the figure of heterogeneity could not be drawn: RuntimeError: cannot draw here</p>'
            in sec)
    assert '<figure class="heterogeneity">' not in sec and '<table class="heterogeneity">' in sec
    assert '<figure class="explained">' in sec and 'id="method"' in text


def test_heterogeneity_and_regions_read_a_seeded_sample_when_the_rows_are_more(data, tmp_path, monkeypatch):
    monkeypatch.setattr(reporting, "SECTION_ROWS", 300)
    text = reporting.report(_f, data, tmp_path / "r.html", sample=SAMPLE, random_state=SEED,
                            **FAST).read_text(encoding="utf-8")
    sec = _section(text)
    rows = _sampled(data)
    rows = rows.iloc[np.sort(np.random.default_rng(SEED).choice(len(rows), 300, replace=False))]
    het = pdpx.heterogeneity(_f, rows, method="brute", grid_resolution=8)
    assert het.n_rows == 300 and "Heterogeneity on 300 rows" in sec
    shown = [(f, h) for f, _, h, _, _ in _rows(sec, "heterogeneity")]
    assert shown == [(f, number(h)) for f, h in zip(het.table.feature, het.table.heterogeneity)]
    res = pdpx.regions(_f, rows, "x1", method="brute", grid_resolution=8)
    x1 = sec.split('id="regions-x1"')[1].split("</figure>")[0]
    assert [c[1] for c in _rows(x1, "regions")] == res.rules
