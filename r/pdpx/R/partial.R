#' Partial dependence the way the pdp package computes it
#'
#' A drop-in for `pdp::partial()` (pdp 0.8.2): the same arguments, defaults and
#' result, so a script switches by writing `pdpx::partial` for `pdp::partial`. The
#' numbers are those of pdp's brute force (predictions on copies of `train` with the
#' `pred.var` columns set to each grid point, averaged), computed by pdpx:
#' randomForest, ranger and gbm models (also inside a caret `train` object) by the
#' `exact` tree method, which returns what brute force returns at tree speed; other
#' models by batched brute force through their `predict()`.
#'
#' Whether a model is a regression or a classification model, and how its class
#' probabilities are obtained, follow pdp's rules for each model class: `lm`, `glm`,
#' `nls`, `ppr`, `MASS::lda`/`qda`, `nnet`/`multinom`, `e1071::svm` and
#' `naiveBayes`, `kernlab::ksvm`, `earth`, `mda::fda`/`mars`, `rpart`,
#' `party::ctree`/`cforest`, `ipred::bagging`, `caret::train`, randomForest, ranger
#' and gbm (the table in the package's documentation, `docs/r.md`). Classification:
#' by default (`prob = FALSE`) each row's number is the centered logit of class
#' `which.class`, \eqn{\log p_k - \frac{1}{K}\sum_j \log p_j} (probabilities of 0
#' read as machine epsilon), averaged over the rows; `prob = TRUE` averages the
#' probability itself. Regression averages the prediction (glm and gbm: on the link
#' scale, as pdp), transformed by `inv.link` row by row when given. A model whose
#' predictions are not numbers on these scales (class labels, a list, probabilities
#' outside \[0, 1\] or not summing to 1) is an error naming its class and the
#' `pred.fun` to write. For gbm, `recursive = TRUE` (the default, as in pdp) runs
#' Friedman's weighted tree traversal with gbm's node weights, the numbers of
#' `gbm::plot.gbm()`, unless `ice = TRUE`.
#'
#' @param object A fitted model.
#' @param pred.var Character (or column positions of `train`): the predictors.
#' @param pred.grid Optional data.frame of the joint grid points of `pred.var`.
#' @param pred.fun Optional `function(object, newdata)` returning one number (the
#'   average) or one prediction per row (one curve per row); run once per grid
#'   point, as in pdp.
#' @param grid.resolution Points per continuous predictor; `NULL`: the number of
#'   distinct values, at most 51.
#' @param ice,center ICE curves, centered at their first grid point.
#' @param approx Use one exemplar row (medians, most frequent levels) instead of
#'   `train`.
#' @param quantiles,probs Use the `probs` quantiles of continuous predictors as the grid.
#' @param trim.outliers Drop boxplot outliers before making the grid.
#' @param type `"auto"`, `"regression"` or `"classification"`.
#' @param inv.link A function applied to each prediction before averaging (regression).
#' @param which.class The class (position or name) of a classification model.
#' @param prob `TRUE`: probabilities; `FALSE`: centered logits (pdp's default).
#' @param recursive gbm only: Friedman's weighted tree traversal (not with `ice`).
#' @param plot,plot.engine,smooth,rug,levelplot,contour,contour.color,alpha Draw
#'   the result instead of returning it: `plot.engine = "ggplot2"` gives
#'   [autoplot.pdpx_partial()]; `"lattice"` (pdp's default) a lattice plot.
#' @param chull Restrict the grid of the first two predictors to the convex hull
#'   of their values in `train`.
#' @param train The data to average over (a data.frame or matrix). By default the
#'   data the model was fitted on, found as pdp finds it: caret's `trainingData`,
#'   party's `data` slot, else the `data` (or `x`) argument of the model's call.
#' @param cats Columns whose grid is their sorted distinct values (for a matrix
#'   `train`, which cannot hold factors); the columns themselves are not changed.
#' @param check.class Give the grid the classes and levels of `train`'s columns.
#' @param progress Ignored apart from a message: pdpx shows no progress bar.
#' @param parallel,paropts pdpx runs its own threads; `parallel = TRUE` uses every
#'   core. `paropts` (options for foreach) cannot be honoured and is an error.
#' @param n.trees gbm: the number of trees (default: what `predict()` would use).
#' @param times,response Survival models (a ranger survival forest, a
#'   `survival::coxph`): `response` is `"survival"` (the default),
#'   `"cumulative_hazard"` or `"risk"` (coxph also `"raw"`, the linear predictor);
#'   `times` the times to read the curves at (default: quantiles of the model's
#'   training times). The result has a numeric `time` column before `yhat`, one
#'   block of rows per time. Other models take neither.
#' @param ... Further arguments of pdp's `partial()` that pdpx does not know are an error.
#'
#' @return A data.frame of class `c("pdpx_partial", "partial", "data.frame")`: one
#'   column per predictor (factors stay factors), `time` for a survival model's
#'   curves, and `yhat`. ICE curves (`ice = TRUE`,
#'   or a `pred.fun` returning one number per row): class `c("pdpx_ice", "ice",
#'   "data.frame")` with `yhat.id` (the row of `train`); centered ICE: class
#'   `c("pdpx_cice", "cice", "data.frame")`. The second class is pdp 0.8.2's, so
#'   code written for pdp's results works on them; the first is pdpx's own, which its
#'   `print()`, `summary()`, `plot()` and `autoplot()` methods are registered for (pdpx
#'   registers no method for pdp's classes: with pdp loaded too, pdp's results print
#'   and plot as pdp draws them).
#' @examples
#' # (runs where the pdpx Python package is importable: see pdpx_python())
#' if (pdpx_available()) {
#'   fit <- lm(mpg ~ wt * hp, data = mtcars)
#'   pd <- partial(fit, pred.var = "wt", train = mtcars)
#'   class(pd)  # "pdpx_partial" "partial" "data.frame"
#'   ice <- partial(fit, pred.var = "wt", ice = TRUE, center = TRUE, train = mtcars)
#'   autoplot(ice)  # centered ICE curves and their average
#'   if (requireNamespace("randomForest", quietly = TRUE)) {
#'     rf <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 50)
#'     autoplot(partial(rf, pred.var = "wt", train = mtcars))
#'   }
#'   if (requireNamespace("MASS", quietly = TRUE)) {
#'     lda <- MASS::lda(Species ~ ., data = iris)
#'     partial(lda, pred.var = "Petal.Width", prob = TRUE, which.class = "virginica")
#'   }
#' }
#' @export
partial <- function(object, pred.var, pred.grid, pred.fun = NULL, grid.resolution = NULL, ice = FALSE,
                    center = FALSE, approx = FALSE, quantiles = FALSE, probs = 1:9 / 10, trim.outliers = FALSE,
                    type = c("auto", "regression", "classification"), inv.link = NULL, which.class = 1L,
                    prob = FALSE, recursive = TRUE, plot = FALSE, plot.engine = c("lattice", "ggplot2"),
                    smooth = FALSE, rug = FALSE, chull = FALSE, levelplot = TRUE, contour = FALSE,
                    contour.color = "white", alpha = 1, train, cats = NULL, check.class = TRUE, progress = FALSE,
                    parallel = FALSE, paropts = NULL, n.trees = NULL, times = NULL, response = NULL, ...) {
  api <- .enter_api("partial")
  on.exit(.leave_api(api), add = TRUE)
  dots <- list(...)
  if (length(dots)) {
    .stop("partial(): argument(s) pdpx cannot honour: ", paste(names(dots), collapse = ", "),
         " (pdp passes these to predict(); give a pred.fun instead)", call. = FALSE)
  }
  if (!is.null(paropts)) {
    .stop("paropts configures foreach, which pdpx does not use (it runs its own threads); drop paropts",
         call. = FALSE)
  }
  type <- match.arg(type)
  plot.engine <- match.arg(plot.engine)
  for (nm in c("ice", "center", "approx", "quantiles", "trim.outliers", "prob", "recursive", "plot", "chull",
               "check.class", "progress", "parallel")) {
    .check_flag(get(nm), nm)
  }
  if (!is.null(pred.fun)) {
    pred.fun <- match.fun(pred.fun)
    if (!identical(names(formals(pred.fun)), c("object", "newdata"))) {
      .stop("pred.fun must be a function with exactly two arguments: object and newdata", call. = FALSE)
    }
  }
  if (!is.null(inv.link)) inv.link <- match.fun(inv.link)
  if (isTRUE(progress)) message("pdpx::partial() shows no progress bar")
  if (missing(train)) train <- .training_data(object, parent.frame())
  # a matrix train stays a matrix for predict() and makes a numeric grid, as in pdp; pdpx computes on its columns
  as_matrix <- is.matrix(train)
  if (as_matrix) train <- as.data.frame(train)
  if (!is.data.frame(train)) .arg_error("train", train, "a data.frame (or matrix) of the training rows")
  train <- as.data.frame(train)
  if (is.numeric(pred.var)) pred.var <- names(train)[pred.var]
  if (!is.character(pred.var) || !length(pred.var)) .arg_error("pred.var", pred.var, "predictor names")
  absent <- setdiff(pred.var, names(train))
  if (length(absent)) .stop(paste(absent, collapse = ", "), " not found in the training data (train)", call. = FALSE)
  if ("yhat" %in% pred.var) .stop("\"yhat\" cannot be a predictor name", call. = FALSE)
  if (ice && length(pred.var) != 1) .stop("ICE curves need a single predictor in pred.var", call. = FALSE)

  grid <- if (missing(pred.grid)) {
    .pdp_grid(train, pred.var, grid.resolution, quantiles, probs, trim.outliers, cats)
  } else {
    if (!is.data.frame(pred.grid)) .arg_error("pred.grid", pred.grid, "a data.frame of grid points")
    absent <- setdiff(pred.var, names(pred.grid))
    if (length(absent)) .stop(paste(absent, collapse = ", "), " not found in pred.grid", call. = FALSE)
    if (quantiles || trim.outliers) .warn("quantiles and trim.outliers are ignored when pred.grid is given")
    pred.grid <- pred.grid[, pred.var, drop = FALSE]
    pred.grid[do.call(order, unname(as.list(pred.grid))), , drop = FALSE]
  }
  if (check.class && !as_matrix) grid <- .copy_classes(grid, train)
  if (as_matrix) grid[] <- lapply(grid, function(x) as.double(if (is.factor(x)) as.character(x) else x))
  if (chull) grid <- .chull_grid(grid, train, pred.var)
  rownames(grid) <- NULL
  if (approx) train <- .exemplar(train)
  survival <- is.null(pred.fun) && .is_survival_model(object)
  if (!survival && (!is.null(times) || !is.null(response))) {
    .stop("times and response are for survival models (a ranger survival forest, a coxph); this ",
          .model_label(object), " model is not one", call. = FALSE)
  }
  if (survival) {
    res <- .partial_survival(object, grid, train, pred.var, ice, times, response %||% "survival",
                             if (parallel) -1L else NULL)
    return(.partial_finish(res, ice, center, FALSE, train, pred.var, plot, plot.engine, rug, alpha, smooth,
                           contour, contour.color, levelplot, missing(alpha)))
  }

  # a caret train object wrapping a forest pdpx reads: the forest, with caret's class labels
  wrapped <- if (is.null(pred.fun)) .train_tree(object, train) else NULL
  model <- if (is.null(wrapped)) object else wrapped$model
  gbm <- .is_gbm(object)
  if (gbm) n.trees <- .gbm_check_trees(object, n.trees)
  if (!is.null(wrapped)) n.trees <- wrapped$n.trees
  if (type == "auto" && is.null(pred.fun)) type <- .pdp_task(object)
  if (!is.null(wrapped$levels) && type == "classification") {
    which.class <- wrapped$levels[.pick_class(wrapped$levels, which.class)]
  }
  if (gbm && recursive && ice) {
    .warn("the recursive method is not available for gbm models with ice = TRUE; using brute force (exact)",
            call. = FALSE)
  }
  n_jobs <- if (parallel) -1L else NULL
  trees <- .is_randomforest(model) || .is_ranger(model) || .is_gbm(model)
  res <- if (!is.null(pred.fun)) {
    .partial_pred_fun(object, pred.fun, grid, train, pred.var, ice, as_matrix)
  } else if (gbm && recursive && !ice) {
    if (!is.null(inv.link)) .warn("inv.link is ignored when recursive = TRUE", call. = FALSE)
    .partial_gbm_recursive(object, grid, train, pred.var, type, which.class, prob, n.trees, n_jobs)
  } else if (trees) {
    .partial_compute(model, grid, train, pred.var, type, ice, inv.link, which.class, prob, n.trees, n_jobs,
                     labels = wrapped$levels)
  } else {
    .partial_brute(object, grid, train, pred.var, type, ice, inv.link, which.class, prob, as_matrix, n_jobs)
  }
  .partial_finish(res, ice, center, type == "classification" && prob, train, pred.var, plot, plot.engine, rug,
                  alpha, smooth, contour, contour.color, levelplot, missing(alpha))
}

