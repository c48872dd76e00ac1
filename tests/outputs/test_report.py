"""``pdpx.report``: the HTML's structure, embedded figures, ranking, interactions, progress."""

import base64
import html
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine")
pytest.importorskip("sklearn")

import pdpx  # noqa: E402
from pdpx.core.errors import PdpxError  # noqa: E402
from pdpx.reporting import report  # noqa: E402

FAST = dict(method="brute", grid_resolution=8, pair_grid_resolution=6, ice_sample=10, dpi=30, progress=False)


class Page(HTMLParser):
    """Collects elements as (tag, attrs, ancestors) and the text of headings and cells."""

    def __init__(self, text):
        super().__init__()
        self.elements, self.stack, self.text = [], [], {}
        self._capture = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a, [t for t, _ in self.stack]))
        if tag not in ("img", "meta", "br", "path", "use", "stop", "rect", "circle", "line", "polyline", "polygon"):
            self.stack.append((tag, a))
        if tag in ("h1", "h2", "h3", "title", "td"):
            self._capture = (tag, [])

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), [t for t, _ in self.stack]))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if self._capture and self._capture[0] == tag:
            self.text.setdefault(tag, []).append("".join(self._capture[1]).strip())
            self._capture = None

    def handle_data(self, data):
        if self._capture:
            self._capture[1].append(data)

    def find(self, tag, **attrs):
        return [(a, anc) for t, a, anc in self.elements
                if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())]

    def sections(self):
        return [a["id"] for a, _ in self.find("section")]


@pytest.fixture(scope="module")
def diabetes():
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:120, :5], y.iloc[:120]
    return GradientBoostingRegressor(n_estimators=20, max_depth=2, random_state=0).fit(X, y), X


@pytest.fixture(scope="module")
def diabetes_report(diabetes, tmp_path_factory):
    model, X = diabetes
    path = tmp_path_factory.mktemp("report") / "sub" / "report.html"
    out = report(model, X, path, interactions=2, title="Diabetes <test>", **FAST)
    return out, Page(out.read_text(encoding="utf-8"))


def test_report_is_one_html_file_with_every_section(diabetes_report):
    path, page = diabetes_report
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert page.sections() == ["summary", "ranking", "features", "interactions", "heterogeneity", "method"]
    assert page.text["title"] == ["Diabetes <test>"]  # escaped in the file, intact once parsed
    assert "Diabetes &lt;test&gt;" in text
    assert len(page.find("html")) == 1 and len(page.find("body")) == 1 and len(page.find("main")) == 1
    # the table of contents links resolve
    ids = {a.get("id") for _, a, _ in page.elements if a.get("id")}
    for a, _ in page.find("a"):
        assert a["href"].startswith("#") and a["href"][1:] in ids


def test_report_has_no_external_assets(diabetes_report):
    path, page = diabetes_report
    assert not page.find("link") and not page.find("script")
    for tag, a, _ in page.elements:
        for key in ("src", "href"):
            if key in a:
                assert a[key].startswith(("#", "data:")), (tag, a[key][:40])
    assert "http://" not in path.read_text() and "https://" not in path.read_text()


