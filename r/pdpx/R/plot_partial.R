#' Plot a pdp-style partial dependence
#'
#' ggplot2 figures of [partial()] results (pdp's classes `partial`, `ice` and
#' `cice`, pdpx's `pdpx_partial`, `pdpx_ice` and `pdpx_cice`): one predictor gives a
#' line (points for a factor), ICE and centered ICE curves in grey, lighter the more
#' curves there are, with their average (the partial dependence) on top in red; two
#' predictors give a
#' filled grid (only the points kept by `chull = TRUE`, when used), optionally
#' with contour lines. A survival model's result (a `time` column) of one predictor
#' draws one line per time, coloured by time.
#'
#' @param object,x A `pdpx_partial`, `pdpx_ice` or `pdpx_cice` data.frame from [partial()].
#' @param rug Tick marks at the deciles, minimum and maximum of the predictor's
#'   training values (as pdp draws them).
#' @param alpha Opacity of ICE curves; `NULL` (the default): lighter the more curves
#'   there are (`10 / curves`, between 0.02 and 0.6).
#' @param smooth Add a loess smooth (one predictor).
#' @param contour,contour.color Contour lines on a 2-way plot.
#' @param plot.pdp With ICE curves: draw their average too.
#' @param ... Not used.
#' @return `autoplot()`: a ggplot. `plot()`: the same, invisibly, after drawing it.
#' @rawNamespace S3method(ggplot2::autoplot, pdpx_partial)
autoplot.pdpx_partial <- function(object, rug = FALSE, alpha = NULL, smooth = FALSE, contour = FALSE,
                             contour.color = "white", plot.pdp = TRUE, ...) {
  vars <- setdiff(names(object), c("yhat", "yhat.id"))
  d <- as.data.frame(unclass(object)[c(vars, "yhat", if ("yhat.id" %in% names(object)) "yhat.id")],
                     check.names = FALSE)
  train <- attr(object, "train")
  if ("time" %in% vars && length(vars) == 2) return(.plot_partial_times(d, setdiff(vars, "time"), alpha, plot.pdp))
  if (length(vars) == 1) {
    v <- vars[1]
    d$x <- d[[v]]
    p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$x, y = .data$yhat))
    if ("yhat.id" %in% names(d)) {
      if (is.null(alpha)) alpha <- .ice_alpha(length(unique(d$yhat.id)))
      p <- p + ggplot2::geom_line(ggplot2::aes(group = .data$yhat.id), colour = "grey40", alpha = alpha)
      if (plot.pdp) {
        avg <- stats::aggregate(d["yhat"], by = list(x = d$x), FUN = mean)
        p <- p + ggplot2::geom_line(data = avg, ggplot2::aes(group = 1), colour = "red", linewidth = 1)
      }
    } else if (is.factor(d$x) || is.character(d$x)) {
      p <- p + ggplot2::geom_point(size = 2.5)
    } else {
      p <- p + ggplot2::geom_line()
    }
    if (smooth) p <- p + ggplot2::geom_smooth(method = "loess", formula = y ~ x, se = FALSE)
    if (rug && !is.null(train) && is.numeric(train[[v]])) {
      r <- data.frame(x = stats::quantile(train[[v]], probs = 0:10 / 10, na.rm = TRUE, names = FALSE))
      p <- p + ggplot2::geom_rug(data = r, ggplot2::aes(x = .data$x), inherit.aes = FALSE, sides = "b")
    }
    return(p + ggplot2::labs(x = v, y = "yhat") + ggplot2::theme_bw())
  }
  if (length(vars) == 2) {
    d$x1 <- d[[vars[1]]]
    d$x2 <- d[[vars[2]]]
    p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$x1, y = .data$x2, z = .data$yhat, fill = .data$yhat)) +
      ggplot2::geom_tile() + ggplot2::scale_fill_viridis_c(name = "yhat")
    if (contour && is.numeric(d$x1) && is.numeric(d$x2)) {
      p <- p + ggplot2::geom_contour(colour = contour.color)
    }
    if (rug && !is.null(train)) {
      for (j in 1:2) {
        if (!is.numeric(train[[vars[j]]])) next
        r <- data.frame(x = stats::quantile(train[[vars[j]]], probs = 0:10 / 10, na.rm = TRUE, names = FALSE))
        p <- p + if (j == 1) ggplot2::geom_rug(data = r, ggplot2::aes(x = .data$x), inherit.aes = FALSE, sides = "b")
                 else ggplot2::geom_rug(data = r, ggplot2::aes(y = .data$x), inherit.aes = FALSE, sides = "l")
      }
    }
    return(p + ggplot2::labs(x = vars[1], y = vars[2]) + ggplot2::theme_bw())
  }
  .stop("plots show 1 or 2 predictors; this result has ", length(vars), call. = FALSE)
}

