"""A model whose predict fails on part of the grid: its own exception, raised again with pdpx's context (feature,
grid value, rows) and chained to it; pdpx's warnings point at the user's line (this file)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import ModelPredictError, PdpxError

HERE = __file__


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=60), "k": rng.integers(0, 6, size=60),
                         "g": np.where(rng.random(60) < 0.5, "x", "y")})


#: the grid of ``k``: the data's values 0 to 5 and 7, a value the models below refuse
GRID = {"k": [0, 1, 2, 7, 4, 5]}


class Picky:
    """A model whose predict raises its own exception when column ``k`` holds ``bad`` in any row."""

    def __init__(self, bad=7, error=ValueError):
        self.bad, self.error, self.raised = bad, error, []

    def predict(self, X):
        if (X["k"] == self.bad).any():
            exc = self.error(f"k={self.bad} is not a value this model takes")
            self.raised.append(exc)
            raise exc
        return X["a"].to_numpy() + 2.0 * X["k"].to_numpy()


def test_the_models_exception_is_raised_again_with_the_feature_and_grid_value(X):
    model = Picky()
    with pytest.raises(ValueError) as info:
        pdpx.partial_dependence(model.predict, X[["a", "k"]], "k", method="brute", custom_values=GRID)
    err = info.value
    assert type(err) is ValueError  # the type the user's except clause for the model catches
    text = str(err)
    assert "'k' = 7" in text  # the grid value the model failed on, found although grid points were stacked
    assert "all 60 rows" in text
    assert "ValueError: k=7 is not a value this model takes" in text  # the model's type and own message
    assert err.__cause__ is model.raised[-1]  # the model's own exception, chained as the direct cause
    assert err.__cause__ is not err


def test_a_model_error_that_takes_more_than_a_message_is_a_pdpx_error_chained_to_it(X):
    class Coded(Exception):
        def __init__(self, code, text):
            super().__init__(f"[{code}] {text}")

    model = Picky(error=lambda text: Coded(42, text))
    with pytest.raises(ModelPredictError) as info:
        pdpx.partial_dependence(model.predict, X[["a", "k"]], "k", method="brute", custom_values=GRID)
    assert isinstance(info.value, PdpxError)
    assert isinstance(info.value.__cause__, Coded) and info.value.__cause__ is model.raised[-1]
    assert "Coded: [42] k=7" in str(info.value) and "'k' = 7" in str(info.value)


def test_a_failure_only_when_grid_points_are_stacked_names_the_range_and_the_way_out(X):
    n = len(X)

    def big_batches_fail(frame):
        if len(frame) > n:
            raise RuntimeError("batch too large")
        return frame["a"].to_numpy()

    with pytest.raises(RuntimeError) as info:
        pdpx.partial_dependence(big_batches_fail, X[["a", "k"]], "a", method="brute", grid_resolution=5)
    text = str(info.value)
    assert "stacked into one call" in text and "'a' from" in text
    assert "method_options={'stack': False}" in text
    assert isinstance(info.value.__cause__, RuntimeError)
    # the way out works, and equals the definition
    res = pdpx.partial_dependence(big_batches_fail, X[["a", "k"]], "a", method="brute", grid_resolution=5,
                                  method_options={"stack": False})
    np.testing.assert_allclose(res.average[0], res.grid_values[0])


def test_threads_raise_the_same_context(X):
    model = Picky()
    with pytest.raises(ValueError, match=r"'k' = 7.*ValueError: k=7 is not") as info:
        pdpx.partial_dependence(model.predict, X[["a", "k"]], "k", method="brute", n_jobs=2,
                                method_options={"stack": False}, custom_values=GRID)
    assert info.value.__cause__ in model.raised


def test_a_dict_of_models_and_groups_name_the_model_and_the_group(X):
    good, bad = Picky(bad=99), Picky()
    with pytest.raises(ValueError, match=r"model 'second'.*'k' = 7") as info:
        pdpx.partial_dependence({"first": good.predict, "second": bad.predict}, X[["a", "k"]], "k", method="brute",
                                custom_values=GRID)
    assert info.value.__cause__ is bad.raised[-1]

    def fails_in_group_y(frame):
        if (frame["g"] == "y").all() and (frame["k"] == 7).any():
            raise KeyError("no k=7 for y")
        return frame["a"].to_numpy() + frame["k"].to_numpy()

    with pytest.raises(KeyError) as info:
        pdpx.partial_dependence(fails_in_group_y, X, "k", by="g", method="brute", custom_values=GRID)
    text = str(info.value)
    assert "group 'y'" in text and "'k' = 7" in text and "KeyError: 'no k=7 for y'" in text
    assert isinstance(info.value.__cause__, KeyError) and info.value.__cause__.args == ("no k=7 for y",)


def test_the_tree_check_reraises_the_models_failure_with_its_context(monkeypatch):
    """The check of the trees against the model's own predict (pdpx.core.trust) meets the model's failure first:
    the call fails with the model's error (no TreeMismatchWarning), saying it was the check, the feature and the
    grid value."""
    from sklearn.ensemble import RandomForestRegressor

    from pdpx.plugins import brute

    rng = np.random.default_rng(1)
    Xf = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(Xf, Xf["a"])
    real = brute.checked_predict
    raised = []

    def failing(adapter, frame, response):
        if (frame["a"] == 2.0).any():
            raised.append(OverflowError("a = 2 overflows the model"))
            raise raised[-1]
        return real(adapter, frame, response)

    monkeypatch.setattr(brute, "checked_predict", failing)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pdpx.TreeMismatchWarning)
        with pytest.raises(OverflowError) as info:
            pdpx.partial_dependence(model, Xf, "a", method="exact", custom_values={"a": [-1.0, 0.0, 1.0, 2.0]})
    text = str(info.value)
    assert "checked its exact method against the model's own predict" in text
    assert "'a' = 2" in text and "OverflowError: a = 2 overflows the model" in text
    assert info.value.__cause__ is raised[-1]


def test_pdpx_errors_and_interrupts_pass_as_they_are(X):
    def wrong_length(frame):
        return np.zeros(3)

    with pytest.raises(pdpx.ModelOutputError) as info:
        pdpx.partial_dependence(wrong_length, X[["a", "k"]], "a", method="brute", grid_resolution=4)
    assert info.value.__cause__ is None

    def interrupted(frame):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pdpx.partial_dependence(interrupted, X[["a", "k"]], "a", method="brute", grid_resolution=4)


# ------------------------------------------------------------------ warnings point at the user's line
def test_warnings_through_partial_dependence_point_at_the_callers_line():
    rng = np.random.default_rng(0)
    a = rng.normal(size=400)
    Xd = pd.DataFrame({"a": a, "b": a + 0.01 * rng.normal(size=400)})

    def nan_at_high_a(frame):
        return np.where(frame["a"] > 1.5, np.nan, frame["a"] * frame["b"])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdpx.partial_dependence(nan_at_high_a, Xd, "a", method="brute", grid_resolution=10)
        pdpx.partial_dependence({"m": nan_at_high_a, "n": lambda f: f["a"].to_numpy()}, Xd, "a",
                                method="brute", grid_resolution=10)
    ours = [w for w in caught if issubclass(w.category, pdpx.PdpxWarning)]
    kinds = {w.category for w in ours}
    assert {pdpx.NonFiniteWarning, pdpx.ExtrapolationWarning} <= kinds
    assert all(w.filename == HERE for w in ours), [(w.category.__name__, w.filename) for w in ours]


def test_the_sklearn_dropin_warns_in_scikit_learns_words_at_the_users_line():
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn.linear_model import LinearRegression

    from pdpx.sklearn import PartialDependenceDisplay, partial_dependence

    rng = np.random.default_rng(0)
    a = rng.normal(size=400)
    Xd = pd.DataFrame({"a": a, "b": a + 0.01 * rng.normal(size=400)})
    model = LinearRegression().fit(Xd, a)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        partial_dependence(model, Xd, ["a"])
        PartialDependenceDisplay.from_estimator(model, Xd.to_numpy(), [0])
    found = [w for w in caught if issubclass(w.category, pdpx.ExtrapolationWarning)]
    assert len(found) == 2
    for w, caller, name in zip(found, ("partial_dependence", "PartialDependenceDisplay.from_estimator"),
                               ("feature 'a'", "feature 0")):
        text = str(w.message)
        assert w.filename == HERE
        assert text.startswith(caller + ":") and name in text
        assert "res." not in text  # no attribute of a pdpx result the scikit-learn user does not have
        assert "percentiles=" in text and "custom_values" in text
        assert w.message.features == ("a",) and 0 < w.message.share <= 1


def test_messages_quote_grid_values_as_a_person_writes_them():
    """A constant column's value and a failing date are written as numbers and dates, never numpy reprs."""
    X = pd.DataFrame({"a": [40.0] * 10, "b": np.arange(10.0)})

    class Reads:
        def predict(self, X):
            return X["b"].to_numpy()

    with pytest.raises(pdpx.PdpxError, match=r"every non-missing value is 40\.0\)"):
        pdpx.partial_dependence(Reads(), X, "a")
    D = pd.DataFrame({"d": pd.date_range("2020-01-01", periods=50), "b": np.arange(50.0)})

    class TooLate:
        def predict(self, X):
            if (X["d"] > pd.Timestamp("2020-02-01")).any():
                raise ValueError("too late")
            return X["b"].to_numpy()

    with pytest.raises(ValueError, match=r"failed at 'd' = 2020-02-02,") as info:
        pdpx.partial_dependence(TooLate(), D, "d")
    assert "np." not in str(info.value) and "numpy" not in str(info.value)