# partial()'s result given its rows: the class (ICE, centered ICE), the train attribute, or the plot.
.partial_finish <- function(res, ice, center, prob_scale, train, pred.var, plot, plot.engine, rug, alpha, smooth,
                            contour, contour.color, levelplot, alpha_missing) {
  if (ice || "yhat.id" %in% names(res)) {
    res <- res[if ("time" %in% names(res)) order(res$time, res$yhat.id) else order(res$yhat.id), , drop = FALSE]
    class(res) <- c("pdpx_ice", "ice", "data.frame")
    if (center) {
      res <- .center_curves(res)
      if (prob_scale) {
        .warn("centering may give probabilities outside [0, 1]", call. = FALSE)
        res$yhat <- res$yhat + 0.5
      }
    }
  } else {
    class(res) <- c("pdpx_partial", "partial", "data.frame")
  }
  rownames(res) <- NULL
  attr(res, "train") <- train[, intersect(pred.var, names(train)), drop = FALSE]
  if (!plot) return(res)
  out <- if (plot.engine == "ggplot2") {
    autoplot.pdpx_partial(res, rug = rug, alpha = if (alpha_missing) NULL else alpha, smooth = smooth,
                          contour = contour, contour.color = contour.color)
  } else {
    .lattice_partial(res, pred.var, levelplot = levelplot, contour = contour,
                     alpha = if (alpha_missing) NULL else alpha)
  }
  attr(out, "partial.data") <- res
  out
}

