# Issue 19 from R: missing-value point, by groups, a list of models, the bootstrap interval.

test_that("include_missing: the missing point is predict() with the feature set to NA", {
  skip_if_no_pdpx()
  d <- transform(airquality, Month = factor(Month))
  f <- function(object, newdata) ifelse(is.na(newdata$Solar.R), 40, 0.1 * newdata$Solar.R) + newdata$Temp
  pd <- partial_dependence(NULL, d, "Solar.R", pred_fun = f, grid_resolution = 5, kind = "both")
  last <- pd[pd$kind == "average", ][sum(pd$kind == "average"), ]
  expect_true(is.na(last$x_1))
  expect_equal(last$label_1, "missing")
  expect_equal(last$yhat, mean(f(NULL, transform(d, Solar.R = NA_real_))), tolerance = 1e-12)
  off <- partial_dependence(NULL, d, "Solar.R", pred_fun = f, grid_resolution = 5, include_missing = FALSE)
  expect_false(any(off$label_1 == "missing"))
  expect_error(partial_dependence(NULL, d, "Solar.R", pred_fun = f, include_missing = "yes"), "include_missing")
})

test_that("by: each group's curve is the PD on its rows, on the grid of all rows", {
  skip_if_no_pdpx()
  d <- transform(mtcars, cyl = factor(cyl))
  fit <- lm(mpg ~ wt * cyl + hp, data = d)
  pd <- partial_dependence(fit, d, "wt", by = "cyl", custom_values = list(wt = c(2, 3, 4)))
  expect_true("cyl" %in% names(pd))
  for (g in levels(d$cyl)) {
    rows <- d[d$cyl == g, ]
    got <- pd[pd$cyl == g, "yhat"]
    want <- sapply(c(2, 3, 4), function(v) mean(predict(fit, transform(rows, wt = v))))
    expect_equal(got, want, tolerance = 1e-10)
  }
})

test_that("a named list of models gives a model column; interval adds lower and upper", {
  skip_if_no_pdpx()
  a <- lm(mpg ~ wt + hp, data = mtcars)
  b <- lm(mpg ~ poly(wt, 2) + hp, data = mtcars)
  pd <- partial_dependence(list(linear = a, quadratic = b), mtcars[, c("mpg", "wt", "hp")], "wt",
                           custom_values = list(wt = c(2, 3, 4)))
  expect_equal(sort(unique(as.character(pd$model))), c("linear", "quadratic"))
  for (nm in c("linear", "quadratic")) {
    m <- list(linear = a, quadratic = b)[[nm]]
    want <- sapply(c(2, 3, 4), function(v) mean(predict(m, transform(mtcars, wt = v))))
    expect_equal(pd[pd$model == nm, "yhat"], want, tolerance = 1e-10)
  }
  pi <- partial_dependence(a, mtcars, "wt", custom_values = list(wt = c(2, 3, 4)), interval = 0.9, n_boot = 50)
  expect_true(all(pi$lower <= pi$yhat + 1e-12 & pi$yhat <= pi$upper + 1e-12))
  expect_true(all(pi$upper > pi$lower))
  expect_error(partial_dependence(a, mtcars, "wt", interval = 2), "interval")
})

test_that("plots of views: one coloured curve per model or group, a ribbon for the interval, the missing point", {
  skip_if_no_pdpx()
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  lin <- lm(mpg ~ wt + hp, data = mtcars)
  quad <- lm(mpg ~ poly(wt, 2) + hp, data = mtcars)
  layer_data_of <- function(p, geom) {
    i <- which(vapply(p$layers, function(l) inherits(l$geom, geom), TRUE))
    expect_length(i, 1)
    ggplot2::layer_data(p, i)
  }

  both <- partial_dependence(list(linear = lin, quadratic = quad), mtcars, "wt", grid_resolution = 5)
  p <- autoplot(both)
  lines <- layer_data_of(p, "GeomLine")
  expect_equal(length(unique(lines$colour)), 2)  # one colour per model
  expect_equal(nrow(lines), nrow(both))
  expect_equal(p$labels$colour, "model")

  grouped <- partial_dependence(lin, mtcars, "wt", by = "cyl", grid_resolution = 4)
  g <- layer_data_of(autoplot(grouped), "GeomLine")
  expect_equal(length(unique(g$colour)), 3)  # cyl has 3 levels

  band <- partial_dependence(lin, mtcars, "wt", interval = 0.9, n_boot = 50, grid_resolution = 5)
  pb <- autoplot(band)
  rib <- layer_data_of(pb, "GeomRibbon")
  expect_equal(rib$ymin, band$lower[band$kind == "average"], tolerance = 1e-12)
  expect_equal(rib$ymax, band$upper[band$kind == "average"], tolerance = 1e-12)
  expect_match(pb$labels$caption, "90% bootstrap")

  d <- transform(airquality, Month = factor(Month))
  f <- function(object, newdata) ifelse(is.na(newdata$Solar.R), 40, 0.1 * newdata$Solar.R) + newdata$Temp
  miss <- partial_dependence(NULL, d, "Solar.R", pred_fun = f, grid_resolution = 5)
  pm <- autoplot(miss)
  pt <- layer_data_of(pm, "GeomPoint")
  expect_equal(pt$y, miss$yhat[is.na(miss$x_1)], tolerance = 1e-12)
  expect_gt(pt$x, max(miss$x_1, na.rm = TRUE))  # right of the numeric grid
  expect_equal(nrow(layer_data_of(pm, "GeomLine")), 5)  # the line leaves the missing point out
  ggplot2::ggplot_build(pm)

  tiles <- autoplot(partial_dependence(list(linear = lin, quadratic = quad), mtcars, c("wt", "hp"),
                                       grid_resolution = 3))
  expect_s3_class(tiles$facet, "FacetWrap")
  ggplot2::ggplot_build(tiles)
})
