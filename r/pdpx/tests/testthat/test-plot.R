skip_if_not_installed("randomForest")

test_that("autoplot and plot draw PD with rug, ICE, categorical and 2-way results", {
  skip_if_no_pdpx()
  set.seed(1)
  rf <- randomForest::randomForest(Ozone ~ ., data = transform(na.omit(airquality), Month = factor(Month)),
                                   ntree = 20)
  aq <- transform(na.omit(airquality), Month = factor(Month))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)

  p <- autoplot(partial_dependence(rf, aq, "Temp", grid_resolution = 10))
  expect_s3_class(p, "ggplot")
  geoms <- vapply(p$layers, function(l) class(l$geom)[1], "")
  expect_true(all(c("GeomLine", "GeomRug") %in% geoms))
  ggplot2::ggplot_build(p)

  ice <- autoplot(partial_dependence(rf, aq, "Temp", kind = "both", grid_resolution = 10))
  expect_equal(sum(vapply(ice$layers, function(l) inherits(l$geom, "GeomLine"), TRUE)), 2)
  ggplot2::ggplot_build(ice)

  cat <- autoplot(partial_dependence(rf, aq, "Month"))
  expect_true("GeomPoint" %in% vapply(cat$layers, function(l) class(l$geom)[1], ""))
  ggplot2::ggplot_build(cat)

  tile <- autoplot(partial_dependence(rf, aq, c("Temp", "Month"), grid_resolution = 6))
  expect_true("GeomRect" %in% vapply(tile$layers, function(l) class(l$geom)[1], ""))
  ggplot2::ggplot_build(tile)

  out <- plot(partial_dependence(rf, aq, "Wind", grid_resolution = 5, center = TRUE))
  expect_s3_class(out, "ggplot")
  expect_match(out$labels$y, "centered")
})

test_that("several classes get one panel each", {
  skip_if_no_pdpx()
  rf <- randomForest::randomForest(Species ~ ., data = iris, ntree = 10)
  p <- autoplot(partial_dependence(rf, iris, "Petal.Length", grid_resolution = 5))
  expect_s3_class(p$facet, "FacetWrap")
})

test_that("grid = 'thresholds' gives the exact step curve, equal to brute force on its grid, drawn as steps", {
  skip_if_no_pdpx()
  set.seed(2)
  rf <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 15)
  pd <- partial_dependence(rf, mtcars, "wt", grid = "thresholds")
  g <- attr(pd, "pdpx")$grid_values[[1]]
  # one point per step: every split threshold of wt in the forest bounds a step
  cuts <- sort(unique(unlist(lapply(seq_len(rf$ntree), function(k) {
    t <- randomForest::getTree(rf, k, labelVar = TRUE)
    t[!is.na(t$`split var`) & t$`split var` == "wt", "split point"]
  }))))
  expect_equal(length(g), length(cuts) + 1)
  expect_true(all(diff(g) > 0))
  brute <- partial_dependence(rf, mtcars, "wt", method = "brute", custom_values = list(wt = g))
  expect_equal(pd$yhat, brute$yhat, tolerance = 1e-12)
  expect_equal(attr(pd, "pdpx")$steps$wt, "<=")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  p <- autoplot(partial_dependence(rf, mtcars, "wt", grid = "thresholds", kind = "both"))
  geoms <- vapply(p$layers, function(l) class(l$geom)[1], "")
  expect_equal(sum(geoms == "GeomStep"), 2)
  expect_false("GeomLine" %in% geoms)
  ggplot2::ggplot_build(p)
  expect_error(partial_dependence(rf, mtcars, "wt", grid = "steps"), "grid")
})

# The layers of a built ggplot: each layer's data (with its alpha and colour), by geom.
built_lines <- function(p) {
  b <- ggplot2::ggplot_build(p)
  keep <- vapply(p$layers, function(l) inherits(l$geom, "GeomLine") || inherits(l$geom, "GeomStep"), TRUE)
  b$data[keep]
}

