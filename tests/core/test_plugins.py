"""The plugin core: hooks, entry points, documentation of every hook."""

import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import plugins

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"

TOY_PLUGIN = '''
import numpy as np
import pdpx
from pdpx.core.adapter import Adapter
from pdpx.core.method import Method, MethodResult


class ToyModel:
    """Not a scikit-learn model: y = 3 * a + b, through a method called `evaluate`."""

    def evaluate(self, X):
        return 3 * X["a"].to_numpy() + X["b"].to_numpy()


class ToyAdapter(Adapter):
    library = "toy"

    def predict(self, X, response):
        return np.asarray(self.model.evaluate(X), dtype=float)[:, None]


class ConstantMethod(Method):
    """Returns 42 everywhere: proves the method was found and ran."""

    name = "toy-constant"

    def compute(self, adapter, request):
        return MethodResult(average=np.full((len(request.outputs),) + request.grid_shape, 42.0))


@pdpx.hookimpl
def pdpx_adapt_model(model):
    if type(model).__name__ == "ToyModel":
        return ToyAdapter(model)


@pdpx.hookimpl
def pdpx_register_methods(register):
    register(ConstantMethod())
'''


@pytest.fixture
def installed_toy_plugin(tmp_path, monkeypatch):
    """A small distribution with real entry-point metadata, importable from sys.path."""
    (tmp_path / "toy_pdpx_plugin.py").write_text(TOY_PLUGIN)
    dist = tmp_path / "toy_pdpx_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-pdpx-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pdpx]\ntoy = toy_pdpx_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PDPX_DISABLE_PLUGINS", "0")
    plugins.reset_plugin_manager()
    yield __import__("toy_pdpx_plugin")
    plugins.reset_plugin_manager()
    sys.modules.pop("toy_pdpx_plugin", None)


def test_entry_point_plugin_adds_an_adapter_and_a_method(installed_toy_plugin):
    X = pd.DataFrame({"a": [0.0, 1.0, 2.0], "b": [1.0, 1.0, 4.0]})
    model = installed_toy_plugin.ToyModel()
    res = pdpx.partial_dependence(model, X, ["a"])
    assert res.method == "brute"
    np.testing.assert_allclose(res.average[0], 3 * res.grid_values[0] + 2.0)
    res = pdpx.partial_dependence(model, X, ["a"], method="toy-constant")
    assert res.method == "toy-constant"
    np.testing.assert_allclose(res.average, 42.0)


def test_without_entry_points_the_toy_model_is_unknown(tmp_path, monkeypatch, installed_toy_plugin):
    monkeypatch.setenv("PDPX_DISABLE_PLUGINS", "1")
    plugins.reset_plugin_manager()
    X = pd.DataFrame({"a": [0.0, 1.0], "b": [1.0, 1.0]})
    with pytest.raises(pdpx.PdpxError, match="does not know how to use"):
        pdpx.partial_dependence(installed_toy_plugin.ToyModel(), X, ["a"])


def test_builtins_are_registered_through_the_same_hooks():
    pm = pdpx.get_plugin_manager(load_entry_points=False)
    names = {name for name, _ in pm.list_name_plugin()}
    assert {"pdpx.adapters.sklearn", "pdpx.adapters.generic", "pdpx.plugins.brute",
            "pdpx.plugins.exact", "pdpx.plugins.recursion"} <= names
    assert {"brute", "exact", "recursion"} <= set(plugins.get_methods(pm))


def test_conflicting_method_names_are_an_error():
    from pdpx.core.method import Method

    class Other(Method):
        name = "brute"

    class Plugin:
        @pdpx.hookimpl
        def pdpx_register_methods(self, register):
            register(Other())

    pm = pdpx.get_plugin_manager(load_entry_points=False)
    pm.register(Plugin())
    with pytest.raises(pdpx.PdpxError, match="two plugins register a method named 'brute'"):
        plugins.get_methods(pm)


def test_every_hook_is_documented():
    text = DOCS.read_text()
    pm = pdpx.get_plugin_manager(load_entry_points=False)
    hooks = [name for name in dir(pm.hook) if name.startswith("pdpx_")]
    assert hooks, "no hooks found"
    for name in hooks:
        spec = getattr(pm.hook, name).spec
        args = ", ".join(spec.argnames)
        assert re.search(rf"^## {name}\({re.escape(args)}\)$", text, re.M), f"hook {name}({args}) undocumented"


def test_documented_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    assert len(blocks) >= 3
    for block in blocks:
        exec(compile(textwrap.dedent(block), str(DOCS), "exec"), {})
