# ranger models: the forest is read here, in R, flattened into plain vectors and handed
# to Python (pdpx.adapters.ranger), like randomForest.

.is_ranger <- function(object) inherits(object, "ranger")

.ranger_check <- function(object) {
  if (is.null(object$forest)) {
    .stop("this ranger model has no forest (it was fitted with write.forest = FALSE); refit it with ",
         "write.forest = TRUE", call. = FALSE)
  }
  if (!object$forest$treetype %in% c("Regression", "Classification", "Probability estimation", "Survival")) {
    .stop("partial dependence of a ranger ", tolower(object$forest$treetype), " forest is not supported; ",
         "supported: regression, classification, probability and survival forests", call. = FALSE)
  }
  invisible(TRUE)
}

.ranger_inputs <- function(object) object$forest$independent.variable.names

# Per input: the levels ranger codes a factor by (covariate.levels when stored, else the
# data's own levels, which is what predict's data.matrix() uses), or NULL for numbers.
.ranger_levels <- function(object, data) {
  stored <- object$forest$covariate.levels
  lapply(.ranger_inputs(object), function(v) {
    if (!is.null(stored) && !is.null(stored[[v]])) return(as.character(stored[[v]]))
    col <- data[[v]]
    if (is.factor(col)) levels(col) else if (is.character(col)) levels(factor(col)) else NULL
  })
}

.ranger_forest_data <- function(object, levels) {
  f <- object$forest
  child <- function(k) unlist(lapply(f$child.nodeIDs, `[[`, k), use.names = FALSE)
  probability <- identical(f$treetype, "Probability estimation")
  survival <- identical(f$treetype, "Survival")
  list(
    n_nodes = .raw64(lengths(f$split.varIDs)),
    split_var = .raw64(unlist(f$split.varIDs, use.names = FALSE)),
    split_value = .raw64(unlist(f$split.values, use.names = FALSE)),
    left = .raw64(child(1L)),
    right = .raw64(child(2L)),
    is_ordered = as.list(as.logical(f$is.ordered)),
    treetype = f$treetype,
    class_values = if (!is.null(f$class.values)) .raw64(f$class.values) else NULL,
    response_levels = if (!is.null(f$levels)) as.list(as.character(f$levels)) else NULL,
    class_counts = if (probability) .raw64(unlist(f$terminal.class.counts, use.names = FALSE)) else NULL,
    # a survival forest: each leaf's cumulative hazard at every death time (internal nodes hold none)
    death_times = if (survival) .raw64(as.double(f$unique.death.times)) else NULL,
    chf = if (survival) .raw64(as.double(unlist(f$chf, use.names = FALSE))) else NULL,
    feature_names = as.list(.ranger_inputs(object)),
    levels = lapply(levels, function(lv) if (is.null(lv)) NULL else as.list(lv)),
    inbag = .inbag_for_py(object$inbag.counts)
  )
}

# In-bag counts (keep.inbag = TRUE) for Python: tree 1's count of every row, then tree 2's, ... and the rows'
# number (randomForest's n x ntree matrix, ranger's list of one vector per tree); NULL when not kept.
.inbag_for_py <- function(counts) {
  if (is.null(counts)) return(NULL)
  if (is.list(counts)) {
    return(list(counts = .raw64(as.double(unlist(counts, use.names = FALSE))), n = length(counts[[1]])))
  }
  list(counts = .raw64(as.double(counts)), n = nrow(counts))
}

# The predictions pdpx averages, one column per output: the regression prediction, a
# probability forest's class probabilities, or the fraction of trees voting for each class; a survival
# forest's cumulative hazard at every death time ($chf; Python reads the asked times, and exp(-chf) is
# ranger's $survival).
.ranger_predict <- function(object, newdata) {
  f <- object$forest
  if (identical(f$treetype, "Survival")) return(stats::predict(object, newdata)$chf)
  if (identical(f$treetype, "Classification")) {
    votes <- stats::predict(object, newdata, predict.all = TRUE)$predictions
    votes <- matrix(votes, nrow = nrow(newdata))
    k <- length(f$levels)
    out <- vapply(seq_len(k), function(j) rowMeans(votes == j), numeric(nrow(newdata)))
    out <- matrix(out, nrow = nrow(newdata))
    colnames(out) <- f$levels
    return(out)
  }
  stats::predict(object, newdata)$predictions
}

.ranger_adapter <- function(object, data) {
  levels <- .ranger_levels(object, data)
  key <- list("ranger", object$forest, levels, .time_units(data, .ranger_inputs(object)))
  hit <- .cache_get(key)
  if (!is.null(hit)) return(hit)
  inputs <- .ranger_inputs(object)
  template <- data[0, inputs, drop = FALSE]
  for (j in seq_along(inputs)) {
    if (!is.null(levels[[j]])) template[[inputs[j]]] <- factor(character(0), levels = levels[[j]])
  }
  force(object)
  closure <- function(payload) {
    nd <- .rebuild_frame(payload, template)
    .raw64(.as_pred_matrix(.r_predict(.ranger_predict(object, nd)), nrow(nd)))
  }
  py <- .pdpx_py()
  spec <- list(type = "ranger", forest = .ranger_forest_data(object, levels), predict = closure,
               time_units = as.list(.time_units(data, inputs)))
  .cache_put(key, .py_call(py$bridge$r_adapter(spec)))
}

.ranger_prepare <- function(object, data) {
  .ranger_check(object)
  inputs <- .ranger_inputs(object)
  absent <- setdiff(inputs, names(data))
  if (length(absent)) {
    .stop("data lacks the ranger model's predictors: ", paste(absent, collapse = ", "), call. = FALSE)
  }
  X <- data[, inputs, drop = FALSE]
  for (v in inputs) if (is.character(X[[v]])) X[[v]] <- factor(X[[v]])
  list(adapter = .ranger_adapter(object, X), data = X)
}

# A small cache of adapters (R objects compared with identical(): a refitted model misses).
.cache_get <- function(key) {
  for (entry in .pdpx_env$model_cache) if (identical(entry$key, key)) return(entry$adapter)
  NULL
}

.cache_put <- function(key, adapter) {
  .pdpx_env$model_cache <- c(list(list(key = key, adapter = adapter)), utils::head(.pdpx_env$model_cache, 3L))
  adapter
}
