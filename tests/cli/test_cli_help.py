"""Every example the command line shows runs as shown: each line of `pdpx --help` and of each command's --help
under "Examples", and each command of docs/cli.md's bash blocks in page order, run in an empty folder: the first
example (`pdpx demo files`) writes every file the others name, so a reader who runs them gets them too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("sklearn", reason="scikit-learn is not installed")
pytest.importorskip("xgboost", reason="xgboost is not installed")
pytest.importorskip("skops", reason="skops is not installed")
pytest.importorskip("plotnine", reason="plotnine is not installed")

from cli_examples import make_example_files, run_example, shell_lines, written_file  # noqa: E402

from pdpx.cli.main import FILES, main  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
COMMANDS = ([], ["pd"], ["plot"], ["report"])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_examples")
    make_example_files(d)
    return d


def help_examples(args: list[str]) -> list[str]:
    from click.testing import CliRunner

    text = CliRunner().invoke(main, [*args, "--help"], catch_exceptions=False).output
    block = re.split(r"Examples[^\n]*:\n", text, maxsplit=1)
    assert len(block) == 2, f"pdpx {' '.join(args)} --help shows no examples"
    lines = []
    for line in block[1].splitlines():
        if not line.startswith("  ") or not line.strip():
            break
        lines.append(line.strip())
    return lines


def docs_blocks() -> list[tuple[list[str], str | None]]:
    """docs/cli.md's bash blocks: their commands, and the ```text block right after one (what it prints)."""
    text = DOCS.read_text(encoding="utf-8")
    fences = list(re.finditer(r"^```(\w*)\n(.*?)^```[ \t]*$", text, flags=re.S | re.M))
    found = []
    for i, m in enumerate(fences):
        if m.group(1) != "bash":
            continue
        after = fences[i + 1] if i + 1 < len(fences) else None
        shown = (after.group(2) if after is not None and after.group(1) == "text"
                 and not text[m.end():after.start()].strip() else None)
        found.append((shell_lines(m.group(2)), shown))
    return found


def check_example(line: str, folder: Path, may_fail: bool = False):
    """Run ``line``; it succeeds and writes what it says (or, with ``may_fail``, fails in one error line)."""
    target = written_file(line.split())
    read = target is not None and line.split().count(target) > 1  # -o names an input of the line: it must stay
    before = (folder / target).read_bytes() if read else None
    if target is not None and not read:
        (folder / target).unlink(missing_ok=True)
    result = run_example(line, folder)
    assert "Traceback" not in result.stderr
    if may_fail and result.exit_code != 0:
        assert result.exit_code == 1 and result.stderr.count("pdpx: error:") == 1, (line, result.stderr)
        if read:
            assert (folder / target).read_bytes() == before, f"{line} changed its input"
        else:
            assert target is None or not (folder / target).exists(), line
        return result
    assert result.exit_code == 0, f"{line}\n{result.stderr}"
    if "--help" in result.args:
        return result
    assert "pdpx: wrote " in result.stderr, (line, result.stderr)
    if line == FILES:
        assert {"data.csv", "model.json", "sales.pkl", "weighted.csv"} <= {p.name for p in folder.iterdir()}
        return result
    if target is not None:
        out = folder / target
        assert out.is_file() and out.stat().st_size > 0, line
        assert repr(target) in result.stderr, result.stderr
    else:
        assert result.stdout.strip(), f"{line} printed nothing"
    return result


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a) or "pdpx")
def test_every_help_shows_examples_that_run_in_an_empty_folder(tmp_path, args):
    lines = help_examples(args)
    assert len(lines) >= 4 and lines[0] == FILES, lines
    assert not any(tmp_path.iterdir())
    for line in lines:
        if args and line != FILES:
            assert line.startswith(f"pdpx {args[0]} ") or f" pdpx {args[0]} " in line, line
        check_example(line, tmp_path)


def test_the_bash_examples_of_the_docs_run_in_an_empty_folder_and_print_what_they_show(tmp_path):
    from test_docs_examples import output_matches

    found = docs_blocks()
    assert sum(len(lines) for lines, _ in found) >= 12, found
    assert found[0][0] == [FILES], "docs/cli.md's first shell block writes the files the others use"
    assert not any(tmp_path.iterdir())
    for lines, shown in found:
        printed = "".join(check_example(line, tmp_path, may_fail=shown is not None and "pdpx: error:" in shown).output
                          for line in lines)
        if shown is not None:
            assert output_matches(shown, printed), f"{lines} printed:\n{printed}\nthe page shows:\n{shown}"


def test_an_example_that_fails_fails_the_check(folder):
    """The check can fail: a line whose model is missing, or whose DATA keeps the target."""
    with pytest.raises(AssertionError):
        check_example("pdpx pd model.json data.csv --feature age", folder)  # y left in DATA
    with pytest.raises(AssertionError):
        check_example("echo hello", folder)
