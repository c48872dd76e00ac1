# Never averaging a wrong quantity: predictions that are not numbers on the intended scale are
# errors naming the model class and the pred.fun to write; training data found as pdp finds it;
# pdp 0.8.2's result classes, drawn by plot() and autoplot().

set.seed(24)
n <- 60
sim <- data.frame(x1 = runif(n), x2 = runif(n))
sim$y <- sim$x1 + 2 * sim$x2 + rnorm(n, sd = 0.1)
sim$yk <- factor(sample(c("a", "b", "c"), n, TRUE))

# Models of classes pdpx has no rule for, with the predict() methods below.
fake <- function(cls) structure(list(call = quote(fake(data = sim))), class = cls)
.S3method("predict", "labeller", function(object, newdata, ...) factor(ifelse(newdata$x1 > 0.5, "b", "a")))
.S3method("predict", "lister", function(object, newdata, ...) list(class = newdata$x1 > 0.5, score = newdata$x1))
.S3method("predict", "scorer", function(object, newdata, type = "response", ...) {
  if (identical(type, "prob")) return(cbind(a = newdata$x1 * 3, b = 1 - newdata$x1 * 3))  # not probabilities
  newdata$x1 + newdata$x2
})
.S3method("predict", "leaky", function(object, newdata, type = "response", ...) {
  cbind(a = newdata$x1 / 2, b = newdata$x2 / 2)  # in [0, 1], but rows do not sum to 1
})

test_that("class labels, lists and non-probabilities are errors naming the class and the pred.fun to write", {
  skip_if_no_pdpx()
  expect_error(suppressWarnings(partial(fake("labeller"), pred.var = "x1", train = sim)),
               "\"labeller\" model returns class labels.*pred.fun = function\\(object, newdata\\)")
  expect_error(suppressWarnings(partial(fake("lister"), pred.var = "x1", train = sim)),
               "\"lister\" model returns a list \\(class, score\\)")
  expect_error(partial(fake("scorer"), pred.var = "x1", train = sim, type = "classification"),
               "\"scorer\" model are outside \\[0, 1\\]")
  expect_error(partial(fake("leaky"), pred.var = "x1", train = sim, type = "classification"),
               "\"leaky\" model do not sum to 1")
  # a class without a rule whose predict() gives numbers: regression, with pdp's warning
  expect_warning(pd <- partial(fake("scorer"), pred.var = "x1", train = sim, grid.resolution = 5),
                 "could not be determined")
  expect_partial(pd, sim, function(d) d$x1 + d$x2)
  # a classifier asked for regression: refused, where pdp averages NA
  skip_if_not_installed("MASS")
  lda <- MASS::lda(yk ~ x1 + x2, data = sim)
  expect_error(partial(lda, pred.var = "x1", type = "regression"), "classification model")
  expect_error(partial(glm(y > 1.5 ~ x1, data = sim, family = quasibinomial), pred.var = "x1"),
               "of family quasibinomial")
})

test_that("partial_dependence() too: a classifier predicting labels gives its class probabilities, lists are errors", {
  skip_if_no_pdpx()
  skip_if_not_installed("MASS")
  lda <- MASS::lda(yk ~ x1 + x2, data = sim)
  pd <- partial_dependence(lda, sim, "x1", grid_resolution = 5, target = c("a", "b", "c"))
  expect_setequal(unique(pd$output), c("a", "b", "c"))
  expect_brute(lda, sim, pd, predict_fun = function(m, d) predict(m, d)$posterior)
  expect_error(partial_dependence(fake("lister"), sim, "x1"), "list \\(class, score\\)")
  expect_error(partial_dependence(fake("labeller"), sim, "x1"), "class labels")
})

test_that("training data: the call's data where the model was fitted, positional data arguments", {
  skip_if_no_pdpx()
  fit_inside <- function() {
    local_rows <- sim[1:40, ]
    lm(y ~ x1 + x2, data = local_rows)
  }
  fit <- fit_inside()
  pd <- partial(fit, pred.var = "x1", grid.resolution = 4)  # found in the formula's environment
  expect_partial(pd, sim[1:40, ], function(d) predict(fit, d))
  skip_if_not_installed("randomForest")
  set.seed(1)
  rf <- randomForest::randomForest(y ~ x1 + x2, sim, ntree = 10)  # data given by position
  expect_partial(partial(rf, pred.var = "x2", grid.resolution = 4), sim, function(d) predict(rf, d))
  x1 <- sim$x1
  y <- sim$y
  bare <- lm(y ~ x1)
  expect_error(partial(bare, pred.var = "x1"), "training data could not be found.*train =")
})

