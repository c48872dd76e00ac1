#' Where the average misleads: heterogeneity, regions and explained variance
#'
#' What a partial dependence curve, an average, hides; computed by pdpx in Python
#' (`pdpx.heterogeneity`, `pdpx.regions`, `pdpx.explained_variance`) for the same models as
#' [partial_dependence()]: randomForest, ranger and gbm read as trees (the `exact` engine),
#' any other model through its `predict` (or `pred_fun`).
#'
#' * `heterogeneity()`: for each feature, every row's ICE curve centered on its own mean
#'   over the grid; the variance across rows of the centered curves at each grid point (a
#'   curve), and its mean over the grid points (`heterogeneity`, one number per feature and
#'   output; `sd` its square root). 0: the feature acts additively.
#' * `regions()`: splits the rows by the other features (thresholds, sets of levels, the
#'   missing values) where `feature`'s ICE curves disagree, up to `max_depth` splits, each
#'   removing at least `min_gain` of its heterogeneity; each region's rule, rows,
#'   heterogeneity and PD curve.
#' * `explained_variance()`: the share of the variance of the predictions (R^2) kept by the
#'   sum of the centered 1-way PD curves, then with the `pairs` that raise it most and the
#'   regions of `region_features` features (a ledger of what each step bought), and 3-way H
#'   for triples of the `threeway` features with the largest overall H.
#'
#' @inheritParams partial_dependence
#' @param features Column names of `data` (default: a formula model's predictors, else
#'   every column with a grid).
#' @param feature For `regions()`: the column whose curves are split; several column names
#'   (or `NULL`, every column) return a list of class `pdpx_regions_set` holding each
#'   feature's `pdpx_regions` by name (on trees their curves come from one walk over the rows).
#' @param grid_resolution Grid points per numeric feature (20 here).
#' @param max_depth,split_features,min_gain,min_rows For `regions()`: splits from the
#'   root to a region; the columns the rows may be split by (default: every other one);
#'   the smallest share of the feature's heterogeneity a split must remove; rows each
#'   side keeps at least (default: 2\% of the rows, at least 10).
#' @param pairs,region_features,threeway For `explained_variance()`: how many pairs are
#'   added, how many features get regional curves, and 3-way H among how many features
#'   (below 3: none).
#' @param sample,random_state For `explained_variance()`: compute on this many randomly
#'   chosen rows (as [h_statistic()]), and the seed.
#' @param ... Further options of the Python function, by their Python names (e.g.
#'   `target`, `sample_weight`, `method`).
#' @return `heterogeneity()`: a list of class `pdpx_heterogeneity` with data.frames
#'   `table` (`feature`, `output`, `heterogeneity`, `sd`, `feature_type`, `n_grid`,
#'   largest first) and `curves` (`feature`, `output`, `feature_type`, `x`, `label`,
#'   `variance`, `average` the PD, `heterogeneity`). `regions()`: a list of class
#'   `pdpx_regions` with `regions` (`region`, `output`, `rule`, `n_rows`,
#'   `heterogeneity`, `stopped`), `splits` (`depth`, `feature`, `kind`, `op`, `threshold`,
#'   `gain`, `left`, `right`), `curves` (each region's PD: `region`, `rule`, `x`, `label`,
#'   `output`, `yhat`, ...), `region` (each row of `data`'s region) and `removed` (the
#'   share of the heterogeneity the regions remove). `explained_variance()`: a list of
#'   class `pdpx_explained` with `ledger` (`step`, `what`, `added`, `builds_on`,
#'   `output`, `r2`, `gain`) and `threeway` (`feature_1`..`feature_3`, `output`, `h2`,
#'   `h`). Each also holds `method`, `n_rows` and `notes`; `autoplot()` and `plot()` draw it.
#' @examples
#' # (runs where the pdpx Python package is importable: see pdpx_python())
#' if (pdpx_available()) {
#'   set.seed(1)
#'   d <- data.frame(x1 = runif(300, -1, 1), x2 = runif(300, -1, 1), x3 = runif(300, -1, 1))
#'   fit <- lm(y ~ x1 * I(x2 > 0) + x3, data = transform(d, y = 3 * x1 * sign(x2) + x3))
#'   h <- heterogeneity(fit, d, c("x1", "x2", "x3"))
#'   h$table
#'   r <- regions(fit, d, "x1")
#'   r$regions  # split on x2 near 0
#'   explained_variance(fit, d, c("x1", "x2", "x3"), threeway = 0)$ledger
#'   plot(r)
#' }
#' @name heterogeneity
NULL

#' @rdname heterogeneity
#' @export
heterogeneity <- function(object, data, features = NULL, grid_resolution = 20L, pred_fun = NULL, n_trees = NULL,
                          ...) {
  api <- .enter_api("heterogeneity")
  on.exit(.leave_api(api), add = TRUE)
  .check_count(grid_resolution, "grid_resolution", min = 2)
  out <- .explain_call("heterogeneity", object, data, features, pred_fun, n_trees,
                       c(list(grid_resolution = as.integer(grid_resolution)), list(...)))
  .spread_result(out, list(table = .decode_frame(out$table), curves = .decode_frame(out$curves)),
                 "pdpx_heterogeneity")
}

