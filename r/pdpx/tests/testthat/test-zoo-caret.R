# caret::train objects: pdp's definition through predict.train (type = "prob" for classifiers);
# a train object wrapping randomForest, ranger or gbm on the data's own columns is read as trees
# (caret's predict is then never called: the tests break it to show that), otherwise brute force.

suppressWarnings(skip_if_not_installed("caret"))  # loading it may warn about the machine's time zone tool
skip_if_not_installed("MASS")
skip_if_not_installed("randomForest")
skip_if_not_installed("ranger")
skip_if_not_installed("gbm")

set.seed(23)
n <- 100
sim <- data.frame(x1 = runif(n), x2 = runif(n), x3 = runif(n))
eta <- 3 * sim$x1 - 2 * sim$x2 + sim$x3 - 0.8
sim$yb <- factor(ifelse(runif(n) < plogis(eta), "yes", "no"), levels = c("no", "yes"))
sim$yk <- factor(cut(eta + rnorm(n, sd = 0.5), c(-Inf, -0.3, 0.7, Inf), labels = c("lo", "mid", "hi")))
sim$y <- 2 * sim$x1 + sin(3 * sim$x2) + rnorm(n, sd = 0.2)
one_fit <- caret::trainControl(method = "none", classProbs = TRUE)
reg_fit <- caret::trainControl(method = "none")

# the same train object with caret's prediction functions replaced by errors
without_caret_predict <- function(tr) {
  tr$modelInfo$predict <- function(...) stop("caret's predict was called")
  tr$modelInfo$prob <- function(...) stop("caret's predict was called")
  tr
}
prob <- function(tr) function(d) as.matrix(predict(tr, d, type = "prob"))

test_that("train: regression and classification by brute force through predict.train", {
  skip_if_no_pdpx()
  lmt <- caret::train(y ~ x1 + x2 + x3, data = sim, method = "lm", trControl = reg_fit)
  pd <- partial(lmt, pred.var = "x2", grid.resolution = 6)  # trainingData, as pdp finds it
  expect_partial(pd, sim[c("x1", "x2", "x3")], function(d) predict(lmt, d))
  lda <- caret::train(yk ~ x1 + x2 + x3, data = sim, method = "lda", trControl = one_fit)
  expect_partial(partial(lda, pred.var = "x1", grid.resolution = 6, prob = TRUE, which.class = "hi"), sim,
                 function(d) prob(lda)(d)[, "hi"])
  expect_partial(partial(lda, pred.var = "x1", grid.resolution = 6, which.class = 2), sim,
                 function(d) logit_col(prob(lda)(d), 2))
})

