"""The public surface: dir(pdpx) is __all__, docs/api.md lists it, old names warn and answer as the new ones,
importance returns a result that is its table and draws itself."""

from __future__ import annotations

import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx import reporting
from pdpx.core.deprecation import REMOVED_IN
from pdpx.core.drawing import Drawable

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ["feature", "output", "importance", "feature_type", "kind", "n_grid"]


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(0, 2, n), "c": rng.normal(size=n),
                         "g": pd.Categorical(rng.choice(["u", "v", "w"], n))})


def _model(d):
    """2a + b^2 + a*c + the level of g: a function, so the measure's definition is written out below."""
    level = d["g"].astype(str).map({"u": 0.0, "v": 1.0, "w": -2.0}).to_numpy()
    return 2 * d["a"].to_numpy() + d["b"].to_numpy() ** 2 + d["a"].to_numpy() * d["c"].to_numpy() + level


def _deprecation(record, new: str):
    """The one DeprecationWarning recorded: it names the new spelling and the release, and points at this file."""
    dep = [w for w in record if issubclass(w.category, DeprecationWarning)]
    assert len(dep) == 1, [str(w.message) for w in record]
    text = str(dep[0].message)
    assert new in text and f"pdpx {REMOVED_IN}" in text, text
    assert Path(dep[0].filename).resolve() == Path(__file__).resolve(), dep[0].filename  # the caller's line
    return text


# ---------------------------------------------------------------- the names

def test_dir_shows_exactly_the_public_names():
    dunders = {n for n in vars(pdpx) if n.startswith("__") and n.endswith("__")}
    assert dir(pdpx) == sorted(set(pdpx.__all__) | dunders)
    assert len(pdpx.__all__) == len(set(pdpx.__all__))
    lazy = {"report", "importance", "h_statistic", "ale", "derivative_ice", "compare_methods", "plot_importance",
            "HStatistic", "ALEResult", "DerivativeResult", "MethodComparison", "ImportanceResult"}
    assert lazy <= set(dir(pdpx))
    for sub in ("api", "core", "explain", "outputs", "reporting", "adapters", "plugins"):
        __import__(f"pdpx.{sub}")  # imported submodules are attributes of the package, yet not public names
        assert hasattr(pdpx, sub) and sub not in dir(pdpx), sub


def test_docs_api_lists_every_public_name_once():
    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split("\n## Public names\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([^`]+)` \|", section, re.M)
    assert sorted(listed) == sorted(pdpx.__all__)
    assert len(listed) == len(set(listed))


def test_every_public_name_in_all_is_documented_with_its_type():
    """ImportanceResult is importable from pdpx and is what importance is annotated to return."""
    import typing

    assert typing.get_type_hints(pdpx.importance)["return"] is pdpx.ImportanceResult
    assert issubclass(pdpx.ImportanceResult, pd.DataFrame) and issubclass(pdpx.ImportanceResult, Drawable)


# ---------------------------------------------------------------- importance's result

def _definition(X, grids):
    """Greenwell et al.'s measure written out: the PD curve on the grid by setting the column (keeping its dtype)
    and averaging the model's output, then sd (ddof=1) for numbers, range / 4 for categories."""
    out = {}
    for col, grid in grids.items():
        pd_curve = []
        for v in grid:
            Z = X.copy()
            Z[col] = pd.Series([v] * len(Z), index=Z.index, dtype=X[col].dtype)
            pd_curve.append(_model(Z).mean())
        pd_curve = np.array(pd_curve)
        cat = isinstance(X[col].dtype, pd.CategoricalDtype)
        out[col] = (pd_curve.max() - pd_curve.min()) / 4 if cat else pd_curve.std(ddof=1)
    return out


