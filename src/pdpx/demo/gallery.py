"""A gallery of every plot type, drawn from real fitted scikit-learn models.

Run ``python -m pdpx.demo.gallery docs/gallery`` (``make gallery``) to write
the PNGs and a README.md showing them. Data sets are bundled with scikit-learn
and palmerpenguins: nothing is downloaded.

:func:`write_demo_figures` writes the same figures plus HTML reports, for
``make demo``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..core.files import write_text_atomic

__all__ = ["write_gallery", "write_demo_figures", "ENTRIES"]

GRID = 30


# ====================================================================== models
@lru_cache(maxsize=None)
def diabetes():
    """Gradient boosting on the diabetes data (regression, 10 numeric features)."""
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = GradientBoostingRegressor(n_estimators=100, max_depth=3, learning_rate=0.1, random_state=0)
    return model.fit(X, y), X


@lru_cache(maxsize=None)
def penguins_mass():
    """Histogram gradient boosting of penguin body mass (regression, numeric + categorical features)."""
    from palmerpenguins import load_penguins
    from sklearn.ensemble import HistGradientBoostingRegressor

    df = load_penguins().dropna().reset_index(drop=True)
    X = df[["species", "island", "sex", "bill_length_mm", "bill_depth_mm", "flipper_length_mm"]].copy()
    for c in ("species", "island", "sex"):
        X[c] = X[c].astype("category")
    model = HistGradientBoostingRegressor(max_iter=150, learning_rate=0.1, categorical_features="from_dtype",
                                          random_state=0)
    return model.fit(X, df["body_mass_g"]), X


@lru_cache(maxsize=None)
def penguins_species(keep_missing: bool = False):
    """Random forest of penguin species (3 classes) in a pipeline with one-hot encoding.

    ``keep_missing``: keep the rows whose measurements are missing (the forest routes
    NaN), so the report shows each measurement's missing-value point.
    """
    from palmerpenguins import load_penguins
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    df = load_penguins()
    df = (df if keep_missing else df.dropna()).reset_index(drop=True)
    X = df[["island", "sex", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]]
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["island", "sex"]), remainder="passthrough"),
        RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=0),
    )
    return model.fit(X, df["species"]), X


@lru_cache(maxsize=None)
def iris():
    """Multinomial logistic regression on iris (3 classes, smooth curves)."""
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    data = load_iris(as_frame=True)
    X = data.data
    y = data.target_names[data.target]
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
    return model.fit(X, y), X


@lru_cache(maxsize=None)
def breast_cancer():
    """Random forest on the breast cancer data (binary: benign vs malignant)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    data = load_breast_cancer(as_frame=True)
    X = data.data
    y = data.target_names[data.target]
    model = RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=0)
    return model.fit(X, y), X


# ===================================================================== entries
@dataclass(frozen=True)
class Entry:
    name: str
    title: str
    text: str
    code: str
    make: Callable


def _pd(data, features, **kw):
    import pdpx

    model, X = data()
    kw.setdefault("grid_resolution", GRID)
    return pdpx.partial_dependence(model, X, features, **kw)


def _many(data, sets, **kw):
    import pdpx

    model, X = data()
    kw.setdefault("grid_resolution", GRID)
    return pdpx.partial_dependence_many(model, X, sets, **kw)


