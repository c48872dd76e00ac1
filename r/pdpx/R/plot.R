#' Plot a partial dependence
#'
#' `autoplot()` returns a ggplot of a [partial_dependence()] result; `plot()`
#' draws it. One feature: the PD line with a rug of the feature's values, ICE
#' curves in grey under it when present (points for categorical features). Two
#' features: a tile plot of the PD surface. Several outputs (classes) get one
#' panel each.
#'
#' @param object,x A `pdpx_pd` data.frame from [partial_dependence()].
#' @param rug Draw the feature's values along the x axis (numeric features).
#' @param ice_alpha Transparency of the ICE curves.
#' @param ... Not used.
#' @return `autoplot()`: a ggplot object. `plot()`: the same, invisibly, after drawing it.
#' @examples
#' \dontrun{
#' library(randomForest)
#' rf <- randomForest(mpg ~ ., data = mtcars, ntree = 100)
#' autoplot(partial_dependence(rf, mtcars, "wt", kind = "both"))
#' plot(partial_dependence(rf, mtcars, c("wt", "hp"), grid_resolution = 20))
#' }
#' @name autoplot.pdpx_pd
#' @method autoplot pdpx_pd
#' @importFrom ggplot2 autoplot
#' @export
autoplot.pdpx_pd <- function(object, rug = TRUE, ice_alpha = 0.2, ...) {
  meta <- attr(object, "pdpx")
  if (is.null(meta)) stop("not a pdpx partial dependence result", call. = FALSE)
  d <- .strip_pd(object)
  ylab <- paste0(if (isTRUE(meta$centered)) "centered " else "", meta$response_label)
  p <- if (length(meta$features) == 1) .plot_1way(d, meta, attr(object, "feature_data"), rug, ice_alpha)
       else if (length(meta$features) == 2) .plot_2way(d, meta, ylab)
       else stop("plots show 1 or 2 features; this result has ", length(meta$features), call. = FALSE)
  if (length(unique(d$output)) > 1) {
    p <- p + ggplot2::facet_wrap(ggplot2::vars(.data$output))
  }
  if (length(meta$features) == 1) p <- p + ggplot2::labs(y = ylab)
  p + ggplot2::theme_bw()
}

.plot_1way <- function(d, meta, feature_data, rug, ice_alpha) {
  feature <- meta$features[1]
  categorical <- meta$categorical[1]
  if (categorical) {
    d$x <- factor(d$label_1, levels = meta$grid_values[[1]])
  } else {
    d$x <- d$x_1
  }
  avg <- d[d$kind == "average", , drop = FALSE]
  ice <- d[d$kind == "individual", , drop = FALSE]
  p <- ggplot2::ggplot(mapping = ggplot2::aes(x = .data$x, y = .data$yhat))
  if (nrow(ice)) {
    ice$curve <- interaction(ice$output, ice$row, drop = TRUE)
    p <- p + ggplot2::geom_line(data = ice, ggplot2::aes(group = .data$curve), colour = "grey40",
                                alpha = ice_alpha, linewidth = 0.3)
  }
  if (nrow(avg)) {
    if (categorical) {
      p <- p + ggplot2::geom_point(data = avg, colour = "#1f4e79", size = 2.5)
    } else {
      p <- p + ggplot2::geom_line(data = avg, ggplot2::aes(group = .data$output), colour = "#1f4e79",
                                  linewidth = 1)
    }
  }
  if (rug && !categorical && !is.null(feature_data) && feature %in% names(feature_data)) {
    r <- data.frame(x = as.double(feature_data[[feature]]))
    r <- r[is.finite(r$x), , drop = FALSE]
    p <- p + ggplot2::geom_rug(data = r, ggplot2::aes(x = .data$x), inherit.aes = FALSE, sides = "b",
                               alpha = 0.3, length = ggplot2::unit(0.02, "npc"))
  }
  p + ggplot2::labs(x = feature)
}

.plot_2way <- function(d, meta, ylab) {
  d <- d[d$kind == "average", , drop = FALSE]
  if (!nrow(d)) stop("a 2-way plot shows the average; compute with kind = \"average\" or \"both\"", call. = FALSE)
  for (j in 1:2) {
    col <- paste0("x_", j)
    if (meta$categorical[j]) d[[col]] <- factor(d[[paste0("label_", j)]], levels = meta$grid_values[[j]])
  }
  ggplot2::ggplot(d, ggplot2::aes(x = .data$x_1, y = .data$x_2, fill = .data$yhat)) +
    ggplot2::geom_tile() +
    ggplot2::scale_fill_viridis_c(name = ylab) +
    ggplot2::labs(x = meta$features[1], y = meta$features[2])
}

#' @rdname autoplot.pdpx_pd
#' @export
plot.pdpx_pd <- function(x, ...) {
  p <- autoplot.pdpx_pd(x, ...)
  print(p)
  invisible(p)
}

#' @importFrom ggplot2 autoplot
#' @export
ggplot2::autoplot

#' @importFrom ggplot2 .data
NULL
