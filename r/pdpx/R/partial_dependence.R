#' Partial dependence, ICE and centered ICE of a fitted model
#'
#' Computes the partial dependence (PD) of `object`'s predictions on one or more
#' features, averaged over the rows of `data`, and optionally the individual
#' conditional expectation (ICE) curves of every row. The computation runs in the
#' pdpx Python library (through reticulate).
#'
#' * **randomForest** models are read in R (the `model$forest` arrays) and handed
#'   to Python as plain data; `method = "auto"` then runs `exact`, which returns
#'   exactly what brute force (R's `predict` on modified copies of `data`,
#'   averaged) returns, at tree speed. Regression forests give the predicted
#'   value, classification forests the class probabilities of
#'   `predict(type = "prob")` (vote fractions).
#' * **Any other model** with a `predict` method (or a `pred_fun`) runs through
#'   `brute`: pdpx stacks the grid into large batches and calls R's predict once
#'   per batch.
#'
#' @param object A fitted model: a `randomForest`, or any model with a
#'   `predict(object, newdata)` method (then see `pred_fun`); or a named list of
#'   models, compared on the same grid (the result gains a `model` column).
#' @param data A data.frame of background rows to average over, with the columns
#'   the model needs (extra columns are ignored for randomForest models). Rows
#'   with missing values in a randomForest's predictors are an error.
#' @param features Character vector: the feature(s) of one joint grid; two
#'   features give a 2-way partial dependence.
#' @param kind `"average"` (the PD curve), `"individual"` (ICE curves) or
#'   `"both"`.
#' @param ice `TRUE` for ICE curves, as in the pdp package (sets `kind =
#'   "individual"` unless `kind` is given).
#' @param center `TRUE` to center each curve at its value at the first grid
#'   point (centered ICE / centered PD), as pdp's `center`.
#' @param method `"auto"` (the fastest method equal to brute force: `exact` for
#'   randomForest, `brute` otherwise), `"brute"`, `"exact"` or `"recursion"`
#'   (randomForest only, with `training_data`; Friedman's weighted traversal, which
#'   differs from brute force on correlated data).
#' @param grid_resolution Number of grid points per numeric feature (fewer when
#'   the feature has fewer distinct values).
#' @param percentiles The grid of a numeric feature spans these quantiles of its
#'   values.
#' @param grid `"uniform"` (the grid of `grid_resolution` and `percentiles`) or
#'   `"thresholds"`: for a tree model, one point per step of its partial
#'   dependence, read from the feature's split thresholds in the model, so the
#'   result is the exact curve (drawn as steps by [autoplot()]). `custom_values`
#'   still wins; categorical features keep their categories.
#' @param custom_values Named list `list(feature = values)`: the grid to use for
#'   that feature.
#' @param target Which outputs to report: class labels of a classifier. Default:
#'   every class, except only the second (positive) class of a binary one.
#' @param pred_fun For models other than randomForest: `function(object,
#'   newdata)` returning a numeric vector, or a matrix / data.frame with one
#'   column per output (class probabilities: the columns named by class; rows
#'   summing to one make pdpx treat the outputs as classes). Default:
#'   `predict(object, newdata)` when it returns numbers (S4 models: their
#'   package's `predict` generic); for a classifier whose `predict()` returns
#'   class labels (lda, svm, caret, ...), its class probabilities by
#'   [partial()]'s rules; anything else is an error. Giving `pred_fun` for a
#'   randomForest uses it (and `brute`) instead of the trees.
#' @param training_data For `method = "recursion"` with randomForest: the
#'   training rows, routed through the trees to count the rows reaching each node
#'   (randomForest stores no counts).
#' @param sample_weight Weights of the rows of `data` in the average (ICE curves
#'   are not weighted).
#' @param categorical_features Columns to treat as categorical besides factors,
#'   characters and logicals.
#' @param response `"auto"`, or the Python response name (`"predict"`,
#'   `"predict_proba"`; for survival models `"survival"`, `"cumulative_hazard"`
#'   or `"risk"`).
#' @param times For a survival model's `"survival"` and `"cumulative_hazard"`:
#'   increasing times to read its curves at, one output each (the result gains a
#'   numeric `time` column); default: quantiles of the model's training times.
#' @param n_jobs Threads for the tree methods.
#' @param memory_budget Bytes intermediate arrays may use, e.g. `"1GB"`.
#' @param n_trees For gbm models: the number of trees to use (gbm's `n.trees`);
#'   default: the number `predict()` would use.
#' @param include_missing `"auto"`, `TRUE` or `FALSE`: end each numeric
#'   feature's grid with a missing-value point (`x_j` NA, `label_j` `"missing"`),
#'   the model's prediction with the feature set to missing for every row.
#'   `"auto"`: when the feature has missing values in `data` and the model accepts them.
#' @param by A column of `data`: curves per level of it (numeric columns: `by_bins`
#'   quantile bins), on one grid from all rows; the result gains a column named
#'   after it.
#' @param by_bins Quantile bins of a numeric `by` column.
#' @param interval A band around the PD (columns `lower`, `upper`; the result's
#'   `attr(, "pdpx")$band` and its print say what the band is):
#'   * a level (e.g. 0.95) or `"bootstrap"`: a bootstrap interval of the PD over
#'     the rows; it covers the sampling of the rows, not the model's own uncertainty;
#'   * `"members"`: the spread of the model's own members. For a forest
#'     (randomForest, ranger, and Python forests) each tree's own PD, read from the
#'     trees in one pass; for a named list of refit or fold models each model's PD
#'     (the curve is then their mean). `lower` and `upper` are the central `level`
#'     share of the members' PDs at each grid point. Boosted models (gbm) are
#'     refused: their trees are no predictors on their own;
#'   * `"quantiles"`: a named list of quantile models, named by their quantile
#'     (`list("0.1" = m10, "0.5" = m50, "0.9" = m90)`): the curve is the 0.5
#'     model's PD, `lower` and `upper` the lowest and highest quantile models' PDs;
#'   * `"jackknife"`: a bagged forest's infinitesimal jackknife band (randomForest or
#'     ranger fitted with `keep.inbag = TRUE`): `yhat +- z * se`, the learner's
#'     variance over training samples estimated from one fit; the result gains a
#'     column `se`. `data` may be any rows.
#'
#'   With `"members"` or `"quantiles"` every member's own curve is kept in
#'   `attr(result, "members")`: a data.frame with `member`, `weight`, `output`, the
#'   feature(s) and `yhat`.
#' @param level The central share of the members (or bootstrap replicates) the
#'   band covers, with `interval = "members"` or `"bootstrap"` (default 0.95).
#' @param n_boot Bootstrap replicates for `interval`.
#' @param random_state Seed of the bootstrap.
#' @param oob `TRUE`: the out-of-bag PD of a bagged forest fitted with
#'   `keep.inbag = TRUE`: each row's ICE curve averages only the trees that did
#'   not draw it. `data` must be the training rows, in the order the forest saw them.
#' @param ... Not used; misspelt or pdp-style argument names (`pred.var`,
#'   `grid.resolution`, `which.class`) are reported with the pdpx name to use.
#'
#' @return A data.frame of class `pdpx_pd` in pdpx's tidy schema, one row per
#'   output x curve x grid point: `feature_set`, `output`, `kind`
#'   (`"average"`/`"individual"`), `row` (the row of `data` of an ICE curve, 1-based;
#'   `NA` for the average), then per feature j: `feature_j`, `type_j`
#'   (`"numeric"`/`"categorical"`), `x_j` (the grid value, or the 1-based position
#'   of the category), `label_j` (the value as text), and `yhat`. Attributes hold
#'   the method that ran, the response, the grid and the features' values (for
#'   rugs); [autoplot()] and [plot()] draw it.
#'
#' @examples
#' # (runs where the pdpx Python package is importable: see pdpx_python())
#' if (pdpx_available()) {
#'   fit <- lm(mpg ~ wt * hp, data = mtcars)
#'   partial_dependence(fit, mtcars, "wt", grid_resolution = 10)
#'   ice <- partial_dependence(fit, mtcars, "wt", ice = TRUE, center = TRUE, grid_resolution = 10)
#'   plot(ice)  # the centered curves, and their average over them
#'   pd2 <- partial_dependence(fit, mtcars, c("wt", "hp"), grid_resolution = 5)
#'
#'   # a Date feature: the grid is a vector of Dates
#'   sales <- data.frame(day = as.Date("2024-01-01") + 0:99, price = rep(c(9, 11), 50))
#'   sales$units <- 50 + 0.1 * as.numeric(sales$day - as.Date("2024-01-01")) - 2 * sales$price
#'   by_day <- lm(units ~ as.numeric(day) + price, data = sales)
#'   partial_dependence(by_day, sales, "day", grid_resolution = 5)
#'
#'   if (requireNamespace("randomForest", quietly = TRUE)) {
#'     rf <- randomForest::randomForest(mpg ~ ., data = mtcars, ntree = 50)
#'     partial_dependence(rf, mtcars, "wt")  # method "exact": read from the trees
#'   }
#' }
#' @export
partial_dependence <- function(object, data, features, kind = c("average", "individual", "both"),
                               ice = FALSE, center = FALSE, method = "auto", grid_resolution = 100L,
                               percentiles = c(0.05, 0.95), grid = c("uniform", "thresholds"),
                               custom_values = NULL, target = NULL,
                               pred_fun = NULL, training_data = NULL, sample_weight = NULL,
                               categorical_features = NULL, response = "auto", n_jobs = NULL,
                               memory_budget = NULL, include_missing = "auto", by = NULL, by_bins = 4L,
                               interval = NULL, level = NULL, n_boot = 200L, random_state = 0L,
                               oob = FALSE, n_trees = NULL, times = NULL, ...) {
  api <- .enter_api("partial_dependence")
  on.exit(.leave_api(api), add = TRUE)
  .check_dots(list(...))
  if (!(identical(include_missing, "auto") || (is.logical(include_missing) && length(include_missing) == 1 &&
                                               !is.na(include_missing)))) {
    .arg_error("include_missing", include_missing, "\"auto\", TRUE or FALSE")
  }
  if (!is.null(by)) .check_string(by, "by")
  .check_count(by_bins, "by_bins", min = 2)
  band <- .check_interval(interval, level, object)
  .check_count(n_boot, "n_boot", min = 2)
  .check_count(random_state, "random_state", min = 0)
  .check_flag(oob, "oob")
  kind_given <- !missing(kind)
  kind <- .check_choice(kind, "kind", c("average", "individual", "both"), several = !kind_given)
  .check_flag(ice, "ice")
  .check_flag(center, "center")
  .check_string(method, "method")
  .check_string(response, "response")
  if (!is.null(times) && !(is.numeric(times) && length(times) >= 1)) {
    .arg_error("times", times, "increasing numbers (the times to read a survival model's curves at)")
  }
  .check_count(grid_resolution, "grid_resolution", min = 2)
  .check_percentiles(percentiles)
  grid <- .check_choice(grid, "grid", c("uniform", "thresholds"), several = missing(grid))
  if (!is.null(n_jobs)) .check_count(n_jobs, "n_jobs", min = -Inf, nonzero = TRUE)
  if (!is.null(memory_budget) && !((is.character(memory_budget) || is.numeric(memory_budget)) &&
                                   length(memory_budget) == 1 && !is.na(memory_budget))) {
    .arg_error("memory_budget", memory_budget, "a number of bytes or a string like \"512MB\"")
  }
  if (!is.null(custom_values) && !(is.list(custom_values) && !is.null(names(custom_values)) &&
                                   all(nzchar(names(custom_values))))) {
    .arg_error("custom_values", custom_values, "a named list, e.g. list(wt = c(2, 3, 4))")
  }
  if (!is.null(sample_weight) && !(is.numeric(sample_weight) && length(sample_weight) == nrow(as.data.frame(data)))) {
    .arg_error("sample_weight", sample_weight, "a numeric vector with one weight per row of data")
  }
  if (!is.null(categorical_features) && !is.character(categorical_features)) {
    .arg_error("categorical_features", categorical_features, "a character vector of column names")
  }
  if (isTRUE(ice) && !kind_given) kind <- "individual"
  if (!is.data.frame(data)) {
    .stop("data must be a data.frame of background rows (e.g. the training data)", call. = FALSE)
  }
  data <- as.data.frame(data)  # tibbles and data.tables too
  if (nrow(data) == 0) .stop("data has no rows", call. = FALSE)
  if (!is.character(features) || length(features) == 0) {
    .stop("features must be a character vector of column names of data, e.g. \"wt\" or c(\"wt\", \"hp\")",
         call. = FALSE)
  }
  missing_cols <- setdiff(features, names(data))
  if (length(missing_cols)) {
    .stop("features not among the columns of data: ", paste(missing_cols, collapse = ", "), call. = FALSE)
  }
  if (!is.null(pred_fun) && !is.function(pred_fun)) {
    .stop("pred_fun must be a function(object, newdata)", call. = FALSE)
  }

  py <- .pdpx_py()
  if (.is_model_list(object)) {
    parts <- lapply(object, function(m) .prepare_model(m, data, pred_fun, training_data, method, n_trees))
    cols <- lapply(parts, function(p) names(p$data))
    if (!all(vapply(cols, identical, TRUE, cols[[1]]))) {
      .stop("the models in the list use different columns of data; compare models fitted on the same columns",
           call. = FALSE)
    }
    adapters <- lapply(parts, `[[`, "adapter")
    if (identical(band$interval, "quantiles")) {  # the quantile models, keyed by their quantile (numbers)
      adapters <- reticulate::py_dict(as.list(as.double(names(object))), unname(adapters))
    }
    prepared <- list(adapter = adapters, data = parts[[1]]$data)
  } else {
    prepared <- .prepare_model(object, data, pred_fun, training_data, method, n_trees)
  }
  X <- prepared$data
  options <- list(
    kind = kind, method = method, response = response,
    target = if (is.null(target)) NULL else as.list(as.character(target)),
    grid_resolution = as.integer(grid_resolution),
    percentiles = as.list(as.double(percentiles)), grid = grid,
    custom_values = if (is.null(custom_values)) NULL else lapply(custom_values, .custom_for_py),
    categorical_features = if (is.null(categorical_features)) NULL else as.list(categorical_features),
    sample_weight = if (is.null(sample_weight)) NULL else .raw64(sample_weight),
    centered = isTRUE(center),
    n_jobs = if (is.null(n_jobs)) NULL else as.integer(n_jobs),
    memory_budget = memory_budget,
    include_missing = include_missing, by = by, by_bins = as.integer(by_bins),
    interval = band$interval, level = band$level, n_boot = as.integer(n_boot),
    random_state = as.integer(random_state),
    times = if (is.null(times)) NULL else as.list(as.double(times))
  )
  if (isTRUE(oob)) options$oob <- TRUE
  payload <- .frame_payload(X)
  X_py <- if (is.null(payload)) X else payload
  out <- .py_call(py$bridge$r_partial_dependence(prepared$adapter, X_py, as.list(features), options))
  res <- .new_pd(out, data, features)
  attr(res, "pdpx")$model <- class(object)[1]
  res
}

