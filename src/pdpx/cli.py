"""The ``pdpx`` command line: reports, figures and tidy tables from a saved model and a data file.

    pdpx report MODEL DATA -o report.html
    pdpx plot   MODEL DATA --feature NAME [--feature NAME] -o fig.png
    pdpx pd     MODEL DATA --feature NAME [-o pd.csv|pd.parquet|pd.json]
    pdpx demo

MODEL is a pickle / joblib file, an XGBoost model file (.json, .ubj), a LightGBM model
file (.txt) or an R ``.rds`` file (read through rpy2). DATA is a CSV or Parquet file.
A mistake (a file that cannot be read, a feature that is not a column...) prints one line
and exits with status 1 (2 for a wrong command line); a failed run leaves no partial
output file. Progress bars go to stderr.
"""

from __future__ import annotations

import io
import json
import pickle
import sys
from pathlib import Path

import click

PICKLE_WARNING = (
    "Loading a pickle or joblib file runs code stored in the file: only load models you trust."
)
MODEL_HELP = ("MODEL: a pickle / joblib file (.pkl, .pickle, .joblib), an XGBoost model (.json, .ubj), "
              "a LightGBM model (.txt) or an R model saved with saveRDS (.rds, needs rpy2). " + PICKLE_WARNING)
#: how joblib's compressed files begin: zlib, gzip, bz2, xz, lz4
COMPRESSED = (b"x\x01", b"x^", b"x\x9c", b"x\xda", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"\x04\x22\x4d\x18")
#: readRDS, then attach the package named by the model's class (randomForest.formula -> randomForest), so
#: that R finds its predict method
READ_RDS = """function(path) {
  m <- readRDS(path)
  for (cl in class(m)) for (pkg in unique(c(cl, sub("[.].*$", "", cl)))) {
    if (requireNamespace(pkg, quietly = TRUE)) {
      suppressMessages(library(pkg, character.only = TRUE))
      return(m)
    }
  }
  m
}"""
DATA_SUFFIXES = (".csv", ".parquet", ".pq")
TABLE_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "json"}


class UserError(click.ClickException):
    """A mistake of the user: one line on stderr, exit status 1, no traceback."""

    def show(self, file=None):  # noqa: D102 - click's hook
        click.echo(f"pdpx: error: {self.format_message()}", err=True, file=file)


# ------------------------------------------------------------------ reading files
def sniff_model(path: Path) -> str:
    """What kind of model file ``path`` is: 'pickle', 'xgboost-json', 'xgboost-ubj', 'lightgbm' or 'rds'."""
    with open(path, "rb") as fh:
        head = fh.read(64)
    suffix = path.suffix.lower()
    if not head:
        raise UserError(f"model file {str(path)!r} is empty")
    if head[:2] == b"\x1f\x8b" and suffix == ".rds" or head[:2] in (b"X\n", b"A\n", b"B\n") or head[:5] in (
            b"RDX2\n", b"RDX3\n"):
        return "rds"
    if head[:1] == b"\x80" or suffix in (".pkl", ".pickle", ".joblib") and head.startswith(COMPRESSED):
        return "pickle"
    if suffix == ".ubj" or head[:1] == b"{" and head[1:2] in (b"L", b"$", b"#", b"i", b"U"):
        return "xgboost-ubj"
    text = head.lstrip()
    if text.startswith(b"{"):
        return "xgboost-json"
    if text.startswith(b"tree\n") or text.startswith(b"tree\r\n"):
        return "lightgbm"
    raise UserError(
        f"cannot identify the model file {str(path)!r}: expected a pickle / joblib file, an XGBoost model "
        "(.json, .ubj), a LightGBM model (.txt) or an R .rds file"
    )


def load_model(path: str):
    """The fitted model stored in ``path`` (see :func:`sniff_model`). Unpickling runs code from the file."""
    p = Path(path)
    kind = sniff_model(p)
    try:
        if kind == "pickle":
            try:
                import joblib
            except ImportError:  # plain pickles load without joblib
                with open(p, "rb") as fh:
                    return pickle.load(fh)  # noqa: S301 - the user's own file; --help warns
            return joblib.load(p)
        if kind in ("xgboost-json", "xgboost-ubj"):
            import xgboost

            booster = xgboost.Booster()
            booster.load_model(str(p))
            return booster
        if kind == "lightgbm":
            import lightgbm

            return lightgbm.Booster(model_file=str(p))
        import rpy2.robjects as ro

        return ro.r(READ_RDS)(str(p))
    except ImportError as exc:
        raise UserError(f"reading {str(p)!r} ({kind}) needs the {exc.name or 'missing'} package: "
                        f"pip install {exc.name or ''}".rstrip()) from None
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - a file that looked right but does not load
        raise UserError(f"could not load the model in {str(p)!r} as {kind}: {_one_line(exc)}") from None


def load_data(path: str, drop: tuple[str, ...] = ()):
    """The rows in a CSV or Parquet file, without the ``drop`` columns."""
    import pandas as pd

    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in DATA_SUFFIXES:
        raise UserError(f"cannot identify the data file {str(p)!r}: expected a CSV (.csv) or Parquet (.parquet) file")
    try:
        frame = pd.read_csv(p) if suffix == ".csv" else pd.read_parquet(p)
    except ImportError:
        raise UserError("reading Parquet needs pyarrow: pip install pyarrow") from None
    except Exception as exc:  # noqa: BLE001 - unreadable data file
        raise UserError(f"could not read {str(p)!r}: {_one_line(exc)}") from None
    missing = [c for c in drop if c not in frame.columns]
    if missing:
        raise UserError(f"--drop: {missing} not among the columns of {str(p)!r}: {list(frame.columns)}")
    return frame.drop(columns=list(drop))


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
@progress_opt
def report(model, data, output, features, title, max_rows, drop, progress):
    """``pdpx report``."""
    def go():
        from .core.files import check_writable
        from .reporting import report as write_report

        check_writable(output, what="-o")
        m, X = load_model(model), load_data(data, drop)
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
@progress_opt
def plot(model, data, features, output, kind, centered, method, grid_resolution, grid, drop, progress):
    """``pdpx plot``."""
    def go():
        import pdpx

        from .core.files import check_writable
        from .outputs.plot import FORMATS

        check_writable(output, what="-o", suffixes=tuple("." + f for f in FORMATS))
        m, X = load_model(model), load_data(data, drop)
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
@progress_opt
def pd_command(model, data, features, output, fmt, kind, centered, method, grid_resolution, grid, drop,
               progress):
    """``pdpx pd``."""
    def go():
        import pdpx

        from .core.files import check_writable

        if output is not None:
            check_writable(output, what="-o")
        m, X = load_model(model), load_data(data, drop)
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
