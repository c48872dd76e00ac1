#' Plot a partial dependence
#'
#' `autoplot()` returns a ggplot of a [partial_dependence()] result; `plot()`
#' draws it. One feature: the PD line with a rug of the feature's values, ICE
#' curves in grey under it when present, lighter the more curves there are, and the
#' PD line over them (for an ICE-only result, `kind = "individual"`, the average of
#' its curves; points for categorical features). Two
#' features: a tile plot of the PD surface. Several outputs (classes) get one
#' panel each; a survival model's times (a `time` column) one line each, coloured
#' by time, in one panel (2-way: a panel per time). Results of several models or `by` groups draw one coloured curve
#' per model or group (2-way: one panel each); an `interval` draws a ribbon
#' (captioned with what the band is: the rows' bootstrap, the members' spread or
#' the quantile models); the missing-value grid point (`include_missing`) is a separate point
#' labelled "missing" at the right of the numeric axis. A `grid = "thresholds"`
#' curve is drawn as steps (the exact curve of a tree model).
#'
#' @param object,x A `pdpx_pd` data.frame from [partial_dependence()].
#' @param rug Draw the feature's values along the x axis (numeric features).
#' @param ice_alpha Opacity of the ICE curves; `NULL` (the default): lighter the
#'   more curves there are (`10 / curves`, between 0.02 and 0.6).
#' @param ... Not used.
#' @return `autoplot()`: a ggplot object. `plot()`: the same, invisibly, after drawing it.
#' @examples
#' # (runs where the pdpx Python package is importable: see pdpx_python())
#' if (pdpx_available()) {
#'   fit <- lm(mpg ~ wt * hp, data = mtcars)
#'   autoplot(partial_dependence(fit, mtcars, "wt", kind = "both", grid_resolution = 10))
#'   plot(partial_dependence(fit, mtcars, c("wt", "hp"), grid_resolution = 10))
#' }
#' @name autoplot.pdpx_pd
#' @rawNamespace S3method(ggplot2::autoplot, pdpx_pd)
autoplot.pdpx_pd <- function(object, rug = TRUE, ice_alpha = NULL, ...) {
  meta <- attr(object, "pdpx")
  if (is.null(meta)) .stop("not a pdpx partial dependence result", call. = FALSE)
  d <- .strip_pd(object)
  ylab <- if (isTRUE(meta$ale)) .ale_label(meta)
          else paste0(if (isTRUE(meta$centered)) "centered " else "", meta$response_label)
  group <- meta$stacked_by
  if (!is.null(group) && !(group %in% names(d))) group <- NULL
  timed <- is.null(group) && "time" %in% names(d) && length(meta$features) == 1 && length(unique(d$time)) > 1
  if (timed) {  # one panel, a line per time coloured by time (in time order)
    d$time <- factor(d$time, levels = sort(unique(d$time)))
    group <- "time"
  }
  p <- if (length(meta$features) == 1) .plot_1way(d, meta, attr(object, "feature_data"), rug, ice_alpha, group)
       else if (length(meta$features) == 2) .plot_2way(d, meta, ylab)
       else .stop("plots show 1 or 2 features; this result has ", length(meta$features), call. = FALSE)
  panels <- c(if (length(unique(d$output)) > 1 && !timed) "output",
              if (!is.null(group) && length(meta$features) == 2) group)
  if (length(panels)) {
    p <- p + ggplot2::facet_wrap(panels)
  }
  if (length(meta$features) == 1) p <- p + ggplot2::labs(y = ylab)
  p + ggplot2::theme_bw()
}

# ALE's axis, as Python's figure writes it: "accumulated local effect (<what>)", <what> the response, with the class
# of a single output (the probability of a class)
.ale_label <- function(meta) {
  what <- meta$response_label %||% meta$response
  outputs <- .as_chr(meta$outputs)
  if (length(outputs) == 1 && !identical(outputs, what)) {
    what <- if (identical(meta$response, "predict_proba")) paste("probability of", outputs) else paste0(what, ", ", outputs)
  }
  paste0("accumulated local effect (", what, ")")
}

