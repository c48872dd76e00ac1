# heterogeneity(), regions() and explained_variance() from R, against their definitions computed here in R with the
# model's own predict, on the known-answer model y = 3 x1 1[x2 > 0] - 3 x1 1[x2 <= 0] + x3 (an lm that fits it).

known <- function(n = 200, seed = 1) {
  set.seed(seed)
  d <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1), x3 = runif(n, -1, 1))
  fit <- lm(y ~ x1 * I(x2 > 0) + x3, data = transform(d, y = 3 * x1 * ifelse(x2 > 0, 1, -1) + x3))
  list(d = d, fit = fit, f = function(newdata) unname(predict(fit, newdata)))
}

# Every row's ICE curve of `feature` at `grid` (rows x grid), by setting the column and predicting.
ice_in_r <- function(f, d, feature, grid) {
  vapply(grid, function(z) {
    nd <- d
    nd[[feature]] <- z
    f(nd)
  }, numeric(nrow(d)))
}

# Heterogeneity by its definition: each row's curve centered on its own mean, the population variance across
# rows at each grid point, averaged over the grid points.
heterogeneity_in_r <- function(ice) {
  centered <- ice - rowMeans(ice)
  mean(apply(centered, 2, function(v) mean((v - mean(v))^2)))
}

test_that("heterogeneity() is the variance of the centered ICE curves, by definition", {
  skip_if_no_pdpx()
  k <- known()
  h <- heterogeneity(k$fit, k$d, c("x1", "x2", "x3"), grid_resolution = 10)
  expect_s3_class(h, "pdpx_heterogeneity")
  expect_setequal(h$table$feature, c("x1", "x2", "x3"))
  expect_true(all(diff(h$table$heterogeneity) <= 0))  # largest first
  for (f in h$table$feature) {
    grid <- h$curves$x[h$curves$feature == f]
    ice <- ice_in_r(k$f, k$d, f, grid)
    expect_equal(h$table$heterogeneity[h$table$feature == f], heterogeneity_in_r(ice), tolerance = 1e-9)
    expect_equal(h$curves$average[h$curves$feature == f], colMeans(ice), tolerance = 1e-9)
  }
  expect_lt(h$table$heterogeneity[h$table$feature == "x3"], 1e-12)  # additive: its curves agree
  expect_setequal(h$table$feature[1:2], c("x1", "x2"))  # the two features whose curves flip with the other
  expect_equal(h$n_rows, nrow(k$d))
  expect_equal(as.data.frame(h), h$table)
  expect_output(print(h), "heterogeneity of the ICE curves")
})

test_that("regions() splits x1's rows on x2 near 0; each region's PD and heterogeneity by definition", {
  skip_if_no_pdpx()
  k <- known()
  r <- regions(k$fit, k$d, "x1", grid_resolution = 10)
  expect_s3_class(r, "pdpx_regions")
  expect_equal(r$splits$feature[1], "x2")
  expect_lt(abs(r$splits$threshold[1]), 0.25)  # within a grid step of 0
  expect_true(all(grepl("x2", r$regions$rule)))
  expect_gt(r$removed, 0.95)
  expect_length(r$region, nrow(k$d))
  expect_setequal(unique(r$region), r$regions$region)
  expect_equal(as.integer(table(r$region)[as.character(r$regions$region)]), r$regions$n_rows)
  left <- k$d$x2 <= r$splits$threshold[1]
  expect_equal(r$region == r$regions$region[1], left)  # the first region holds the rows left of the split
  grid <- unique(r$curves$x)
  ice <- ice_in_r(k$f, k$d, "x1", grid)
  for (g in r$regions$region) {
    rows <- r$region == g
    expect_equal(r$curves$yhat[r$curves$region == g], colMeans(ice[rows, , drop = FALSE]), tolerance = 1e-9)
    expect_equal(r$regions$heterogeneity[r$regions$region == g], heterogeneity_in_r(ice[rows, , drop = FALSE]),
                 tolerance = 1e-9)
  }
  expect_output(print(r), "regions of x1")
  expect_error(regions(k$fit, k$d, character(0)), "column names of data")
  expect_error(regions(k$fit, k$d, "x1", min_gain = 1), "min_gain")
})

test_that("regions() of several features holds each feature's regions, as a call on that feature alone", {
  skip_if_no_pdpx()
  k <- known()
  s <- regions(k$fit, k$d, c("x1", "x3"), grid_resolution = 10)
  expect_s3_class(s, "pdpx_regions_set")
  expect_equal(names(s), c("x1", "x3"))
  for (f in names(s)) {
    one <- regions(k$fit, k$d, f, grid_resolution = 10)
    expect_s3_class(s[[f]], "pdpx_regions")
    expect_equal(s[[f]]$regions, one$regions)
    expect_equal(s[[f]]$region, one$region)
  }
  expect_equal(nrow(s$x3$regions), 1)  # x3 adds alone: its curves agree
  expect_output(print(s), "x1: 2 region\\(s\\)")
  expect_equal(unique(as.data.frame(s)$feature), c("x1", "x3"))
  every <- regions(k$fit, k$d, NULL, grid_resolution = 10)
  expect_equal(names(every), c("x1", "x2", "x3"))  # the lm's predictors
})

