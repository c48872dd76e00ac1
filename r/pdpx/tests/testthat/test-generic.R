test_that("any model with a predict method runs through brute and matches an R loop", {
  skip_if_no_pdpx()
  fit <- lm(mpg ~ wt * hp + factor(cyl), data = mtcars)
  pd <- partial_dependence(fit, mtcars, "wt", kind = "both", grid_resolution = 7)
  expect_equal(attr(pd, "pdpx")$method, "brute")
  expect_brute(fit, mtcars, pd)
  pd2 <- partial_dependence(fit, mtcars, c("wt", "hp"), grid_resolution = 4)
  expect_brute(fit, mtcars, pd2)
})

test_that("pred_fun: class probabilities of a glm, factor and character columns", {
  skip_if_no_pdpx()
  d <- transform(mtcars, gear = factor(gear), carb = as.character(carb), am = am == 1)
  fit <- glm(vs ~ mpg + am + gear, data = d, family = binomial)
  f <- function(object, newdata) stats::predict(object, newdata, type = "response")
  pd <- partial_dependence(fit, d, "gear", pred_fun = f, kind = "both")
  expect_equal(unique(pd$type_1), "categorical")
  expect_brute(fit, d, pd, predict_fun = f)
  lmc <- lm(mpg ~ wt + carb, data = d)  # a character predictor
  pk <- partial_dependence(lmc, d, "carb", kind = "both")
  expect_equal(attr(pk, "pdpx")$grid_values$carb, c("1", "2", "3", "4", "6", "8"))
  expect_brute(lmc, d, pk)
  two <- function(object, newdata) {
    p <- stats::predict(object, newdata, type = "response")
    cbind(v_shaped = 1 - p, straight = p)
  }
  pc <- partial_dependence(fit, d, c("mpg", "am"), pred_fun = two, grid_resolution = 5)
  expect_equal(attr(pc, "pdpx")$grid_values$am, c("FALSE", "TRUE"))
  expect_equal(unique(pc$output), "straight")
  expect_brute(fit, d, pc, predict_fun = two)
  expect_error(partial_dependence(fit, d, "mpg", pred_fun = function(object, newdata) factor(rep("a", nrow(newdata)))),
               "class labels")
})

test_that("the Python environment is found", {
  skip_if_no_pdpx()
  py <- pdpx_python()
  expect_true(is.null(py) || file.exists(py))
  expect_true(pdpx_available())
})
