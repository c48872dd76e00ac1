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
