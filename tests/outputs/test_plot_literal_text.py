"""Users' names are drawn as text: column names, levels, class labels and model names holding ``$``, ``\\``, ``_``,
``^``, ``{}`` and ``%`` are drawn as they are written in every kind of figure (never as matplotlib's mathtext, never
through LaTeX), and such figures save without error, through pdpx and through plotnine."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine", reason="plotnine is not installed (pip install 'pdpx[plot]')")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import pdpx  # noqa: E402
from pdpx.outputs.plot import save  # noqa: E402

matplotlib.use("Agg")

A = "Q1_$_vs_Q2_$"  # a valid-looking formula between the dollars: mathtext would draw "Q1" and a subscript
B = "b\\x^{2}_{i}$"  # one dollar, a backslash, braces, ^ and _
C = "lvl_{$\\alpha$}"  # a categorical column: mathtext would draw a Greek letter
D = "when_$t$"  # a date column
LEVELS = ["$x$", "\\beta_1^2", "a_b{c}", "5$ to 10$"]
CLASSES = ["$yes$", "no_^{}", "50% \\m"]
N = 300
KW = dict(method="brute", grid_resolution=6)


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    return pd.DataFrame({A: rng.normal(size=N), B: rng.normal(size=N),
                         C: pd.Categorical(rng.choice(LEVELS, N), categories=LEVELS),
                         D: pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 365, N), unit="D")})


def f(d):
    """B's slope depends on C's level (so B has regions split on C), plus A, C's code and D's day of the year."""
    codes = pd.Categorical(d[C], categories=LEVELS).codes
    days = (pd.to_datetime(d[D]) - pd.Timestamp("2024-01-01")).dt.days.to_numpy()
    return d[A].to_numpy() + 2 * d[B].to_numpy() * np.where(codes == 0, 1.0, -1.0) + codes + days / 100


def classifier(X):
    from sklearn.linear_model import LogisticRegression

    y = np.array(CLASSES)[np.digitize(X[A], [-0.5, 0.5])]
    return LogisticRegression().fit(X[[A, B]], y)


#: each kind of figure, and the texts it must show exactly as written (names, levels, labels)
FIGURES = {
    "1-way numeric with ICE": (lambda X: pdpx.partial_dependence(f, X, [A], kind="both", **KW).plot(), [A]),
    "1-way categorical": (lambda X: pdpx.partial_dependence(f, X, [C], kind="both", **KW).plot(), [C, *LEVELS]),
    "dates": (lambda X: pdpx.partial_dependence(f, X, [D], kind="both", **KW).plot(), [D]),
    "2-way numeric": (lambda X: pdpx.partial_dependence(f, X, [A, B], **KW).plot(), [A, B]),
    "2-way categorical x numeric": (lambda X: pdpx.partial_dependence(f, X, [C, A], **KW).plot(), [C, A, *LEVELS]),
    "collection (facet strips)": (lambda X: pdpx.partial_dependence_many(f, X, [A, C, (A, B)], **KW).plot(),
                                  [A, C, *LEVELS]),
    "by= (legend of levels)": (lambda X: pdpx.partial_dependence(f, X, [A], by=C, **KW).plot(), [A, *LEVELS]),
    "dict of models": (lambda X: pdpx.partial_dependence({"m_$1$": f, "m\\2^": f}, X, [A], **KW).plot(),
                       [A, "m_$1$", "m\\2^"]),
    "classes (outputs)": (lambda X: pdpx.partial_dependence(classifier(X), X[[A, B]], [A], **KW).plot(),
                          [A, *CLASSES]),
    "ALE": (lambda X: pdpx.ale(f, X, A).plot(), [A]),
    "ALE categorical": (lambda X: pdpx.ale(f, X, C).plot(), [C, *LEVELS]),
    "ALE 2-way": (lambda X: pdpx.ale(f, X, [A, B]).plot(), [A, B]),
    "derivative ICE": (lambda X: pdpx.derivative_ice(f, X, A, **KW).plot(), [A]),
    "importance": (lambda X: pdpx.importance(f, X, [A, B, C], **KW).plot(), [A, B, C]),
    "H pairwise": (lambda X: pdpx.h_statistic(f, X, [A, B, C], method="brute").plot("pairwise"), [A, B, C]),
    "H overall": (lambda X: pdpx.h_statistic(f, X, [A, B, C], method="brute").plot("overall"), [A, B, C]),
    "heterogeneity bars": (lambda X: pdpx.heterogeneity(f, X, [A, B, C], **KW).plot("bars"), [A, B, C]),
    "heterogeneity curves": (lambda X: pdpx.heterogeneity(f, X, [A, B, C], **KW).plot("curves"), [A, B, C]),
    "regions (rules on levels)": (lambda X: pdpx.regions(f, X, B, **KW).plot(), [B]),
    "explained variance": (lambda X: pdpx.explained_variance(f, X, [A, B, C], method="brute").plot(), []),
}


def drawn_texts(p) -> list[Text]:
    """Every text artist of ``p``, drawn and saved as a user would (plotnine's draw, matplotlib's savefig, outside
    any context of pdpx's), with something written."""
    fig = p.draw()
    try:
        fig.savefig(io.BytesIO(), format="png", dpi=40)
        return [t for t in fig.findobj(Text) if t.get_text()]
    finally:
        plt.close(fig)


@pytest.mark.parametrize("kind", list(FIGURES))
def test_every_figure_draws_names_levels_and_labels_as_written(X, kind):
    make, shown = FIGURES[kind]
    texts = drawn_texts(make(X))
    mathtext = [t.get_text() for t in texts if t.get_parse_math() or t.get_usetex()]
    assert mathtext == [], f"read as mathtext or LaTeX: {mathtext}"
    written = {t.get_text() for t in texts}
    for text in shown:
        assert text in written or any(text in w for w in written), f"{text!r} not drawn as written; drawn: {written}"


def test_the_rules_of_regions_name_the_levels_as_written(X):
    res = pdpx.regions(f, X, B, **KW)
    rules = " ".join(r.rule for r in res.regions)
    assert C in rules  # the regions split on C (B's slope flips with its first level)
    texts = drawn_texts(res.plot())
    assert not any(t.get_parse_math() for t in texts)
    assert any(LEVELS[0] in t.get_text() and C in t.get_text() for t in texts)  # a rule, in the legend


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_such_figures_save_through_pdpx_and_through_plotnine(X, tmp_path, suffix):
    res = pdpx.partial_dependence(f, X, [C, A], **KW)  # A: not a formula mathtext can read, it would raise
    assert res.save(tmp_path / f"a{suffix}").stat().st_size > 0
    res.plot().save(tmp_path / f"b{suffix}", verbose=False)  # plotnine's own save: the theme carries the setting
    assert (tmp_path / f"b{suffix}").stat().st_size > 0


def test_a_figure_restyled_with_a_complete_theme_still_saves_through_pdpx(X, tmp_path):
    from plotnine import theme_minimal

    p = pdpx.partial_dependence(f, X, [A], **KW).plot() + theme_minimal()  # replaces pdpx's theme
    assert save(p, tmp_path / "r.png").stat().st_size > 0  # A is not a formula mathtext can read: it would raise


def test_latex_set_by_the_user_is_not_used_for_names(X, tmp_path):
    """``text.usetex=True`` would hand ``$``, ``_`` and backslashes of a name to LaTeX (and needs LaTeX here):
    pdpx's figures draw their texts without it."""
    with matplotlib.rc_context({"text.usetex": True}):
        p = pdpx.partial_dependence(f, X, [C, A], **KW).plot()
        texts = drawn_texts(p)
        assert not any(t.get_usetex() for t in texts)
        assert pdpx.partial_dependence(f, X, [B], **KW).save(tmp_path / "u.png").exists()


def test_a_result_shown_in_a_notebook_draws_such_names(X):
    html = pdpx.partial_dependence(f, X, [A], **KW)._repr_html_()
    assert "<img" in html and "not shown" not in html
