# R's Date and POSIXct features: sent to Python as pandas datetime64 (a POSIXct's time zone kept),
# their grid back as Date / POSIXct, and every number equal to the definition (the column set to
# the grid value, the model's own predict, averaged).

set.seed(11)
n <- 60
dated <- data.frame(
  day = as.Date("2021-01-01") + sample(0:364, n, replace = TRUE),
  at = as.POSIXct("2021-03-01 00:00", tz = "America/New_York") + sample(0:(30 * 86400), n),
  x = stats::rnorm(n)
)
dated$y <- 0.02 * as.numeric(dated$day - as.Date("2021-01-01")) + dated$x + stats::rnorm(n, sd = 0.1)
day_fit <- stats::lm(y ~ as.numeric(day) + x, data = dated)

# The definition in R: for each grid value, the column set to it in every row, predict, average.
definition <- function(predict_fun, data, feature, values) {
  vapply(seq_along(values), function(i) {
    d <- data
    d[[feature]] <- rep(values[i], nrow(d))
    mean(predict_fun(d))
  }, 0)
}

test_that("a Date feature gives a grid of Dates and the PD of the definition", {
  skip_if_no_pdpx()
  pd <- partial_dependence(day_fit, dated, "day", grid_resolution = 6)
  expect_s3_class(pd$day, "Date")
  expect_s3_class(pd$x_1, "Date")
  g <- attr(pd, "pdpx")$grid_values$day
  expect_s3_class(g, "Date")
  expect_true(all(g >= min(dated$day) & g <= max(dated$day)))
  expect_false(anyNA(pd$yhat))
  want <- definition(function(d) stats::predict(day_fit, d), dated, "day", pd$day)
  expect_lt(max(abs(pd$yhat - want)), 1e-9)
  # ICE rows too, and the plot draws a date axis
  both <- partial_dependence(day_fit, dated, "day", kind = "both", grid_resolution = 4)
  expect_s3_class(both$day, "Date")
  ice <- both[both$kind == "individual", ]
  d <- dated
  d$day <- ice$day[1]
  expect_lt(max(abs(ice$yhat[ice$day == ice$day[1]][order(ice$row[ice$day == ice$day[1]])] -
                      stats::predict(day_fit, d))), 1e-9)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  p <- autoplot(both)
  b <- ggplot2::ggplot_build(p)
  expect_true(inherits(b$layout$panel_scales_x[[1]], "ScaleContinuousDate"))
})

test_that("custom_values take Dates", {
  skip_if_no_pdpx()
  days <- as.Date(c("2021-02-01", "2021-06-15", "2021-11-30"))
  pd <- partial_dependence(day_fit, dated, "day", custom_values = list(day = days))
  expect_equal(pd$day, days)
  expect_lt(max(abs(pd$yhat - definition(function(d) stats::predict(day_fit, d), dated, "day", days))), 1e-9)
})

test_that("a POSIXct feature keeps its time zone: the grid is POSIXct in that zone, the numbers the definition's", {
  skip_if_no_pdpx()
  # the model reads the hour of the day in New York: a shifted zone would change every number
  hour_model <- structure(list(), class = "pdpx_test_hours")
  hours <- function(d) as.numeric(format(d$at, "%H", tz = "America/New_York")) + d$x
  f <- function(object, newdata) hours(newdata)
  pd <- partial_dependence(hour_model, dated, "at", pred_fun = f, grid_resolution = 7)
  expect_s3_class(pd$at, "POSIXct")
  expect_identical(attr(pd$at, "tzone"), "America/New_York")
  g <- attr(pd, "pdpx")$grid_values$at
  expect_s3_class(g, "POSIXct")
  expect_true(all(g >= min(dated$at) & g <= max(dated$at)))
  want <- definition(hours, dated, "at", pd$at)
  expect_lt(max(abs(pd$yhat - want)), 1e-9)
  # the same instants with the zone set to UTC: the grid comes back in UTC, the model still sees the instants
  utc <- dated
  attr(utc$at, "tzone") <- "UTC"
  pu <- partial_dependence(hour_model, utc, "at", pred_fun = f, grid_resolution = 7)
  expect_identical(attr(pu$at, "tzone"), "UTC")
  expect_lt(max(abs(pu$yhat - definition(hours, utc, "at", pu$at))), 1e-9)
})

test_that("partial() with a Date predictor: pdp's grid of Dates, the definition's numbers", {
  skip_if_no_pdpx()
  pred <- function(d) stats::predict(day_fit, d)
  pd <- partial(day_fit, pred.var = "day", train = dated, grid.resolution = 5)
  expect_s3_class(pd$day, "Date")
  expect_lt(max(abs(pd$yhat - definition(pred, dated, "day", pd$day))), 1e-9)
  # pdp's default grid (up to 51 evenly spaced points: fractions of a day) and its quantiles, as Dates
  pd <- partial(day_fit, pred.var = "day", train = dated)
  expect_equal(nrow(pd), 51)
  expect_equal(pd$day, seq(min(dated$day), max(dated$day), length.out = 51))
  expect_lt(max(abs(pd$yhat - definition(pred, dated, "day", pd$day))), 1e-9)
  pq <- partial(day_fit, pred.var = "day", train = dated, quantiles = TRUE, probs = c(0.25, 0.75))
  expect_equal(as.numeric(pq$day), unname(stats::quantile(as.numeric(dated$day), c(0.25, 0.75))))
  expect_s3_class(pq$day, "Date")
  # a POSIXct predictor, its zone kept; approx = TRUE takes the median time
  at_fit <- stats::lm(y ~ as.numeric(at) + x, data = dated)
  pat <- function(d) stats::predict(at_fit, d)
  pa <- partial(at_fit, pred.var = "at", train = dated, grid.resolution = 13)
  expect_identical(attr(pa$at, "tzone"), "America/New_York")
  expect_lt(max(abs(pa$yhat - definition(pat, dated, "at", pa$at))), 1e-9)
  one <- partial(at_fit, pred.var = "x", train = dated, grid.resolution = 3, approx = TRUE)
  row <- dated[1, ]
  row$at <- stats::median(dated$at)
  row$day <- stats::median(dated$day)
  row$y <- stats::median(dated$y)
  expect_lt(max(abs(one$yhat - definition(pat, row, "x", one$x))), 1e-9)
})
