# Issue 19 from R: missing-value point, by groups, a list of models, the bootstrap interval.

test_that("include_missing: the missing point is predict() with the feature set to NA", {
  skip_if_no_pdpx()
  d <- transform(airquality, Month = factor(Month))
  f <- function(object, newdata) ifelse(is.na(newdata$Solar.R), 40, 0.1 * newdata$Solar.R) + newdata$Temp
  pd <- partial_dependence(NULL, d, "Solar.R", pred_fun = f, grid_resolution = 5, kind = "both")
  last <- pd[pd$kind == "average", ][sum(pd$kind == "average"), ]
  expect_true(is.na(last$x_1))
  expect_equal(last$label_1, "missing")
  expect_equal(last$yhat, mean(f(NULL, transform(d, Solar.R = NA_real_))), tolerance = 1e-12)
  off <- partial_dependence(NULL, d, "Solar.R", pred_fun = f, grid_resolution = 5, include_missing = FALSE)
  expect_false(any(off$label_1 == "missing"))
  expect_error(partial_dependence(NULL, d, "Solar.R", pred_fun = f, include_missing = "yes"), "include_missing")
})

test_that("by: each group's curve is the PD on its rows, on the grid of all rows", {
  skip_if_no_pdpx()
  d <- transform(mtcars, cyl = factor(cyl))
  fit <- lm(mpg ~ wt * cyl + hp, data = d)
  pd <- partial_dependence(fit, d, "wt", by = "cyl", custom_values = list(wt = c(2, 3, 4)))
  expect_true("cyl" %in% names(pd))
  for (g in levels(d$cyl)) {
    rows <- d[d$cyl == g, ]
    got <- pd[pd$cyl == g, "yhat"]
    want <- sapply(c(2, 3, 4), function(v) mean(predict(fit, transform(rows, wt = v))))
    expect_equal(got, want, tolerance = 1e-10)
  }
})

test_that("a named list of models gives a model column; interval adds lower and upper", {
  skip_if_no_pdpx()
  a <- lm(mpg ~ wt + hp, data = mtcars)
  b <- lm(mpg ~ poly(wt, 2) + hp, data = mtcars)
  pd <- partial_dependence(list(linear = a, quadratic = b), mtcars[, c("mpg", "wt", "hp")], "wt",
                           custom_values = list(wt = c(2, 3, 4)))
  expect_equal(sort(unique(as.character(pd$model))), c("linear", "quadratic"))
  for (nm in c("linear", "quadratic")) {
    m <- list(linear = a, quadratic = b)[[nm]]
    want <- sapply(c(2, 3, 4), function(v) mean(predict(m, transform(mtcars, wt = v))))
    expect_equal(pd[pd$model == nm, "yhat"], want, tolerance = 1e-10)
  }
  pi <- partial_dependence(a, mtcars, "wt", custom_values = list(wt = c(2, 3, 4)), interval = 0.9, n_boot = 50)
  expect_true(all(pi$lower <= pi$yhat + 1e-12 & pi$yhat <= pi$upper + 1e-12))
  expect_true(all(pi$upper > pi$lower))
  expect_error(partial_dependence(a, mtcars, "wt", interval = 2), "interval")
})
