"""``pdpx.report`` never fails at the end of its work: NaN predictions are flagged on the page, a model whose repr
raises gets a stand-in name, and a matplotlib backend that cannot draw here is refused before any work."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine")
pytest.importorskip("sklearn")

from sklearn.linear_model import LinearRegression  # noqa: E402

import pdpx  # noqa: E402
from pdpx.core.errors import NonFiniteWarning  # noqa: E402
from pdpx.core.result import grid_label  # noqa: E402

FAST = dict(method="brute", grid_resolution=8, pair_grid_resolution=5, ice_sample=10, dpi=30, progress=False,
            heterogeneity=None)  # the section has tests of its own faults (test_report_heterogeneity.py)
THRESHOLD = 1.0


class NaNAbove(LinearRegression):
    """A linear model whose predictions are NaN wherever column ``a`` is above THRESHOLD."""

    def predict(self, X):
        out = super().predict(X)
        out[np.asarray(X, dtype=float)[:, 0] > THRESHOLD] = np.nan
        return out


class NoRepr(LinearRegression):
    """A model whose repr raises (as some wrappers' do when a field is missing)."""

    def __repr__(self, N_CHAR_MAX=700):
        raise RuntimeError("this model cannot print itself")


def _data(n=300):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X["a"] + X["b"] * X["c"]


def _flags(text: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r'<p class="flag nan">(.*?)</p>', text, flags=re.S)]


def test_nan_predictions_complete_the_report_and_the_page_says_where(tmp_path):
    X, y = _data()
    model = NaNAbove().fit(X, y)
    with pytest.warns(NonFiniteWarning):
        path = pdpx.report(model, X, tmp_path / "r.html", interactions=[("a", "b")], **FAST)
    text = path.read_text(encoding="utf-8")
    flags = _flags(text)
    # the definition: the PD of a at grid value v is the mean of predict with column a set to v, NaN where a > 1
    grid = pdpx.partial_dependence(LinearRegression().fit(X, y), X, ["a"], method="brute",
                                   grid_resolution=8).grid_values[0]
    nan_points = [v for v in grid if np.isnan(model.predict(X.assign(a=v)).mean())]
    assert nan_points and len(nan_points) < len(grid)
    summary = flags[0]
    assert "NaN" in summary and f"a ({len(nan_points)} of {len(grid)} grid points)" in summary
    # b and c: every row with a > 1 is NaN whatever b or c, so their PD is NaN everywhere
    assert f"b ({len(grid)} of {len(grid)} grid points)" in summary
    a_flag = next(f for f in flags[1:] if "a = " in f and "b = " not in f)
    assert f"{len(nan_points)} of {len(grid)} grid points" in a_flag
    # the flag names the grid points: each NaN point of a appears, as the page writes grid values
    for v in nan_points:
        assert f"a = {grid_label(v)}" in a_flag
    assert any("a = " in f and "b = " in f for f in flags)  # the 2-way PD of (a, b) is flagged too
    assert text.count("<img") >= 4  # every figure was drawn


def test_predictions_that_are_numbers_raise_no_flag(tmp_path):
    X, y = _data()
    text = pdpx.report(LinearRegression().fit(X, y), X, tmp_path / "ok.html", interactions=None, **FAST) \
        .read_text(encoding="utf-8")
    assert _flags(text) == []


def test_a_model_whose_repr_raises_still_gets_its_report(tmp_path):
    X, y = _data()
    model = NoRepr().fit(X, y)
    with pytest.raises(RuntimeError):
        repr(model)
    text = pdpx.report(model, X, tmp_path / "r.html", interactions=None, **FAST).read_text(encoding="utf-8")
    assert "NoRepr object: its repr raised RuntimeError" in html.unescape(text)
    assert "<title>Partial dependence of NoRepr</title>" in text


def test_a_dict_of_models_whose_repr_raises_still_gets_its_report(tmp_path):
    X, y = _data()
    models = {"plain": LinearRegression().fit(X, y), "odd": NoRepr().fit(X, y)}
    text = pdpx.report(models, X, tmp_path / "r.html", method="brute", grid_resolution=6, dpi=30,
                       progress=False).read_text(encoding="utf-8")
    assert "its repr raised RuntimeError" in html.unescape(text)


HEADLESS = """
import matplotlib
matplotlib.use("TkAgg")
import numpy as np, pandas as pd, pdpx
from sklearn.linear_model import LinearRegression
X = pd.DataFrame(np.random.default_rng(0).normal(size=(50, 2)), columns=["a", "b"])
model = LinearRegression().fit(X, X["a"])
import pdpx.core.session as S
real = S.Session.compute
def compute(*a, **k):
    print("computed", flush=True)
    return real(*a, **k)
S.Session.compute = compute
for call in ("report", "save"):
    try:
        if call == "report":
            pdpx.report(model, X, {path!r} + "/r.html", method="brute", progress=False)
        else:
            pdpx.partial_dependence(model, X, ["a"], method="brute").save({path!r} + "/f.png")
    except pdpx.PdpxError as exc:
        print(call, "refused:", exc, flush=True)
"""


def test_an_interactive_backend_without_a_display_is_refused_before_the_work(tmp_path):
    pytest.importorskip("tkinter")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(HEADLESS.format(path=str(tmp_path)))],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    report_line = next(line for line in lines if line.startswith("report refused:"))
    assert "'TkAgg'" in report_line and "no display" in report_line and "matplotlib.use('Agg')" in report_line
    assert lines[0].startswith("report refused:")  # before any feature was computed
    assert any(line.startswith("save refused:") and "MPLBACKEND=Agg" in line for line in lines)
    assert list(tmp_path.iterdir()) == []  # nothing written
