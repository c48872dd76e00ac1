"""House rules that the layout depends on (docs/architecture.md), checked on the source.

import-linter (layers, no cycles, core names no model library) and ruff (lint,
docstrings) run from ``make lint``; these tests cover what those tools do not.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "pdpx"
MODULES = sorted(SRC.rglob("*.py"))
LIBRARIES = ("sklearn", "scikit", "xgboost", "xgb", "lightgbm", "lgb", "catboost", "randomforest", "ranger",
             "gbm", "rpy2")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")  # a package's own name ends in ".__init__", so level 1 is the package
    pkg = base[: len(base) - node.level]
    return ".".join(pkg + ([node.module] if node.module else []))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_imports_a_private_name_of_another(path):
    module = _module_name(path)
    if path.name == "__init__.py":
        module += ".__init__"
    tree = ast.parse(path.read_text())
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if not target.startswith("pdpx"):
                continue
            if any(_private(p) for p in target.split(".")):
                bad.append(f"from {target} import ...")
            bad += [f"from {target} import {a.name}" for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Import):
            bad += [a.name for a in node.names if a.name.startswith("pdpx") and any(_private(p) for p in a.name.split("."))]
    assert not bad, f"{path.relative_to(SRC)} imports private names: {bad}"


def test_core_names_no_model_library():
    """Not in an import (import-linter checks those), not in a string, not in a comment."""
    pattern = re.compile(r"\b(" + "|".join(LIBRARIES) + r")\b", re.IGNORECASE)
    hits = []
    for path in sorted((SRC / "core").rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                hits.append(f"core/{path.name}:{i}: {line.strip()}")
    assert not hits, "core names a model library:\n" + "\n".join(hits)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_source_files_stay_small(path):
    n = len(path.read_text().splitlines())
    assert n <= 600, f"{path.relative_to(SRC)} has {n} lines: split it by concern"


def test_nothing_points_outside_the_repository():
    """Design notes the project relies on live in its own docs/."""
    pattern = re.compile(r"(design|backends|r-interop|style)\.md|\.\./shared|shared/docs")
    files = [*MODULES, *(ROOT / "docs").rglob("*.md"), ROOT / "README.md", *(ROOT / "r" / "pdpx" / "R").glob("*.R"),
             *(ROOT / "tests").rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
    hits = []
    for path in files:
        if path == Path(__file__):
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not hits, "\n".join(hits)


@pytest.mark.parametrize("package", ["pdpx.adapters", "pdpx.plugins", "pdpx.outputs"])
def test_the_builtins_a_package_lists_are_exactly_its_plugins(package):
    """Modules listed in BUILTINS implement a hook; the package's other modules implement none."""
    from pdpx.core import hookspecs

    hooks = {name for name in dir(hookspecs) if name.startswith("pdpx_")}
    pkg = importlib.import_module(package)
    folder = Path(pkg.__file__).parent
    for path in sorted(folder.rglob("*.py")):
        name = _module_name(path)
        if name == package:
            continue
        text = path.read_text()
        implements = bool(re.search(r"@hookimpl", text)) and any(f"def {h}(" in text for h in hooks)
        assert implements == (name in pkg.BUILTINS), (
            f"{name}: {'implements a hook but is not' if implements else 'is listed but implements no hook'} "
            f"in {package}.BUILTINS"
        )


def test_no_function_over_120_lines():
    """A function, its docstring included, fits in 120 lines: a longer one is split into named steps."""
    limit = 120
    long = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    long.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name} ({n} lines)")
    assert not long, f"functions over {limit} lines (split them into named steps):\n" + "\n".join(long)


def test_tests_mirror_the_source_layout():
    """A test folder is the tests of one package (tests/core for src/pdpx/core, ...), and a test file named for a
    module (test_<module>.py) sits in the folder of that module's package: a reader finds a module's tests where
    the module is, and a module's name finds its tests."""
    tests = ROOT / "tests"
    where: dict[str, set[Path]] = {}
    for path in MODULES:
        if "__pycache__" not in path.parts and path.stem != "__init__":
            where.setdefault(path.stem, set()).add(path.parent.relative_to(SRC))
    misplaced = []
    for test in sorted(tests.rglob("test_*.py")):
        folder = test.parent.relative_to(tests)
        if not (SRC / folder).is_dir():
            misplaced.append(f"tests/{folder}/ is no package's folder (src/pdpx/{folder} does not exist)")
        homes = where.get(test.stem[len("test_"):], set())
        if homes and folder not in homes:
            misplaced.append(f"{test.relative_to(ROOT)} is named for a module of "
                             f"{', '.join('src/pdpx/' + str(h) for h in sorted(homes))}")
    assert not misplaced, "tests out of the source layout:\n" + "\n".join(sorted(set(misplaced)))
