"""pdpx in Jupyter: results' rich display (``_repr_html_``) and progress bars, the latter in a real kernel.

The kernel tests write a small notebook (nbformat), execute it with nbclient on an ipykernel kernel
and read its outputs, once with ipywidgets (tqdm's widget bar) and once with ipywidgets made
unimportable in the kernel (the text bar, and no "IProgress not found" TqdmWarning). They skip
without those packages (the ``test`` extra installs them); in CI a skip fails the run (conftest.py).
"""

import base64
import html
import json
import os
import re
import sys

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.outputs import notebook


def _model(d):
    return d["a"] ** 2 + 3 * d["b"] + (d["c"] == "x")


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.uniform(size=200), "b": rng.uniform(size=200), "c": pd.Categorical(rng.choice(list("xyz"), 200))})


def _cells(page: str) -> list[list[str]]:
    """The body rows of the page's table, as text."""
    body = re.search(r"<tbody>(.*?)</tbody>", page, re.S).group(1)
    return [[html.unescape(c).strip() for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def _png(page: str) -> bytes:
    found = re.search(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert found, "no inline PNG"
    return base64.b64decode(found.group(1))


# ------------------------------------------------------------------ the page
def test_a_result_shows_its_header_table_head_and_figure(X):
    pytest.importorskip("plotnine")
    import matplotlib.pyplot as plt

    res = pdpx.partial_dependence(_model, X, ["a"], kind="both", grid_resolution=12)
    open_before = plt.get_fignums()
    page = res._repr_html_()
    assert plt.get_fignums() == open_before  # the figure is closed: the notebook shows no second copy
    assert "PartialDependenceResult" in page
    for fact in ("<b>features</b> a", "<b>method</b> brute", "<b>kind</b> both", "<b>grid</b> 12 point(s)",
                 "<b>ICE curves</b> 200"):
        assert fact in page
    assert "the first 10 of 2,412 rows" in page  # 12 average rows + 200 x 12 ICE rows
    frame = res.to_frame().head(10)
    rows = _cells(page)
    assert len(rows) == 10
    # the table is the head of to_frame(): the PD, which is the model's predictions averaged
    for row, (_, want) in zip(rows, frame.iterrows()):
        assert row[0] == "a" and row[2] == "average"
        x = float(row[6])
        assert x == pytest.approx(want["x_1"], rel=1e-5)
        by_definition = _model(X.assign(a=want["x_1"])).mean()
        assert float(row[-1]) == pytest.approx(by_definition, rel=1e-5)
    assert _png(page).startswith(b"\x89PNG")


def test_every_result_users_see_has_a_page(X):
    pytest.importorskip("plotnine")
    results = {
        "PartialDependenceCollection": pdpx.partial_dependence_many(_model, X, ["a", "c"], grid_resolution=5),
        "StackedResult": pdpx.partial_dependence({"m": _model, "n": lambda d: d["a"]}, X, ["a"], grid_resolution=5),
        "ALEResult": pdpx.ale(_model, X, ["a"], grid_resolution=5),
        "DerivativeResult": pdpx.derivative_ice(_model, X, ["a"], grid_resolution=5),
        "HStatistic": pdpx.h_statistic(_model, X, ["a", "b"]),
    }
    for name, res in results.items():
        page = res._repr_html_()
        assert page is not None and name in page, name
        rows = _cells(page)
        head = res.to_frame().head(notebook.TABLE_ROWS)
        assert len(rows) == len(head), name
        assert float(rows[0][list(head.columns).index("h" if name == "HStatistic" else "yhat")]) == pytest.approx(
            head.iloc[0]["h" if name == "HStatistic" else "yhat"], rel=1e-5, abs=1e-12), name
        assert _png(page).startswith(b"\x89PNG"), name


def test_a_method_comparison_has_a_page():
    ensemble = pytest.importorskip("sklearn.ensemble")
    pytest.importorskip("plotnine")
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.uniform(size=300), "b": rng.uniform(size=300)})
    model = ensemble.GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, X.a * X.b)
    cmp = pdpx.compare_methods(model, X, ["a"], grid_resolution=6)
    page = cmp._repr_html_()
    assert "MethodComparison" in page and "max |recursion − exact|" in page
    assert len(_cells(page)) == 6
    assert _png(page).startswith(b"\x89PNG")


