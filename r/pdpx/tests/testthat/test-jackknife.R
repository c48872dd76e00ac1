# interval = "jackknife" and oob = TRUE from R (issue 52): a forest fitted with keep.inbag = TRUE, against the
# formula written out here from every tree's own prediction (predict.all) and the forest's own in-bag counts.

# Each tree's PD (trees x grid): the feature set to each grid value, every tree's own prediction, averaged.
tree_pds_jk <- function(grid, data, feature, per_tree) {
  sapply(grid, function(v) {
    d <- data
    d[[feature]] <- v
    colMeans(per_tree(d))
  })
}

# The bias-corrected infinitesimal jackknife of each grid point, from in-bag counts N (rows x trees): Wager et al.'s
# n / B^2 correction when every tree drew n rows, else the counts' own variance in place of 1 (forestci's).
ij <- function(N, pds) {
  n <- nrow(N)
  B <- ncol(N)
  v <- if (all(colSums(N) == n)) 1 else mean(apply(N, 1, function(r) mean((r - mean(r))^2)))
  apply(pds, 2, function(t) {
    tc <- t - mean(t)
    cov <- apply(N, 1, function(r) mean((r - mean(r)) * tc))
    sum(cov^2) - n * v / B^2 * sum(tc^2)
  })
}

test_that("ranger keep.inbag = TRUE: se is the jackknife of the trees' PDs and the forest's in-bag counts", {
  skip_if_no_pdpx()
  skip_if_not_installed("ranger")
  set.seed(21)
  rg <- ranger::ranger(mpg ~ ., data = mtcars, num.trees = 300, keep.inbag = TRUE)
  pd <- partial_dependence(rg, mtcars, "wt", grid_resolution = 5, interval = "jackknife", level = 0.9)
  own <- tree_pds_jk(pd$wt, mtcars, "wt",
                     function(d) ranger:::predict.ranger(rg, d, predict.all = TRUE)$predictions)
  V <- ij(do.call(cbind, rg$inbag.counts), own)
  se <- sqrt(pmax(V, 0))
  expect_true(any(se > 0))
  expect_lt(max(abs(pd$se - se)), 1e-9)
  expect_lt(max(abs(pd$lower - (pd$yhat - stats::qnorm(0.95) * se))), 1e-9)
  expect_lt(max(abs(pd$upper - (pd$yhat + stats::qnorm(0.95) * se))), 1e-9)
  expect_match(attr(pd, "pdpx")$band, "^infinitesimal jackknife: 90% band, learner variance from one fit")
})

test_that("randomForest keep.inbag = TRUE: the jackknife and the out-of-bag PD by their definitions", {
  skip_if_no_pdpx()
  skip_if_not_installed("randomForest")
  set.seed(22)
  rf <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 200, keep.inbag = TRUE)
  per_tree <- function(d) stats::predict(rf, d, predict.all = TRUE)$individual
  pd <- partial_dependence(rf, mtcars, "hp", grid_resolution = 4, interval = "jackknife")
  se <- sqrt(pmax(ij(rf$inbag, tree_pds_jk(pd$hp, mtcars, "hp", per_tree)), 0))
  expect_lt(max(abs(pd$se - se)), 1e-9)
  oob <- partial_dependence(rf, mtcars, "hp", grid_resolution = 4, oob = TRUE)
  out <- rf$inbag == 0  # rows x trees: the trees that did not draw the row
  own <- sapply(oob$hp, function(v) {
    d <- mtcars
    d$hp <- v
    p <- per_tree(d)
    mean(rowSums(p * out) / rowSums(out))
  })
  expect_lt(max(abs(oob$yhat - own)), 1e-9)
  expect_match(paste(attr(oob, "pdpx")$notes, collapse = " "), "out-of-bag")
})

test_that("forests without in-bag counts are refused, saying how to refit", {
  skip_if_no_pdpx()
  skip_if_not_installed("ranger")
  rg <- ranger::ranger(mpg ~ ., data = mtcars, num.trees = 20)
  expect_error(partial_dependence(rg, mtcars, "wt", interval = "jackknife"), "keep.inbag = TRUE")
  expect_error(partial_dependence(rg, mtcars, "wt", oob = TRUE), "keep.inbag = TRUE")
  expect_error(partial_dependence(rg, mtcars, "wt", oob = "yes"), "oob must be TRUE or FALSE")
})