test_that("pdp's classes partial, ice and cice; plot() and autoplot() draw each; ranger votes as documented", {
  skip_if_no_pdpx()
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  fit <- lm(y ~ x1 * x2, data = sim)
  pd <- partial(fit, pred.var = "x1", grid.resolution = 5)
  ice <- partial(fit, pred.var = "x1", grid.resolution = 5, ice = TRUE)
  cice <- partial(fit, pred.var = "x1", grid.resolution = 5, ice = TRUE, center = TRUE)
  expect_equal(class(pd), c("pdpx_partial", "partial", "data.frame"))
  expect_equal(class(ice), c("pdpx_ice", "ice", "data.frame"))
  expect_equal(class(cice), c("pdpx_cice", "cice", "data.frame"))
  expect_false(inherits(cice, "ice"))
  expect_equal(names(cice), c("x1", "yhat", "yhat.id"))
  for (res in list(pd, ice, cice)) {
    expect_s3_class(autoplot(res), "ggplot")
    expect_s3_class(plot(res), "ggplot")
    ggplot2::ggplot_build(autoplot(res, rug = TRUE))
  }
  expect_equal(sum(vapply(autoplot(cice)$layers, function(l) inherits(l$geom, "GeomLine"), TRUE)), 2)
  expect_match(capture.output(print(cice))[1], "centered ICE")
  drawn <- partial(fit, pred.var = "x1", grid.resolution = 5, ice = TRUE, center = TRUE, plot = TRUE,
                   plot.engine = "ggplot2")
  expect_s3_class(drawn, "ggplot")
  expect_equal(class(attr(drawn, "partial.data")), c("pdpx_cice", "cice", "data.frame"))
  if (requireNamespace("lattice", quietly = TRUE)) {  # pdp's default engine
    for (flags in list(c(FALSE, FALSE), c(TRUE, FALSE), c(TRUE, TRUE))) {
      tr <- partial(fit, pred.var = "x1", grid.resolution = 5, ice = flags[1], center = flags[2], plot = TRUE)
      expect_s3_class(tr, "trellis")
      print(tr)
    }
  }
  skip_if_not_installed("ranger")
  set.seed(2)
  rg <- ranger::ranger(yk ~ x1 + x2, data = sim, num.trees = 20)  # pdp refuses it: pdpx averages vote fractions
  votes <- function(d) {
    v <- matrix(predict(rg, d, predict.all = TRUE)$predictions, nrow = nrow(d))
    vapply(seq_along(rg$forest$levels), function(j) rowMeans(v == j), numeric(nrow(d)))
  }
  expect_partial(partial(rg, pred.var = "x1", grid.resolution = 5, prob = TRUE, which.class = 2), sim,
                 function(d) votes(d)[, 2])
})

test_that("missing predictions are left out of the averages, as pdp does, and said so", {
  skip_if_no_pdpx()
  fit <- lm(y ~ x1 + x2, data = sim)
  tr <- transform(sim, x2 = ifelse(x2 > 0.8, NA, x2))
  n_na <- sum(is.na(tr$x2))
  expect_gt(n_na, 0)
  expect_warning(pd <- partial(fit, pred.var = "x1", train = tr, grid.resolution = 3),
                 sprintf("missing \\(NA\\) for %d of %d rows", n_na, nrow(tr)))
  expect_partial(pd, tr, function(d) predict(fit, d))  # the definition averages with na.rm = TRUE
  ice <- partial(fit, pred.var = "x1", train = tr, grid.resolution = 3, ice = TRUE)
  expect_equal(sum(is.na(ice$yhat)), 3 * n_na)  # ICE rows keep their NA
})

test_that("approx = TRUE: one row of medians (integers truncated, dates kept) and most frequent values, as pdp", {
  d <- data.frame(i = c(1L, 2L, 3L, 4L), t = c("a", "b", "b", "c"), day = as.Date("2024-01-01") + c(0, 1, 1, 5),
                  l = c(TRUE, TRUE, FALSE, TRUE), f = factor(c("p", "q", "q", "q"), levels = c("q", "p")),
                  stringsAsFactors = FALSE)
  ex <- pdpx:::.exemplar(d)
  expect_equal(ex$i, 2L)  # median 2.5, as.integer()
  expect_equal(ex$t, "b")
  expect_equal(ex$day, as.Date("2024-01-02"))
  expect_true(ex$l)
  expect_equal(ex$f, factor("q", levels = c("q", "p")))
})