#' @rdname heterogeneity
#' @export
regions <- function(object, data, feature, max_depth = 2L, split_features = NULL, min_gain = 0.1, min_rows = NULL,
                    grid_resolution = 20L, pred_fun = NULL, n_trees = NULL, ...) {
  api <- .enter_api("regions")
  on.exit(.leave_api(api), add = TRUE)
  if (missing(feature) || (!is.null(feature) && (!is.character(feature) || !length(feature) || anyNA(feature)))) {
    .stop("feature must be column names of data (e.g. \"x1\", or c(\"x1\", \"x2\")), or NULL for every column",
          call. = FALSE)
  }
  .check_count(max_depth, "max_depth", min = 0)
  .check_count(grid_resolution, "grid_resolution", min = 2)
  if (!is.null(min_rows)) .check_count(min_rows, "min_rows", min = 1)
  if (!is.numeric(min_gain) || length(min_gain) != 1 || is.na(min_gain) || min_gain < 0 || min_gain >= 1) {
    .arg_error("min_gain", min_gain, "a share from 0 to below 1 (e.g. 0.1)")
  }
  opts <- list(max_depth = as.integer(max_depth), min_gain = as.numeric(min_gain),
               min_rows = if (is.null(min_rows)) NULL else as.integer(min_rows),
               split_features = if (is.null(split_features)) NULL else as.list(split_features),
               grid_resolution = as.integer(grid_resolution))
  out <- .explain_call("regions", object, data, feature, pred_fun, n_trees, c(opts, list(...)))
  if (is.null(out$each)) return(.one_region_set(out))
  each <- lapply(out$each, .one_region_set)
  structure(stats::setNames(each, .as_chr(out$features)), class = "pdpx_regions_set")
}

.one_region_set <- function(out) {
  regions <- .decode_frame(out$regions)
  regions$rule <- .r_rule(regions$rule)
  splits <- .decode_frame(out$splits)
  for (side in c("left", "right")) splits[[side]] <- .r_rule(splits[[side]])
  curves <- .decode_frame(out$curves)
  if (!is.null(curves$rule)) curves$rule <- .r_rule(curves$rule)
  .spread_result(out, list(feature = out$meta$feature, regions = regions,
                           splits = splits, curves = curves,
                           region = .decode_frame(out$membership)$region, removed = out$meta$removed),
                 "pdpx_regions")
}

#' @rdname heterogeneity
#' @export
explained_variance <- function(object, data, features = NULL, pairs = 3L, region_features = 2L, threeway = 3L,
                               sample = NULL, random_state = 0L, pred_fun = NULL, n_trees = NULL, ...) {
  api <- .enter_api("explained_variance")
  on.exit(.leave_api(api), add = TRUE)
  for (nm in c("pairs", "region_features", "threeway", "random_state")) .check_count(get(nm), nm, min = 0)
  if (!is.null(sample)) .check_count(sample, "sample", min = 2)
  opts <- list(pairs = as.integer(pairs), region_features = as.integer(region_features),
               threeway = as.integer(threeway), sample = if (is.null(sample)) NULL else as.integer(sample),
               random_state = as.integer(random_state))
  out <- .explain_call("explained_variance", object, data, features, pred_fun, n_trees, c(opts, list(...)))
  .spread_result(out, list(ledger = .decode_frame(out$ledger), threeway = .decode_frame(out$threeway)),
                 "pdpx_explained")
}

.spread_result <- function(out, parts, class) {
  meta <- list(method = out$meta$method, n_rows = as.integer(out$meta$n_rows), notes = .as_chr(out$meta$notes))
  structure(c(parts, meta), class = class)
}

#' @export
print.pdpx_heterogeneity <- function(x, ...) {
  cat(sprintf("<pdpx heterogeneity of the ICE curves: %d rows, method %s>\n", x$n_rows, x$method))
  print(x$table, row.names = FALSE)
  invisible(x)
}

#' @export
print.pdpx_regions <- function(x, ...) {
  cat(sprintf("<pdpx regions of %s: %d region(s), %.1f%% of its heterogeneity removed, method %s>\n",
              x$feature, length(unique(x$regions$region)), 100 * x$removed, x$method))
  print(x$regions[, c("region", "output", "rule", "n_rows", "heterogeneity")], row.names = FALSE)
  invisible(x)
}

#' @export
print.pdpx_explained <- function(x, ...) {
  cat(sprintf("<pdpx explained variance: %d rows, method %s>\n", x$n_rows, x$method))
  print(x$ledger[, c("step", "what", "output", "r2", "gain")], row.names = FALSE)
  if (nrow(x$threeway)) {
    cat("3-way H:\n")
    print(x$threeway, row.names = FALSE)
  }
  invisible(x)
}

#' @export
as.data.frame.pdpx_heterogeneity <- function(x, ...) x$table

#' @export
as.data.frame.pdpx_regions <- function(x, ...) x$regions