def test_a_big_result_is_summarised_without_drawing_or_building_its_frame(X, monkeypatch):
    res = pdpx.partial_dependence(_model, X, ["a"], kind="both", custom_values={"a": np.linspace(0, 1, 300)})
    n_grid = len(res.grid_values[0])
    assert 200 * n_grid > notebook.FIGURE_POINTS
    built = []
    real = type(res).to_frame

    def spy(self, **kw):
        built.append(kw.get("kind"))
        return real(self, **kw)

    monkeypatch.setattr(type(res), "to_frame", spy)
    page = res._repr_html_()
    assert built == ["average"]  # the table's head came from the 300 average rows, not the 60,300-row frame
    assert "<img" not in page and "call res.plot() to draw it" in page
    assert f"the first 10 of {201 * n_grid:,} rows" in page


def test_a_large_ice_only_frame_is_not_built(X, monkeypatch):
    res = pdpx.partial_dependence(_model, X, ["a"], kind="individual", grid_resolution=20)
    monkeypatch.setattr(notebook, "TABLE_BYTES", 1000)
    page = res._repr_html_()
    assert "res.to_frame() gives the table" in page and "<tbody>" not in page


def test_without_plotnine_the_page_says_how_to_get_the_figure(X, monkeypatch):
    monkeypatch.setitem(sys.modules, "plotnine", None)
    page = pdpx.partial_dependence(_model, X, ["a"], grid_resolution=5)._repr_html_()
    assert "<img" not in page and "pip install &#x27;pdpx[plot]&#x27;" in page
    assert len(_cells(page)) == 5


def test_notes_are_shown_escaped(X):
    res = pdpx.partial_dependence(_model, X, ["a"], grid_resolution=5)
    res.notes.append("<script>alert(1)</script> & more")
    page = res._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page


def test_a_part_that_fails_is_replaced_by_a_line(X, monkeypatch):
    res = pdpx.partial_dependence(_model, X, ["a"], grid_resolution=5)

    def broken(self, **kw):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(type(res), "to_frame", broken)
    page = res._repr_html_()
    assert "table not shown: RuntimeError: disk on fire" in page
    assert "<b>features</b> a" in page  # the rest of the page is still there


def test_a_failing_page_falls_back_to_the_repr(X, monkeypatch):
    from pdpx.outputs.draw import PlotnineBackend

    def broken(self, result):
        raise RuntimeError("no page")

    monkeypatch.setattr(PlotnineBackend, "html", broken)
    res = pdpx.partial_dependence(_model, X, ["a"], grid_resolution=5)
    assert res._repr_html_() is None  # Jupyter shows repr(res) then
    IPython = pytest.importorskip("IPython")
    data, _ = IPython.core.formatters.DisplayFormatter().format(res)
    assert "text/html" not in data and data["text/plain"] == repr(res)


# ------------------------------------------------------------------ a real kernel
SETUP = """\
import os, sys, time, warnings
warnings.simplefilter("always")  # every warning printed, none hidden by Python's once-per-place rule
{hide_widgets}
import numpy as np
import pandas as pd
import pdpx
from pdpx.core import progress
progress.DELAY = 0.5  # the default bar waits 3 s; 0.5 s keeps this test short (the rule is the same)
rng = np.random.default_rng(0)
X = pd.DataFrame({{"a": rng.uniform(size=100), "b": rng.uniform(size=100)}})

def slow(d):  # 0.05 s per predict call: 30 grid points take 1.5 s, three times the bar's delay
    time.sleep(0.05)
    return 2 * d["a"] + d["b"]
"""
LONG_RUN = ('res = pdpx.partial_dependence(slow, X, ["a"], method="brute", grid_resolution=30, '
            'method_options={"stack": False})')
QUICK_RUN = 'quick = pdpx.partial_dependence(lambda d: 2 * d["a"] + d["b"], X, ["a"], grid_resolution=30)'
CI_RUN = 'os.environ["CI"] = "true"\n' + LONG_RUN.replace("res =", "in_ci =") + '\ndel os.environ["CI"]'
REPORT = ('out = pdpx.report(lambda d: 2 * d["a"] + d["b"], X, "report.html", method="brute", grid_resolution=8, '
          'ice_sample=10, dpi=30)')


