#' Is this interaction real? Friedman & Popescu's test of H
#'
#' The null distribution of Friedman's H statistic (Friedman & Popescu 2008,
#' section 8.3), as Python's `pdpx.h_test` computes it, with the refits done in
#' R: the model's additive part (the mean prediction plus every predictor's
#' 1-way partial dependence at the row's value, centered) plus residuals drawn
#' with replacement is the response of `n_null` refits, and [h_statistic()] of
#' each refit gives the null distribution of each asked feature's overall H and
#' each asked pair's H. The p-value is `(1 + #{null H >= H}) / (1 + n_null)`,
#' adjusted across the pairs (and, separately, across the features) with
#' [stats::p.adjust()].
#'
#' Residuals: `"additive"` (the default) is `y` minus the model's additive
#' part; `"in_sample"` is `y` minus the model's own predictions (Friedman &
#' Popescu's choice, too small for flexible learners, whose test then rejects
#' too often on additive data); `"out_of_fold"` is `y` minus the predictions of
#' models refitted on the other four of five folds (noise plus the model's own
#' error: a conservative test). See the Python
#' documentation, "How sure is this curve?".
#'
#' @inheritParams h_statistic
#' @param y The response the model was fitted on (default: the column of
#'   `data` named by the model's formula).
#' @param n_null Null refits; the smallest p-value is `1 / (1 + n_null)`.
#' @param adjust `"holm"`, `"fdr"` (Benjamini-Hochberg) or `"none"`.
#' @param residuals `"additive"`, `"in_sample"` or `"out_of_fold"`.
#' @param refit `function(data, y)` returning the model refitted on `data`
#'   with response `y`. Default: `stats::update(object, data = data)` with the
#'   formula's response column replaced by `y` (models fitted with a formula
#'   and a `data` argument: `lm`, `randomForest`, `ranger`, `gbm`, ...).
#' @param max_seconds Refuse the test when the first null refit (fit and H)
#'   times `n_null` would take longer; `Inf`: no limit.
#' @return A data.frame of class `pdpx_h_test`, one row per feature (overall
#'   H, `feature_2` `NA`) and pair asked, in the order asked: `feature_1`,
#'   `feature_2`, `h`, `h_null_mean`, `h_null_q95`, `p_value`, `p_adjusted`;
#'   attribute `null` holds the null H (one row per refit). `plot()` and
#'   `autoplot()` draw each H against its null distribution.
#' @examples
#' if (pdpx_available()) {
#'   fit <- lm(mpg ~ wt * hp + disp, data = mtcars)
#'   h_test(fit, mtcars, pairs = list(c("wt", "hp"), c("wt", "disp")), n_null = 19)
#' }
#' @export
h_test <- function(object, data, y = NULL, pairs = NULL, features = NULL, n_null = 99L,
                   adjust = c("holm", "fdr", "none"), residuals = c("additive", "in_sample", "out_of_fold"),
                   refit = NULL, pred_fun = NULL, sample = NULL, random_state = 0L, max_seconds = 600, ...) {
  api <- .enter_api("h_test")
  on.exit(.leave_api(api), add = TRUE)
  adjust <- .check_choice(adjust, "adjust", c("holm", "fdr", "none"), several = missing(adjust))
  residuals <- .check_choice(residuals, "residuals", c("additive", "in_sample", "out_of_fold"),
                             several = missing(residuals))
  .check_count(n_null, "n_null", min = 1)
  if (!(is.numeric(max_seconds) && length(max_seconds) == 1 && !is.na(max_seconds) && max_seconds > 0)) {
    .arg_error("max_seconds", max_seconds, "a positive number of seconds (Inf: no limit)")
  }
  if (!is.data.frame(data)) .stop("data must be the data.frame the model was fitted on")
  data <- as.data.frame(data)
  resp <- tryCatch(all.vars(stats::formula(object))[1], error = function(e) NULL)
  if (is.null(y)) {
    if (is.null(resp) || !resp %in% names(data)) .stop("pass y, the response the model was fitted on")
    y <- data[[resp]]
  }
  if (!is.numeric(y) || length(y) != nrow(data)) .stop("y must be a numeric response, one value per row of data")
  if (is.null(refit)) {
    if (is.null(resp)) .stop("pass refit = function(data, y), returning the model refitted to the response y")
    refit <- function(d, yy) {
      d[[resp]] <- yy
      stats::update(object, data = d)
    }
  }
  if (!is.function(refit)) .stop("refit must be a function(data, y) returning the refitted model")
  predict_fun <- function(m, d) as.numeric(if (is.null(pred_fun)) stats::predict(m, d) else pred_fun(m, d))
  asked <- .h_test_asked(pairs, features)
  h_feats <- unique(c(asked$features, unlist(asked$pairs)))
  h_of <- function(model) {
    h <- h_statistic(model, data, features = h_feats, pairs = if (length(asked$pairs)) asked$pairs else list(),
                     sample = sample, pred_fun = pred_fun, random_state = random_state, ...)
    .h_test_pick(h, asked)
  }
  observed <- h_of(object)
  fitted <- predict_fun(object, data)
  predictors <- setdiff(.model_predictors(object, names(data)) %||% names(data), resp)
  additive <- .additive_part(object, data, fitted, predictors, pred_fun)
  with_seed <- function(seed, code) {
    old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv()) else NULL
    on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv()) else assign(".Random.seed", old, globalenv()))
    set.seed(seed)
    code
  }
  resid <- if (residuals == "in_sample") y - fitted else if (residuals == "additive") y - additive else
    with_seed(random_state, {
    fold <- sample(rep_len(1:5, nrow(data)))
    oof <- numeric(nrow(data))
    for (k in 1:5) {
      m <- refit(data[fold != k, , drop = FALSE], y[fold != k])
      oof[fold == k] <- predict_fun(m, data[fold == k, , drop = FALSE])
    }
    y - oof
  })
  null <- matrix(NA_real_, n_null, length(observed))
  with_seed(random_state + 1L, for (b in seq_len(n_null)) {
    t0 <- proc.time()[["elapsed"]]
    y_null <- additive + resid[sample.int(length(resid), length(resid), replace = TRUE)]
    null[b, ] <- h_of(refit(data, y_null))
    secs <- proc.time()[["elapsed"]] - t0
    if (b == 1 && secs * n_null > max_seconds) {
      .stop(sprintf(paste0("the first null refit (fit and H) took %.3g s, so n_null = %d of them would take ",
                           "about %.0f s, over max_seconds = %g; lower n_null, compute H on fewer rows ",
                           "(sample =), test fewer pairs, or raise max_seconds (Inf: no limit)"),
                    secs, as.integer(n_null), secs * n_null, max_seconds))
    }
  })
  .h_test_table(asked, observed, null, adjust)
}

