# Survival models from R (docs/survival.md, "From R"): every number is the model's own prediction written out:
# set the column to the grid value, predict, read the curve at the asked time, average over the rows.
skip_if_not_installed("survival")

surv_data <- local({
  d <- survival::veteran
  d$celltype <- factor(d$celltype)
  d$trt <- NULL
  d
})

# The value of R's step curve (values `v` at increasing `steps`) at each time: the largest step <= t.
at_times <- function(steps, v, times) v[, findInterval(times, steps), drop = FALSE]

# The definition for a 1-way result: per time and grid point, the curve of each row (`curves(model, data)`,
# rows x steps, `steps` its times) read at the time, averaged (or each row's, for ICE rows).
survival_brute <- function(model, data, pd, curves, steps) {
  meta <- attr(pd, "pdpx")
  f <- meta$features
  df <- as.data.frame(pd)
  expected <- rep(NA_real_, nrow(df))
  for (x in unique(df$x_1)) {
    d2 <- data
    d2[[f]] <- if (meta$categorical[1]) factor(meta$grid_values[[1]][x], levels = levels(data[[f]])) else x
    vals <- at_times(steps, curves(model, d2), sort(unique(df$time)))
    for (i in which(df$x_1 == x)) {
      k <- match(df$time[i], sort(unique(df$time)))
      expected[i] <- if (df$kind[i] == "average") mean(vals[, k]) else vals[df$row[i], k]
    }
  }
  expected
}

expect_survival_brute <- function(model, data, pd, curves, steps) {
  expected <- survival_brute(model, data, pd, curves, steps)
  expect_false(anyNA(expected))
  expect_lt(max(abs(pd$yhat - expected)), 1e-10)
}

test_that("ranger survival forest: cumulative hazard and survival exact, equal to ranger's predict at the times", {
  skip_if_not_installed("ranger")
  skip_if_no_pdpx()
  set.seed(3)
  rg <- ranger::ranger(survival::Surv(time, status) ~ ., data = surv_data, num.trees = 20, min.node.size = 8)
  steps <- rg$unique.death.times
  times <- c(steps[1], 30, 100.5, steps[length(steps)])  # a death time, times between, the last
  chf <- function(m, d) ranger:::predict.ranger(m, d)$chf
  surv <- function(m, d) ranger:::predict.ranger(m, d)$survival
  for (v in c("age", "karno", "celltype")) {
    hz <- partial_dependence(rg, surv_data, v, response = "cumulative_hazard", times = times, kind = "both",
                             grid_resolution = 5)
    expect_equal(attr(hz, "pdpx")$method, "exact")
    expect_equal(sort(unique(hz$time)), times)
    expect_survival_brute(rg, surv_data, hz, chf, steps)
    sv <- partial_dependence(rg, surv_data, v, response = "survival", times = times, kind = "both",
                             grid_resolution = 5)
    expect_equal(attr(sv, "pdpx")$method, "exact")
    expect_match(paste(attr(sv, "pdpx")$notes, collapse = " "), "exp(-chf) of each row", fixed = TRUE)
    expect_survival_brute(rg, surv_data, sv, surv, steps)
    brute <- partial_dependence(rg, surv_data, v, response = "survival", times = times, grid_resolution = 5,
                                method = "brute")
    expect_survival_brute(rg, surv_data, brute, surv, steps)
  }
  # default times: quantiles of the death times, said in the notes
  pd <- partial_dependence(rg, surv_data, "age", grid_resolution = 3)
  expect_equal(attr(pd, "pdpx")$response, "survival")
  expect_true(all(unique(pd$time) %in% steps))
  expect_match(paste(attr(pd, "pdpx")$notes, collapse = " "), "quantiles")
  expect_s3_class(autoplot(hz), "ggplot")
  expect_s3_class(autoplot(pd), "ggplot")
  imp <- pd_importance(rg, surv_data, features = c("age", "karno"), times = c(30, 90), response = "survival")
  expect_setequal(unique(imp$output), c("t=30", "t=90"))
  expect_equal(nrow(imp), 4)
})

test_that("ranger survival forest: bad times are refused, naming the model's range", {
  skip_if_not_installed("ranger")
  skip_if_no_pdpx()
  set.seed(3)
  rg <- ranger::ranger(survival::Surv(time, status) ~ ., data = surv_data, num.trees = 5)
  steps <- rg$unique.death.times
  expect_error(partial_dependence(rg, surv_data, "age", response = "survival", times = steps[1] / 2),
               "before the ranger forest's first death time")
  expect_error(partial_dependence(rg, surv_data, "age", response = "survival", times = max(steps) + 1),
               "past the model's last training time")
  expect_error(partial_dependence(rg, surv_data, "age", response = "survival", times = c(50, 20)),
               "strictly increasing")
  expect_error(partial_dependence(rg, surv_data, "age", response = "survival", times = "a"), "times")
  expect_error(partial_dependence(rg, surv_data, "age", response = "predict", times = 20), "response")
})

