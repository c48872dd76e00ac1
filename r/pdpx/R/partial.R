#' Partial dependence the way the pdp package computes it
#'
#' A drop-in for `pdp::partial()`: the same arguments, defaults and result, so a
#' script switches by writing `pdpx::partial` for `pdp::partial`. The numbers are
#' those of pdp's brute force (predictions on copies of `train` with the
#' `pred.var` columns set to each grid point, averaged), computed by pdpx:
#' randomForest, ranger and gbm models by the `exact` tree method, which returns
#' what brute force returns at tree speed; other models by batched brute force.
#'
#' Classification follows pdp: by default (`prob = FALSE`) each row's prediction
#' is the centered logit of class `which.class`, \eqn{\log p_k - \frac{1}{K}\sum_j
#' \log p_j} (probabilities below machine epsilon raised to it), averaged over the
#' rows; `prob = TRUE` averages the probability itself. The probabilities are
#' those of `predict(type = "prob")` for randomForest, of a probability forest for
#' ranger (a classification forest without `probability = TRUE`, which pdp
#' refuses, gives the fraction of trees voting for each class), and
#' `cbind(p, 1 - p)` of `predict(type = "response")` for a bernoulli gbm. gbm
#' regression uses the link scale (`predict(type = "link")`), transformed by
#' `inv.link` row by row when given. For gbm, `recursive = TRUE` (the default, as
#' in pdp) runs Friedman's weighted tree traversal with gbm's node weights, the
#' numbers of `gbm::plot.gbm()`, unless `ice = TRUE`.
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
#'   [autoplot.partial()]; `"lattice"` (pdp's default) a lattice plot.
#' @param chull Restrict the grid of the first two predictors to the convex hull
#'   of their values in `train`.
#' @param train The data to average over (by default the data the model was fitted
#'   on, looked up from the model's call).
#' @param cats Columns of a matrix `train` to treat as categorical.
#' @param check.class Give the grid the classes and levels of `train`'s columns.
#' @param progress Ignored apart from a message: pdpx shows no progress bar.
#' @param parallel,paropts pdpx runs its own threads; `parallel = TRUE` uses every
#'   core. `paropts` (options for foreach) cannot be honoured and is an error.
#' @param n.trees gbm: the number of trees (default: what `predict()` would use).
#' @param ... Further arguments of pdp's `partial()` that pdpx does not know are an error.
#'
#' @return A data.frame of class `c("partial", "data.frame")`: one column per
#'   predictor (factors stay factors) and `yhat`; with ICE curves, also `yhat.id`
#'   (the row of `train`) and the class `"ice"` first, as in pdp.
#' @examples
#' \dontrun{
#' library(randomForest)
#' rf <- randomForest(mpg ~ ., data = mtcars, ntree = 100)
#' pd <- partial(rf, pred.var = "wt", train = mtcars)
#' ice <- partial(rf, pred.var = "wt", ice = TRUE, center = TRUE, train = mtcars)
#' autoplot(pd)
#' }
#' @export
partial <- function(object, pred.var, pred.grid, pred.fun = NULL, grid.resolution = NULL, ice = FALSE,
                    center = FALSE, approx = FALSE, quantiles = FALSE, probs = 1:9 / 10, trim.outliers = FALSE,
                    type = c("auto", "regression", "classification"), inv.link = NULL, which.class = 1L,
                    prob = FALSE, recursive = TRUE, plot = FALSE, plot.engine = c("lattice", "ggplot2"),
                    smooth = FALSE, rug = FALSE, chull = FALSE, levelplot = TRUE, contour = FALSE,
                    contour.color = "white", alpha = 1, train, cats = NULL, check.class = TRUE, progress = FALSE,
                    parallel = FALSE, paropts = NULL, n.trees = NULL, ...) {
  dots <- list(...)
  if (length(dots)) {
    stop("partial(): argument(s) pdpx cannot honour: ", paste(names(dots), collapse = ", "),
         " (pdp passes these to predict(); give a pred.fun instead)", call. = FALSE)
  }
  if (!is.null(paropts)) {
    stop("paropts configures foreach, which pdpx does not use (it runs its own threads); drop paropts",
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
      stop("pred.fun must be a function with exactly two arguments: object and newdata", call. = FALSE)
    }
  }
  if (!is.null(inv.link)) inv.link <- match.fun(inv.link)
  if (isTRUE(progress)) message("pdpx::partial() shows no progress bar")
  if (missing(train)) train <- .training_data(object, parent.frame())
  if (is.matrix(train)) train <- as.data.frame(train)
  if (!is.data.frame(train)) .arg_error("train", train, "a data.frame (or matrix) of the training rows")
  train <- as.data.frame(train)
  if (is.numeric(pred.var)) pred.var <- names(train)[pred.var]
  if (!is.character(pred.var) || !length(pred.var)) .arg_error("pred.var", pred.var, "predictor names")
  absent <- setdiff(pred.var, names(train))
  if (length(absent)) stop(paste(absent, collapse = ", "), " not found in the training data (train)", call. = FALSE)
  if ("yhat" %in% pred.var) stop("\"yhat\" cannot be a predictor name", call. = FALSE)
  if (ice && length(pred.var) != 1) stop("ICE curves need a single predictor in pred.var", call. = FALSE)
  for (v in intersect(cats, pred.var)) if (!is.factor(train[[v]])) train[[v]] <- factor(train[[v]])

  grid <- if (missing(pred.grid)) {
    .pdp_grid(train, pred.var, grid.resolution, quantiles, probs, trim.outliers)
  } else {
    if (!is.data.frame(pred.grid)) .arg_error("pred.grid", pred.grid, "a data.frame of grid points")
    absent <- setdiff(pred.var, names(pred.grid))
    if (length(absent)) stop(paste(absent, collapse = ", "), " not found in pred.grid", call. = FALSE)
    if (quantiles || trim.outliers) warning("quantiles and trim.outliers are ignored when pred.grid is given")
    pred.grid <- pred.grid[, pred.var, drop = FALSE]
    pred.grid[do.call(order, unname(as.list(pred.grid))), , drop = FALSE]
  }
  if (check.class) grid <- .copy_classes(grid, train)
  if (chull) grid <- .chull_grid(grid, train, pred.var)
  rownames(grid) <- NULL
  if (approx) train <- .exemplar(train)

  gbm <- .is_gbm(object)
  if (gbm) n.trees <- .gbm_check_trees(object, n.trees)
  if (type == "auto" && is.null(pred.fun)) type <- .pdp_task(object)
  if (gbm && recursive && ice) {
    warning("the recursive method is not available for gbm models with ice = TRUE; using brute force (exact)",
            call. = FALSE)
  }
  n_jobs <- if (parallel) -1L else NULL
  res <- if (!is.null(pred.fun)) {
    .partial_pred_fun(object, pred.fun, grid, train, pred.var, ice)
  } else if (gbm && recursive && !ice) {
    if (!is.null(inv.link)) warning("inv.link is ignored when recursive = TRUE", call. = FALSE)
    .partial_gbm_recursive(object, grid, train, pred.var, type, which.class, prob, n.trees, n_jobs)
  } else {
    .partial_compute(object, grid, train, pred.var, type, ice, inv.link, which.class, prob, n.trees, n_jobs)
  }
  if (ice || "yhat.id" %in% names(res)) {
    res <- res[order(res$yhat.id), , drop = FALSE]
    if (center) {
      first <- !duplicated(res$yhat.id)
      res$yhat <- res$yhat - res$yhat[first][match(res$yhat.id, res$yhat.id[first])]
      if (type == "classification" && prob) {
        warning("centering may give probabilities outside [0, 1]", call. = FALSE)
        res$yhat <- res$yhat + 0.5
      }
    }
    class(res) <- c("ice", "partial", "data.frame")
  } else {
    class(res) <- c("partial", "data.frame")
  }
  rownames(res) <- NULL
  attr(res, "train") <- train[, intersect(pred.var, names(train)), drop = FALSE]
  if (!plot) return(res)
  out <- if (plot.engine == "ggplot2") {
    autoplot.partial(res, rug = rug, alpha = alpha, smooth = smooth, contour = contour,
                     contour.color = contour.color)
  } else {
    .lattice_partial(res, pred.var, levelplot = levelplot, contour = contour, alpha = alpha)
  }
  attr(out, "partial.data") <- res
  out
}

