"""The promises of docs/guarantees.md, one test (or more) behind each.

Files survive failed writes; settings stay in their context; numba's thread count
is left as found and forked children run ``exact``; memory stays within the budget
end to end (checked under an address-space limit in a subprocess), and the budget's
default follows the memory available; grids never
leave the model's domain; non-finite predictions warn. The agreement of methods
on random data lives in tests/core/test_domains.py (hypothesis).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx import PdpxError
from pdpx.core.errors import ExtrapolationWarning, NonFiniteWarning

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_script(code: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python; the test fails with its output unless it exits 0."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def forest():
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = X.a + X.b * X.c
    return RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0).fit(X, y), X


# ---------------------------------------------------------------- files
def test_a_write_that_fails_part_way_leaves_the_old_file_and_no_temporary(tmp_path):
    """A real failure: the file-size limit (as on a full disk) stops the write after a few KB."""
    plotnine = pytest.importorskip("plotnine", reason="plotnine is installed with pdpx[plot]")  # noqa: F841
    report, figure = tmp_path / "report.html", tmp_path / "fig.png"
    report.write_text("the previous report")
    figure.write_bytes(b"the previous figure")
    run_script(f"""
        import resource, signal, numpy as np, pandas as pd, pdpx
        from sklearn.ensemble import RandomForestRegressor
        X = pd.DataFrame(np.random.default_rng(0).normal(size=(200, 3)), columns=list("abc"))
        model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, X.a + X.b)
        res = pdpx.partial_dependence(model, X, "a", kind="both")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        for call in (lambda: pdpx.report(model, X, {str(report)!r}, progress=False),
                     lambda: res.save({str(figure)!r}, dpi=100)):
            try:
                call()
            except OSError as exc:
                print("failed as expected:", exc)
            else:
                raise SystemExit("the write did not fail")
    """)
    assert report.read_text() == "the previous report"
    assert figure.read_bytes() == b"the previous figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png", "report.html"]


def test_an_interrupted_write_leaves_the_old_file(tmp_path):
    from pdpx.core.files import atomic_path, write_text_atomic

    target = tmp_path / "out.txt"
    write_text_atomic(target, "old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            tmp.write_text("half of the new")
            raise KeyboardInterrupt
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    write_text_atomic(target, "new")
    assert target.read_text() == "new"


# ------------------------------------------------------------- settings
def test_settings_are_per_thread_and_leave_the_default_alone():
    default = pdpx.get_config()["memory_budget"]
    barrier = threading.Barrier(8)
    seen = {}

    def work(i):
        with pdpx.config_context(memory_budget=f"{i + 2}MB"):
            barrier.wait()  # every thread is inside its block at once
            seen[i] = pdpx.get_config()["memory_budget"]
            barrier.wait()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {i: (i + 2) * 2**20 for i in range(8)}
    assert pdpx.get_config()["memory_budget"] == default


def test_settings_are_per_asyncio_task():
    async def task(i, out):
        with pdpx.config_context(memory_budget=f"{i + 5}MB"):
            await asyncio.sleep(0.01 * (3 - i))  # interleave
            out[i] = pdpx.get_config()["memory_budget"]

    async def main():
        out = {}
        await asyncio.gather(*(task(i, out) for i in range(3)))
        return out

    assert asyncio.run(main()) == {i: (i + 5) * 2**20 for i in range(3)}


def test_set_config_changes_the_default_and_a_block_restores_its_own():
    try:
        pdpx.set_config(memory_budget="64MB")
        with pdpx.config_context(memory_budget="8MB"):
            assert pdpx.get_config()["memory_budget"] == 8 * 2**20
        assert pdpx.get_config()["memory_budget"] == 64 * 2**20
    finally:
        pdpx.set_config(memory_budget="auto")  # the default: half the memory available


def test_the_memory_budget_of_a_block_is_used(forest):
    model, X = forest
    with pdpx.config_context(memory_budget="1MB"):
        with pytest.raises(PdpxError, match="memory budget of 1.0 MiB"):
            pdpx.partial_dependence(model, X, ["a", "b"], kind="individual", grid_resolution=100)


# ------------------------------------------------------------ threads
def test_numba_thread_count_is_left_as_found(forest):
    import numba
    model, X = forest
    for mine, asked in ((1, None), (numba.config.NUMBA_NUM_THREADS, 1)):
        numba.set_num_threads(mine)
        pdpx.partial_dependence(model, X, "a", method="exact", n_jobs=asked)
        assert numba.get_num_threads() == mine


FORK_SCRIPT = """
    import multiprocessing, os, sys, numpy as np, pandas as pd, pdpx
    from concurrent.futures import ProcessPoolExecutor
    from sklearn.ensemble import RandomForestRegressor
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(400, 3)), columns=list("abc"))
    model = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, X.a * X.b)

    def pd_exact(_=None):
        r = pdpx.partial_dependence(model, X, ["a", "b"], method="{method}", grid_resolution=8)
        return r.method, r.average

    method, parent = pd_exact()  # the parent starts numba's threads first
    pid = os.fork()
    if pid == 0:
        m, child = pd_exact()
        os._exit(0 if np.allclose(child, parent, atol=1e-12) else 3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"forked child: {{status}}"
    with multiprocessing.get_context("fork").Pool(2) as pool:
        for m, avg in pool.map(pd_exact, range(4)):
            assert np.allclose(avg, parent, atol=1e-12)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as ex:
        for m, avg in ex.map(pd_exact, range(2)):
            assert np.allclose(avg, parent, atol=1e-12)
    print("children:", m)
"""


def test_exact_works_in_forked_children():
    out = run_script(FORK_SCRIPT.format(method="exact"))
    assert "children: exact" in out.stdout


def test_exact_runs_in_children_forked_after_the_callers_own_openmp_threads():
    """pdpx's kernels run on Python threads, never on numba's threading layer: a process whose own numba code
    started OpenMP threads (which do not survive a fork) still forks children that run exact."""
    script = """
        import os, numpy as np, pandas as pd, pdpx, numba
        from sklearn.ensemble import RandomForestRegressor

        @numba.njit(parallel=True)
        def users_own(x):
            s = 0.0
            for i in numba.prange(x.shape[0]):
                s += x[i]
            return s

        users_own(np.ones(1000))  # the caller starts numba's threads (OpenMP when asked for)
        layer = numba.threading_layer()
        X = pd.DataFrame(np.random.default_rng(0).normal(size=(300, 3)), columns=list("abc"))
        model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, X.a * X.b)
        parent = pdpx.partial_dependence(model, X, "a", method="exact")
        pid = os.fork()
        if pid == 0:
            r = pdpx.partial_dependence(model, X, "a")
            ok = r.method == "exact" and np.allclose(r.average, parent.average, atol=1e-12)
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        print("child ran exact on", layer)
    """
    env_script = "import os; os.environ['NUMBA_THREADING_LAYER'] = 'omp'\n" + textwrap.dedent(script)
    out = run_script(env_script)
    assert "child ran exact" in out.stdout


# ------------------------------------------------------------- memory
MEMORY_SCRIPT = """
    import resource, numpy as np, pandas as pd, pdpx
    from sklearn.ensemble import HistGradientBoostingRegressor
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(100_000, 5)), columns=list("abcde"))
    model = HistGradientBoostingRegressor(max_iter=20).fit(X[:5000], (X.a + X.b * X.c)[:5000])
    pdpx.partial_dependence(model, X[:100], ["a", "b"], kind="both", grid_resolution=5).to_frame()  # warm up
    vm = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
    # 700 MiB more address space: the default budget (half of what the process can still take) follows it
    resource.setrlimit(resource.RLIMIT_AS, (vm + 700 * 2**20, resource.RLIM_INFINITY))
    budget = pdpx.get_config()["memory_budget"]
    assert 300 * 2**20 < budget <= 350 * 2**20, budget / 2**20

    res = pdpx.partial_dependence(model, X, "a", kind="both", grid_resolution=100)   # 76 MiB of ICE
    try:
        res.to_frame()
        raise SystemExit("to_frame of a 1.3 GiB frame was not refused")
    except pdpx.PdpxError as exc:
        assert "over the memory budget" in str(exc) and "kind='average'" in str(exc), exc
    assert len(res.to_frame(kind="average")) == 100
    three = pdpx.partial_dependence(model, X, ["a", "b", "c"], kind="individual", grid_resolution=6,
                                    centered=True)  # 165 MiB of ICE, centered in place
    assert three.individual.shape == (1, 100_000, 6, 6, 6)
    print("bounded")
