# pd_importance(), h_statistic() and ale() from R, against the definitions computed here in R.

test_that("ale() of a linear model rises by the coefficient times each bin's width", {
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  a <- ale(fit, mtcars, "wt", grid_resolution = 5)
  expect_s3_class(a, "pdpx_pd")
  avg <- a[a$kind == "average", ]
  expect_equal(diff(avg$yhat), unname(coef(fit)["wt"]) * diff(avg$x_1), tolerance = 1e-10)
  expect_equal(attr(a, "pdpx")$method, "ale")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_s3_class(autoplot(a), "ggplot")
  expect_error(ale(fit, mtcars, c("wt", "hp", "qsec")), "one or two column names")
})

test_that("pd_importance() is the sd of each PD curve over its grid", {
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt + hp + qsec, data = mtcars)
  imp <- pd_importance(fit, mtcars, c("wt", "hp", "qsec"), grid_resolution = 10)
  expect_setequal(imp$feature, c("wt", "hp", "qsec"))
  expect_true(all(diff(imp$importance) <= 0))  # sorted, strongest first
  for (f in imp$feature) {
    pd <- partial_dependence(fit, mtcars, f, grid_resolution = 10, include_missing = FALSE)
    expect_equal(imp$importance[imp$feature == f], sd(pd$yhat), tolerance = 1e-10)
  }
  expect_error(pd_importance(fit, mtcars, kind = "pdp"), "kind")
})

test_that("without features, a formula model's predictors are measured, not the response column of data", {
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt + hp, data = mtcars)
  imp <- pd_importance(fit, mtcars, grid_resolution = 10)
  expect_setequal(imp$feature, c("wt", "hp"))
  h <- h_statistic(fit, mtcars)
  expect_setequal(c(h$pairwise$feature_1, h$pairwise$feature_2), c("wt", "hp"))
})

test_that("h_statistic() equals Friedman and Popescu's definition computed by brute force in R", {
  skip_if_no_pdpx()
  d <- mtcars[, c("mpg", "wt", "hp", "qsec")]
  fit <- lm(mpg ~ wt * hp + qsec, data = d)
  X <- d[, c("wt", "hp", "qsec")]
  n <- nrow(X)
  f <- function(newdata) unname(predict(fit, newdata))
  pd_at_rows <- function(cols) {  # PD_S(x_i,S) for every row i, centered over the rows
    v <- vapply(seq_len(n), function(i) {
      nd <- X
      for (cc in cols) nd[[cc]] <- X[[cc]][i]
      mean(f(nd))
    }, 0)
    v - mean(v)
  }
  pj <- pd_at_rows("wt"); pk <- pd_at_rows("hp"); pjk <- pd_at_rows(c("wt", "hp"))
  h2_pair <- sum((pjk - pj - pk)^2) / sum(pjk^2)
  fc <- f(X) - mean(f(X))
  p_rest <- pd_at_rows(c("hp", "qsec"))
  h2_wt <- sum((fc - pj - p_rest)^2) / sum(fc^2)

  h <- h_statistic(fit, X, c("wt", "hp", "qsec"))
  expect_s3_class(h, "pdpx_h")
  pair <- h$pairwise[(h$pairwise$feature_1 == "wt" & h$pairwise$feature_2 == "hp") |
                       (h$pairwise$feature_1 == "hp" & h$pairwise$feature_2 == "wt"), ]
  expect_equal(nrow(pair), 1)
  expect_equal(pair$h2, h2_pair, tolerance = 1e-9)
  expect_equal(pair$h, sqrt(h2_pair), tolerance = 1e-9)
  expect_equal(h$overall$h2[h$overall$feature == "wt"], h2_wt, tolerance = 1e-9)
  # qsec enters additively: no interaction with anything
  expect_equal(h$pairwise$h[h$pairwise$feature_1 == "qsec" | h$pairwise$feature_2 == "qsec"], c(0, 0),
               tolerance = 1e-9)
  expect_output(print(h), "Pairwise")
  expect_error(h_statistic(fit, X, pairs = list("wt")), "pairs")
})

test_that("pd_importance() and h_statistic() read randomForest models as trees", {
  skip_if_no_pdpx()
  skip_if_not_installed("randomForest")
  set.seed(2)
  rf <- randomForest::randomForest(mpg ~ wt + hp + qsec, data = mtcars, ntree = 30)
  X <- mtcars[, c("wt", "hp", "qsec")]
  imp <- pd_importance(rf, X, grid_resolution = 8)
  for (f in imp$feature) {
    grid <- partial_dependence(rf, X, f, grid_resolution = 8, include_missing = FALSE)
    want <- vapply(grid$x_1, function(v) { nd <- X; nd[[f]] <- v; mean(predict(rf, nd)) }, 0)
    expect_equal(imp$importance[imp$feature == f], sd(want), tolerance = 1e-9)
  }
  # H on the forest's trees equals the definition by brute force with randomForest's predict
  n <- nrow(X)
  pd_at_rows <- function(cols) {
    v <- vapply(seq_len(n), function(i) {
      nd <- X
      for (cc in cols) nd[[cc]] <- X[[cc]][i]
      mean(predict(rf, nd))
    }, 0)
    v - mean(v)
  }
  pj <- pd_at_rows("wt"); pk <- pd_at_rows("hp"); pjk <- pd_at_rows(c("wt", "hp"))
  h <- h_statistic(rf, X, c("wt", "hp"))
  expect_equal(h$pairwise$h2, sum((pjk - pj - pk)^2) / sum(pjk^2), tolerance = 1e-9)
})

test_that("pd_importance() of a randomForest from pattern counts equals the sd of brute-force curves", {
  skip_if_no_pdpx()
  skip_if_not_installed("randomForest")
  set.seed(1)
  rf <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 30, maxnodes = 12)
  feats <- c("wt", "hp", "disp", "qsec", "drat")
  w <- seq(0.5, 2, length.out = nrow(mtcars))
  brute_sd <- function(f) {  # the grid pdpx chose; set the column, predict, weighted average, in R
    pd <- partial_dependence(rf, mtcars, f, grid_resolution = 8, include_missing = FALSE, sample_weight = w)
    avg <- vapply(pd$x_1, function(v) {
      d <- mtcars
      d[[f]] <- v
      sum(w * stats::predict(rf, d)) / sum(w)
    }, 0)
    sd(avg)
  }
  for (engine in c("counts", "rows", "auto")) {  # every feature's curve from counts gathered once, or row walks
    imp <- pd_importance(rf, mtcars, feats, grid_resolution = 8, sample_weight = w,
                         method_options = list(engine = engine))
    expect_setequal(imp$feature, feats)
    for (f in feats) expect_equal(imp$importance[imp$feature == f], brute_sd(f), tolerance = 1e-9)
  }
  expect_error(pd_importance(rf, mtcars, feats, kind = "ice", method_options = list(engine = "counts")),
               "ICE")
})
