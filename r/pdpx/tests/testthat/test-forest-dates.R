# randomForest and ranger fitted on a data.frame with a Date and a POSIXct column: R reads them as their days and
# seconds (data.matrix()); every pdpx function takes them, the grid and results are dates, and the numbers are
# R's own predict's (the column set to each grid date, predict(), averaged), whichever method ran.

skip_if_not_installed("randomForest")
skip_if_not_installed("ranger")

set.seed(7)
n_dated <- 120
forest_data <- data.frame(
  day = as.Date("2022-01-01") + sample(0:500, n_dated, replace = TRUE),
  at = as.POSIXct("2022-03-01 00:00", tz = "Europe/Paris") + sample(0:(60 * 86400), n_dated),
  x = stats::runif(n_dated)
)
forest_data$y <- as.numeric(forest_data$day - as.Date("2022-01-01")) / 100 * (1 + forest_data$x) +
  as.numeric(format(forest_data$at, "%H", tz = "Europe/Paris")) / 10 + stats::rnorm(n_dated, sd = 0.1)
forest_X <- forest_data[, c("day", "at", "x")]
forest_rf <- randomForest::randomForest(y ~ day + at + x, data = forest_data, ntree = 20)
forest_rg <- ranger::ranger(y ~ day + at + x, data = forest_data, num.trees = 20, seed = 1)
forest_pred <- list(
  randomForest = function(d) stats::predict(forest_rf, d),
  ranger = function(d) stats::predict(forest_rg, d)$predictions
)
forest_models <- list(randomForest = forest_rf, ranger = forest_rg)

# R's definition: every row's column set to each value, R's predict, averaged
forest_definition <- function(pred, data, feature, values) {
  vapply(seq_along(values), function(i) {
    d <- data
    d[[feature]] <- rep(values[i], nrow(d))
    mean(pred(d))
  }, 0)
}

test_that("partial_dependence of a Date and a POSIXct of R forests: dates, and R's predict's numbers", {
  skip_if_no_pdpx()
  for (lib in names(forest_models)) {
    for (method in c("exact", "brute")) {
      pd <- partial_dependence(forest_models[[lib]], forest_X, "day", grid_resolution = 6, method = method)
      expect_s3_class(pd$day, "Date")
      expect_identical(attr(pd, "pdpx")$method, method)
      want <- forest_definition(forest_pred[[lib]], forest_X, "day", pd$day)
      expect_lt(max(abs(pd$yhat - want)), 1e-9)
      pa <- partial_dependence(forest_models[[lib]], forest_X, "at", grid_resolution = 5, method = method)
      expect_s3_class(pa$at, "POSIXct")
      expect_identical(attr(pa$at, "tzone"), "Europe/Paris")
      expect_lt(max(abs(pa$yhat - forest_definition(forest_pred[[lib]], forest_X, "at", pa$at))), 1e-9)
    }
    # the whole curve: one whole day per step of the trees, each the definition's number
    steps <- partial_dependence(forest_models[[lib]], forest_X, "day", grid = "thresholds")
    expect_s3_class(steps$day, "Date")
    expect_equal(as.numeric(steps$day), round(as.numeric(steps$day)))
    expect_lt(max(abs(steps$yhat - forest_definition(forest_pred[[lib]], forest_X, "day", steps$day))), 1e-9)
  }
})

test_that("the measures and regions take an R forest's dates, and regions split by them", {
  skip_if_no_pdpx()
  for (lib in names(forest_models)) {
    m <- forest_models[[lib]]
    imp <- pd_importance(m, forest_X)
    expect_setequal(imp$feature, c("day", "at", "x"))
    h <- h_statistic(m, forest_X)
    expect_equal(nrow(h$pairwise), 3)
    het <- heterogeneity(m, forest_X)
    expect_setequal(het$table$feature, c("day", "at", "x"))
    reg <- regions(m, forest_X, "x")
    expect_false(any(grepl("date columns", reg$notes)))
    on_day <- reg$splits[reg$splits$feature == "day", ]
    expect_gt(nrow(on_day), 0)
    # the first split on day names a whole day; the rows of the regions under its left side are the rows on or
    # before that day
    left <- on_day$left[1]
    expect_match(left, "^day <= \\d{4}-\\d{2}-\\d{2}$")
    cut <- as.Date(sub("^day <= ", "", left))
    under <- grepl(left, reg$regions$rule, fixed = TRUE) & !duplicated(reg$regions$region)
    if (on_day$depth[1] == 0) expect_equal(sum(reg$regions$n_rows[under]), sum(forest_X$day <= cut))
  }
})

# R's first-order ALE written out on dates: edges at the k / K quantiles of the observed dates (the smallest date
# whose ECDF reaches k / K), each row moved to its bin's two edges, local effects averaged, accumulated, centered
ale_definition <- function(pred, data, feature, K) {
  x <- data[[feature]]
  xs <- sort(x)
  z <- unique(xs[pmax(ceiling(seq(0, K) * length(xs) / K), 1)])
  effects <- mass <- numeric(0)
  for (k in seq_len(length(z) - 1)) {
    rows <- if (k == 1) x >= z[1] & x <= z[2] else x > z[k] & x <= z[k + 1]
    lo <- hi <- data[rows, , drop = FALSE]
    lo[[feature]] <- rep(z[k], nrow(lo))
    hi[[feature]] <- rep(z[k + 1], nrow(hi))
    effects <- c(effects, mean(pred(hi) - pred(lo)))
    mass <- c(mass, sum(rows))
  }
  acc <- c(0, cumsum(effects))
  list(edges = z, ale = acc - sum(mass * (utils::head(acc, -1) + acc[-1]) / 2) / sum(mass))
}

test_that("ale() of a Date and a POSIXct of R forests: edges that are observed dates, R's predict's numbers", {
  skip_if_no_pdpx()
  for (lib in names(forest_models)) {
    for (feature in c("day", "at")) {
      got <- ale(forest_models[[lib]], forest_X, feature, grid_resolution = 5)
      ref <- ale_definition(forest_pred[[lib]], forest_X, feature, 5)
      expect_s3_class(got[[feature]], class(forest_X[[feature]])[1])
      expect_equal(as.numeric(got[[feature]]), as.numeric(ref$edges))
      expect_equal(got$yhat, ref$ale, tolerance = 1e-10)
    }
  }
})
