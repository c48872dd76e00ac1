"""The report's section "Over time": there for survival models (their default response or a survival one), with
the profile's numbers; absent for other models."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import pdpx

pytest.importorskip("plotnine")
pytest.importorskip("sksurv", reason="scikit-survival is the survival extra (pdpx[survival])")
from sksurv.linear_model import CoxPHSurvivalAnalysis  # noqa: E402
from sksurv.tree import SurvivalTree  # noqa: E402
from sksurv.util import Surv  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n = 150
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(0, 2, n)})
    t = np.ceil(rng.exponential(30 * np.exp(-0.7 * X["a"]))).clip(1, 200)
    return X, Surv.from_arrays(event=rng.uniform(size=n) < 0.8, time=t)


def shares_shown(page: str) -> dict:
    table = page.split('<table class="survival">')[1].split("</table>")[0]
    return {f: float(s) for f, s in re.findall(r'<tr><td>([^<]+)</td><td class="num">([0-9.]+)</td>', table)}


def test_a_survival_tree_report_has_the_section_with_the_profile_numbers(data, tmp_path):
    X, y = data
    tree = SurvivalTree(min_samples_leaf=10, max_depth=4).fit(X, y)
    page = pdpx.report(tree, X, tmp_path / "r.html", progress=False, response="survival",
                       times=list(tree.unique_times_[[3, 10, 30]])).read_text()
    assert '<section id="over-time">' in page
    profile = pdpx.survival_profile(tree, X, times=tree.unique_times_[[3, 10, 30]])
    shown = shares_shown(page)
    assert set(shown) == {"a", "b"}
    for f, s in shown.items():
        assert s == pytest.approx(round(profile.shares[f], 3), abs=1e-12)


def test_a_cox_model_report_shows_the_survival_over_time_by_default(data, tmp_path):
    X, y = data
    cox = CoxPHSurvivalAnalysis().fit(X, y)
    page = pdpx.report(cox, X, tmp_path / "c.html", progress=False, response="cumulative_hazard").read_text()
    assert all(s == 0.0 for s in shares_shown(page).values())  # one curve scaled by H0(t)
    page = pdpx.report(cox, X, tmp_path / "d.html", progress=False).read_text()  # the risk; the section: survival
    assert "Over time" in page and "survival probability at 5 times" in page


def test_other_models_have_no_such_section(data, tmp_path):
    from sklearn.linear_model import LinearRegression

    X, y = data
    page = pdpx.report(LinearRegression().fit(X, y["time"]), X, tmp_path / "l.html", progress=False).read_text()
    assert "over-time" not in page
