# Writing a tree model to a data-only file (.pdpx.json) that pdpx reads without R.
#
# This file is self-contained (base R only, no other function of the package) because the
# pdpx command line runs the same code, in a separate R process, to read an .rds file a user
# opted in to: src/pdpx/cli/export_model.R is a copy of it (tests/adapters/test_rexport.py checks that the
# two are identical). The model's parts are read with .subset2() and stripped of their
# attributes before use, so no method of any class runs on them.

#' Export a tree model to a file pdpx reads without R
#'
#' Writes the trees of a fitted `randomForest`, `ranger` or `gbm` model (or of a
#' `caret` train object holding one) to a data-only JSON file: the trees as pdpx's
#' R package hands them to Python, numbers written exactly, and no R code.
#' The pdpx command line reads it (`pdpx pd model.pdpx.json data.csv ...`), and
#' Python too (`pdpx.adapters.rexport.read_export("model.pdpx.json")`), without R
#' and without `--allow-pickle`, computing predictions from the trees themselves. Unlike an `.rds` file, which R
#' can only read by running what it holds, the file cannot run code.
#'
#' Predictions are the model's own: a regression forest's mean, a classification
#' randomForest's class probabilities (`type = "prob"`), a ranger classification
#' forest's fraction of trees voting for each class, a probability forest's class
#' probabilities, a gbm model's `type = "response"` (and its link, as the response
#' `"raw"`) with the first `n.trees` trees.
#'
#' @param model A fitted `randomForest`, `ranger` or `gbm` model (gaussian, laplace,
#'   bernoulli or poisson), or a `caret` train object of one.
#' @param file The file to write; its name should end in `.pdpx.json`.
#' @param n.trees gbm only: the number of trees to use. Default: what `predict()`
#'   would use (the best iteration on the test set or by cross-validation, else all).
#' @param data ranger only: the training data, for a forest that stores no factor
#'   levels (fit with `respect.unordered.factors` other than `"order"`): the data's
#'   levels give each factor's codes, as `predict()` reads them. Without it such a
#'   forest's factors are read as their codes. Other models store their levels.
#' @return `file`, invisibly.
#' @examples
#' if (requireNamespace("randomForest", quietly = TRUE)) {
#'   rf <- randomForest::randomForest(mpg ~ wt + hp, data = mtcars, ntree = 20)
#'   path <- tempfile(fileext = ".pdpx.json")
#'   export_model(rf, path)
#'   unlink(path)
#' }
#' @export
export_model <- function(model, file, n.trees = NULL, data = NULL) {
  if (!is.character(file) || length(file) != 1L || is.na(file) || !nzchar(file)) {
    stop("file must be one file name, e.g. \"model.pdpx.json\"", call. = FALSE)
  }
  if (inherits(model, "train") && !is.null(model$finalModel)) model <- model$finalModel
  .export_write(.export_document(model, n.trees, data), file)
  invisible(file)
}

# The document: what the model is, and its trees (see .export_randomforest and the others).
.export_document <- function(model, n.trees = NULL, data = NULL) {
  cls <- oldClass(model)
  library <- if (identical(cls, "randomForest") || identical(cls, c("randomForest.formula", "randomForest"))) {
    "randomForest"
  } else if (identical(cls, "ranger")) "ranger" else if (identical(cls, "gbm")) "gbm" else {
    stop("pdpx exports randomForest, ranger and gbm models (their own class, exactly); this object's class is ",
         if (length(cls)) paste(cls, collapse = ", ") else "(none)", call. = FALSE)
  }
  model <- unclass(model)
  trees <- switch(library, randomForest = .export_randomforest(model), ranger = .export_ranger(model, data),
                  gbm = .export_gbm(model, n.trees))
  list(format = .export_scalar("pdpx-trees"), version = .export_scalar(1), library = .export_scalar(library),
       written_by = .export_scalar(paste("pdpx export_model,", R.version.string)), trees = trees)
}

.export_scalar <- function(x) structure(x, pdpx_scalar = TRUE)