# A feature's custom grid for Python: a list of values; Date and POSIXct as numbers with their kind.
.custom_for_py <- function(v) {
  if (inherits(v, "Date")) return(list(type = "date", data = .raw64(unclass(v))))
  if (inherits(v, "POSIXt")) return(list(type = "datetime", data = .raw64(as.double(as.POSIXct(v))), tz = .tz_of(v)))
  as.list(v)
}

# What dates and times of a feature come back as: its column's class (a Date, or a POSIXct in the
# column's zone), else a POSIXct in the zone Python names.
.time_template <- function(column, tz) {
  if (inherits(column, c("Date", "POSIXt"))) return(column[0])
  .POSIXct(numeric(0), tz = if (is.null(tz) || !nzchar(tz)) "UTC" else tz)
}

# interval and level as Python takes them: a level (the rows' bootstrap), or "bootstrap", "members",
# "quantiles" with level; a named list of quantile models must be named by their quantiles.
.check_interval <- function(interval, level, object) {
  if (!is.null(level) && !(is.numeric(level) && length(level) == 1 && !is.na(level) && level > 0 && level < 1)) {
    .arg_error("level", level, "a share between 0 and 1, e.g. 0.9")
  }
  if (is.null(interval)) {
    if (!is.null(level)) {
      .stop("level sets the share a band covers; give it with interval = \"members\" or \"bootstrap\"",
            call. = FALSE)
    }
    return(list(interval = NULL, level = NULL))
  }
  if (is.numeric(interval) && length(interval) == 1 && !is.na(interval) && interval > 0 && interval < 1) {
    if (!is.null(level)) {
      .stop(sprintf("interval = %s is a level already; give it once: interval = %s, or interval = \"bootstrap\", ",
                    interval, interval), sprintf("level = %s", level), call. = FALSE)
    }
    return(list(interval = as.double(interval), level = NULL))
  }
  choices <- c("bootstrap", "members", "quantiles", "jackknife")
  if (!(is.character(interval) && length(interval) == 1 && !is.na(interval) && interval %in% choices)) {
    .arg_error("interval", interval, paste0("a confidence level between 0 and 1 (e.g. 0.95) or one of ",
                                            paste0("\"", choices, "\"", collapse = ", ")))
  }
  if (identical(interval, "quantiles")) {
    q <- suppressWarnings(as.double(names(object)))
    if (!.is_model_list(object) || anyNA(q) || any(q <= 0 | q >= 1)) {
      .stop("interval = \"quantiles\" takes a list of quantile models named by their quantile, e.g. ",
            "list(\"0.1\" = fit_q10, \"0.5\" = fit_q50, \"0.9\" = fit_q90)", call. = FALSE)
    }
  }
  list(interval = interval, level = if (is.null(level)) NULL else as.double(level))
}

