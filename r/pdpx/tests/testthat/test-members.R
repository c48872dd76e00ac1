# interval = "members" / "quantiles" from R (issue 38 item 4): each member's PD against the member's own
# prediction in R (randomForest's and ranger's predict.all = TRUE: every tree's prediction), averaged.

# Each member's PD by brute force: for every grid value set the feature, take each tree's own prediction
# (`per_tree(d)`: rows x trees; numbers, or class labels that count as a vote), average over the rows.
tree_pds <- function(grid, data, feature, per_tree, class = NULL) {
  sapply(grid, function(v) {
    d <- data
    d[[feature]] <- v
    p <- per_tree(d)
    if (is.null(class)) colMeans(p) else colMeans(p == class)
  })  # trees x grid
}

central <- function(curves, level) {  # numpy's default (linear) quantiles are R's type 7
  a <- (1 - level) / 2
  rbind(apply(curves, 2, stats::quantile, a, type = 7, names = FALSE),
        apply(curves, 2, stats::quantile, 1 - a, type = 7, names = FALSE))
}

test_that("randomForest regression: each tree's PD is that tree's own predict averaged, the band their quantiles", {
  skip_if_no_pdpx()
  skip_if_not_installed("randomForest")
  set.seed(11)
  rf <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 15)
  pd <- partial_dependence(rf, mtcars, "wt", grid_resolution = 6, interval = "members", level = 0.8)
  meta <- attr(pd, "pdpx")
  expect_equal(meta$method, "exact")
  expect_equal(meta$band, "members: central 80% of 15 trees")
  own <- tree_pds(pd$wt, mtcars, "wt", function(d) stats::predict(rf, d, predict.all = TRUE)$individual)
  m <- attr(pd, "members")
  expect_equal(sort(unique(m$member)), 1:15)  # the trees, numbered as getTree() and predict.all number them
  expect_equal(m$weight, rep(1 / 15, nrow(m)))
  got <- matrix(m$yhat, nrow = 15, byrow = TRUE)  # member-major, grid order within a member
  expect_equal(m$wt, rep(pd$wt, 15))
  expect_lt(max(abs(got - own)), 1e-9)
  band <- central(own, 0.8)
  expect_lt(max(abs(pd$lower - band[1, ])), 1e-9)
  expect_lt(max(abs(pd$upper - band[2, ])), 1e-9)
  expect_lt(max(abs(pd$yhat - colMeans(own))), 1e-9)  # the forest's PD is its trees' mean
  expect_brute(rf, mtcars, pd)                             # and the forest's own predict, averaged
  expect_output(print(pd), "band \\(lower, upper\\): members: central 80% of 15 trees")
})

test_that("randomForest classification: a tree's PD of a class is the share of rows it votes for it", {
  skip_if_no_pdpx()
  skip_if_not_installed("randomForest")
  set.seed(12)
  rf <- randomForest::randomForest(Species ~ ., data = iris, ntree = 12)
  pd <- partial_dependence(rf, iris, "Petal.Width", grid_resolution = 5, interval = "members",
                           target = "virginica")
  expect_equal(attr(pd, "pdpx")$band, "members: central 95% of 12 trees")
  own <- tree_pds(pd$Petal.Width, iris, "Petal.Width",
                  function(d) stats::predict(rf, d, predict.all = TRUE)$individual, class = "virginica")
  got <- matrix(attr(pd, "members")$yhat, nrow = 12, byrow = TRUE)
  expect_lt(max(abs(got - own)), 1e-12)
  band <- central(own, 0.95)
  expect_lt(max(abs(c(pd$lower, pd$upper) - c(band[1, ], band[2, ]))), 1e-12)
})

test_that("ranger regression: each tree's PD equals predict.all's tree, averaged", {
  skip_if_no_pdpx()
  skip_if_not_installed("ranger")
  set.seed(13)
  rg <- ranger::ranger(mpg ~ ., data = mtcars, num.trees = 10)
  pd <- partial_dependence(rg, mtcars, "hp", grid_resolution = 5, interval = "members", level = 0.5)
  own <- tree_pds(pd$hp, mtcars, "hp",
                  function(d) ranger:::predict.ranger(rg, d, predict.all = TRUE)$predictions)
  got <- matrix(attr(pd, "members")$yhat, nrow = 10, byrow = TRUE)
  expect_lt(max(abs(got - own)), 1e-9)
  band <- central(own, 0.5)
  expect_lt(max(abs(pd$lower - band[1, ])), 1e-9)
  expect_lt(max(abs(pd$upper - band[2, ])), 1e-9)
})

