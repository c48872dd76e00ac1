# gbm models: the first n.trees trees are read here, in R, flattened into plain vectors and
# handed to Python (pdpx.adapters.gbm).

.is_gbm <- function(object) inherits(object, "gbm")

.gbm_distribution <- function(object) {
  d <- object$distribution
  if (is.list(d)) d$name else as.character(d)
}

.gbm_supported <- c("gaussian", "laplace", "bernoulli", "poisson")

# The number of trees predict.gbm() would use when n.trees is not given.
.gbm_default_trees <- function(object) {
  n <- if (isTRUE(object$train.fraction < 1)) {
    gbm::gbm.perf(object, method = "test", plot.it = FALSE)
  } else if (!is.null(object$cv.error)) {
    gbm::gbm.perf(object, method = "cv", plot.it = FALSE)
  } else {
    length(object$train.error)
  }
  message("Using ", n, " trees...")
  as.integer(n)
}

.gbm_check_trees <- function(object, n_trees) {
  if (is.null(n_trees)) return(.gbm_default_trees(object))
  if (!(is.numeric(n_trees) && length(n_trees) == 1 && !is.na(n_trees) && n_trees == round(n_trees) &&
        n_trees >= 1)) {
    .arg_error("n.trees", n_trees, "a single whole number >= 1")
  }
  if (n_trees > object$n.trees) {
    .stop("n.trees = ", n_trees, " exceeds the ", object$n.trees, " trees the gbm model has", call. = FALSE)
  }
  as.integer(n_trees)
}

.gbm_levels <- function(object) {
  lapply(seq_along(object$var.names), function(j) {
    lv <- object$var.levels[[j]]
    if (object$var.type[j] > 0 || is.character(lv)) as.character(lv) else NULL
  })
}

.gbm_forest_data <- function(object, n_trees, na_inputs) {
  trees <- object$trees[seq_len(n_trees)]
  col <- function(k) unlist(lapply(trees, `[[`, k), use.names = FALSE)
  cs <- object$c.splits
  levels <- .gbm_levels(object)
  list(
    n_nodes = .raw64(vapply(trees, function(t) length(t[[1]]), 0)),
    split_var = .raw64(col(1L)), split_code = .raw64(col(2L)), left = .raw64(col(3L)),
    right = .raw64(col(4L)), missing = .raw64(col(5L)), weight = .raw64(col(7L)),
    c_splits = .raw64(unlist(cs, use.names = FALSE)), c_split_len = .raw64(lengths(cs)),
    var_type = .raw64(object$var.type), init_f = .raw64(object$initF),
    distribution = .gbm_distribution(object),
    feature_names = as.list(object$var.names),
    levels = lapply(levels, function(lv) if (is.null(lv)) NULL else as.list(lv)),
    na_inputs = as.list(as.integer(na_inputs))
  )
}

.gbm_adapter <- function(object, data, n_trees) {
  # inputs with values predict.gbm reads as missing: NA, and levels the model does not know
  levels <- .gbm_levels(object)
  na_inputs <- which(vapply(seq_along(object$var.names), function(j) {
    x <- data[[object$var.names[j]]]
    anyNA(x) || (!is.null(levels[[j]]) && (is.factor(x) || is.character(x)) && !all(as.character(x) %in% levels[[j]]))
  }, TRUE)) - 1L
  key <- list("gbm", object$trees[seq_len(n_trees)], object$c.splits, object$initF, object$var.levels,
              na_inputs, lapply(data[0, , drop = FALSE], function(x) list(class(x), levels(x))))
  hit <- .cache_get(key)
  if (!is.null(hit)) return(hit)
  template <- data[0, , drop = FALSE]
  for (j in seq_along(object$var.names)) {
    v <- object$var.names[j]
    if (!is.null(levels[[j]])) {
      template[[v]] <- if (is.ordered(data[[v]])) factor(character(0), levels = levels[[j]], ordered = TRUE)
                       else factor(character(0), levels = levels[[j]])
    }
  }
  force(object)
  closure <- function(payload) {
    nd <- .rebuild_frame(payload, template)
    r <- .r_predict(stats::predict(object, nd, n.trees = n_trees, type = "response"))
    l <- .r_predict(stats::predict(object, nd, n.trees = n_trees, type = "link"))
    .raw64(cbind(as.double(r), as.double(l)))
  }
  py <- .pdpx_py()
  spec <- list(type = "gbm", forest = .gbm_forest_data(object, n_trees, na_inputs), predict = closure)
  .cache_put(key, .py_call(py$bridge$r_adapter(spec)))
}

.gbm_prepare <- function(object, data, n_trees) {
  dist <- .gbm_distribution(object)
  if (!dist %in% .gbm_supported) return(NULL)
  absent <- setdiff(object$var.names, names(data))
  if (length(absent)) {
    .stop("data lacks the gbm model's predictors: ", paste(absent, collapse = ", "), call. = FALSE)
  }
  X <- data[, object$var.names, drop = FALSE]
  list(adapter = .gbm_adapter(object, X, n_trees), data = X)
}
