"""The ``pdpx`` command line: reports, figures and tidy tables from a saved model and a data file.

    pdpx report MODEL DATA -o report.html
    pdpx plot   MODEL DATA --feature NAME [--feature NAME] -o fig.png
    pdpx pd     MODEL DATA --feature NAME [-o pd.csv|pd.parquet|pd.json]
    pdpx demo

MODEL is read by its extension (:mod:`pdpx.model_files`): XGBoost .json / .ubj, LightGBM
.txt, CatBoost .cbm, skops .skops, R .rds; pickle / joblib files only with --allow-pickle
(or PDPX_ALLOW_PICKLE=1). DATA is a CSV or Parquet file; a CSV's categorical columns take
the categories stored in the model (:mod:`pdpx.model_categories`).
A mistake (a file that cannot be read, a feature that is not a column...) prints one line
and exits with status 1 (2 for a wrong command line); a failed run leaves no partial
output file. Progress bars go to stderr.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import click

from .model_files import ALLOW_PICKLE_ENV

PICKLE_WARNING = "Loading a pickle or joblib file runs code stored in the file: only load models you trust."
MODEL_HELP = ("MODEL, by its extension: an XGBoost model (.json, .ubj), a LightGBM model (.txt), a CatBoost "
              "model (.cbm, with the pdpx-catboost plugin), a scikit-learn model saved with skops (.skops) or an "
              "R randomForest saved with saveRDS (.rds, needs rpy2); a pickle / joblib file (.pkl, .pickle, "
              f".joblib) only with --allow-pickle (or {ALLOW_PICKLE_ENV}=1). " + PICKLE_WARNING)
DATA_SUFFIXES = (".csv", ".parquet", ".pq")
TABLE_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "json"}


class UserError(click.ClickException):
    """A mistake of the user: one line on stderr, exit status 1, no traceback."""

    def show(self, file=None):  # noqa: D102 - click's hook
        click.echo(f"pdpx: error: {self.format_message()}", err=True, file=file)


# ------------------------------------------------------------------ reading files
def _say(kind: str):
    return lambda text: click.echo(f"pdpx: {kind}: {text}", err=True)


def load_model(path: str, allow_pickle: bool = False):
    """The fitted model stored in ``path``, by its extension (:func:`pdpx.model_files.load_model_file`).

    Pickle / joblib files load only with ``allow_pickle`` or ``PDPX_ALLOW_PICKLE=1``, with a warning on stderr.
    """
    from .model_files import ModelFileError, load_model_file, pickle_allowed

    try:
        return load_model_file(path, allow_pickle=pickle_allowed(allow_pickle), warn=_say("warning"))
    except ModelFileError as exc:
        raise UserError(str(exc)) from None


def load_data(path: str, drop: tuple[str, ...] = (), model=None):
    """The rows in a CSV or Parquet file, without the ``drop`` columns.

    With ``model``, its categorical columns take the categories the model stores
    (:func:`pdpx.model_categories.apply_categories`).
    """
    import pandas as pd

    from .model_categories import ModelCategories, apply_categories, model_categories

    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in DATA_SUFFIXES:
        raise UserError(f"cannot identify the data file {str(p)!r}: expected a CSV (.csv) or Parquet (.parquet) file")
    cats = model_categories(model) if model is not None else ModelCategories()
    try:
        frame = pd.read_csv(p, dtype=cats.csv_dtypes() or None) if suffix == ".csv" else pd.read_parquet(p)
    except ImportError:
        raise UserError("reading Parquet needs pyarrow: pip install pyarrow") from None
    except Exception as exc:  # noqa: BLE001 - unreadable data file
        raise UserError(f"could not read {str(p)!r}: {_one_line(exc)}") from None
    missing = [c for c in drop if c not in frame.columns]
    if missing:
        raise UserError(f"--drop: {missing} not among the columns of {str(p)!r}: {list(frame.columns)}")
    frame = frame.drop(columns=list(drop))
    try:
        return apply_categories(frame, cats, repr(str(p)), note=_say("note"))
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _read(model: str, data: str, drop, allow_pickle: bool):
    m = load_model(model, allow_pickle)
    return m, load_data(data, drop, m)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def write_table(frame, path: str | None, fmt: str | None) -> None:
    """``frame`` as CSV / Parquet / JSON to ``path`` (atomically) or to stdout."""
    from .core.files import atomic_path, check_writable

    if fmt is None:
        fmt = TABLE_FORMATS.get(Path(path).suffix.lower()) if path else "csv"
        if fmt is None:
            raise UserError(f"-o {path!r}: give a file ending in .csv, .parquet or .json, or pass --format")
    if path is None:
        if fmt == "parquet":
            buf = io.BytesIO()
            frame.to_parquet(buf, index=False)
            sys.stdout.buffer.write(buf.getvalue())
        else:
            click.echo(_render(frame, fmt), nl=False)
        return
    target = check_writable(path, what="-o")
    with atomic_path(target) as tmp:
        if fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            tmp.write_text(_render(frame, fmt), encoding="utf-8")


def _render(frame, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(json.loads(frame.to_json(orient="records")), indent=None) + "\n"
    return frame.to_csv(index=False)


# ------------------------------------------------------------------ commands
def _run(fn):
    """Run ``fn()``; a user's mistake becomes one line on stderr and exit status 1."""
    from .core.errors import PdpxError

    try:
        return fn()
    except click.ClickException:
        raise
    except (PdpxError, ValueError, TypeError, KeyError, OSError, ImportError) as exc:
        raise UserError(_one_line(exc)) from None
    except Exception as exc:
        if type(exc).__module__.startswith("rpy2"):  # R's own error message, e.g. a model R cannot predict with
            raise UserError("R: " + _one_line(exc)) from None
        raise