def test_importance_returns_a_result_that_is_its_table_and_equals_the_definition():
    X = _data()
    grids = {"a": [-1.0, 0.0, 0.5, 2.0], "b": [0.0, 1.0, 2.0], "c": [-1.0, 1.0], "g": ["u", "v", "w"]}
    imp = pdpx.importance(_model, X, custom_values={k: v for k, v in grids.items() if k != "g"})
    want = _definition(X, grids)
    assert isinstance(imp, pdpx.ImportanceResult) and isinstance(imp, pd.DataFrame)
    frame = imp.to_frame()
    assert type(frame) is pd.DataFrame and list(frame.columns) == COLUMNS
    pd.testing.assert_frame_equal(frame, pd.DataFrame(imp))
    got = frame.set_index("feature")["importance"]
    for col, v in want.items():
        assert got[col] == pytest.approx(v, rel=1e-12, abs=1e-12), col
    assert list(frame.feature) == sorted(want, key=lambda c: -want[c])  # most important first
    # DataFrame operations of a user of the old frame: they work, and what they derive is a plain DataFrame
    top = imp.head(2)
    assert type(top) is pd.DataFrame and list(top.feature) == list(frame.feature[:2])
    assert imp.set_index("feature").loc["g", "feature_type"] == "categorical"
    assert imp.importance.is_monotonic_decreasing
    back = pickle.loads(pickle.dumps(imp))
    assert type(back) is pdpx.ImportanceResult
    pd.testing.assert_frame_equal(pd.DataFrame(back), frame)


def test_importance_result_repr_skipped_and_to_frame_is_a_copy():
    X = _data()[["a", "g"]].assign(k=1.0)
    imp = pdpx.importance(lambda d: 2 * d["a"].to_numpy(), X, grid_resolution=5)  # every column: k is left out
    text = repr(imp)
    first, rest = text.split("\n", 1)
    assert first == "ImportanceResult: 2 features x 1 output, kind pd, 1 skipped; .plot(), .to_frame()"
    assert rest == repr(imp.to_frame())
    assert set(imp.skipped) == {"k"} and "constant" in imp.skipped["k"]
    assert imp.to_frame().attrs["skipped"] == imp.skipped
    frame = imp.to_frame()
    frame.loc[0, "importance"] = -1.0
    assert imp.importance.iloc[0] != -1.0


def test_importance_result_plot_draws_the_bars_of_its_table(tmp_path):
    pytest.importorskip("plotnine")
    from pdpx.outputs.plot import layer_data

    X = _data()
    imp = pdpx.importance(_model, X, grid_resolution=6)
    p = imp.plot()
    p.draw()
    bars = layer_data(p, 0)
    assert sorted(np.round(bars["y"].to_numpy(float), 12)) == sorted(np.round(imp.importance.to_numpy(float), 12))
    top = imp.plot(top=2)
    top.draw()
    assert len(layer_data(top, 0)) == 2
    out = imp.save(tmp_path / "imp.png", dpi=40)
    assert out.exists() and out.stat().st_size > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pdpx's own plot warns nothing
        imp.plot(title="t")


