"""Dask input: per-partition computation, exact combination, model shipped once per worker."""

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
da = pytest.importorskip("dask.array", reason="dask is not installed")
distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
psutil = pytest.importorskip("psutil", reason="psutil is not installed")

from _dask_models import CountingForest  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: E402

import pdpx  # noqa: E402

TESTS = Path(__file__).resolve().parent.parent  # where _dask_models lives (workers import it)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(3000, 4)), columns=list("abcd"))
    X["g"] = pd.Categorical(rng.choice(["u", "v", "w"], len(X)))
    y = (X.a + X.b * (X.g == "v") > 0).astype(int)
    clf = HistGradientBoostingClassifier(max_iter=15, random_state=0).fit(X, y)
    w = rng.uniform(0, 2, len(X))
    return X, clf, w


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def assert_same(a, b):
    np.testing.assert_allclose(a.average, b.average, rtol=0, atol=1e-9)
    if b.individual is not None:
        np.testing.assert_allclose(a.individual, b.individual, rtol=0, atol=1e-9)
    for g1, g2 in zip(a.grid_values, b.grid_values):
        assert list(g1) == list(g2)


@pytest.mark.parametrize("method", ["exact", "brute"])
def test_cluster_equals_single_machine(data, client, method):
    X, clf, w = data
    ddf = dd.from_pandas(X, npartitions=5)
    for feats in (["a"], ["a", "g"]):
        kw = dict(kind="both", method=method, grid_resolution=8, sample_weight=w)
        assert_same(pdpx.partial_dependence(clf, ddf, feats, **kw), pdpx.partial_dependence(clf, X, feats, **kw))


def test_without_a_client_partitions_run_here(data):
    X, clf, w = data
    ddf = dd.from_pandas(X, npartitions=3)
    res = pdpx.partial_dependence(clf, ddf, ["b"], grid_resolution=6, sample_weight=w)
    assert res.method == "exact"
    assert "3 Dask partitions" in res.notes[0]
    assert_same(res, pdpx.partial_dependence(clf, X, ["b"], grid_resolution=6, sample_weight=w))


def test_dask_array_input(data, client):
    X, clf, _ = data
    num = X[["a", "b", "c", "d"]]
    model = CountingForest(n_estimators=5, max_depth=4, random_state=0).fit(num.to_numpy(), num.a.to_numpy())
    arr = da.from_array(num.to_numpy(), chunks=(700, 4))
    res = pdpx.partial_dependence(model, arr, [0, 1], kind="both", grid_resolution=5)
    assert_same(res, pdpx.partial_dependence(model, num.to_numpy(), [0, 1], kind="both", grid_resolution=5))


def test_model_is_shipped_once_per_worker(data, client):
    X, _, _ = data
    num = X[["a", "b", "c", "d"]]
    model = CountingForest(n_estimators=5, max_depth=4, random_state=0).fit(num, num.a)
    before = client.run(lambda: __import__("_dask_models").unpickled())
    ddf = dd.from_pandas(num, npartitions=8)
    pdpx.partial_dependence(model, ddf, ["a"], grid_resolution=5)
    after = client.run(lambda: __import__("_dask_models").unpickled())
    assert len(after) == 2
    for worker in after:
        assert after[worker] - before.get(worker, 0) == 1, (before, after)


def test_ice_sample_brings_the_rows_by_position_and_equals_pandas(data):
    """ICE curves of ``ice_sample`` rows of a Dask X: the rows pandas would draw, brought here by partition offsets
    (uneven partitions, weights), the average over every row: equal to the pandas call."""
    X, clf, w = data
    ddf = dd.from_pandas(X, npartitions=5)
    got = pdpx.partial_dependence(clf, ddf, ["a"], kind="both", ice_sample=25, random_state=4, sample_weight=w,
                                  grid_resolution=8)
    want = pdpx.partial_dependence(clf, X, ["a"], kind="both", ice_sample=25, random_state=4, sample_weight=w,
                                   grid_resolution=8)
    np.testing.assert_array_equal(got.ice_rows, want.ice_rows)
    np.testing.assert_allclose(got.individual, want.individual, atol=1e-12, rtol=0)
    np.testing.assert_allclose(got.average, want.average, atol=1e-12, rtol=0)
    assert any("brought here from Dask by their positions" in n for n in got.notes)