# A part of the model as plain numbers (attributes, classes and names dropped).
.export_num <- function(x, what) {
  x <- unclass(x)
  attributes(x) <- NULL
  if (!(is.numeric(x) || is.logical(x))) stop("the model's ", what, " is not numeric", call. = FALSE)
  x <- as.double(x)
  if (anyNA(x) || any(!is.finite(x))) stop("the model's ", what, " has missing or infinite values", call. = FALSE)
  x
}

.export_chr <- function(x, what) {
  x <- unclass(x)
  attributes(x) <- NULL
  if (!is.character(x) || anyNA(x)) stop("the model's ", what, " is not text", call. = FALSE)
  x
}

.export_get <- function(x, name) if (is.list(x)) .subset2(x, name) else NULL

.export_list <- function(x, what) {
  x <- unclass(x)
  if (!is.list(x)) stop("the model's ", what, " is not a list", call. = FALSE)
  attributes(x) <- NULL
  x
}

.export_randomforest <- function(model) {
  f <- .export_get(model, "forest")
  if (identical(.export_get(model, "type"), "unsupervised")) {
    stop("an unsupervised randomForest makes no predictions", call. = FALSE)
  }
  if (is.null(f)) stop("this randomForest has no forest (fitted with keep.forest = FALSE)", call. = FALSE)
  f <- unclass(f)
  nt <- .export_num(.export_get(f, "ndbigtree"), "ndbigtree")
  nr <- .export_num(.export_get(f, "nrnodes"), "nrnodes")[1]
  ntree <- length(nt)
  if (ntree < 1L || any(nt < 1 | nt > nr)) stop("the forest's tree sizes are not valid", call. = FALSE)
  t0 <- rep(seq_len(ntree) - 1, nt)
  i <- sequence(nt)
  nodes <- function(name) {
    x <- .export_num(.export_get(f, name), name)
    if (length(x) != nr * ntree) stop("the forest's ", name, " does not have nrnodes x ntree values", call. = FALSE)
    x[i + t0 * nr]
  }
  tm <- .export_get(f, "treemap")
  if (!is.null(tm)) {
    tm <- .export_num(tm, "treemap")
    if (length(tm) != 2 * nr * ntree) stop("the forest's treemap is not nrnodes x 2 x ntree", call. = FALSE)
    left <- tm[i + t0 * 2 * nr]
    right <- tm[i + nr + t0 * 2 * nr]
  } else {
    left <- nodes("leftDaughter")
    right <- nodes("rightDaughter")
  }
  ncat <- .export_get(f, "ncat")
  predictors <- .export_chr(attr(ncat, "names", exact = TRUE), "predictor names")
  ncat <- .export_num(ncat, "ncat")
  xlevels <- .export_list(.export_get(f, "xlevels"), "xlevels")
  if (length(xlevels) != length(ncat) || length(predictors) != length(ncat)) {
    stop("the forest's xlevels, ncat and predictor names disagree", call. = FALSE)
  }
  levels <- lapply(seq_along(ncat), function(j) if (ncat[j] > 1) .export_chr(xlevels[[j]], "factor levels") else NULL)
  classification <- identical(.export_get(model, "type"), "classification")
  coefs <- .export_get(model, "coefs")
  list(ndbigtree = nt, nodestatus = nodes("nodestatus"), bestvar = nodes("bestvar"),
       xbestsplit = nodes("xbestsplit"), nodepred = nodes("nodepred"), leftDaughter = left, rightDaughter = right,
       ncat = ncat, xlevels = levels, feature_names = predictors,
       classes = if (classification) .export_chr(.export_get(model, "classes"), "classes") else NULL,
       coefs = if (!is.null(coefs)) .export_num(coefs, "coefs") else NULL)
}

