# pdpx's partial() results carry pdpx's class first (pdpx_partial, pdpx_ice, pdpx_cice), then pdp's:
# pdpx registers methods only for its own classes, so a package registering methods for pdp's
# classes (pdp itself) is never masked and never masks pdpx. pdp is not in Debian's packages (the
# project cannot install it), so a package made here registers print/plot/summary methods for
# "partial", "ice" and "cice" as pdp 0.8.2 does; loading it before or after pdpx must print no
# "Registered S3 methods overwritten" message.

pdp_like_lib <- local({
  lib <- NULL
  function() {
    if (!is.null(lib)) return(lib)
    src <- file.path(tempfile("pdpstub"), "pdpstub")
    dir.create(file.path(src, "R"), recursive = TRUE)
    writeLines(c("Package: pdpstub", "Version: 0.0.1", "Title: Methods for pdp's Classes, as pdp Registers Them",
                 "Description: Test fixture.", "License: GPL-2", "Author: pdpx tests", "Maintainer: pdpx <a@b.c>"),
               file.path(src, "DESCRIPTION"))
    classes <- c("partial", "ice", "cice")
    writeLines(c(paste0("S3method(print, ", classes, ")"), paste0("S3method(plot, ", classes, ")"),
                 paste0("S3method(summary, ", classes, ")")), file.path(src, "NAMESPACE"))
    writeLines(c(
      "print.partial <- function(x, ...) { cat('<printed by pdpstub>\\n'); invisible(x) }",
      "print.ice <- print.partial", "print.cice <- print.partial",
      "plot.partial <- function(x, ...) 'plotted by pdpstub'", "plot.ice <- plot.partial", "plot.cice <- plot.partial",
      "summary.partial <- function(object, ...) 'summarised by pdpstub'", "summary.ice <- summary.partial",
      "summary.cice <- summary.partial"), file.path(src, "R", "methods.R"))
    out <- file.path(dirname(src), "lib")
    dir.create(out)
    status <- system2(file.path(R.home("bin"), "R"), c("CMD", "INSTALL", "--no-test-load", "-l", shQuote(out),
                                                      shQuote(src)), stdout = FALSE, stderr = FALSE)
    if (status != 0) stop("could not install the test package pdpstub")
    lib <<- out
    lib
  }
})

test_that("pdpx registers no method for pdp's classes; its results' first class is its own", {
  for (generic in c("print", "plot", "summary")) {
    for (cls in c("partial", "ice", "cice")) {
      m <- utils::getS3method(generic, cls, optional = TRUE, envir = asNamespace("pdpx"))
      expect_true(is.null(m) || !identical(environment(m), asNamespace("pdpx")),
                  label = paste0(generic, ".", cls, " from pdpx"))
      expect_false(is.null(utils::getS3method(generic, paste0("pdpx_", cls), optional = TRUE)))
    }
  }
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  expect_equal(class(partial(fit, pred.var = "wt", train = mtcars, grid.resolution = 3)),
               c("pdpx_partial", "partial", "data.frame"))
})

test_that("with a package holding pdp's methods loaded after pdpx: no overwritten message, each prints its own", {
  lib <- pdp_like_lib()
  if ("pdpstub" %in% loadedNamespaces()) unloadNamespace("pdpstub")
  msgs <- character(0)
  withCallingHandlers(loadNamespace("pdpstub", lib.loc = lib),
                      message = function(m) msgs <<- c(msgs, conditionMessage(m)),
                      warning = function(w) msgs <<- c(msgs, conditionMessage(w)))
  expect_false(any(grepl("overwritten", msgs)))
  # a result of pdp's classes (as pdp::partial() returns) is drawn by pdp's methods
  theirs <- structure(data.frame(wt = 1:3, yhat = c(1, 2, 3)), class = c("partial", "data.frame"))
  expect_equal(capture.output(print(theirs)), "<printed by pdpstub>")
  expect_equal(plot(theirs), "plotted by pdpstub")
  expect_equal(summary(structure(theirs, class = c("ice", "data.frame"))), "summarised by pdpstub")
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  ours <- partial(fit, pred.var = "wt", train = mtcars, grid.resolution = 3)
  expect_match(capture.output(print(ours))[1], "^<partial dependence: wt")
  expect_s3_class(summary(ours), "summary.pdpx")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_s3_class(plot(ours), "ggplot")
  ice <- partial(fit, pred.var = "wt", train = mtcars, grid.resolution = 3, ice = TRUE, center = TRUE)
  expect_match(capture.output(print(ice))[1], "centered ICE curves")
  unloadNamespace("pdpstub")
})

test_that("loading pdpx in a session where pdp's methods are registered first prints no overwritten message", {
  lib <- pdp_like_lib()
  src <- normalizePath(testthat::test_path("..", ".."), mustWork = FALSE)
  installed <- nzchar(system.file(package = "pdpx")) && !file.exists(file.path(src, "DESCRIPTION"))
  load_pdpx <- if (installed) "library(pdpx)" else sprintf("pkgload::load_all(%s, quiet = TRUE)", deparse(src))
  script <- tempfile(fileext = ".R")
  writeLines(c(sprintf("loadNamespace('pdpstub', lib.loc = %s)", deparse(lib)), load_pdpx,
               "x <- structure(data.frame(wt = 1, yhat = 2), class = c('partial', 'data.frame'))", "print(x)"),
             script)
  out <- system2(file.path(R.home("bin"), "Rscript"), shQuote(script), stdout = TRUE, stderr = TRUE)
  expect_false(any(grepl("overwritten", out)), label = paste(out, collapse = "\n"))
  expect_true("<printed by pdpstub>" %in% out, label = paste(out, collapse = "\n"))
})