test_that("ICE plots: curves lightened with their count, the PD line (their average) drawn over them", {
  skip_if_no_pdpx()
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  set.seed(2)
  rf <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 20)
  big <- mtcars[rep(seq_len(nrow(mtcars)), 16), ]  # 512 curves
  partial_dependence <- function(...) without_support_warning(pdpx::partial_dependence(...))
  partial <- function(...) without_support_warning(pdpx::partial(...))
  alpha_of <- function(p) unique(built_lines(p)[[1]]$alpha)
  for (draw in list(autoplot, function(x) plot(x))) {
    few <- partial_dependence(rf, mtcars, "wt", ice = TRUE, grid_resolution = 6)
    many <- partial_dependence(rf, big, "wt", ice = TRUE, grid_resolution = 6)
    p_few <- draw(few)
    p_many <- draw(many)
    expect_lt(alpha_of(p_many), alpha_of(p_few))
    expect_lte(alpha_of(p_many), 0.05)
    # ICE only (kind = "individual", as ice = TRUE gives): two line layers, the second the average of the curves
    lines <- built_lines(p_few)
    expect_length(lines, 2)
    d <- as.data.frame(few)
    want <- tapply(d$yhat, d$x_1, mean)
    got <- lines[[2]][order(lines[[2]]$x), ]
    expect_equal(got$x, as.double(names(want)))
    expect_equal(got$y, unname(as.vector(want)), tolerance = 1e-12)
  }
  # centered ICE: the line is the average of the centered curves (the centered PD)
  cice <- partial_dependence(rf, mtcars, "wt", ice = TRUE, center = TRUE, grid_resolution = 6)
  avg <- built_lines(autoplot(cice))[[2]]
  expect_equal(avg$y[order(avg$x)], unname(as.vector(tapply(cice$yhat, cice$x_1, mean))), tolerance = 1e-12)
  # partial(ice = TRUE): the same for pdp-style results
  pc <- partial(rf, pred.var = "wt", ice = TRUE, train = mtcars, grid.resolution = 6)
  pm <- partial(rf, pred.var = "wt", ice = TRUE, train = big, grid.resolution = 6)
  lines <- built_lines(plot(pc))
  expect_length(lines, 2)
  expect_equal(lines[[2]]$y[order(lines[[2]]$x)], unname(as.vector(tapply(pc$yhat, pc$wt, mean))), tolerance = 1e-12)
  expect_lt(unique(built_lines(autoplot(pm))[[1]]$alpha), unique(lines[[1]]$alpha))
  expect_equal(unique(built_lines(autoplot(pc, alpha = 1))[[1]]$alpha), 1)  # an alpha given is kept
})

test_that("a missing grid point is NA in the data frame and in print(), never NaN", {
  skip_if_no_pdpx()
  aq <- airquality
  fit <- lm(Ozone ~ Solar.R + Wind, data = aq)
  f <- function(object, newdata) {
    p <- stats::predict(object, transform(newdata, Solar.R = ifelse(is.na(Solar.R), 180, Solar.R)))
    p
  }
  pd <- partial_dependence(fit, aq, "Solar.R", pred_fun = f, grid_resolution = 4, include_missing = TRUE)
  expect_true(anyNA(pd$Solar.R))
  expect_false(any(is.nan(pd$Solar.R)) || any(is.nan(pd$x_1)) || any(is.nan(attr(pd, "pdpx")$grid_values$Solar.R)))
  out <- capture.output(print(pd))
  expect_false(any(grepl("NaN", out)))
  expect_true(any(grepl("\\bNA\\b", out)))
  # the missing point's value is the definition: the column set to NA, the model's own predict, averaged
  d2 <- aq
  d2$Solar.R <- NA_real_
  expect_equal(pd$yhat[is.na(pd$Solar.R)], mean(f(fit, d2)), tolerance = 1e-12)
})
