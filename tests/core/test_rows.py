"""core/rows.py: one interface for where the rows live, and one table of what each source can do.

* docs/large-data.md's capability table is the table of needs as :func:`capability_table` renders it;
* every public function runs on every source (a pandas frame, a Dask collection, a Spark DataFrame): it computes,
  equal to the same call on the same rows as pandas where the result is a number, or raises exactly the table's
  message;
* no code outside the sources asks which kind of rows it holds (``place_of`` once, at the report's entry point).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.rows import NEEDS, SOURCE_NAMES, Rows, capability_table, message, require

ROOT = Path(__file__).resolve().parents[2]
START, END = "<!-- capability table: generated from pdpx.core.rows.NEEDS -->", "<!-- end of the capability table -->"


def test_the_docs_capability_table_is_the_table_of_needs():
    text = (ROOT / "docs" / "large-data.md").read_text()
    assert START in text and END in text, "docs/large-data.md lost the markers of its capability table"
    shown = text.split(START, 1)[1].split(END, 1)[0].strip()
    assert shown == capability_table(), "regenerate docs/large-data.md's table: print(capability_table())"


def test_require_raises_the_tables_message_and_nothing_where_a_source_can():
    for need, entry in NEEDS.items():
        for place in SOURCE_NAMES:
            text = message(need, place, "f")
            if place in entry.refused:
                with pytest.raises(pdpx.PdpxError) as err:
                    require(place, need, "f")
                assert str(err.value) == text and text.startswith("f(): ") and entry.refused[place] in text
            else:
                assert text is None
                require(place, need, "f")
    assert not NEEDS["average"].refused and not NEEDS["h_statistic"].refused and not NEEDS["heterogeneity"].refused


def test_no_probe_of_the_kind_of_rows_outside_the_sources():
    """Outside src/pdpx/rows, code reads ``rows.here`` or calls ``require``: no ``hasattr(data, ...)``, no
    ``supports_ice_sample``, no type test of a source; at most 5 questions of where X lives, at public entry
    points."""
    probe = re.compile(r"supports_ice_sample|is_spark_frame|is_dask_collection|place_of\(|isinstance\([^)]*"
                       r"(LocalData|DaskData|SparkData)|hasattr\([^)]*data[^)]*\)|getattr\([^)]*\.data,")
    hits = []
    for path in sorted((ROOT / "src" / "pdpx").rglob("*.py")):
        if "rows" in path.relative_to(ROOT / "src" / "pdpx").parts[:1]:
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if probe.search(line) and not line.lstrip().startswith(("#", "from ", "import ")):
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert len(hits) <= 5, "\n".join(hits)
    assert all(h.startswith(("src/pdpx/reporting.py", "src/pdpx/core/data.py")) for h in hits), "\n".join(hits)


# ---------------------------------------------------------------- every public function on every source
def _frame():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(240, 3)), columns=["a", "b", "c"])
    X["g"] = rng.integers(0, 2, len(X)).astype(float)
    y = X.a * X.b + np.sin(X.c) + X.g
    return X, y


@pytest.fixture(scope="module")
def fitted():
    from sklearn.ensemble import RandomForestRegressor

    X, y = _frame()
    return X, RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0).fit(X, y)


def _pd(res):
    return res.average


#: need -> (public function, the call on (model, X, tmp_path), what of the result is compared with pandas or None)
CALLS = {
    "average": ("partial_dependence", lambda m, X, p: pdpx.partial_dependence(m, X, "a", grid_resolution=6), _pd),
    "ice": ("partial_dependence", lambda m, X, p: pdpx.partial_dependence(m, X, "a", kind="both",
                                                                           grid_resolution=6),
            lambda r: np.concatenate([r.average.ravel(), r.individual.ravel()])),
    "ice_sample": ("partial_dependence", lambda m, X, p: pdpx.partial_dependence(
        m, X, "a", kind="both", ice_sample=15, random_state=1, grid_resolution=6),
        lambda r: np.concatenate([r.average.ravel(), r.individual.ravel()])),
    "interval": ("partial_dependence", lambda m, X, p: pdpx.partial_dependence(
        m, X, "a", interval=0.8, n_boot=10, random_state=2, grid_resolution=6),
        lambda r: np.concatenate([r.lower.ravel(), r.upper.ravel()])),
    "members": ("partial_dependence", lambda m, X, p: pdpx.partial_dependence(
        m, X, "a", interval="members", grid_resolution=6), _pd),
    "by": ("partial_dependence", lambda m, X, p: pdpx.partial_dependence(m, X, "a", by="g", grid_resolution=6),
           None),
    "heterogeneity": ("heterogeneity", lambda m, X, p: pdpx.heterogeneity(m, X, ["a", "b"], grid_resolution=6),
                      lambda r: np.concatenate([v.ravel() for v in r.variance])),
    "h_statistic": ("h_statistic", lambda m, X, p: pdpx.h_statistic(m, X, ["a", "b"]),
                    lambda r: r.overall["h2"].to_numpy()),
    "regions": ("regions", lambda m, X, p: pdpx.regions(m, X, "a", grid_resolution=6), None),
    "explained_variance": ("explained_variance", lambda m, X, p: pdpx.explained_variance(m, X, ["a", "b"], pairs=1, threeway=0), None),
    "ale": ("ale", lambda m, X, p: pdpx.ale(m, X, "a", grid_resolution=6), None),
    "derivative": ("derivative_ice", lambda m, X, p: pdpx.derivative_ice(m, X, "a", grid_resolution=6),
                   lambda r: np.asarray(r.individual).ravel()),
    "compare": ("compare_methods", lambda m, X, p: pdpx.compare_methods(m, X, "a", grid_resolution=6), None),
    "report": ("report", lambda m, X, p: pdpx.report(m, X, p / "r.html", features=["a"], interactions=None,
                                                     heterogeneity=None, ice_sample=20, progress=False,
                                                     grid_resolution=6), None),
}


def test_every_need_is_called():
    assert set(CALLS) == set(NEEDS)
    for need, (function, _, _) in CALLS.items():
        assert function in NEEDS[need].where or need in ("ice", "ice_sample", "interval", "members", "by")


def _source(place, X, request):
    if place == "local":
        return X
    if place == "dask":
        dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
        return dd.from_pandas(X, npartitions=3)
    spark = request.getfixturevalue("spark")
    return spark.createDataFrame(X).coalesce(2)


def _run(place, need, fitted, request, tmp_path):
    X, model = fitted
    function, call, _ = CALLS[need]
    if need == "report":
        pytest.importorskip("plotnine", reason="the report draws with plotnine")
    source = _source(place, X, request)
    want = message(need, place, function)
    if want is not None:
        with pytest.raises(pdpx.PdpxError) as err:
            call(model, source, tmp_path)
        assert str(err.value) == want
        return None
    return call(model, source, tmp_path)


@pytest.mark.parametrize("need", list(CALLS))
@pytest.mark.parametrize("place", ["dask", "spark"])
def test_every_public_function_on_every_source(place, need, fitted, request, tmp_path):
    """Computes, equal to the same call on the same rows as pandas (compared where the result is numbers), or
    raises exactly the table's message."""
    got = _run(place, need, fitted, request, tmp_path)
    if got is None:
        return
    compare = CALLS[need][2]
    if compare is None:
        return
    X, model = fitted
    if place == "spark":  # the rows in the order Spark holds them: ICE rows and the bootstrap's draws follow it
        X = request.getfixturevalue("spark").createDataFrame(X).coalesce(2).toPandas()
    want = CALLS[need][1](model, X, tmp_path)
    np.testing.assert_allclose(compare(got), compare(want), atol=1e-9, rtol=0)


