"""Large scratch arrays come from their own memory map (core/scratch.py) and behave as numpy's own."""

import gc
import mmap

import numpy as np

from pdpx.core import scratch as scratch_mod


def _owner(a):
    while isinstance(getattr(a, "base", None), np.ndarray):
        a = a.base
    base = a.base
    return base.obj if isinstance(base, memoryview) else base


def test_large_arrays_are_mapped_writable_and_outlive_their_first_name(monkeypatch):
    monkeypatch.setattr(scratch_mod, "MIN_BYTES", 1024)
    a = scratch_mod.scratch((3, 50, 7))
    assert a.shape == (3, 50, 7) and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable
    assert isinstance(_owner(a), mmap.mmap)
    a[:] = np.arange(a.size).reshape(a.shape)
    view = a[2]
    del a
    gc.collect()
    np.testing.assert_array_equal(view, np.arange(700, 1050).reshape(50, 7))


def test_small_arrays_come_from_numpy():
    a = scratch_mod.scratch((4, 5), dtype=np.int32)
    assert a.shape == (4, 5) and a.dtype == np.int32 and _owner(a) is None