.h_test_asked <- function(pairs, features) {
  if (!is.null(pairs)) {
    if (is.character(pairs) && length(pairs) == 2) pairs <- list(pairs)
    ok <- is.list(pairs) && all(vapply(pairs, function(p) is.character(p) && length(p) == 2, TRUE))
    if (!ok) .arg_error("pairs", pairs, "a list of pairs of column names, e.g. list(c(\"wt\", \"hp\"))")
  }
  if (is.null(features)) features <- if (is.null(pairs)) NULL else unique(unlist(pairs))
  if (is.null(features) && is.null(pairs)) .stop("name the features or the pairs to test")
  if (is.null(pairs)) pairs <- if (length(features) > 1) utils::combn(features, 2, simplify = FALSE) else list()
  if (!length(features) && !length(pairs)) .stop("nothing to test (no features and no pairs)")
  list(features = features, pairs = pairs)
}

.h_test_pick <- function(h, asked) {
  over <- stats::setNames(h$overall$h, h$overall$feature)
  key <- function(a, b) paste(sort(c(a, b)), collapse = "\r")
  pair <- stats::setNames(h$pairwise$h, mapply(key, h$pairwise$feature_1, h$pairwise$feature_2))
  c(unname(over[asked$features]), vapply(asked$pairs, function(p) unname(pair[[key(p[1], p[2])]]), 0))
}

