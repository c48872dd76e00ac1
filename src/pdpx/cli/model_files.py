"""Model files the ``pdpx`` command line reads: the loader is chosen by the file's extension.

Safe formats (data, no code): XGBoost ``.json`` / ``.ubj``, LightGBM ``.txt``, CatBoost
``.cbm`` (with the pdpx-catboost plugin), scikit-learn ``.skops`` (skops' trusted types
plus :data:`SKOPS_TRUSTED`) and R tree models exported with ``pdpx::export_model()``
(``.pdpx.json``: :mod:`pdpx.adapters.rexport`, read without R). XGBoost and LightGBM files
are checked first (:mod:`pdpx.cli.model_prechecks`: nesting, sizes, every tree's arrays), so a
file that would crash its library's loader is refused instead.

Files that are code, loaded only with an explicit opt-in (``--allow-pickle`` or
``PDPX_ALLOW_PICKLE=1``): pickle and joblib files (``.pkl``, ``.pickle``, ``.joblib``) run
code stored in the file when loaded, and so can R files (``.rds``, ``.rda``, ``.RData``)
when R reads or uses them. With the opt-in, an R file is still checked from its bytes
(:mod:`pdpx.cli.rds_check`: anything but plain data, a class other than a randomForest's,
ranger's or gbm's own, more than the memory budget, is refused) and then read by a
separate, fenced R process that writes its trees to an export (:mod:`pdpx.cli.rds_export`):
no R runs in pdpx's process. The opt-in also lets skops types beyond the trusted ones
load. A file whose content does not match its extension (a pickle named ``model.json``)
is refused before any loader sees it, with or without the opt-in.

A pickle refers to the functions and classes it holds by module name. A model that uses the
user's own code (a ``FunctionTransformer`` of a function in ``helpers.py``) loads when that
module can be imported: with the opt-in, the working directory is importable while the file
loads (added at the end of ``sys.path``, so a file there never shadows an installed module:
:func:`working_directory_importable`). A module that still cannot be imported is named in the
error, as the user's code (run from the folder that holds it, or set ``PYTHONPATH``) unless it
is a known package (:data:`PACKAGES`: then ``pip install``).

:func:`load_model_file` raises :class:`ModelFileError` with a message for the user.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Callable

from ..adapters.rexport import SUFFIX as EXPORT_SUFFIX
from ..adapters.rexport import looks_like_export

#: the environment variable that opts in to pickle / joblib files (for scripts)
ALLOW_PICKLE_ENV = "PDPX_ALLOW_PICKLE"
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")
#: extension -> (kind, what the file must be)
FORMATS = {
    ".json": ("xgboost-json", "an XGBoost model saved with save_model (JSON)"),
    ".ubj": ("xgboost-ubj", "an XGBoost model saved with save_model (UBJSON)"),
    ".txt": ("lightgbm", "a LightGBM model saved with save_model (text)"),
    ".cbm": ("catboost", "a CatBoost model saved with save_model (.cbm)"),
    ".skops": ("skops", "a scikit-learn model saved with skops.io.dump"),
    EXPORT_SUFFIX: ("pdpx-trees", "an R tree model exported with pdpx::export_model()"),
    ".rds": ("rds", "an R model saved with saveRDS"),
    ".rda": ("rda", "R objects saved with save()"),
    ".rdata": ("rda", "R objects saved with save()"),
    **{s: ("pickle", "a pickle / joblib file") for s in PICKLE_SUFFIXES},
}
R_SUFFIXES = (".rds", ".rda", ".RData")
SAFE_FORMATS = ("XGBoost .json / .ubj, LightGBM .txt, CatBoost .cbm, scikit-learn .skops (skops.io.dump) "
                "or an R randomForest, ranger or gbm model exported with pdpx::export_model() (.pdpx.json)")
PICKLE_RISK = "loading a pickle or joblib file runs code stored in the file"
#: why R files need the opt-in (pdpx.cli.rds_check says what a file can hold)
R_RISK = "an R file (.rds, .rda, .RData) is code to R: reading or using it can run code stored in the file"
#: the safe route for R users: a data-only export, which needs no opt-in
R_EXPORT_HINT = ("in R, export the model's trees to a data-only file, pdpx::export_model(model, \"model.pdpx.json\"), "
                 "and pass that file (it needs no opt-in)")
#: scikit-learn's own tree containers, which skops does not trust by default: their content
#: (arrays, numbers) is checked by skops like any other node, and constructing them runs no
#: code of the file. Everything else beyond skops' defaults needs the pickle opt-in.
#: modules a pickled model commonly refers to -> the distribution to install (others may be the user's own code)
PACKAGES = {
    "sklearn": "scikit-learn", "xgboost": "xgboost", "lightgbm": "lightgbm", "catboost": "catboost",
    "skops": "skops", "joblib": "joblib", "numpy": "numpy", "pandas": "pandas", "scipy": "scipy",
    "rpy2": "rpy2", "pyarrow": "pyarrow", "statsmodels": "statsmodels", "imblearn": "imbalanced-learn",
    "category_encoders": "category-encoders", "feature_engine": "feature-engine", "cloudpickle": "cloudpickle",
    "dill": "dill", "numba": "numba", "torch": "torch", "tensorflow": "tensorflow", "keras": "keras",
    "ngboost": "ngboost", "interpret": "interpret", "pygam": "pygam", "optbinning": "optbinning",
    "sktime": "sktime", "mlxtend": "mlxtend", "polars": "polars", "tabpfn": "tabpfn",
}
SKOPS_TRUSTED = ("sklearn.tree._tree.Tree", "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor")

_PICKLE_GLOBAL = re.compile(rb"^c[A-Za-z_][\w.]*\n[A-Za-z_][\w.]*\n")
_SIGNATURES = (  # (test of the first bytes, what the file looks like)
    (lambda h: h[:1] == b"\x80" and h[1:2] in (b"\x01", b"\x02", b"\x03", b"\x04", b"\x05"), "a Python pickle"),
    (lambda h: bool(_PICKLE_GLOBAL.match(h)), "a Python pickle (protocol 0)"),
    (lambda h: h[:2] in (b"x\x01", b"x^", b"x\x9c", b"x\xda"), "zlib-compressed data (a compressed joblib file?)"),
    (lambda h: h[:2] == b"\x1f\x8b", "gzip-compressed data (a compressed joblib or R .rds file?)"),
    (lambda h: h[:3] == b"BZh", "bzip2-compressed data (a compressed joblib or R .rds file?)"),
    (lambda h: h[:6] == b"\xfd7zXZ\x00", "xz-compressed data (a compressed joblib or R .rds file?)"),
    (lambda h: h[:4] == b"\x04\x22\x4d\x18", "lz4-compressed data (a compressed joblib file?)"),
    (lambda h: h[:4] == b"PK\x03\x04", "a zip archive (a skops file?)"),
    (lambda h: h[:4] == b"CBM1", "a CatBoost .cbm model"),
    (lambda h: h[:2] in (b"X\n", b"A\n", b"B\n"), "an R serialized object (.rds)"),
    (lambda h: h[:3] == b"RDX" or h[:3] == b"RDA" or h[:3] == b"RDB", "R objects saved with save() (.rda)"),
    (lambda h: h.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"tree"), "a LightGBM text model"),
    (lambda h: h[:1] == b"{" and h[1:2] in (b"L", b"$", b"#", b"i", b"U"), "UBJSON (an XGBoost .ubj model?)"),
    (looks_like_export, "a pdpx export of an R model (.pdpx.json)"),
    (lambda h: h.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"), "JSON (an XGBoost .json model?)"),
)
_COMPRESSED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")
#: what each kind's first bytes must be
_EXPECTED = {
    "xgboost-json": lambda h: h.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"),
    "xgboost-ubj": lambda h: h[:1] == b"{",
    "lightgbm": lambda h: h.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"tree"),
    "catboost": lambda h: h[:4] == b"CBM1",
    "skops": lambda h: h[:4] == b"PK\x03\x04",
    "pdpx-trees": looks_like_export,
    "rds": lambda h: h[:2] in (b"X\n", b"A\n", b"B\n") or h.startswith(_COMPRESSED),
    "rda": lambda h: h[:3] in (b"RDX", b"RDA", b"RDB") or h.startswith(_COMPRESSED),
}


class ModelFileError(ValueError):
    """A model file pdpx will not or cannot load; the message says why and what to do."""


def pickle_allowed(flag: bool = False) -> bool:
    """True when the user opted in to pickle files: ``flag`` (``--allow-pickle``) or ``PDPX_ALLOW_PICKLE=1``."""
    return bool(flag) or os.environ.get(ALLOW_PICKLE_ENV, "").strip().lower() in ("1", "true", "yes")


def looks_like(head: bytes) -> str:
    """What a file beginning with ``head`` looks like, in words (read only, never loaded)."""
    for test, words in _SIGNATURES:
        if test(head):
            return words
    if head and all(32 <= b < 127 or b in (9, 10, 13) for b in head):
        return "plain text"
    return "no model format pdpx knows"


def model_suffix(path: Path) -> str:
    """The extension pdpx reads ``path`` by, lower case (``.pdpx.json`` counts as one)."""
    return EXPORT_SUFFIX if path.name.lower().endswith(EXPORT_SUFFIX) else path.suffix.lower()


def model_kind(path: Path) -> str:
    """The kind of model file ``path`` is by its extension, after checking its first bytes agree."""
    suffix = model_suffix(path)
    name = str(path)
    with open(path, "rb") as fh:
        head = fh.read(64)
    if suffix not in FORMATS:
        seen = looks_like(head) if head else "an empty file"
        refuse = "; pdpx will not load it" + (f" ({PICKLE_RISK})" if "pickle" in seen or "joblib" in seen else "")
        raise ModelFileError(
            f"cannot identify the model file {name!r} by its extension {suffix or '(none)'!r} (it looks like "
            f"{seen}){refuse}: pdpx reads {SAFE_FORMATS}, and with --allow-pickle pickle / joblib files (.pkl, "
            ".pickle, .joblib) and R files (.rds, .rda, .RData)")
    kind, what = FORMATS[suffix]
    if not head:
        raise ModelFileError(f"model file {name!r} is empty")
    if kind == "xgboost-json" and looks_like_export(head):
        raise ModelFileError(f"the model file {name!r} is a pdpx export of an R model, which pdpx reads by its "
                             f"extension {EXPORT_SUFFIX}: rename it {Path(name).stem}{EXPORT_SUFFIX} (a .json file is "
                             "read as an XGBoost model)")
    if kind != "pickle" and not _EXPECTED[kind](head):
        seen = looks_like(head)
        if "pickle" in seen or "joblib" in seen:
            raise ModelFileError(
                f"refusing the model file {name!r}: a {suffix} file must be {what}, but this one looks like "
                f"{seen}; pdpx will not load it ({PICKLE_RISK}). Save the model in a safe format "
                f"({SAFE_FORMATS}), or, if you trust the file, name it .pkl / .joblib and pass --allow-pickle")
        raise ModelFileError(f"cannot identify the model file {name!r}: a {suffix} file must be {what}, "
                             f"but this one looks like {seen}")
    return kind


def load_model_file(path, *, allow_pickle: bool = False, warn: Callable[[str], None] | None = None):
    """The fitted model stored in ``path``, loaded by its extension (see the module's docstring).

    ``allow_pickle``: the user's opt-in to pickle / joblib files (and to skops types beyond
    the trusted ones); ``warn`` receives the one-line warning said when the opt-in is used.
    """
    p = Path(path)
    kind = model_kind(p)
    name = str(p)
    if kind == "pickle" and not allow_pickle:
        raise ModelFileError(
            f"refusing to load {name!r}: {PICKLE_RISK}, so pdpx loads pickles only when asked to. If you trust "
            f"the file, pass --allow-pickle (or set {ALLOW_PICKLE_ENV}=1 in scripts); otherwise save the model "
            f"in a safe format: {SAFE_FORMATS}")
    if kind in ("rds", "rda"):
        return _load_r_file(p, kind, allow_pickle, warn)
    try:
        if kind == "pickle":
            if warn is not None:
                warn(f"loading {name!r} with --allow-pickle: this runs code stored in the file; "
                     "load only files you trust")
            return _load_pickle(p)
        if kind == "pdpx-trees":
            return _load_export(p)
        if kind in ("xgboost-json", "xgboost-ubj"):
            _precheck(p, kind)
            import xgboost

            booster = xgboost.Booster()
            booster.load_model(name)
            return booster
        if kind == "lightgbm":
            text = _precheck(p, kind)
            import lightgbm

            return lightgbm.Booster(model_str=text)
        if kind == "catboost":
            return _load_catboost(p)
        return _load_skops(p, allow_pickle, warn)
    except ImportError as exc:
        raise ModelFileError(missing_module(p, kind, exc.name)) from None
    except ModelFileError:
        raise
    except AttributeError as exc:  # a module of the user's that lacks what the pickle refers to
        found = re.search(r"Can't get attribute '([^']+)' on <module '([^']+)'(?: from '([^']+)')?", str(exc))
        if found is None:
            raise ModelFileError(f"could not load the model in {name!r} as {kind}: {exc}") from None
        attr, module, where = found.groups()
        raise ModelFileError(
            f"the model in {name!r} uses {attr} from the module {module}, but the {module} Python imports here "
            f"({where or 'built in'}) does not define it: run pdpx where the {module} the model was saved with "
            "can be imported (the folder that holds it, or set PYTHONPATH to that folder)") from None
    except Exception as exc:  # noqa: BLE001 - a file that looked right but does not load
        text = str(exc).strip().splitlines()
        raise ModelFileError(f"could not load the model in {name!r} as {kind}: "
                             f"{text[0] if text else type(exc).__name__}") from None


@contextlib.contextmanager
def working_directory_importable():
    """While inside, modules in the working directory can be imported (the user's own code a pickle uses).

    The folder goes at the end of ``sys.path``: a file there never shadows an installed
    module (a stray ``json.py`` stays unused). Only used once the user opted in to code
    running from the model file.
    """
    cwd = os.getcwd()
    added = "" not in sys.path and cwd not in sys.path
    if added:
        sys.path.append(cwd)
    try:
        yield
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def missing_module(p: Path, kind: str, module: str | None) -> str:
    """What to say when loading ``p`` needs ``module``, which cannot be imported: install a known package,
    else (the user's own code) run from the folder that holds it or set PYTHONPATH."""
    name, top = str(p), (module or "").split(".")[0]
    if not top:
        return f"reading {name!r} ({kind}) needs a Python module that cannot be imported"
    installed = _installed(top)
    if installed is not None and module != top:  # the package is here, the module it names is not: versions differ
        dist, version = installed
        return (f"the model in {name!r} refers to {module}, which {dist} {version} installed here does not have: it "
                f"was saved with another version of {dist}. Install that version (pip install '{dist}==<version>'), "
                "or fit and save the model again with this one")
    if top in PACKAGES:
        return f"reading {name!r} ({kind}) needs the {PACKAGES[top]} package: pip install {PACKAGES[top]}"
    here = Path.cwd()
    homes = [d for d in dict.fromkeys([p.resolve().parent, here])
             if (d / f"{top}.py").is_file() or (d / top / "__init__.py").is_file()]
    text = (f"the model in {name!r} uses code from the module {module!r}, which Python cannot import here "
            f"(pdpx ran in {str(here)!r}). ")
    if homes and homes[0] != here:
        found = f"{top}.py" if (homes[0] / f"{top}.py").is_file() else f"the folder {top}/"
        return text + (f"{found} is in {str(homes[0])!r}: run pdpx from that folder, or set "
                       f"PYTHONPATH={str(homes[0])!r} before the command")
    return text + (f"If {top} is your own code (a {top}.py file or a {top}/ folder), run pdpx from the folder that "
                   f"holds it, or set PYTHONPATH to that folder; if it is a published package, install it")


def _installed(top: str) -> tuple[str, str] | None:
    """The installed distribution (name, version) that provides the top-level module ``top``, if any."""
    from importlib import metadata

    names = metadata.packages_distributions().get(top) or []
    for dist in names:
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _load_pickle(p: Path):
    import pickle

    try:  # imported before the working directory is importable: a joblib.py there is never taken for it
        import joblib
    except ImportError:  # plain pickles load without joblib
        joblib = None
    with working_directory_importable():
        if joblib is None:
            with open(p, "rb") as fh:
                return pickle.load(fh)  # noqa: S301 - the user opted in (--allow-pickle)
        return joblib.load(p)


def _load_catboost(p: Path):
    from importlib.metadata import entry_points

    import catboost

    if not any(ep.name == "catboost" for ep in entry_points(group="pdpx")):
        raise ModelFileError(
            f"reading {str(p)!r} needs the pdpx-catboost plugin: pip install pdpx-catboost "
            "(in pdpx's source tree: pip install -e contrib/pdpx-catboost)")
    model = catboost.CatBoost()
    model.load_model(str(p), format="cbm")
    return model


def _load_skops(p: Path, allow_pickle: bool, warn):
    import skops.io as sio

    untrusted = [t for t in sio.get_untrusted_types(file=p) if t not in SKOPS_TRUSTED]
    if untrusted and not allow_pickle:
        raise ModelFileError(
            f"refusing to load {str(p)!r}: it holds types that skops does not trust by default: "
            f"{', '.join(untrusted)}. Building them may run code; if you trust the file, pass --allow-pickle "
            f"(or set {ALLOW_PICKLE_ENV}=1)")
    if untrusted and warn is not None:
        warn(f"loading {str(p)!r} with --allow-pickle trusts the types {', '.join(untrusted)}: "
             "building them may run code; load only files you trust")
    if not untrusted:
        return sio.load(p, trusted=list(SKOPS_TRUSTED))
    with working_directory_importable():  # the types trusted by the opt-in may be the user's own code
        return sio.load(p, trusted=list(SKOPS_TRUSTED) + untrusted)


def _precheck(p: Path, kind: str):
    """:func:`pdpx.cli.model_prechecks.precheck_model_file`, its refusal as a :class:`ModelFileError`."""
    from .model_prechecks import PrecheckError, precheck_model_file

    try:
        return precheck_model_file(p, kind)
    except PrecheckError as exc:
        raise ModelFileError(f"refusing to load {str(p)!r} as {FORMATS[model_suffix(p)][1]}: {exc} (its loader "
                             "could crash on such a file; save the model again with its library)") from None


def _load_export(p: Path):
    from ..adapters.rexport import ExportError, read_export

    try:
        return read_export(p)
    except ExportError as exc:
        raise ModelFileError(f"cannot read {str(p)!r} as {FORMATS[EXPORT_SUFFIX][1]}: {exc}") from None


def _load_r_file(p: Path, kind: str, allow_pickle: bool, warn):
    """An R file, with the opt-in: copied into a private folder (what is checked is what R reads, whatever happens to
    the file meanwhile), its bytes checked, then read by a fenced R process into an export (:mod:`pdpx.cli.rds_export`),
    which is what pdpx reads."""
    import shutil

    from ..core.config import format_bytes, get_config
    from .rds_check import BUDGET_HINT

    name = str(p)
    if not allow_pickle:
        raise ModelFileError(
            f"refusing to load {name!r}: {R_RISK}, so pdpx reads R files only when asked to. Safer: "
            f"{R_EXPORT_HINT}. If you trust the file, pass --allow-pickle (or set {ALLOW_PICKLE_ENV}=1 in scripts)")
    budget = int(get_config()["memory_budget"])
    size = p.stat().st_size
    if size > budget:  # it holds at least as many bytes once decompressed
        raise ModelFileError(f"refusing to load {name!r}: it is {format_bytes(size)}, more than the memory budget "
                             f"({format_bytes(budget)}; {BUDGET_HINT})")
    with tempfile.TemporaryDirectory(prefix="pdpx-r-") as folder:
        copy = Path(folder) / f"model{p.suffix.lower()}"
        shutil.copyfile(p, copy)
        return _read_r_copy(copy, name, kind, budget, warn)


def _read_r_copy(copy: Path, name: str, kind: str, budget: int, warn):
    from ..adapters.rexport import ExportError, read_export
    from .rds_check import RdsRefused, RdsUnreadable, check_r_file
    from .rds_export import RProcessError, export_r_file

    try:
        facts = check_r_file(copy, budget=budget)
    except RdsRefused as exc:
        raise ModelFileError(f"refusing to load {name!r}, even with --allow-pickle: {exc}. Instead, {R_EXPORT_HINT}"
                             ) from None
    except (RdsUnreadable, OSError, EOFError) as exc:  # gzip / lzma errors are OSError / EOFError
        raise ModelFileError(f"refusing to load {name!r}, even with --allow-pickle: pdpx cannot check it ({exc}). "
                             f"Instead, {R_EXPORT_HINT}") from None
    if warn is not None:
        warn(f"reading {name!r} with --allow-pickle: an R file can hold code; pdpx checked its bytes and reads it in "
             "a separate R process, which writes the model's trees for pdpx; load only files you trust")
    try:
        out = export_r_file(copy, kind=kind, name=facts.name, budget=budget, folder=copy.parent)
        return read_export(out, budget=budget)
    except (RProcessError, ExportError) as exc:
        raise ModelFileError(f"could not read the R model in {name!r}: {exc}") from None