.export_ranger <- function(model, data = NULL) {
  f <- .export_get(model, "forest")
  if (is.null(f)) stop("this ranger model has no forest (fitted with write.forest = FALSE)", call. = FALSE)
  f <- unclass(f)
  treetype <- .export_chr(.export_get(f, "treetype"), "treetype")
  if (length(treetype) != 1L || !treetype %in% c("Regression", "Classification", "Probability estimation")) {
    stop("pdpx reads ranger regression, classification and probability forests, not ", treetype, call. = FALSE)
  }
  vars <- .export_list(.export_get(f, "split.varIDs"), "split.varIDs")
  vals <- .export_list(.export_get(f, "split.values"), "split.values")
  kids <- .export_list(.export_get(f, "child.nodeIDs"), "child.nodeIDs")
  if (length(vals) != length(vars) || length(kids) != length(vars) || !length(vars)) {
    stop("the forest's trees are not valid", call. = FALSE)
  }
  child <- function(k) unlist(lapply(kids, function(t) .export_num(.export_list(t, "child.nodeIDs")[[k]],
                                                                     "child.nodeIDs")))
  inputs <- .export_chr(.export_get(f, "independent.variable.names"), "variable names")
  stored <- .export_get(f, "covariate.levels")
  stored <- if (is.null(stored)) NULL else unclass(stored)
  levels <- lapply(inputs, function(v) {
    lv <- if (is.list(stored)) .subset2(stored, v) else NULL
    if (!is.null(lv)) return(.export_chr(lv, "factor levels"))
    col <- if (is.list(data)) .subset2(data, v) else NULL
    if (is.factor(col)) levels(col) else if (is.character(col)) levels(factor(col)) else NULL
  })
  ordered <- as.logical(.export_num(.export_get(f, "is.ordered"), "is.ordered"))
  if (length(ordered) != length(inputs)) stop("the forest's is.ordered and variable names disagree", call. = FALSE)
  unknown <- inputs[!ordered & vapply(levels, is.null, TRUE)]
  if (length(unknown)) {
    stop("the ranger model splits the factor(s) ", paste(unknown, collapse = ", "), " by their levels but stores ",
         "none: pass the training data (export_model(model, file, data = training_data))", call. = FALSE)
  }
  probability <- identical(treetype, "Probability estimation")
  cv <- .export_get(f, "class.values")
  rl <- .export_get(f, "levels")
  list(n_nodes = as.double(lengths(vars)), split_var = unlist(lapply(vars, .export_num, "split.varIDs")),
       split_value = unlist(lapply(vals, .export_num, "split.values")), left = child(1L), right = child(2L),
       is_ordered = ordered,
       treetype = .export_scalar(treetype),
       class_values = if (!is.null(cv)) .export_num(cv, "class.values") else NULL,
       response_levels = if (!is.null(rl)) .export_chr(rl, "response levels") else NULL,
       class_counts = if (probability) {
         unlist(lapply(.export_list(.export_get(f, "terminal.class.counts"), "terminal.class.counts"),
                       function(t) unlist(lapply(.export_list(t, "terminal.class.counts"), .export_num,
                                                 "terminal.class.counts"))))
       } else NULL,
       feature_names = inputs, levels = levels)
}

# The number of trees predict.gbm() uses when not told: gbm.perf()'s best iteration on the test set
# (train.fraction < 1) or by cross-validation, else every tree.
.export_gbm_trees <- function(model, n.trees) {
  total <- length(.export_list(.export_get(model, "trees"), "trees"))
  if (!is.null(n.trees)) {
    if (!(is.numeric(n.trees) && length(n.trees) == 1L && !is.na(n.trees) && n.trees >= 1 &&
          n.trees == round(n.trees) && n.trees <= total)) {
      stop("n.trees must be a whole number between 1 and the model's ", total, " trees", call. = FALSE)
    }
    return(as.integer(n.trees))
  }
  fraction <- .export_get(model, "train.fraction")
  valid <- .export_get(model, "valid.error")
  cv <- .export_get(model, "cv.error")
  if (is.numeric(fraction) && length(fraction) == 1L && isTRUE(fraction < 1) && length(valid)) {
    return(which.min(.export_num(valid, "valid.error")))
  }
  if (length(cv)) return(which.min(.export_num(cv, "cv.error")))
  total
}

