"""Large scratch arrays in memory mapped for them, without numpy's request for huge pages.

numpy asks the kernel for transparent huge pages on every large array it allocates
(``madvise(MADV_HUGEPAGE)``). Where the system leaves huge pages to that request
(``/sys/kernel/mm/transparent_hugepage/enabled`` is ``madvise``, Debian's default), a large
array's first writes then fault in 2 MB at a time. On virtual machines whose host takes back
the memory a guest frees (free page reporting), the next call's fresh huge pages are slow to
come back: on the 2-core benchmark machine, filling a new 3.2 GB array took 6.8 s with the
request and 1.2-1.4 s without it, call after call (0.35 s with it only while the host still
held the pages). Arrays written once and read a few times (every row's ICE curves of
:func:`pdpx.regions` of several features) are mapped here instead, and the system's own
page policy decides; smaller arrays come from numpy as usual.
"""

from __future__ import annotations

import mmap

import numpy as np

#: Arrays smaller than this come from ``np.empty``.
MIN_BYTES = 64 * 2**20


def scratch(shape, dtype=np.float64) -> np.ndarray:
    """An uninitialised C-contiguous array of ``shape``; from its own anonymous memory map when it holds at least
    :data:`MIN_BYTES` (unmapped when the array is freed), else ``np.empty``."""
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in np.atleast_1d(shape))
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype=dtype)
    private = getattr(mmap, "MAP_PRIVATE", None)
    try:
        region = (mmap.mmap(-1, nbytes, flags=private | mmap.MAP_ANONYMOUS) if private is not None
                  else mmap.mmap(-1, nbytes))
    except (OSError, ValueError, OverflowError):
        return np.empty(shape, dtype=dtype)
    return np.frombuffer(region, dtype=dtype).reshape(shape)
