skip_if_not_installed("randomForest")
suppressPackageStartupMessages(library(randomForest))

set.seed(42)
rf_mtcars <- randomForest(mpg ~ ., data = mtcars, ntree = 40)
rf_iris <- randomForest(Species ~ ., data = iris, ntree = 30)
aq <- na.omit(airquality)
aq$Month <- factor(aq$Month, labels = month.abb[5:9])
rf_aq <- randomForest(Ozone ~ ., data = aq, ntree = 30)
rf_aq_xy <- randomForest(x = aq[, -1], y = aq$Ozone, ntree = 30)
mt2 <- transform(mtcars, am = factor(am, labels = c("automatic", "manual")))
rf_am <- randomForest(am ~ wt + hp + qsec + cyl, data = mt2, ntree = 30)

test_that("regression forest (mtcars): exact equals an R brute-force loop, 1-way and 2-way, PD and ICE", {
  skip_if_no_pdpx()
  pd <- partial_dependence(rf_mtcars, mtcars, "wt", kind = "both", grid_resolution = 12)
  expect_s3_class(pd, "pdpx_pd")
  expect_equal(attr(pd, "pdpx")$method, "exact")
  expect_equal(sort(unique(pd$kind)), c("average", "individual"))
  expect_equal(range(pd$row, na.rm = TRUE), c(1L, nrow(mtcars)))
  expect_brute(rf_mtcars, mtcars, pd)

  pd2 <- partial_dependence(rf_mtcars, mtcars, c("wt", "hp"), grid_resolution = 6)
  expect_equal(nrow(pd2), 36)
  expect_brute(rf_mtcars, mtcars, pd2)

  ice <- partial_dependence(rf_mtcars, mtcars, "cyl", ice = TRUE)
  expect_equal(unique(ice$kind), "individual")
  expect_brute(rf_mtcars, mtcars, ice)

  b <- partial_dependence(rf_mtcars, mtcars, c("wt", "hp"), grid_resolution = 6, method = "brute")
  expect_equal(attr(b, "pdpx")$method, "brute")
  expect_lt(max(abs(b$yhat - pd2$yhat)), 1e-9)
})

test_that("centered ICE is ICE minus its value at the first grid point", {
  skip_if_no_pdpx()
  ice <- partial_dependence(rf_mtcars, mtcars, "wt", ice = TRUE, grid_resolution = 8)
  cice <- partial_dependence(rf_mtcars, mtcars, "wt", ice = TRUE, center = TRUE, grid_resolution = 8)
  expect_true(attr(cice, "pdpx")$centered)
  first <- ave(ice$yhat, ice$row, FUN = function(v) v[1])
  expect_lt(max(abs(cice$yhat - (ice$yhat - first))), 1e-9)
})

test_that("classification forest (iris): vote fractions equal R's predict(type = 'prob') brute force", {
  skip_if_no_pdpx()
  pd <- partial_dependence(rf_iris, iris, "Petal.Width", kind = "both", grid_resolution = 10)
  expect_equal(attr(pd, "pdpx")$method, "exact")
  expect_equal(sort(unique(pd$output)), sort(levels(iris$Species)))
  expect_brute(rf_iris, iris, pd, predict_fun = prob)
  pd2 <- partial_dependence(rf_iris, iris, c("Petal.Length", "Sepal.Width"), grid_resolution = 5,
                            target = "virginica")
  expect_equal(unique(pd2$output), "virginica")
  expect_brute(rf_iris, iris, pd2, predict_fun = prob)
})

test_that("binary classification reports the second (positive) class by default", {
  skip_if_no_pdpx()
  pd <- partial_dependence(rf_am, mt2, "wt", grid_resolution = 10)
  expect_equal(unique(pd$output), "manual")
  expect_brute(rf_am, mt2, pd, predict_fun = prob)
})