ENTRIES: list[Entry] = [
    Entry("pd_numeric", "1-way partial dependence, numeric feature",
          "The PD curve with its grid points; the rug marks the data's values, so sparse stretches of the "
          "grid show. Gradient boosting on the diabetes data.",
          'res = pdpx.partial_dependence(model, X, "bmi")\nres.plot()',
          lambda: _pd(diabetes, "bmi").plot()),
    Entry("ice", "ICE curves with the PD line on top",
          "A seeded random subsample of 100 rows' ICE curves (`n_ice`, `seed`), drawn light under the PD.",
          'res = pdpx.partial_dependence(model, X, "bmi", kind="both")\nres.plot(n_ice=100, seed=0)',
          lambda: _pd(diabetes, "bmi", kind="both").plot()),
    Entry("ice_centered", "Centered ICE",
          "Every curve starts at 0 at the first grid point, which shows whether rows respond alike "
          "(parallel curves) or differently (interactions).",
          'res = pdpx.partial_dependence(model, X, "bmi", kind="both", centered=True)\nres.plot()',
          lambda: _pd(diabetes, "bmi", kind="both", centered=True).plot()),
    Entry("categorical", "Categorical feature",
          "One point per category; each row's ICE curve is a set of connected points. Histogram gradient "
          "boosting of penguin body mass (native categorical splits).",
          'res = pdpx.partial_dependence(model, X, "species", kind="both")\nres.plot()',
          lambda: _pd(penguins_mass, "species", kind="both").plot()),
    Entry("binary", "Binary classifier",
          "Probability of the positive class; the y label names the class. Random forest on the breast "
          "cancer data.",
          'res = pdpx.partial_dependence(model, X, "worst radius", kind="both")\nres.plot()',
          lambda: _pd(breast_cancer, "worst radius", kind="both").plot()),
    Entry("multiclass", "Several outputs: one facet per class",
          "A 3-class logistic regression on iris: each class's probability in its own facet, one shared y "
          "scale.",
          'res = pdpx.partial_dependence(model, X, "petal length (cm)", kind="both")\nres.plot()',
          lambda: _pd(iris, "petal length (cm)", kind="both").plot()),
    Entry("numeric_numeric", "2-way: numeric x numeric",
          "Filled tiles with contour lines at round values; rugs of both features on the axes.",
          'res = pdpx.partial_dependence(model, X, ["bmi", "s5"])\nres.plot()',
          lambda: _pd(diabetes, ["bmi", "s5"], grid_resolution=25).plot()),
    Entry("numeric_numeric_multiclass", "2-way with several outputs",
          "One tile panel per class, one shared colour scale.",
          'res = pdpx.partial_dependence(model, X, ["petal length (cm)", "petal width (cm)"])\nres.plot()',
          lambda: _pd(iris, ["petal length (cm)", "petal width (cm)"], grid_resolution=25).plot()),
    Entry("numeric_categorical", "2-way: numeric x categorical",
          "One PD line per category, whichever order the features are given in.",
          'res = pdpx.partial_dependence(model, X, ["flipper_length_mm", "species"])\nres.plot()',
          lambda: _pd(penguins_mass, ["flipper_length_mm", "species"]).plot()),
    Entry("categorical_categorical", "2-way: categorical x categorical",
          "Tiles with the values written in them.",
          'res = pdpx.partial_dependence(model, X, ["species", "sex"])\nres.plot()',
          lambda: _pd(penguins_mass, ["species", "sex"]).plot()),
    Entry("collection", "Several features",
          "`facet_wrap` with free x scales and one shared y scale, so effects compare at a glance.",
          'coll = pdpx.partial_dependence_many(model, X, ["bmi", "s5", "bp", "age"], kind="both")\n'
          "coll.plot()",
          lambda: _many(diabetes, ["bmi", "s5", "bp", "age"], kind="both").plot()),
    Entry("collection_mixed", "Numeric and categorical features together",
          "Categorical features sit at their category positions on a continuous axis, labelled with the "
          "categories, so they share one `facet_wrap` with numeric features.",
          'coll = pdpx.partial_dependence_many(\n    model, X, ["flipper_length_mm", "bill_depth_mm", "species", '
          '"sex"], kind="both"\n)\ncoll.plot()',
          lambda: _many(penguins_mass, ["flipper_length_mm", "bill_depth_mm", "species", "sex"],
                        kind="both").plot(ncol=4)),
    Entry("collection_multiclass", "Several features and several classes",
          "A grid of facets: classes in rows, features in columns. Random forest pipeline (one-hot "
          "encoding) on the penguins.",
          'coll = pdpx.partial_dependence_many(\n    model, X, ["bill_length_mm", "flipper_length_mm", "island"]\n)\n'
          "coll.plot()",
          lambda: _many(penguins_species, ["bill_length_mm", "flipper_length_mm", "island"]).plot()),
    Entry("composition", "1-way and 2-way results in one collection",
          "A plotnine composition: the 1-way facets above, each 2-way result below.",
          'coll = pdpx.partial_dependence_many(model, X, ["bmi", "s5", ("bmi", "s5")])\ncoll.plot()',
          lambda: _many(diabetes, ["bmi", "s5", ("bmi", "s5")], grid_resolution=25).plot()),
]


