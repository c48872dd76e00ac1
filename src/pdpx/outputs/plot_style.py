"""What every pdpx figure shares: colours, the theme, the drawing options and the frame a figure draws.

Used by :mod:`.plot_oneway` and :mod:`.plot_twoway`; users reach all of it
through :mod:`pdpx.outputs.plot`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from ..core.config import format_bytes, get_config
from ..core.errors import PdpxError, PdpxTypeError
from ..core.result import grid_label
from ..core.validation import PERCENTILES, SEED, Boolean, Integral, Options, Real, String, check_param

if TYPE_CHECKING:  # pragma: no cover
    from ..core.result import PartialDependenceResult

#: Colour of ICE curves (drawn light, under the PD curve).
ICE_COLOR = "#5b84b1"
#: Colour of the partial dependence curve.
PD_COLOR = "#d55e00"
#: Okabe-Ito colours for categories (colour-blind safe).
PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"]
#: Largest number of data points drawn in a rug (a seeded subsample beyond).
RUG_MAX = 1500
#: Colour of the marks over grid regions no row supports (``unsupported="shade"``).
UNSUPPORTED_FILL = "#8c8c8c"
#: What ``unsupported=`` accepts: grey marks over unsupported regions, leave them out, or draw as computed.
UNSUPPORTED = ("shade", "drop", "show")


#: matplotlib settings under which every text of a pdpx figure is drawn as it is written: never as mathtext (a column
#: named ``Q1_$_vs_Q2_$`` would be read as a formula, and one that is not a valid formula fails the figure) and
#: never through LaTeX (``text.usetex``, which reads a name's ``_``, ``^``, ``%`` and backslashes as commands)
LITERAL_TEXT = {"text.parse_math": False, "text.usetex": False}


def literal_text():
    """A context in which matplotlib draws text as it is written (:data:`LITERAL_TEXT`): pdpx's own draws and saves
    run in it, for the texts matplotlib makes while it saves (tick labels added then)."""
    import matplotlib

    return matplotlib.rc_context(LITERAL_TEXT)


@functools.cache
def _literal_text_themeable() -> type:
    """The plotnine themeable ``pdpx_literal_text`` (registered by its name when the class is made), whose
    rcParams are :data:`LITERAL_TEXT`: plotnine sets them while it draws and saves a figure, wherever it is drawn
    (``res.plot()`` shown in a notebook, ``ggplot.save``)."""
    from plotnine.themes.themeable import themeable

    class pdpx_literal_text(themeable):  # noqa: N801 - plotnine finds a themeable by its class name
        """Column names, levels and values drawn as text, never as mathtext or LaTeX."""

        @property
        def rcParams(self) -> dict:  # noqa: N802 - plotnine's name
            return {**super().rcParams, **LITERAL_TEXT}

    return pdpx_literal_text


def theme_pdpx(base_size: float = 11, base_family: str | None = None):
    """The pdpx theme: ``theme_bw`` with light grid, soft strips and a quiet caption; every text drawn as it is
    written (:data:`LITERAL_TEXT`: a ``$`` in a column name is a dollar sign, not mathtext)."""
    from plotnine import element_blank, element_line, element_rect, element_text, theme, theme_bw

    _literal_text_themeable()
    return theme_bw(base_size=base_size, base_family=base_family) + theme(
        pdpx_literal_text=True,
        panel_grid_minor=element_blank(),
        panel_grid_major=element_line(color="#ebebeb", size=0.5),
        panel_border=element_rect(color="#bdbdbd", fill="none"),
        strip_background=element_rect(fill="#f2f2f2", color="#bdbdbd"),
        strip_text=element_text(size=0.85 * base_size, color="#222222"),
        axis_text=element_text(size=0.8 * base_size, color="#444444"),
        axis_title=element_text(size=0.9 * base_size, color="#222222"),
        axis_ticks=element_line(color="#bdbdbd"),
        legend_title=element_text(size=0.85 * base_size),
        legend_text=element_text(size=0.8 * base_size),
        legend_key=element_blank(),
        plot_title=element_text(size=1.1 * base_size, weight="bold"),
        plot_caption=element_text(size=0.7 * base_size, color="#777777"),
    )



@dataclasses.dataclass
class PlotOptions:
    """The drawing options of :func:`pdpx.outputs.plot.plot_result`, checked."""
    n_ice: int | None = 100
    seed: int = 0
    centered: bool | None = None
    ice: bool = True
    rug: bool = True
    points: bool = True
    contours: bool = True
    share_y: bool = True
    ice_alpha: float | None = None
    caption: bool = True
    base_size: float = 11
    bands: tuple | None = None
    color_by: str | None = None
    ribbon: bool = True
    unsupported: str = "shade"

    def __post_init__(self):
        check_plot_options("plot", dataclasses.asdict(self))


#: What each drawing option accepts (checked by the public plot functions before drawing).
PLOT_OPTIONS = {
    "n_ice": [Integral(low=1, what="a number of ICE curves (>= 1)"), None],
    "seed": SEED,
    "centered": [Boolean(), None],
    "ice": [Boolean()],
    "rug": [Boolean()],
    "points": [Boolean()],
    "contours": [Boolean()],
    "share_y": [Boolean()],
    "ice_alpha": [Real(0, 1, low_open=True), None],
    "caption": [Boolean()],
    "base_size": [Real(1, 100)],
    "bands": PERCENTILES + [None],
    "color_by": [String("a column name of X"), None],
    "ribbon": [Boolean()],
    "unsupported": [Options(*UNSUPPORTED)],
}


def check_plot_options(function: str, options: dict, extra: tuple[str, ...] = ()) -> None:
    """Check drawing options by name (unknown names are errors that list the known ones)."""
    known = set(PLOT_OPTIONS) | set(extra)
    unknown = sorted(set(options) - known)
    if unknown:
        raise PdpxTypeError(f"{function}(): unknown option(s) {unknown}; the plot options are {sorted(known)}")
    for name, value in options.items():
        if name in PLOT_OPTIONS:
            check_param(function, name, value, PLOT_OPTIONS[name])



#: matplotlib backends that draw without windows (any thread, no display needed)
WINDOWLESS = ("agg", "svg", "pdf", "ps", "cairo", "template", "pgf")


def windowless_backend() -> bool:
    """Whether matplotlib's backend draws without windows (Agg, SVG, PDF, the notebook's inline one)."""
    import matplotlib

    backend = str(matplotlib.get_backend()).lower()
    return backend in WINDOWLESS or "inline" in backend


def check_backend(function: str) -> None:
    """Refuse, before any work, a matplotlib backend that cannot draw here: one with windows (Tk, Qt, macOS)
    chosen in a session without a display. pdpx draws into files and needs no window; matplotlib would only
    say so once the first figure is drawn, at the end of the work."""
    if windowless_backend():
        return
    import matplotlib
    import matplotlib.pyplot as plt

    backend = str(matplotlib.get_backend())
    try:
        with plt.ioff():  # a figure never shown: its window is not opened
            fig = plt.figure()
    except ImportError as exc:
        raise PdpxError(
            f"{function}: matplotlib's backend {backend!r} opens windows, and this session has no display "
            f"({exc}). pdpx draws figures into files and needs no window: call matplotlib.use('Agg') before "
            f"{function}, or set the environment variable MPLBACKEND=Agg"
        ) from exc
    plt.close(fig)


#: how many times its tidy frame drawing a figure holds at its peak (plotnine's copies of the frame, measured:
#: 485 MiB for a frame of 64 MiB); the frame takes this share of the memory budget
DRAW_COPIES = 8


def result_frame(res: "PartialDependenceResult", opts: PlotOptions) -> tuple[pd.DataFrame, str]:
    """The tidy frame to draw: ICE subsampled, average always present, centred if asked.

    Returns the frame and a note on the ICE curves drawn ("" when none).
    """
    individual = res.individual if opts.ice else None
    note = ""
    ice_rows = None
    if individual is not None:
        n = individual.shape[1]
        ice_rows = np.arange(n) if res.ice_rows is None else np.asarray(res.ice_rows)
        of = f"{n:,} rows" if res.ice_rows is None else f"{n:,} sampled rows of {res.n_rows:,}"
        if opts.n_ice is not None and n > opts.n_ice:
            pick = np.sort(np.random.default_rng(opts.seed).choice(n, opts.n_ice, replace=False))
            individual, ice_rows = individual[:, pick], ice_rows[pick]
            note = f"thin lines: ICE curves of {opts.n_ice} of {of} (random, seed {opts.seed})"
        else:
            note = f"thin lines: ICE curves of all {of}"
    view = dataclasses.replace(res, individual=individual, ice_rows=ice_rows,
                               kind="both" if individual is not None else "average")
    full = get_config()["memory_budget"]
    budget = full // DRAW_COPIES  # what the tidy frame may take
    need = view.frame_nbytes()
    if need > budget and individual is not None:  # as many ICE curves as fit the budget, said in the note
        n_drawn = individual.shape[1]
        base = view.frame_nbytes(kind="average") if view.kind == "both" else 0
        per_curve = max(1, view.frame_nbytes(kind="individual") // n_drawn)
        k = int(min(n_drawn, max(0, (budget - base) // per_curve)))
        if k:
            keep = np.sort(np.random.default_rng(opts.seed).choice(n_drawn, k, replace=False))
            individual, ice_rows = individual[:, keep], ice_rows[keep]
            note = (f"thin lines: ICE curves of {k} of {of} (random, seed {opts.seed}; drawing {n_drawn} would pass "
                    f"the memory budget of {format_bytes(full)})")
        else:
            individual, ice_rows = None, None
            note = f"no ICE curves: drawing even one would pass the memory budget of {format_bytes(full)}"
        view = dataclasses.replace(res, individual=individual, ice_rows=ice_rows,
                                   kind="both" if individual is not None else "average")
        need = view.frame_nbytes()
    if need > budget:
        raise PdpxError(
            f"drawing this result needs about {format_bytes(need * DRAW_COPIES)}, over the memory budget of "
            f"{format_bytes(full)}: draw fewer grid points (grid_resolution=), or raise the budget "
            "(pdpx.config_context(memory_budget='4GB') or pdpx.set_config(memory_budget='4GB'))"
        )
    df = view.to_frame(memory_budget=full)
    centered = res.centered
    if opts.centered and not res.centered:
        keys = ["output", "kind", df["row"].fillna(-1)]
        df["yhat"] = df["yhat"] - df.groupby(keys, sort=False)["yhat"].transform("first")
        centered = True
    elif opts.centered is False and res.centered:
        raise PdpxError(
            "this result was computed centered and cannot be un-centered; "
            "compute it again with centered=False"
        )
    df.attrs["centered"] = centered
    support_columns(res, df)
    return df, note


def plot_frame(results, opts: PlotOptions) -> tuple[pd.DataFrame, list[str]]:
    """The frame a figure of ``results`` draws: their tidy frames (:func:`result_frame`) one under the other,
    ``yhat`` divided by a power of ten when too large to draw (:func:`rescale_values`), the outputs an ordered
    categorical.

    ``attrs["centered"]`` says whether the curves are centered, ``attrs["suffix"]`` is the value label's suffix.
    Returns the frame and each result's note on its ICE curves.
    """
    frames, notes = zip(*(result_frame(r, opts) for r in results))
    df = pd.concat(frames, ignore_index=True)
    df.attrs.update(centered=bool(frames[0].attrs["centered"]), suffix=rescale_values(df))
    df["output"] = pd.Categorical(df["output"].astype(str), categories=list(dict.fromkeys(results[0].outputs)))
    return df, list(notes)


def unsupported_mask(res) -> np.ndarray:
    """The result's unsupported grid cells, flat in grid order (all False when its support is unknown)."""
    mask = getattr(res, "unsupported", None)
    n_grid = int(np.prod(res.grid_shape))
    return np.zeros(n_grid, dtype=bool) if mask is None else np.asarray(mask, dtype=bool).reshape(-1)


