# Bad input from R: one table of cases. Each must fail with an R error that names the
# argument, before anything is computed (a counting predict function shows nothing ran).

calls <- new.env()
counting_fit <- function() {
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  list(fit = fit, f = function(object, newdata) {
    calls$n <- calls$n + nrow(newdata)
    stats::predict(object, newdata)
  })
}

bad_inputs <- list(
  list("kind", list(kind = "avg"), "kind must be one of \"average\""),
  list("ice not a flag", list(ice = "yes"), "ice must be TRUE or FALSE"),
  list("center not a flag", list(center = "no"), "center must be TRUE or FALSE"),
  list("center NA", list(center = NA), "center must be TRUE or FALSE"),
  list("method not a string", list(method = c("exact", "brute")), "method must be a single string"),
  list("unknown method", list(method = "fast"), "unknown method \"fast\""),
  list("grid_resolution too small", list(grid_resolution = 1), "grid_resolution must be a whole number >= 2"),
  list("grid_resolution fractional", list(grid_resolution = 2.5), "grid_resolution must be a whole number"),
  list("grid_resolution text", list(grid_resolution = "10"), "grid_resolution must be a whole number"),
  list("percentiles reversed", list(percentiles = c(0.95, 0.05)), "percentiles must be two numbers in \\[0, 1\\]"),
  list("percentiles as percents", list(percentiles = c(5, 95)), "percentiles must be two numbers in \\[0, 1\\]"),
  list("n_jobs zero", list(n_jobs = 0), "n_jobs must be a nonzero whole number"),
  list("n_jobs text", list(n_jobs = "2"), "n_jobs must be a nonzero whole number"),
  list("memory_budget infinite", list(memory_budget = Inf), "memory_budget"),
  list("memory_budget nonsense", list(memory_budget = "lots"), "memory_budget \"lots\" not understood"),
  list("custom_values unnamed", list(custom_values = list(c(1, 2))), "custom_values must be a named list"),
  list("sample_weight length", list(sample_weight = c(1, 2)), "sample_weight must be a numeric vector with one"),
  list("negative weights", list(sample_weight = c(-1, rep(1, 31))), "sample_weight has 1 negative"),
  list("categorical_features numbers", list(categorical_features = 3), "categorical_features must be a character"),
  list("unknown feature", list(features = "weight"), "features not among the columns of data: weight"),
  list("pdp-style name", list(grid.resolution = 10), "grid.resolution \\(use grid_resolution\\)"),
  list("target not a class", list(target = "zzz"), "target \"zzz\" is not an output")
)

for (case in bad_inputs) {
  local({
    label <- case[[1]]
    args <- case[[2]]
    pattern <- case[[3]]
    test_that(paste("bad input is refused before any work:", label), {
      skip_if_no_pdpx()
      m <- counting_fit()
      calls$n <- 0
      base <- list(object = m$fit, data = mtcars, features = "wt", pred_fun = m$f)
      base[names(args)] <- args
      msg <- tryCatch(do.call(partial_dependence, base), error = conditionMessage)
      expect_match(msg, pattern)
      expect_match(msg, "^partial_dependence\\(\\): ")  # the function called, named once
      expect_false(grepl("\\(\\): .*partial_dependence\\(\\): ", msg))
      # at most the small probe that learns the outputs (2 rows), never a computation
      expect_lte(calls$n, 2)
    })
  })
}

test_that("a model returning NA gives an R warning saying how many and where", {
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  f <- function(object, newdata) {
    p <- stats::predict(object, newdata)
    p[newdata$wt > 5] <- NA
    p
  }
  expect_warning(pd <- partial_dependence(fit, mtcars, "wt", pred_fun = f, grid_resolution = 8),
                 "not all finite.*grid points of the average")
  expect_true(anyNA(pd$yhat))
  expect_false(all(is.na(pd$yhat)))
})

test_that("a predict function returning the wrong length is reported as the model's fault", {
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  short <- function(object, newdata) stats::predict(object, newdata)[-1]
  msg <- tryCatch(partial_dependence(fit, mtcars, "wt", pred_fun = short), error = conditionMessage)
  expect_match(msg, "predictions for")
  expect_equal(lengths(regmatches(msg, gregexpr("partial_dependence()", msg, fixed = TRUE))), 1)
})

