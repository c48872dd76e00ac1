"""pdpx.sklearn.PartialDependenceDisplay against scikit-learn's own display on the same inputs.

Each case calls both displays with the same arguments (scikit-learn's with
``method="brute"`` where pdpx's uses ``auto``: the numbers pdpx's ``auto`` promises) and
compares what code reads after drawing: ``pd_results``, the attributes' shapes and
which cells hold an artist, the lines' xy data and style, contour levels, bar heights,
heatmap values, labels, limits and legends. Where scikit-learn raises, pdpx must raise
the same type with the same message.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed")
matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is not installed (the display draws with it)")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.inspection import PartialDependenceDisplay as SkDisplay  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

import pdpx.sklearn.function as pdpx_function  # noqa: E402
from pdpx.sklearn import PartialDependenceDisplay, partial_dependence  # noqa: E402

N = 160
RNG = np.random.default_rng(3)
X = pd.DataFrame({
    "a": RNG.normal(size=N),
    "b": RNG.uniform(-2, 2, size=N),
    "c": RNG.normal(size=N),
    "d": RNG.integers(0, 3, size=N).astype(float),
})
X["c"] = X["c"] + 0.7 * X["a"]                       # correlated: recursion != brute
Y = X["a"] ** 2 + np.sin(2 * X["b"]) + 0.5 * X["c"] * X["d"] + RNG.normal(scale=0.1, size=N)
Y3 = pd.cut(Y, 3, labels=["lo", "mid", "hi"]).astype(str)
XC = X.assign(city=RNG.choice(["Oslo", "Lima", "Pune", "Kyiv"], N), size=RNG.choice(["S", "M", "L"], N))
YC = Y + XC["city"].map({"Oslo": 1.0, "Lima": -1.0, "Pune": 0.5, "Kyiv": 0.0}) * XC["size"].map(
    {"S": 1.0, "M": 2.0, "L": 3.0})


@pytest.fixture(scope="module")
def models():
    enc = make_column_transformer((OneHotEncoder(), ["city", "size"]), remainder="passthrough")
    return {
        "gb": GradientBoostingRegressor(n_estimators=25, max_depth=3, random_state=0).fit(X, Y),
        "hgb": HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, Y),
        "rf": RandomForestRegressor(12, max_depth=5, random_state=0).fit(X, Y),
        "linear": LinearRegression().fit(X, Y),
        "multiclass": GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, Y3),
        "logistic": LogisticRegression().fit(X, Y3),
        "multioutput": LinearRegression().fit(X, np.column_stack([Y, X["b"] - Y])),
        "categorical": make_pipeline(enc, GradientBoostingRegressor(n_estimators=20, random_state=0)).fit(XC, YC),
        "scaled": make_pipeline(StandardScaler(), GradientBoostingRegressor(n_estimators=20, random_state=0)).fit(X, Y),
    }


@pytest.fixture(autouse=True)
def _close_figures():
    plt.close("all")
    yield
    plt.close("all")


def _draw(cls, *args, ax_maker=None, **kw):
    """Draw on a fresh figure (the axes made by ``ax_maker`` if given); return the display or the error."""
    plt.figure()
    if ax_maker is not None:
        kw["ax"] = ax_maker()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return cls.from_estimator(*args, **kw), None
        except Exception as exc:  # noqa: BLE001 - the exception is what is compared
            return None, exc


def _same_artists(ours, theirs, name):
    a, b = getattr(ours, name), getattr(theirs, name)
    assert a.shape == b.shape, name
    assert [x is None for x in a.ravel()] == [x is None for x in b.ravel()], name


def _close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-7, atol=1e-9, **kw)


def assert_same_display(ours, theirs):
    """Everything code reads after drawing, compared artist by artist."""
    assert type(ours).__mro__[1] is SkDisplay and isinstance(ours, PartialDependenceDisplay)
    assert ours.features == theirs.features
    assert list(ours.feature_names) == list(theirs.feature_names)
    assert ours.target_idx == theirs.target_idx
    assert ours.kind == theirs.kind and ours.is_categorical == theirs.is_categorical
    assert sorted(ours.deciles) == sorted(theirs.deciles)
    for k in theirs.deciles:
        _close(ours.deciles[k], theirs.deciles[k])
    assert len(ours.pd_results) == len(theirs.pd_results)
    for mine, ref in zip(ours.pd_results, theirs.pd_results):
        assert list(mine) == list(ref)
        for g_mine, g_ref in zip(mine["grid_values"], ref["grid_values"]):
            np.testing.assert_array_equal(g_mine, g_ref)
        for key in ("average", "individual"):
            if key in ref:
                assert mine[key].shape == ref[key].shape
                _close(mine[key], ref[key], err_msg=key)
    assert (ours.bounding_ax_ is None) == (theirs.bounding_ax_ is None)
    for name in ("axes_", "lines_", "contours_", "bars_", "heatmaps_", "deciles_vlines_", "deciles_hlines_"):
        _same_artists(ours, theirs, name)
    for mine, ref in zip(ours.lines_.ravel(), theirs.lines_.ravel()):
        if ref is not None:
            _close(mine.get_xdata(), ref.get_xdata())
            _close(mine.get_ydata(), ref.get_ydata())
            assert (mine.get_color(), mine.get_linestyle(), mine.get_alpha(), mine.get_label()) == (
                ref.get_color(), ref.get_linestyle(), ref.get_alpha(), ref.get_label())
    for mine, ref in zip(ours.contours_.ravel(), theirs.contours_.ravel()):
        if ref is not None:
            _close(mine.levels, ref.levels)
            assert mine.get_cmap().name == ref.get_cmap().name
    for mine, ref in zip(ours.heatmaps_.ravel(), theirs.heatmaps_.ravel()):
        if ref is not None:
            _close(mine.get_array(), ref.get_array())
    for mine, ref in zip(ours.deciles_vlines_.ravel(), theirs.deciles_vlines_.ravel()):
        if ref is not None:
            _close(np.concatenate(mine.get_segments()), np.concatenate(ref.get_segments()))
    for ax_mine, ax_ref in zip(ours.axes_.ravel(), theirs.axes_.ravel()):
        if ax_ref is None:
            continue
        assert (ax_mine.get_xlabel(), ax_mine.get_ylabel()) == (ax_ref.get_xlabel(), ax_ref.get_ylabel())
        _close(ax_mine.get_ylim(), ax_ref.get_ylim())
        _close([p.get_height() for p in ax_mine.patches], [p.get_height() for p in ax_ref.patches])
        assert [t.get_text() for t in ax_mine.get_xticklabels()] == [t.get_text() for t in ax_ref.get_xticklabels()]
        assert [t.get_text() for t in ax_mine.texts] == [t.get_text() for t in ax_ref.texts]
        leg_mine, leg_ref = ax_mine.get_legend(), ax_ref.get_legend()
        assert (leg_mine is None) == (leg_ref is None)
        if leg_ref is not None:
            assert [t.get_text() for t in leg_mine.get_texts()] == [t.get_text() for t in leg_ref.get_texts()]
    assert len(ours.figure_.axes) == len(theirs.figure_.axes)


def same(model, X_, features, *, sk_method="brute", **kw):
    """Both displays on the same arguments (scikit-learn's with ``sk_method``): equal, or the same error."""
    sk_kw = dict(kw, method=sk_method) if sk_method is not None else dict(kw)
    theirs, their_exc = _draw(SkDisplay, model, X_, features, **sk_kw)
    ours, our_exc = _draw(PartialDependenceDisplay, model, X_, features, **kw)
    if their_exc is not None:
        assert our_exc is not None, f"scikit-learn raised {their_exc!r}; pdpx drew"
        assert type(our_exc).__name__ == type(their_exc).__name__, (our_exc, their_exc)
        assert isinstance(our_exc, type(their_exc).__mro__[1])
        assert _option_sets(str(our_exc)) == _option_sets(str(their_exc))
        return None
    assert our_exc is None, f"pdpx raised {our_exc!r}; scikit-learn drew"
    assert_same_display(ours, theirs)
    return ours


def _option_sets(message: str) -> str:
    # "a str among {...}": scikit-learn lists a set, in an order its compiled module fixes; compared as sets
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


# ------------------------------------------------------------------ figures, kinds and options
@pytest.mark.parametrize("name", ["gb", "hgb", "rf", "linear"])
def test_grid_of_one_and_two_way_plots(models, name):
    same(models[name], X, ["a", 1, ("a", "c"), ("b", "d")], grid_resolution=12, n_cols=2)


@pytest.mark.parametrize("kind,centered,subsample", [
    ("individual", False, 1000), ("both", True, 25), ("both", False, 0.3), ("individual", True, None),
])
def test_ice_and_centered_ice(models, kind, centered, subsample):
    disp = same(models["gb"], X, ["a", "b"], kind=kind, centered=centered, subsample=subsample, random_state=0,
                grid_resolution=10)
    if centered:
        assert all(line.get_ydata()[0] == 0 for line in disp.lines_.ravel())


def test_kind_per_plot_and_two_way_average(models):
    same(models["gb"], X, ["a", "c", ("a", "b")], kind=["both", "individual", "average"], random_state=1,
         subsample=15, grid_resolution=8)


def test_categorical_bars_and_heatmap(models):
    disp = same(models["categorical"], XC, ["city", ("city", "size"), "a"], categorical_features=["city", "size"],
                grid_resolution=10)
    assert disp.bars_[0, 0] is not None and disp.heatmaps_[0, 1] is not None
    heights = [p.get_height() for p in disp.axes_[0, 0].patches]
    model = models["categorical"]
    for city, height in zip(disp.pd_results[0]["grid_values"][0], heights):  # the definition: set, predict, mean
        assert height == pytest.approx(model.predict(XC.assign(city=city)).mean(), rel=1e-9)


def test_categorical_given_by_mask_and_position(models):
    mask = [c in ("city", "size") for c in XC.columns]
    same(models["categorical"], XC, ["size"], categorical_features=mask)
    same(models["categorical"], XC, [("size", "city")], categorical_features=[5, 4])


@pytest.mark.parametrize("target", ["lo", "hi"])
@pytest.mark.parametrize("response_method", ["auto", "decision_function", "predict_proba"])
def test_multiclass_targets_and_responses(models, target, response_method):
    for name in ("multiclass", "logistic"):
        same(models[name], X, ["a", ("b", "c")], target=target, response_method=response_method, grid_resolution=7)


@pytest.mark.parametrize("target", [0, 1])
def test_multioutput_regressor_target(models, target):
    same(models["multioutput"], X, ["a", "b"], target=target, grid_resolution=9)


def test_axes_given_as_list_array_and_one_bounding_axes(models):
    same(models["gb"], X, ["a", ("a", "b")], grid_resolution=6, ax_maker=lambda: list(plt.subplots(1, 2)[1]))
    same(models["gb"], X, ["a", "b", "c", "d"], grid_resolution=6, ax_maker=lambda: plt.subplots(2, 2)[1])
    same(models["gb"], X, ["a", "b", "c"], grid_resolution=6, n_cols=2, ax_maker=lambda: plt.subplots()[1])


def test_line_contour_keywords(models):
    same(models["gb"], X, ["a", ("a", "b")], kind=["both", "average"], grid_resolution=8, random_state=0, subsample=9,
         line_kw={"color": "red", "alpha": 0.5}, pd_line_kw={"linestyle": ":", "label": "PD"},
         ice_lines_kw={"color": "grey"}, contour_kw={"cmap": "magma"})


def test_weights_custom_values_percentiles_and_numpy_input(models):
    w = np.linspace(0.2, 3, N)
    same(models["gb"], X, ["a", ("b", "d")], sample_weight=w, grid_resolution=8, n_jobs=2)
    same(models["gb"], X, ["a", "b"], custom_values={"a": [-1.0, 0.0, 0.5, 2.0]}, percentiles=(0.2, 0.8),
         grid_resolution=9)
    names = ["p", "q", "r", "s"]
    same(models["linear"], X.to_numpy(), ["q", 0, ("p", "s")], feature_names=names, grid_resolution=5)
    same(models["linear"], X.to_numpy().tolist(), [2], grid_resolution=5)


def test_plot_again_with_limits_and_keywords(models):
    theirs, _ = _draw(SkDisplay, models["categorical"], XC, ["a", "city", ("city", "size"), ("a", "b")],
                      categorical_features=["city", "size"], method="brute", grid_resolution=6)
    ours, _ = _draw(PartialDependenceDisplay, models["categorical"], XC, ["a", "city", ("city", "size"), ("a", "b")],
                    categorical_features=["city", "size"], grid_resolution=6)
    kw = dict(pdp_lim={1: (-5.0, 9.0), 2: (-6.0, 8.0)}, bar_kw={"color": "green"}, heatmap_kw={"cmap": "cividis"},
              n_cols=2, centered=True)
    plt.figure()
    theirs.plot(**kw)
    plt.figure()
    ours.plot(**kw)
    assert_same_display(ours, theirs)
    assert ours.axes_[0, 0].get_ylim() == (-6.0, 9.0)  # 1-way plots span every limit given, as scikit-learn's do
    np.testing.assert_allclose(ours.contours_[1, 1].levels, np.linspace(-6.0, 8.0, 8))


# ------------------------------------------------------------------ the numbers and the methods
def test_auto_gives_brutes_numbers_where_scikit_learn_switches_to_recursion(models):
    """The purpose of the difference: scikit-learn's auto (recursion) is another quantity on correlated data."""
    hgb = models["hgb"]
    ours, _ = _draw(PartialDependenceDisplay, hgb, X, ["c", ("a", "c")], grid_resolution=10)
    brute, _ = _draw(SkDisplay, hgb, X, ["c", ("a", "c")], grid_resolution=10, method="brute")
    recursion, _ = _draw(SkDisplay, hgb, X, ["c", ("a", "c")], grid_resolution=10)
    for mine, b, r in zip(ours.pd_results, brute.pd_results, recursion.pd_results):
        _close(mine["average"], b["average"])
        assert not np.allclose(mine["average"], r["average"], atol=1e-3)
    grid = ours.pd_results[0]["grid_values"][0]
    by_hand = [hgb.predict(X.assign(c=v)).mean() for v in grid]   # the definition
    _close(ours.lines_[0, 0].get_ydata(), by_hand)


@pytest.mark.parametrize("name", ["gb", "hgb", "rf", "multiclass"])
def test_recursion_gives_scikit_learns_recursion_numbers(models, name):
    kw = {"target": "mid"} if name == "multiclass" else {}
    same(models[name], X, ["b", ("a", "c")], method="recursion", sk_method=None, grid_resolution=8, **kw)


def test_every_feature_set_is_computed_in_one_pdpx_session(models, monkeypatch):
    calls = []
    real = pdpx_function.partial_dependence_many

    def counting(model, X_, feature_sets, **kw):
        calls.append((list(feature_sets), kw["kind"] if "kind" in kw else "recursion"))
        return real(model, X_, feature_sets, **kw)

    monkeypatch.setattr(pdpx_function, "partial_dependence_many", counting)
    _draw(PartialDependenceDisplay, models["gb"], X, ["a", "b", ("a", "c"), ("b", "d")], grid_resolution=5)
    assert calls == [([["a"], ["b"], ["a", "c"], ["b", "d"]], "average")]
    calls.clear()
    _draw(PartialDependenceDisplay, models["gb"], X, ["a", "b"], kind="both", grid_resolution=5)
    assert calls == [([["a"], ["b"]], "both")]
    calls.clear()  # ICE curves for some plots, averages for the rest: one session each
    _draw(PartialDependenceDisplay, models["gb"], X, ["a", "b", ("a", "c")], kind=["both", "average", "average"],
          grid_resolution=5)
    assert sorted(calls) == [([["a"]], "both"), ([["b"], ["a", "c"]], "average")]


def test_display_numbers_equal_the_function(models):
    disp, _ = _draw(PartialDependenceDisplay, models["multiclass"], X, ["b", ("a", "d")], target="hi",
                    grid_resolution=7)
    for fxs, result in zip([["b"], ["a", "d"]], disp.pd_results):
        ref = partial_dependence(models["multiclass"], X, fxs, grid_resolution=7)
        _close(result["average"], ref["average"])


# ------------------------------------------------------------------ the same mistakes, the same errors
ERRORS = [
    ("linear", {"features": ["zz"]}),
    ("linear", {"features": [(0, 1, 2)]}),
    ("linear", {"features": [1, {}]}),
    ("linear", {"features": [()]}),
    ("linear", {"features": [4.5]}),
    ("linear", {"features": [9]}),
    ("linear", {"features": [-1]}),
    ("linear", {"features": [0], "feature_names": ["a", "b", "a", "c"]}),
    ("linear", {"features": [0, 1], "kind": ["both"]}),
    ("linear", {"features": [0, (0, 1)], "kind": "individual"}),
    ("linear", {"features": [(0, 1), 2], "kind": ["both", "both"]}),
    ("linear", {"features": [0], "kind": "foo"}),
    ("linear", {"features": [0], "method": "fast"}),
    ("linear", {"features": [0], "method": "recursion"}),
    ("gb", {"features": [0], "method": "recursion", "kind": "both"}),
    ("gb", {"features": [0], "method": "recursion", "sample_weight": np.ones(N)}),
    ("linear", {"features": [0], "subsample": -3}),
    ("linear", {"features": [0], "subsample": 1.5}),
    ("linear", {"features": [0], "subsample": 0.0}),
    ("linear", {"features": [0], "grid_resolution": 1}),
    ("linear", {"features": [0], "percentiles": (0.9, 0.1)}),
    ("linear", {"features": [0], "percentiles": [0.1, 0.9]}),
    ("linear", {"features": [0], "response_method": "predict_proba"}),
    ("linear", {"features": [0], "categorical_features": [0.5]}),
    ("linear", {"features": [0], "categorical_features": [True, False]}),
    ("linear", {"features": [0], "categorical_features": []}),
    ("linear", {"features": [(0, 1)], "categorical_features": [1]}),
    ("linear", {"features": [3], "categorical_features": [3], "kind": "both"}),
    ("linear", {"features": [3], "categorical_features": [3], "grid_resolution": 2}),
    ("linear", {"features": [0], "sample_weight": np.ones(N - 1)}),
    ("linear", {"features": [0], "sample_weight": np.zeros(N)}),
    ("linear", {"features": [0], "custom_values": {0: [[1.0, 2.0]]}}),
    ("linear", {"features": [0, 1], "ax": "axes:3"}),
    ("multiclass", {"features": [0]}),
    ("multiclass", {"features": [0], "target": "none"}),
    ("multioutput", {"features": [0]}),
    ("multioutput", {"features": [0], "target": -1}),
    ("multioutput", {"features": [0], "target": 9}),
    ("unfitted", {"features": [0]}),
    ("not a model", {"features": [0]}),
]


@pytest.mark.parametrize("name,kw", ERRORS, ids=[f"{n}-{k}" for n, k in ERRORS])
def test_same_errors_for_the_same_mistakes(models, name, kw):
    odd = {"unfitted": GradientBoostingRegressor(), "not a model": object()}
    model = odd[name] if name in odd else models[name]
    kw = dict(kw)
    features = kw.pop("features")
    ax = kw.pop("ax", None)
    maker = (lambda: list(plt.subplots(1, 3)[1])) if ax == "axes:3" else None
    with_brute = "method" not in kw
    out = same(model, X, features, sk_method="brute" if with_brute else None, ax_maker=maker, **kw)
    assert out is None, "scikit-learn accepted this mistake: the case tests nothing"


def test_the_same_figure_twice_is_refused_as_scikit_learn_refuses_it(models):
    fig, ax = plt.subplots()
    PartialDependenceDisplay.from_estimator(models["gb"], X, ["a"], ax=ax, grid_resolution=5)
    with pytest.raises(ValueError, match="The ax was already used in another plot function"):
        PartialDependenceDisplay.from_estimator(models["gb"], X, ["a"], ax=ax, grid_resolution=5)


def test_signature_and_import():
    import inspect

    import pdpx.sklearn

    ours = inspect.signature(PartialDependenceDisplay.from_estimator)
    theirs = inspect.signature(SkDisplay.from_estimator)
    assert list(ours.parameters) == list(theirs.parameters)
    for name, p in theirs.parameters.items():
        assert (ours.parameters[name].default, ours.parameters[name].kind) == (p.default, p.kind), name
    assert issubclass(PartialDependenceDisplay, SkDisplay)
    assert PartialDependenceDisplay.plot is SkDisplay.plot and PartialDependenceDisplay.__init__ is SkDisplay.__init__
    assert {"partial_dependence", "PartialDependenceDisplay"} <= set(pdpx.sklearn.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        pdpx.sklearn.nothing  # noqa: B018


def test_subclass_keeps_its_type(models):
    class Mine(PartialDependenceDisplay):
        pass

    disp = Mine.from_estimator(models["gb"], X, ["a"], grid_resolution=5)
    assert type(disp) is Mine


# ------------------------------------------------------------------ the user guide's calls, in our own words
def test_the_user_guide_chapters_calls():
    """The calls of scikit-learn's user guide chapter on partial dependence, on our own data.

    A binary classifier of boosted stumps: a grid of two 1-way plots and their 2-way plot,
    a multi-class classifier with ``target``, the raw numbers, ICE, ICE with PD, centered ICE.
    """
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(400, 6))
    label = np.where((rows ** 2).sum(axis=1) > 5.35, 1.0, -1.0)
    stumps = GradientBoostingClassifier(n_estimators=30, learning_rate=1.0, max_depth=1, random_state=0)
    stumps.fit(rows, label)
    same(stumps, rows, [0, 1, (0, 1)], grid_resolution=15)
    three = np.digitize(rows[:, 2] + rows[:, 3], [-0.5, 0.5])
    by_class = GradientBoostingClassifier(n_estimators=10, max_depth=1, random_state=0).fit(rows, three)
    same(by_class, rows, [3, 2, (3, 2)], target=0, grid_resolution=15)
    numbers = partial_dependence(stumps, rows, [0], grid_resolution=15)
    np.testing.assert_allclose(numbers["average"][0], [stumps.predict_proba(
        np.column_stack([np.full(len(rows), v), rows[:, 1:]]))[:, 1].mean() for v in numbers["grid_values"][0]])
    for kw in ({"kind": "individual"}, {"kind": "both"}, {"kind": "both", "centered": True}):
        same(stumps, rows, [0, 1], grid_resolution=15, random_state=0, **kw)