.plot_1way <- function(d, meta, feature_data, rug, ice_alpha, group = NULL) {
  feature <- meta$features[1]
  categorical <- meta$categorical[1]
  missing_point <- NULL
  if (categorical) {
    d$x <- factor(d$label_1, levels = meta$grid_values[[1]])
  } else {
    d$x <- d$x_1
    # the missing-value point (x NaN): drawn apart, just right of the numeric grid
    at_missing <- is.na(d$x_1)
    if (any(at_missing)) {
      g <- meta$grid_values[[1]]
      g <- g[is.finite(g)]
      span <- if (length(g) > 1) diff(range(g)) else 1
      missing_point <- d[at_missing & d$kind == "average", , drop = FALSE]
      missing_point$x <- max(g) + 0.08 * span
      d <- d[!at_missing, , drop = FALSE]
    }
  }
  as_group <- function(v) if (is.factor(v)) v else as.character(v)
  d$.group <- if (is.null(group)) "all" else as_group(d[[group]])
  if (!is.null(missing_point)) missing_point$.group <- if (is.null(group)) "all" else as_group(missing_point[[group]])
  avg <- d[d$kind == "average", , drop = FALSE]
  ice <- d[d$kind == "individual", , drop = FALSE]
  coloured <- !is.null(group)
  line_aes <- if (coloured) ggplot2::aes(group = interaction(.data$output, .data$.group), colour = .data$.group)
              else ggplot2::aes(group = .data$output)
  p <- ggplot2::ggplot(mapping = ggplot2::aes(x = .data$x, y = .data$yhat))
  if (nrow(avg) && all(c("lower", "upper") %in% names(avg)) && any(is.finite(avg$lower))) {
    band <- if (coloured) ggplot2::aes(ymin = .data$lower, ymax = .data$upper, group = interaction(.data$output, .data$.group),
                                       fill = .data$.group)
            else ggplot2::aes(ymin = .data$lower, ymax = .data$upper, group = .data$output)
    level <- if (is.null(meta$interval)) "" else paste0(round(100 * as.double(meta$interval)), "% ")
    p <- p + if (coloured) ggplot2::geom_ribbon(data = avg, band, alpha = 0.2)
             else ggplot2::geom_ribbon(data = avg, band, fill = "#1f4e79", alpha = 0.2)
    what <- if (is.null(meta$band)) paste0(level, "bootstrap interval over the rows") else meta$band
    p <- p + ggplot2::labs(caption = paste0("band: ", what))
  }
  # grid = "thresholds": the curve is a step function; a point stands for the step (g[i-1], g[i]] of a model
  # comparing x <= t (drawn "vh") or [g[i], g[i+1]) of one comparing x < t ("hv")
  comparison <- if (!categorical && length(meta$steps)) meta$steps[[feature]] else NULL
  curve <- if (is.null(comparison)) ggplot2::geom_line
           else function(...) ggplot2::geom_step(..., direction = if (identical(comparison, "<")) "hv" else "vh")
  if (nrow(ice) && !nrow(avg)) {
    # ICE curves only: their average is the partial dependence (centered curves: the centered PD)
    keys <- list(x = ice$x, output = ice$output, .group = ice$.group)
    if (categorical) keys$label_1 <- ice$label_1
    avg <- stats::aggregate(ice["yhat"], by = keys, FUN = mean)
    avg$kind <- "average"
    if (categorical) avg$x <- factor(avg$label_1, levels = meta$grid_values[[1]])
    avg <- avg[order(avg$output, avg$.group, avg$x), , drop = FALSE]
  }
  if (nrow(ice)) {
    ice$curve <- interaction(ice$output, ice$row, ice$.group, drop = TRUE)
    if (is.null(ice_alpha)) ice_alpha <- .ice_alpha(length(unique(ice$row)))
    p <- p + curve(data = ice, ggplot2::aes(group = .data$curve), colour = "grey40",
                   alpha = ice_alpha, linewidth = 0.3)
  }
  if (nrow(avg)) {
    if (categorical) {
      p <- p + if (coloured) ggplot2::geom_point(data = avg, ggplot2::aes(colour = .data$.group), size = 2.5)
               else ggplot2::geom_point(data = avg, colour = "#1f4e79", size = 2.5)
    } else {
      p <- p + if (coloured) curve(data = avg, line_aes, linewidth = 1)
               else curve(data = avg, line_aes, colour = "#1f4e79", linewidth = 1)
    }
  }
  if (!is.null(missing_point) && nrow(missing_point)) {
    p <- p + if (coloured) ggplot2::geom_point(data = missing_point, ggplot2::aes(colour = .data$.group), shape = 17,
                                               size = 2.5)
             else ggplot2::geom_point(data = missing_point, colour = "#1f4e79", shape = 17, size = 2.5)
    p <- p + ggplot2::annotate("text", x = missing_point$x[1], y = Inf, label = "missing", vjust = 1.5, size = 3)
  }
  if (coloured) p <- p + ggplot2::labs(colour = group, fill = group)
  if (rug && !categorical && !is.null(feature_data) && feature %in% names(feature_data)) {
    v <- feature_data[[feature]]
    r <- data.frame(x = if (inherits(v, c("Date", "POSIXt"))) v else as.double(v))  # dates on a date axis
    r <- r[is.finite(as.double(r$x)), , drop = FALSE]
    p <- p + ggplot2::geom_rug(data = r, ggplot2::aes(x = .data$x), inherit.aes = FALSE, sides = "b",
                               alpha = 0.3, length = ggplot2::unit(0.02, "npc"))
  }
  p + ggplot2::labs(x = feature)
}