# pdp's centered ICE curves: each curve minus its value at the first grid point; the first
# column, yhat and yhat.id, class c("pdpx_cice", "cice", "data.frame"). A survival model's: one curve per row and
# time, and the time column kept.
.center_curves <- function(res) {
  timed <- "time" %in% names(res)
  key <- if (timed) paste(res$time, res$yhat.id) else res$yhat.id
  first <- !duplicated(key)
  out <- data.frame(res[[1L]], yhat = res$yhat - res$yhat[first][match(key, key[first])],
                    yhat.id = res$yhat.id, check.names = FALSE)
  names(out)[1L] <- names(res)[1L]
  if (timed) out <- data.frame(out[1L], time = res$time, out[-1L], check.names = FALSE)
  class(out) <- c("pdpx_cice", "cice", "data.frame")
  out
}

# pdp's default grid: factor levels, sorted unique values of text, quantiles or an even
# sequence (min(distinct values, 51) points unless grid.resolution is given); expand.grid order.
.pdp_grid <- function(train, pred.var, grid.resolution, quantiles, probs, trim.outliers, cats = NULL) {
  if (!is.null(grid.resolution) && quantiles) .stop("give grid.resolution or quantiles, not both", call. = FALSE)
  if (quantiles && trim.outliers) .stop("give quantiles or trim.outliers, not both", call. = FALSE)
  if (!is.null(grid.resolution)) .check_count(grid.resolution, "grid.resolution", min = 1)
  values <- lapply(pred.var, function(v) {
    x <- train[[v]]
    if (is.factor(x)) return(levels(x))
    if (is.character(x) || v %in% cats) return(sort(unique(x)))
    if (inherits(x, c("Date", "POSIXt"))) {  # dates and times: the grid of their numbers, as dates and times
      time <- x[0]
      x <- as.double(if (inherits(x, "Date")) x else as.POSIXct(x))
      restore <- function(v) if (inherits(time, "Date")) structure(v, class = "Date")
                             else .POSIXct(v, tz = attr(as.POSIXct(time), "tzone"))
    } else {
      restore <- identity
    }
    if (quantiles) return(restore(stats::quantile(x, probs = probs, na.rm = TRUE, names = FALSE)))
    k <- if (is.null(grid.resolution)) min(length(unique(x)), 51L) else grid.resolution
    if (trim.outliers) x <- x[!x %in% grDevices::boxplot.stats(x)$out]
    restore(seq(min(x, na.rm = TRUE), max(x, na.rm = TRUE), length.out = k))
  })
  names(values) <- pred.var
  expand.grid(values, KEEP.OUT.ATTRS = FALSE, stringsAsFactors = TRUE)
}