def test_report_embeds_one_png_per_feature_and_pair(diabetes, diabetes_report):
    _, page = diabetes_report
    model, X = diabetes
    features = [a for a, anc in page.find("figure") if a.get("class") == "feature"]
    pairs = [a for a, anc in page.find("figure") if a.get("class") == "interaction"]
    assert len(features) == X.shape[1] and len(pairs) == 2
    assert len(page.find("figure", class_="importance")) == 1
    assert len(page.find("figure", class_="h-statistic")) == 2  # pairwise heat map, overall bars
    imgs = page.find("img")
    # "where the average misleads": the heterogeneity bars, each region figure, the explained-variance ledger
    spread = [len(page.find("figure", class_=c)) for c in ("heterogeneity", "regions", "explained")]
    assert spread[0] == 1 and spread[2] == 1
    assert len(imgs) == X.shape[1] + 2 + 1 + 2 + sum(spread)
    for a, ancestors in imgs:
        assert "figure" in ancestors
        assert a["src"].startswith("data:image/png;base64,")
        png = base64.b64decode(a["src"].split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 500


def test_report_ranks_features_by_pd_spread(diabetes, diabetes_report):
    model, X = diabetes
    _, page = diabetes_report
    rows = [(a, anc) for a, anc in page.find("tr") if "table" in anc]
    ranking_links = [a["href"][len("#feature-"):] for a, anc in page.find("a") if "section" in anc
                     and a["href"].startswith("#feature-")]
    def spread(f):  # Greenwell et al.: sample sd of the PD curve over its grid
        return np.std(pdpx.partial_dependence(model, X, f, method="brute", grid_resolution=8).average, ddof=1)

    expected = sorted(X.columns, key=lambda f: -spread(f))
    assert ranking_links[: len(expected)] == [f.lower() for f in expected]
    # the figures come in the same order
    figure_ids = [a["id"] for a, _ in page.find("figure") if a.get("class") == "feature"]
    assert figure_ids == [f"feature-{f.lower()}" for f in expected]
    assert rows


def test_report_interactions_are_the_strongest_pairs_among_top_features(diabetes, diabetes_report):
    model, X = diabetes
    _, page = diabetes_report
    shown = [h for h in page.text["h3"] if " × " in h]
    assert len(shown) == 2
    top = [a["id"][len("feature-"):] for a, _ in page.find("figure") if a.get("class") == "feature"][:4]
    # pdpx.h_statistic is checked against the definition in tests/explain/test_h_statistic.py
    h = pdpx.h_statistic(model, X, top, method="brute").pairwise
    best = [f"{a} × {b}" for a, b in zip(h.feature_1, h.feature_2)][:2]
    assert sorted(shown) == sorted(best)
    text = " ".join(page.text["td"])
    for a, b in zip(h.feature_1, h.feature_2):  # the table lists every pair among the top features
        assert f"{a} × {b}" in text


def test_report_summary_and_method(diabetes_report):
    path, page = diabetes_report
    text = path.read_text()
    assert "GradientBoostingRegressor" in text
    assert "Rows averaged over" in text and ">120<" in text
    cells = page.text["td"]
    assert "brute" in " ".join(cells)
    # every feature set has a timing row: 5 features + 2 pairs
    timing = re.search(r'<table class="timing">(.*?)</table>', text, re.S).group(1)
    assert timing.count("<tr>") == 1 + 5 + 2
    assert re.search(r"Computing took [0-9.]+ s", text)


def test_report_with_given_pairs_svg_and_categorical_features(tmp_path):
    palmerpenguins = pytest.importorskip("palmerpenguins")
    from sklearn.ensemble import HistGradientBoostingClassifier

    df = palmerpenguins.load_penguins().dropna().reset_index(drop=True).iloc[::4]
    X = df[["island", "sex", "bill_length_mm"]].astype({"island": "category", "sex": "category"})
    model = HistGradientBoostingClassifier(max_iter=10, categorical_features="from_dtype", random_state=0)
    model.fit(X, df["species"])
    out = report(model, X, tmp_path / "p.html", interactions=[("island", "bill_length_mm")],
                 image_format="svg", heterogeneity=None, **FAST)
    page = Page(out.read_text())
    assert not page.find("img")
    assert len(page.find("svg")) == X.shape[1] + 1 + 1 + 2
    assert [h for h in page.text["h3"] if " × " in h] == ["island × bill_length_mm"]
    assert "The pairs asked for" in out.read_text()
    cols = out.read_text()
    assert "3 levels" in cols and "categorical" in cols
    assert "Adelie, Chinstrap, Gentoo" in cols  # outputs shown


def test_report_without_interactions_and_with_row_sample(diabetes, tmp_path):
    model, X = diabetes
    out = report(model, X, tmp_path / "r.html", features=["bmi", "bp"], interactions=None, sample=50,
                 heterogeneity=None, **FAST)
    page = Page(out.read_text())
    assert page.sections() == ["summary", "ranking", "features", "method"]
    assert len(page.find("img")) == 2 + 1
    assert "a random sample of the 120 rows given" in out.read_text()


def test_report_skips_constant_columns_when_choosing_features(diabetes, tmp_path):
    model, X = diabetes
    f = lambda d: d["a"] * 2 + d["b"]  # noqa: E731
    Xc = pd.DataFrame({"a": np.linspace(0, 1, 30), "b": np.linspace(1, 0, 30) ** 2, "c": np.ones(30)})
    out = report(f, Xc, tmp_path / "c.html", interactions=0, heterogeneity=None, **FAST)
    text = out.read_text()
    assert "Left out:" in text and "<code>c</code>" in text
    assert len(Page(text).find("img")) == 2 + 1


def test_report_errors(diabetes, tmp_path):
    model, X = diabetes
    with pytest.raises(PdpxError, match="image_format"):
        report(model, X, tmp_path / "x.html", image_format="gif", **{k: v for k, v in FAST.items()})
    with pytest.raises(PdpxError, match="pair"):
        report(model, X, tmp_path / "x.html", interactions=[("bmi",)], **FAST)
    with pytest.raises(PdpxError, match="unknown feature"):
        report(model, X, tmp_path / "x.html", features=["nope"], **FAST)


def test_progress_bar(diabetes, tmp_path, capsys):
    pytest.importorskip("tqdm")
    model, X = diabetes
    opts = dict(FAST, progress=True)
    report(model, X, tmp_path / "x.html", features=["bmi"], interactions=None, **opts)
    assert "pdpx report" in capsys.readouterr().err


def test_pdpx_report_is_the_report_function():
    assert pdpx.report is report


def test_report_of_a_product_shows_its_interaction(tmp_path):
    X = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.linspace(0, 2, 21)[::-1], "c": np.cos(np.arange(21))})
    out = report(lambda d: d["a"] * d["b"] + d["c"], X, tmp_path / "p.html", **FAST)
    page = Page(out.read_text())
    h = pdpx.h_statistic(lambda d: d["a"] * d["b"] + d["c"], X).pairwise
    assert h.h.iloc[0] > 0.1 and {h.feature_1.iloc[0], h.feature_2.iloc[0]} == {"a", "b"}
    assert [t for t in page.text["h3"] if " × " in t][0] in ("a × b", "b × a")


