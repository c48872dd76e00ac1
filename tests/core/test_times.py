"""pdpx.core.times: the step-function rule, the default times, the names of the outputs."""

from __future__ import annotations

import numpy as np
import pytest

from pdpx.core.errors import PdpxError
from pdpx.core.times import checked_times, default_times, step_columns, time_names


def test_step_columns_read_the_largest_step_at_or_before_each_time():
    steps = np.array([2.0, 5.0, 7.5, 10.0])
    times = np.array([0.0, 1.99, 2.0, 4.999, 5.0, 7.5, 9.0, 10.0])
    expected = [0, 0, 0, 0, 1, 2, 2, 3]  # before the first step: the first one (the clip of the step functions)
    np.testing.assert_array_equal(step_columns(steps, times), expected)
    for t, k in zip(times, step_columns(steps, times)):  # written out: max {i : steps[i] <= t}, else 0
        below = np.flatnonzero(steps <= t)
        assert k == (below[-1] if below.size else 0)


def test_default_times_are_training_times():
    training = np.arange(1.0, 101.0)
    t = default_times(training)
    assert set(t) <= set(training)
    np.testing.assert_array_equal(t, [10.0, 25.0, 50.0, 75.0, 90.0])
    np.testing.assert_array_equal(default_times(np.array([3.0])), [3.0])


def test_names_are_unique_even_for_close_times():
    assert time_names(np.array([1.0, 2.5])) == ["t=1", "t=2.5"]
    close = np.array([1.0, 1.0 + 1e-12])
    names = time_names(close)
    assert len(set(names)) == 2


@pytest.mark.parametrize("times, message", [([3, 3], "strictly increasing"), ([[1, 2]], "non-empty list"),
                                            ([np.inf], "finite"), ([-0.5], ">= 0"), ({"a": 1}, "must be numbers")])
def test_checked_times_refuse(times, message):
    with pytest.raises(PdpxError, match=message):
        checked_times(times)


def test_checked_times_accept_one_number():
    np.testing.assert_array_equal(checked_times(4), [4.0])
