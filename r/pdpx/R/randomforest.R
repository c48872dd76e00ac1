# randomForest models: the forest is read here, in R, and handed to Python as plain
# data (never through rpy2 inside R, which aborts the R process).

.is_randomforest <- function(object) inherits(object, "randomForest")

.rf_predictors <- function(object) {
  f <- object$forest
  nms <- names(f$ncat)
  if (is.null(nms)) {
    imp <- object$importance
    nms <- if (is.null(dim(imp))) names(imp) else rownames(imp)
  }
  nms
}

# The columns R's predict needs: a formula's variables (y ~ . - x2 still needs x2),
# else the predictors.
.rf_inputs <- function(object) {
  if (!inherits(object, "randomForest.formula")) return(.rf_predictors(object))
  all.vars(stats::delete.response(object$terms))
}

# TRUE when every predictor is a column of the data (not a transformed formula term).
.rf_plain_inputs <- function(object) all(.rf_predictors(object) %in% .rf_inputs(object))

.rf_check <- function(object) {
  if (identical(object$type, "unsupervised")) {
    .stop("an unsupervised randomForest makes no predictions; partial dependence needs a regression ",
         "or classification forest", call. = FALSE)
  }
  if (is.null(object$forest)) {
    .stop("this randomForest has no forest (it was fitted with keep.forest = FALSE); refit it with ",
         "keep.forest = TRUE", call. = FALSE)
  }
  invisible(TRUE)
}

# The forest arrays, compact (each tree's ndbigtree nodes), as raw doubles.
.rf_forest_data <- function(object) {
  f <- object$forest
  nt <- as.integer(f$ndbigtree)
  idx <- sequence(nt) + rep((seq_along(nt) - 1L) * as.integer(f$nrnodes), nt)
  if (!is.null(f$treemap)) {
    ld <- f$treemap[, 1, ]
    rd <- f$treemap[, 2, ]
  } else {
    ld <- f$leftDaughter
    rd <- f$rightDaughter
  }
  nodes <- function(x) .raw64(x[idx])
  predictors <- .rf_predictors(object)
  xlevels <- lapply(seq_along(f$ncat), function(j) {
    lv <- f$xlevels[[j]]
    if (f$ncat[[j]] > 1) as.list(as.character(lv)) else 0
  })
  names(xlevels) <- predictors
  list(
    ndbigtree = .raw64(nt),
    nodestatus = nodes(f$nodestatus),
    bestvar = nodes(f$bestvar),
    xbestsplit = nodes(f$xbestsplit),
    nodepred = nodes(f$nodepred),
    leftDaughter = nodes(ld),
    rightDaughter = nodes(rd),
    ncat = .raw64(f$ncat),
    xlevels = xlevels
  )
}

# A 0-row data.frame with the classes R's predict expects for each predictor:
# factors with the model's levels; other columns as in `data`.
.rf_template <- function(object, data) {
  f <- object$forest
  predictors <- .rf_predictors(object)
  tpl <- data[0, .rf_inputs(object), drop = FALSE]
  for (j in seq_along(predictors)) {
    if (f$ncat[[j]] > 1) {
      tpl[[predictors[j]]] <- factor(character(0), levels = f$xlevels[[j]])
    }
  }
  tpl
}

.rf_predict_closure <- function(object, template) {
  type <- if (identical(object$type, "classification")) "prob" else "response"
  force(object)
  force(template)
  function(payload) {
    nd <- .rebuild_frame(payload, template)
    p <- .r_predict(stats::predict(object, nd, type = type))
    .raw64(.as_pred_matrix(p, nrow(nd)))
  }
}

# The Python adapter of a randomForest, cached while the same forest is used again
# (identical() compares the whole forest, so a refitted model never hits the cache).
.rf_adapter <- function(object, data, training_data = NULL) {
  # the data's column classes and levels shape the predict closure's template
  shape <- lapply(data[0, .rf_inputs(object), drop = FALSE], function(col) list(class(col), levels(col)))
  key <- list(object$forest, object$classes, object$coefs, object$type, .rf_inputs(object), shape,
              training_data)
  cache <- .pdpx_env$rf_cache
  for (entry in cache) {
    if (identical(entry$key, key)) return(entry$adapter)
  }
  py <- .pdpx_py()
  template <- .rf_template(object, data)
  spec <- list(
    type = "randomForest",
    forest = .rf_forest_data(object),
    feature_names = as.list(.rf_predictors(object)),
    input_names = as.list(.rf_inputs(object)),
    classes = if (identical(object$type, "classification")) as.list(object$classes) else NULL,
    coefs = if (!is.null(object$coefs)) as.list(as.double(object$coefs)) else NULL,
    predict = .rf_predict_closure(object, template),
    training_data = training_data,
    time_units = as.list(.time_units(data, .rf_predictors(object))),
    inbag = .inbag_for_py(object$inbag)
  )
  adapter <- .py_call(py$bridge$r_adapter(spec))
  .pdpx_env$rf_cache <- c(list(list(key = key, adapter = adapter)), utils::head(cache, 3L))
  adapter
}
