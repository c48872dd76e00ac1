"""The command line's R files (.rds, .rda, .RData): code to R, so read only with --allow-pickle, checked from their
bytes first, then read by a fenced R process that writes the model's trees for pdpx.

The five hostile files of issue 48, built by R in each test: a formula whose ``predvars`` runs code, a call in
function position of the formula, a class vector that hands ``predict`` to ``predict.lm`` (which evaluates
``call$offset``), a saved package environment (R attaches the package: its ``.onLoad`` runs) and base R's
memory-mapped vector (R reads another local file). Each payload would create a marker file: the test checks that
pdpx refuses the file in one line and that no marker exists, then that R itself, using the file, does run it (so
that the check can fail).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from pdpx.cli import main
from pdpx.cli.model_files import ALLOW_PICKLE_ENV

if shutil.which("Rscript") is None:
    pytest.skip("R is not installed (make setup installs it)", allow_module_level=True)

PROBE = "pdpxprobe"


def rscript(code: str, env: dict | None = None) -> str:
    done = subprocess.run(["Rscript", "-e", textwrap.dedent(code)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    return done.stdout


def run(*args, env=None):
    clean = {ALLOW_PICKLE_ENV: None, **(env or {})}
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, env=clean)


def error_line(result) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [x for x in result.stderr.strip().splitlines() if x.startswith("pdpx: error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Data, a package whose load hook creates the file $PDPX_PROBE_MARKER, and the hostile files."""
    d = tmp_path_factory.mktemp("rfiles")
    rng = np.random.default_rng(3)
    data = pd.DataFrame({"a": rng.uniform(size=60), "b": rng.uniform(size=60),
                         "f": rng.choice(["p", "q", "r"], size=60)})
    data.to_csv(d / "data.csv", index=False)
    pkg, lib = d / PROBE, d / "lib"
    (pkg / "R").mkdir(parents=True)
    lib.mkdir()
    (pkg / "DESCRIPTION").write_text(f"Package: {PROBE}\nVersion: 0.1\nTitle: Probe\nDescription: A probe.\n"
                                     "License: MIT\nAuthor: pdpx\nMaintainer: pdpx <pdpx@example.org>\n")
    (pkg / "NAMESPACE").write_text("")
    (pkg / "R" / "zzz.R").write_text('.onLoad <- function(libname, pkgname) {\n'
                                     '  f <- Sys.getenv("PDPX_PROBE_MARKER")\n  if (nzchar(f)) file.create(f)\n}\n')
    done = subprocess.run(["R", "CMD", "INSTALL", "--no-test-load", "-l", str(lib), str(pkg)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rscript(f"""
        suppressMessages(library(randomForest)); set.seed(1)
        d <- read.csv("{d / 'data.csv'}", stringsAsFactors = TRUE); d$y <- d$a + d$b + (d$f == "q")
        m <- randomForest(y ~ a + b + f, data = d, ntree = 5)
        library({PROBE}, lib.loc = "{lib}")
        secret <- file.path("{d}", "secret.bin"); writeBin(as.double(m$forest$nodepred) * 1000, secret)
        for (p in c("", "wall_")) {{  # the files, and copies (other markers) for the test of the R process alone
          mk <- function(name) file.path("{d}", paste0(p, "ran_", name))
          put <- function(x, name) saveRDS(x, file.path("{d}", paste0(p, name, ".rds")))
          x <- m; attr(x$terms, "predvars") <- bquote(list(y, a, file.create(.(mk("predvars"))))); put(x, "predvars")
          x <- m; attr(x$terms, "predvars") <- NULL
          attr(x$terms, "variables") <- bquote(list(y, (function(...) {{ file.create(.(mk("funpos"))); a }})(y, a), b))
          put(x, "funpos")
          x <- m; class(x) <- c("lm", "randomForest"); x$call$offset <- bquote(file.create(.(mk("class"))))
          put(x, "class")
          x <- m; x$env <- as.environment("package:{PROBE}"); put(x, "pkgenv")
          x <- m; x$forest$nodepred <- .Internal(mmap_file(secret, "double", TRUE, FALSE, TRUE)); put(x, "mmap")
        }}
        x <- m; class(x) <- c("lm", "randomForest"); saveRDS(x, file.path("{d}", "class_only.rds"))
        saveRDS(m, file.path("{d}", "plain.rds")); save(m, file = file.path("{d}", "plain.rda")); save(m, file = file.path("{d}", "plain.RData"))
        x <- m; attr(x$terms, "predvars") <- bquote(list(y, a, file.create(.(mk("predvars_rda")))))
        save(x, file = file.path("{d}", "predvars.rda"))
    """, env={"PDPX_PROBE_MARKER": ""})
    return d


#: the issue's five hostile files: (what the refusal names, R code that uses the file as R would)
HOSTILE = {
    "predvars": ("a call to 'file.create' in the variables of a formula", "predict(m, d)"),
    "funpos": ("a call whose function is itself a call", "predict(m, d)"),
    "class": ("a call to 'file.create'", "predict(m, d)"),
    "pkgenv": ("a package environment (reading it makes R attach that package)", "invisible(m)"),
    "mmap": ("an ALTREP vector of class mmap_real of package base (R would fill it from another file)",
             "cat(identical(as.double(m$forest$nodepred), readBin(secret, 'double', 1e6)))"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_r_file_is_refused_and_runs_nothing(files, case, monkeypatch):
    words, use = HOSTILE[case]
    marker = files / f"ran_{case}"
    # what pdpx's R process would find if it took the user's settings: the probe package and its marker
    monkeypatch.setenv("R_LIBS", str(files / "lib"))
    monkeypatch.setenv("PDPX_PROBE_MARKER", str(marker))
    for opt_in in (["--allow-pickle"], []):
        line = error_line(run("pd", *opt_in, files / f"{case}.rds", files / "data.csv", "--feature", "a"))
        assert ("even with --allow-pickle: it holds " + words if opt_in else "is code to R") in line, line
        assert "pdpx::export_model(model" in line, line
    assert not marker.exists()
    # the file is what it claims: R, reading and using it, runs the payload (or reads the other file)
    shown = rscript(f"""
        suppressMessages(library(randomForest))
        d <- read.csv("{files / 'data.csv'}", stringsAsFactors = TRUE); d$y <- d$a + d$b
        secret <- "{files / 'secret.bin'}"
        m <- readRDS("{files / f'{case}.rds'}")
        try(suppressWarnings({use}), silent = TRUE)
    """, env={"R_LIBS": str(files / "lib"), "PDPX_PROBE_MARKER": str(marker)})
    assert marker.exists() if case != "mmap" else shown.strip() == "TRUE"  # mmap: the other file's numbers


def test_a_class_vector_with_another_class_is_refused(files):
    line = error_line(run("pd", "--allow-pickle", files / "class_only.rds", files / "data.csv", "--feature", "a"))
    assert "c('lm', 'randomForest'), not a model pdpx reads" in line, line


def test_the_r_process_is_a_second_wall(files, tmp_path, monkeypatch):
    """Bypassing the byte reader: the fenced R process evaluates nothing of the model and loads no package of the
    user's library (the class check is R's too), so no payload runs."""
    from pdpx.cli.rds_export import RProcessError, export_r_file

    monkeypatch.setenv("R_LIBS", str(files / "lib"))
    for case in ("predvars", "funpos", "pkgenv", "class"):
        marker = files / f"wall_ran_{case}"
        monkeypatch.setenv("PDPX_PROBE_MARKER", str(marker))
        path = files / f"wall_{case}.rds"
        if case == "class":
            with pytest.raises(RProcessError, match="randomForest, ranger and gbm models"):
                export_r_file(path, kind="rds", name=None, budget=1 << 30, folder=tmp_path)
        else:
            out = export_r_file(path, kind="rds", name=None, budget=1 << 30, folder=tmp_path)
            assert out.read_bytes().startswith(b'{"format":"pdpx-trees"')
        assert not marker.exists(), case


@pytest.mark.parametrize("name", ["plain.rds", "plain.rda", "plain.RData"])
def test_an_r_model_is_read_with_the_opt_in_only(files, name):
    line = error_line(run("pd", files / name, files / "data.csv", "--feature", "a"))
    for words in ("is code to R", "--allow-pickle", f"{ALLOW_PICKLE_ENV}=1", 'pdpx::export_model(model, "model.pdpx.json")'):
        assert words in line, (words, line)
    for args, env in ((["--allow-pickle"], {}), ([], {ALLOW_PICKLE_ENV: "1"})):
        result = run("pd", *args, files / name, files / "data.csv", "--feature", "a", "--values", "a=0.2,0.5,0.8",
                     env=env)
        assert result.exit_code == 0, result.stderr
        warnings = [x for x in result.stderr.splitlines() if x.startswith("pdpx: warning:")]
        assert len(warnings) == 1 and "separate R process" in warnings[0], result.stderr
        got = pd.read_csv(io.StringIO(result.stdout))["yhat"].to_numpy()
        expected = rscript(f"""
            suppressMessages(library(randomForest)); d <- read.csv("{files / 'data.csv'}", stringsAsFactors = TRUE)
            m <- readRDS("{files / 'plain.rds'}")
            means <- sapply(c(0.2, 0.5, 0.8), function(v) {{ d$a <- v; mean(predict(m, d)) }})
            cat(sprintf("%.17g", means), sep = "\\n")
        """)
        np.testing.assert_allclose(got, np.array(expected.split(), dtype=float), rtol=1e-12)


def test_a_hostile_object_in_a_save_file_is_refused(files):
    line = error_line(run("pd", "--allow-pickle", files / "predvars.rda", files / "data.csv", "--feature", "a"))
    assert "a call to 'file.create' in the variables of a formula" in line, line
    assert not (files / "ran_predvars_rda").exists()


# ------------------------------------------------------------------ sizes: refused before R reads the file
PEAK = textwrap.dedent("""
    import resource, sys
    from click.testing import CliRunner
    from pdpx.cli import main
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = CliRunner().invoke(main, sys.argv[1:], catch_exceptions=False)
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024
    print(result.exit_code, grown, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(result.stderr.strip())
""")


def test_declared_lengths_are_refused_before_r_reads_the_file(files, tmp_path):
    """The issue's 49 KB file whose compact sequence declares 2^26 elements (R peaked at 1.6 GiB), and 2^40 (R
    aborted): refused from the bytes, naming the number and the setting, in little memory, no R process started."""
    seq26, seq40 = tmp_path / "seq26.rds", tmp_path / "seq40.rds"
    rscript(f"""
        suppressMessages(library(randomForest))
        d <- read.csv("{files / 'data.csv'}", stringsAsFactors = TRUE); d$y <- d$a + d$b
        m <- randomForest(y ~ a + b + f, data = d, ntree = 5)
        x <- m; x$rows <- 1:2^26; saveRDS(x, "{seq26}")
        x <- m; x$rows <- 1:2^40; saveRDS(x, "{seq40}")
    """)
    assert seq26.stat().st_size < 100_000
    for path, budget, words in ((seq26, ["--memory-budget", "128MB"], "a compact sequence of 67,108,864 elements"),
                                (seq40, [], "a compact sequence of 1,099,511,627,776 elements (8.0 TiB)")):
        done = subprocess.run([sys.executable, "-c", PEAK, "pd", "--allow-pickle", str(path),
                               str(files / "data.csv"), "--feature", "a", *budget], capture_output=True, text=True,
                              timeout=600, env={k: v for k, v in os.environ.items() if k != ALLOW_PICKLE_ENV})
        assert done.returncode == 0, done.stderr
        first, message = done.stdout.strip().split("\n", 1)
        code, grown, children = map(int, first.split())
        assert code == 1 and words in message and "--memory-budget" in message, message
        assert grown < 32 and children == 0, (grown, children)


def test_a_file_pdpx_cannot_check_is_refused(files, tmp_path):
    path = tmp_path / "ascii.rds"
    rscript(f'saveRDS(list(a = 1), "{path}", ascii = TRUE)')
    line = error_line(run("pd", "--allow-pickle", path, files / "data.csv", "--feature", "a"))
    assert "pdpx cannot check it" in line and "ascii = TRUE" in line and "pdpx::export_model" in line, line


def test_the_help_says_r_files_are_code():
    for args in ([], ["pd"]):
        text = " ".join(CliRunner().invoke(main, [*args, "--help"]).output.split())
        assert ".rds" in text and ".pdpx.json" in text and "--allow-pickle" in text, args


def test_an_r_process_that_takes_too_long_is_ended(files, tmp_path, monkeypatch):
    from pdpx.cli import rds_export

    monkeypatch.setattr(rds_export, "R_TIMEOUT", 0.01)
    with pytest.raises(rds_export.RProcessError, match="did not finish reading the file within 0.01 s"):
        rds_export.export_r_file(files / "plain.rds", kind="rds", name=None, budget=1 << 30, folder=tmp_path)
