#' Feature importance, Friedman's H and accumulated local effects
#'
#' The questions after a partial dependence curve, computed by pdpx in Python
#' (`pdpx.importance`, `pdpx.h_statistic`, `pdpx.ale`) for the same models as
#' [partial_dependence()]: randomForest, ranger and gbm read as trees (so
#' importance and H run on the `exact` engine), any other model through its
#' `predict` (or `pred_fun`).
#'
#' * `pd_importance()`: Greenwell, Boehmke & McCarthy (2018): the standard
#'   deviation of each feature's partial dependence over its grid (numeric
#'   features), range / 4 (categorical ones); `kind = "ice"` averages the same
#'   measure over the rows' ICE curves. Named `pd_importance` so that it does not
#'   mask `randomForest::importance()`.
#' * `h_statistic()`: Friedman & Popescu's (2008) H statistic, pairwise and
#'   overall, from partial dependence functions evaluated at the rows of `data`.
#' * `ale()`: accumulated local effects (Apley & Zhu 2020) of one or two numeric
#'   features or one categorical feature; a result like [partial_dependence()]'s,
#'   with the bin edges as grid (`plot()` and `autoplot()` draw it).
#'
#' @inheritParams partial_dependence
#' @param features Column names of `data` (default for `pd_importance()` and
#'   `h_statistic()`: a formula model's predictors, else every column with a grid).
#' @param kind `"pd"` or `"ice"`.
#' @param pairs For `h_statistic()`: pairs of column names, e.g.
#'   `list(c("wt", "hp"))` (default: every pair of `features`).
#' @param sample For `h_statistic()`: compute on this many randomly chosen rows
#'   (models that are not read as trees cost rows^2 predictions per pair).
#' @param grid_resolution Grid points per numeric feature (`ale()`: bins).
#' @param ... Further options of the Python function, by their Python names
#'   (e.g. `target`, `response`, `sample_weight`).
#' @return `pd_importance()`: a data.frame with `feature`, `output`, `importance`,
#'   sorted. `h_statistic()`: a list of class `pdpx_h` with data.frames
#'   `pairwise` (`feature_1`, `feature_2`, `output`, `h2`, `h`) and `overall`
#'   (`feature`, `output`, `h2`, `h`). `ale()`: a `pdpx_pd` data.frame.
#' @examples
#' # (runs where the pdpx Python package is importable: see pdpx_python())
#' if (pdpx_available()) {
#'   fit <- lm(mpg ~ wt * hp + disp, data = mtcars)
#'   pd_importance(fit, mtcars, c("wt", "hp", "disp"), grid_resolution = 20)
#'   h_statistic(fit, mtcars, c("wt", "hp", "disp"))$pairwise
#'   plot(ale(fit, mtcars, "wt"))
#'   if (requireNamespace("randomForest", quietly = TRUE)) {
#'     rf <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 50)
#'     pd_importance(rf, mtcars)  # read from the trees: the exact engine
#'   }
#' }
#' @name explain
NULL

#' @rdname explain
#' @export
pd_importance <- function(object, data, features = NULL, kind = c("pd", "ice"), pred_fun = NULL,
                          grid_resolution = 100L, n_trees = NULL, ...) {
  api <- .enter_api("pd_importance")
  on.exit(.leave_api(api), add = TRUE)
  kind <- .check_choice(kind, "kind", c("pd", "ice"), several = missing(kind))
  .check_count(grid_resolution, "grid_resolution", min = 2)
  out <- .explain_call("importance", object, data, features, pred_fun, n_trees,
                       c(list(kind = kind, grid_resolution = as.integer(grid_resolution)), list(...)))
  .decode_frame(out$frame)
}

#' @rdname explain
#' @export
h_statistic <- function(object, data, features = NULL, pairs = NULL, sample = NULL, pred_fun = NULL,
                        random_state = 0L, n_trees = NULL, ...) {
  api <- .enter_api("h_statistic")
  on.exit(.leave_api(api), add = TRUE)
  if (!is.null(sample)) .check_count(sample, "sample", min = 2)
  .check_count(random_state, "random_state", min = 0)
  if (!is.null(pairs)) {
    if (is.character(pairs) && length(pairs) == 2) pairs <- list(pairs)
    ok <- is.list(pairs) && length(pairs) > 0 &&
      all(vapply(pairs, function(p) is.character(p) && length(p) == 2, TRUE))
    if (!ok) .arg_error("pairs", pairs, "a list of pairs of column names, e.g. list(c(\"wt\", \"hp\"))")
    pairs <- lapply(pairs, as.list)
  }
  opts <- c(list(pairs = pairs, sample = if (is.null(sample)) NULL else as.integer(sample),
                 random_state = as.integer(random_state)), list(...))
  out <- .explain_call("h_statistic", object, data, features, pred_fun, n_trees, opts)
  structure(list(pairwise = .decode_frame(out$pairwise), overall = .decode_frame(out$overall)),
            class = "pdpx_h")
}

