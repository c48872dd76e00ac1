"""The public extension API (pdpx.extend): docs/plugins.md imports only from it, its names are the objects pdpx
itself uses (their old, internal paths still work), and a third-party plugin written with it alone works."""

from __future__ import annotations

import ast
import importlib
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdpx
import pdpx.extend as extend
from pdpx.core import plugins

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "plugins.md"

#: Where each name of pdpx.extend is defined (the paths plugins imported from before pdpx.extend existed).
DEFINED_IN = {
    "pdpx.core.hookspecs": ["hookimpl"],
    "pdpx.core.plugins": ["get_plugin_manager", "plugin_manager", "reset_plugin_manager", "adapt", "get_methods"],
    "pdpx.core.adapter": ["Adapter", "as_2d", "TIME_RESPONSES"],
    "pdpx.core.times": ["time_names", "step_columns", "aft_curves"],
    "pdpx.core.booster": ["BoosterAdapter", "Extracted", "Unavailable", "self_check", "library_classes"],
    "pdpx.core.ir": ["TreeEnsemble", "TreeModel", "NAN_MISSING", "NAN_AS_ZERO", "ZERO_OR_NAN_MISSING", "model_cache",
                     "numeric_encoder", "numeric_values", "fingerprint"],
    "pdpx.core.method": ["Method", "Batch", "MethodResult", "Request", "MethodOptions", "option"],
    "pdpx.plugins.brute": ["grid_points"],
    "pdpx.core.curves": ["CurveReducer", "CurvePart", "CurveMeans", "CurveMoments", "CenteredCurves", "reduce_ice"],
    "pdpx.adapters.sklearn_transforms": ["ColumnMap", "register_rule", "declare_elementwise", "declare_columnwise"],
    "pdpx.core.errors": ["PdpxError", "PdpxTypeError", "NotFittedError", "ModelOutputError", "ModelPredictError",
                         "PdpxWarning", "NonFiniteWarning", "TreeMismatchWarning"],
}


def _python_blocks(text: str) -> list[str]:
    return [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, re.S)]


def _pdpx_imports(source: str) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import of pdpx in ``source`` (``import pdpx.x``: ``(pdpx.x, [])``)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "pdpx":
            out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.split(".")[0] == "pdpx"]
    return out


def test_the_module_exports_exactly_its_names():
    assert len(extend.__all__) == len(set(extend.__all__))
    public = {n for n in vars(extend) if not n.startswith("_")}
    assert public == set(extend.__all__), public ^ set(extend.__all__)
    assert sorted(n for names in DEFINED_IN.values() for n in names) == sorted(extend.__all__)


@pytest.mark.parametrize("module", sorted(DEFINED_IN))
def test_the_names_are_pdpx_own_objects_and_the_old_paths_still_work(module):
    old = importlib.import_module(module)
    for name in DEFINED_IN[module]:
        assert getattr(extend, name) is getattr(old, name), name


def test_the_old_paths_watched_are_names_of_pdpx_extend_from_their_own_modules():
    """The names plugin pages taught from their defining modules before pdpx.extend existed warn there; the errors
    (public from pdpx itself too) and the names born with pdpx.extend (curve reducers, survival times) have no
    old path to watch."""
    from pdpx.core.oldpaths import MOVED

    assert set(MOVED) <= set(DEFINED_IN) - {"pdpx.core.errors"}
    for module, names in MOVED.items():
        assert set(names) <= set(DEFINED_IN[module]), module
    assert sum(len(n) for n in MOVED.values()) == 33  # the names docs/plugins.md taught before pdpx.extend


