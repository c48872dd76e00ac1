"""The tree machinery behind ``exact`` and ``recursion``: private to the methods, not plugins.

What runs, and what it takes:

* :mod:`.plan`: the planner, the one place that says which computation runs for a call
  (engine, kernel, link mode, the counts' order) and which compiled functions that takes;
  :mod:`.counts_rule`: the counts' rule in numbers it reads (a gather's cost against row walks);
* :mod:`.records` and :mod:`.registry`: each kernel module's record of itself (name, when it
  fits, its compiled functions and their cold-compile seconds, its warm-up cases), collected;
* :mod:`.engine`: the two computations (chunks of rows, the plan's kernel built);
* :mod:`.prep`: a tree model prepared for one request (target nodes, leaf boxes,
  node layout);
* :mod:`.combine`: ensembles linear in their members.

The kernels (numba):

* :mod:`.routing`: the routing rule every kernel shares, written once (a tree model's routing
  arrays travel as one tuple, :class:`.prep.Routing`), and its forms over a block of rows;
* :mod:`.kernels`: numba code every kernel shares besides (leaf boxes and their
  difference-array corners, blocks of rows, the rows' integral and link, recursion's weights);
* :mod:`.oblivious` (with :mod:`.products`), :mod:`.leafsets` and :mod:`.partition`:
  the row kernels of ``exact``, one walk each over the rows it is given;
* :mod:`.rows`: the row loop written once (rows shared among threads, slices of
  rows finished into outputs, sums and ICE);
* :mod:`.counts` (the gather and the counts' types), :mod:`.counts_kernels` and
  :mod:`.counts_patterns` (its kernels), :mod:`.counts_pd` (partial dependence from
  counts), :mod:`.counts_use` (the counts kept with a model, and when ``exact`` answers
  from them): every 1-way and 2-way average from one pass over the rows;
* :mod:`.curve_means`: every row's ICE curve averaged over a grid, in one pass.
* :mod:`.curve_moments`: the ICE curves' moments over the rows (heterogeneity), in one pass.
* :mod:`.fused`: the fused walks ``exact`` offers the curve reducers (:mod:`pdpx.core.curves`), by the name
  a reducer asks for: the planner and the kernel of each.

Compiling:

* :mod:`.jit`: whether the kernels a plan needs are compiled, and compiling them in
  the background; :mod:`.warmup` compiles them all (``make setup``), the kernels outside this package
  too (:data:`pdpx.core.compiler.ELSEWHERE`). Every kernel is decorated with
  :func:`pdpx.core.compiler.njit`, which knows where numba may cache (or compiles in memory).

numba is imported by the kernel modules only, which the methods import when they run.
"""