# ---------------------------------------------------------------------------
# Python's errors and warnings reach R in R's words
# ---------------------------------------------------------------------------

# No Python in a message: no exception class, no list or string repr, no True/False/None, no res.x.
expect_r_words <- function(msg) {
  expect_false(grepl("Error:|Exception|Traceback|py_last_error", msg))
  expect_false(grepl("\\['|'\\]|\\bTrue\\b|\\bFalse\\b|\\bNone\\b|\\bres\\.|np\\.float", msg, perl = TRUE))
}

test_that("a class list from Python is an R vector c(...), strings in double quotes", {
  skip_if_no_pdpx()
  rfc <- randomForest::randomForest(Species ~ ., data = iris, ntree = 10)
  msg <- tryCatch(partial_dependence(rfc, iris, "Petal.Width", target = "zzz"), error = conditionMessage)
  expect_identical(msg, paste0("partial_dependence(): target \"zzz\" is not a class of this model; its classes are ",
                               "c(\"setosa\", \"versicolor\", \"virginica\")"))
  expect_r_words(msg)
})

test_that("include_missing's error names TRUE and FALSE, R's way", {
  skip_if_no_pdpx()
  aq <- airquality
  fit <- lm(Ozone ~ Solar.R + Wind, data = aq)
  expect_error(partial_dependence(fit, aq, "Solar.R", include_missing = TRUE, grid_resolution = 5),
               paste0("partial_dependence(): include_missing = TRUE: the model does not accept a missing value ",
                      "of feature \"Solar.R\": its predict returned NA or infinite values. Use ",
                      "include_missing = \"auto\" or FALSE"), fixed = TRUE)
})

test_that("a failing predict is the R error of the model, not Python's RuntimeError", {
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  f <- function(object, newdata) {
    if (any(newdata$wt > 5)) stop("wt too large")
    stats::predict(object, newdata)
  }
  msg <- tryCatch(partial_dependence(fit, mtcars, "wt", pred_fun = f), error = conditionMessage)
  expect_match(msg, "^partial_dependence\\(\\): ")
  expect_match(msg, "wt too large", fixed = TRUE)  # the R error's own message
  # kept as R wrote it: the translation of Python's words leaves the model's own text alone
  g <- function(object, newdata) if (any(newdata$wt > 5)) stop("wt 'too' large: ['a']") else newdata$wt
  expect_match(tryCatch(partial_dependence(fit, mtcars, "wt", pred_fun = g), error = conditionMessage),
               "wt 'too' large: ['a']", fixed = TRUE)
  expect_match(msg, "predict")
  expect_false(grepl("RuntimeError", msg))
  expect_r_words(msg)
})

test_that("an error inside partial() names partial() and its arguments, not partial_dependence()", {
  skip_if_no_pdpx()
  boom <- structure(list(), class = "pdpx_test_boom")
  registerS3method("predict", "pdpx_test_boom", function(object, newdata, ...) {
    if (nrow(newdata) > 40) stop("too many rows for this model")
    newdata$wt * 2
  })
  msg <- tryCatch(partial(boom, pred.var = "wt", train = mtcars, type = "regression"), error = conditionMessage)
  expect_match(msg, "^partial\\(\\): ")
  expect_match(msg, "too many rows for this model", fixed = TRUE)
  expect_match(msg, "predict")
  expect_false(grepl("partial_dependence", msg))
})

test_that("pdpx's warnings from Python speak R: NA, no numpy reprs", {
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  f <- function(object, newdata) {
    p <- stats::predict(object, newdata)
    p[newdata$wt > 5] <- NA
    p
  }
  msg <- NULL
  withCallingHandlers(partial_dependence(fit, mtcars, "wt", pred_fun = f, grid_resolution = 8),
                      warning = function(w) {
                        msg <<- conditionMessage(w)
                        invokeRestart("muffleWarning")
                      })
  expect_match(msg, paste0("^partial_dependence\\(\\): the model's predictions are not all finite, so neither is the ",
                           "partial dependence: 1 of 8 grid points of the average for output \"prediction\" are NA ",
                           "\\(first at wt = 5\\.344"))
  expect_r_words(msg)
})

