"""How the warm-up shares the kernel families out among its processes (:func:`pdpx.plugins.trees.warmup.shares`).

That every kernel is compiled by the warm-up is checked in test_plan.py and test_jit.py; this file checks the
sharing: every family compiled exactly once, in at most ``jobs`` processes, none of them idle, and no move of one
family from the costliest share to another that would shorten the longest process (the critical path).
"""

import pytest

from pdpx.plugins.trees import registry, warmup


def _cost(share):
    return sum(sum(registry.cold_seconds_table(families=(f,)).values()) for f in share)


@pytest.mark.parametrize("jobs", [1, 2, 3, 4, 9])
def test_every_family_once_in_at_most_jobs_processes(jobs):
    shares = warmup.shares(jobs)
    assert 1 <= len(shares) <= jobs and all(shares)
    flat = [f for share in shares for f in share]
    assert sorted(flat) == sorted(warmup.FAMILIES)
    costs = [_cost(s) for s in shares]
    assert costs == sorted(costs, reverse=True)  # the costliest first: the calling process runs it


@pytest.mark.parametrize("jobs", [2, 3])
def test_no_single_move_shortens_the_longest_process(jobs):
    shares = warmup.shares(jobs)
    longest = _cost(shares[0])
    for f in shares[0]:
        for other in shares[1:]:
            moved = [_cost([g for g in shares[0] if g != f]), _cost([*other, f])]
            assert max(moved) >= longest, (f, shares)


def test_two_processes_split_the_counts_from_the_largest_row_family():
    """On two cores the pattern counts (the costliest family) and the costliest row family are compiled side by
    side, not one after the other in the same process."""
    counts, rows = warmup.shares(2)
    assert "counts" in counts
    costliest_row = max((f for f in warmup.FAMILIES if f != "counts"), key=lambda f: _cost([f]))
    assert costliest_row in rows


def test_family_lists_run_in_one_process_and_unknown_names_are_refused():
    with pytest.raises(ValueError, match="unknown kernel family 'nope'"):
        warmup._family("partition,nope")