def test_an_old_path_warns_outside_pdpx_and_pdpx_extend_does_not(tmp_path):
    """Code outside pdpx (a script in another folder) reading a moved name from its old module gets one
    DeprecationWarning naming pdpx.extend, and the same object; pdpx.extend itself and pdpx's own calls are
    silent."""
    script = tmp_path / "plugin_of_mine.py"
    script.write_text(textwrap.dedent("""
        import warnings
        warnings.simplefilter("error")  # any warning below fails
        import numpy as np, pandas as pd
        from sklearn.ensemble import RandomForestRegressor
        import pdpx
        from pdpx.extend import Adapter, TreeModel, hookimpl, grid_points
        X = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 7})
        assert pdpx.partial_dependence(RandomForestRegressor(5, random_state=0).fit(X, X.a), X, "a").method == "exact"
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as got:
            from pdpx.core.adapter import Adapter as Old
            import pdpx.core.ir as ir
            old_model = ir.TreeModel
        assert Old is Adapter and old_model is TreeModel
        messages = [str(w.message) for w in got if w.category is DeprecationWarning]
        assert len(messages) == 2, messages
        assert "from pdpx.extend import Adapter" in messages[0] and "pdpx.core.adapter" in messages[0]
        assert "from pdpx.extend import TreeModel" in messages[1]
        assert all(w.filename == __file__ for w in got)  # attributed to the line that read the name
        print("ok")
    """))
    import subprocess

    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_every_import_on_the_plugin_page_is_from_pdpx_extend():
    """Every code block of docs/plugins.md imports pdpx's names from pdpx.extend (``import pdpx`` only to call its
    public functions), and the page's table of the public plugin API lists exactly pdpx.extend's names."""
    text = DOCS.read_text()
    blocks = _python_blocks(text)
    assert len(blocks) >= 5
    seen, bad = set(), []
    for block in blocks:
        for module, names in _pdpx_imports(block):
            if module == "pdpx.extend":
                seen.update(names)
                bad += [n for n in names if n not in extend.__all__]
            elif module != "pdpx" or names:
                bad.append(f"{module}: {names}")
        for node in ast.walk(ast.parse(block)):  # pdpx.<name>: a public function or class of pdpx
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "pdpx":
                if node.attr not in pdpx.__all__:
                    bad.append(f"pdpx.{node.attr}")
    assert not bad, f"docs/plugins.md imports from outside pdpx.extend: {bad}"
    assert {"Adapter", "Method", "hookimpl", "grid_points", "get_plugin_manager"} <= seen
    section = text.split("## The public plugin API\n", 1)[1].split("\n## ", 1)[0]
    listed = set()
    rows = re.findall(r"^\| [^|]+ \| (.+) \|$", section, re.M)[1:]  # below the header
    for row in rows:
        listed |= {re.sub(r"\(.*", "", n) for n in re.findall(r"`([^`]+)`", row) if re.fullmatch(r"\w+(\(.*\))?", n)}
    assert listed == set(extend.__all__), listed ^ set(extend.__all__)


def test_the_contrib_plugin_imports_pdpx_extend_only():
    """The CatBoost plugin (contrib/pdpx-catboost): its source imports nothing of pdpx but pdpx.extend (read, not
    imported: this needs no catboost)."""
    bad = []
    for path in sorted((ROOT / "contrib" / "pdpx-catboost" / "src").rglob("*.py")):
        bad += [f"{path.name}: {m}" for m, _ in _pdpx_imports(path.read_text()) if m != "pdpx.extend"]
    assert not bad, bad


TOY_PLUGIN = '''
"""A third-party plugin written with pdpx.extend alone: an adapter whose trees are read, and a method with options."""
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pdpx.extend import (
    Adapter, Method, MethodOptions, MethodResult, NotFittedError, TreeEnsemble, TreeModel, grid_points, hookimpl,
    numeric_encoder, numeric_values, option,
)


class Stumps:
    """y = (2 if a <= 0.5 else 5) + (1 if b <= 0 else -1); a missing value goes right."""

    fitted = True

    def evaluate(self, X):
        a, b = X["a"].to_numpy(dtype=float), X["b"].to_numpy(dtype=float)
        return np.where(a <= 0.5, 2.0, 5.0) + np.where(b <= 0.0, 1.0, -1.0)


class StumpsAdapter(Adapter):
    library = "stumps"

    def check_fitted(self):
        if not self.model.fitted:
            raise NotFittedError("this Stumps model is not fitted")

    def feature_names(self):
        return ["a", "b"]

    def predict(self, X, response):
        return np.asarray(self.model.evaluate(X), dtype=float)[:, None]

    def tree_model(self, response):
        ens = TreeEnsemble(
            left=np.array([1, -1, -1, 4, -1, -1]), right=np.array([2, -1, -1, 5, -1, -1]),
            feature=np.array([0, -1, -1, 1, -1, -1]), threshold=np.array([0.5, 0, 0, 0.0, 0, 0]),
            missing_left=np.zeros(6, dtype=bool), value=np.array([0.0, 2.0, 5.0, 0.0, 1.0, -1.0]),
            tree_start=np.array([0, 3, 6]), tree_group=np.array([0, 0]), n_features=2,
        )
        return TreeModel(ens, numeric_encoder, numeric_values)


@dataclass(frozen=True)
class CenterOptions(MethodOptions):
    at: str = option("mean", choices=("mean", "median"))


class CenterMethod(Method):
    """The model at every grid point, the other features at their mean or median."""

    name = "stumps-center"
    options = CenterOptions

    def compute(self, adapter, request):
        X = request.X
        frame = pd.DataFrame({c: np.repeat(getattr(X[c], request.options.at)(), request.n_grid) for c in X.columns})
        for pos, values in zip(request.features, grid_points(request)):
            frame.iloc[:, pos] = values
        pred = adapter.predict(frame, request.response)[:, request.outputs]
        return MethodResult(average=pred.T.reshape((len(request.outputs),) + request.grid_shape))


@hookimpl
def pdpx_adapt_model(model):
    return StumpsAdapter(model) if type(model).__name__ == "Stumps" else None


@hookimpl
def pdpx_register_methods(register):
    register(CenterMethod())
'''