@pytest.mark.parametrize("need", list(CALLS))
def test_every_public_function_on_a_pandas_frame(need, fitted, request, tmp_path):
    assert message(need, "local", CALLS[need][0]) is None  # a pandas frame can do everything
    _run("local", need, fitted, request, tmp_path)


def test_the_sources_implement_the_interface(fitted):
    from pdpx.core.plugins import adapt
    from pdpx.rows import rows_for

    X, model = fitted
    rows = rows_for(X, adapt(model))
    assert isinstance(rows, Rows) and rows.here and rows.place == "local"
    parts = rows.map_reduce(lambda m, part, w, k: (len(part), k), (7,))
    assert parts == [(len(X), 7)]
    got, w = rows.take([5, 1, 5])
    pd.testing.assert_frame_equal(got, X.iloc[[5, 1, 5]].reset_index(drop=True))
    dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
    drows = rows_for(dd.from_pandas(X, npartitions=3), adapt(model))
    assert isinstance(drows, Rows) and not drows.here and drows.place == "dask"
    sizes = drows.map_reduce(lambda m, part, w, k: (len(part), float(w.sum()), k), (7,), np.ones(len(X)))
    assert [s[0] for s in sizes] == list(drows.sizes) and sum(s[1] for s in sizes) == len(X)