test_that("explained_variance()'s first step is the R^2 of the sum of the centered 1-way PD curves", {
  skip_if_no_pdpx()
  k <- known(n = 120)
  ev <- explained_variance(k$fit, k$d, c("x1", "x2", "x3"), pairs = 1L, region_features = 0L, threeway = 0L)
  expect_s3_class(ev, "pdpx_explained")
  pd_at_rows <- function(cols) {  # PD_S at every row's own values, centered over the rows
    v <- vapply(seq_len(nrow(k$d)), function(i) {
      nd <- k$d
      for (cc in cols) nd[[cc]] <- k$d[[cc]][i]
      mean(k$f(nd))
    }, 0)
    v - mean(v)
  }
  one <- lapply(c("x1", "x2", "x3"), pd_at_rows)
  fc <- k$f(k$d) - mean(k$f(k$d))
  additive <- Reduce(`+`, one)
  expect_equal(ev$ledger$r2[1], 1 - sum((fc - additive)^2) / sum(fc^2), tolerance = 1e-8)
  pair <- pd_at_rows(c("x1", "x2")) - one[[1]] - one[[2]]
  expect_equal(ev$ledger$r2[2], 1 - sum((fc - additive - pair)^2) / sum(fc^2), tolerance = 1e-8)
  expect_gt(ev$ledger$r2[2], 0.999)  # the pair x1 x x2 is the whole model
  expect_equal(nrow(ev$threeway), 0)
  expect_output(print(ev), "explained variance")
})

test_that("autoplot() and plot() draw each result", {
  skip_if_no_pdpx()
  k <- known(n = 100)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  h <- heterogeneity(k$fit, k$d, grid_resolution = 8)
  expect_s3_class(autoplot(h), "ggplot")
  expect_s3_class(autoplot(h, which = "curves"), "ggplot")
  expect_error(autoplot(h, which = "lines"), "which")
  expect_s3_class(plot(regions(k$fit, k$d, "x1", grid_resolution = 8)), "ggplot")
  expect_s3_class(plot(explained_variance(k$fit, k$d, threeway = 0L)), "ggplot")
})

test_that("regions() of a formula model never splits by its response or by columns it does not use", {
  skip_if_no_pdpx()
  fit <- stats::lm(mpg ~ wt * hp, data = mtcars)
  reg <- regions(fit, mtcars, "wt", min_gain = 0)
  expect_gt(nrow(reg$splits), 0)
  expect_true(all(reg$splits$feature == "hp"))  # not mpg (the response), not cyl, disp, ... (unused)
  # with a pred_fun (which may read any column) only the response is left out
  with_fun <- regions(fit, mtcars, "wt", min_gain = 0, pred_fun = function(object, newdata) {
    stats::predict(object, newdata) + 0 * newdata$qsec
  })
  expect_false("mpg" %in% with_fun$splits$feature)
  het <- heterogeneity(fit, mtcars)
  expect_setequal(het$table$feature, c("wt", "hp"))
})

test_that("regions' rules and pdpx's messages are in R's words: %in% c(...), Date, na.omit(data)", {
  skip_if_no_pdpx()
  set.seed(3)
  d <- data.frame(x = stats::runif(300), shop = factor(sample(c("mall", "web", "street"), 300, TRUE)))
  d$y <- d$x * ifelse(d$shop == "mall", 3, -1) + stats::rnorm(300, sd = 0.01)
  fit <- stats::lm(y ~ x * shop, data = d)
  reg <- regions(fit, d, "x")
  expect_true(any(grepl("^shop %in% c\\(\"", reg$regions$rule)), info = paste(reg$regions$rule, collapse = " | "))
  expect_false(any(grepl("[{}]", c(reg$regions$rule, reg$splits$left, reg$splits$right, reg$curves$rule))))
  words <- pdpx:::.r_words(paste("column 'day' holds datetime64[us] values, 'at' datetime64[us, Europe/Paris];",
                                 "drop them first (e.g. X.dropna()); rows where shop in {'mall', 'web'}"),
                           api = "regions")
  expect_false(grepl("datetime64|dropna|[{}]", words))
  expect_match(words, "holds Date values", fixed = TRUE)
  expect_match(words, "POSIXct", fixed = TRUE)
  expect_match(words, "na.omit(data)", fixed = TRUE)
  expect_match(words, "shop %in% c(\"mall\", \"web\")", fixed = TRUE)
})

test_that("autoplot(ale(...)) labels its y axis as Python's figure does", {
  skip_if_no_pdpx()
  fit <- stats::lm(mpg ~ wt * hp, data = mtcars)
  a <- ale(fit, mtcars, "wt")
  expect_identical(ggplot2::ggplot_build(autoplot(a))$plot$labels$y, "accumulated local effect (prediction)")
  pd <- partial_dependence(fit, mtcars, "wt", grid_resolution = 5)
  expect_identical(ggplot2::ggplot_build(autoplot(pd))$plot$labels$y, attr(pd, "pdpx")$response_label)
})
