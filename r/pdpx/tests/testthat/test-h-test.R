# h_test(): Friedman & Popescu's null distribution of H, refits in R, against what is computed here by hand.

h_test_data <- function(interaction, n = 150, seed = 1) {
  set.seed(seed)
  d <- data.frame(a = runif(n, -1, 1), b = runif(n, -1, 1), c = runif(n, -1, 1))
  d$y <- (if (interaction) d$a + d$b + 2 * d$a * d$b else d$a + d$b^2) + rnorm(n, sd = 0.2)
  d
}

test_that("h_test() separates a real pair from an additive one", {
  skip_if_no_pdpx()
  d <- h_test_data(TRUE)
  real <- h_test(lm(y ~ a * b + c, data = d), d, pairs = list(c("a", "b")), n_null = 19)
  d <- h_test_data(FALSE)
  none <- h_test(lm(y ~ a * b + c, data = d), d, pairs = list(c("a", "b")), n_null = 19)
  expect_s3_class(real, "pdpx_h_test")
  expect_equal(real$p_value[real$feature_1 == "a" & real$feature_2 %in% "b"], 1 / 20)
  expect_gt(none$p_value[none$feature_1 == "a" & none$feature_2 %in% "b"], 0.2)
})

test_that("h_test()'s rows are in the order asked, H is h_statistic()'s and the p-values come from the null", {
  skip_if_no_pdpx()
  d <- h_test_data(TRUE, n = 80)
  fit <- lm(y ~ a * b + c, data = d)
  r <- h_test(fit, d, pairs = list(c("c", "a"), c("a", "b")), features = c("b", "c"), n_null = 5,
              adjust = "fdr", residuals = "in_sample")
  expect_equal(r$feature_1, c("b", "c", "c", "a"))
  expect_equal(r$feature_2, c(NA, NA, "a", "b"))
  h <- h_statistic(fit, d, c("a", "b", "c"), pairs = list(c("c", "a"), c("a", "b")))
  ab <- h$pairwise$h[h$pairwise$feature_1 %in% c("a", "b") & h$pairwise$feature_2 %in% c("a", "b")]
  expect_equal(r$h[4], ab, tolerance = 1e-12)
  expect_equal(r$h[1], h$overall$h[h$overall$feature == "b"], tolerance = 1e-12)
  null <- attr(r, "null")
  expect_equal(dim(null), c(5L, 4L))
  p <- (1 + colSums(sweep(null, 2, r$h - 1e-12, ">="))) / 6
  expect_equal(r$p_value, p)
  expect_equal(r$p_adjusted[3:4], p.adjust(p[3:4], "BH"))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_s3_class(autoplot(r), "ggplot")
})

test_that("h_test()'s additive part of a linear model without interactions is its own prediction", {
  skip_if_no_pdpx()
  d <- h_test_data(FALSE, n = 60)
  fit <- lm(y ~ a + b + c, data = d)
  add <- .additive_part(fit, d, predict(fit, d), c("a", "b", "c"), NULL)
  expect_equal(add, unname(predict(fit, d)), tolerance = 1e-10)
})

test_that("h_test() refuses a budget it would exceed and bad input", {
  skip_if_no_pdpx()
  d <- h_test_data(TRUE, n = 60)
  fit <- lm(y ~ a * b + c, data = d)
  expect_error(h_test(fit, d, pairs = list(c("a", "b")), n_null = 1e6, max_seconds = 1), "over max_seconds")
  expect_error(h_test(fit, d, pairs = list(c("a", "b")), adjust = "bonferroni"), "adjust")
  expect_error(h_test(fit, d, pairs = list(c("a", "b")), residuals = "oob"), "residuals")
  expect_error(h_test(fit, d, pairs = list("a")), "pairs")
  expect_error(h_test(fit, d, pairs = list(c("a", "b")), y = 1:3), "one value per row")
})
