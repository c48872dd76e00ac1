"""The ``SLOW`` table of tests/conftest.py (what ``make test-fast`` leaves out; ``make test`` runs everything) names
modules and tests that exist, each with its reason: a renamed or moved entry would otherwise drop out of the table
unnoticed and bring a slow test back into the inner loop."""

import ast
import importlib.util
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]


def _conftest():
    """tests/conftest.py itself, loaded by its path (another conftest, e.g. the CatBoost plugin's, may hold the name
    ``conftest`` in this process)."""
    spec = importlib.util.spec_from_file_location("pdpx_tests_conftest", ROOT / "tests" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = _conftest()


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_slow_entry_names_an_existing_module_or_test_and_says_why():
    wrong = []
    for key, why in conftest.SLOW.items():
        path, _, name = key.partition("::")
        file = ROOT / path
        if not file.is_file():
            wrong.append(f"{key}: no such file")
        elif name and name not in _functions(file):
            wrong.append(f"{key}: {path} defines no {name}")
        if not why.strip():
            wrong.append(f"{key}: no reason given")
    assert not wrong, "tests/conftest.py SLOW:\n" + "\n".join(wrong)


def test_modules_tests_parametrizations_and_spark_are_ranked_slow_others_not():
    module, test = (k for k in conftest.SLOW if "::" not in k), (k for k in conftest.SLOW if "::" in k)
    module, test = next(module), next(test)
    rel, name = test.split("::")
    assert conftest._slow_rank(SimpleNamespace(name="test_any[x]"), module, False) == list(conftest.SLOW).index(module)
    assert conftest._slow_rank(SimpleNamespace(name=name + "[p-1]"), rel, False) == list(conftest.SLOW).index(test)
    assert conftest._slow_rank(SimpleNamespace(name=name + "_other"), rel, False) is None
    assert conftest._slow_rank(SimpleNamespace(name="test_quick"), "tests/test_api.py", False) is None
    assert conftest._slow_rank(SimpleNamespace(name="test_quick"), "tests/test_api.py", True) is not None