# The training data, from the model's call (as pdp looks it up), else an error saying to pass it.
.training_data <- function(object, env) {
  call_data <- tryCatch(object$call$data, error = function(e) NULL)
  if (!is.null(call_data)) {
    found <- tryCatch(eval(call_data, env), error = function(e) NULL)
    if (is.data.frame(found) || is.matrix(found)) return(found)
  }
  stop("the training data could not be found from the model; pass it as train = <data.frame>", call. = FALSE)
}

# regression or classification, as pdp decides it
.pdp_task <- function(object) {
  if (inherits(object, "randomForest")) {
    if (identical(object$type, "unsupervised")) stop("an unsupervised randomForest makes no predictions", call. = FALSE)
    return(object$type)
  }
  if (.is_ranger(object)) return(if (identical(object$treetype, "Regression")) "regression" else "classification")
  if (.is_gbm(object)) {
    d <- .gbm_distribution(object)
    if (d %in% c("bernoulli", "huberized", "multinomial", "adaboost")) return("classification")
    return("regression")
  }
  if (inherits(object, "glm") && identical(object$family$family, "binomial")) return("classification")
  "regression"
}

# pdp's default grid: factor levels, sorted unique values of text, quantiles or an even
# sequence (min(distinct values, 51) points unless grid.resolution is given); expand.grid order.
.pdp_grid <- function(train, pred.var, grid.resolution, quantiles, probs, trim.outliers) {
  if (!is.null(grid.resolution) && quantiles) stop("give grid.resolution or quantiles, not both", call. = FALSE)
  if (quantiles && trim.outliers) stop("give quantiles or trim.outliers, not both", call. = FALSE)
  if (!is.null(grid.resolution)) .check_count(grid.resolution, "grid.resolution", min = 1)
  values <- lapply(pred.var, function(v) {
    x <- train[[v]]
    if (is.factor(x)) return(levels(x))
    if (is.character(x) || is.logical(x)) return(sort(unique(x)))
    if (quantiles) return(stats::quantile(x, probs = probs, na.rm = TRUE, names = FALSE))
    k <- if (is.null(grid.resolution)) min(length(unique(x)), 51L) else grid.resolution
    if (trim.outliers) x <- x[!x %in% grDevices::boxplot.stats(x)$out]
    seq(min(x, na.rm = TRUE), max(x, na.rm = TRUE), length.out = k)
  })
  names(values) <- pred.var
  expand.grid(values, KEEP.OUT.ATTRS = FALSE, stringsAsFactors = FALSE)
}