def test_report_flags_what_the_data_does_not_support_instead_of_warning(tmp_path):
    import warnings

    from pdpx.core.support import support_summary

    rng = np.random.default_rng(0)
    a = rng.uniform(size=600)
    X = pd.DataFrame({"a": a, "b": a + rng.normal(0, 0.02, 600), "c": rng.uniform(size=600)})
    f = lambda d: d["a"] * d["b"] + d["c"]  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the report turns the extrapolation warnings into flags on the page
        out = report(f, X, tmp_path / "flags.html", **dict(FAST, grid_resolution=20))
    text = out.read_text()
    flags = re.findall(r'<p class="flag">Unsupported: (.*?)</p>', text)
    with pytest.warns(pdpx.PdpxWarning):
        want = support_summary(pdpx.partial_dependence(f, X, "a", method="brute", grid_resolution=20))
    assert want is not None and "pdpx.ale" in want
    assert want in [html.unescape(x) for x in flags]
    # the independent feature carries no flag
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert support_summary(pdpx.partial_dependence(f, X, "c", method="brute", grid_resolution=20)) is None


def test_figures_drawn_beside_the_computation_are_the_ones_drawn_in_turn(diabetes, tmp_path, monkeypatch):
    """With a backend that draws off the main thread, figures are drawn on a side thread while the report goes
    on computing; the page holds the same figures, in the same order, as when each is drawn in its turn."""
    import threading

    import pdpx.reporting as reporting

    model, X = diabetes
    opts = dict(FAST, dpi=40)
    threads = set()
    real_embed = reporting.embed

    def spy(plot, *a, **k):
        threads.add(threading.current_thread().name)
        return real_embed(plot, *a, **k)

    monkeypatch.setattr(reporting, "embed", spy)
    beside = Page(report(model, X, tmp_path / "a.html", interactions=2, **opts).read_text(encoding="utf-8"))
    assert any(name.startswith("pdpx-report") for name in threads)  # Agg here: drawn beside
    threads.clear()
    monkeypatch.setattr(reporting, "_draws_off_main_thread", lambda: False)
    in_turn = Page(report(model, X, tmp_path / "b.html", interactions=2, **opts).read_text(encoding="utf-8"))
    assert threads == {threading.main_thread().name}
    images = [[a["src"] for a, _ in page.find("img")] for page in (beside, in_turn)]
    spread = sum(len(beside.find("figure", class_=c)) for c in ("heterogeneity", "regions", "explained"))
    assert spread >= 2  # "where the average misleads": its bars and ledger, and the regions shown
    assert len(images[0]) == X.shape[1] + 1 + 2 + 2 + spread  # features, importance, H's two, the pairs
    assert images[0] == images[1]
    assert beside.text["h3"] == in_turn.text["h3"]


