"""The ``pdpx`` command line: reports, figures and tidy tables from a saved model and a data file.

    pdpx report MODEL DATA -o report.html
    pdpx plot   MODEL DATA --feature NAME [--feature NAME] -o fig.png
    pdpx pd     MODEL DATA --feature NAME [-o pd.csv|pd.parquet|pd.json]
    pdpx demo

MODEL is read by its extension (:mod:`pdpx.cli.model_files`): XGBoost .json / .ubj, LightGBM
.txt, CatBoost .cbm, skops .skops, an R model exported with pdpx::export_model() (.pdpx.json);
pickle / joblib files and R files (.rds, .rda, .RData), which are code, only with --allow-pickle
(or PDPX_ALLOW_PICKLE=1), and then modules in the working directory can be imported (the
user's own functions a pickled pipeline uses); an R file is read by a separate R process.
DATA is a CSV or Parquet file, read by
:mod:`pdpx.cli.data` (``--dates``, ``--dtypes``, ``--weights``, ``--drop``; a CSV's categorical
columns take the categories stored in the model, :mod:`pdpx.cli.model_categories`).
A mistake (a file that cannot be read, a feature that is not a column, an output extension
the command does not write...) prints one line in the command line's words (its flags, not
the Python API's argument names) and exits with status 1 (2 for a wrong command line); a
failed run leaves no partial output file, and no command writes over its MODEL or DATA. A report
written without parts that failed names them and exits with status 3. Each command says on
stderr what it wrote. Progress bars go to stderr. What is written, and how a CSV table's cells
are kept from being read as formulas by a spreadsheet: :mod:`pdpx.cli.output`.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import click

from .model_files import ALLOW_PICKLE_ENV
from .output import (
    FIGURE_SUFFIXES,
    TABLE_FORMATS,
    OutputError,
    check_not_input,
    check_output,
    table_format,
    write_table,
)

PICKLE_WARNING = ("Loading a pickle or joblib file runs code stored in the file, and so can an R file: only load "
                  "models you trust.")
MODEL_HELP = ("MODEL, by its extension: an XGBoost model (.json, .ubj), a LightGBM model (.txt), a CatBoost "
              "model (.cbm, with the pdpx-catboost plugin), a scikit-learn model saved with skops (.skops) or an "
              "R randomForest, ranger or gbm model exported with pdpx::export_model() (.pdpx.json); a pickle / "
              "joblib file (.pkl, .pickle, .joblib) or an R file (.rds, .rda, .RData, read by R in a process of its "
              f"own) only with --allow-pickle (or {ALLOW_PICKLE_ENV}=1). " + PICKLE_WARNING)
DATA_HELP = ("DATA: a CSV or Parquet file of rows with the model's columns (--drop the others, such as the "
             "target). CSV columns of ISO dates are read as dates.")
#: the examples each --help shows (tests/cli/test_cli_help.py runs them in an empty folder): ``pdpx demo files`` first
FILES = "pdpx demo files"
EXAMPLES = {
    "main": [
        FILES,
        "pdpx pd model.json data.csv --drop y --feature age",
        "pdpx plot model.json data.csv --drop y --feature age -o age.png",
        "pdpx report model.json data.csv --drop y -o report.html",
        "pdpx pd --help",
    ],
    "pd": [
        FILES,
        "pdpx pd model.json data.csv --drop y --feature age",
        "pdpx pd model.json data.csv --drop y --feature age --feature income -o pd.parquet",
        "pdpx pd model.json data.csv --drop y --feature age --kind both --ice 20 -o ice.csv",
        "pdpx pd model.json weighted.csv --drop y --weights w --feature income --format json",
        "pdpx pd churn.json data.csv --drop y --feature age --target 1 --response predict_proba",
        "pdpx pd --allow-pickle sales.pkl sales.csv --drop units --dates day --feature day",
    ],
    "plot": [
        FILES,
        "pdpx plot model.json data.csv --drop y --feature age -o age.png",
        "pdpx plot model.json data.csv --drop y --feature age --feature income -o age_income.svg",
        "pdpx plot model.json data.csv --drop y --feature age --kind both --ice 30 --centered -o ice.pdf",
        "pdpx plot churn.json data.csv --drop y --feature age --target 1 -o churn_age.png",
    ],
    "report": [
        FILES,
        "pdpx report model.json data.csv --drop y -o report.html",
        "pdpx report model.skops data.csv --drop y --feature age --feature income --ice 50 -o report.html",
        "PDPX_ALLOW_PICKLE=1 pdpx report model.pkl weighted.csv --drop y --weights w -o weighted.html",
    ],
}


def _examples(command: str) -> str:
    return "\b\nExamples (the first writes the files they use):\n" + "\n".join(f"  {x}" for x in EXAMPLES[command])


class UserError(click.ClickException):
    """A mistake of the user: one line on stderr, exit status 1, no traceback."""

    def show(self, file=None):  # noqa: D102 - click's hook
        click.echo(f"pdpx: error: {self.format_message()}", err=True, file=file)


class IncompleteReport(UserError):
    """``pdpx report`` wrote the page without parts that failed: one line naming them, exit status 3."""

    exit_code = 3

    @classmethod
    def of(cls, path, missing: list) -> IncompleteReport:
        """The error naming each missing part ``(part, why)`` of the report written to ``path``."""
        parts = "; ".join(f"{part} ({(why.strip().splitlines() or [''])[0]})" for part, why in missing)
        return cls(cli_words(f"wrote {str(path)!r} without {len(missing)} part(s) that failed (the page says so in "
                             f"their place): {parts}"))


def _missing_parts(fn):
    """``fn()`` (it calls :func:`pdpx.report`) and the parts its
    :class:`~pdpx.core.errors.IncompleteReportWarning` named (``[(part, why)]``, empty when none); any other
    warning is shown as it comes."""
    from ..core.errors import IncompleteReportWarning

    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter("always", IncompleteReportWarning)
        show = warnings.showwarning

        def caught(message, category, *args, **kwargs):
            if issubclass(category, IncompleteReportWarning):
                missing.extend(message.missing)
            else:
                show(message, category, *args, **kwargs)

        warnings.showwarning = caught
        return fn(), missing


def _say(kind: str):
    return lambda text: click.echo(f"pdpx: {kind}: {text}", err=True)


# ------------------------------------------------------------------ reading files
def load_model(path: str, allow_pickle: bool = False):
    """The fitted model stored in ``path``, by its extension (:func:`pdpx.cli.model_files.load_model_file`).

    Pickle / joblib and R files load only with ``allow_pickle`` or ``PDPX_ALLOW_PICKLE=1``, with a warning on
    stderr; ``--memory-budget`` of the command being run bounds the reading too.
    """
    from ..core.config import config_context
    from .model_files import ModelFileError, load_model_file, pickle_allowed

    context = click.get_current_context(silent=True)
    budget = context.params.get("memory_budget") if context is not None else None
    try:  # --memory-budget bounds the reading too (an R file's declared sizes, a compressed stream)
        with config_context(**({"memory_budget": budget} if budget is not None else {})):
            return load_model_file(path, allow_pickle=pickle_allowed(allow_pickle), warn=_say("warning"))
    except ModelFileError as exc:
        swapped = Path(path).suffix.lower() in (".csv", ".parquet", ".pq")
        raise UserError(str(exc) + ("; the model comes first: pdpx COMMAND MODEL DATA" if swapped else "")) from None


def _read(model: str, data: str, allow_pickle: bool, spec):
    """The model, its adapter, the rows (checked against the model's columns) and the weights."""
    from ..core.plugins import adapt
    from .data import DataError, check_columns, read_data

    m = load_model(model, allow_pickle)
    try:
        X, weights = read_data(data, spec, m, note=_say("note"))
        adapter = adapt(m)
        check_columns(adapter, X, repr(str(data)), spec)
    except DataError as exc:
        raise UserError(str(exc)) from None
    return m, adapter, X, weights


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# ------------------------------------------------------------------ the API's words in the command line's
#: sentences of the API's messages said again in the command line's words, before the arguments they name
_API_SENTENCES = [
    (r"\b(?:partial_dependence(?:_many)?|report|h_statistic|to_frame)\(\):? ?", ""),
    (r"Use to_frame\(kind='average'\), the arrays res\.average / res\.individual directly, ", "Use --kind average, "),
    (r"\(to_frame\(memory_budget='([^']+)'\) or pdpx\.set_config\(memory_budget='[^']+'\)\)",
     r"(--memory-budget \1)"),
    (r"\(?pdpx\.set_config\(memory_budget='([^']+)'\)\)?", r"--memory-budget \1"),
    (r", or None; got '([^']*)' \(a str\)", r"; got \1"),
    (r"\bcustom_values=\{'([^']+)': \[\.\.\.\]\}", r"--values \1=V1,V2,..."),
    (r"\bcustom_values for (?:numeric |date )?feature\b", "--values for"),
    (r"\bDrop it from features\b", "Leave out its --feature"),
    (r"\(grid='uniform', with grid_resolution for more points\)", "(leave out --grid thresholds)"),
    (r"\bWiden percentiles \(e\.g\. \(0, 1\)\)", "Widen them with --percentiles 0,1"),
    (r"\bwiden percentiles\b", "widen them with --percentiles 0,1"),
    (r"\bunknown categorical feature\b", "--categorical: unknown column"),
    (r"\bhas no response '(\w+)'", r"has no --response \1"),
    (r"^unknown method\b", "--method: unknown method"),
    (r"\bcentered=True\b", "--centered"),
    (r"^unknown feature\b", "--feature: unknown column"),
    (r"\bfeatures lists\b", "--feature names"),
    (r"^X does not have the columns the model was fitted on: (.*)\. Pass X with exactly these columns: (.*)\.$",
     r"DATA does not have the columns the model was fit on: \1; leave the others out with --drop COL (the model's "
     r"columns: \2)"),
    (r"^X has (\d+) columns but (.*) was fitted on (\d+); pass X with the \d+ columns used for fitting, in the same "
     r"order$",
     r"DATA has \1 columns but \2 was fit on \3: leave the others (the target, an ID...) out with --drop COL"),
    (r"\bX has no such column\b", "DATA has no such column"),
    (r"\bX\b(?= (?:has|holds|column)\b)", "DATA"),
]
#: the API's arguments and the flags that set them; those of ``_SPELLED_OUT`` read ``--flag value`` from
#: ``name=value`` too (not only from ``name='value'``)
_FLAGS = {"memory_budget": "--memory-budget", "custom_values": "--values", "ice_sample": "--ice", "n_ice": "--ice",
          "grid": "--grid", "grid_resolution": "--grid-resolution", "categorical_features": "--categorical",
          "sample_weight": "--weights", "max_rows": "--max-rows", "response": "--response", "target": "--target",
          "method": "--method", "kind": "--kind"}
_SPELLED_OUT = ("ice_sample", "response", "target")


def _flag_words(flags: dict, spelled_out) -> list:
    """``name='value'`` reads ``--flag value``; a name with an underscore (never an English word) reads ``--flag``
    wherever it stands."""
    words = []
    for name, flag in flags.items():
        words.append((rf"\b{name}='([^']+)'", rf"{flag} \1"))
        if name in spelled_out:
            words.append((rf"\b{name}=", flag + " "))
        if "_" in name:
            words.append((rf"\b{name}\b", flag))
    return words


#: what :func:`cli_words` rewrites, in order (a message that starts with "target" names the flag last)
_API_WORDS = [*_API_SENTENCES, *_flag_words(_FLAGS, _SPELLED_OUT), (r"^target\b", "--target")]


def cli_words(text: str) -> str:
    """A message of the Python API in the command line's words (its flags instead of argument names)."""
    for pattern, words in _API_WORDS:
        text = re.sub(pattern, words, text)
    return text


def _run(fn):
    """Run ``fn()``; a user's mistake becomes one line on stderr and exit status 1."""
    from ..core.errors import PdpxError

    try:
        return fn()
    except click.ClickException:
        raise
    except OutputError as exc:
        raise UserError(str(exc)) from None
    except (PdpxError, ValueError, TypeError, KeyError, OSError, ImportError) as exc:
        raise UserError(cli_words(_one_line(exc))) from None
    except Exception as exc:
        if type(exc).__module__.startswith("rpy2"):  # R's own error message, e.g. a model R cannot predict with
            raise UserError("R: " + _one_line(exc)) from None
        raise


# ------------------------------------------------------------------ options
def _spec(drop, dates, dtypes, categorical, weights):
    from .data import DataError, DataSpec, parse_dtypes, split_list

    try:
        return DataSpec(drop=tuple(split_list(drop)), dates=tuple(split_list(dates)), dtypes=parse_dtypes(dtypes),
                        categorical=tuple(split_list(categorical)), weights=weights)
    except DataError as exc:
        raise UserError(str(exc)) from None


def _target(adapter, values):
    """``--target`` values as the model's own labels (``"1"`` is the class 1 of a model whose classes are numbers)."""
    if not values:
        return None
    labels = adapter.classes() or []
    by_text = {str(c): c for c in labels}
    out = []
    for value in values:
        parts = [value] if value in by_text or "," not in value else [v.strip() for v in value.split(",")]
        for v in parts:
            if v in by_text:
                out.append(by_text[v])
            elif not labels:
                out.append(int(v) if re.fullmatch(r"-?\d+", v) else v)
            else:
                raise UserError(f"--target {v}: not a class of this model; its classes are "
                                f"{', '.join(map(str, labels))}")
    return out[0] if len(out) == 1 else out


def _pd_options(adapter, spec, weights, *, method, grid_resolution, grid, response, target, kind=None,
                centered=False, ice=None, values=None, memory_budget=None, percentiles=None):
    out = {"method": method, "grid_resolution": grid_resolution, "response": response,
           "target": _target(adapter, target), "custom_values": values or None, "memory_budget": memory_budget}
    if grid != "uniform":
        out["grid"] = grid
    if percentiles is not None:
        out["percentiles"] = _percentiles(percentiles)
    if kind is not None:
        out["kind"] = kind
    if centered:
        out["centered"] = True
    if spec.categorical:
        out["categorical_features"] = list(spec.categorical)
    if weights is not None:
        out["sample_weight"] = weights
    if ice is not None:
        out["ice_sample"] = ice
    return {k: v for k, v in out.items() if v is not None}


def _percentiles(text: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise UserError(f"--percentiles {text}: give two numbers between 0 and 1, e.g. --percentiles 0,1") from None
    if not 0 <= lo < hi <= 1:
        raise UserError(f"--percentiles {text}: give LO,HI with 0 <= LO < HI <= 1, e.g. --percentiles 0.01,0.99")
    return lo, hi


def _values(items, X) -> dict | None:
    from .data import DataError, parse_values

    try:
        return parse_values(items, X) or None
    except DataError as exc:
        raise UserError(str(exc)) from None


def _check_features(features, X, spec) -> None:
    """Each --feature is a column of the rows (a dropped or weights column is named as such); a text feature of
    many values is looked at (:func:`pdpx.cli.data.check_text_features`)."""
    from .data import DataError, check_text_features

    cols = [str(c) for c in X.columns]
    for f in features:
        if f in cols:
            continue
        if f in spec.drop:
            raise UserError(f"--feature {f}: you left {f!r} out with --drop")
        if f == spec.weights:
            raise UserError(f"--feature {f}: {f!r} is the --weights column, which is not a feature")
        parts = [p.strip() for p in f.split(",")]
        if len(parts) > 1 and all(p in cols for p in parts):
            raise UserError(f"--feature {f}: give one name per --feature ({' '.join('--feature ' + p for p in parts)}"
                            " for a joint grid)")
        raise UserError(f"--feature {f}: not a column of DATA; its columns are {cols}")
    try:
        check_text_features(X, features, spec, note=_say("note"))
    except DataError as exc:
        raise UserError(str(exc)) from None


model_arg = click.argument("model", type=click.Path(exists=True, dir_okay=False))
data_arg = click.argument("data", type=click.Path(exists=True, dir_okay=False))


values_opt = click.option("--values", "values", multiple=True, metavar="COL=V1,V2,...",
                          help="A feature's grid: these values (numbers, categories, dates). Repeatable.")
percentiles_opt = click.option("--percentiles", default=None, metavar="LO,HI",
                               help="The grid of a numeric feature spans these percentiles of its values "
                                    "(default 0.05,0.95).")
budget_opt = click.option("--memory-budget", default=None, metavar="SIZE",
                          help="Memory the computation may use, e.g. 4GB (default: half the memory available).")

def data_options(fn):
    """The options that say how DATA is read: --drop, --dates, --dtypes, --categorical, --weights."""
    for opt in reversed([
        click.option("--drop", multiple=True, metavar="COL[,COL...]",
                     help="Leave these columns of DATA out (the target, IDs...). Repeatable."),
        click.option("--dates", multiple=True, metavar="COL[,COL...]",
                     help="Parse these columns as dates (ISO dates are detected on their own). Repeatable."),
        click.option("--dtypes", multiple=True, metavar="COL=TYPE[,...]",
                     help="pandas dtypes of CSV columns, e.g. zip=string,age=Int64,day=date. Repeatable."),
        click.option("--categorical", multiple=True, metavar="COL[,COL...]",
                     help="Treat these columns as categorical: the grid is their distinct values (text "
                          "columns always are). Repeatable."),
        click.option("--weights", default=None, metavar="COL",
                     help="A column of DATA holding each row's weight in the average; it is not a feature."),
    ]):
        fn = opt(fn)
    return fn


def model_options(fn):
    """What to average: --response, --target (--class), and how: --method, --allow-pickle, --progress."""
    for opt in reversed([
        click.option("--response", type=click.Choice(["auto", "predict", "predict_proba", "decision_function",
                                                      "raw"]), default="auto", show_default=True,
                     help="What to average: auto is predict for regressors, predict_proba for classifiers; raw "
                          "is a boosted model's margin."),
        click.option("--target", "--class", "target", multiple=True, metavar="LABEL",
                     help="The class (or output) to show, e.g. --target 1; repeatable. Default: every class, "
                          "the positive one only for a binary classifier."),
        click.option("--method", default="auto", show_default=True,
                     help="auto, brute, exact, recursion, or a plugin's method."),
        click.option("--allow-pickle", is_flag=True,
                     help=f"Load a pickle / joblib MODEL (.pkl, .pickle, .joblib), an R file (.rds, .rda, .RData: "
                          f"its bytes are checked, then a separate R process reads it) or a .skops file's untrusted "
                          f"types; modules in the working directory can then be imported (your own functions the "
                          f"model uses). Such files can run code stored in them: only for files you trust (an R "
                          f"model exported with pdpx::export_model() needs no opt-in). Scripts may set "
                          f"{ALLOW_PICKLE_ENV}=1 instead."),
        click.option("--progress/--no-progress", default=None,
                     help="Progress bars on stderr (default: for long runs in a terminal)."),
        budget_opt,
    ]):
        fn = opt(fn)
    return fn


grid_opt = click.option("--grid-resolution", default=100, show_default=True, type=click.IntRange(min=2),
                        help="Grid points per numeric feature.")
grid_kind_opt = click.option("--grid", "grid", type=click.Choice(["uniform", "thresholds"]), default="uniform",
                             show_default=True,
                             help="uniform: --grid-resolution points between the 5th and 95th percentiles; "
                                  "thresholds: one point per step of a tree model's curve (the exact curve).")
kind_opt = click.option("--kind", type=click.Choice(["average", "individual", "both"]), show_default=True,
                        help="The PD curve (average), the ICE curves (individual), or both.")
centered_opt = click.option("--centered", is_flag=True, help="Centered ICE / PD.")


def ice_opt(default_text: str):
    """``--ice N``: how many ICE curves (rows, a seeded sample)."""
    return click.option("--ice", default=None, type=click.IntRange(min=1), metavar="N",
                        help=f"ICE curves for a seeded sample of N rows ({default_text}); the PD still averages "
                             "every row.")


def curve_options(ice_default_text: str):
    """The options that say which curves to compute (pdpx plot, pdpx pd): --kind, --centered, --ice,
    --grid-resolution, --grid, --values, --percentiles."""
    def decorate(fn):
        for opt in reversed([kind_opt, centered_opt, ice_opt(ice_default_text), grid_opt, grid_kind_opt, values_opt,
                             percentiles_opt]):
            fn = opt(fn)
        return fn
    return decorate


def _curves(model, data, features, spec, *, allow_pickle, progress, kind, ice, values, **flags):
    """Read MODEL and DATA, check each --feature and compute the curves the flags ask for (pdpx plot, pdpx pd).

    ``ice``: ICE curves for a sample of that many rows (at most every row of DATA), None for every row. Returns the
    result and the number of ICE curves (None for the PD alone or every row).
    """
    import pdpx

    m, adapter, X, w = _read(model, data, allow_pickle, spec)
    _check_features(features, X, spec)
    n_ice = None if kind == "average" or ice is None else min(ice, len(X))
    res = pdpx.partial_dependence(m, X, list(features), progress=progress, **_pd_options(
        adapter, spec, w, kind=kind, ice=n_ice, values=_values(values, X), **flags))
    return res, n_ice


# ------------------------------------------------------------------ commands
@click.group(help="The pdpx command line: reports, figures and tidy tables of partial dependence from a saved "
             "model and a data file.\n\n" + MODEL_HELP + "\n\n" + DATA_HELP + "\n\n" + _examples("main"),
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="pdpx")
def main():
    """The ``pdpx`` command."""


def model_command(name: str, summary: str):
    """A command of MODEL and DATA: its help is ``summary``, what MODEL may be, and its examples."""
    def decorate(fn):
        return main.command(name, help=summary + " " + MODEL_HELP + "\n\n" + _examples(name))(model_arg(data_arg(fn)))
    return decorate


@model_command("report", "Write a self-contained HTML report (.html).")
@click.option("-o", "--output", required=True, help="The HTML file to write (.html or .htm).")
@click.option("--feature", "features", multiple=True, help="Show this feature (repeatable; default: every column).")
@click.option("--title", default=None, help="The report's title.")
@click.option("--max-rows", default=None, type=click.IntRange(min=1), help="Average over a sample of this many rows.")
@ice_opt("default 100")
@grid_opt
@data_options
@model_options
def report(model, data, output, features, title, max_rows, ice, grid_resolution, drop, dates, dtypes, categorical,
           weights, response, target, method, allow_pickle, progress, memory_budget):
    """``pdpx report``."""
    def go():
        from ..outputs.report_page import check_report_path
        from ..reporting import report as write_report

        check_report_path(output, what="-o")  # the check pdpx.report makes, before reading anything
        check_not_input(output, {"MODEL": model, "DATA": data})
        spec = _spec(drop, dates, dtypes, categorical, weights)
        m, adapter, X, w = _read(model, data, allow_pickle, spec)
        _check_features(features or [str(c) for c in X.columns], X, spec)
        options = _pd_options(adapter, spec, w, method=method, grid_resolution=grid_resolution, grid="uniform",
                              response=response, target=target, memory_budget=memory_budget)
        path, missing = _missing_parts(lambda: write_report(
            m, X, output, features=list(features) or None, title=title, sample=max_rows, ice_sample=ice or 100,
            progress=True if progress is None else progress, **options))
        if missing:
            raise IncompleteReport.of(path, missing)
        shown = f"features {', '.join(features)}" if features else f"every column of {len(X.columns)}"
        click.echo(f"pdpx: wrote {str(path)!r}: HTML report, {shown}, {len(X)} rows", err=True)
    _run(go)


@model_command("plot", "Draw the partial dependence of one feature (or a 2-way grid of two) to PNG, SVG or PDF.")
@click.option("--feature", "features", multiple=True, required=True,
              help="A target feature; give it twice for a joint 2-way grid.")
@click.option("-o", "--output", required=True, help="The figure to write (.png, .svg or .pdf).")
@curve_options("default 100")
@data_options
@model_options
def plot(model, data, features, output, kind, centered, ice, grid_resolution, grid, values, percentiles, drop, dates,
         dtypes, categorical, weights, response, target, method, allow_pickle, progress, memory_budget):
    """``pdpx plot``."""
    def go():
        check_output(output, FIGURE_SUFFIXES, "a figure",
                     "; for a table use pdpx pd ... -o" if Path(output).suffix.lower() in TABLE_FORMATS else "",
                     inputs={"MODEL": model, "DATA": data})
        if len(features) > 2:
            raise UserError(f"--feature given {len(features)} times: a figure shows one feature, or the 2-way grid of "
                            "two (pdpx pd writes joint grids of more)")
        kind_ = kind or ("both" if len(features) == 1 else "average")
        if len(features) > 1 and kind_ != "average":
            raise UserError(f"--kind {kind_}: a 2-way figure shows the average only; leave out --kind, or give "
                            "one --feature for ICE curves")
        if kind_ == "average" and ice is not None:
            raise UserError("--ice: ICE curves are drawn with --kind both or individual, not average")
        res, n_ice = _curves(model, data, features, _spec(drop, dates, dtypes, categorical, weights),
                             allow_pickle=allow_pickle, progress=progress, kind=kind_, ice=ice or 100, values=values,
                             method=method, grid_resolution=grid_resolution, grid=grid, response=response,
                             target=target, centered=centered, memory_budget=memory_budget, percentiles=percentiles)
        path = res.save(output)
        curves = "PD" if kind_ == "average" else ("PD and " if kind_ == "both" else "") + f"{n_ice} ICE curves"
        click.echo(f"pdpx: wrote {str(path)!r}: {Path(path).suffix[1:].upper()} figure, {curves} of "
                   f"{' x '.join(features)}", err=True)
    _run(go)


@model_command("pd", "Print the tidy partial dependence table (CSV, Parquet or JSON) to stdout or -o.")
@click.option("--feature", "features", multiple=True, required=True,
              help="A target feature; several make one joint grid.")
@click.option("-o", "--output", default=None, help="Write here (.csv, .parquet, .json) instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json"]), default=None,
              help="Table format (default: from -o's extension, else csv).")