.copy_classes <- function(grid, train) {
  # pdp's copy: a column whose class or levels differ from train's takes train's class (an integer
  # column's grid truncated by as.integer(), as pdp does)
  for (v in intersect(names(grid), names(train))) {
    x <- train[[v]]
    g <- grid[[v]]
    if (identical(class(g), class(x)) && identical(levels(g), levels(x))) next
    if (is.factor(x)) {
      grid[[v]] <- factor(as.character(g), levels = levels(x), ordered = is.ordered(x))
    } else if (is.integer(x)) {
      grid[[v]] <- as.integer(if (is.factor(g)) as.character(g) else g)
    } else if (is.numeric(x)) {
      grid[[v]] <- as.numeric(if (is.factor(g)) as.character(g) else g)
    } else if (is.character(x)) {
      grid[[v]] <- as.character(g)
    } else if (is.logical(x)) {
      grid[[v]] <- as.logical(if (is.factor(g)) as.character(g) else g)
    }
  }
  grid
}

# Grid points of the first two (numeric) predictors inside the convex hull of their training values.
.chull_grid <- function(grid, train, pred.var) {
  if (length(pred.var) < 2 || !is.numeric(grid[[1]]) || !is.numeric(grid[[2]])) return(grid)
  pts <- stats::na.omit(cbind(as.double(train[[pred.var[1]]]), as.double(train[[pred.var[2]]])))
  hull <- pts[grDevices::chull(pts), , drop = FALSE]
  keep <- .in_polygon(as.double(grid[[1]]), as.double(grid[[2]]), hull[, 1], hull[, 2])
  grid[keep, , drop = FALSE]
}

