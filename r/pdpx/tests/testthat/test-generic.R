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

test_that("NA in integer, logical and character columns reaches the model as NA", {
  skip_if_no_pdpx()
  d <- transform(mtcars, cyl = as.integer(cyl), am = am == 1, carb = as.character(carb))
  d$cyl[c(2, 5)] <- NA
  d$am[3] <- NA
  d$carb[c(1, 4)] <- NA
  d$gear <- factor(d$gear)
  d$gear[6] <- NA
  # the predict function sees exactly what R passed: count the NA it receives
  seen <- new.env()
  f <- function(object, newdata) {
    seen$na <- c(cyl = sum(is.na(newdata$cyl)), am = sum(is.na(newdata$am)), carb = sum(is.na(newdata$carb)),
                 gear = sum(is.na(newdata$gear)))
    seen$classes <- vapply(newdata[c("cyl", "am", "carb", "gear")], function(v) class(v)[1], "")
    newdata$wt * 2 + ifelse(is.na(newdata$cyl), 100, newdata$cyl) + ifelse(is.na(newdata$am), 10, newdata$am) +
      ifelse(is.na(newdata$carb), 1000, nchar(newdata$carb)) + ifelse(is.na(newdata$gear), 5000, as.integer(newdata$gear))
  }
  pd <- partial_dependence(list(), d, "wt", pred_fun = f, kind = "both", grid_resolution = 3)
  expect_brute(list(), d, pd, predict_fun = f)
  expect_true(all(seen$na[c("cyl", "am", "carb", "gear")] > 0))
  expect_equal(unname(seen$classes), c("integer", "logical", "character", "factor"))
  # a frame pdpx cannot send column by column (a Date) still works, through reticulate
  d2 <- data.frame(wt = mtcars$wt, day = as.Date("2024-01-01") + seq_len(nrow(mtcars)))
  g <- function(object, newdata) newdata$wt * 3
  pd2 <- partial_dependence(list(), d2, "wt", pred_fun = g, grid_resolution = 3)
  expect_equal(pd2$yhat, 3 * attr(pd2, "pdpx")$grid_values$wt)
})

test_that("columns travel to Python as plain data: types, levels and NA", {
  skip_if_no_pdpx()
  d <- data.frame(x = c(1.5, NA, 3), i = c(1L, NA, 3L), j = 1:3, l = c(TRUE, NA, FALSE), m = c(TRUE, FALSE, TRUE),
                  f = factor(c("b", NA, "a"), levels = c("b", "a", "c")),
                  o = factor(c("lo", "hi", "lo"), levels = c("lo", "hi"), ordered = TRUE),
                  s = c("p", NA, "q"), stringsAsFactors = FALSE)
  py <- pdpx:::.pdpx_py()
  frame <- py$bridge$frame_from_r(pdpx:::.frame_payload(d))
  types <- reticulate::py_eval("lambda df: [str(t) for t in df.dtypes]")(frame)
  expect_equal(unlist(types), c("float64", "float64", "int64", "boolean", "bool", "category", "category", "str"))
  na <- reticulate::py_eval("lambda df: [int(c) for c in df.isna().sum()]")(frame)
  expect_equal(unlist(na), c(1, 1, 0, 1, 0, 1, 0, 1))
  cats <- reticulate::py_eval("lambda df: [list(df['f'].cat.categories), bool(df['o'].cat.ordered), list(df['s'].dropna())]")(frame)
  expect_equal(unlist(cats[[1]]), c("b", "a", "c"))
  expect_true(cats[[2]])
  expect_equal(unlist(cats[[3]]), c("p", "q"))
  # dates and times travel as numbers too (pandas datetime64); other classes (lists) through reticulate
  dt <- data.frame(day = as.Date(c("2024-03-01", NA)),
                   at = as.POSIXct(c("2024-03-01 12:00", "2024-07-01 08:30"), tz = "Europe/Paris"))
  frame <- py$bridge$frame_from_r(pdpx:::.frame_payload(dt))
  shown <- reticulate::py_eval("lambda df: [str(t) for t in df.dtypes] + [str(v) for v in df['day']] + [str(v) for v in df['at']]")(frame)
  expect_equal(unlist(shown)[-c(1, 2)], c("2024-03-01 00:00:00", "NaT", "2024-03-01 12:00:00+01:00", "2024-07-01 08:30:00+02:00"))
  expect_match(unlist(shown)[1], "^datetime64")
  expect_match(unlist(shown)[2], "^datetime64\\[.*Europe/Paris\\]")
  lists <- data.frame(id = 1:2)
  lists$v <- list(1, "a")
  expect_null(pdpx:::.frame_payload(lists))
})