.copy_classes <- function(grid, train) {
  for (v in intersect(names(grid), names(train))) {
    x <- train[[v]]
    if (is.factor(x)) {
      grid[[v]] <- factor(as.character(grid[[v]]), levels = levels(x), ordered = is.ordered(x))
    } else if (is.integer(x) && is.numeric(grid[[v]]) && all(grid[[v]] == round(grid[[v]]))) {
      grid[[v]] <- as.integer(grid[[v]])
    } else if (is.character(x)) {
      grid[[v]] <- as.character(grid[[v]])
    } else if (is.logical(x)) {
      grid[[v]] <- as.logical(grid[[v]])
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
    if (is.numeric(x)) return(methods::as(stats::median(x, na.rm = TRUE), class(x)[1]))
    tab <- table(x)
    top <- names(tab)[which.max(tab)]
    if (is.factor(x)) factor(top, levels = levels(x), ordered = is.ordered(x))
    else if (is.logical(x)) as.logical(top) else top
  })
  as.data.frame(row, stringsAsFactors = FALSE, optional = TRUE)
}

# pred.fun: pdp calls it once per grid point on the modified data (it may aggregate itself).
.partial_pred_fun <- function(object, pred.fun, grid, train, pred.var, ice) {
  out <- lapply(seq_len(nrow(grid)), function(i) {
    temp <- train
    for (v in pred.var) temp[[v]] <- rep(grid[[v]][i], nrow(temp))
    p <- pred.fun(object, temp)
    if (!ice && length(p) > 1 && is.null(names(p))) p else if (!ice) p else p
  })
  len <- unique(lengths(out))
  if (length(len) != 1) stop("pred.fun returned predictions of different lengths across grid points", call. = FALSE)
  yhat <- unlist(out, use.names = FALSE)
  if (len == 1 && !ice) return(cbind(grid, yhat = as.numeric(yhat)))
  ids <- names(out[[1]])
  data.frame(grid[rep(seq_len(nrow(grid)), each = len), , drop = FALSE], yhat = as.numeric(yhat),
             yhat.id = if (!is.null(ids)) rep(ids, nrow(grid)) else rep(seq_len(len), nrow(grid)),
             check.names = FALSE)
}