test_that("a named list of fold models: their mean PD and spread; quantile models: the median's PD in the outer ones", {
  skip_if_no_pdpx()
  folds <- rep(1:3, length.out = nrow(mtcars))
  fits <- lapply(1:3, function(k) lm(mpg ~ wt + hp, data = mtcars[folds != k, ]))
  names(fits) <- paste0("fold", 1:3)
  grid <- list(wt = c(2, 3, 4, 5))
  pd <- partial_dependence(fits, mtcars, "wt", custom_values = grid, interval = "members")
  own <- t(sapply(fits, function(f) sapply(grid$wt, function(v) mean(predict(f, transform(mtcars, wt = v))))))
  expect_equal(attr(pd, "pdpx")$band, "members: central 95% of 3 models")
  expect_equal(unique(attr(pd, "members")$member), names(fits))
  expect_lt(max(abs(matrix(attr(pd, "members")$yhat, nrow = 3, byrow = TRUE) - own)), 1e-9)
  expect_lt(max(abs(pd$yhat - colMeans(own))), 1e-9)
  band <- central(own, 0.95)
  expect_lt(max(abs(pd$lower - band[1, ])), 1e-9)

  shift <- function(b) {  # three "quantile models": the fit shifted by a constant
    f <- fits$fold1
    f$coefficients[1] <- f$coefficients[1] + b
    f
  }
  qs <- list("0.9" = shift(2), "0.1" = shift(-2), "0.5" = shift(0))
  pq <- partial_dependence(qs, mtcars, "wt", custom_values = grid, interval = "quantiles")
  mid <- own[1, ]
  expect_lt(max(abs(pq$yhat - mid)), 1e-9)
  expect_lt(max(abs(pq$lower - (mid - 2))), 1e-9)
  expect_lt(max(abs(pq$upper - (mid + 2))), 1e-9)
  expect_equal(attr(pq, "pdpx")$band, "quantiles: PDs of the 0.1 and 0.9 quantile models")
  expect_equal(unique(attr(pq, "members")$member), c("0.1", "0.5", "0.9"))
  expect_error(partial_dependence(fits, mtcars, "wt", interval = "quantiles"),
               "named by their quantile, e.g. list\\(\"0.1\" = fit_q10")
})

test_that("autoplot draws the members' band and says what it is", {
  skip_if_no_pdpx()
  skip_if_not_installed("randomForest")
  set.seed(14)
  rf <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 10)
  pd <- partial_dependence(rf, mtcars, "wt", grid_resolution = 5, interval = "members", level = 0.9)
  p <- autoplot(pd)
  expect_equal(p$labels$caption, "band: members: central 90% of 10 trees")
  built <- ggplot2::ggplot_build(p)
  ribbon <- which(vapply(p$layers, function(l) inherits(l$geom, "GeomRibbon"), TRUE))
  expect_length(ribbon, 1)
  expect_equal(built$data[[ribbon]]$ymin, pd$lower, tolerance = 1e-12)
  expect_equal(built$data[[ribbon]]$ymax, pd$upper, tolerance = 1e-12)
})

test_that("boosted models and misplaced levels are refused with what to do", {
  skip_if_no_pdpx()
  skip_if_not_installed("gbm")
  set.seed(15)
  gb <- gbm::gbm(mpg ~ wt + hp, data = mtcars, distribution = "gaussian", n.trees = 5, n.minobsinnode = 3)
  expect_error(partial_dependence(gb, mtcars, "wt", interval = "members", n_trees = 5),
               "members of this gbm model: its trees are summed, as boosting sums them.*interval = \"bootstrap\"")
  fit <- lm(mpg ~ wt, data = mtcars)
  expect_error(partial_dependence(fit, mtcars, "wt", level = 0.9), "give it with interval = \"members\"")
  expect_error(partial_dependence(fit, mtcars, "wt", interval = 0.9, level = 0.8), "is a level already")
  expect_error(partial_dependence(fit, mtcars, "wt", interval = "trees"), "\"bootstrap\", \"members\", \"quantiles\"")
  expect_error(partial_dependence(fit, mtcars, "wt", interval = "members", level = 2), "level must be a share")
  boot <- partial_dependence(fit, mtcars, "wt", grid_resolution = 5, interval = "bootstrap", level = 0.8, n_boot = 20)
  expect_equal(attr(boot, "pdpx")$interval, 0.8)
  expect_output(print(boot), "80% bootstrap interval over the rows")
})
