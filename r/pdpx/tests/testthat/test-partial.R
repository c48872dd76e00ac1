# pdpx::partial() against pdp's documented computation written plainly: a loop over the grid
# points, setting the predictors in `train`, predicting, transforming per row, averaging.
skip_if_not_installed("randomForest")
skip_if_not_installed("ranger")
skip_if_not_installed("gbm")

set.seed(5)
rf_reg <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 40)
rf_cls <- randomForest::randomForest(Species ~ ., data = iris, ntree = 40)

test_that("default grid is pdp's: min(distinct values, 51) evenly spaced points; factors by level", {
  skip_if_no_pdpx()
  pd <- partial(rf_reg, pred.var = "wt", train = mtcars)
  expect_s3_class(pd, c("pdpx_partial", "partial", "data.frame"), exact = TRUE)
  expect_equal(names(pd), c("wt", "yhat"))
  expect_equal(pd$wt, seq(min(mtcars$wt), max(mtcars$wt), length.out = length(unique(mtcars$wt))))
  expect_lt(max(abs(pd$yhat - pdp_loop(pd, mtcars, "wt", function(d) predict(rf_reg, d)))), 1e-9)
  pd <- partial(rf_reg, pred.var = "wt", train = mtcars, quantiles = TRUE, probs = c(0.1, 0.5, 0.9))
  expect_equal(pd$wt, unname(quantile(mtcars$wt, c(0.1, 0.5, 0.9))))
  expect_error(partial(rf_reg, pred.var = "wt", train = mtcars, quantiles = TRUE, grid.resolution = 5), "not both")
})

test_that("regression: 2-way, ICE (yhat.id, centered), inv.link match the loop", {
  skip_if_no_pdpx()
  pd <- partial(rf_reg, pred.var = c("wt", "hp"), train = mtcars, grid.resolution = 5)
  expect_equal(nrow(pd), 25)
  expect_equal(pd$wt[1:2], c(min(mtcars$wt), min(mtcars$wt) + diff(range(mtcars$wt)) / 4))  # first varies fastest
  expect_lt(max(abs(pd$yhat - pdp_loop(pd, mtcars, c("wt", "hp"), function(d) predict(rf_reg, d)))), 1e-9)
  ice <- partial(rf_reg, pred.var = "hp", train = mtcars, grid.resolution = 4, ice = TRUE)
  expect_s3_class(ice, c("pdpx_ice", "ice", "data.frame"), exact = TRUE)  # pdpx's, then pdp 0.8.2's
  expect_equal(names(ice), c("hp", "yhat", "yhat.id"))
  expect_equal(ice$yhat.id, rep(seq_len(nrow(mtcars)), each = 4))
  grid <- unique(ice["hp"])
  ref <- matrix(pdp_loop(grid, mtcars, "hp", function(d) predict(rf_reg, d), ice = TRUE), ncol = 4)
  expect_lt(max(abs(ice$yhat - as.vector(t(ref)))), 1e-9)
  cice <- partial(rf_reg, pred.var = "hp", train = mtcars, grid.resolution = 4, ice = TRUE, center = TRUE)
  expect_s3_class(cice, c("pdpx_cice", "cice", "data.frame"), exact = TRUE)
  expect_equal(names(cice), c("hp", "yhat", "yhat.id"))
  expect_lt(max(abs(cice$yhat - as.vector(t(ref - ref[, 1])))), 1e-9)
  pl <- partial(rf_reg, pred.var = "hp", train = mtcars, grid.resolution = 4, inv.link = log)
  expect_lt(max(abs(pl$yhat - pdp_loop(pl, mtcars, "hp", function(d) log(predict(rf_reg, d))))), 1e-9)
})

test_that("classification: centered logit of which.class (default) and probabilities, as pdp", {
  skip_if_no_pdpx()
  for (k in list(1L, 3L, "versicolor")) {
    pd <- partial(rf_cls, pred.var = "Petal.Width", train = iris, grid.resolution = 6, which.class = k)
    kk <- if (is.character(k)) match(k, rf_cls$classes) else k
    ref <- pdp_loop(pd, iris, "Petal.Width", function(d) logit_col(predict(rf_cls, d, type = "prob"), kk))
    expect_lt(max(abs(pd$yhat - ref)), 1e-9)
  }
  pd <- partial(rf_cls, pred.var = "Petal.Width", train = iris, grid.resolution = 6, prob = TRUE, which.class = 2)
  ref <- pdp_loop(pd, iris, "Petal.Width", function(d) predict(rf_cls, d, type = "prob")[, 2])
  expect_lt(max(abs(pd$yhat - ref)), 1e-9)
  expect_error(partial(rf_cls, pred.var = "Petal.Width", train = iris, which.class = 4), "which.class")
})

