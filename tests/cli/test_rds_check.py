"""The byte reader of R files (pdpx.cli.rds_check): anything but plain data is refused before R reads the file.

Crafted files (tests/rbytes.py writes R's format item by item) cover what R would run or load
(promises, functions, calls, classes, namespaces, package environments, ALTREP classes, S4...),
sizes (declared lengths, compact sequences, compression bombs: their peak memory measured in a
fresh process) and malformed files; files R itself writes for fitted randomForest, ranger and
gbm models (every compression, both format versions, .rda) pass.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
import struct
import subprocess
import sys
import textwrap

import pytest
import rbytes as rb

from pdpx.cli.rds_check import BUDGET_HINT, RdsRefused, RdsUnreadable, check_r_file

MIB = 2**20
STATS_NA_PASS = (rb.flags(3, tag=True) + struct.pack(">i", 249) + struct.pack(">ii", 0, 2) + rb.char("stats")
                 + rb.char("4.2.2") + rb.pairlist([("object", rb.MISSING), ("...", rb.MISSING)]))


def namespace(name: str) -> bytes:
    return struct.pack(">i", 249) + struct.pack(">ii", 0, 2) + rb.char(name) + rb.char("1.0")


def terms(**attrs: bytes) -> bytes:
    """A formula ``~ y`` whose attributes are ``attrs`` (as a terms object holds variables, predvars...)."""
    return rb.flags(6, attr=True) + rb.attributes(**attrs) + rb.sym("~") + rb.flags(2) + rb.sym("y") + rb.NIL


def env(frame: bytes) -> bytes:
    return rb.flags(4) + struct.pack(">i", 0) + rb.GLOBALENV + frame + rb.NIL + rb.NIL


SYSTEM = rb.call(rb.sym("system"), rb.strs(["touch ran"]))
#: (file, words the refusal must contain)
REFUSED = {
    "promise never run (CVE-2024-27322)": (rb.model(rb.flags(5, tag=True) + rb.GLOBALENV + rb.UNBOUND + SYSTEM),
                                           "a promise that never ran"),
    "function": (rb.model(rb.flags(3, tag=True) + rb.GLOBALENV + rb.NIL + SYSTEM), "an R function"),
    "function dressed as stats::na.pass": (rb.model(STATS_NA_PASS + SYSTEM), "'system'"),
    "function in an environment": (rb.model(env(rb.pairlist([("f", rb.flags(3, tag=True) + rb.GLOBALENV + rb.NIL
                                                                  + rb.sym("x"))]))), "an R function"),
    "byte code": (rb.model(rb.flags(21) + struct.pack(">i", 0)), "compiled R code"),
    "primitive": (rb.model(rb.flags(8) + struct.pack(">i", 3) + b"sum"), "a primitive"),
    "expression": (rb.model(rb.flags(20) + rb.length(1) + rb.sym("x")), "an R expression"),
    "call of another function": (rb.model(SYSTEM), "a call to 'system'"),
    "call in function position": (rb.model(rb.call(rb.call(rb.sym("function"), rb.NIL, rb.sym("x")), rb.sym("y"))),
                                  "function is itself a call"),
    "environment in function position": (rb.model(env(rb.NIL), rb.call(struct.pack(">i", (1 << 8) | 255))),
                                         "function is itself computed"),
    "pkg::fun of another function": (rb.model(rb.call(rb.call(rb.sym("::"), rb.sym("base"), rb.sym("system")))),
                                     "a call to 'system'"),
    "predvars that run code": (rb.model(terms(predvars=rb.call(rb.sym("list"), rb.sym("y"), SYSTEM))),
                               "a call to 'system' in the variables of a formula"),
    "variables that compute": (rb.model(terms(variables=rb.call(rb.sym("list"), rb.call(rb.sym("+"), rb.sym("a"),
                                                                                      rb.sym("b"))))),
                               "a call to '+' in the variables of a formula"),
    "variables in function position": (rb.model(terms(variables=rb.call(rb.sym("list"), rb.call(rb.call(
        rb.sym("("), rb.call(rb.sym("function"), rb.NIL, SYSTEM)), rb.sym("y"))))), "function is itself a call"),
    "formula attribute with a function": (rb.model(terms(formula=rb.call(rb.sym("~"), rb.call(rb.sym("log"),
                                                                                            rb.sym("a"))))),
                                          "a call to 'log' in a formula"),
    "class vector with another class first": (rb.model(classes=("lm", "randomForest")),
                                              "c('lm', 'randomForest'), not a model"),
    "class vector with another class after": (rb.model(classes=("randomForest", "lm")), "not a model"),
    "no class": (rb.vec([rb.real([1])]), "without a class"),
    "a model class on a number": (rb.flags(14, attr=True, obj=True) + rb.length(1) + struct.pack(">d", 1)
                                  + rb.attributes(**{"class": rb.strs(["ranger"])}), "class 'ranger' in the model"),
    "another class inside": (rb.model(rb.vec([rb.real([1])], attrs=rb.attributes(**{"class": rb.strs(["lm"])}),
                                             obj=True)), "class 'lm'"),
    "namespace of a package": (rb.model(namespace("earth")), "namespace of package earth"),
    "package environment": (rb.model(struct.pack(">i", 248) + struct.pack(">ii", 0, 1) + rb.char("package:stats")),
                            "a package environment"),
    "mmap ALTREP (another file's bytes)": (rb.model(rb.altrep("mmap_real", "base", rb.pairlist(
        [(None, rb.strs(["/etc/hostname"]))]))), "mmap_real of package base (R would fill it from another file)"),
    "ALTREP of a package": (rb.model(rb.altrep("compact_intseq", "earth", rb.real([10, 1, 1]), 13)),
                            "compact_intseq of package earth"),
    "S4 object": (rb.model(rb.flags(25, obj=True, attr=True, levels=16) + rb.attributes(**{"class": rb.strs(["A"])})),
                  "an S4 object"),
    "S4 bit on a vector": (rb.model(rb.flags(14, obj=True, levels=16) + rb.length(0)), "an S4 object"),
    "S4 bit without the object bit": (rb.model(rb.flags(14, levels=16) + rb.length(0)), "an S4 object"),
    "pkg::fun of another package": (rb.model(rb.call(rb.call(rb.sym("::"), rb.sym("evilpkg"), rb.sym("ranger")))),
                                    "a reference to package evilpkg"),
    "pkg::name as an argument": (rb.model(rb.call(rb.sym("c"), rb.call(rb.sym(":::"), rb.sym("evilpkg"),
                                                                         rb.sym("x")))), "package evilpkg"),
    "a class vector with NA": (rb.model(classes=("randomForest", None)), "an object of class c('randomForest', None)"),
    "external pointer": (rb.model(rb.flags(22) + rb.NIL + rb.NIL), "an external pointer"),
    "weak reference": (rb.model(rb.flags(23)), "a weak reference"),
    "persistent reference": (rb.model(struct.pack(">i", 247) + struct.pack(">ii", 0, 1) + rb.char("x")),
                             "a persistent reference"),
    "nesting 6000 deep": (rb.model((rb.flags(19) + rb.length(1)) * 6000 + rb.NIL), "nests deeper than 5000"),
    "a long vector of 2^40": (rb.model(rb.real([], declared=2**40)), "1,099,511,627,776 elements"),
    "a compact sequence of 2^40": (rb.model(rb.altrep("compact_realseq", "base", rb.real([2**40, 1, 1]))),
                                   "a compact sequence of 1,099,511,627,776 elements"),
    "2^30 strings of a compact sequence": (rb.model(rb.altrep("deferred_string", "base", rb.flags(2) + rb.altrep(
        "compact_intseq", "base", rb.real([2**30, 1, 1]), 13) + rb.ints([0]), 16)), "1,073,741,824 strings"),
}
ALLOWED = {
    "a randomForest": (rb.model(), "randomForest"),
    "format version 2": (rb.model(), "randomForest"),
    "c('randomForest.formula', 'randomForest')": (rb.model(classes=("randomForest.formula", "randomForest")),
                                                  "randomForest"),
    "ranger": (rb.model(classes=("ranger",)), "ranger"),
    "gbm with stats::na.pass in its call": (rb.model(rb.call(rb.sym("model.frame"), STATS_NA_PASS + rb.sym("object")),
                                                     classes=("gbm",)), "gbm"),
    "a promise that ran (the argument of the function the model was fit in)":
        (rb.model(rb.flags(5) + rb.real([2]) + rb.sym("n")), "randomForest"),
    "pkg::fun of a fitting function": (rb.model(rb.call(rb.call(rb.sym("::"), rb.sym("ranger"), rb.sym("ranger")),
                                                        rb.sym("d")), classes=("ranger",)), "ranger"),
    "a terms object": (rb.model(terms(variables=rb.call(rb.sym("list"), rb.sym("y"), rb.sym("a")),
                                      predvars=rb.call(rb.sym("list"), rb.sym("y"), rb.sym("a")),
                                      **{"class": rb.strs(["terms", "formula"]), ".Environment": rb.GLOBALENV})),
                       "randomForest"),
    "R's namespace stats": (rb.model(namespace("stats")), "randomForest"),
    "a factor inside": (rb.model(rb.flags(13, attr=True, obj=True) + rb.length(1) + struct.pack(">i", 1)
                                 + rb.attributes(levels=rb.strs(["a"]), **{"class": rb.strs(["factor"])})),
                        "randomForest"),
    "a compact sequence": (rb.model(rb.altrep("compact_intseq", "base", rb.real([10, 1, 1]), 13)), "randomForest"),
}


def write(tmp_path, data: bytes, name: str = "model.rds"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_is_not_plain_data_is_refused(tmp_path, case):
    item, words = REFUSED[case]
    with pytest.raises(RdsRefused) as info:
        check_r_file(write(tmp_path, rb.rds(item)))
    assert words in str(info.value) and "\n" not in str(info.value), str(info.value)


@pytest.mark.parametrize("case", sorted(ALLOWED))
def test_plain_data_passes(tmp_path, case):
    item, library = ALLOWED[case]
    facts = check_r_file(write(tmp_path, rb.rds(item, 2 if "version 2" in case else 3)))
    assert facts.library == library


def test_sizes_are_charged_against_the_budget_before_reading(tmp_path):
    seq = rb.rds(rb.model(rb.altrep("compact_intseq", "base", rb.real([2**26, 1, 1]), 13)))
    path = write(tmp_path, seq)
    assert check_r_file(path, budget=1 << 30).library == "randomForest"
    with pytest.raises(RdsRefused) as info:
        check_r_file(path, budget=128 * MIB)
    text = str(info.value)
    assert "67,108,864 elements (256.0 MiB)" in text and "128.0 MiB" in text and BUDGET_HINT in text, text
    many = rb.rds(rb.model(*[rb.raw(40 * MIB, bytes(40 * MIB)) for _ in range(4)]))  # each fits, not together
    with pytest.raises(RdsRefused, match=r"more than 160.0 MiB to read, more than the memory budget \(128.0 MiB"):
        check_r_file(write(tmp_path, many), budget=128 * MIB)


@pytest.mark.parametrize(("name", "data"), [
    ("ascii", b"A\n3\n262402\n"), ("native binary", b"B\n" + bytes(20)), ("truncated", rb.rds(rb.model())[:-6]),
    ("two objects", rb.rds(rb.model()) + rb.NIL), ("version 9", b"X\n" + struct.pack(">iii", 9, 0, 0)),
    ("a string with attributes", rb.rds(rb.model(rb.flags(9, attr=True) + struct.pack(">i", 1) + b"a" + rb.NIL))),
])
def test_what_pdpx_cannot_read_is_unreadable(tmp_path, name, data):
    with pytest.raises(RdsUnreadable):
        check_r_file(write(tmp_path, data))


def test_save_files_hold_exactly_one_model(tmp_path):
    data_frame = rb.vec([rb.real([1])], attrs=rb.attributes(**{"class": rb.strs(["data.frame"])}), obj=True)
    facts = check_r_file(write(tmp_path, rb.rda(d=data_frame, m=rb.model(classes=("gbm",))), "x.rda"))
    assert (facts.library, facts.name, facts.names) == ("gbm", "m", ["d", "m"])
    with pytest.raises(RdsRefused, match="several models"):
        check_r_file(write(tmp_path, rb.rda(a=rb.model(), b=rb.model()), "x.rda"))
    with pytest.raises(RdsRefused, match="no model"):
        check_r_file(write(tmp_path, rb.rda(d=data_frame), "x.rda"))
    with pytest.raises(RdsRefused, match="'system'"):
        check_r_file(write(tmp_path, rb.rda(m=rb.model(SYSTEM)), "x.RData"))


# ------------------------------------------------------------------ compression bombs, measured
PEAK = textwrap.dedent("""
    import resource, sys
    from pdpx.cli.rds_check import RdsRefused, check_r_file
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        check_r_file(sys.argv[1], budget=int(sys.argv[2]))
        print("passed")
    except RdsRefused as exc:
        print(exc)
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
""")


def bomb(prefix: bytes, total: int, compress) -> bytes:
    """``prefix`` then zeros, ``total`` bytes once decompressed, as concatenated streams of 16 MiB (a few KB)."""
    block = 16 * MIB
    first = compress(prefix + bytes(block - len(prefix)))
    rest = compress(bytes(block))
    return first + rest * (total // block - 1)


def peak(path, budget: int) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", PEAK, str(path), str(budget)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    message, grown = done.stdout.strip().splitlines()
    return message, int(grown)


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress], ids=["gzip", "bzip2", "xz"])
def test_a_compression_bomb_is_refused_in_little_memory(tmp_path, compress):
    """1 GiB once decompressed, from a few KB: its declared length is refused before anything is decompressed."""
    prefix = rb.header() + rb.flags(19) + rb.length(1) + rb.raw(2**30 - 64)
    path = write(tmp_path, bomb(prefix, 2**30, compress))
    assert path.stat().st_size < 1 * MIB
    message, grown = peak(path, 256 * MIB)
    assert "1,073,741,760 elements" in message and "256.0 MiB" in message and BUDGET_HINT in message, message
    assert grown < 32, f"the check took {grown} MiB"


def test_a_stream_that_passes_the_budget_is_read_a_block_at_a_time(tmp_path):
    """Two vectors of 192 MiB (each within 256 MiB, not together): the first is streamed past, the second refused."""
    vector = rb.raw(192 * MIB)
    zeros = gzip.compress(bytes(16 * MIB))
    data = gzip.compress(rb.header() + rb.flags(19) + rb.length(2) + vector) + zeros * 12 + gzip.compress(vector)
    message, grown = peak(write(tmp_path, data), 256 * MIB)
    assert "more than 384.0 MiB to read, more than the memory budget (256.0 MiB" in message, message
    assert grown < 32, f"the check took {grown} MiB"


# ------------------------------------------------------------------ what R writes for fitted models
@pytest.fixture(scope="module")
def r_models(tmp_path_factory):
    if shutil.which("Rscript") is None:
        pytest.skip("R is not installed (make setup installs it)")
    out = tmp_path_factory.mktemp("rmodels")
    code = textwrap.dedent(f"""
        suppressMessages({{library(randomForest); library(ranger); library(gbm)}}); set.seed(1)
        d <- data.frame(a = runif(150), b = factor(sample(letters[1:4], 150, TRUE)), c = rnorm(150))
        d$y <- d$a + as.integer(d$b) + rnorm(150, sd = .1); d$k <- factor(d$y > 2.5); d$n <- as.integer(d$y > 2.5)
        wide <- as.data.frame(matrix(runif(150 * 300), 150)); wide$y <- runif(150)
        fit_in <- function(n) {{ local_value <- n; randomForest(y ~ a + c, data = d, ntree = n) }}
        m <- list(
          rf_formula = randomForest(y ~ ., data = d[, c("a", "b", "c", "y")], ntree = 5, importance = TRUE),
          rf_class = randomForest(k ~ a + b + c, data = d, ntree = 5, proximity = TRUE),
          rf_xy = randomForest(d[, c("a", "b", "c")], d$y, ntree = 5, corr.bias = TRUE),
          rf_in_function = fit_in(5),
          rf_300_terms = randomForest(y ~ ., data = wide, ntree = 2),
          ranger = ranger(y ~ a + b + c, data = d, num.trees = 5, respect.unordered.factors = "order"),
          ranger_prob = ranger(k ~ a + b + c, data = d, num.trees = 5, probability = TRUE),
          gbm = gbm(y ~ a + b + c, data = d, n.trees = 5, distribution = "gaussian", train.fraction = 0.8),
          gbm_cv = gbm(n ~ a + b, data = d, n.trees = 5, distribution = "bernoulli", cv.folds = 2),
          gbm_fit = gbm.fit(d[, c("a", "b")], d$y, n.trees = 5, distribution = "laplace", verbose = FALSE))
        for (n in names(m)) for (s in list(c("gz", "TRUE", "3"), c("xz", "xz", "3"), c("bz", "bzip2", "3"),
                                           c("none", "FALSE", "2")))
          saveRDS(m[[n]], file.path("{out}", paste0(n, "_", s[1], ".rds")),
                  compress = if (s[2] %in% c("TRUE", "FALSE")) as.logical(s[2]) else s[2], version = as.integer(s[3]))
        model <- m$gbm; data <- d; save(model, data, file = file.path("{out}", "both.rda"))
        save(model, file = file.path("{out}", "one.RData"), compress = "xz")
    """)
    done = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out


def test_fitted_models_as_r_writes_them_pass(r_models):
    """No false alarm: R's own files of fitted models, each compression, format versions 2 and 3, .rda."""
    files = sorted(r_models.iterdir())
    assert len(files) == 42
    for path in files:
        facts = check_r_file(path)
        expected = "randomForest" if path.name.startswith("rf") else "ranger" if path.name.startswith("ranger") \
            else "gbm"
        assert facts.library == expected, path.name
        assert facts.name == ("model" if path.suffix in (".rda", ".RData") else None)
