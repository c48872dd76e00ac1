# partial() on e1071, kernlab, earth and mda models against pdp's definition computed here.

set.seed(21)
n <- 100
sim <- data.frame(x1 = runif(n), x2 = runif(n), x3 = runif(n))
eta <- 3 * sim$x1 - 2 * sim$x2 + sim$x3 - 0.8
sim$yb <- factor(ifelse(runif(n) < plogis(eta), "yes", "no"), levels = c("no", "yes"))
sim$yk <- factor(cut(eta + rnorm(n, sd = 0.5), c(-Inf, -0.3, 0.7, Inf), labels = c("lo", "mid", "hi")))
sim$y <- 2 * sim$x1 + sin(3 * sim$x2) + rnorm(n, sd = 0.2)
X <- sim[c("x1", "x2", "x3")]

test_that("e1071::svm: regression (formula and x/y), classification through its probabilities", {
  skip_if_not_installed("e1071")
  skip_if_no_pdpx()
  reg <- e1071::svm(y ~ x1 + x2 + x3, data = sim)
  expect_partial(partial(reg, pred.var = "x2", grid.resolution = 6), sim, function(d) predict(reg, d))
  xy <- e1071::svm(x = X, y = sim$y)  # the training data is found from the call's x
  expect_partial(partial(xy, pred.var = "x2", grid.resolution = 6), X, function(d) predict(xy, d))
  set.seed(3)
  cls <- e1071::svm(yk ~ x1 + x2 + x3, data = sim, probability = TRUE)
  pr <- function(d) attr(predict(cls, d, probability = TRUE), "probabilities")  # e1071's column order
  k <- match("hi", colnames(pr(sim[1:2, ])))
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 6, prob = TRUE, which.class = "hi"), sim,
                 function(d) pr(d)[, "hi"])
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 6, which.class = k), sim,
                 function(d) logit_col(pr(d), k))
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 4, ice = TRUE), sim, function(d) logit_col(pr(d), 1))
  plain <- e1071::svm(yb ~ x1 + x2 + x3, data = sim)
  expect_error(partial(plain, pred.var = "x1"), "probability = TRUE")
  nb <- e1071::naiveBayes(yk ~ x1 + x2 + x3, data = sim)
  expect_partial(partial(nb, pred.var = "x3", grid.resolution = 6, train = sim, prob = TRUE, which.class = 2), sim,
                 function(d) predict(nb, d, type = "raw")[, 2])
})

test_that("kernlab::ksvm (an S4 model): its own predict generic; probabilities need prob.model", {
  skip_if_not_installed("kernlab")
  skip_if_no_pdpx()
  set.seed(4)
  reg <- kernlab::ksvm(y ~ x1 + x2 + x3, data = sim)
  expect_error(partial(reg, pred.var = "x2"), "pass it as train")  # S4: not looked up, as in pdp
  expect_partial(partial(reg, pred.var = "x2", grid.resolution = 6, train = sim), sim,
                 function(d) kernlab::predict(reg, d)[, 1])
  cls <- kernlab::ksvm(yb ~ x1 + x2 + x3, data = sim, prob.model = TRUE)
  pr <- function(d) kernlab::predict(cls, d, type = "probabilities")
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 6, train = sim), sim, function(d) logit_col(pr(d), 1))
  expect_partial(partial(cls, pred.var = "x1", grid.resolution = 6, train = sim, prob = TRUE, which.class = "yes"),
                 sim, function(d) pr(d)[, "yes"])
  plain <- kernlab::ksvm(yb ~ x1 + x2 + x3, data = sim)
  expect_error(partial(plain, pred.var = "x1", train = sim), "prob.model = TRUE")
  # partial_dependence() reaches the S4 predict too
  pd <- partial_dependence(reg, sim, "x2", grid_resolution = 4)
  expect_brute(reg, sim, pd, predict_fun = function(m, d) kernlab::predict(m, d))
})

test_that("earth: regression, and a binomial glm on the probability scale (never the link scale)", {
  skip_if_not_installed("earth")
  skip_if_no_pdpx()
  reg <- earth::earth(y ~ x1 + x2 + x3, data = sim)
  expect_partial(partial(reg, pred.var = "x2", grid.resolution = 8), sim, function(d) predict(reg, d)[, 1])
  bin <- earth::earth(yb ~ x1 + x2 + x3, data = sim, glm = list(family = binomial))
  p <- function(d) { pr <- predict(bin, d, type = "response")[, 1]; cbind(pr, 1 - pr) }  # P("yes") first
  pd <- partial(bin, pred.var = "x1", grid.resolution = 8, prob = TRUE)
  expect_true(all(pd$yhat >= 0 & pd$yhat <= 1))
  expect_partial(pd, sim, function(d) p(d)[, 1])
  expect_partial(partial(bin, pred.var = "x1", grid.resolution = 8, which.class = "no"), sim,
                 function(d) logit_col(p(d), 2))
})

test_that("mda::fda posterior probabilities; mda::mars on a matrix train (predict sees a matrix)", {
  skip_if_not_installed("mda")
  skip_if_no_pdpx()
  f <- mda::fda(yk ~ x1 + x2 + x3, data = sim)
  post <- function(d) predict(f, d, type = "posterior")
  expect_partial(partial(f, pred.var = "x2", grid.resolution = 6, prob = TRUE, which.class = "mid"), sim,
                 function(d) post(d)[, "mid"])
  expect_partial(partial(f, pred.var = "x2", grid.resolution = 6, which.class = 3), sim,
                 function(d) logit_col(post(d), 3))
  Xm <- as.matrix(X)
  m <- mda::mars(Xm, sim$y)
  seen <- new.env()
  pd <- partial(m, pred.var = "x1", grid.resolution = 6, train = Xm)
  expect_equal(class(pd$x1), "numeric")
  expect_partial(pd, X, function(d) predict(m, data.matrix(d))[, 1])
  # a pred.fun receives a matrix too, as in pdp
  pf <- partial(m, pred.var = "x1", grid.resolution = 3, train = Xm,
                pred.fun = function(object, newdata) { seen$cls <- class(newdata); mean(predict(object, newdata)) })
  expect_true("matrix" %in% seen$cls)
})
