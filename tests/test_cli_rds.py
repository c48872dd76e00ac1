"""The command line's R .rds files: code in the file refused before R reads it (a crafted promise R
would run, CVE-2024-27322; a function; an ALTREP vector naming a package), the class whitelist (no
package attached for another class), formulas with expressions.

Each case runs the command in a fresh Python process (R is embedded once per process, and the
question is which packages *that* R loaded), then asks that R which namespaces are loaded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("rpy2", reason="rpy2 is not installed (pip install 'pdpx[r]')")
if shutil.which("Rscript") is None:
    pytest.skip("R is not installed (make setup installs it)", allow_module_level=True)

#: an installed R package no test loads and the whitelist does not name (make setup installs r-cran-earth)
OTHER = "earth"

CHILD = textwrap.dedent("""
    import json, sys
    from click.testing import CliRunner
    from pdpx.cli import main
    result = CliRunner().invoke(main, sys.argv[1:], catch_exceptions=False)
    import rpy2.robjects as ro
    print(json.dumps({"code": result.exit_code, "stderr": result.stderr,
                      "loaded": list(ro.r("loadedNamespaces()")), "search": list(ro.r("search()"))}))
""")


def run_child(*args, env_extra=None):
    import os

    env = {k: v for k, v in os.environ.items() if k != "PDPX_ALLOW_PICKLE"}
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, "-c", CHILD, *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def rscript(code: str):
    done = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory):
    d = tmp_path_factory.mktemp("rds")
    (d / "data.csv").write_text("a,b\n" + "".join(f"{i / 10},{(i * 7) % 5}\n" for i in range(40)))
    return d / "data.csv"


@pytest.fixture(scope="module")
def other_installed():
    """The check below can fail only if R could attach OTHER: it must be installed."""
    done = subprocess.run(["Rscript", "-e", f"cat(requireNamespace('{OTHER}', quietly = TRUE))"],
                          capture_output=True, text=True, timeout=300)
    if done.stdout.strip() != "TRUE":
        pytest.skip(f"the R package {OTHER} is not installed (make setup installs r-cran-{OTHER})")


@pytest.mark.parametrize("classes", [[OTHER], [f"{OTHER}.formula", OTHER], ["ranger"], ["gbm"]])
def test_a_class_outside_the_whitelist_attaches_nothing(tmp_path, data_csv, classes, other_installed):
    rds = tmp_path / "model.rds"
    rscript(f"saveRDS(structure(list(x = 1), class = c({', '.join(repr(c) for c in classes)})), '{rds}')")
    out = run_child("pd", "--allow-pickle", rds, data_csv, "--feature", "a")
    assert out["code"] == 1
    err = [x for x in out["stderr"].splitlines() if x.startswith("pdpx: error:")]
    assert len(err) == 1 and "refusing the R model" in err[0] and classes[-1] in err[0], out["stderr"]
    for pkg in {c.split(".")[0] for c in classes}:
        assert pkg not in out["loaded"] and f"package:{pkg}" not in out["search"], (pkg, out["loaded"])
    if classes[-1] in ("ranger", "gbm"):
        assert "R package" in err[0]


def test_a_crafted_promise_is_refused_and_does_not_run(tmp_path, data_csv):
    """A file holding a promise (CVE-2024-27322): R < 4.4 runs it when the object is first used."""
    marker = tmp_path / "ran"
    rds = tmp_path / "model.rds"
    rscript(textwrap.dedent(f"""
        e <- new.env(parent = emptyenv())
        delayedAssign("p", file.create('{marker}'), eval.env = globalenv(), assign.env = e)
        raw <- serialize(e, NULL, version = 2, xdr = TRUE)
        s <- grepRaw(as.raw(c(0, 0, 4, 5)), raw, fixed = TRUE)
        end <- grepRaw(charToRaw('{marker.name}'), raw, fixed = TRUE) + {len(marker.name)} - 1 + 4
        con <- gzfile('{rds}', 'wb'); writeBin(c(raw[1:14], raw[s:end]), con); close(con)
    """))
    assert not marker.exists()
    out = run_child("pd", rds, data_csv, "--feature", "a")
    assert out["code"] == 1
    err = out["stderr"].strip()
    assert "refusing to load" in err and "a promise" in err and "--allow-pickle" in err, err
    assert "PDPX_ALLOW_PICKLE=1" in err, err
    assert not marker.exists()
    # the file is what it claims: on this R, using what readRDS returns runs the promise
    rscript(f"m <- readRDS('{rds}'); invisible(is.list(m))")
    r_version = subprocess.run(["Rscript", "-e", "cat(getRversion() >= '4.4.0')"], capture_output=True, text=True)
    assert marker.exists() or r_version.stdout.strip() == "TRUE"


def test_an_altrep_vector_naming_a_package_is_refused_before_r_loads_it(tmp_path, data_csv, other_installed):
    """readRDS loads the namespace an ALTREP vector names (its load hook runs): pdpx refuses the file first."""
    rds = tmp_path / "model.rds"
    assert len(OTHER) == 5
    rscript(textwrap.dedent(f"""
        raw <- serialize(list(x = 1:10), NULL, version = 3, xdr = TRUE)
        i <- grepRaw("base", raw, fixed = TRUE)
        raw <- c(raw[1:(i - 5)], as.raw(c(0, 0, 0, 5)), charToRaw('{OTHER}'), raw[(i + 4):length(raw)])
        con <- gzfile('{rds}', 'wb'); writeBin(raw, con); close(con)
        x <- suppressWarnings(readRDS('{rds}'))
        stopifnot('{OTHER}' %in% loadedNamespaces())  # R itself loads it
    """))
    out = run_child("pd", rds, data_csv, "--feature", "a")
    assert out["code"] == 1
    assert f"an ALTREP vector of package {OTHER}" in out["stderr"], out["stderr"]
    assert OTHER not in out["loaded"]


def test_an_rds_holding_a_function_is_refused(tmp_path, data_csv):
    marker = tmp_path / "ran"
    rds = tmp_path / "model.rds"
    rscript(f"saveRDS(structure(list(predict = function(...) file.create('{marker}')), class = 'randomForest'), "
            f"'{rds}')")
    out = run_child("pd", rds, data_csv, "--feature", "a")
    assert out["code"] == 1 and "an R function" in out["stderr"], out["stderr"]
    assert not marker.exists()
    assert "package:randomForest" not in out["search"]


def test_a_randomforest_whose_formula_holds_code_is_refused(tmp_path, data_csv):
    marker = tmp_path / "ran"
    rds = tmp_path / "rf.rds"
    rscript(textwrap.dedent(f"""
        suppressMessages(library(randomForest)); set.seed(1)
        d <- read.csv('{data_csv}'); d$y <- d$a + d$b
        m <- randomForest(y ~ ., data = d, ntree = 5)
        attr(m$terms, "variables") <- quote(list(y, a, file.create('{marker}')))
        saveRDS(m, '{rds}')
    """))
    out = run_child("pd", "--allow-pickle", rds, data_csv, "--feature", "a", "--method", "brute")
    assert out["code"] == 1
    assert "formula has expressions" in out["stderr"], out["stderr"]
    assert not marker.exists()
    assert "package:randomForest" not in out["search"]


@pytest.mark.parametrize("save", ["", ", compress = 'xz'", ", compress = 'bzip2'", ", compress = FALSE, version = 2",
                                  ", version = 3"])
def test_fitted_randomforests_hold_no_hazard(tmp_path, save):
    """No false alarm: fitted forests (formula, x / y, classification, fit inside a function) pass the check."""
    from pdpx.rds_check import rds_hazards

    paths = [tmp_path / f"rf{i}.rds" for i in range(4)]
    rscript(textwrap.dedent(f"""
        suppressMessages(library(randomForest)); set.seed(1)
        d <- data.frame(a = runif(100), b = factor(sample(letters[1:4], 100, TRUE)), c = rnorm(100))
        d$y <- d$a + as.integer(d$b); d$k <- factor(d$y > 2.5)
        saveRDS(randomForest(y ~ a + b + c, data = d, ntree = 10), '{paths[0]}'{save})
        saveRDS(randomForest(d[, 1:3], d$y, ntree = 10), '{paths[1]}'{save})
        saveRDS(randomForest(k ~ a + b + c, data = d, ntree = 10), '{paths[2]}'{save})
        f <- function(n) {{ local_value <- n; randomForest(y ~ a + c, data = d, ntree = n) }}
        saveRDS(f(5), '{paths[3]}'{save})
    """))
    for p in paths:
        assert rds_hazards(p) == [], p


def test_an_rds_pdpx_cannot_check_needs_the_opt_in(tmp_path, data_csv):
    from pdpx.rds_check import RdsUnreadable, rds_hazards

    rds = tmp_path / "model.rds"
    rscript(f"saveRDS(list(a = 1), '{rds}', ascii = TRUE)")
    with pytest.raises(RdsUnreadable):
        rds_hazards(rds)
    out = run_child("pd", rds, data_csv, "--feature", "a")
    assert out["code"] == 1 and "cannot check" in out["stderr"] and "--allow-pickle" in out["stderr"], out["stderr"]
