# pdp and pdpx in one R session, in either load order, with pdp itself (not the stand-in of
# r/pdpx/tests/testthat/test-pdp-classes.R, which make test runs): no "Registered S3 methods overwritten"
# message, pdp's result printed by pdp's methods (a data.frame), pdpx's by pdpx's.
#
# pdp is not among Debian's packages and CRAN is not reachable from CI, so this is run by hand:
#   R CMD INSTALL -l /tmp/pdplib <pdp 0.8.2 source>
#   PDPX_PYTHON=.venv/bin/python Rscript r/check-with-pdp.R /tmp/pdplib
# It prints "ok" and exits 0, or names what differs and exits 1.

args <- commandArgs(trailingOnly = TRUE)
lib <- if (length(args)) args[[1]] else Sys.getenv("PDPX_PDP_LIB")
if (!nzchar(lib) || !dir.exists(file.path(lib, "pdp"))) {
  stop("give an R library holding pdp: Rscript r/check-with-pdp.R <library>", call. = FALSE)
}
here <- normalizePath(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))), "pdpx"))
failures <- character()
for (first in c("pdp", "pdpx")) {
  load_pdpx <- sprintf("pkgload::load_all(%s, quiet = TRUE)", deparse(here))
  loads <- if (first == "pdp") c("library(pdp)", load_pdpx) else c(load_pdpx, "library(pdp)")
  script <- tempfile(fileext = ".R")
  writeLines(c(sprintf(".libPaths(c(%s, .libPaths()))", deparse(lib)), loads,
               "fit <- lm(mpg ~ wt + hp, data = mtcars)",
               "theirs <- pdp::partial(fit, pred.var = 'wt', train = mtcars, grid.resolution = 3)",
               "ours <- pdpx::partial(fit, pred.var = 'wt', train = mtcars, grid.resolution = 3)",
               "cat('theirs:', class(theirs), '\\n'); print(theirs)", "cat('ours:', class(ours), '\\n'); print(ours)"),
             script)
  out <- system2(file.path(R.home("bin"), "Rscript"), shQuote(script), stdout = TRUE, stderr = TRUE)
  at_theirs <- match("theirs: partial data.frame ", out)
  at_ours <- match("ours: pdpx_partial partial data.frame ", out)
  ok <- !any(grepl("overwritten", out)) && !is.na(at_theirs) && !is.na(at_ours) &&
    grepl("^\\s+wt\\s+yhat$", out[at_theirs + 1]) && grepl("^<partial dependence: wt", out[at_ours + 1])
  if (!ok) failures <- c(failures, sprintf("loading %s first:\n%s", first, paste(out, collapse = "\n")))
}
if (length(failures)) {
  cat(failures, sep = "\n\n")
  quit(status = 1)
}
cat("ok\n")