def _options(method, grid_resolution, grid="uniform", kind=None):
    out = {"method": method, "grid_resolution": grid_resolution}
    if grid != "uniform":
        out["grid"] = grid
    if kind is not None:
        out["kind"] = kind
    return out


model_arg = click.argument("model", type=click.Path(exists=True, dir_okay=False))
data_arg = click.argument("data", type=click.Path(exists=True, dir_okay=False))
drop_opt = click.option("--drop", multiple=True, metavar="COLUMN",
                        help="Leave this column of DATA out (e.g. the target). Repeatable.")
method_opt = click.option("--method", default="auto", show_default=True,
                          help="auto, brute, exact, recursion, or a plugin's method.")
grid_opt = click.option("--grid-resolution", default=100, show_default=True, type=click.IntRange(min=2),
                        help="Grid points per numeric feature.")
grid_kind_opt = click.option("--grid", "grid", type=click.Choice(["uniform", "thresholds"]), default="uniform",
                             show_default=True,
                             help="uniform: --grid-resolution points between the 5th and 95th percentiles; "
                                  "thresholds: one point per step of a tree model's curve (the exact curve).")
pickle_opt = click.option("--allow-pickle", is_flag=True,
                          help=f"Load a pickle / joblib MODEL (.pkl, .pickle, .joblib), a .skops file's untrusted "
                               f"types or an .rds file that holds code. This runs code stored in the file: only for "
                               f"files you trust. Scripts may set {ALLOW_PICKLE_ENV}=1 instead.")
progress_opt = click.option("--progress/--no-progress", default=None,
                            help="Progress bars on stderr (default: for long runs in a terminal).")


