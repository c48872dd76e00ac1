# The R blocks of docs/r.md (and of README.md), run in page order in one environment, as a reader who copies them
# runs them: each must run without error (warnings are shown, not failures). A ```r block followed
# by a ```text block shows what the R block prints: the test checks the printed text equals it.

find_doc <- function(page = file.path("docs", "r.md")) {
  starts <- c(testthat::test_path("."), dirname(dirname(dirname(pdpx_python() %||% "."))))
  for (start in starts) {
    dir <- normalizePath(start, mustWork = FALSE)
    for (i in 1:6) {
      doc <- file.path(dir, page)
      if (file.exists(doc)) return(doc)
      dir <- dirname(dir)
    }
  }
  NULL
}

# The fenced blocks of a markdown page: list(lang, code) in page order.
fenced_blocks <- function(lines) {
  blocks <- list()
  i <- 1
  while (i <= length(lines)) {
    m <- regmatches(lines[i], regexec("^```([A-Za-z]*)\\s*$", lines[i]))[[1]]
    if (length(m) && nzchar(m[2])) {
      end <- i + which(lines[(i + 1):length(lines)] == "```")[1]
      blocks[[length(blocks) + 1]] <- list(lang = m[2], code = lines[(i + 1):(end - 1)], line = i)
      i <- end + 1
    } else {
      i <- i + 1
    }
  }
  blocks
}

# What a block prints when its expressions are run at the console: visible values printed.
run_block <- function(code, env) {
  exprs <- parse(text = code, keep.source = FALSE)
  utils::capture.output({
    for (e in exprs) {
      res <- withVisible(eval(e, env))
      if (res$visible) print(res$value)
    }
  })
}

test_that("every R block of docs/r.md runs as shown, printing what the page shows", {
  doc <- find_doc()
  if (is.null(doc)) skip("docs/r.md is not beside this copy of the package (R CMD check's copy); make test-r runs it")
  skip_if_no_pdpx()
  for (pkg in c("randomForest", "ranger", "gbm", "MASS")) skip_if_not_installed(pkg)
  blocks <- fenced_blocks(readLines(doc, warn = FALSE))
  r_blocks <- which(vapply(blocks, function(b) b$lang == "r", TRUE))
  expect_gt(length(r_blocks), 3)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  env <- new.env(parent = globalenv())
  set.seed(1)
  shown <- 0
  # a block using Spark (pyspark through reticulate) needs pyspark and Java; CI has both (make setup)
  spark_ready <- reticulate::py_module_available("pyspark") && nzchar(Sys.which("java"))
  no_spark <- integer(0)
  for (k in r_blocks) {
    b <- blocks[[k]]
    if (any(grepl("pyspark", b$code, fixed = TRUE)) && !spark_ready) {
      if (nzchar(Sys.getenv("CI"))) stop(sprintf("docs/r.md, the R block at line %d needs pyspark and Java", b$line))
      no_spark <- c(no_spark, b$line)
      next
    }
    # the package under test is already loaded (library(pdpx) would attach an installed copy)
    code <- b$code[!grepl("^\\s*library\\(pdpx\\)\\s*$", b$code)]
    out <- withCallingHandlers(
      tryCatch(suppressMessages(run_block(code, env)), error = function(e) {
        stop(sprintf("docs/r.md, the R block at line %d fails: %s", b$line, conditionMessage(e)), call. = FALSE)
      }),
      warning = function(w) invokeRestart("muffleWarning"))
    nxt <- if (k < length(blocks)) blocks[[k + 1]] else NULL
    if (!is.null(nxt) && nxt$lang == "text") {
      shown <- shown + 1
      expect_identical(trimws(out, "right"), trimws(nxt$code, "right"),
                       label = sprintf("what the R block at line %d of docs/r.md prints", b$line))
    }
  }
  expect_gte(shown, 1)
  if (length(no_spark)) skip(sprintf("the R block(s) at line %s of docs/r.md use Spark: pyspark or Java is missing",
                                     paste(no_spark, collapse = ", ")))
})

test_that("the R block of README.md runs as shown", {
  doc <- find_doc("README.md")
  if (is.null(doc) || is.null(find_doc())) skip("README.md is not beside this copy of the package; make test-r runs it")
  skip_if_no_pdpx()
  skip_if_not_installed("randomForest")
  blocks <- Filter(function(b) b$lang == "r", fenced_blocks(readLines(doc, warn = FALSE)))
  expect_gte(length(blocks), 1)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  env <- new.env(parent = globalenv())
  for (b in blocks) {
    code <- b$code[!grepl("^\\s*library\\(pdpx\\)\\s*$", b$code)]
    expect_no_error(suppressMessages(run_block(code, env)))
  }
  # the README's ICE example: plot() draws the curves and the PD line over them
  if (exists("pd", env) && inherits(env$pd, "pdpx_pd")) {
    p <- autoplot(env$pd)
    expect_equal(sum(vapply(p$layers, function(l) inherits(l$geom, "GeomLine"), TRUE)), 2)
  }
})
