"""The processes and files of the tree kernels' compilation are safe where other users or a read-only disk are.

* every process pdpx starts imports nothing from the folder pdpx is run from (a ``numpy.py`` planted
  there never runs): the background compilation of a cold first call, and the warm-up's processes;
* the lock and numba's fallback cache live in a folder of this user's alone: a name planted in the
  shared temporary folder (a symbolic link, another user's folder, a folder open to all, a file) is
  refused, never followed;
* where numba can write no cache (a read-only installation and home, as in many containers), importing
  pdpx works, brute answers, ``exact`` compiles in memory and says so in ``res.notes``; where only
  pdpx's private folder is writable, the kernels are cached there.

The tests run as root here, where ``chmod`` makes nothing read-only, so the read-only case is made in a
child process by emptying numba's list of cache locators (``numba.core.caching.CacheImpl._locator_classes``,
which every ``cache=True`` decoration walks): exactly what numba sees when no folder is writable.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import textwrap

import pytest

from pdpx.core import userdir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

PLANTED_NUMPY = """
import os
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "MARKER"), "w").close()
raise ImportError("the planted numpy.py ran")
"""


def _env(tmp_path, **extra) -> dict:
    """A child's environment: pdpx from this checkout, home and temporary folder in ``tmp_path``, no numba
    cache setting, no runtime folder."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "PYTHONSAFEPATH")}
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env.update(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"),
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src")] + [p for p in [env.get("PYTHONPATH")] if p]))
    env.update(extra)
    return env


def _planted(tmp_path):
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "numpy.py").write_text(PLANTED_NUMPY)
    return evil


def test_the_planted_module_would_run_under_a_plain_python_m(tmp_path):
    """The control: ``python -m`` from the planted folder imports its ``numpy.py`` (so the tests below can fail)."""
    evil = _planted(tmp_path)
    subprocess.run([sys.executable, "-m", "pdpx.core.userdir"], cwd=evil, env=_env(tmp_path), capture_output=True,
                   timeout=120)
    assert (evil / "MARKER").exists()