test_that("airquality: factor and integer predictors, formula and x/y interfaces", {
  skip_if_no_pdpx()
  for (model in list(rf_aq, rf_aq_xy)) {
    pm <- partial_dependence(model, aq, "Month", kind = "both")
    expect_equal(unique(pm$type_1), "categorical")
    expect_equal(attr(pm, "pdpx")$grid_values$Month, month.abb[5:9])
    expect_brute(model, aq, pm)
    p2 <- partial_dependence(model, aq, c("Temp", "Month"), grid_resolution = 6)
    expect_brute(model, aq, p2)
    pt <- partial_dependence(model, aq, "Day", ice = TRUE, grid_resolution = 7)
    expect_brute(model, aq, pt)
  }
})

test_that("recursion uses node counts routed from the training rows", {
  skip_if_no_pdpx()
  expect_error(partial_dependence(rf_aq, aq, "Temp", method = "recursion"), "training_data = ")
  r <- partial_dependence(rf_aq, aq, "Temp", method = "recursion", training_data = aq, grid_resolution = 8)
  meta <- attr(r, "pdpx")
  expect_equal(meta$method, "recursion")
  expect_true(any(grepl("routed", meta$notes)))
  expect_true(all(is.finite(r$yhat)))
})

test_that("bad input gives clear errors", {
  skip_if_no_pdpx()
  expect_error(partial_dependence(rf_mtcars, mtcars, "weight"), "not among the columns")
  expect_error(partial_dependence(rf_mtcars, mtcars, "wt", pred.var = "wt"), "use features")
  expect_error(partial_dependence(rf_mtcars, mtcars, "wt", grid.resolution = 5), "use grid_resolution")
  expect_error(partial_dependence(rf_mtcars, mtcars[, -6], "hp"), "lacks the randomForest's predictors")
  bad <- aq
  bad$Month <- factor(as.character(bad$Month), levels = c(month.abb[5:9], "Dec"))
  bad$Month[1] <- "Dec"
  expect_error(partial_dependence(rf_aq, bad, "Temp"), "not levels of the factor")
  na <- aq
  na$Wind[2] <- NA
  expect_error(partial_dependence(rf_aq, na, "Temp"), "missing value")
  expect_error(partial_dependence(rf_mtcars, mtcars, "wt", kind = "curves"), "kind must be one of")
})

test_that("the forest is transferred once and reused while it is the same", {
  skip_if_no_pdpx()
  partial_dependence(rf_mtcars, mtcars, "wt", grid_resolution = 4)
  a <- pdpx:::.rf_adapter(rf_mtcars, mtcars[, pdpx:::.rf_inputs(rf_mtcars)])
  b <- pdpx:::.rf_adapter(rf_mtcars, mtcars[, pdpx:::.rf_inputs(rf_mtcars)])
  expect_identical(a, b)
  refit <- randomForest(mpg ~ ., data = mtcars, ntree = 5)
  c <- pdpx:::.rf_adapter(refit, mtcars[, pdpx:::.rf_inputs(refit)])
  expect_false(identical(a, c))
})

test_that("ordered and unordered factors, logical predictors (mtcars)", {
  skip_if_no_pdpx()
  mt3 <- transform(mtcars, cyl = factor(cyl, ordered = TRUE), gear = factor(gear), am = am == 1)
  rf <- randomForest(mpg ~ cyl + gear + am + wt + hp, data = mt3, ntree = 30)
  for (f in list("cyl", "gear", "am", c("cyl", "gear"), c("am", "wt"))) {
    pd <- partial_dependence(rf, mt3, f, kind = "both", grid_resolution = 5)
    expect_equal(attr(pd, "pdpx")$method, "exact")
    expect_brute(rf, mt3, pd)
    b <- partial_dependence(rf, mt3, f, kind = "both", grid_resolution = 5, method = "brute")
    expect_lt(max(abs(b$yhat - pd$yhat)), 1e-9)
  }
})
