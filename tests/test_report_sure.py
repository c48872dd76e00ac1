"""The report's section "How sure is this curve?" (pdpx.report_sure): present for a bagged forest, with the
jackknife band of its most important features equal to partial_dependence(interval="jackknife"); absent for a
model without in-bag counts; a band that fails is named in the report's warning."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine")

from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor  # noqa: E402

import pdpx  # noqa: E402
from pdpx import report_sure  # noqa: E402
from pdpx.core.errors import IncompleteReportWarning  # noqa: E402

FAST = dict(grid_resolution=5, pair_grid_resolution=4, ice_sample=8, dpi=30, progress=False, interactions=None,
            heterogeneity=None)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = 3 * X["a"] + X["b"] ** 2 + rng.normal(scale=0.3, size=200)
    return X, y.to_numpy()


def test_a_forest_gets_the_section_with_its_features_bands(data, tmp_path, monkeypatch):
    X, y = data
    forest = RandomForestRegressor(n_estimators=60, max_depth=5, random_state=0).fit(X, y)
    shown = []
    real = report_sure.jackknife_interval

    def spy(*args):
        shown.append(real(*args))
        return shown[-1]

    monkeypatch.setattr(report_sure, "jackknife_interval", spy)
    page = html.unescape(pdpx.report(forest, X, tmp_path / "r.html", **FAST).read_text(encoding="utf-8"))
    assert 'id="how-sure"' in page and "How sure is this curve?" in page
    assert [r.features[0] for r in shown] == ["a", "b", "c"]  # the most important first
    direct = pdpx.partial_dependence(forest, X, "a", grid_resolution=5, interval="jackknife")
    np.testing.assert_allclose(shown[0].se, direct.se, rtol=1e-12, atol=1e-12)
    assert direct.band in page and "infinitesimal jackknife" in page


def test_no_section_without_in_bag_counts_and_a_failure_is_named(data, tmp_path, monkeypatch):
    X, y = data
    gbm = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    page = pdpx.report(gbm, X, tmp_path / "g.html", **FAST).read_text(encoding="utf-8")
    assert 'id="how-sure"' not in page
    forest = RandomForestRegressor(n_estimators=20, max_depth=4, random_state=0).fit(X, y)

    def broken(*a, **k):
        raise MemoryError("over the budget")

    monkeypatch.setattr(report_sure, "jackknife_interval", broken)
    with pytest.warns(IncompleteReportWarning) as caught:
        path = pdpx.report(forest, X, tmp_path / "f.html", **FAST)
    missing = [p for w in caught if isinstance(w.message, IncompleteReportWarning) for p, _ in w.message.missing]
    assert "the jackknife band of a" in missing
    assert "the jackknife band of a could not be computed" in html.unescape(path.read_text(encoding="utf-8"))