# Points inside or on a convex polygon (vertices in order): on the same side of every edge.
.in_polygon <- function(x, y, px, py) {
  n <- length(px)
  if (n < 3) return(rep(TRUE, length(x)))
  sides <- vapply(seq_len(n), function(i) {
    j <- if (i == n) 1L else i + 1L
    (px[j] - px[i]) * (y - py[i]) - (py[j] - py[i]) * (x - px[i])
  }, numeric(length(x)))
  sides <- matrix(sides, nrow = length(x))
  tol <- 1e-12 * max(1, abs(c(px, py)))^2
  apply(sides, 1, function(s) all(s >= -tol) || all(s <= tol))
}

# One row standing for the data: medians of numbers, the most frequent level of factors.
.exemplar <- function(train) {
  row <- lapply(train, function(x) {
    if (inherits(x, c("Date", "POSIXt"))) return(stats::median(x, na.rm = TRUE))
    if (is.numeric(x)) return(methods::as(stats::median(x, na.rm = TRUE), class(x)[1]))
    tab <- table(x)
    top <- names(tab)[which.max(tab)]
    if (is.factor(x)) factor(top, levels = levels(x), ordered = is.ordered(x))
    else if (is.logical(x)) as.logical(top) else top
  })
  as.data.frame(row, stringsAsFactors = FALSE, optional = TRUE)
}