def test_pandas_plotting_of_the_table_still_works_and_warns():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    X = _data()
    imp = pdpx.importance(_model, X, grid_resolution=6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ax = imp.plot.barh(x="feature", y="importance")
    _deprecation(caught, "to_frame().plot.barh")
    widths = sorted(round(p.get_width(), 12) for p in ax.patches)
    assert widths == sorted(np.round(imp.importance.to_numpy(float), 12))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ax = imp.plot(x="feature", y="importance", kind="bar")
    _deprecation(caught, "to_frame().plot(")
    assert sorted(round(p.get_height(), 12) for p in ax.patches) == widths


# ---------------------------------------------------------------- deprecated arguments

def test_kind_derivative_warns_and_equals_derivative_ice():
    X = _data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = pdpx.partial_dependence(_model, X, "a", kind="derivative", grid_resolution=7, ice_sample=30)
    _deprecation(caught, "pdpx.derivative_ice(")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = pdpx.derivative_ice(_model, X, "a", grid_resolution=7, ice_sample=30)
    assert type(old) is type(new) is pdpx.DerivativeResult
    np.testing.assert_array_equal(old.grid_values[0], new.grid_values[0])
    np.testing.assert_array_equal(old.average, new.average)
    np.testing.assert_array_equal(old.individual, new.individual)
    np.testing.assert_array_equal(old.sd, new.sd)
    # and both are the derivative of 2a + b^2 + a*c along a: 2 + c of each row
    rows = np.asarray(new.ice_rows)
    slopes = np.broadcast_to((2 + X["c"].to_numpy()[rows])[:, None], new.individual[0].shape)
    np.testing.assert_allclose(new.individual[0], slopes, rtol=1e-9, atol=1e-9)


@pytest.fixture
def pages(monkeypatch):
    """What each report hands the page (its rows, ICE rows, seed, curves), instead of writing the HTML."""
    seen = []

    class Recorder:
        def __init__(self, **kwargs):
            seen.append(kwargs)

        def render(self):
            return "<html></html>"

    monkeypatch.setattr(reporting, "Page", Recorder)
    return seen


def _report(tmp_path, name, **kwargs):
    X = _data(n=120)
    return pdpx.report(_model, X, tmp_path / f"{name}.html", features=["a", "c"], interactions=None,
                       heterogeneity=None, method="brute", grid_resolution=5, dpi=20, progress=False, **kwargs)


@pytest.mark.parametrize("old, new, value", [("n_ice", "ice_sample", 7), ("seed", "random_state", 3),
                                             ("max_rows", "sample", 50)])
def test_report_old_argument_warns_and_equals_the_new_one(tmp_path, pages, old, new, value):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _report(tmp_path, "old", **{old: value})
    _deprecation(caught, f"report({new}=...)")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        _report(tmp_path, "new", **{new: value})
        _report(tmp_path, "default")
    got, want, default = pages
    assert got["seed"] == want["seed"] and got["n_ice"] == want["n_ice"]
    pd.testing.assert_frame_equal(got["frame"], want["frame"])
    differs = False
    for r_old, r_new, r_def in zip(got["results"], want["results"], default["results"], strict=True):
        np.testing.assert_array_equal(r_old.average, r_new.average)
        np.testing.assert_array_equal(r_old.individual, r_new.individual)
        np.testing.assert_array_equal(_rows(r_old), _rows(r_new))
        differs |= not (np.array_equal(_rows(r_new), _rows(r_def)) and np.array_equal(r_new.average, r_def.average))
    assert differs, f"{new}={value} changed nothing: the comparison could not fail"
    # what the new name means, from the rows: a seeded sample of that many rows, or that many ICE curves
    if new == "sample":
        assert len(want["frame"]) == value and want["sampled_from"] == 120
    if new == "ice_sample":
        assert all(len(r.ice_rows) == value for r in want["results"])


def _rows(res) -> np.ndarray:
    """The rows of X whose ICE curves a result holds (every row when it holds them all)."""
    return np.arange(res.individual.shape[1]) if res.ice_rows is None else np.asarray(res.ice_rows)


def test_report_refuses_an_old_and_a_new_name_together_and_checks_the_old_one(tmp_path, pages):
    with pytest.raises(pdpx.PdpxError, match=r"report\(\): pass random_state= only; seed= is its old name"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            _report(tmp_path, "both", seed=1, random_state=2)
    with pytest.raises(pdpx.PdpxError, match=r"report\(\): n_ice must be an int"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            _report(tmp_path, "bad", n_ice=0)
    assert not pages  # refused before any work


@pytest.mark.parametrize("kwargs, error, text", [
    ({"ice_sample": 0}, pdpx.PdpxError, "report(): ice_sample must be an integer >= 1"),
    ({"random_state": "x"}, pdpx.PdpxTypeError, "report(): random_state must be an integer >= 0"),
    ({"sample": -1}, pdpx.PdpxError, "report(): sample must be an integer >= 1"),
])
def test_report_checks_the_new_names(tmp_path, pages, kwargs, error, text):
    with pytest.raises(error) as info:
        _report(tmp_path, "bad", **kwargs)
    assert text in str(info.value)
    assert not pages


def test_the_deprecated_names_go_in_a_later_release_than_this_one():
    """The warnings promise one more release: the release they name comes after the installed version (when it
    arrives, the old names are to be removed, and this test says so)."""
    def parts(v):
        return tuple(int(x) for x in re.match(r"(\d+)\.(\d+)\.(\d+)", v).groups())

    assert parts(REMOVED_IN) > parts(pdpx.__version__), (REMOVED_IN, pdpx.__version__)
    assert f"pdpx {REMOVED_IN}" in (ROOT / "docs" / "api.md").read_text()
    assert f"pdpx {REMOVED_IN}" in pdpx.partial_dependence.__doc__
    assert f"pdpx {REMOVED_IN}" in pdpx.report.__doc__


def test_the_plot_keywords_are_plot_importances():
    """``imp.plot(**kw)`` draws pdpx's figure for exactly plot_importance's keywords (any other goes to pandas)."""
    import inspect

    from pdpx.explain.pd_importance import PLOT_OPTIONS

    params = inspect.signature(pdpx.plot_importance).parameters.values()
    assert set(PLOT_OPTIONS) == {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
