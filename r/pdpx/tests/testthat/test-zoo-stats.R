# partial() on stats, MASS and nnet models, each against pdp's definition computed here: set the
# predictor in train, take the model's own prediction or class probabilities (as pdp obtains
# them for that class), transform (centered logit of which.class, or its probability), average.

set.seed(20)
n <- 120
sim <- data.frame(x1 = runif(n), x2 = runif(n), x3 = runif(n))
eta <- 3 * sim$x1 - 2 * sim$x2 + sim$x3 - 0.8
sim$yb <- factor(ifelse(runif(n) < plogis(eta), "yes", "no"), levels = c("no", "yes"))
sim$yk <- factor(cut(eta + rnorm(n, sd = 0.5), c(-Inf, -0.3, 0.7, Inf), labels = c("lo", "mid", "hi")))
sim$y <- 2 * sim$x1 + sin(3 * sim$x2) + rnorm(n, sd = 0.2)
sim$count <- rpois(n, exp(0.3 + sim$x1 + sim$x3))
train_x <- sim[c("x1", "x2", "x3")]

test_that("lm and glm (gaussian, poisson): the prediction on the link scale, inv.link per row, as pdp", {
  skip_if_no_pdpx()
  fit <- lm(y ~ sin(3 * x2) + I(x1^2) + x3, data = sim)
  pd <- partial(fit, pred.var = "x2")
  expect_equal(names(pd), c("x2", "yhat"))
  expect_equal(nrow(pd), 51)  # min(distinct values, 51)
  expect_partial(pd, sim, function(d) predict(fit, d))
  expect_partial(partial(fit, pred.var = "x2", ice = TRUE, grid.resolution = 5), sim, function(d) predict(fit, d))
  cice <- partial(fit, pred.var = "x2", ice = TRUE, center = TRUE, grid.resolution = 5)
  expect_partial(cice, sim, function(d) predict(fit, d))
  expect_partial(without_support_warning(partial(fit, pred.var = c("x1", "x2"), grid.resolution = 4)), sim,
                 function(d) predict(fit, d))

  gp <- glm(count ~ x1 + x3, data = sim, family = poisson)
  expect_partial(partial(gp, pred.var = "x1", grid.resolution = 6), sim, function(d) predict(gp, d))  # log scale
  expect_partial(partial(gp, pred.var = "x1", grid.resolution = 6, inv.link = exp), sim,
                 function(d) exp(predict(gp, d)))
  gg <- glm(y ~ x1 + x2, data = sim)
  expect_partial(partial(gg, pred.var = "x2", grid.resolution = 6), sim, function(d) predict(gg, d))
})

test_that("binomial glm: cbind(p, 1 - p) of type = \"response\", the event first, by position or name", {
  skip_if_no_pdpx()
  fit <- glm(yb ~ x1 + x2 + x3, data = sim, family = binomial)
  p <- function(d) { pr <- predict(fit, d, type = "response"); cbind(pr, 1 - pr) }
  expect_partial(partial(fit, pred.var = "x1", grid.resolution = 7), sim, function(d) logit_col(p(d), 1))
  expect_partial(partial(fit, pred.var = "x1", grid.resolution = 7, prob = TRUE), sim, function(d) p(d)[, 1])
  expect_partial(partial(fit, pred.var = "x1", grid.resolution = 7, prob = TRUE, which.class = 2), sim,
                 function(d) p(d)[, 2])
  # names: the event ("yes", the second level) is column 1
  expect_partial(partial(fit, pred.var = "x1", grid.resolution = 7, prob = TRUE, which.class = "no"), sim,
                 function(d) p(d)[, 2])
  expect_warning(cice <- partial(fit, pred.var = "x1", grid.resolution = 7, prob = TRUE, ice = TRUE, center = TRUE),
                 "outside \\[0, 1\\]")
  expect_s3_class(cice, c("pdpx_cice", "cice", "data.frame"), exact = TRUE)
  expect_partial(cice, sim, function(d) p(d)[, 1], shift = 0.5)
  expect_error(partial(fit, pred.var = "x1", which.class = 3), "which.class must be a class position 1..2")
})

