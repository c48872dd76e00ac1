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
  list("unknown method", list(method = "fast"), "unknown method 'fast'"),
  list("grid_resolution too small", list(grid_resolution = 1), "grid_resolution must be a whole number >= 2"),
  list("grid_resolution fractional", list(grid_resolution = 2.5), "grid_resolution must be a whole number"),
  list("grid_resolution text", list(grid_resolution = "10"), "grid_resolution must be a whole number"),
  list("percentiles reversed", list(percentiles = c(0.95, 0.05)), "percentiles must be two numbers in \\[0, 1\\]"),
  list("percentiles as percents", list(percentiles = c(5, 95)), "percentiles must be two numbers in \\[0, 1\\]"),
  list("n_jobs zero", list(n_jobs = 0), "n_jobs must be a nonzero whole number"),
  list("n_jobs text", list(n_jobs = "2"), "n_jobs must be a nonzero whole number"),
  list("memory_budget infinite", list(memory_budget = Inf), "memory_budget"),
  list("memory_budget nonsense", list(memory_budget = "lots"), "memory_budget 'lots' not understood"),
  list("custom_values unnamed", list(custom_values = list(c(1, 2))), "custom_values must be a named list"),
  list("sample_weight length", list(sample_weight = c(1, 2)), "sample_weight must be a numeric vector with one"),
  list("negative weights", list(sample_weight = c(-1, rep(1, 31))), "sample_weight has 1 negative"),
  list("categorical_features numbers", list(categorical_features = 3), "categorical_features must be a character"),
  list("unknown feature", list(features = "weight"), "features not among the columns of data: weight"),
  list("pdp-style name", list(grid.resolution = 10), "grid.resolution \\(use grid_resolution\\)"),
  list("target not a class", list(target = "zzz"), "target 'zzz' is not an output")
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
      expect_error(do.call(partial_dependence, base), pattern)
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
  expect_error(partial_dependence(fit, mtcars, "wt", pred_fun = short), "predict")
})