#' @rdname explain
#' @export
ale <- function(object, data, features, grid_resolution = 20L, pred_fun = NULL, n_trees = NULL, ...) {
  api <- .enter_api("ale")
  on.exit(.leave_api(api), add = TRUE)
  .check_count(grid_resolution, "grid_resolution", min = 1)
  if (!is.character(features) || !length(features) %in% 1:2) {
    .stop("features must be one or two column names of data, e.g. \"wt\" or c(\"wt\", \"hp\")", call. = FALSE)
  }
  out <- .explain_call("ale", object, data, features, pred_fun, n_trees,
                       c(list(grid_resolution = as.integer(grid_resolution)), list(...)))
  res <- .new_pd(out, as.data.frame(data), features)
  attr(res, "pdpx")$model <- class(object)[1]
  res
}

#' @export
print.pdpx_h <- function(x, ...) {
  cat("<pdpx Friedman's H statistic>\n")
  cat("Pairwise (strongest first):\n")
  print(utils::head(x$pairwise[order(-x$pairwise$h), , drop = FALSE], 10), row.names = FALSE)
  cat("Overall:\n")
  print(x$overall[order(-x$overall$h), , drop = FALSE], row.names = FALSE)
  invisible(x)
}

.explain_call <- function(what, object, data, features, pred_fun, n_trees, options) {
  if (!is.data.frame(data)) .stop("data must be a data.frame of background rows (e.g. the training data)", call. = FALSE)
  data <- as.data.frame(data)
  if (nrow(data) == 0) .stop("data has no rows", call. = FALSE)
  if (!is.null(features)) {
    if (!is.character(features) || !length(features)) {
      .stop("features must be a character vector of column names of data", call. = FALSE)
    }
    absent <- setdiff(features, names(data))
    if (length(absent)) .stop("features not among the columns of data: ", paste(absent, collapse = ", "), call. = FALSE)
  }
  if (!is.null(pred_fun) && !is.function(pred_fun)) .stop("pred_fun must be a function(object, newdata)", call. = FALSE)
  if (is.null(features)) features <- .model_predictors(object, names(data))
  data <- .model_columns(object, data, pred_fun, features)
  py <- .pdpx_py()
  prepared <- .prepare_model(object, data, pred_fun, NULL, "auto", n_trees)
  payload <- .frame_payload(prepared$data)
  X_py <- if (is.null(payload)) prepared$data else payload
  out <- .py_call(py$bridge$r_explain(what, prepared$adapter, X_py,
                                      if (is.null(features)) NULL else as.list(features), options))
  for (w in .as_chr(out$warnings %||% out$meta$warnings)) .py_warning(w)
  if (!is.null(out$meta)) out$meta$warnings <- list()  # raised once, here
  out
}

# The predictors a formula model reads (its terms without the response), those among the columns of data; NULL
# when the model has no terms or none of them is a column (then every column with a grid is a feature). Without
# this, the response column held by the training data (mtcars' mpg for lm(mpg ~ wt + hp)) was measured too.
.model_predictors <- function(object, columns) {
  vars <- tryCatch(all.vars(stats::delete.response(stats::terms(object))), error = function(e) NULL)
  vars <- intersect(vars, columns)
  if (length(vars)) vars else NULL
}


# The columns of data a formula model reads, with the features asked for: its response and (with the model's own
# predict) the columns its formula does not name are left out, so regions() never splits by them and no measure
# reads them (lm(mpg ~ wt + hp) on mtcars: regions of wt were split by mpg). With a pred_fun, which may read any
# column, only the response goes. data as it is when the model has no terms or names none of its columns.
.model_columns <- function(object, data, pred_fun, features) {
  tt <- tryCatch(stats::terms(object), error = function(e) NULL)
  if (is.null(tt)) return(data)
  used <- intersect(all.vars(stats::delete.response(tt)), names(data))
  if (!length(used)) return(data)
  response <- setdiff(all.vars(tt), all.vars(stats::delete.response(tt)))
  keep <- if (is.null(pred_fun)) used else setdiff(names(data), response)
  keep <- names(data)[names(data) %in% union(keep, features)]
  data[, keep, drop = FALSE]
}