@click.group(help=__doc__.split("\n\n")[0] + "\n\n" + MODEL_HELP + "\n\nDATA: a CSV or Parquet file of rows.",
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pdpx")
def main():
    """The ``pdpx`` command."""


@main.command(help="Write a self-contained HTML report. " + MODEL_HELP)
@model_arg
@data_arg
@click.option("-o", "--output", required=True, help="The HTML file to write.")
@click.option("--feature", "features", multiple=True, help="Show this feature (repeatable; default: every column).")
@click.option("--title", default=None, help="The report's title.")
@click.option("--max-rows", default=None, type=click.IntRange(min=1), help="Average over a sample of this many rows.")
@drop_opt
@pickle_opt
@progress_opt
def report(model, data, output, features, title, max_rows, drop, progress, allow_pickle):
    """``pdpx report``."""
    def go():
        from .core.files import check_writable
        from .reporting import report as write_report

        check_writable(output, what="-o")
        m, X = _read(model, data, drop, allow_pickle)
        path = write_report(m, X, output, features=list(features) or None, title=title, max_rows=max_rows,
                            progress=True if progress is None else progress)
        click.echo(f"wrote {path}", err=True)
    _run(go)


@main.command(help="Draw the partial dependence of one feature (or a 2-way grid of two) to PNG, SVG or PDF. "
              + MODEL_HELP)
@model_arg
@data_arg
@click.option("--feature", "features", multiple=True, required=True,
              help="A target feature; give it twice for a joint 2-way grid.")
@click.option("-o", "--output", required=True, help="The figure to write (.png, .svg or .pdf).")
@click.option("--kind", type=click.Choice(["average", "individual", "both"]), default="both", show_default=True)
@click.option("--centered", is_flag=True, help="Centered ICE / PD.")
@method_opt
@grid_opt
@grid_kind_opt
@drop_opt
@pickle_opt
@progress_opt
def plot(model, data, features, output, kind, centered, method, grid_resolution, grid, drop, progress, allow_pickle):
    """``pdpx plot``."""
    def go():
        import pdpx

        from .core.files import check_writable
        from .outputs.plot import FORMATS

        check_writable(output, what="-o", suffixes=tuple("." + f for f in FORMATS))
        m, X = _read(model, data, drop, allow_pickle)
        kind_ = kind if len(features) == 1 else "average"
        res = pdpx.partial_dependence(m, X, list(features), kind=kind_, centered=centered, progress=progress,
                                      ice_sample=100 if kind_ != "average" else None,
                                      **_options(method, grid_resolution, grid))
        click.echo(f"wrote {res.save(output)}", err=True)
    _run(go)


@main.command("pd", help="Print the tidy partial dependence table (CSV, Parquet or JSON) to stdout or -o. "
              + MODEL_HELP)
@model_arg
@data_arg
@click.option("--feature", "features", multiple=True, required=True,
              help="A target feature; several make one joint grid.")
@click.option("-o", "--output", default=None, help="Write here (.csv, .parquet, .json) instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json"]), default=None,
              help="Table format (default: from -o's extension, else csv).")
@click.option("--kind", type=click.Choice(["average", "individual", "both"]), default="average", show_default=True)
@click.option("--centered", is_flag=True, help="Centered ICE / PD.")
@method_opt
@grid_opt
@grid_kind_opt
@drop_opt
@pickle_opt
@progress_opt
def pd_command(model, data, features, output, fmt, kind, centered, method, grid_resolution, grid, drop,
               progress, allow_pickle):
    """``pdpx pd``."""
    def go():
        import pdpx

        from .core.files import check_writable

        if output is not None:
            check_writable(output, what="-o")
        m, X = _read(model, data, drop, allow_pickle)
        res = pdpx.partial_dependence(m, X, list(features), kind=kind, centered=centered, progress=progress,
                                      **_options(method, grid_resolution, grid))
        write_table(res.to_frame(), output, fmt)
    _run(go)


@main.command(help="Run the demo (what `make demo` runs): models of every library on bundled data, "
              "figures and a report in demo-output/.")
def demo():
    """``pdpx demo``."""
    from .demo.__main__ import main as run_demo

    sys.exit(run_demo())


if __name__ == "__main__":  # pragma: no cover
    main()