def test_interactive_backends_draw_on_the_main_thread(monkeypatch):
    import matplotlib

    import pdpx.reporting as reporting

    for name, off in (("agg", True), ("svg", True), ("module://matplotlib_inline.backend_inline", True),
                      ("TkAgg", False), ("QtAgg", False), ("MacOSX", False)):
        monkeypatch.setattr(matplotlib, "get_backend", lambda name=name: name)
        assert reporting._draws_off_main_thread() is off, name


def test_column_summary_equals_pandas():
    """The table of columns' min, median, max and distinct count (one sort) against pandas' own."""
    from pdpx.outputs.report_page import _numeric_summary

    rng = np.random.default_rng(0)
    for s in (pd.Series(rng.normal(size=1001)), pd.Series(rng.normal(size=1000)), pd.Series(rng.integers(0, 5, 999)),
              pd.Series([1.0, np.nan, 3.0, 3.0]), pd.Series([True, False, True]), pd.Series([np.nan, np.nan]),
              pd.Series(pd.array([1, None, 4, 4], dtype="Int64")), pd.Series(["1", "x", "3"])):
        v = pd.to_numeric(s, errors="coerce")
        want = [v.min(), v.median(), v.max(), v.nunique()]
        got = list(_numeric_summary(s))
        np.testing.assert_allclose(np.array(got[:3], dtype=float), np.array(want[:3], dtype=float), rtol=0, atol=0)
        assert got[3] == want[3]


def test_report_importance_is_pdpx_importance(tmp_path, monkeypatch):
    """The report ranks by the spread of the 1-way curves it computed: the same table pdpx.importance returns,
    with a missing-value point on the grid and centered curves."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    import pdpx.reporting as reporting

    rng = np.random.default_rng(4)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    X.loc[::6, "b"] = np.nan
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, X["a"] + 2 * X["b"].fillna(0) ** 2)
    seen = []
    real = reporting.importance_table
    monkeypatch.setattr(reporting, "importance_table", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
    report(model, X, tmp_path / "r.html", interactions=None, centered=True, grid_resolution=12, dpi=30,
           progress=False)
    want = pdpx.importance(model, X, grid_resolution=12)
    got = seen[0]
    assert list(got.feature) == list(want.feature)
    np.testing.assert_allclose(got.importance, want.importance, rtol=1e-12, atol=1e-12)


def test_an_error_while_figures_are_drawn_beside_leaves_no_thread(diabetes, tmp_path, monkeypatch):
    import threading

    import pdpx.reporting as reporting

    model, X = diabetes

    def fail(*a, **k):
        raise PdpxError("H failed here")

    monkeypatch.setattr(reporting, "h_statistic_of", fail)
    with pytest.raises(PdpxError, match="H failed here"):
        report(model, X, tmp_path / "r.html", interactions=2, **FAST)
    assert not any(t.name.startswith("pdpx-report") for t in threading.enumerate())
    assert not (tmp_path / "r.html").exists()
