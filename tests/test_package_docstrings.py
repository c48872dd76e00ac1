"""Every package of pdpx names each of its modules in its docstring (``__init__.py``): a reader who opens a
package learns from its first page which rooms it holds, and a module added without a word there fails here.

A module counts as named when its docstring refers to it as code: ``name.py``, or inside backticks as
``name``, ``.name`` or ``pdpx.package.name`` (``:mod:`.name``` in Sphinx's words).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "pdpx"


def packages() -> list[Path]:
    """Every folder of src/pdpx with an ``__init__.py``."""
    return sorted(p.parent for p in SRC.rglob("__init__.py"))


def dotted(package: Path) -> str:
    """``pdpx.plugins.trees`` for src/pdpx/plugins/trees."""
    return ".".join(("pdpx",) + package.relative_to(SRC).parts)


def names_module(doc: str, name: str) -> bool:
    """Whether ``doc`` refers to module ``name`` as code (see the module docstring)."""
    n = re.escape(name)
    return bool(re.search(rf"(?<![\w.]){n}\.py\b", doc) or re.search(rf"[`.]{n}`", doc))


def unnamed(package: Path) -> list[str]:
    """The modules of ``package`` its docstring does not name."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    modules = sorted(p.stem for p in package.glob("*.py") if p.name != "__init__.py")
    return [m for m in modules if not names_module(doc, m)]


def test_the_packages_are_found():
    found = {dotted(p) for p in packages()}
    assert {"pdpx", "pdpx.core", "pdpx.adapters", "pdpx.plugins", "pdpx.plugins.trees", "pdpx.explain",
            "pdpx.outputs", "pdpx.sklearn", "pdpx.demo"} <= found


def test_a_module_counts_as_named_only_as_code():
    doc = "Holds :mod:`.grid` and ``steps``, pdpx.core.ir, trust.py, and splits `pdpx.core.splits`; files, config."
    assert [m for m in ["grid", "steps", "ir", "trust", "splits", "files", "config", "plan"]
            if names_module(doc, m)] == ["grid", "steps", "trust", "splits"]


@pytest.mark.parametrize("package", packages(), ids=dotted)
def test_every_package_docstring_names_its_modules(package):
    missing = unnamed(package)
    assert not missing, (f"the docstring of {dotted(package)} (its __init__.py) does not name "
                         f"{', '.join(m + '.py' for m in missing)}: say in a line what each holds, as :mod:`.name`")