@curve_options("default: every row")
@data_options
@model_options
def pd_command(model, data, features, output, fmt, kind, centered, ice, grid_resolution, grid, values, percentiles,
               drop, dates, dtypes, categorical, weights, response, target, method, allow_pickle, progress,
               memory_budget):
    """``pdpx pd``."""
    def go():
        from ..core.files import check_writable

        fmt_ = table_format(output, fmt)
        if output is not None:
            check_writable(output, what="-o")
            check_not_input(output, {"MODEL": model, "DATA": data})
        kind_ = kind or "average"
        if kind_ == "average" and ice is not None:
            raise UserError("--ice: ICE rows are written with --kind both or individual, not average")
        res, _ = _curves(model, data, features, _spec(drop, dates, dtypes, categorical, weights),
                         allow_pickle=allow_pickle, progress=progress, kind=kind_, ice=ice, values=values,
                         method=method, grid_resolution=grid_resolution, grid=grid, response=response, target=target,
                         centered=centered, memory_budget=memory_budget, percentiles=percentiles)
        frame = res.to_frame()
        write_table(frame, output, fmt_)
        where = repr(str(output)) if output is not None else "stdout"
        what = {"average": "PD", "individual": "ICE", "both": "PD and ICE"}[kind_]
        click.echo(f"pdpx: wrote {len(frame)} rows of {fmt_.upper() if fmt_ != 'parquet' else 'Parquet'} to "
                   f"{where}: {what} of {' x '.join(features)}", err=True)
    _run(go)


@main.group(invoke_without_command=True, help="Run the demo (what `make demo` runs): models of every library on "
            "bundled data, figures and a report in demo-output/. `pdpx demo files` writes the files the examples use.")
@click.pass_context
def demo(ctx):
    """``pdpx demo``; ``pdpx demo files``."""
    if ctx.invoked_subcommand is None:
        from ..demo.__main__ import main as run_demo

        sys.exit(run_demo())


@demo.command("files", help="Write every file the examples of `pdpx --help` and docs/cli.md use (data.csv, "
              "model.json, sales.pkl...) into FOLDER (default: the current folder).")
@click.argument("folder", default=".", type=click.Path(file_okay=False))
def demo_files(folder):
    """``pdpx demo files [FOLDER]``."""
    from ..demo.files import write_files

    written, skipped = write_files(folder)
    [click.echo(f"pdpx: note: {name} not written: {why}", err=True) for name, why in skipped.items()]
    click.echo(f"pdpx: wrote {len(written)} files to {str(folder)!r}: {', '.join(written)}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
