# export_model(): a randomForest, ranger or gbm model written to a data-only .pdpx.json file, read by
# pdpx in Python without R (pdpx.adapters.rexport): its partial dependence is R's own predict, averaged.

set.seed(21)
n <- 200
ex_data <- data.frame(x1 = runif(n), x2 = rnorm(n), f = factor(sample(c("a", "b", "c", "d"), n, TRUE)))
ex_data$y <- ex_data$x1 + 0.5 * (ex_data$f %in% c("b", "d")) + ex_data$x2 / 4 + rnorm(n, sd = 0.1)
ex_data$k <- factor(ifelse(ex_data$y > 1.2, "hi", ifelse(ex_data$y > 0.7, "mid", "lo")))
ex_data$b <- as.integer(ex_data$y > 0.9)
ex_X <- ex_data[, c("x1", "x2", "f")]

# The partial dependence of the exported file, computed by pdpx in Python from the trees alone.
export_pd <- function(model, features, ...) {
  path <- tempfile(fileext = ".pdpx.json")
  on.exit(unlink(path))
  export_model(model, path, ...)
  rexport <- reticulate::import("pdpx.adapters.rexport")
  adapter <- rexport$read_export(path)
  py <- .pdpx_py()
  X <- ex_X[, .as_chr(adapter$feature_names()), drop = FALSE]
  out <- .py_call(py$bridge$r_partial_dependence(adapter, .frame_payload(X), as.list(features),
                                                 list(kind = "both", grid_resolution = 5L)))
  .new_pd(out, ex_data, features)
}

test_that("export_model: a randomForest's export gives R's predict (regression and class probabilities)", {
  skip_if_no_pdpx()
  skip_if_not_installed("randomForest")
  reg <- randomForest::randomForest(y ~ x1 + x2 + f, data = ex_data, ntree = 25)
  cls <- randomForest::randomForest(k ~ x1 + x2 + f, data = ex_data, ntree = 25)
  for (v in list("x1", "f", c("x2", "f"))) {
    expect_brute(reg, ex_data, export_pd(reg, v))
    expect_brute(cls, ex_data, export_pd(cls, v), predict_fun = prob)
  }
})

test_that("export_model: ranger forests (regression, probability, votes; levels from data)", {
  skip_if_no_pdpx()
  skip_if_not_installed("ranger")
  reg <- ranger::ranger(y ~ x1 + x2 + f, ex_data, num.trees = 25, respect.unordered.factors = "order")
  prob_forest <- ranger::ranger(k ~ x1 + x2 + f, ex_data, num.trees = 25, probability = TRUE,
                                respect.unordered.factors = "partition")
  votes <- ranger::ranger(k ~ x1 + x2 + f, ex_data, num.trees = 25)
  vote_share <- function(m, d) {
    v <- ranger:::predict.ranger(m, d, predict.all = TRUE)$predictions
    out <- sapply(seq_along(m$forest$levels), function(k) rowMeans(v == k))
    colnames(out) <- m$forest$levels
    out
  }
  for (v in list("x1", "f")) {
    expect_brute(reg, ex_data, export_pd(reg, v), predict_fun = function(m, d) ranger:::predict.ranger(m, d)$predictions)
    expect_brute(prob_forest, ex_data, export_pd(prob_forest, v, data = ex_data),
                 predict_fun = function(m, d) ranger:::predict.ranger(m, d)$predictions)
    expect_brute(votes, ex_data, export_pd(votes, v, data = ex_data), predict_fun = vote_share)
  }
  expect_error(export_model(prob_forest, tempfile()), "pass the training data")
})

test_that("export_model: gbm's response with the trees predict() uses, and n.trees", {
  skip_if_no_pdpx()
  skip_if_not_installed("gbm")
  set.seed(2)
  gauss <- gbm::gbm(y ~ x1 + x2 + f, data = ex_data, distribution = "gaussian", n.trees = 50,
                    interaction.depth = 3, n.minobsinnode = 5, train.fraction = 0.8)
  bern <- gbm::gbm(b ~ x1 + x2 + f, data = ex_data, distribution = "bernoulli", n.trees = 30,
                   interaction.depth = 2, n.minobsinnode = 5)
  best <- which.min(gauss$valid.error)
  for (v in list("x1", "f")) {
    expect_brute(gauss, ex_data, export_pd(gauss, v),
                 predict_fun = function(m, d) gbm:::predict.gbm(m, d, n.trees = best, type = "response"))
    expect_brute(gauss, ex_data, export_pd(gauss, v, n.trees = 20),
                 predict_fun = function(m, d) gbm:::predict.gbm(m, d, n.trees = 20, type = "response"))
    expect_brute(bern, ex_data, export_pd(bern, v),
                 predict_fun = function(m, d) gbm:::predict.gbm(m, d, n.trees = 30, type = "response"))
  }
  expect_error(export_model(gauss, tempfile(), n.trees = 51), "between 1 and the model's 50 trees")
})

test_that("export_model: the file is plain data, written whole; other objects are refused", {
  skip_if_not_installed("randomForest")
  rf <- randomForest::randomForest(y ~ x1 + f, data = ex_data, ntree = 3)
  path <- tempfile(fileext = ".pdpx.json")
  expect_identical(export_model(rf, path), path)
  text <- readLines(path, warn = FALSE)
  expect_length(text, 1)
  expect_true(startsWith(text, "{\"format\":\"pdpx-trees\",\"version\":1,\"library\":\"randomForest\""))
  expect_false(file.exists(paste0(path, ".part")))
  unlink(path)
  lm_fit <- stats::lm(y ~ x1, data = ex_data)
  expect_error(export_model(lm_fit, path), "randomForest, ranger and gbm models")
  class(rf) <- c("lm", "randomForest")
  expect_error(export_model(rf, path), "class is lm, randomForest")
  expect_false(file.exists(path))
})