@pytest.fixture
def stumps_plugin(tmp_path, monkeypatch):
    """The plugin above as an installed distribution (real entry-point metadata), loaded as pdpx loads plugins."""
    (tmp_path / "stumps_pdpx_plugin.py").write_text(TOY_PLUGIN)
    dist = tmp_path / "stumps_pdpx_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: stumps-pdpx-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pdpx]\nstumps = stumps_pdpx_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PDPX_DISABLE_PLUGINS", "0")
    plugins.reset_plugin_manager()
    yield __import__("stumps_pdpx_plugin")
    plugins.reset_plugin_manager()
    sys.modules.pop("stumps_pdpx_plugin", None)


def test_a_plugin_written_with_pdpx_extend_works(stumps_plugin):
    """Its adapter's trees give ``exact`` (1-way and 2-way, a missing value included), its method runs with its
    options, and a value they refuse, or an unfitted model, is refused: each against the definition."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(-1, 2, 60), "b": rng.normal(size=60)})
    X.loc[3, "a"] = np.nan
    model = stumps_plugin.Stumps()
    grid = {"a": np.array([-0.5, 0.5, 0.7, 1.5]), "b": np.array([-1.0, 0.0, 0.5])}

    def pd_def(cols, values):  # the definition: the model's mean prediction with the columns set
        return np.mean(model.evaluate(X.assign(**dict(zip(cols, values)))))

    for method in ("exact", "brute"):
        res = pdpx.partial_dependence(model, X, "a", method=method, custom_values=grid, include_missing=False)
        assert res.method == method
        np.testing.assert_allclose(res.average[0], [pd_def(["a"], [g]) for g in grid["a"]], rtol=1e-12)
        two = pdpx.partial_dependence(model, X, ["a", "b"], method=method, custom_values=grid, include_missing=False)
        want = [[pd_def(["a", "b"], [ga, gb]) for gb in grid["b"]] for ga in grid["a"]]
        np.testing.assert_allclose(two.average[0], want, rtol=1e-12)
    missing = pdpx.partial_dependence(model, X, "a", method="exact", custom_values=grid, include_missing=True)
    assert np.isnan(missing.grid_values[0][-1])
    np.testing.assert_allclose(missing.average[0][-1], pd_def(["a"], [np.nan]), rtol=1e-12)

    for at in ("mean", "median"):
        res = pdpx.partial_dependence(model, X, "a", method="stumps-center", method_options={"at": at},
                                      custom_values=grid, include_missing=False)
        other = getattr(X["b"], at)()
        want = model.evaluate(pd.DataFrame({"a": grid["a"], "b": np.full(4, other)}))
        np.testing.assert_allclose(res.average[0], want, rtol=1e-12)
    with pytest.raises(pdpx.PdpxError, match=r"method_options=\{'at': 'mode'\} of method 'stumps-center'"):
        pdpx.partial_dependence(model, X, "a", method="stumps-center", method_options={"at": "mode"})
    model.fitted = False
    with pytest.raises(pdpx.NotFittedError, match="not fitted"):
        pdpx.partial_dependence(model, X, "a")