.export_gbm <- function(model, n.trees = NULL) {
  d <- .export_get(model, "distribution")
  dist <- .export_chr(if (is.list(d)) .subset2(d, "name") else d, "distribution")
  if (length(dist) != 1L || !dist %in% c("gaussian", "laplace", "bernoulli", "poisson")) {
    stop("pdpx reads gbm models of the gaussian, laplace, bernoulli and poisson distributions, not ",
         paste(dist, collapse = " "), call. = FALSE)
  }
  n <- .export_gbm_trees(model, n.trees)
  trees <- .export_list(.export_get(model, "trees"), "trees")[seq_len(n)]
  trees <- lapply(trees, .export_list, "trees")
  if (any(lengths(trees) < 7L)) stop("the model's trees are not valid", call. = FALSE)
  col <- function(k) unlist(lapply(trees, function(t) .export_num(t[[k]], "trees")))
  cs <- lapply(.export_list(.export_get(model, "c.splits"), "c.splits"), .export_num, "c.splits")
  var_type <- .export_num(.export_get(model, "var.type"), "var.type")
  names <- .export_chr(.export_get(model, "var.names"), "var.names")
  var_levels <- .export_list(.export_get(model, "var.levels"), "var.levels")
  if (length(var_levels) != length(names) || length(var_type) != length(names)) {
    stop("the model's var.names, var.type and var.levels disagree", call. = FALSE)
  }
  levels <- lapply(seq_along(names), function(j) {
    lv <- unclass(var_levels[[j]])
    if (var_type[j] > 0 || is.character(lv)) .export_chr(lv, "var.levels") else NULL
  })
  list(n_nodes = as.double(vapply(trees, function(t) length(t[[1]]), 0)), split_var = col(1L),
       split_code = col(2L), left = col(3L), right = col(4L), missing = col(5L), weight = col(7L),
       c_splits = unlist(cs), c_split_len = as.double(lengths(cs)), var_type = var_type,
       init_f = .export_num(.export_get(model, "initF"), "initF"), distribution = .export_scalar(dist),
       feature_names = names, levels = levels, n_trees = .export_scalar(n),
       n_trees_fitted = .export_scalar(length(.export_list(.export_get(model, "trees"), "trees"))))
}

# ---------------------------------------------------------------- JSON, written here (no package needed)
# Numbers with 17 significant digits (each reads back as the same double); text escaped; a value marked
# .export_scalar() is written as itself, any other vector as an array, a named list as an object.
.export_json <- function(x, con) {
  scalar <- isTRUE(attr(x, "pdpx_scalar"))
  if (is.null(x)) {
    .export_put(con, "null")
  } else if (is.list(x) && !is.null(names(x))) {
    .export_put(con, "{")
    for (k in seq_along(x)) {
      .export_put(con, if (k > 1) ",", .export_string(names(x)[k]), ":")
      .export_json(x[[k]], con)
    }
    .export_put(con, "}")
  } else if (is.list(x)) {
    .export_put(con, "[")
    for (k in seq_along(x)) {
      if (k > 1) .export_put(con, ",")
      .export_json(x[[k]], con)
    }
    .export_put(con, "]")
  } else if (scalar) {
    .export_put(con, .export_atoms(x))
  } else {
    .export_put(con, "[")
    for (start in seq_len((length(x) + 65535L) %/% 65536L) * 65536L - 65535L) {
      part <- .export_atoms(x[start:min(length(x), start + 65535L)])
      .export_put(con, if (start > 1L) ",", paste(part, collapse = ","))
    }
    .export_put(con, "]")
  }
}

# Text as UTF-8 bytes, whatever the session's locale.
.export_put <- function(con, ...) writeBin(charToRaw(enc2utf8(paste0(...))), con)

.export_atoms <- function(x) {
  if (is.character(x)) .export_string(x) else if (is.logical(x)) ifelse(x, "true", "false") else sprintf("%.17g", x)
}

.export_string <- function(x) {
  x <- enc2utf8(as.character(x))
  x <- gsub("\\", "\\\\", x, fixed = TRUE)
  x <- gsub("\"", "\\\"", x, fixed = TRUE)
  for (code in 1:31) x <- gsub(intToUtf8(code), sprintf("\\u%04x", code), x, fixed = TRUE)
  paste0("\"", x, "\"")
}

.export_write <- function(doc, file) {
  part <- paste0(file, ".part")
  con <- file(part, open = "wb")
  closed <- FALSE
  on.exit(if (!closed) {
    close(con)
    unlink(part)
  })
  .export_json(doc, con)
  .export_put(con, "\n")
  close(con)
  closed <- TRUE
  if (!file.rename(part, file)) {
    unlink(part)
    stop("could not write ", file, call. = FALSE)
  }
  invisible(file)
}
