"""The tree machinery behind ``exact`` and ``recursion``: private to the methods, not plugins.

* :mod:`.engine`: the two computations (chunks of rows, the kernel's choice);
* :mod:`.prep`: a tree model prepared for one request (target nodes, leaf boxes,
  node layout);
* :mod:`.kernels`: numba code every kernel shares (routing, leaf boxes and their
  difference-array corners, blocks of rows, the rows' integral and link);
* :mod:`.oblivious` (with :mod:`.products`), :mod:`.leafsets` and :mod:`.partition`:
  the row kernels of ``exact``, one walk each over the rows it is given;
* :mod:`.rows`: the row loop written once (rows shared among threads, slices of
  rows finished into outputs, sums and ICE);
* :mod:`.combine`: ensembles linear in their members;
* :mod:`.jit`: whether the kernels a call needs are compiled, and compiling them in
  the background; :mod:`.warmup` compiles them all (``make setup``).

numba is imported by the kernel modules only, which the methods import when they run.
"""
