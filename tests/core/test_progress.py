"""Where progress bars go: nowhere by default outside a terminal or a Jupyter kernel, the notebook
widget in a kernel with ipywidgets, tqdm's text bar without it, and never a warning.

The kernel is simulated here (the modules a kernel has imported, and a shell with a kernel);
tests/outputs/test_notebook.py runs a real one.
"""

import sys
import types
import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import progress

tqdm_std = pytest.importorskip("tqdm.std")


class _Shell:
    """What IPython.get_ipython() returns: a kernel's shell has a ``kernel``; a terminal's has none."""

    def __init__(self, kernel):
        if kernel:
            self.kernel = object()


def _ipython(monkeypatch, *, kernel: bool):
    """Make this process look like IPython: a Jupyter kernel (``kernel=True``) or a terminal IPython."""
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: _Shell(kernel)
    monkeypatch.setitem(sys.modules, "IPython", fake)
    if kernel:
        try:  # ipywidgets reads the real one's version
            import ipykernel
        except ImportError:
            ipykernel = types.ModuleType("ipykernel")
        monkeypatch.setitem(sys.modules, "ipykernel", ipykernel)
    else:
        monkeypatch.delitem(sys.modules, "ipykernel", raising=False)


@pytest.fixture
def outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def no_widgets(monkeypatch):
    """ipywidgets absent (an import of it fails), as in a kernel where it is not installed."""
    monkeypatch.setitem(sys.modules, "ipywidgets", None)


def test_no_bar_by_default_outside_a_terminal_or_a_kernel(outside_ci, capsys):
    bar = progress.progress_bar(10, progress=None, desc="x")
    bar.update(10)
    bar.close()
    assert not isinstance(bar, tqdm_std.tqdm)
    assert capsys.readouterr() == ("", "")


def test_a_terminal_ipython_is_no_kernel(monkeypatch, outside_ci):
    _ipython(monkeypatch, kernel=False)
    assert not progress.in_kernel()
    assert not isinstance(progress.progress_bar(10, progress=None, desc="x"), tqdm_std.tqdm)


def test_a_kernel_is_recognised(monkeypatch):
    _ipython(monkeypatch, kernel=True)
    assert progress.in_kernel()


def test_a_quick_run_in_a_kernel_opens_no_bar(monkeypatch, outside_ci, capsys):
    _ipython(monkeypatch, kernel=True)
    monkeypatch.setattr(progress, "DELAY", 1e9)
    with progress.progress_bar(10, progress=None, desc="pdpx brute") as bar:
        bar.update(10)
    assert bar.n == 10 and bar._bar is None
    assert capsys.readouterr() == ("", "")


def test_no_bar_opens_when_the_work_is_already_done(monkeypatch, outside_ci, capsys):
    monkeypatch.setattr(progress, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    with progress.progress_bar(4, progress=None, desc="x") as bar:
        bar.update(4)  # one step did all the work: a bar now would only flash
    assert bar._bar is None and capsys.readouterr() == ("", "")


def test_a_long_run_in_a_kernel_without_ipywidgets_shows_a_text_bar_and_no_warning(
        monkeypatch, outside_ci, no_widgets, capsys):
    _ipython(monkeypatch, kernel=True)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a TqdmWarning ("IProgress not found") would fail here
        with progress.progress_bar(4, progress=None, desc="pdpx brute") as bar:
            bar.update(1)
            bar.update(3)
    real = bar._bar
    assert type(real) is tqdm_std.tqdm  # the text bar, not the notebook one
    assert real.n == 4 and real.total == 4
    assert "pdpx brute" in capsys.readouterr().err


def test_progress_true_in_a_kernel_without_ipywidgets_gives_no_warning(monkeypatch, no_widgets, capsys):
    _ipython(monkeypatch, kernel=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with progress.progress_bar(3, progress=True, desc="pdpx report") as bar:
            bar.update(3)
    assert type(bar) is tqdm_std.tqdm
    assert "pdpx report" in capsys.readouterr().err


def test_a_kernel_with_ipywidgets_gets_the_notebook_bar(monkeypatch, capsys):
    pytest.importorskip("ipywidgets")
    pytest.importorskip("ipykernel")
    notebook = pytest.importorskip("tqdm.notebook")
    _ipython(monkeypatch, kernel=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with progress.progress_bar(3, progress=True, desc="pdpx report") as bar:
            bar.update(3)
    assert isinstance(bar, notebook.tqdm)
    assert bar.n == 3


def test_ci_shows_no_default_bar_even_in_a_kernel(monkeypatch, capsys):
    _ipython(monkeypatch, kernel=True)
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(progress, "DELAY", 0.0)
    with progress.progress_bar(3, progress=None, desc="x") as bar:
        bar.update(3)
    assert not isinstance(bar, (tqdm_std.tqdm, progress._LateBar))
    assert capsys.readouterr() == ("", "")


def test_progress_false_shows_nothing_even_in_a_terminal(monkeypatch, outside_ci, capsys):
    monkeypatch.setattr(progress, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    with progress.progress_bar(3, progress=False, desc="x") as bar:
        bar.update(3)
    assert capsys.readouterr() == ("", "")


def test_a_long_default_run_in_a_terminal_shows_the_bar_late_and_counts_from_the_start(
        monkeypatch, outside_ci, capsys):
    monkeypatch.setattr(progress, "_stderr_is_terminal", lambda: True)
    clock = [1000.0]
    monkeypatch.setattr(progress.time, "time", lambda: clock[0])
    with progress.progress_bar(10, progress=None, desc="pdpx exact") as bar:
        bar.set_postfix_str("grid")
        bar.update(2)
        assert bar._bar is None  # no time has passed: nothing shown
        clock[0] += progress.DELAY
        bar.update(3)
        real = bar._bar
        assert type(real) is tqdm_std.tqdm
        assert real.n == 5 and real.total == 10 and real.start_t == 1000.0
        bar.total = 12
        assert real.total == 12
        bar.update(7)
    assert real.n == 12
    err = capsys.readouterr().err
    assert "pdpx exact" in err and "grid" in err


def test_partial_dependence_in_a_kernel_without_widgets_warns_nothing(monkeypatch, outside_ci, no_widgets, capsys):
    """The whole path (brute's bar) in a simulated kernel: a text bar, no TqdmWarning."""
    _ipython(monkeypatch, kernel=True)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(size=200), "b": rng.uniform(size=200)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = pdpx.partial_dependence(lambda d: d["a"] * 2 + d["b"], X, ["a"], method="brute", grid_resolution=5,
                                      method_options={"stack": False})
    np.testing.assert_allclose(res.average[0], 2 * res.grid_values[0] + X["b"].mean())
    assert "pdpx brute" in capsys.readouterr().err
