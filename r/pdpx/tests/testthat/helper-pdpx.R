# A plain R brute-force loop: for every grid point of a pdpx result, set the
# feature(s) of `data` to it, predict, and average (or keep each row for ICE).
# Returns the value pdpx should have in each row of the result.
r_brute <- function(model, data, pd, predict_fun = function(m, d) stats::predict(m, d)) {
  meta <- attr(pd, "pdpx")
  feats <- meta$features
  df <- as.data.frame(pd)
  key <- paste0("x_", seq_along(feats))
  pts <- unique(df[, key, drop = FALSE])
  expected <- rep(NA_real_, nrow(df))
  for (k in seq_len(nrow(pts))) {
    d2 <- data
    for (j in seq_along(feats)) {
      v <- pts[[key[j]]][k]
      if (meta$categorical[j]) {
        value <- meta$grid_values[[j]][v]  # x_j is the 1-based category position
        if (is.logical(data[[feats[j]]])) value <- as.logical(value)
        d2[[feats[j]]][] <- value
      } else {
        d2[[feats[j]]] <- v
      }
    }
    p <- as.matrix(predict_fun(model, d2))
    if (ncol(p) == 1) colnames(p) <- meta$outputs
    if (isTRUE(meta$centered)) stop("r_brute compares uncentered results")
    sel <- which(Reduce(`&`, lapply(key, function(c) df[[c]] == pts[[c]][k])))
    for (i in sel) {
      expected[i] <- if (df$kind[i] == "average") mean(p[, df$output[i]]) else p[df$row[i], df$output[i]]
    }
  }
  expected
}

expect_brute <- function(model, data, pd, ...) {
  expected <- r_brute(model, data, pd, ...)
  expect_false(anyNA(expected))
  expect_lt(max(abs(pd$yhat - expected)), 1e-9)
}

prob <- function(m, d) stats::predict(m, d, type = "prob")

skip_if_no_pdpx <- function() {
  # In CI (CI=true) nothing may skip: a missing Python side is a failure there.
  if (!nzchar(Sys.getenv("CI")) && !pdpx_available()) skip("the pdpx Python package is not importable")
}

# pdp's definition of partial(), written plainly: for each grid point, set the predictor(s) in
# `train`, compute each row's number (`row_value(data)`: the prediction, or the centered logit or
# probability of a class), and average (mean(na.rm = TRUE), as pdp) or keep them (ICE).
pdp_loop <- function(grid, train, pred.var, row_value, ice = FALSE) {
  vals <- lapply(seq_len(nrow(grid)), function(i) {
    d <- train
    for (v in pred.var) d[[v]] <- rep(grid[[v]][i], nrow(d))
    row_value(d)
  })
  if (ice) unlist(vals) else vapply(vals, mean, 0, na.rm = TRUE)
}

# pdp's centered logit of column k of a probability matrix (0 read as machine epsilon).
logit_col <- function(p, k) {
  eps <- .Machine$double.eps
  lp <- log(ifelse(p > 0, p, eps))
  lp[, k] - rowMeans(lp)
}

# A partial() result against the definition: pdpx's class, then the class pdp 0.8.2 gives it
# ("partial", "ice" or "cice"), then "data.frame", and its numbers to `tol`. `shift`: what pdp adds to centered
# probability curves (0.5).
expect_partial <- function(res, train, row_value, tol = 1e-8, shift = 0) {
  vars <- setdiff(names(res), c("yhat", "yhat.id"))
  if (!"yhat.id" %in% names(res)) {
    expect_s3_class(res, c("pdpx_partial", "partial", "data.frame"), exact = TRUE)
    want <- pdp_loop(res[vars], train, vars, row_value)
  } else {
    expect_true(identical(class(res), c("pdpx_ice", "ice", "data.frame")) ||
                  identical(class(res), c("pdpx_cice", "cice", "data.frame")))
    grid <- res[res$yhat.id == res$yhat.id[1], vars, drop = FALSE]
    n <- nrow(train)
    expect_equal(res$yhat.id, rep(seq_len(n), each = nrow(grid)))
    m <- matrix(pdp_loop(grid, train, vars, row_value, ice = TRUE), nrow = n)
    if (inherits(res, "cice")) m <- m - m[, 1] + shift
    want <- as.vector(t(m))
  }
  expect_false(anyNA(want))
  expect_lt(max(abs(res$yhat - want)), tol)
}

# 2-way grids on small random data leave cells without rows; pdpx says so in a warning, which
# these tests (about the numbers) do not need.
without_support_warning <- function(expr) {
  withCallingHandlers(expr, warning = function(w) {
    if (grepl("do not occur in the data", conditionMessage(w))) invokeRestart("muffleWarning")
  })
}
