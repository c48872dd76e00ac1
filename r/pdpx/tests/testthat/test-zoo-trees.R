# partial() on rpart, party, ipred and randomForest models against pdp's definition computed here;
# training data found as pdp finds it (party's data slot), and `cats` that only shapes the grid.

set.seed(22)
n <- 100
sim <- data.frame(x1 = runif(n), x2 = runif(n), x3 = runif(n))
eta <- 3 * sim$x1 - 2 * sim$x2 + sim$x3 - 0.8
sim$yb <- factor(ifelse(runif(n) < plogis(eta), "yes", "no"), levels = c("no", "yes"))
sim$yk <- factor(cut(eta + rnorm(n, sd = 0.5), c(-Inf, -0.3, 0.7, Inf), labels = c("lo", "mid", "hi")))
sim$y <- 2 * sim$x1 + sin(3 * sim$x2) + rnorm(n, sd = 0.2)
X <- sim[c("x1", "x2", "x3")]

test_that("rpart: regression, and classification through type = \"prob\"; factor or text predictor alike", {
  skip_if_not_installed("rpart")
  skip_if_no_pdpx()
  reg <- rpart::rpart(y ~ x1 + x2 + x3, data = sim)
  expect_partial(partial(reg, pred.var = "x1", grid.resolution = 9), sim, function(d) predict(reg, d))
  cls <- rpart::rpart(yk ~ x1 + x2 + x3, data = sim)
  pr <- function(d) predict(cls, d, type = "prob")
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 9, which.class = "mid"), sim,
                 function(d) logit_col(pr(d), 2))
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 9, prob = TRUE, which.class = 3), sim,
                 function(d) pr(d)[, 3])
  # pdp's cats test: a factor and the same column as text give the same curve
  fac <- transform(sim, g = cut(x3, 2, labels = c("a", "b")))
  chr <- transform(fac, g = as.character(g))
  t1 <- rpart::rpart(y ~ x1 + x2 + g, data = fac, control = list(cp = 0))
  t2 <- rpart::rpart(y ~ x1 + x2 + g, data = chr, control = list(cp = 0))
  p1 <- partial(t1, pred.var = "g")
  p2 <- partial(t2, pred.var = "g")
  expect_equal(levels(p1$g), c("a", "b"))
  expect_equal(p2$g, c("a", "b"))
  expect_equal(p1$yhat, p2$yhat)
  expect_partial(p1, fac, function(d) predict(t1, d))
})

test_that("party::ctree and cforest (S4): training data from the data slot, probabilities from the list", {
  skip_if_not_installed("party")
  skip_if_no_pdpx()
  reg <- party::ctree(y ~ x1 + x2 + x3, data = sim)
  pd <- partial(reg, pred.var = "x1", grid.resolution = 7)  # no train: party's data slot, as pdp reads it
  expect_partial(pd, sim, function(d) predict(reg, newdata = d)[, 1])
  cls <- party::ctree(yk ~ x1 + x2 + x3, data = sim)
  pr <- function(m, d) do.call(rbind, predict(m, newdata = d, type = "prob"))
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 7, prob = TRUE, which.class = "hi"), sim,
                 function(d) pr(cls, d)[, 3])
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 5, ice = TRUE, center = TRUE), sim,
                 function(d) logit_col(pr(cls, d), 1))
  set.seed(5)
  fr <- party::cforest(yb ~ x1 + x2 + x3, data = sim, controls = party::cforest_unbiased(ntree = 20, mtry = 2))
  expect_partial(partial(fr, pred.var = "x2", grid.resolution = 4, which.class = "yes"), sim,
                 function(d) logit_col(pr(fr, d), 2))
  fr_reg <- party::cforest(y ~ x1 + x2 + x3, data = sim, controls = party::cforest_unbiased(ntree = 20, mtry = 2))
  expect_partial(partial(fr_reg, pred.var = "x2", grid.resolution = 4), sim,
                 function(d) predict(fr_reg, newdata = d)[, 1])
})

test_that("ipred::bagging: classbagg through type = \"prob\", regbagg through predict", {
  skip_if_not_installed("ipred")
  skip_if_no_pdpx()
  set.seed(6)
  cls <- ipred::bagging(yk ~ x1 + x2 + x3, data = sim, nbagg = 10)
  set.seed(6)
  reg <- ipred::bagging(y ~ x1 + x2 + x3, data = sim, nbagg = 10)
  pr <- function(d) predict(cls, d, type = "prob")
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 6, prob = TRUE, which.class = "lo"), sim,
                 function(d) pr(d)[, 1])
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 6, which.class = 2), sim,
                 function(d) logit_col(pr(d), 2))
  expect_partial(partial(reg, pred.var = "x1", grid.resolution = 6), sim, function(d) predict(reg, d))
})

test_that("randomForest fitted on a matrix: cats makes the grid the column's values, the column stays numeric", {
  skip_if_not_installed("randomForest")
  skip_if_no_pdpx()
  Xm <- data.matrix(transform(X, g = as.numeric(x3 > 0.5)))
  set.seed(7)
  rf <- randomForest::randomForest(x = Xm, y = sim$y, ntree = 30)
  pd <- partial(rf, pred.var = "g", train = Xm, cats = "g")
  expect_equal(pd$g, c(0, 1))  # the sorted distinct values, numbers
  expect_partial(pd, as.data.frame(Xm), function(d) predict(rf, as.matrix(d)))
  # without train: the x of the call, as pdp finds it
  pd2 <- partial(rf, pred.var = "x1", grid.resolution = 5)
  expect_partial(pd2, as.data.frame(Xm), function(d) predict(rf, as.matrix(d)))
  # cats on a data.frame: the grid is the distinct values, not an even sequence
  d <- transform(sim, k = round(x1 * 3))
  fit <- lm(y ~ k + x2, data = d)
  pk <- partial(fit, pred.var = "k", cats = "k")
  expect_equal(pk$k, sort(unique(d$k)))
  expect_partial(pk, d, function(dd) predict(fit, dd))
})
