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
