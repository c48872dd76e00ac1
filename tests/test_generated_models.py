"""Generated models against the definition of partial dependence (issue 35, requirement 4).

Hypothesis draws fitted models of every supported tree library (tests/generated_models.py):
losses and objectives, categories, missing values, user subclasses, Pipelines and
ColumnTransformers of random steps; on random frames (float64, float32, Float32, Int64,
categories, NaN); with random grids (small resolutions, ``grid="thresholds"``, custom values
one ulp around split thresholds). For each model:

* ``method="auto"`` (ICE and average) equals the definition (tests/generated.py:
  :func:`generated.definition`) at the result's grid values;
* where ``method="exact"`` answers, it equals the definition too;
* ``partial_dependence_many`` over every column equals the definition for each;
* ``heterogeneity`` of the feature (one walk over the rows where the trees qualify) equals the definition's
  centered curves' weighted mean and variance, and the curves the same walk writes for the regions of several
  features are every row's centered curve;
* the scikit-learn drop-in (methods "brute" and "auto") equals
  ``sklearn.inspection.partial_dependence`` (brute) where scikit-learn accepts the input.

A :class:`pdpx.TreeMismatchWarning` (the first-call check caught a misreading; the numbers,
computed by brute, are still right) is printed with the model; it fails the test only with
``PDPX_FUZZ_STRICT=1``.

Profiles: ``pdpx-ci`` (the default: derandomized, so every run draws the same examples, and
sized for ``make test``) and ``pdpx-fuzz`` (``PDPX_FUZZ=1``: random, ``PDPX_FUZZ_EXAMPLES``
examples per family, default 800; ``make fuzz``).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest
from generated import definition, has, many_features
from generated_models import FAMILIES, NEEDS
from hypothesis import HealthCheck, Phase, event, given, settings

import pdpx

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
           HealthCheck.function_scoped_fixture]
#: No shrinking in make test (a failure is reported as drawn, in seconds, not minutes); make fuzz shrinks.
settings.register_profile("pdpx-ci", max_examples=int(os.environ.get("PDPX_CI_EXAMPLES", 80)), deadline=None,
                          derandomize=True, database=None, suppress_health_check=_HEALTH, print_blob=True,
                          phases=[Phase.explicit, Phase.generate])
settings.register_profile("pdpx-fuzz", max_examples=int(os.environ.get("PDPX_FUZZ_EXAMPLES", 800)), deadline=None,
                          derandomize=False, suppress_health_check=_HEALTH, print_blob=True)
PROFILE = settings.get_profile("pdpx-fuzz" if os.environ.get("PDPX_FUZZ", "") not in ("", "0") else "pdpx-ci")
STRICT = os.environ.get("PDPX_FUZZ_STRICT", "") not in ("", "0")

#: Relative tolerance (of the values' scale) per library: XGBoost sums its trees in float32.
RTOL = {"xgboost": 2e-5, "catboost": 1e-6}
RTOL_DEFAULT = 1e-9


def assert_equals_definition(case, res, what: str) -> None:
    """``res`` (ICE where kept, and average) equals the definition at its own grid values."""
    assert len(res.grid_values) == 1, what
    grid = res.grid_values[0]
    ice, avg = definition(case.model, case.X, res.features[0], grid, res.response, res.outputs, case.weights)
    scale = max(float(np.nanmax(np.abs(ice))) if np.isfinite(ice).any() else 1.0, 1e-3)
    rtol = RTOL.get(case.library, RTOL_DEFAULT)
    msg = f"{what}: {res.method} ({res.response}, outputs {res.outputs}) != definition at grid {grid!r}; {case!r}"
    np.testing.assert_allclose(res.average, avg, rtol=rtol, atol=rtol * scale, err_msg=msg)
    if res.individual is not None:
        rows = ice if res.ice_rows is None else ice[:, np.asarray(res.ice_rows), :]
        np.testing.assert_allclose(res.individual, rows, rtol=rtol, atol=rtol * scale, err_msg=msg)


def mismatches(caught) -> list[str]:
    """The TreeMismatchWarnings among ``caught``."""
    return [str(w.message) for w in caught if issubclass(w.category, pdpx.TreeMismatchWarning)]


def refused_thresholds(case, error) -> bool:
    """grid="thresholds" on a model whose trees pdpx may not read (a user's override): a documented refusal."""
    if case.options.get("grid") == "thresholds" and str(error).startswith("grid='thresholds'"):
        event(f"{case.library}: grid='thresholds' refused ({str(error)[80:150]})")
        return True
    return False


def check_pdpx(case) -> list[str]:
    """auto, exact where it answers, and partial_dependence_many against the definition; the mismatch warnings."""
    model, X, f = case.model, case.X, case.feature
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = pdpx.partial_dependence(model, X, [f], method="auto", kind="both", sample_weight=case.weights,
                                          **case.options)
        except pdpx.PdpxError as e:
            if refused_thresholds(case, e):
                return mismatches(caught)
            raise
        why = f" ({res.notes[0][:70]})" if res.method == "brute" and res.notes else ""
        event(f"{case.library}: auto answered by {res.method}{why}")
        assert_equals_definition(case, res, "method='auto'")
        try:
            ex = pdpx.partial_dependence(model, X, [f], method="exact", kind="both", sample_weight=case.weights,
                                         **case.options)
        except pdpx.PdpxError:
            ex = None
        if ex is not None and ex.method == "exact":
            assert_equals_definition(case, ex, "method='exact'")
        features = many_features(X, case.options)
        try:
            many = pdpx.partial_dependence_many(model, X, features, kind="average", sample_weight=case.weights,
                                                **case.options)
        except pdpx.PdpxError as e:
            if refused_thresholds(case, e):
                return mismatches(caught)
            raise
        assert len(many) == len(features)
        for r in many:
            assert_equals_definition(case, r, f"partial_dependence_many[{r.features[0]}]")
        check_heterogeneity(case, res)
    return mismatches(caught)


#: The options of a generated case that pdpx.heterogeneity takes too.
HETEROGENEITY_OPTIONS = ("grid_resolution", "percentiles", "grid", "custom_values", "categorical_features",
                         "include_missing", "response", "target")


def check_heterogeneity(case, res) -> None:
    """pdpx.heterogeneity of the case's feature (the one walk on trees that qualify) equals the definition: every
    row's curve from the model's own predict, centered on its mean over the grid, weighted mean and variance."""
    options = {k: v for k, v in case.options.items() if k in HETEROGENEITY_OPTIONS}
    het = pdpx.heterogeneity(case.model, case.X, [case.feature], sample_weight=case.weights, **options)
    event(f"{case.library}: heterogeneity by {het.method}" + (" in one pass" if any("one pass" in n for n in
                                                                                 het.notes) else ""))
    ice, avg = definition(case.model, case.X, het.features[0], het.grid_values[0], res.response, res.outputs,
                          case.weights)
    w = np.ones(ice.shape[1]) if case.weights is None else np.asarray(case.weights, dtype=np.float64)
    c = ice - ice.mean(axis=2, keepdims=True)
    mean_c = np.einsum("kng,n->kg", c, w / w.sum())
    variance = np.einsum("kng,n->kg", (c - mean_c[:, None, :]) ** 2, w / w.sum())
    scale = max(float(np.nanmax(np.abs(ice))) if np.isfinite(ice).any() else 1.0, 1e-3)
    rtol = RTOL.get(case.library, RTOL_DEFAULT)
    msg = f"heterogeneity: {het.method} != definition at grid {het.grid_values[0]!r}; {case!r}"
    np.testing.assert_allclose(het.average[0], avg, rtol=rtol, atol=rtol * scale, err_msg=msg)
    np.testing.assert_allclose(het.variance[0], variance, rtol=rtol, atol=rtol * scale * scale, err_msg=msg)
    check_written_curves(case, options, het, c, ice.mean(axis=2), rtol, scale)


def check_written_curves(case, options, het, c, rowmean, rtol, scale) -> None:
    """Where the one walk answers, the curves it writes for the regions of several features
    (the curve reducer ``CenteredCurves``) are every row's centered curve of the definition, with its mean over
    the grid and its sum of squares."""
    from pdpx.core.curves import CenteredCurves, reduce_curves
    from pdpx.core.session import Session
    from pdpx.explain.ice_spread import measure_options

    opts = measure_options("heterogeneity", {**options, "sample_weight": case.weights})
    session = Session(case.model, case.X, opts.but(kind="individual", centered=False, progress=False))
    j = session.resolve_features([case.feature])[0]
    np.testing.assert_array_equal(np.asarray(session.grid_for(j)), np.asarray(het.grid_values[0]))
    K, n, G = len(session.outputs), session.n_rows, len(session.grid_for(j))
    got = reduce_curves(session, [j], CenteredCurves(), ways=("walk",))
    event(f"{case.library}: written curves " + ("checked" if got is not None else "not written (no one walk)"))
    if got is None:
        return
    msg = f"written curves != definition; {case!r}"
    curves = got.value[j]
    written = np.asarray(curves.C).reshape(n, K, G).transpose(1, 0, 2)
    np.testing.assert_allclose(written, c, rtol=rtol, atol=rtol * scale, err_msg=msg)
    np.testing.assert_allclose(curves.rowmean, rowmean, rtol=rtol, atol=rtol * scale, err_msg=msg)
    np.testing.assert_allclose(curves.squares, (c ** 2).sum(axis=(0, 2)), rtol=rtol,
                               atol=rtol * scale * scale * K * G, err_msg=msg)


def check_sklearn_dropin(case) -> list[str]:
    """pdpx.sklearn.partial_dependence (brute and auto) equals scikit-learn's brute where scikit-learn answers."""
    from sklearn.inspection import partial_dependence as sk_pd

    from pdpx.sklearn import partial_dependence as dropin

    model, X, f = case.model, case.X, case.feature
    kw: dict = {"kind": "average", "grid_resolution": case.options.get("grid_resolution", 5)}
    for key in ("percentiles", "custom_values"):
        if key in case.options:
            kw[key] = case.options[key]
    if case.weights is not None:
        kw["sample_weight"] = case.weights
    if isinstance(X[f].dtype, pd.CategoricalDtype):
        kw["categorical_features"] = [f]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            theirs = sk_pd(model, X, [f], method="brute", **kw)
        except Exception as e:  # noqa: BLE001 - scikit-learn refuses this input: nothing to compare
            event(f"sklearn refuses: {type(e).__name__}")
            return []
        rtol = RTOL.get(case.library, RTOL_DEFAULT)
        for method in ("brute", "auto"):
            ours = dropin(model, X, [f], method=method, **kw)
            msg = f"pdpx.sklearn method={method!r} != sklearn brute; {case!r}"
            assert len(ours["grid_values"]) == len(theirs["grid_values"]) == 1, msg
            g_ours, g_theirs = ours["grid_values"][0], theirs["grid_values"][0]
            if g_theirs.dtype.kind == "f":
                np.testing.assert_array_equal(g_ours, g_theirs, err_msg=msg)
            else:
                assert list(map(str, g_ours)) == list(map(str, g_theirs)), msg
            scale = max(float(np.nanmax(np.abs(theirs["average"]))), 1e-3)
            np.testing.assert_allclose(ours["average"], theirs["average"], rtol=rtol, atol=rtol * scale,
                                       err_msg=msg)
    return mismatches(caught)


class _Plugins:
    """Installed pdpx plugins loaded (pdpx-catboost) while inside; the suite's setting restored after."""

    def __enter__(self):
        from pdpx.core.plugins import reset_plugin_manager

        self.before = os.environ.get("PDPX_DISABLE_PLUGINS")
        os.environ["PDPX_DISABLE_PLUGINS"] = "0"
        reset_plugin_manager()

    def __exit__(self, *exc):
        from pdpx.core.plugins import reset_plugin_manager

        if self.before is None:
            os.environ.pop("PDPX_DISABLE_PLUGINS", None)
        else:
            os.environ["PDPX_DISABLE_PLUGINS"] = self.before
        reset_plugin_manager()


def _test_for(family: str):
    @pytest.mark.skipif(not has(NEEDS[family]) or not has("sklearn"),
                        reason=f"{NEEDS[family]} is not installed (make setup installs it)")
    @settings(PROFILE)
    @given(case=FAMILIES[family]())
    def test(case):
        if family == "catboost":
            with _Plugins():
                found = check_pdpx(case) + check_sklearn_dropin(case)
        else:
            found = check_pdpx(case) + check_sklearn_dropin(case)
        if found:
            event(f"{case.library}: TreeMismatchWarning")
            print(f"\nTreeMismatchWarning for {case!r}:\n  " + "\n  ".join(found))
            assert not STRICT, f"TreeMismatchWarning (PDPX_FUZZ_STRICT=1): {found[0]}; {case!r}"

    test.__name__ = f"test_generated_{family}_models_equal_definition"
    test.__doc__ = f"Random {family} models: auto, exact, many and the drop-in equal the definition."
    return test


test_generated_sklearn_models_equal_definition = _test_for("sklearn")
test_generated_xgboost_models_equal_definition = _test_for("xgboost")
test_generated_lightgbm_models_equal_definition = _test_for("lightgbm")
test_generated_catboost_models_equal_definition = _test_for("catboost")
test_generated_pipeline_models_equal_definition = _test_for("pipeline")