test_that("ranger probability forest and gbm (bernoulli, poisson + inv.link, recursive = plot.gbm)", {
  skip_if_no_pdpx()
  set.seed(9)
  rg <- ranger::ranger(Species ~ ., data = iris, num.trees = 30, probability = TRUE)
  pd <- partial(rg, pred.var = "Sepal.Length", train = iris, grid.resolution = 5)
  ref <- pdp_loop(pd, iris, "Sepal.Length", function(d) logit_col(predict(rg, d)$predictions, 1))
  expect_lt(max(abs(pd$yhat - ref)), 1e-9)

  d <- mtcars
  d$am01 <- d$am
  set.seed(4)
  gb <- gbm::gbm(am01 ~ wt + hp + qsec, data = d, distribution = "bernoulli", n.trees = 60,
                 n.minobsinnode = 3, bag.fraction = 0.9)
  pd <- partial(gb, pred.var = "wt", train = d, n.trees = 50, recursive = FALSE, grid.resolution = 7)
  p1 <- function(x) { p <- gbm:::predict.gbm(gb, x, n.trees = 50, type = "response"); cbind(p, 1 - p) }
  expect_lt(max(abs(pd$yhat - pdp_loop(pd, d, "wt", function(x) logit_col(p1(x), 1)))), 1e-9)
  pp <- partial(gb, pred.var = "wt", train = d, n.trees = 50, recursive = FALSE, prob = TRUE, grid.resolution = 7)
  expect_lt(max(abs(pp$yhat - pdp_loop(pp, d, "wt", function(x) p1(x)[, 1]))), 1e-9)

  set.seed(4)
  gp <- gbm::gbm(carb ~ wt + hp + qsec, data = d, distribution = "poisson", n.trees = 60, n.minobsinnode = 3)
  pd <- partial(gp, pred.var = "hp", train = d, n.trees = 60, recursive = FALSE, inv.link = exp, grid.resolution = 6)
  ref <- pdp_loop(pd, d, "hp", function(x) exp(gbm:::predict.gbm(gp, x, n.trees = 60)))
  expect_lt(max(abs(pd$yhat - ref)), 1e-9)

  rec <- gbm::plot.gbm(gp, i.var = c("wt", "hp"), n.trees = 60, return.grid = TRUE, continuous.resolution = 6)
  pd <- partial(gp, pred.var = c("wt", "hp"), train = d, n.trees = 60, pred.grid = rec[c("wt", "hp")])
  ref <- rec[do.call(order, unname(as.list(rec[c("wt", "hp")]))), ]
  expect_lt(max(abs(pd$yhat - ref$y)), 1e-9)
})

test_that("chull, approx, pred.fun, and arguments pdpx cannot honour", {
  skip_if_no_pdpx()
  pd <- partial(rf_reg, pred.var = c("wt", "hp"), train = mtcars, grid.resolution = 8, chull = TRUE)
  expect_lt(nrow(pd), 64)
  expect_lt(max(abs(pd$yhat - pdp_loop(pd, mtcars, c("wt", "hp"), function(d) predict(rf_reg, d)))), 1e-9)
  ap <- partial(rf_reg, pred.var = "wt", train = mtcars, grid.resolution = 5, approx = TRUE)
  one <- as.data.frame(lapply(mtcars, median))
  expect_lt(max(abs(ap$yhat - pdp_loop(ap, one, "wt", function(d) predict(rf_reg, d)))), 1e-9)
  pf <- partial(rf_reg, pred.var = "wt", train = mtcars, grid.resolution = 5,
                pred.fun = function(object, newdata) stats::median(predict(object, newdata)))
  expect_lt(max(abs(pf$yhat - pdp_loop(pf, mtcars, "wt", function(d) stats::median(predict(rf_reg, d))))), 1e-12)
  expect_error(partial(rf_reg, pred.var = "wt", train = mtcars, paropts = list(.packages = "x")), "paropts")
  expect_error(partial(rf_reg, pred.var = "wt", train = mtcars, nodes = TRUE), "cannot honour")
  expect_error(partial(rf_reg, pred.var = c("wt", "hp"), train = mtcars, ice = TRUE), "single predictor")
})

test_that("print is compact; autoplot draws PD, ICE and 2-way", {
  skip_if_no_pdpx()
  ice <- partial(rf_reg, pred.var = "wt", train = mtcars, ice = TRUE)
  out <- capture.output(print(ice))
  expect_lt(length(out), 15)
  expect_match(out[1], "ICE")
  expect_s3_class(autoplot(ice, rug = TRUE), "ggplot")
  expect_s3_class(autoplot(partial(rf_reg, pred.var = c("wt", "hp"), train = mtcars, grid.resolution = 4),
                           contour = TRUE), "ggplot")
  pd <- partial_dependence(rf_reg, mtcars, "wt", ice = TRUE)
  out <- capture.output(print(pd))
  expect_lt(length(out), 15)
  expect_true("wt" %in% names(pd))
  s <- capture.output(print(summary(pd)))
  expect_match(s[2], "exact")
})

test_that("two-class forests: centered logits from one class's curves; votes of 0 and 1 read as pdp reads them", {
  skip_if_no_pdpx()
  mt2 <- transform(mtcars, am = factor(am, labels = c("automatic", "manual")))
  set.seed(3)
  rf2 <- randomForest::randomForest(am ~ wt + hp + qsec, data = mt2, ntree = 25)
  probs <- function(d) predict(rf2, d, type = "prob")
  expect_true(any(probs(mt2) == 0))  # certain rows: log(eps) in the logit
  for (k in list(1L, 2L, "manual")) {
    kk <- if (is.character(k)) match(k, rf2$classes) else k
    expect_partial(partial(rf2, pred.var = "wt", train = mt2, grid.resolution = 8, which.class = k), mt2,
                   function(d) logit_col(probs(d), kk))
  }
  expect_partial(partial(rf2, pred.var = "hp", train = mt2, grid.resolution = 4, ice = TRUE, which.class = 2), mt2,
                 function(d) logit_col(probs(d), 2))
  set.seed(4)
  rg2 <- ranger::ranger(am ~ wt + hp + qsec, data = mt2, num.trees = 25, probability = TRUE)
  expect_partial(partial(rg2, pred.var = "wt", train = mt2, grid.resolution = 8, which.class = "manual"), mt2,
                 function(d) logit_col(predict(rg2, d)$predictions, 2))
})