test_that("MASS::lda and qda: the posterior probabilities, never the class codes", {
  skip_if_not_installed("MASS")
  skip_if_no_pdpx()
  fit <- MASS::lda(yk ~ x1 + x2 + x3, data = sim)
  post <- function(d) predict(fit, d)$posterior
  pd <- partial(fit, pred.var = "x1", grid.resolution = 8, prob = TRUE, which.class = "hi")
  expect_true(all(pd$yhat >= 0 & pd$yhat <= 1))
  expect_partial(pd, sim, function(d) post(d)[, "hi"])
  expect_partial(partial(fit, pred.var = "x1", grid.resolution = 8), sim, function(d) logit_col(post(d), 1))
  expect_partial(partial(fit, pred.var = "x2", ice = TRUE, grid.resolution = 4, which.class = 2), sim,
                 function(d) logit_col(post(d), 2))
  q <- MASS::qda(yb ~ x1 + x2 + x3, data = sim)
  qpost <- function(d) predict(q, d)$posterior
  expect_partial(partial(q, pred.var = "x3", grid.resolution = 8, prob = TRUE), sim, function(d) qpost(d)[, 1])
  expect_partial(partial(q, pred.var = "x3", grid.resolution = 8, which.class = "yes"), sim,
                 function(d) logit_col(qpost(d), 2))
  expect_partial(without_support_warning(partial(q, pred.var = c("x1", "x3"), grid.resolution = 3)), sim,
                 function(d) logit_col(qpost(d), 1))
})

test_that("nnet (regression, binary, 3 classes) and multinom: type = \"raw\" / \"probs\", one column made two", {
  skip_if_not_installed("nnet")
  skip_if_no_pdpx()
  set.seed(2)
  reg <- nnet::nnet(y ~ x1 + x2 + x3, data = sim, size = 3, linout = TRUE, trace = FALSE)
  expect_partial(partial(reg, pred.var = "x2", grid.resolution = 6), sim, function(d) predict(reg, d)[, 1])
  bin <- nnet::nnet(yb ~ x1 + x2 + x3, data = sim, size = 3, trace = FALSE)
  pb <- function(d) { p <- predict(bin, d, type = "raw")[, 1]; cbind(p, 1 - p) }  # P("yes"), P("no")
  expect_partial(partial(bin, pred.var = "x1", grid.resolution = 6), sim, function(d) logit_col(pb(d), 1))
  expect_partial(partial(bin, pred.var = "x1", grid.resolution = 6, prob = TRUE, which.class = "no"), sim,
                 function(d) pb(d)[, 2])
  three <- nnet::nnet(yk ~ x1 + x2 + x3, data = sim, size = 3, trace = FALSE)
  expect_partial(partial(three, pred.var = "x1", grid.resolution = 6, prob = TRUE, which.class = "mid"), sim,
                 function(d) predict(three, d, type = "raw")[, "mid"])
  mb <- nnet::multinom(yb ~ x1 + x2 + x3, data = sim, trace = FALSE)
  pm <- function(d) { p <- predict(mb, d, type = "probs"); cbind(p, 1 - p) }
  expect_partial(partial(mb, pred.var = "x2", grid.resolution = 6), sim, function(d) logit_col(pm(d), 1))
  expect_partial(partial(mb, pred.var = "x2", grid.resolution = 6, prob = TRUE), sim, function(d) pm(d)[, 1])
  m3 <- nnet::multinom(yk ~ x1 + x2 + x3, data = sim, trace = FALSE)
  expect_partial(partial(m3, pred.var = "x2", grid.resolution = 6, which.class = 3), sim,
                 function(d) logit_col(predict(m3, d, type = "probs"), 3))
  expect_partial(partial(m3, pred.var = "x2", ice = TRUE, grid.resolution = 3, prob = TRUE, which.class = "lo"), sim,
                 function(d) predict(m3, d, type = "probs")[, "lo"])
})