def _run_notebook(tmp_path, monkeypatch, cells: list[str]):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("plotnine")
    # a kernel of this very interpreter (a "python3" kernel installed elsewhere may lack pdpx)
    spec = tmp_path / "jupyter" / "kernels" / "pdpx-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "pdpx test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    env = dict(os.environ)
    env.pop("CI", None)  # a person at a notebook; the CI rule is checked inside the notebook
    env.pop("MPLBACKEND", None)  # the kernel's own (inline) matplotlib backend, as in Jupyter
    client = nbclient.NotebookClient(nb, timeout=180, kernel_name="pdpx-test",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=env)
    return nb.cells


def _stderr(outputs) -> str:
    return "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream" and o.get("name") == "stderr")


def _widgets(outputs) -> list:
    return [o for o in outputs if o.get("output_type") == "display_data"
            and "application/vnd.jupyter.widget-view+json" in o.get("data", {})]


def _check_result_cell(cell):
    """The result's display: text/html with the table, whose first row is the PD at the first grid point."""
    (shown,) = cell.outputs  # one output: the page (no second figure from an unclosed matplotlib figure)
    page = shown["data"]["text/html"]
    assert "PartialDependenceResult" in page and "to_frame(): the first 10 of 30 rows" in page
    rows = _cells(page)
    assert len(rows) == notebook.TABLE_ROWS
    assert _png(page).startswith(b"\x89PNG")
    return rows


def test_notebook_with_ipywidgets_shows_the_widget_bar_and_a_rich_result(tmp_path, monkeypatch):
    pytest.importorskip("ipywidgets")
    cells = _run_notebook(tmp_path, monkeypatch, [SETUP.format(hide_widgets=""), LONG_RUN, QUICK_RUN, CI_RUN, "res",
                                     "float(res.grid_values[0][0]), float(X['b'].mean())"])
    setup, long_run, quick, in_ci, result, check = cells
    assert not setup.outputs
    assert _widgets(long_run.outputs), long_run.outputs  # tqdm's notebook bar
    assert "Warning" not in _stderr(long_run.outputs)
    assert not quick.outputs  # quick work: no bar, no widget
    assert not in_ci.outputs  # CI: no bar by default, even in a notebook
    rows = _check_result_cell(result)
    x0, b_mean = eval(check.outputs[0]["data"]["text/plain"])
    assert float(rows[0][6]) == pytest.approx(x0, rel=1e-5)
    assert float(rows[0][-1]) == pytest.approx(2 * x0 + b_mean, rel=1e-5)  # the slow model's PD, by definition


def test_notebook_without_ipywidgets_shows_a_text_bar_and_no_warning(tmp_path, monkeypatch):
    hide = 'sys.modules["ipywidgets"] = None  # ipywidgets not installed, as far as this kernel can tell'
    cells = _run_notebook(tmp_path, monkeypatch, [SETUP.format(hide_widgets=hide), LONG_RUN, REPORT, "res"])
    setup, long_run, report, result = cells
    assert not setup.outputs
    assert not _widgets(long_run.outputs)
    err = _stderr(long_run.outputs)
    assert "pdpx brute" in err and re.search(r"\d+/30 \[", err), err  # tqdm's text bar
    for cell in (long_run, report):
        text = _stderr(cell.outputs) + "".join(o.get("text", "") for o in cell.outputs)
        assert "Warning" not in text and "IProgress" not in text, text
    assert "pdpx report" in _stderr(report.outputs)  # report's bar (progress=True by default), as text
    assert (tmp_path / "report.html").exists()
    _check_result_cell(result)


def test_the_measures_of_heterogeneity_show_their_table_and_figure():
    from pdpx.outputs.notebook import TABLE_ROWS

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, (300, 3)), columns=["a", "b", "c"])

    def f(d):
        return 3 * d["a"].to_numpy() * np.sign(d["b"].to_numpy()) + d["c"].to_numpy()

    for res in (pdpx.heterogeneity(f, X, method="brute", grid_resolution=6),
                pdpx.regions(f, X, "a", method="brute", grid_resolution=6, ice=True),
                pdpx.explained_variance(f, X, method="brute")):
        page = res._repr_html_()
        frame = res.to_frame(kind="average") if isinstance(res, pdpx.RegionsResult) else res.to_frame()
        first = frame.iloc[0]
        assert "<img" in page and "data:image/png;base64," in page, type(res).__name__
        caption = (f"to_frame(): the first {TABLE_ROWS} of {len(frame):,} rows" if len(frame) > TABLE_ROWS
                   else f"to_frame(): {len(frame):,} rows")
        assert caption in page, type(res).__name__  # the averages: a regions result's ICE rows are not built
        assert "<table" in page and str(first.iloc[0]) in page