def support_columns(res, df: pd.DataFrame) -> None:
    """Add ``supported`` (bool) and ``seg`` to a frame in ``to_frame`` order (grid cells fastest).

    ``seg`` numbers the stretches of supported grid points along the last feature's
    grid, so a curve drawn with ``unsupported="drop"`` breaks where points are left out.
    """
    bad = unsupported_mask(res)
    reps = len(df) // max(bad.size, 1)
    df["supported"] = np.tile(~bad, reps)
    df["seg"] = np.tile(np.cumsum(bad), reps)


def piece_column(df: pd.DataFrame) -> pd.Series:
    """A group per feature set and supported stretch (what a PD line may connect)."""
    return df["feature_set"].astype(str) + "|" + df["seg"].astype(str)


#: Beyond this magnitude the axis computations of plotnine's scales overflow (they square ranges).
DRAWABLE = 1e150


def rescale_values(df: pd.DataFrame) -> str:
    """Divide ``yhat`` by a power of ten when its magnitude is too large to draw; returns the label suffix.

    Also refuses numeric grid values too large to draw, saying so (the numbers stay
    right in ``res.average`` and ``res.to_frame()``).
    """
    for col in [c for c in df.columns if c.startswith("x_")]:
        x = df[col].to_numpy(dtype=float)
        if np.nanmax(np.abs(x), initial=0.0) > DRAWABLE:
            raise PdpxError(
                f"cannot draw grid values beyond +-{DRAWABLE:g} (the axis arithmetic would overflow); "
                "pass custom_values in a drawable range, or rescale the feature"
            )
    y = df["yhat"].to_numpy(dtype=float)
    finite = y[np.isfinite(y)]
    top = float(np.max(np.abs(finite))) if finite.size else 0.0
    if top <= DRAWABLE:
        return ""
    exponent = int(np.floor(np.log10(top)))
    df["yhat"] = y / 10.0 ** exponent
    return f" (× 1e{exponent})"