#' Print and summarise a partial() result
#'
#' Compact printing of [partial()] results: pdpx's classes `pdpx_partial`,
#' `pdpx_ice` (ICE curves) and `pdpx_cice` (centered ICE curves), which come
#' before pdp's `partial`, `ice` and `cice` in the class of every result.
#'
#' @param x,object A [partial()] result.
#' @param n Rows to show.
#' @param ... Passed to [print.data.frame()] (print) or not used (summary).
#' @return `print()`: `x`, invisibly. `summary()`: a `summary.pdpx` list
#'   (features, rows, curves, a summary of `yhat`).
#' @name print.pdpx_partial
#' @export
print.pdpx_partial <- function(x, n = 10L, ...) {
  ice <- "yhat.id" %in% names(x)
  vars <- setdiff(names(x), c("yhat", "yhat.id", "time"))
  cat(sprintf("<partial dependence%s: %s%s | %d rows%s>\n",
              if (inherits(x, "cice")) " (centered ICE curves)" else if (ice) " (ICE curves)" else "",
              paste(vars, collapse = " x "),
              if ("time" %in% names(x)) sprintf(" at %d times", length(unique(x$time))) else "", nrow(x),
              if (ice) sprintf(", %d curves", length(unique(x$yhat.id))) else ""))
  d <- x
  attr(d, "train") <- NULL
  class(d) <- "data.frame"
  print(utils::head(d, n), ...)
  if (nrow(d) > n) cat(sprintf("# ... %d more rows\n", nrow(d) - n))
  invisible(x)
}

#' @rdname print.pdpx_partial
#' @export
print.pdpx_ice <- function(x, n = 10L, ...) print.pdpx_partial(x, n = n, ...)

#' @rdname print.pdpx_partial
#' @export
print.pdpx_cice <- function(x, n = 10L, ...) print.pdpx_partial(x, n = n, ...)

#' @rdname print.pdpx_partial
#' @export
summary.pdpx_partial <- function(object, ...) {
  vars <- setdiff(names(object), c("yhat", "yhat.id"))
  structure(list(features = vars, n_rows = nrow(object),
                 n_curves = if ("yhat.id" %in% names(object)) length(unique(object$yhat.id)) else 1L,
                 yhat = summary(object$yhat)), class = "summary.pdpx")
}

#' @rdname print.pdpx_partial
#' @export
summary.pdpx_ice <- function(object, ...) summary.pdpx_partial(object, ...)

#' @rdname print.pdpx_partial
#' @export
summary.pdpx_cice <- function(object, ...) summary.pdpx_partial(object, ...)

#' @export
print.summary.pdpx <- function(x, ...) {
  cat("Partial dependence on", paste(x$features, collapse = " x "), "\n")
  if (!is.null(x$model)) cat("model:", x$model, "| method:", x$method, "\n")
  cat(x$n_rows, "rows,", x$n_curves, if (x$n_curves == 1) "curve" else "curves", "\n")
  cat("yhat:\n")
  print(x$yhat)
  invisible(x)
}
