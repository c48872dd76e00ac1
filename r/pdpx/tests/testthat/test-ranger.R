skip_if_not_installed("ranger")

set.seed(7)
n <- 150
rg_data <- data.frame(x1 = runif(n), x2 = rnorm(n),
                      f = factor(sample(c("p", "q", "r", "s", "t"), n, TRUE)),
                      o = factor(sample(c("lo", "mid", "hi"), n, TRUE), levels = c("lo", "mid", "hi"), ordered = TRUE))
rg_data$y <- rg_data$x1 + (as.integer(rg_data$f) %% 3) * 0.4 + 0.2 * as.integer(rg_data$o) + rnorm(n, sd = 0.3)
rg_data$cls <- factor(ifelse(rg_data$y > 1.1, "high", ifelse(rg_data$y > 0.6, "mid", "low")))

reg_pred <- function(m, d) ranger:::predict.ranger(m, d)$predictions
prob_pred <- function(m, d) ranger:::predict.ranger(m, d)$predictions
vote_pred <- function(m, d) {
  v <- ranger:::predict.ranger(m, d, predict.all = TRUE)$predictions
  lv <- m$forest$levels
  out <- sapply(seq_along(lv), function(k) rowMeans(v == k))
  colnames(out) <- lv
  out
}

test_that("ranger regression: exact equals ranger's predict in every respect.unordered.factors mode", {
  skip_if_no_pdpx()
  for (mode in c("ignore", "order", "partition")) {
    set.seed(1)
    m <- ranger::ranger(y ~ x1 + x2 + f + o, rg_data, num.trees = 15, respect.unordered.factors = mode)
    for (v in list("x1", "f", "o", c("x1", "f"))) {
      pd <- partial_dependence(m, rg_data, v, kind = "both", grid_resolution = 7)
      expect_equal(attr(pd, "pdpx")$method, "exact")
      expect_brute(m, rg_data, pd, predict_fun = reg_pred)
    }
  }
})

test_that("ranger extratrees, probability and classification forests: exact equals predict", {
  skip_if_no_pdpx()
  set.seed(2)
  et <- ranger::ranger(y ~ x1 + x2 + f + o, rg_data, num.trees = 15, splitrule = "extratrees")
  expect_brute(et, rg_data, partial_dependence(et, rg_data, c("f", "x2"), grid_resolution = 5), predict_fun = reg_pred)
  pr <- ranger::ranger(cls ~ x1 + x2 + f + o, rg_data, num.trees = 15, probability = TRUE,
                       respect.unordered.factors = "partition")
  pd <- partial_dependence(pr, rg_data, "x1", kind = "both", target = levels(rg_data$cls), grid_resolution = 6)
  expect_equal(attr(pd, "pdpx")$method, "exact")
  expect_setequal(unique(pd$output), levels(rg_data$cls))
  expect_brute(pr, rg_data, pd, predict_fun = prob_pred)
  cl <- ranger::ranger(cls ~ x1 + x2 + f + o, rg_data, num.trees = 15, respect.unordered.factors = "order")
  pd <- partial_dependence(cl, rg_data, "f", kind = "both", target = levels(rg_data$cls))
  expect_equal(attr(pd, "pdpx")$method, "exact")
  expect_brute(cl, rg_data, pd, predict_fun = vote_pred)
})

test_that("ranger: a forest without write.forest and missing values are clear errors", {
  skip_if_no_pdpx()
  m <- ranger::ranger(y ~ x1 + f, rg_data, num.trees = 3, write.forest = FALSE)
  expect_error(partial_dependence(m, rg_data, "x1"), "write.forest")
  m <- ranger::ranger(y ~ x1 + f, rg_data, num.trees = 3)
  bad <- rg_data
  bad$x1[3] <- NA
  expect_error(partial_dependence(m, bad, "f"), "missing value")
})
