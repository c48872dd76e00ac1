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