.plot_2way <- function(d, meta, ylab) {
  d <- d[d$kind == "average", , drop = FALSE]
  if (!nrow(d)) .stop("a 2-way plot shows the average; compute with kind = \"average\" or \"both\"", call. = FALSE)
  # one rectangle per grid cell, reaching halfway to the neighbouring grid values
  # (grids of whole numbers or quantiles are not evenly spaced); categories sit at 1..k
  scales <- list()
  for (j in 1:2) {
    x <- d[[paste0("x_", j)]]
    u <- sort(unique(x))
    edges <- if (length(u) > 1) c(u[1] - (u[2] - u[1]) / 2, (u[-1] + u[-length(u)]) / 2,
                                  u[length(u)] + (u[length(u)] - u[length(u) - 1]) / 2)
             else c(u - 0.5, u + 0.5)
    i <- match(x, u)
    d[[paste0("lo_", j)]] <- edges[i]
    d[[paste0("hi_", j)]] <- edges[i + 1]
    scale <- if (j == 1) ggplot2::scale_x_continuous else ggplot2::scale_y_continuous
    scales[[j]] <- if (meta$categorical[j]) {
      scale(breaks = seq_along(meta$grid_values[[j]]), labels = meta$grid_values[[j]], expand = c(0, 0))
    } else {
      scale(expand = c(0, 0))
    }
  }
  ggplot2::ggplot(d, ggplot2::aes(xmin = .data$lo_1, xmax = .data$hi_1, ymin = .data$lo_2, ymax = .data$hi_2,
                                  fill = .data$yhat)) +
    ggplot2::geom_rect(ggplot2::aes(colour = .data$yhat), linewidth = 0.2) +  # outline hides seams
    scales[[1]] + scales[[2]] +
    ggplot2::scale_fill_viridis_c(name = ylab) +
    ggplot2::scale_colour_viridis_c(guide = "none") +
    ggplot2::labs(x = meta$features[1], y = meta$features[2])
}

#' @rdname autoplot.pdpx_pd
#' @export
plot.pdpx_pd <- function(x, ...) {
  p <- autoplot.pdpx_pd(x, ...)
  print(p)
  invisible(p)
}

#' Plot a result with ggplot2
#'
#' `autoplot()` is ggplot2's generic: pdpx exports it so that `autoplot(pd)` works
#' with only pdpx attached, as with pdp. ggplot2 is loaded at the first plot, not
#' with pdpx (that keeps a fresh session's first partial dependence fast); once
#' it is loaded, this is [ggplot2::autoplot()] itself.
#'
#' @param object A [partial()] or [partial_dependence()] result (or anything
#'   ggplot2's `autoplot()` accepts).
#' @param ... Passed to the method: see [autoplot.pdpx_partial()] and [autoplot.pdpx_pd()].
#' @return A ggplot object.
#' @examples
#' if (pdpx_available()) {
#'   autoplot(partial(lm(mpg ~ wt, data = mtcars), pred.var = "wt", train = mtcars))
#' }
#' @export
autoplot <- function(object, ...) ggplot2::autoplot(object, ...)

# ggplot2's own generic replaces the wrapper above when ggplot2 is already loaded, so
# attaching both packages reports no masked object. The methods are registered with
# ggplot2's generic when ggplot2 loads (delayed S3 registration in NAMESPACE).
.onLoad <- function(libname, pkgname) {
  if (isNamespaceLoaded("ggplot2")) {
    assign("autoplot", getExportedValue("ggplot2", "autoplot"), envir = topenv())
  }
}

# `.data` is the pronoun of ggplot2's data mask in aes(); declared here instead of
# importing it from ggplot2 (an import would load ggplot2 with pdpx).
utils::globalVariables(".data")