# ===================================================================== writers
def write_figures(outdir: str | Path, *, dpi: int = 100, entries=None, verbose: bool = False) -> list[Path]:
    """Draw every gallery entry to ``outdir/<name>.png``; return the paths."""
    from ..outputs.plot import save

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for e in entries or ENTRIES:
        t0 = time.perf_counter()
        paths.append(save(e.make(), outdir / f"{e.name}.png", dpi=dpi))
        if verbose:
            print(f"  {e.name}.png  ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    return paths


def write_readme(outdir: str | Path, entries=None) -> Path:
    """The gallery's README.md, showing every figure with the code that made it."""
    outdir = Path(outdir)
    lines = [
        "# pdpx plot gallery",
        "",
        "Every plot type of `res.plot()` / `coll.plot()`, drawn from real fitted scikit-learn models on",
        "bundled data (diabetes, iris and breast cancer from scikit-learn; palmerpenguins). Regenerate",
        "with `make gallery` (`python -m pdpx.demo.gallery docs/gallery`); the models are defined in",
        "`src/pdpx/demo/gallery.py`. See `docs/plotting.md` for the options.",
        "",
        "Contents: " + " · ".join(f"[{e.title}](#{_anchor(e.title)})" for e in entries or ENTRIES),
        "",
    ]
    for e in entries or ENTRIES:
        lines += [f"## {e.title}", "", e.text, "", "```python", e.code, "```", "",
                  f"![{e.title}]({e.name}.png)", ""]
    path = outdir / "README.md"
    write_text_atomic(path, "\n".join(lines))
    return path


def _anchor(title: str) -> str:
    keep = "".join(c for c in title.lower() if c.isalnum() or c in " -")
    return keep.replace(" ", "-")


def write_gallery(outdir: str | Path, *, dpi: int = 100, verbose: bool = False) -> list[Path]:
    """All gallery PNGs plus README.md into ``outdir``; returns every path written."""
    paths = write_figures(outdir, dpi=dpi, verbose=verbose)
    paths.append(write_readme(outdir))
    return paths


def write_demo_figures(outdir: str | Path, *, dpi: int = 100, reports: bool = True,
                       progress: bool = False) -> list[Path]:
    """Figures of every plot type and HTML reports of two real models, for ``make demo``.

    Parameters
    ----------
    outdir : str or Path
        Folder to write into (created): ``figures/*.png``, ``report-diabetes.html``
        (gradient boosting regression) and ``report-penguins.html`` (a 3-class
        random forest pipeline with categorical features).
    dpi : int, default 100
    reports : bool, default True
        Also write the reports.
    progress : bool, default False
        Progress bars while the reports compute.

    Returns
    -------
    list of Path
        Every file written, figures first.
    """
    from ..reporting import report

    outdir = Path(outdir)
    paths = write_figures(outdir / "figures", dpi=dpi)
    if reports:
        model, X = diabetes()
        paths.append(report(model, X, outdir / "report-diabetes.html", grid_resolution=GRID,
                            title="Diabetes progression: gradient boosting", progress=progress))
        model, X = penguins_species(keep_missing=True)
        paths.append(report(model, X, outdir / "report-penguins.html", grid_resolution=GRID,
                            title="Penguin species: random forest", progress=progress))
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pdpx.demo.gallery", description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?", default="docs/gallery", help="folder to write (default docs/gallery)")
    parser.add_argument("--dpi", type=int, default=100)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    paths = write_gallery(args.outdir, dpi=args.dpi, verbose=True)
    for p in paths:
        print(p)
    print(f"wrote {len(paths)} files in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
