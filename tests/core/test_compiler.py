"""One compile helper (pdpx.core.compiler): every numba kernel of pdpx goes through it, and the warm-up knows them all.

* no module but the helper calls numba's decorators; every module outside the tree machinery that compiles
  through the helper is named in its ``ELSEWHERE`` (so the warm-up compiles it), and every compiled function of
  the tree machinery that is not inlined into another is declared in a kernel record (whose warm-up cases
  compile it);
* after the warm-up of the measures' family, the regions' real calls compile nothing more: the warm-up gives the
  split sums the argument types real calls give them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import compiler

SRC = Path(__file__).resolve().parents[2] / "src" / "pdpx"
DECORATORS = {"njit", "jit", "vectorize", "guvectorize", "cfunc", "stencil"}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")


def _parsed():
    for path in sorted(SRC.rglob("*.py")):
        yield _module(path), ast.parse(path.read_text())


def test_only_the_helper_calls_numbas_decorators():
    bad = []
    for module, tree in _parsed():
        if module == "pdpx.core.compiler":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numba":
                bad += [f"{module}: from {node.module} import {a.name}" for a in node.names if a.name in DECORATORS]
            if isinstance(node, ast.Attribute) and node.attr in DECORATORS and isinstance(node.value, ast.Name) \
                    and node.value.id == "numba":
                bad.append(f"{module}: numba.{node.attr}")
    assert not bad, f"compiled outside pdpx.core.compiler.njit: {bad}"


def _users():
    """The modules that import :func:`pdpx.core.compiler.njit`."""
    out = set()
    for module, tree in _parsed():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("core.compiler") \
                    and any(a.name == "njit" for a in node.names):
                out.add(module)
    return out


def test_every_module_that_compiles_is_known_to_the_warm_up():
    from pdpx.plugins.trees import registry

    users = _users()
    trees = "pdpx.plugins.trees."
    outside = {m for m in users if not m.startswith(trees)}
    assert outside == set(compiler.ELSEWHERE) and outside  # the split sums at least
    inlined_only = {"routing"}  # its functions are inlined into the kernels that call them (records.py)
    assert {m[len(trees):] for m in users if m.startswith(trees)} == set(registry.MODULES) | inlined_only


def _compiled(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "njit" for d in fn.decorator_list)


def _called_by_kernels_only(function: str) -> bool:
    """Whether every use of ``function`` in the tree machinery is inside a compiled function (so compiling that
    one compiles it too), and there is one."""
    uses = []
    for path in sorted((SRC / "plugins" / "trees").glob("*.py")):
        for top in ast.parse(path.read_text()).body:
            for node in ast.walk(top):
                named = getattr(node, "id", None) or getattr(node, "attr", None)
                if named == function and isinstance(node, (ast.Name, ast.Attribute)):
                    uses.append(isinstance(top, ast.FunctionDef) and _compiled(top) and top.name != function)
    return bool(uses) and all(uses)


def test_every_compiled_function_of_the_trees_is_in_a_record():
    """Each compiled function the tree machinery calls from Python is declared in a record (whose warm-up cases
    compile it); the others are inlined, or called from compiled functions only (compiled with them)."""
    from pdpx.plugins.trees import registry

    registry.records()  # imports every kernel module
    declared = set(registry.cold_seconds_table())
    made = {name: d for name, d in compiler.kernels().items() if name.startswith("pdpx.plugins.trees.")}
    assert made
    missing = [name for name, d in made.items() if d.targetoptions.get("inline") != "always"
               and name.removeprefix("pdpx.plugins.trees.") not in declared
               and not _called_by_kernels_only(name.rsplit(".", 1)[1])]
    assert not missing, f"compiled functions no record declares (the warm-up would not compile them): {missing}"


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    n = 2000
    X = pd.DataFrame({"a": rng.normal(size=n), "b": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
                      "c": rng.normal(size=n), "g": pd.Categorical(rng.choice(["u", "v", "w"], n))})
    return X, rng


def test_after_the_warm_up_the_regions_compile_nothing_more(rows):
    """Fresh dispatchers of the split sums (loaded from numba's cache, nothing compiled in them yet), the
    measures' warm-up, then regions by brute force and on trees, weighted (a read-only weight array) or not, on a
    column with missing values and a categorical one: no dispatcher gains a signature."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    from pdpx.explain import split_sums
    from pdpx.plugins.trees import warmup

    X, rng = rows
    split_sums._kernel.cache_clear()
    warmup._family(warmup.MEASURES)
    ours = {k: d for k, d in compiler.kernels().items() if k.startswith("pdpx.explain.split_sums.")}
    assert set(ours) == {f"pdpx.explain.split_sums.{f}" for f in ("_sums_py", "_regions_py", "_bins_py")}
    before = {k: set(d.signatures) for k, d in ours.items()}
    assert all(before.values())

    def f(d):
        return d["a"].to_numpy() * (d["c"].to_numpy() > 0) + np.nan_to_num(d["b"].to_numpy()) + (d["g"] == "u")

    weights = rng.random(len(X))
    weights.flags.writeable = False
    got = [pdpx.regions(f, X, "a", grid_resolution=5, min_gain=0.01),
           pdpx.regions(f, X, "a", grid_resolution=5, min_gain=0.01, sample_weight=weights)]
    numeric = X[["a", "b", "c"]]
    model = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(numeric, f(X))
    got.append(pdpx.regions(model, numeric, ["a", "c"], grid_resolution=5, min_gain=0.01))
    assert any(len(r.regions) > 1 for r in got[:2])  # the searches split: every pass ran
    after = {k: set(d.signatures) for k, d in ours.items()}
    assert after == before, {k: after[k] - before[k] for k in ours}