# A survival model's partial() of one predictor: one line per time, coloured by time (ICE curves in grey under
# them).
.plot_partial_times <- function(d, v, alpha, plot.pdp) {
  d$x <- d[[v]]
  d$time <- factor(d$time, levels = sort(unique(d$time)))
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$x, y = .data$yhat))
  if ("yhat.id" %in% names(d)) {
    if (is.null(alpha)) alpha <- .ice_alpha(length(unique(d$yhat.id)))
    p <- p + ggplot2::geom_line(ggplot2::aes(group = interaction(.data$yhat.id, .data$time)), colour = "grey40",
                                alpha = alpha)
    if (!plot.pdp) return(p + ggplot2::labs(x = v, y = "yhat") + ggplot2::theme_bw())
    d <- stats::aggregate(d["yhat"], by = list(x = d$x, time = d$time), FUN = mean)
  }
  p <- p + if (is.factor(d$x) || is.character(d$x)) ggplot2::geom_point(data = d, ggplot2::aes(colour = .data$time))
           else ggplot2::geom_line(data = d, ggplot2::aes(colour = .data$time, group = .data$time), linewidth = 1)
  p + ggplot2::labs(x = v, y = "yhat", colour = "time") + ggplot2::theme_bw()
}

#' @rdname autoplot.pdpx_partial
#' @rawNamespace S3method(ggplot2::autoplot, pdpx_ice)
autoplot.pdpx_ice <- function(object, ...) autoplot.pdpx_partial(object, ...)

#' @rdname autoplot.pdpx_partial
#' @rawNamespace S3method(ggplot2::autoplot, pdpx_cice)
autoplot.pdpx_cice <- function(object, ...) autoplot.pdpx_partial(object, ...)

#' @rdname autoplot.pdpx_partial
#' @export
plot.pdpx_partial <- function(x, ...) {
  p <- autoplot.pdpx_partial(x, ...)
  print(p)
  invisible(p)
}

#' @rdname autoplot.pdpx_partial
#' @export
plot.pdpx_ice <- function(x, ...) plot.pdpx_partial(x, ...)

#' @rdname autoplot.pdpx_partial
#' @export
plot.pdpx_cice <- function(x, ...) plot.pdpx_partial(x, ...)

# The opacity of n ICE curves: lighter the more there are, so that where many curves run
# together reads darker than a lone curve, and the average drawn over them stays visible.
.ice_alpha <- function(n) max(0.02, min(0.6, 10 / max(1, n)))

# pdp's default engine: lattice (a recommended package shipped with R).
.lattice_partial <- function(res, pred.var, levelplot = TRUE, contour = FALSE, alpha = NULL) {
  if (!requireNamespace("lattice", quietly = TRUE)) {
    .stop("plot.engine = \"lattice\" needs the lattice package; use plot.engine = \"ggplot2\"", call. = FALSE)
  }
  d <- as.data.frame(unclass(res)[setdiff(names(res), character(0))], check.names = FALSE)
  if (length(pred.var) == 1) {
    f <- stats::as.formula(paste("yhat ~", pred.var))
    if ("yhat.id" %in% names(d)) {
      if (is.null(alpha)) alpha <- .ice_alpha(length(unique(d$yhat.id)))
      return(lattice::xyplot(f, data = d, groups = d$yhat.id, type = "l", col = "black", alpha = alpha))
    }
    return(lattice::xyplot(f, data = d, type = if (is.numeric(d[[pred.var]])) "l" else "p"))
  }
  f <- stats::as.formula(paste("yhat ~", pred.var[1], "*", pred.var[2]))
  if (levelplot) lattice::levelplot(f, data = d, contour = contour) else lattice::wireframe(f, data = d)
}
