"""The adapter of R survival models given as functions (pdpx.adapters.rfunction.RSurvivalAdapter, what the R
package builds for a coxph), with Python functions in R's place: each curve read at the largest step time <= t,
times before the first step refused, and the PD the definition (set the column, call the function, read, average).
The R side is tested against R's own survfit() and predict() in r/pdpx/tests/testthat/test-survival.R."""

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.adapters.rfunction import RSurvivalAdapter
from pdpx.core.errors import PdpxError

STEPS = np.array([1.0, 2.0, 4.0, 8.0])


def hazard(X):
    """A Cox-like cumulative hazard per row at every step: H0(t) exp(0.5 a - b)."""
    return np.outer(np.exp(0.5 * X["a"] - X["b"]), STEPS / 8.0)


@pytest.fixture
def model():
    fns = {"survival": lambda X: np.exp(-hazard(X)), "cumulative_hazard": hazard,
           "risk": lambda X: np.exp(0.5 * X["a"] - X["b"]).to_numpy()[:, None],
           "raw": lambda X: (0.5 * X["a"] - X["b"]).to_numpy()[:, None]}
    return RSurvivalAdapter(fns, STEPS, feature_names=["a", "b"], model_name="coxph")


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=40), "b": rng.uniform(size=40)})


def test_curves_are_read_at_the_last_step_at_or_before_each_time(model, X):
    times = [1.0, 3.0, 8.0]
    res = pdpx.partial_dependence(model, X, "a", response="survival", times=times, grid_resolution=5, kind="both")
    assert res.method == "brute" and res.times.tolist() == times
    cols = [0, 1, 3]  # 3.0 reads the step at 2.0
    for k, v in enumerate(res.grid_values[0]):
        ref = np.exp(-hazard(X.assign(a=v)))[:, cols]
        np.testing.assert_allclose(res.average[:, k], ref.mean(axis=0), rtol=1e-14)
        np.testing.assert_allclose(res.individual[:, :, k], ref.T, rtol=1e-14)
    assert res.to_frame()["time"].unique().tolist() == times


def test_default_times_risk_and_raw(model, X):
    res = pdpx.partial_dependence(model, X, "b", grid_resolution=3)
    assert res.response == "survival" and any("quantiles" in n for n in res.notes)
    risk = pdpx.partial_dependence(model, X, "b", response="risk", grid_resolution=3)
    ref = [np.exp(0.5 * X["a"] - v).mean() for v in risk.grid_values[0]]
    np.testing.assert_allclose(risk.average[0], ref, rtol=1e-14)
    assert risk.times is None


def test_bad_times_are_refused(model, X):
    with pytest.raises(PdpxError, match="before the coxph model's first time 1"):
        pdpx.partial_dependence(model, X, "a", response="survival", times=[0.5, 2.0])
    with pytest.raises(PdpxError, match="past the model's last training time 8"):
        pdpx.partial_dependence(model, X, "a", response="cumulative_hazard", times=[9.0])


def test_a_function_returning_the_wrong_shape_is_an_error(X):
    bad = RSurvivalAdapter({r: (lambda X: np.zeros((len(X), 2))) for r in
                            ("survival", "cumulative_hazard", "risk", "raw")}, STEPS, feature_names=["a", "b"])
    with pytest.raises(PdpxError, match="expected"):
        pdpx.partial_dependence(bad, X, "a", response="survival", times=[2.0], grid_resolution=3)
