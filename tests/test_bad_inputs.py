"""Every public function, fed bad arguments: the right error type, a message naming the argument
and the value, and nothing computed or written.

One table per function, in the manner of scikit-learn's parameter validation tests.
A counting model records every row it is asked to predict: a bad call may at most
probe one row (to learn the model's outputs), never compute.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx import PdpxError
from pdpx.core.errors import PdpxTypeError


class CountingModel:
    """``2 a + b``, counting the rows it predicts."""

    def __init__(self):
        self.rows = 0

    def predict(self, X):
        self.rows += len(X)
        return 2 * X["a"].to_numpy(dtype=float) + X["b"].to_numpy(dtype=float)


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60),
                         "g": pd.Categorical(rng.choice(["u", "v"], 60))})


T, V = PdpxTypeError, PdpxError

# (option, value, error type, text the message must contain)
PD_CASES = [
    ("kind", "avg", V, "kind must be one of 'average'"),
    ("kind", None, T, "kind must be"),
    ("method", ["exact"], T, "method must be a method name"),
    ("method", "fastest", V, "unknown method 'fastest'"),
    ("response", "proba", V, "response must be one of 'auto'"),
    ("grid_resolution", 1, V, "grid_resolution must be an integer >= 2; got 1"),
    ("grid_resolution", 2.5, T, "grid_resolution must be an integer"),
    ("grid_resolution", True, T, "grid_resolution must be an integer"),
    ("percentiles", (0.9, 0.1), V, "did you mean (0.1, 0.9)"),
    ("percentiles", (5, 95), V, "fractions: did you mean (0.05, 0.95)"),
    ("percentiles", "0.05,0.95", T, "percentiles must be a pair"),
    ("percentiles", (0.0, float("nan")), V, "percentiles must be a pair"),
    ("custom_values", [1, 2], T, "custom_values must be a dict"),
    ("custom_values", {"a": [0.0, float("inf")]}, V, "custom_values for 'a' contains an infinite value"),
    ("custom_values", {"zz": [1.0]}, V, "unknown custom_values key 'zz'"),
    ("categorical_features", 3.5, T, "categorical_features must be"),
    ("categorical_features", "zz", V, "unknown categorical feature 'zz'"),
    ("categorical_features", [True, False], V, "boolean mask needs one entry per column of X (3), got 2"),
    ("sample_weight", "heavy", T, "sample_weight must be an array"),
    ("sample_weight", np.ones(3), V, "sample_weight must have one weight per row of X (60)"),
    ("sample_weight", np.r_[np.nan, np.ones(59)], V, "sample_weight contains NaN"),
    ("centered", "no", T, "centered must be True or False; got 'no' (a str)"),
    ("centered", 1, T, "centered must be True or False"),
    ("n_jobs", "2", T, "n_jobs must be a nonzero integer"),
    ("n_jobs", 0, V, "n_jobs must be a nonzero integer"),
    ("n_jobs", 1.5, T, "n_jobs must be"),
    ("progress", "yes", T, "progress must be True or False, or None"),
    ("memory_budget", float("inf"), V, "memory_budget must be a number of bytes"),
    ("memory_budget", float("nan"), V, "memory_budget must be a number of bytes"),
    ("memory_budget", "lots", V, "memory_budget 'lots' not understood"),
    ("memory_budget", 10, V, "too small"),
    ("memory_budget", [1], T, "memory_budget must be"),
    ("ice_sample", 0, V, "ice_sample must be an integer >= 1"),
    ("ice_sample", "10", T, "ice_sample must be"),
    ("random_state", "abc", T, "random_state must be an integer >= 0"),
    ("random_state", -1, V, "random_state must be an integer >= 0"),
    ("method_options", "x", T, "method_options must be a dict"),
    ("method_options", {"kernel": "fast"}, V, "method_options ['kernel'] are not options of method 'brute'"),
    ("method_options", {"speed": 1}, V, "method_options ['speed'] are not options of method"),
    ("target", "zz", V, "target 'zz' is not an output of this model"),
]


@pytest.mark.parametrize("name, value, error, text", PD_CASES,
                         ids=[f"{c[0]}={c[1]!r}"[:40] for c in PD_CASES])
def test_partial_dependence_refuses_bad_options_before_any_work(X, name, value, error, text):
    model = CountingModel()
    with pytest.raises(error) as info:
        pdpx.partial_dependence(model, X, "a", **{name: value})
    assert text in str(info.value)
    assert name.split("_")[0] in str(info.value)  # the message names the argument
    assert model.rows <= 1  # at most the one-row probe that learns the outputs


FEATURE_CASES = [
    (None, T, "features must be"),
    (True, T, "features must be"),
    ([], V, "features is empty"),
    ("aa", V, "unknown feature 'aa'"),
    (7, V, "feature index 7 is out of range"),
    (["a", "a"], V, "lists ['a'] more than once"),
    ([1.5], T, "a feature must be a column name or an integer position, got 1.5"),
]


@pytest.mark.parametrize("features, error, text", FEATURE_CASES, ids=[repr(c[0]) for c in FEATURE_CASES])
def test_bad_features(X, features, error, text):
    model = CountingModel()
    with pytest.raises(error, match=None) as info:
        pdpx.partial_dependence(model, X, features)
    assert text in str(info.value)
    assert model.rows <= 1


@pytest.mark.parametrize("bad, error, text", [
    ({"feature_sets": "a"}, T, "feature_sets must be a list of feature sets"),
    ({"feature_sets": [], }, V, "feature_sets is empty"),
    ({"grid.resolution": 10}, T, "unknown option(s) ['grid.resolution']"),
    ({"kind": "x"}, V, "partial_dependence_many(): kind must be one of"),
    ({"n_jobs": "2"}, T, "partial_dependence_many(): n_jobs must be"),
])
def test_partial_dependence_many_refuses(X, bad, error, text):
    model = CountingModel()
    with pytest.raises(error) as info:
        pdpx.partial_dependence_many(model, X, **bad)
    assert text in str(info.value)
    assert model.rows <= 1


REPORT_CASES = [
    ({"path": 3}, T, "path must be a file path"),
    ({"features": "a"}, T, "features must be a list of column names"),
    ({"features": ["a", "aa"]}, V, "unknown feature 'aa'"),
    ({"interactions": "some"}, V, "interactions must be one of 'auto'"),
    ({"interactions": -1}, V, "interactions must be"),
    ({"interactions": [("a", "zz")]}, V, "unknown feature 'zz'"),
    ({"n_ice": 0}, V, "n_ice must be an integer >= 1"),
    ({"dpi": 0}, V, "dpi must be an integer from 1 to 2400"),
    ({"seed": "x"}, T, "seed must be"),
    ({"max_rows": -1}, V, "max_rows must be an integer >= 1"),
    ({"image_format": "jpg"}, V, "image_format must be one of 'png', 'svg'"),
    ({"progress": "no"}, T, "progress must be True or False"),
    ({"pair_grid_resolution": 1}, V, "pair_grid_resolution must be"),
    ({"title": 5}, T, "title must be a title"),
    ({"grid_resolution": 1}, V, "report(): grid_resolution must be an integer >= 2"),
    ({"centered": "no"}, T, "report(): centered must be True or False"),
    ({"gridresolution": 10}, T, "unknown option(s) ['gridresolution']"),
]


@pytest.mark.parametrize("bad, error, text", REPORT_CASES, ids=[next(iter(c[0])) + "=" + repr(next(iter(c[0].values())))
                                                                 for c in REPORT_CASES])
def test_report_refuses_before_any_work_and_writes_nothing(X, tmp_path, bad, error, text):
    model = CountingModel()
    target = tmp_path / "old.html"
    target.write_text("previous report")
    kwargs = {"path": target, **bad}
    path = kwargs.pop("path")
    with pytest.raises(error) as info:
        pdpx.report(model, X, path, progress=kwargs.pop("progress", False), **kwargs)
    assert text in str(info.value)
    assert model.rows <= 1
    assert target.read_text() == "previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.html"]


def test_report_refuses_an_unwritable_path_before_any_work(X, tmp_path):
    model = CountingModel()
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        import os

        if os.access(folder, os.W_OK):  # root can write anywhere: use a path under a file instead
            (tmp_path / "file").write_text("x")
            bad = tmp_path / "file" / "r.html"
        else:
            bad = folder / "r.html"
        with pytest.raises(PdpxError, match="cannot be written|is a file, not a folder"):
            pdpx.report(model, X, bad, progress=False)
        assert model.rows <= 1
    finally:
        folder.chmod(0o700)
    with pytest.raises(PdpxError, match="is a folder"):
        pdpx.report(model, X, tmp_path, progress=False)


PLOT_CASES = [
    ({"n_ice": 0}, V, "n_ice must be a number of ICE curves"),
    ({"n_ice": "all"}, T, "n_ice must be"),
    ({"seed": -2}, V, "seed must be an integer >= 0"),
    ({"ice": "yes"}, T, "ice must be True or False"),
    ({"rug": None}, T, "rug must be True or False"),
    ({"ice_alpha": 0}, V, "ice_alpha must be a finite number > 0 and <= 1"),
    ({"ice_alpha": 2}, V, "ice_alpha must be"),
    ({"base_size": -1}, V, "base_size must be"),
    ({"centered": "yes"}, T, "centered must be True or False"),
    ({"colour": "red"}, T, "unknown option(s) ['colour']"),
]


@pytest.mark.parametrize("bad, error, text", PLOT_CASES, ids=[repr(c[0]) for c in PLOT_CASES])
def test_plot_and_save_refuse_bad_options(X, tmp_path, bad, error, text):
    pytest.importorskip("plotnine", reason="plotnine is installed with pdpx[plot]")
    res = pdpx.partial_dependence(CountingModel(), X, "a", kind="both", grid_resolution=5)
    coll = pdpx.partial_dependence_many(CountingModel(), X, ["a", "b"], grid_resolution=5)
    for call in (lambda: res.plot(**bad), lambda: coll.plot(**bad), lambda: res.save(tmp_path / "f.png", **bad)):
        with pytest.raises(error) as info:
            call()
        assert text in str(info.value)
    assert list(tmp_path.iterdir()) == []


SAVE_CASES = [
    ({"path": "fig.jpg"}, V, "must end in one of ['.png', '.svg', '.pdf']"),
    ({"path": 3}, T, "path must be a file path"),
    ({"dpi": 0}, V, "dpi must be an integer from 1 to 2400"),
    ({"dpi": "high"}, T, "dpi must be"),
    ({"width": -3, "height": 2}, V, "width must be a finite number > 0"),
    ({"width": 3}, V, "give both width and height"),
]


@pytest.mark.parametrize("bad, error, text", SAVE_CASES, ids=[repr(c[0]) for c in SAVE_CASES])
def test_save_refuses_before_drawing_and_writes_nothing(X, tmp_path, bad, error, text):
    pytest.importorskip("plotnine", reason="plotnine is installed with pdpx[plot]")
    from pdpx.outputs import plot as P

    res = pdpx.partial_dependence(CountingModel(), X, "a", grid_resolution=5)
    kwargs = {"path": tmp_path / "fig.png", **bad}
    path = kwargs.pop("path")
    if isinstance(path, str):
        path = tmp_path / path
    for call in (lambda: res.save(path, **kwargs), lambda: P.save(res.plot(), path, **kwargs)):
        with pytest.raises(error) as info:
            call()
        assert text in str(info.value)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(T, match="plot must be a plotnine figure"):
        P.save("not a plot", tmp_path / "f.png")


def test_to_frame_refuses_bad_arguments(X):
    res = pdpx.partial_dependence(CountingModel(), X, "a", grid_resolution=5)
    with pytest.raises(PdpxError, match="n_features must be an integer >= 1"):
        res.to_frame(n_features=0)
    with pytest.raises(PdpxError, match="kind must be None .* 'average' or 'individual'; got 'ice'"):
        res.to_frame(kind="ice")
    with pytest.raises(PdpxError, match="holds no ICE curves"):
        res.to_frame(kind="individual")
    with pytest.raises(PdpxError, match="memory_budget 'x' not understood"):
        res.to_frame(memory_budget="x")


@pytest.mark.parametrize("call, error, text", [
    (lambda: pdpx.set_config(memory_budget="lots"), V, "memory_budget 'lots' not understood"),
    (lambda: pdpx.set_config(memory_budget=float("inf")), V, "memory_budget must be a finite number of bytes"),
    (lambda: pdpx.set_config(memory_budget=True), T, "memory_budget must be a number of bytes"),
    (lambda: pdpx.config_context(memory_budget=0).__enter__(), V, "too small"),
    (lambda: pdpx.config_context(budget="1GB").__enter__(), T, "unknown setting(s) ['budget']"),
])
def test_settings_refuse_bad_values_and_keep_the_old_ones(call, error, text):
    before = pdpx.get_config()
    with pytest.raises(error) as info:
        call()
    assert text in str(info.value)
    assert pdpx.get_config() == before


def test_type_errors_are_also_builtin_type_errors_and_value_errors():
    assert issubclass(PdpxTypeError, TypeError) and issubclass(PdpxTypeError, ValueError)
    assert issubclass(PdpxTypeError, PdpxError)


@pytest.mark.parametrize("output, text", [
    (lambda X: np.ones(len(X) - 1), "returned 239 predictions for 240 rows"),
    (lambda X: np.array(["x"] * len(X)), "not numbers"),
    (lambda X: {"a": 1}, "returned a dict"),
    (lambda X: np.ones((len(X), 2, 2)), "shape (240, 2, 2)"),
    (lambda X: "text", "returned a str"),
])
def test_a_predict_that_returns_the_wrong_thing_is_the_models_fault(X, output, text):
    from pdpx.core.errors import ModelOutputError

    class Bad:
        def __init__(self):
            self.n = 0

        def predict(self, X):
            self.n += 1
            if self.n == 1:  # the probe gets a good answer; the computation does not
                return np.ones(len(X))
            return output(X)

    with pytest.raises(ModelOutputError) as info:
        pdpx.partial_dependence(Bad(), X, "a", method="brute", grid_resolution=4)
    assert "the model's predict" in str(info.value) and text in str(info.value)