def test_take_gives_the_rows_at_positions_in_the_order_asked(data):
    from pdpx.core.plugins import adapt
    from pdpx.rows.dask import DaskData

    X, clf, w = data
    rows = DaskData(dd.from_pandas(X, npartitions=4), adapt(clf))
    rows.weights(w)
    at = np.array([2999, 0, 1500, 0, 751, 2250])  # unordered, a repeat, rows of every partition
    got, gw = rows.take(at)
    pd.testing.assert_frame_equal(got, X.iloc[at].reset_index(drop=True), check_dtype=True)
    np.testing.assert_array_equal(gw, w[at])
    with pytest.raises(pdpx.PdpxError, match="row positions must be between 0 and 2999"):
        rows.take([3000])


def test_h_statistic_on_every_row_where_it_lives_equals_pandas(data, client):
    """Friedman's H of a Dask X on a tree model: the PD functions from pattern counts and the overall sums from one
    pass over the partitions on the workers (map_reduce), equal to H of the same rows as pandas."""
    X, clf, w = data
    ddf = dd.from_pandas(X, npartitions=4)
    kw = dict(sample_weight=w)
    got = pdpx.h_statistic(clf, ddf, ["a", "b", "g"], **kw)
    want = pdpx.h_statistic(clf, X, ["a", "b", "g"], **kw)
    assert got.n_rows == want.n_rows == len(X)
    assert any("rows of the Dask DataFrame" in n and "passes over the partitions" in n for n in got.notes)
    np.testing.assert_allclose(got.overall["h2"], want.overall["h2"], atol=1e-9, rtol=0)
    np.testing.assert_allclose(got.pairwise["h2"], want.pairwise["h2"], atol=1e-9, rtol=0)


def test_h_statistic_of_a_sample_brings_the_rows_pandas_would_draw(data):
    """H on ``sample=`` rows of a Dask X (a model without readable trees: brute force): the rows pandas draws with
    the same seed, brought here by position, so the statistic equals the pandas call's."""
    X, clf, w = data
    f = lambda d: clf.predict_proba(d)[:, 1]  # noqa: E731 - a function: no trees to read
    kw = dict(sample=120, random_state=5, sample_weight=w)
    got = pdpx.h_statistic(f, dd.from_pandas(X, npartitions=3), ["a", "b"], **kw)
    want = pdpx.h_statistic(f, X, ["a", "b"], **kw)
    assert any("of the 3,000 rows of the Dask DataFrame, brought here" in n for n in got.notes)
    np.testing.assert_allclose(got.overall["h2"], want.overall["h2"], atol=1e-12, rtol=0)
    np.testing.assert_allclose(got.pairwise["h2"], want.pairwise["h2"], atol=1e-12, rtol=0)


def test_heterogeneity_on_the_workers_equals_pandas(data, client):
    X, clf, w = data
    got = pdpx.heterogeneity(clf, dd.from_pandas(X, npartitions=4), ["a", "g"], sample_weight=w, grid_resolution=6)
    want = pdpx.heterogeneity(clf, X, ["a", "g"], sample_weight=w, grid_resolution=6)
    assert any("4 Dask partitions" in n for n in got.notes)
    for a, b in zip(got.variance + got.average, want.variance + want.average):
        np.testing.assert_allclose(a, b, atol=1e-12, rtol=0)


def test_members_band_on_the_workers_equals_pandas(data, client):
    """interval='members' on a cluster: the members' view travels as the model and its split trees, made again on
    each worker (rows/tasks.py Rebuilt); the band equals the pandas call's."""
    from sklearn.ensemble import RandomForestClassifier

    X, _, w = data
    num = X[["a", "b", "c", "d"]]
    forest = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(num, (num.a > num.b).astype(int))
    kw = dict(interval="members", grid_resolution=5, sample_weight=w)
    got = pdpx.partial_dependence(forest, dd.from_pandas(num, npartitions=4), "a", **kw)
    want = pdpx.partial_dependence(forest, num, "a", **kw)
    for name in ("average", "lower", "upper", "members"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=0, atol=1e-9)


CTRL_C = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    import numpy as np, pandas as pd, dask.dataframe as dd
    from distributed import Client, LocalCluster
    import pdpx
    from _dask_models import SlowModel

    if __name__ == "__main__":
        X = pd.DataFrame({{"a": np.arange(400.0), "b": np.ones(400)}})
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=50) as lc, \\
                Client(lc):
            print("started", flush=True)
            try:
                pdpx.partial_dependence(SlowModel(), dd.from_pandas(X, npartitions=40), ["a"], method="brute")
            except KeyboardInterrupt:
                print("interrupted", flush=True)
                raise
""")


def test_ctrl_c_cancels_and_leaves_no_worker_processes(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(CTRL_C.format(tests=str(TESTS)))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(4)
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children, "the cluster should have started worker processes"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "interrupted" in out, err[-2000:]
    assert "KeyboardInterrupt" in err
    time.sleep(1)
    alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"worker processes left behind: {alive}"