# A named list of models (not a model that is itself a list, such as a randomForest)
.is_model_list <- function(x) {
  identical(class(x), "list") && length(x) > 0 && !is.null(names(x)) && all(nzchar(names(x)))
}

# Argument checks, before anything is sent to Python: each error names the argument, the value
# given and what is accepted (the Python side checks again, with the Python names).
.arg_error <- function(name, value, accepted) {
  shown <- tryCatch(paste(utils::capture.output(utils::str(value, give.attr = FALSE, vec.len = 3)),
                          collapse = " "), error = function(e) class(value)[1])
  .stop(sprintf("%s must be %s; got %s", name, accepted, trimws(shown)), call. = FALSE)
}

.check_flag <- function(x, name) {
  if (!(is.logical(x) && length(x) == 1 && !is.na(x))) .arg_error(name, x, "TRUE or FALSE")
  invisible(x)
}

.check_string <- function(x, name) {
  if (!(is.character(x) && length(x) == 1 && !is.na(x) && nzchar(x))) .arg_error(name, x, "a single string")
  invisible(x)
}

.check_count <- function(x, name, min = 1, nonzero = FALSE) {
  ok <- is.numeric(x) && length(x) == 1 && !is.na(x) && is.finite(x) && x == round(x) && x >= min &&
    !(nonzero && x == 0)
  if (!ok) {
    what <- if (nonzero) "a nonzero whole number (-1: every core)" else sprintf("a whole number >= %s", min)
    .arg_error(name, x, what)
  }
  invisible(x)
}