test_that("train wrapping randomForest or ranger reads the forest: predict.train's numbers, caret never called", {
  skip_if_no_pdpx()
  set.seed(8)
  rf <- caret::train(yk ~ x1 + x2 + x3, data = sim, method = "rf", trControl = one_fit,
                     tuneGrid = data.frame(mtry = 2), ntree = 30)
  pd <- partial(without_caret_predict(rf), pred.var = "x1", grid.resolution = 7, prob = TRUE, which.class = "mid")
  expect_partial(pd, sim, function(d) prob(rf)(d)[, "mid"])
  pl <- partial(without_caret_predict(rf), pred.var = "x1", grid.resolution = 7, which.class = 3)
  expect_partial(pl, sim, function(d) logit_col(prob(rf)(d), 3))
  expect_equal(attr(partial_dependence(without_caret_predict(rf), sim, "x1", grid_resolution = 4), "pdpx")$method,
               "exact")
  set.seed(9)
  rg <- caret::train(yk ~ x1 + x2 + x3, data = sim, method = "ranger", trControl = one_fit, num.trees = 30,
                     tuneGrid = data.frame(mtry = 2, splitrule = "gini", min.node.size = 1))
  expect_partial(partial(without_caret_predict(rg), pred.var = "x2", grid.resolution = 7, which.class = "lo"), sim,
                 function(d) logit_col(prob(rg)(d), 1))
  rgr <- caret::train(y ~ x1 + x2 + x3, data = sim, method = "ranger", trControl = reg_fit, num.trees = 30,
                      tuneGrid = data.frame(mtry = 2, splitrule = "variance", min.node.size = 5))
  expect_partial(partial(without_caret_predict(rgr), pred.var = "x2", grid.resolution = 7), sim,
                 function(d) predict(rgr, d))
  # without class probabilities caret's predict(type = "prob") fails, and pdp with it
  set.seed(9)
  rg_votes <- caret::train(yk ~ x1 + x2 + x3, data = sim, method = "ranger", trControl = reg_fit, num.trees = 10,
                           tuneGrid = data.frame(mtry = 2, splitrule = "gini", min.node.size = 1))
  expect_error(partial(rg_votes, pred.var = "x2"), "classProbs = TRUE")
  # the x/y interface keeps a factor column: still the forest's own columns
  fx <- transform(sim, g = cut(x3, 3, labels = c("a", "b", "c")))
  set.seed(10)
  rfx <- caret::train(x = fx[c("x1", "x2", "g")], y = fx$y, method = "rf", trControl = reg_fit,
                      tuneGrid = data.frame(mtry = 2), ntree = 30)
  expect_partial(partial(without_caret_predict(rfx), pred.var = "g"), fx[c("x1", "x2", "g")],
                 function(d) predict(rfx, d))
})

test_that("train wrapping gbm: bernoulli with caret's class order (its first class is the event), gaussian", {
  skip_if_no_pdpx()
  grid <- data.frame(n.trees = 30, interaction.depth = 2, shrinkage = 0.1, n.minobsinnode = 5)
  set.seed(11)
  gb <- caret::train(yb ~ x1 + x2 + x3, data = sim, method = "gbm", trControl = one_fit, tuneGrid = grid,
                     verbose = FALSE)
  broken <- without_caret_predict(gb)
  expect_partial(partial(broken, pred.var = "x1", grid.resolution = 7), sim, function(d) logit_col(prob(gb)(d), 1))
  expect_partial(partial(broken, pred.var = "x1", grid.resolution = 7, prob = TRUE, which.class = "yes"), sim,
                 function(d) prob(gb)(d)[, "yes"])
  expect_partial(partial(broken, pred.var = "x1", grid.resolution = 4, ice = TRUE, prob = TRUE), sim,
                 function(d) prob(gb)(d)[, 1])
  set.seed(12)
  gr <- caret::train(y ~ x1 + x2 + x3, data = sim, method = "gbm", trControl = reg_fit, tuneGrid = grid,
                     verbose = FALSE)
  expect_partial(partial(without_caret_predict(gr), pred.var = "x3", grid.resolution = 7), sim,
                 function(d) predict(gr, d))
})

test_that("train with preProcess or dummy variables: predict.train by brute force (caret's transforms apply)", {
  skip_if_no_pdpx()
  set.seed(13)
  pp <- caret::train(y ~ x1 + x2 + x3, data = sim, method = "rf", trControl = reg_fit, ntree = 20,
                     tuneGrid = data.frame(mtry = 2), preProcess = c("center", "scale"))
  expect_error(partial(without_caret_predict(pp), pred.var = "x1", grid.resolution = 3), "caret's predict was called")
  expect_partial(partial(pp, pred.var = "x1", grid.resolution = 6), sim, function(d) predict(pp, d))
  fx <- transform(sim, g = cut(x3, 3, labels = c("a", "b", "c")))
  set.seed(14)
  dm <- caret::train(y ~ x1 + x2 + g, data = fx, method = "rf", trControl = reg_fit, ntree = 20,
                     tuneGrid = data.frame(mtry = 2))  # the formula makes dummy columns gb, gc
  expect_error(partial(without_caret_predict(dm), pred.var = "g"), "caret's predict was called")
  expect_partial(partial(dm, pred.var = "g"), fx[c("x1", "x2", "g")], function(d) predict(dm, d))
})