# The unique values of each predictor of the grid, for pdpx's custom_values (a Cartesian grid
# that contains every point of `grid`).
.grid_values <- function(grid) {
  lapply(grid, function(x) if (is.factor(x)) levels(droplevels(x)) else sort(unique(x)))
}

# Map pdpx's tidy rows to the rows of `grid`.
.grid_match <- function(tidy, grid, pred.var) {
  key_tidy <- do.call(paste, c(lapply(seq_along(pred.var), function(j) {
    if (identical(tidy[[paste0("type_", j)]][1], "categorical")) tidy[[paste0("label_", j)]]
    else sprintf("%.17g", tidy[[paste0("x_", j)]])
  }), sep = "\r"))
  key_grid <- do.call(paste, c(lapply(pred.var, function(v) {
    x <- grid[[v]]
    if (is.numeric(x)) sprintf("%.17g", as.double(x)) else as.character(x)
  }), sep = "\r"))
  list(tidy = key_tidy, grid = key_grid)
}

# The outputs pdp reads for classification, in pdp's column order, and the class picked.
.class_columns <- function(object, outputs) {
  if (inherits(object, "randomForest")) return(as.character(object$classes))
  if (.is_ranger(object)) return(as.character(object$forest$levels))
  outputs
}

.pick_class <- function(columns, which.class) {
  k <- if (is.character(which.class)) match(which.class, columns) else as.integer(which.class)
  if (length(k) != 1 || is.na(k) || k < 1 || k > length(columns)) {
    .arg_error("which.class", which.class, sprintf("a class position 1..%d or one of %s", length(columns),
                                                   paste0("\"", columns, "\"", collapse = ", ")))
  }
  k
}

# pdp's centered logit of column k of a probability matrix, row by row.
.centered_logit <- function(p, k) {
  eps <- .Machine$double.eps
  lp <- log(ifelse(p > 0, p, eps))
  lp[, k] - rowMeans(lp)
}

.partial_compute <- function(object, grid, train, pred.var, type, ice, inv.link, which.class, prob, n.trees,
                             n_jobs) {
  gbm <- .is_gbm(object)
  bernoulli <- gbm && .gbm_distribution(object) == "bernoulli"
  classification <- type == "classification"
  response <- if (gbm && !bernoulli) "raw" else "auto"
  if (gbm && !.gbm_distribution(object) %in% .gbm_supported) {
    stop("pdpx::partial() reads gbm models of distributions ", paste(.gbm_supported, collapse = ", "),
         "; give a pred.fun for others", call. = FALSE)
  }
  per_row <- ice || !is.null(inv.link) || (classification && !prob)
  target <- NULL
  columns <- NULL
  if (classification && !bernoulli) {
    columns <- .class_columns(object, NULL)
    if (!is.null(columns)) {
      k <- .pick_class(columns, which.class)
      target <- if (per_row) columns else columns[k]
    }
  }
  pd <- partial_dependence(object, train, pred.var, kind = if (per_row) "individual" else "average",
                           custom_values = .grid_values(grid), method = "auto", response = response,
                           target = target, n_trees = n.trees, grid_resolution = 2L, n_jobs = n_jobs,
                           include_missing = FALSE)  # pdp draws no missing-value point
  tidy <- .strip_pd(pd)
  keys <- .grid_match(tidy, grid, pred.var)
  gi <- match(keys$grid, unique(keys$tidy))
  if (anyNA(gi)) stop("internal: grid points missing from pdpx's result", call. = FALSE)
  n_grid <- length(unique(keys$tidy))
  if (!per_row) {
    y <- tidy$yhat[match(keys$grid, keys$tidy)]
    if (bernoulli && classification) y <- if (.pick_class(c("1", "0"), which.class) == 1) y else 1 - y
    return(cbind(grid, yhat = y))
  }
  # one matrix (rows x grid points) per output
  outputs <- unique(tidy$output)
  mats <- lapply(outputs, function(o) {
    s <- tidy[tidy$output == o, , drop = FALSE]
    m <- matrix(NA_real_, nrow(train), n_grid)
    m[cbind(s$row, match(keys$tidy[tidy$output == o], unique(keys$tidy)))] <- s$yhat
    m
  })
  names(mats) <- outputs
  if (inherits(object, "randomForest") || .is_ranger(object)) {
    # forest probabilities are averages of trees' fractions (>= 1/ntree when not zero): a
    # rounding residue of the tree sums must read as the 0 predict() returns, which the log
    # of the centered logit tells apart
    mats <- lapply(mats, function(m) { m[abs(m) < 1e-10] <- 0; m })
  }
  y <- if (classification) {
    if (bernoulli) {
      mats <- list(mats[[1]], 1 - mats[[1]])
      columns <- c("1", "0")
    }
    k <- .pick_class(columns, which.class)
    if (prob) mats[[k]] else {
      arr <- simplify2array(mats)  # rows x grid x classes
      out <- matrix(0, nrow(train), n_grid)
      for (g in seq_len(n_grid)) out[, g] <- .centered_logit(matrix(arr[, g, ], nrow(train)), k)
      out
    }
  } else {
    m <- mats[[1]]
    if (!is.null(inv.link)) m[] <- inv.link(m)
    m
  }
  if (!ice) return(cbind(grid, yhat = colMeans(y)[gi]))
  n <- nrow(train)
  data.frame(grid[rep(seq_len(nrow(grid)), each = n), , drop = FALSE],
             yhat = as.vector(y[, gi, drop = FALSE]), yhat.id = rep(seq_len(n), nrow(grid)), check.names = FALSE)
}