test_that("coxph: survival, cumulative hazard, risk and lp equal survfit() and predict() at the times", {
  skip_if_no_pdpx()
  cx <- survival::coxph(survival::Surv(time, status) ~ age + karno + celltype, data = surv_data)
  steps <- survival::survfit(cx, se.fit = FALSE)$time
  times <- c(steps[1], 30, 100.5, steps[length(steps)])
  curves <- function(what) function(m, d) {
    sf <- survival::survfit(m, newdata = d, se.fit = FALSE)
    t(matrix(sf[[what]], nrow = length(sf$time)))
  }
  for (v in c("age", "celltype")) {
    sv <- partial_dependence(cx, surv_data, v, response = "survival", times = times, kind = "both",
                             grid_resolution = 4)
    expect_equal(attr(sv, "pdpx")$method, "brute")
    expect_equal(sort(unique(sv$time)), times)
    expect_survival_brute(cx, surv_data, sv, curves("surv"), steps)
    hz <- partial_dependence(cx, surv_data, v, response = "cumulative_hazard", times = times, grid_resolution = 4)
    expect_survival_brute(cx, surv_data, hz, curves("cumhaz"), steps)
  }
  # the step rule is survival's own: summary(survfit(), times =) reads the same values between the steps
  pd <- partial_dependence(cx, surv_data, "karno", times = 100.5, grid_resolution = 3)
  d2 <- surv_data
  d2$karno <- pd$karno[2]
  own <- as.vector(summary(survival::survfit(cx, newdata = d2), times = 100.5)$surv)
  expect_lt(abs(pd$yhat[2] - mean(own)), 1e-10)
  risk <- partial_dependence(cx, surv_data, "karno", response = "risk", grid_resolution = 5, kind = "both")
  expect_false("time" %in% names(risk))
  expect_brute(cx, surv_data, risk, predict_fun = function(m, d) stats::predict(m, d, type = "risk"))
  lp <- partial_dependence(cx, surv_data, "karno", response = "raw", grid_resolution = 5)
  expect_brute(cx, surv_data, lp, predict_fun = function(m, d) stats::predict(m, d, type = "lp"))
  pd <- partial_dependence(cx, surv_data, "age", grid_resolution = 3)
  expect_equal(attr(pd, "pdpx")$response, "survival")
  expect_s3_class(autoplot(pd), "ggplot")
  expect_error(partial_dependence(cx, surv_data, "age", times = steps[1] / 2), "before the coxph model's first time")
  strat <- local({
    strata <- survival::strata
    survival::coxph(survival::Surv(time, status) ~ age + strata(celltype), data = surv_data)
  })
  expect_error(partial_dependence(strat, surv_data, "age"), "stratified coxph")
})

test_that("partial() of survival models: pdp-shaped rows with a time column, equal to the definition", {
  skip_if_not_installed("ranger")
  skip_if_no_pdpx()
  set.seed(4)
  rg <- ranger::ranger(survival::Surv(time, status) ~ ., data = surv_data, num.trees = 10)
  steps <- rg$unique.death.times
  times <- c(20, 90)
  p <- partial(rg, pred.var = "karno", times = times, grid.resolution = 4, train = surv_data)
  expect_s3_class(p, "pdpx_partial")
  expect_equal(names(p), c("karno", "time", "yhat"))
  expect_equal(p$time, rep(times, each = 4))
  for (i in seq_len(nrow(p))) {
    d2 <- surv_data
    d2$karno <- p$karno[i]
    s <- ranger:::predict.ranger(rg, d2)$survival[, findInterval(p$time[i], steps)]
    expect_lt(abs(p$yhat[i] - mean(s)), 1e-10)
  }
  ice <- partial(rg, pred.var = "karno", times = times, grid.resolution = 3, train = surv_data[1:5, ], ice = TRUE,
                 response = "cumulative_hazard")
  expect_s3_class(ice, "pdpx_ice")
  expect_equal(nrow(ice), 2 * 3 * 5)
  row <- ice[ice$yhat.id == 2 & ice$time == 90, ]
  d2 <- surv_data[rep(2, 3), ]
  d2$karno <- row$karno
  expect_lt(max(abs(row$yhat - ranger:::predict.ranger(rg, d2)$chf[, findInterval(90, steps)])), 1e-10)
  cice <- partial(rg, pred.var = "karno", times = times, grid.resolution = 3, train = surv_data[1:5, ], ice = TRUE,
                  center = TRUE)
  expect_equal(cice$yhat[!duplicated(paste(cice$time, cice$yhat.id))], rep(0, 10))
  expect_s3_class(autoplot(p), "ggplot")
  expect_s3_class(autoplot(ice), "ggplot")
  cx <- survival::coxph(survival::Surv(time, status) ~ age + karno + celltype, data = surv_data)
  risk <- partial(cx, pred.var = "celltype", response = "risk", train = surv_data)
  expect_equal(names(risk), c("celltype", "yhat"))
  expected <- vapply(levels(surv_data$celltype), function(l) {
    d2 <- surv_data
    d2$celltype <- factor(l, levels = levels(surv_data$celltype))
    mean(stats::predict(cx, d2, type = "risk"))
  }, 0)
  expect_lt(max(abs(risk$yhat - expected)), 1e-10)
  lmfit <- lm(time ~ age, data = surv_data)
  expect_error(partial(lmfit, pred.var = "age", times = 10, train = surv_data), "for survival models")
})