def test_processes_pdpx_starts_never_import_from_the_working_folder(tmp_path):
    """The warm-up's processes and the background compilation are started by :func:`jit.module_command`."""
    evil = _planted(tmp_path)
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        import os, subprocess, sys
        from pdpx.plugins.trees import jit
        argv, where = jit.module_command("pdpx.core.userdir")
        assert "-P" in argv and where["env"]["PYTHONSAFEPATH"] == "1" and where["cwd"] != os.getcwd()
        sys.exit(subprocess.run(argv, **where).returncode)
    """))
    done = subprocess.run([sys.executable, str(script)], cwd=evil, env=_env(tmp_path), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not (evil / "MARKER").exists()


def test_a_cold_first_call_from_a_planted_folder_compiles_without_importing_it(tmp_path):
    """End to end: ``auto`` on a cold cache runs brute and starts the background compilation, which gets as far
    as taking its lock (every import done) without running the planted ``numpy.py``."""
    evil = _planted(tmp_path)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    script = tmp_path / "first.py"
    script.write_text(textwrap.dedent("""
        import glob, os, signal, sys, time
        import numpy as np, pandas as pd
        from sklearn.tree import DecisionTreeRegressor
        import pdpx
        from pdpx.plugins.trees import jit
        rng = np.random.default_rng(0)
        X = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
        model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, X.a * X.b)
        res = pdpx.partial_dependence(model, X, "a", grid_resolution=10)
        proc = jit.background_process()
        assert res.method == "brute" and proc is not None, (res.method, res.notes)
        lock = os.path.join(os.environ["XDG_RUNTIME_DIR"], "pdpx", "compile-*.lock")
        deadline = time.monotonic() + 300
        while not glob.glob(lock) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        took = bool(glob.glob(lock))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        print("lock taken" if took else f"no lock; exit code {proc.returncode}")
    """))
    done = subprocess.run([sys.executable, str(script)], cwd=evil, capture_output=True, text=True, timeout=400,
                          env=_env(tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "cold-cache"),
                                   XDG_RUNTIME_DIR=str(runtime)))
    assert done.returncode == 0, done.stderr
    assert "lock taken" in done.stdout
    assert not (evil / "MARKER").exists()


# ------------------------------------------------------------------ the private folder
def test_a_private_folder_is_created_closed_to_others(tmp_path):
    path = userdir.checked_dir(str(tmp_path / "mine"))
    assert path == str(tmp_path / "mine")
    st = os.lstat(path)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
    assert userdir.checked_dir(path) == path  # found again as it is


def test_a_planted_link_is_refused_and_never_followed(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    link = tmp_path / "pdpx-link"
    link.symlink_to(target)
    assert userdir.checked_dir(str(link)) is None
    assert list(target.iterdir()) == []


def test_a_folder_open_to_others_or_a_file_is_refused(tmp_path):
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    assert userdir.checked_dir(str(open_dir)) is None
    (tmp_path / "file").write_text("")
    assert userdir.checked_dir(str(tmp_path / "file")) is None


def test_another_users_folder_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    assert userdir.checked_dir(str(theirs)) is None


def test_with_only_planted_names_there_is_no_private_folder_and_no_lock_file(tmp_path, monkeypatch):
    """Every candidate unusable (the cache home under a file, the temporary folder's name a planted link):
    no folder, and the background compilation's lock is no file at all (at worst two compilations)."""
    from pdpx.plugins.trees import warmup

    shared = tmp_path / "shared"
    shared.mkdir()
    target = tmp_path / "attacker"
    target.mkdir()
    (shared / f"pdpx-{os.geteuid()}").symlink_to(target)
    (tmp_path / "afile").write_text("")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "afile" / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    userdir.forget()
    try:
        assert userdir.private_dir() is None
        lock = warmup._hold_lock()
        assert lock is not None and lock.name == os.devnull
        lock.close()
    finally:
        userdir.forget()
    assert list(target.iterdir()) == []


# ------------------------------------------------------------------ no writable cache
NO_LOCATOR = """
import numba.core.caching as caching
caching.CacheImpl._locator_classes = {locators}
"""


def _run_child(tmp_path, body: str, locators: str) -> subprocess.CompletedProcess:
    script = tmp_path / "child.py"
    script.write_text(NO_LOCATOR.format(locators=locators) + textwrap.dedent(body))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(tmp_path), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


def test_without_a_writable_cache_pdpx_imports_answers_and_says_why(tmp_path):
    done = _run_child(tmp_path, """
        import numpy as np, pandas as pd
        import pdpx
        from sklearn.tree import DecisionTreeRegressor
        from pdpx.core import compiler
        from pdpx.plugins.trees import jit

        rng = np.random.default_rng(0)
        X = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
        res = pdpx.partial_dependence(lambda d: d["a"] * 2.0 + d["b"], X, "a", grid_resolution=5)
        want = [float(np.mean(g * 2.0 + X.b)) for g in res.grid_values[0]]
        assert res.method == "brute" and np.allclose(res.average[0], want)

        model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, X.a * X.b)
        res = pdpx.partial_dependence(model, X, "a", grid_resolution=5, method="exact")
        want = [float(np.mean(model.predict(X.assign(a=g)))) for g in res.grid_values[0]]
        assert res.method == "exact" and np.allclose(res.average[0], want)
        assert any("NUMBA_CACHE_DIR" in n and "in memory" in n for n in res.notes), res.notes
        assert compiler.where() == "memory" and jit.compile_in_background() is False
        print("ok")
    """, "[]")
    assert "ok" in done.stdout


def test_with_only_the_private_folder_writable_the_kernels_are_cached_there(tmp_path):
    done = _run_child(tmp_path, """
        import os
        import numpy as np
        from pdpx.core import compiler

        @compiler.njit(cache=True)
        def twice(x):
            return 2.0 * x

        assert twice(np.float64(1.5)) == 3.0
        folder = compiler.cache_dir()
        assert compiler.where() == "private" and folder.startswith(os.environ["HOME"]), folder
        assert folder in compiler.note()
        files = [f for _, _, fs in os.walk(folder) for f in fs]
        assert any(f.startswith("child.twice") for f in files), files
        print("ok")
    """, "[caching.UserProvidedCacheLocator]")
    assert "ok" in done.stdout