# gbm's weighted tree traversal (plot.gbm's numbers): pdpx's recursion on the link scale.
.partial_gbm_recursive <- function(object, grid, train, pred.var, type, which.class, prob, n.trees, n_jobs) {
  dist <- .gbm_distribution(object)
  if (!dist %in% .gbm_supported) {
    stop("pdpx::partial() reads gbm models of distributions ", paste(.gbm_supported, collapse = ", "),
         call. = FALSE)
  }
  pd <- partial_dependence(object, train, pred.var, kind = "average", custom_values = .grid_values(grid),
                           method = "recursion", response = "raw", n_trees = n.trees, grid_resolution = 2L,
                           n_jobs = n_jobs, include_missing = FALSE)
  tidy <- .strip_pd(pd)
  keys <- .grid_match(tidy, grid, pred.var)
  y <- tidy$yhat[match(keys$grid, keys$tidy)]
  if (dist == "bernoulli") {
    pr <- cbind(stats::plogis(y), 1 - stats::plogis(y))
    k <- .pick_class(c("1", "0"), which.class)
    y <- if (prob) pr[, k] else .centered_logit(pr, k)
  }
  cbind(grid, yhat = y)
}

#' @export
print.partial <- function(x, n = 10L, ...) {
  ice <- "yhat.id" %in% names(x)
  vars <- setdiff(names(x), c("yhat", "yhat.id"))
  cat(sprintf("<partial dependence%s: %s | %d rows%s>\n", if (ice) " (ICE curves)" else "",
              paste(vars, collapse = " x "), nrow(x),
              if (ice) sprintf(", %d curves", length(unique(x$yhat.id))) else ""))
  d <- x
  attr(d, "train") <- NULL
  class(d) <- "data.frame"
  print(utils::head(d, n), ...)
  if (nrow(d) > n) cat(sprintf("# ... %d more rows\n", nrow(d) - n))
  invisible(x)
}

#' @export
summary.partial <- function(object, ...) {
  vars <- setdiff(names(object), c("yhat", "yhat.id"))
  structure(list(features = vars, n_rows = nrow(object),
                 n_curves = if ("yhat.id" %in% names(object)) length(unique(object$yhat.id)) else 1L,
                 yhat = summary(object$yhat)), class = "summary.pdpx")
}

#' @export
print.summary.pdpx <- function(x, ...) {
  cat("Partial dependence on", paste(x$features, collapse = " x "), "\n")
  if (!is.null(x$model)) cat("model:", x$model, "| method:", x$method, "\n")
  cat(x$n_rows, "rows,", x$n_curves, if (x$n_curves == 1) "curve" else "curves", "\n")
  cat("yhat:\n")
  print(x$yhat)
  invisible(x)
}