.check_percentiles <- function(x) {
  ok <- is.numeric(x) && length(x) == 2 && all(is.finite(x)) && x[1] >= 0 && x[2] <= 1 && x[1] < x[2]
  if (!ok) .arg_error("percentiles", x, "two numbers in [0, 1] in increasing order, e.g. c(0.05, 0.95)")
  invisible(x)
}

.check_choice <- function(x, name, choices, several = FALSE) {
  if (several && identical(x, choices)) return(choices[1])
  if (!(is.character(x) && length(x) == 1 && !is.na(x) && x %in% choices)) {
    .arg_error(name, x, paste0("one of ", paste0("\"", choices, "\"", collapse = ", ")))
  }
  x
}

.check_dots <- function(dots) {
  if (!length(dots)) return(invisible())
  nms <- names(dots)
  if (is.null(nms) || any(!nzchar(nms))) {
    .stop("partial_dependence() takes object, data, features, then named options", call. = FALSE)
  }
  known <- c(pred.var = "features", grid.resolution = "grid_resolution", which.class = "target",
             pred.fun = "pred_fun", train = "data", quantiles = "percentiles", probs = "percentiles",
             pred.grid = "custom_values")
  hints <- vapply(nms, function(n) {
    if (n %in% names(known)) sprintf("%s (use %s)", n, known[[n]]) else n
  }, "")
  .stop("unknown argument(s): ", paste(hints, collapse = ", "), call. = FALSE)
}

