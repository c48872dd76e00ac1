skip_if_not_installed("gbm")

set.seed(11)
n <- 250
gb_data <- data.frame(x1 = runif(n), x2 = rnorm(n),
                      f = factor(sample(c("a", "b", "c", "d", "e"), n, TRUE)),
                      o = factor(sample(c("lo", "mid", "hi"), n, TRUE), levels = c("lo", "mid", "hi"), ordered = TRUE))
gb_data$x2[sample(n, 25)] <- NA
gb_data$y <- gb_data$x1 + (as.integer(gb_data$f) %% 3) * 0.4 + ifelse(is.na(gb_data$x2), 0.8, gb_data$x2 / 3) +
  rnorm(n, sd = 0.3)
gb_data$b <- as.integer(gb_data$y > 1)
gb_data$cnt <- rpois(n, exp(gb_data$y / 2))
gb_train <- gb_data[gb_data$f != "e", ]  # level "e" is unseen in training: predict() reads it as missing

fit_gbm <- function(dist) {
  resp <- switch(dist, bernoulli = "b", poisson = "cnt", "y")
  set.seed(3)
  gbm::gbm(stats::as.formula(paste(resp, "~ x1 + x2 + f + o")), data = gb_train, distribution = dist,
           n.trees = 40, interaction.depth = 3, n.minobsinnode = 5)
}

test_that("gbm: exact equals predict(n.trees, type = 'response') for each distribution, NA and unseen levels", {
  skip_if_no_pdpx()
  for (dist in c("gaussian", "laplace", "bernoulli", "poisson")) {
    m <- fit_gbm(dist)
    resp <- function(mm, d) gbm:::predict.gbm(mm, d, n.trees = 25, type = "response")
    for (v in list("x1", "x2", "f", "o", c("x1", "f"))) {
      pd <- partial_dependence(m, gb_data, v, kind = "both", grid_resolution = 6, n_trees = 25,
                                include_missing = FALSE)  # the missing point: test-views.R
      expect_equal(attr(pd, "pdpx")$method, "exact")
      expect_brute(m, gb_data, pd, predict_fun = resp)
    }
    link <- function(mm, d) gbm:::predict.gbm(mm, d, n.trees = 40, type = "link")
    pd <- partial_dependence(m, gb_data, "x2", response = "raw", grid_resolution = 5, n_trees = 40,
                            include_missing = FALSE)
    expect_brute(m, gb_data, pd, predict_fun = link)
  }
})

test_that("gbm: n.trees is checked", {
  skip_if_no_pdpx()
  m <- fit_gbm("gaussian")
  expect_error(partial_dependence(m, gb_data, "x1", n_trees = 41), "exceeds")
  expect_error(partial_dependence(m, gb_data, "x1", n_trees = 2.5), "n.trees")
})