#' @export
print.pdpx_regions_set <- function(x, ...) {
  cat(sprintf("<pdpx regions of %d features>\n", length(x)))
  for (f in names(x)) {
    r <- x[[f]]
    rules <- unique(r$regions$rule)
    cat(sprintf("  %s: %d region(s), %.1f%% of its heterogeneity removed%s\n", f, length(rules), 100 * r$removed,
                if (length(rules) > 1) paste0(" (", paste(rules, collapse = " | "), ")") else ""))
  }
  invisible(x)
}

#' @export
as.data.frame.pdpx_regions_set <- function(x, ...) {
  do.call(rbind, lapply(names(x), function(f) cbind(feature = f, x[[f]]$regions, stringsAsFactors = FALSE)))
}

#' @export
as.data.frame.pdpx_explained <- function(x, ...) x$ledger

#' Plot heterogeneity, regions and the explained-variance ledger
#'
#' `autoplot()` returns a ggplot; `plot()` draws it. A [heterogeneity()] result: bars of
#' each feature's heterogeneity (`which = "bars"`), or each feature's variance curve over
#' its grid (`which = "curves"`). A [regions()] result: each region's PD curve, one panel
#' per region on a shared axis. An [explained_variance()] result: bars of R^2 by step.
#' Several outputs get one panel (or colour) each.
#'
#' @param object,x A result of [heterogeneity()], [regions()] or [explained_variance()].
#' @param which For a heterogeneity result: `"bars"` or `"curves"`.
#' @param ... Not used.
#' @return `autoplot()`: a ggplot object. `plot()`: the same, invisibly, after drawing it.
#' @examples
#' if (pdpx_available()) {
#'   fit <- lm(mpg ~ wt * hp, data = mtcars)
#'   autoplot(heterogeneity(fit, mtcars, c("wt", "hp")), which = "curves")
#' }
#' @name autoplot.pdpx_heterogeneity
#' @rawNamespace S3method(ggplot2::autoplot, pdpx_heterogeneity)
autoplot.pdpx_heterogeneity <- function(object, which = c("bars", "curves"), ...) {
  which <- .check_choice(which, "which", c("bars", "curves"), several = missing(which))
  if (which == "bars") {
    d <- object$table
    d$feature <- factor(d$feature, levels = rev(unique(d$feature)))
    p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$heterogeneity, y = .data$feature)) +
      ggplot2::geom_col(fill = "#5b84b1") + ggplot2::labs(x = "heterogeneity of the ICE curves", y = NULL)
    if (length(unique(d$output)) > 1) p <- p + ggplot2::facet_wrap("output")
  } else {
    d <- object$curves
    p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$x, y = .data$variance, colour = .data$output)) +
      ggplot2::geom_line() + ggplot2::geom_point(size = 0.8) +
      ggplot2::facet_wrap("feature", scales = "free_x") +
      ggplot2::labs(x = NULL, y = "variance of the centered ICE curves")
    if (length(unique(d$output)) == 1) p <- p + ggplot2::guides(colour = "none")
  }
  p + ggplot2::theme_bw()
}

#' @rdname autoplot.pdpx_heterogeneity
#' @rawNamespace S3method(ggplot2::autoplot, pdpx_regions)
autoplot.pdpx_regions <- function(object, ...) {
  d <- object$curves
  d$panel <- factor(sprintf("%d: %s (n = %d)", d$region, d$rule, d$n_rows))
  d$panel <- factor(d$panel, levels = unique(d$panel[order(d$region)]))
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$x, y = .data$yhat, colour = .data$output)) +
    ggplot2::geom_line() + ggplot2::geom_point(size = 0.8) +
    ggplot2::facet_wrap("panel", labeller = ggplot2::label_wrap_gen(40)) +
    ggplot2::labs(x = object$feature, y = "partial dependence in the region")
  if (length(unique(d$output)) == 1) p <- p + ggplot2::guides(colour = "none")
  p + ggplot2::theme_bw()
}

#' @rdname autoplot.pdpx_heterogeneity
#' @rawNamespace S3method(ggplot2::autoplot, pdpx_explained)
autoplot.pdpx_explained <- function(object, ...) {
  d <- object$ledger
  d$step_label <- factor(paste0(d$step, ". ", d$what), levels = rev(unique(paste0(d$step, ". ", d$what))))
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$r2, y = .data$step_label)) +
    ggplot2::geom_col(fill = "#5b84b1") + ggplot2::labs(x = "R\u00b2 of the predictions kept", y = NULL)
  if (length(unique(d$output)) > 1) p <- p + ggplot2::facet_wrap("output")
  p + ggplot2::theme_bw()
}

#' @rdname autoplot.pdpx_heterogeneity
#' @export
plot.pdpx_heterogeneity <- function(x, ...) .draw(autoplot.pdpx_heterogeneity(x, ...))

#' @rdname autoplot.pdpx_heterogeneity
#' @export
plot.pdpx_regions <- function(x, ...) .draw(autoplot.pdpx_regions(x, ...))

#' @rdname autoplot.pdpx_heterogeneity
#' @export
plot.pdpx_explained <- function(x, ...) .draw(autoplot.pdpx_explained(x, ...))

.draw <- function(p) {
  print(p)
  invisible(p)
}