# The Python adapter for `object` and the data.frame to send.
.prepare_model <- function(object, data, pred_fun, training_data, method = "auto", n_trees = NULL) {
  # a caret train object wrapping a forest whose outputs are predict.train's: read the forest
  wrapped <- if (is.null(pred_fun) && is.null(training_data)) .train_tree(object, data, bernoulli = FALSE)
  if (!is.null(wrapped)) {
    object <- wrapped$model
    n_trees <- wrapped$n.trees
  }
  if (.is_gbm(object)) n_trees <- .gbm_check_trees(object, n_trees)
  if (is.null(pred_fun) && is.null(training_data)) {
    prepared <- if (.is_ranger(object)) .ranger_prepare(object, data)
                else if (.is_gbm(object)) .gbm_prepare(object, data, n_trees)
                else if (.is_coxph(object)) .coxph_prepare(object, data)
    if (!is.null(prepared)) return(prepared)
  }
  if (.is_gbm(object) && is.null(pred_fun)) {
    pred_fun <- function(object, newdata) stats::predict(object, newdata, n.trees = n_trees, type = "response")
  }
  if (.is_randomforest(object) && is.null(pred_fun)) {
    .rf_check(object)
    if (identical(method, "recursion") && is.null(training_data)) {
      .stop("method = \"recursion\" needs node weights, and randomForest stores no node counts: pass ",
           "training_data = <the training rows> (pdpx routes them through the trees to count them), ",
           "or use method = \"exact\" (the default), which needs none", call. = FALSE)
    }
    if (.rf_plain_inputs(object)) {
      predictors <- .rf_inputs(object)
      absent <- setdiff(predictors, names(data))
      if (length(absent)) {
        .stop("data lacks the randomForest's predictors: ", paste(absent, collapse = ", "), call. = FALSE)
      }
      X <- data[, predictors, drop = FALSE]
      train <- NULL
      if (!is.null(training_data)) {
        training_data <- as.data.frame(training_data)
        absent <- setdiff(predictors, names(training_data))
        if (length(absent)) {
          .stop("training_data lacks the randomForest's predictors: ", paste(absent, collapse = ", "),
               call. = FALSE)
        }
        train <- training_data[, predictors, drop = FALSE]
      }
      return(list(adapter = .rf_adapter(object, X, train), data = X))
    }
    # a formula with transformed terms (y ~ log(x)): R's predict on the raw variables, brute
    vars <- all.vars(stats::delete.response(object$terms))
    type <- if (identical(object$type, "classification")) "prob" else "response"
    pred_fun <- function(object, newdata) stats::predict(object, newdata, type = type)
    data <- data[, intersect(vars, names(data)), drop = FALSE]
  }
  if (!is.null(training_data)) {
    .stop("training_data is used by method = \"recursion\" for randomForest models only", call. = FALSE)
  }
  list(adapter = .function_adapter(object, data, pred_fun), data = data)
}