"""


def test_memory_is_bounded_end_to_end_under_an_address_space_limit():
    if not sys.platform.startswith("linux"):
        pytest.skip("the address-space limit is read from /proc (Linux)")
    assert "bounded" in run_script(MEMORY_SCRIPT).stdout


def test_the_default_budget_is_half_the_memory_available(monkeypatch):
    from pdpx.core import config

    pdpx.set_config(memory_budget="auto")
    for machine, cgroup, address_space, expected in ((8 * 2**30, None, None, 4 * 2**30),
                                                     (8 * 2**30, 2**30, None, 2**29),
                                                     (8 * 2**30, None, 600 * 2**20, 300 * 2**20),
                                                     (None, None, None, 256 * 2**20)):
        monkeypatch.setattr(config, "_machine_available", lambda m=machine: m)
        monkeypatch.setattr(config, "_cgroup_available", lambda c=cgroup: c)
        monkeypatch.setattr(config, "_address_space_available", lambda a=address_space: a)
        monkeypatch.setitem(config._machine, "at", -1e9)  # read again now
        assert pdpx.get_config()["memory_budget"] == expected
        with pdpx.config_context(memory_budget="64MB"):
            assert pdpx.get_config()["memory_budget"] == 64 * 2**20
    before = pdpx.get_config()["memory_budget"]
    try:
        pdpx.set_config(memory_budget="64MB")
        assert pdpx.get_config()["memory_budget"] == 64 * 2**20
    finally:
        pdpx.set_config(memory_budget="auto")
    assert pdpx.get_config()["memory_budget"] == before


def test_to_frame_of_a_result_that_fits_the_machine_is_built():
    """100,000 ICE curves x 100 grid points (76 MiB) make a 1.3 GiB tidy frame: built where the memory is there."""
    from pdpx.core.config import available_memory

    free = available_memory()
    if free is None or free < 6 * 2**30:
        pytest.skip(f"needs 6 GiB of available memory for a 1.3 GiB frame; {free and free / 2**30:.1f} GiB here")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(100_000, 2)), columns=["a", "b"])
    res = pdpx.partial_dependence(lambda d: d["a"] * 2 + d["b"], X, "a", kind="both", grid_resolution=100)
    assert res.frame_nbytes() > 2**30 and res.frame_nbytes() < pdpx.get_config()["memory_budget"]
    df = res.to_frame()
    assert len(df) == 100 * (100_000 + 1)
    row = df[(df.kind == "individual") & (df["row"] == 7)]  # the model's own prediction with the column set
    np.testing.assert_allclose(row["yhat"].to_numpy(), 2 * res.grid_values[0] + X.b[7])


def test_to_frame_refuses_up_front_with_its_estimate(forest):
    model, X = forest
    res = pdpx.partial_dependence(model, X, "a", kind="both", grid_resolution=100)
    need = res.frame_nbytes()
    with pytest.raises(PdpxError, match="would take about"):
        res.to_frame(memory_budget=int(need * 0.9) if need * 0.9 > 2**20 else 2**20)
    df = res.to_frame(memory_budget=max(int(need * 1.1), 2**20))
    assert len(df) == 100 * (300 + 1)
    # the estimate does not undershoot the frame
    assert need >= df.memory_usage(deep=True).sum()


def test_the_report_keeps_only_the_ice_curves_it_draws(forest, tmp_path, monkeypatch):
    pytest.importorskip("plotnine", reason="plotnine is installed with pdpx[plot]")
    from pdpx import reporting as report_module

    model, X = forest
    kept = []
    real = report_module.Page

    def spy(**kwargs):
        kept.extend(r.individual.shape[1] for r in kwargs["results"])
        return real(**kwargs)

    monkeypatch.setattr(report_module, "Page", spy)
    pdpx.report(model, X, tmp_path / "r.html", ice_sample=25, interactions=None, progress=False)
    assert kept and set(kept) == {25}


# --------------------------------------------------------------- grids
@pytest.mark.parametrize("dtype", ["int8", "uint8", "Int8", "int16"])
def test_grid_values_outside_a_narrow_dtype_are_not_wrapped(forest, dtype):
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"k": pd.array(rng.integers(0, 50, 300), dtype=dtype), "b": rng.normal(size=300)})
    seen = []

    def model(frame):
        seen.append(frame["k"].to_numpy(dtype=float))
        return frame["k"].to_numpy(dtype=float) * 2 + frame["b"].to_numpy()

    res = pdpx.partial_dependence(model, X, "k", custom_values={"k": [100, 200, 300, -5]})
    assert set(np.unique(np.concatenate(seen[1:]))) == {100.0, 200.0, 300.0, -5.0}
    np.testing.assert_allclose(res.average[0], 2 * np.array([100, 200, 300, -5]) + X.b.mean())
    tree = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, X.k.astype(float))
    e = pdpx.partial_dependence(tree, X, "k", custom_values={"k": [100, 200, 300, -5]}, method="exact")
    b = pdpx.partial_dependence(tree, X, "k", custom_values={"k": [100, 200, 300, -5]}, method="brute")
    np.testing.assert_allclose(e.average, b.average, atol=1e-12)


def test_non_finite_data_never_reaches_a_grid():
    X = pd.DataFrame({"a": np.r_[np.linspace(0, 1, 98), np.inf, -np.inf], "b": np.ones(100)})
    res = pdpx.partial_dependence(lambda d: d["a"].clip(-5, 5), X, "a", percentiles=(0, 1), grid_resolution=10)
    g = res.grid_values[0]
    assert np.all(np.isfinite(g)) and g.min() == 0 and g.max() == 1
    with pytest.raises(PdpxError, match="no finite values"):
        pdpx.partial_dependence(lambda d: d["a"], pd.DataFrame({"a": [np.inf, -np.inf, np.nan]}), "a")


def test_grid_spacing_does_not_overflow_and_tolerances_follow_the_scale():
    huge = pd.DataFrame({"a": np.r_[np.linspace(-1e308, 0, 100), np.linspace(0, 1e308, 100)]})
    g = pdpx.partial_dependence(lambda d: np.tanh(d["a"] / 1e308), huge, "a", percentiles=(0, 1),
                                grid_resolution=5).grid_values[0]
    assert np.all(np.isfinite(g)) and np.all(np.diff(g) > 0) and g[0] == -1e308 and g[-1] == 1e308
    tiny = pd.DataFrame({"a": np.linspace(1e-9, 3e-9, 300)})
    g = pdpx.partial_dependence(lambda d: d["a"], tiny, "a", grid_resolution=10).grid_values[0]
    assert len(g) == 10 and np.all(np.diff(g) > 0)


def test_integer_positions_refer_to_x_as_given(forest):
    model, X = forest
    shuffled = X[["c", "a", "b"]]
    assert pdpx.partial_dependence(model, shuffled, 0).features == ["c"]
    res = pdpx.partial_dependence(model, shuffled, "a", categorical_features=[True, False, False])
    assert res.categorical == [False]
    assert pdpx.partial_dependence(model, shuffled, "c", categorical_features=[True, False, False],
                                   custom_values={"c": [0.0, 1.0]}).categorical == [True]


def test_a_single_name_is_one_categorical_feature_not_its_letters():
    X = pd.DataFrame({"xy": [1, 2, 3, 1, 2], "x": [0.1, 0.2, 0.3, 0.4, 0.5], "y": [1.0] * 5})
    res = pdpx.partial_dependence(lambda d: d["xy"] * 1.0, X, "xy", categorical_features="xy")
    assert res.categorical == [True]
    assert pdpx.partial_dependence(lambda d: d["xy"] * 1.0, X, "x", categorical_features="xy").categorical == [False]


# --------------------------------------------------------- non-finite
def test_non_finite_predictions_warn_with_how_many_and_where():
    X = pd.DataFrame({"a": np.linspace(0, 1, 50), "b": np.linspace(0, 1, 50)})

    def model(d):
        out = d["a"].to_numpy() * 2
        out[(d["a"] > 0.8).to_numpy() & (d["b"] < 0.1).to_numpy()] = np.nan
        return out

    # b == a: the NaN region (a > 0.8, b < 0.1) is a combination absent from the data, and pdpx says so too
    with pytest.warns(ExtrapolationWarning), \
            pytest.warns(NonFiniteWarning, match=r"grid points of the average .* are NaN \(first at a = ") as rec:
        res = pdpx.partial_dependence(model, X, "a", kind="both", grid_resolution=10)
    assert "ICE curves of" in str(rec[0].message) and "rows 0, 1, 2" in str(rec[0].message)
    assert np.isnan(res.average).any() and not np.isnan(res.average).all()
    independent = X.assign(b=np.random.default_rng(0).permutation(X["b"].to_numpy()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpx.partial_dependence(lambda d: d["a"] * 2, independent, "a")


def test_plots_of_huge_predictions_are_drawn_on_a_scaled_axis(tmp_path):
    pytest.importorskip("plotnine", reason="plotnine is installed with pdpx[plot]")
    X = pd.DataFrame({"a": np.linspace(0, 1, 30), "b": np.linspace(1, 0, 30)})
    res = pdpx.partial_dependence(lambda d: (d["a"] + 1) * 1e300, X, "a")
    assert res.save(tmp_path / "big.png", dpi=30).exists()
    p = res.plot()
    assert "1e300" in p.labels.y
    two = pdpx.partial_dependence(lambda d: (d["a"] + d["b"]) * 1e300, X, ["a", "b"], grid_resolution=5)
    assert two.save(tmp_path / "big2.png", dpi=30).exists()
