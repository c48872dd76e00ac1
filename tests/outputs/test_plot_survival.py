"""The figures of a SurvivalProfile: each kind draws, and what it cannot draw is refused clearly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import PdpxError

pytest.importorskip("plotnine")
pytest.importorskip("sksurv", reason="scikit-survival is the survival extra (pdpx[survival])")
from sksurv.ensemble import RandomSurvivalForest  # noqa: E402
from sksurv.util import Surv  # noqa: E402


@pytest.fixture(scope="module")
def profile():
    rng = np.random.default_rng(2)
    n = 120
    X = pd.DataFrame({"a": rng.normal(size=n), "g": rng.integers(0, 3, n).astype(float)})
    y = Surv.from_arrays(event=rng.uniform(size=n) < 0.8, time=np.ceil(rng.exponential(40, n)))
    forest = RandomSurvivalForest(n_estimators=5, min_samples_leaf=5, random_state=0).fit(X, y)
    return pdpx.survival_profile(forest, X, grid_resolution=5, kind="both", categorical_features=["g"])


@pytest.mark.parametrize("kind, options", [("heatmap", {}), ("lines", {"feature": "a"}), ("lines", {"feature": "g"}),
                                           ("ice", {"feature": "a"})])
def test_each_kind_draws(profile, tmp_path, kind, options):
    path = profile.save(tmp_path / f"{kind}.png", kind=kind, **options)
    assert path.stat().st_size > 1000


def test_ice_at_a_time_that_was_not_asked_is_refused(profile):
    with pytest.raises(PdpxError, match="is not one of the profile's times"):
        profile.plot(kind="ice", feature="a", time=-1.0)
    with pytest.raises(PdpxError, match="kind must be one of"):
        profile.plot(kind="pie")
