"""The pdpx core: hooks, plugin manager, the tree representation, grids, results.

Nothing here names a model library.
"""
