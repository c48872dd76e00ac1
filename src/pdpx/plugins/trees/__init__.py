"""The tree machinery behind ``exact`` and ``recursion``: private to the methods, not plugins.

* :mod:`.prep`: a tree model prepared for one request (target nodes, leaf boxes,
  node layout, thread count);
* :mod:`.kernels`: numba code both methods share (routing, leaf boxes and their
  difference-array corners, the per-row finish);
* :mod:`.leafsets` and :mod:`.partition`: the two row kernels of ``exact``;
* :mod:`.warmup`: compiles everything ahead of the first call.

numba is imported only by :mod:`.kernels`, :mod:`.leafsets` and :mod:`.partition`,
which the methods import when they run.
"""