.function_adapter <- function(object, data, pred_fun) {
  probe_rows <- data[seq_len(min(2L, nrow(data))), , drop = FALSE]
  f <- if (is.null(pred_fun)) .default_predict(object, probe_rows) else pred_fun
  probe <- .as_pred_matrix(f(object, probe_rows), object = object)
  k <- ncol(probe)
  outputs <- colnames(probe)
  if (is.null(outputs)) outputs <- if (k == 1) "prediction" else paste("prediction", seq_len(k))
  is_prob <- k >= 2 && !is.null(colnames(probe)) && all(probe >= 0 & probe <= 1) &&
    all(abs(rowSums(probe) - 1) < 1e-8)
  template <- data[0, , drop = FALSE]
  closure <- function(payload) {
    nd <- .rebuild_frame(payload, template)
    .raw64(.r_predict(.as_pred_matrix(f(object, nd), nrow(nd), object)))
  }
  py <- .pdpx_py()
  spec <- list(
    type = "function", predict = closure, output_names = as.list(outputs),
    classes = if (is_prob) as.list(outputs) else NULL,
    feature_names = as.list(names(data)), model_name = class(object)[1]
  )
  .py_call(py$bridge$r_adapter(spec))
}

.new_pd <- function(out, data, features) {
  df <- .decode_frame(out$frame)
  meta <- out$meta
  meta$features <- .as_chr(meta$features)
  meta$outputs <- .as_chr(meta$outputs)
  meta$notes <- vapply(.as_chr(meta$notes), .r_words, "", prefix = FALSE, USE.NAMES = FALSE)  # in R's words
  for (w in .as_chr(meta$warnings)) .py_warning(w)
  meta$categorical <- as.logical(unlist(meta$categorical))
  # each feature's values as the class of its column in data (Date and POSIXct stay dates and times)
  like <- lapply(meta$features, function(f) if (f %in% names(data)) data[[f]] else NULL)
  meta$grid_values <- lapply(seq_along(meta$features), function(j) {
    g <- meta$grid_values[[j]]
    if (meta$categorical[j]) return(.as_chr(g))
    if (is.list(g) && !is.null(g$seconds)) {
      return(.as_time_like(as.double(unlist(g$seconds)), .time_template(like[[j]], g$tz)))
    }
    g <- as.double(unlist(g))
    g[is.nan(g)] <- NA_real_
    g
  })
  names(meta$grid_values) <- meta$features
  for (j in seq_along(meta$features)) {
    x <- paste0("x_", j)
    if (inherits(df[[x]], "POSIXt")) df[[x]] <- .as_time_like(as.double(df[[x]]), .time_template(like[[j]], ""))
  }
  # R-idiomatic columns: each feature's grid value under its own name (a factor for categories)
  for (j in seq_along(meta$features)) {
    f <- meta$features[j]
    if (f %in% names(df)) next
    df[[f]] <- if (meta$categorical[j]) factor(df[[paste0("label_", j)]], levels = meta$grid_values[[j]])
               else df[[paste0("x_", j)]]
  }
  members <- meta$members
  meta$members <- NULL
  attr(df, "pdpx") <- meta
  attr(df, "feature_data") <- data[, features, drop = FALSE]
  if (!is.null(members)) attr(df, "members") <- .members_frame(df, members)
  class(df) <- c("pdpx_pd", "data.frame")
  df
}