# The model's additive part at every row: the mean prediction plus each predictor's 1-way PD at the row's value,
# centered (each PD computed at its column's distinct values).
.additive_part <- function(object, data, fitted, predictors, pred_fun) {
  out <- rep(mean(fitted), nrow(data))
  for (col in predictors) {
    x <- data[[col]]
    values <- unique(x[!is.na(x)])
    if (length(values) < 2) next
    custom <- stats::setNames(list(if (is.numeric(x)) sort(values) else values), col)
    p <- as.data.frame(partial_dependence(object, data, col, custom_values = custom, pred_fun = pred_fun))
    at <- if (is.numeric(x)) match(x, p$x_1) else match(as.character(x), p$label_1)
    if (anyNA(at)) .stop("the partial dependence of ", col, " has no value at some of its rows' values")
    v <- p$yhat[at]
    out <- out + v - mean(v)
  }
  out
}

.h_test_table <- function(asked, observed, null, adjust) {
  nf <- length(asked$features)
  p <- (1 + colSums(null >= matrix(observed - 1e-12, nrow(null), length(observed), byrow = TRUE))) / (1 + nrow(null))
  how <- c(holm = "holm", fdr = "BH", none = "none")[[adjust]]
  idx_f <- seq_len(nf)
  idx_p <- setdiff(seq_along(p), idx_f)
  p_adj <- c(stats::p.adjust(p[idx_f], how), stats::p.adjust(p[idx_p], how))
  out <- data.frame(
    feature_1 = c(asked$features, vapply(asked$pairs, `[`, "", 1)),
    feature_2 = c(rep(NA_character_, nf), vapply(asked$pairs, `[`, "", 2)),
    h = observed, h_null_mean = colMeans(null),
    h_null_q95 = apply(null, 2, stats::quantile, probs = 0.95, names = FALSE),
    p_value = p, p_adjusted = p_adj, stringsAsFactors = FALSE)
  structure(out, class = c("pdpx_h_test", "data.frame"), null = null, adjust = adjust)
}

#' @export
print.pdpx_h_test <- function(x, ...) {
  cat(sprintf("<pdpx test of Friedman's H: %d null refits, p-values adjusted: %s>\n", nrow(attr(x, "null")),
              attr(x, "adjust")))
  print(as.data.frame(unclass(x)[names(x)], stringsAsFactors = FALSE), row.names = FALSE)
  invisible(x)
}

#' @rdname h_test
#' @param x,object A `pdpx_h_test` result (for `plot()` / `autoplot()`).
#' @rawNamespace S3method(ggplot2::autoplot, pdpx_h_test)
autoplot.pdpx_h_test <- function(object, ...) {
  null <- attr(object, "null")
  label <- ifelse(is.na(object$feature_2), paste(object$feature_1, "(overall)"),
                  paste(object$feature_1, "x", object$feature_2))
  label <- factor(label, levels = rev(label))
  d <- data.frame(label = label, h = object$h, p = object$p_adjusted,
                  lo = apply(null, 2, stats::quantile, probs = 0.05, names = FALSE),
                  hi = apply(null, 2, stats::quantile, probs = 0.95, names = FALSE))
  ggplot2::ggplot(d, ggplot2::aes(y = .data$label)) +
    ggplot2::geom_linerange(ggplot2::aes(xmin = .data$lo, xmax = .data$hi), linewidth = 3, colour = "grey75") +
    ggplot2::geom_point(ggplot2::aes(x = .data$h), colour = "#b1365b", size = 2.5) +
    ggplot2::geom_text(ggplot2::aes(x = .data$h, label = sprintf("p = %.2g", .data$p)), vjust = -1, size = 3) +
    ggplot2::labs(x = "H (point) and the central 90% of its null distribution (bar)", y = NULL,
                  caption = "null: refits on the model's additive part plus resampled residuals; p adjusted") +
    ggplot2::theme_bw()
}

#' @rdname h_test
#' @export
plot.pdpx_h_test <- function(x, ...) .draw(autoplot.pdpx_h_test(x, ...))