def value_label(results: Sequence["PartialDependenceResult"], centered: bool) -> str:
    """The y-axis label: what is averaged (response, class), centered or not."""
    res = results[0]
    what = res.response_label or res.response
    outputs = res.outputs
    if len(outputs) == 1 and outputs[0] != what:
        o = outputs[0]
        what = f"probability of {o}" if res.response == "predict_proba" else f"{what}, {o}"
    return ("centered " if centered else "") + f"partial dependence ({what})"


def grid_labels(res, j: int) -> list[str]:
    """Feature j's grid values as text, exactly as ``to_frame()`` writes them in ``label_j``."""
    return [grid_label(v) for v in res.grid_values[j]]


def rug_frame(results, seed: int) -> pd.DataFrame:
    """Data values of the numeric features within their grid (a seeded subsample beyond ``RUG_MAX``)."""
    parts = []
    rng = np.random.default_rng(seed)
    for r in results:
        if r.categorical[0]:
            continue
        values = r.feature_data.get(r.features[0])
        if values is None:
            continue
        v = pd.to_numeric(pd.Series(np.asarray(values)), errors="coerce").to_numpy(dtype=float)
        grid = np.asarray(r.grid_values[0], dtype=float)
        if getattr(r, "steps", None):  # a step curve runs on to the data's ends (plot_steps): every value
            v = v[np.isfinite(v)]
        else:
            v = v[np.isfinite(v) & (v >= np.nanmin(grid)) & (v <= np.nanmax(grid))]
        if v.size > RUG_MAX:
            v = rng.choice(v, RUG_MAX, replace=False)
        parts.append(pd.DataFrame({"feature_set": r.feature_set, "x": v}))
    if not parts:
        return pd.DataFrame({"feature_set": [], "x": []})
    rug = pd.concat(parts, ignore_index=True)
    rug["feature_set"] = pd.Categorical(rug["feature_set"], categories=[r.feature_set for r in results])
    return rug


def rug_alpha(rug: pd.DataFrame) -> float:
    """Rug opacity: lighter when a panel holds many marks."""
    per_panel = rug.groupby("feature_set", observed=True).size().max()
    return float(np.clip(8 / math.sqrt(max(per_panel, 1)), 0.1, 0.6))


#: Most grid points of a numeric curve drawn as dots on its line (more make a beaded line); categories and the
#: missing-value point are always marked.
DOTS_MAX = 25


def dotted(opts: PlotOptions, grid) -> bool:
    """Whether a numeric curve on ``grid`` gets a dot at each grid point: ``points=True`` and a small grid."""
    values = np.asarray(grid)
    n = int(np.isfinite(values).sum()) if values.dtype.kind == "f" else values.size
    return bool(opts.points) and n <= DOTS_MAX


def figure_size(nrow: int, ncol: int) -> tuple[float, float]:
    """Figure size in inches for a grid of ``nrow`` x ``ncol`` panels."""
    if nrow == 1 and ncol == 1:
        return (6.0, 4.0)
    width = {1: 5.5, 2: 7.5}.get(ncol, min(11.0, 2.4 * ncol + 1.3))
    return (width, min(24.0, 0.9 + 2.4 * nrow))