# Each member's curve of interval = "members" / "quantiles" (Python sends them in (member, output, grid point)
# order, the order of the result's average rows): member, weight, then the average rows' columns with its yhat.
.members_frame <- function(df, members) {
  avg <- df[df$kind == "average", setdiff(names(df), c("kind", "row", "yhat", "lower", "upper")), drop = FALSE]
  labels <- .as_chr(members$labels)
  n <- length(labels)
  if (identical(labels, as.character(seq_len(n) - 1L))) labels <- seq_len(n)  # a forest's trees, numbered as in R
  weights <- if (is.null(members$weights)) rep(NA_real_, n) else .read64(members$weights, n)
  reps <- rep(seq_len(nrow(avg)), n)
  out <- data.frame(member = rep(labels, each = nrow(avg)), weight = rep(weights, each = nrow(avg)),
                    stringsAsFactors = FALSE)
  out <- cbind(out, avg[reps, , drop = FALSE])
  out$yhat <- .read64(members$yhat, n * nrow(avg))
  rownames(out) <- NULL
  out
}

#' @export
print.pdpx_pd <- function(x, n = 10L, ...) {
  meta <- attr(x, "pdpx")
  if (!is.null(meta)) {
    grid <- paste(lengths(meta$grid_values), collapse = " x ")
    cat(sprintf("<pdpx partial dependence: %s | model %s | %s | method %s%s | grid %s | %d rows>\n",
                paste(meta$features, collapse = " x "), meta$model %||% "?", meta$response_label, meta$method,
                if (isTRUE(meta$centered)) ", centered" else "", grid, nrow(x)))
    if (!is.null(meta$band)) cat(sprintf("# band (lower, upper): %s\n", meta$band))
    else if (!is.null(meta$interval)) {
      cat(sprintf("# band (lower, upper): %g%% bootstrap interval over the rows\n", 100 * as.double(meta$interval)))
    }
  }
  d <- .strip_pd(x)
  keep <- intersect(c(meta$features, "output", "time", "kind", "row", "yhat", "lower", "upper"), names(d))
  if (length(unique(d$output)) == 1 || "time" %in% keep) keep <- setdiff(keep, "output")  # a time names its output
  if (length(unique(d$kind)) == 1 && all(d$kind == "average")) keep <- setdiff(keep, c("kind", "row"))
  print(utils::head(d[, keep, drop = FALSE], n), ...)
  if (nrow(d) > n) cat(sprintf("# ... %d more rows (as.data.frame() for all columns)\n", nrow(d) - n))
  invisible(x)
}

#' @export
summary.pdpx_pd <- function(object, ...) {
  meta <- attr(object, "pdpx")
  d <- .strip_pd(object)
  avg <- d[d$kind == "average", , drop = FALSE]
  structure(list(features = meta$features, model = meta$model %||% "?", method = meta$method,
                 n_rows = nrow(d), n_curves = max(1L, length(unique(d$row[!is.na(d$row)]))),
                 yhat = summary(if (nrow(avg)) avg$yhat else d$yhat)), class = "summary.pdpx")
}

`%||%` <- function(a, b) if (is.null(a)) b else a

.strip_pd <- function(x) {
  attr(x, "pdpx") <- NULL
  attr(x, "feature_data") <- NULL
  class(x) <- "data.frame"
  x
}

#' @export
as.data.frame.pdpx_pd <- function(x, ...) .strip_pd(x)