test_that("Python's words are translated one by one (the table of .r_words)", {
  cases <- list(
    c("RuntimeError: boom", "partial_dependence(): boom"),
    c("the model raised RuntimeError: boom", "partial_dependence(): the model raised the error: boom"),
    c("pdpx.core.errors.PdpxError: x must be one of ['a', 'b']", "partial_dependence(): x must be one of c(\"a\", \"b\")"),
    c("grid of [1, 2.5, -3e-05]", "partial_dependence(): grid of c(1, 2.5, -3e-05)"),
    c("pairs ('wt', 'hp') unknown", "partial_dependence(): pairs c(\"wt\", \"hp\") unknown"),
    c("use include_missing=True, or None", "partial_dependence(): use include_missing = TRUE, or NULL"),
    c("None of the rows; target=None", "partial_dependence(): None of the rows; target = NULL"),
    c("use pdpx.partial_dependence(model, X, ['day']) or pdpx.importance(model, X)",
      "partial_dependence(): use partial_dependence(model, data, c(\"day\")) or pd_importance(model, data)"),
    c("the model's output 'p' is False", "partial_dependence(): the model's output \"p\" is FALSE"),
    c("got 3.5 (a float); got 'x' (a str)", "partial_dependence(): got 3.5 (a number); got \"x\" (a character string)"),
    c("partial_dependence(): X has 3 rows", "partial_dependence(): data has 3 rows"),
    c("call res.plot() or res.to_frame(); see res.notes", "partial_dependence(): call plot(res) or as.data.frame(res); see attr(res, \"pdpx\")$notes"),
    c("at x = np.float64(1.5) it is NaN", "partial_dependence(): at x = 1.5 it is NA"),
    c("ALE (pdpx.ale) stays within; pdpx.importance too", "partial_dependence(): ALE (ale()) stays within; pd_importance() too"),
    c("boom\nRun `reticulate::py_last_error()` for details.", "partial_dependence(): boom"),
    c(paste("not learnt. ALE (pdpx.ale) stays within the data; res.support and res.unsupported show where the grid",
            "has rows, and res.plot() shades what has none (docs/extrapolation.md)."),
      "partial_dependence(): not learnt. ALE (ale()) stays within the data (docs/extrapolation.md).")
  )
  for (case in cases) expect_identical(.r_words(case[1], "partial_dependence"), case[2])
  expect_identical(.r_words("X has 3 rows; features='wt' must be a column, grid_resolution=3", "partial"),
                   "partial(): train has 3 rows; pred.var = \"wt\" must be a column, grid.resolution = 3")
  expect_identical(.r_words("3 features are strongly dependent", "partial"), "partial(): 3 features are strongly dependent")
  # notes (attr(res, "pdpx")$notes) are translated without the function's name
  expect_identical(.r_words("X's rows: ['a']; see res.notes", "ale", prefix = FALSE),
                   "data's rows: c(\"a\"); see attr(res, \"pdpx\")$notes")
})

test_that("R's own argument errors name the function called: partial() and its pdp-style arguments", {
  skip_if_no_pdpx()
  rfc <- randomForest::randomForest(Species ~ ., data = iris, ntree = 10)
  expect_error(partial(rfc, pred.var = "Petal.Width", which.class = "zzz", train = iris),
               paste0("partial(): which.class must be a class position 1..3 or one of \"setosa\", \"versicolor\", ",
                      "\"virginica\"; got chr \"zzz\""), fixed = TRUE)
  expect_error(partial(rfc, pred.var = "Petal.Width", train = iris, grid.resolution = 0),
               "partial(): grid.resolution must be a whole number >= 1; got num 0", fixed = TRUE)
  expect_error(partial_dependence(rfc, iris, "Petal.Width", kind = "avg"),
               "partial_dependence(): kind must be one of \"average\", \"individual\", \"both\"; got chr \"avg\"",
               fixed = TRUE)
})
