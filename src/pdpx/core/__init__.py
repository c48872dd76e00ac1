"""The ground floor of pdpx: what every other floor builds on (``docs/architecture.md``).

Hooks and the plugin manager (:mod:`.hookspecs`, :mod:`.plugins`), the adapter and method
interfaces (:mod:`.adapter`, :mod:`.booster`, :mod:`.method`), the tree representation
(:mod:`.ir`, :mod:`.treesum`; the fingerprint of a model's contents and the readings kept
with it, :mod:`.modelcache`) and when the trees may answer for a model (:mod:`.trust`),
whether points may be stacked into one predict call (:mod:`.stacking`), the old import paths of the
extension API, kept working with a warning (:mod:`.oldpaths`),
the options of a call (:mod:`.options`) and its checks at the public boundary
(:mod:`.validation`), a call in three parts: its inputs validated once (:mod:`.inputs`), its
features' grids, which ``by=`` groups share (:mod:`.grids`), and the session that runs each feature
set on them (:mod:`.session`; :mod:`.compute`, :mod:`.stacked` build sessions), the curve reducers of the
fast measures and their one driver (:mod:`.curves`: a method's fused walk, ICE chunks, or per partition),
grids (:mod:`.grid`, :mod:`.missing`,
date features in :mod:`.dates`; ``grid="thresholds"`` in :mod:`.steps`, on the partition of a
column's values by the model's splits that :mod:`.splits` computes for it and for Friedman's
H), results and their drawing entry point (:mod:`.result`, :mod:`.drawing`), the support
diagnostics and the extrapolation check (:mod:`.support`, :mod:`.extrapolation`), where the
rows live as one interface and what each source can do (:mod:`.rows`; the sources themselves are
:mod:`pdpx.rows`), X as a pandas frame (:mod:`.data`), bootstrap intervals
(:mod:`.bootstrap`) and bands from the model's members or quantile models (:mod:`.members`).
A survival model's times (``times=``: checked, defaulted, named; the step-function rule) are :mod:`.times`.

Around them: settings (:mod:`.config`), the memory budget's estimate of a call's peak, made before its grids
(:mod:`.budget`), errors and warnings (:mod:`.errors`), the old names of
the public API (:mod:`.deprecation`), progress bars (:mod:`.progress`), the process's thread
pool (:mod:`.threads`), large scratch arrays in their own memory map (:mod:`.scratch`), library
thread pools held to one thread during pdpx's own checks
(:mod:`.forksafe`), files written safely (:mod:`.files`) in the user's own folder
(:mod:`.userdir`), and the version (:mod:`.version`).
Every numba kernel of pdpx, the measures' too, is compiled through one helper (:mod:`.compiler`).
A bagged forest's learner variance from one fit, the infinitesimal jackknife, is :mod:`.jackknife`; its
out-of-bag PD, each training row through the members that did not draw it, :mod:`.oob`.

The core imports nothing above it and names no model library; the built-in plugins
(adapters, methods, the figure backend) are registered by module name at run time.
"""
