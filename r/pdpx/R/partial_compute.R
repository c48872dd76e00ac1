# The computations behind partial(): the tree readers (exact, gbm's recursion), R's predict by
# batched brute force, and a pred.fun called once per grid point as pdp calls it.

# pred.fun: pdp calls it once per grid point on the modified data (it may aggregate itself).
.partial_pred_fun <- function(object, pred.fun, grid, train, pred.var, ice, as_matrix = FALSE) {
  out <- lapply(seq_len(nrow(grid)), function(i) {
    temp <- train
    for (v in pred.var) temp[[v]] <- rep(grid[[v]][i], nrow(temp))
    pred.fun(object, newdata = if (as_matrix) data.matrix(temp) else temp)
  })
  len <- unique(lengths(out))
  if (length(len) != 1) .stop("pred.fun returned predictions of different lengths across grid points", call. = FALSE)
  yhat <- unlist(out, use.names = FALSE)
  if (len == 1 && !ice) return(cbind(grid, yhat = as.numeric(yhat)))
  ids <- names(out[[1]])
  data.frame(grid[rep(seq_len(nrow(grid)), each = len), , drop = FALSE], yhat = as.numeric(yhat),
             yhat.id = if (!is.null(ids)) rep(ids, nrow(grid)) else rep(seq_len(len), nrow(grid)),
             check.names = FALSE)
}

# Any other model: pdp's per-row number (.row_values: the prediction, or the centered logit or
# probability of a class) averaged by pdpx's batched brute force. Missing predictions: ICE curves
# (computed again as such when an average is not finite) averaged as pdp averages, mean(na.rm = TRUE).
.partial_brute <- function(object, grid, train, pred.var, type, ice, inv.link, which.class, prob, as_matrix,
                           n_jobs) {
  value <- .row_values(object, type, which.class, prob, inv.link, as_matrix)
  run <- function(kind) {
    withCallingHandlers(
      partial_dependence(object, train, pred.var, kind = kind, method = "brute", pred_fun = value,
                         custom_values = .grid_values(grid), grid_resolution = 2L, n_jobs = n_jobs,
                         include_missing = FALSE),
      warning = function(w) if (grepl("not all finite", conditionMessage(w))) invokeRestart("muffleWarning"))
  }
  if (!ice) {
    tidy <- .strip_pd(run("average"))
    at <- .grid_index(tidy, grid, pred.var)
    y <- rep(NA_real_, at$size)
    y[at$tidy] <- tidy$yhat
    if (all(is.finite(y[at$grid]))) return(cbind(grid, yhat = y[at$grid]))
  }
  tidy <- .strip_pd(run("individual"))
  at <- .grid_index(tidy, grid, pred.var)
  y <- matrix(NA_real_, nrow(train), at$size)
  y[cbind(tidy$row, at$tidy)] <- tidy$yhat
  y[!is.finite(y)] <- NA
  missing_rows <- sum(rowSums(is.na(y)) > 0)
  if (missing_rows && !ice) {
    .warn(sprintf(paste("the model's prediction is missing (NA) for %d of %d rows of train at some grid points;",
                          "they are left out of those averages, as pdp does (mean(na.rm = TRUE))"),
                    missing_rows, nrow(y)), call. = FALSE)
  }
  .rows_result(grid, y, at$grid, ice)
}

# pdp's result from a rows x grid points matrix of per-row numbers: the averages, or the ICE rows.
.rows_result <- function(grid, y, gi, ice) {
  if (!ice) return(cbind(grid, yhat = colMeans(y, na.rm = TRUE)[gi]))
  n <- nrow(y)
  data.frame(grid[rep(seq_len(nrow(grid)), each = n), , drop = FALSE],
             yhat = as.vector(y[, gi, drop = FALSE]), yhat.id = rep(seq_len(n), nrow(grid)), check.names = FALSE)
}

# The unique values of each predictor of the grid, for pdpx's custom_values (a Cartesian grid
# that contains every point of `grid`).
.grid_values <- function(grid) {
  lapply(grid, function(x) if (is.factor(x)) levels(droplevels(x)) else sort(unique(x)))
}

# A grid value as the number it is matched by: dates and times by their microsecond (pdpx's
# datetimes hold microseconds; a Date of pdp's grid may hold a fraction of a day), numbers as they are.
.grid_key <- function(x) {
  if (inherits(x, "Date")) return(round(unclass(x) * 86400 * 1e6))
  if (inherits(x, "POSIXt")) return(round(as.double(as.POSIXct(x)) * 1e6))
  as.double(x)
}

# pdpx's tidy rows and the rows of `grid` as positions in the Cartesian grid pdpx computed
# (numbers matched exactly, categories by label): list(tidy, grid, size).
.grid_index <- function(tidy, grid, pred.var) {
  at_tidy <- 0
  at_grid <- 0
  size <- 1
  for (j in seq_along(pred.var)) {
    categorical <- identical(tidy[[paste0("type_", j)]][1], "categorical")
    t <- if (categorical) tidy[[paste0("label_", j)]] else .grid_key(tidy[[paste0("x_", j)]])
    g <- grid[[pred.var[j]]]
    g <- if (categorical) as.character(g) else .grid_key(g)
    u <- unique(t)
    at_tidy <- at_tidy + (match(t, u) - 1) * size
    at_grid <- at_grid + (match(g, u) - 1) * size
    size <- size * length(u)
  }
  if (anyNA(at_grid)) .stop("internal: grid points missing from pdpx's result", call. = FALSE)
  list(tidy = at_tidy + 1, grid = at_grid + 1, size = size)
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

# The same for a list of per-class matrices (rows x grid points): one matrix of centered logits.
.centered_logit_matrices <- function(mats, k) {
  eps <- .Machine$double.eps
  lp <- lapply(mats, function(p) log(ifelse(p > 0, p, eps)))
  lp[[k]] - Reduce(`+`, lp) / length(lp)
}

# pdp's centered logit of column k of a probability matrix, row by row.
.centered_logit <- function(p, k) {
  eps <- .Machine$double.eps
  lp <- log(ifelse(p > 0, p, eps))
  lp[, k] - rowMeans(lp)
}

# randomForest, ranger and gbm read as trees (`exact`). `labels`: the class labels of a bernoulli
# gbm's columns cbind(p, 1 - p) (caret's levels, its first class being the event), else "1", "0".
.partial_compute <- function(object, grid, train, pred.var, type, ice, inv.link, which.class, prob, n.trees,
                             n_jobs, labels = NULL) {
  gbm <- .is_gbm(object)
  bernoulli <- gbm && .gbm_distribution(object) == "bernoulli"
  classification <- type == "classification"
  response <- if (gbm && !bernoulli) "raw" else "auto"
  if (gbm && !.gbm_distribution(object) %in% .gbm_supported) {
    .stop("pdpx::partial() reads gbm models of distributions ", paste(.gbm_supported, collapse = ", "),
         "; give a pred.fun for others", call. = FALSE)
  }
  per_row <- ice || !is.null(inv.link) || (classification && !prob)
  target <- NULL
  columns <- NULL
  if (classification && !bernoulli) {
    columns <- .class_columns(object, NULL)
    if (!is.null(columns)) {
      k <- .pick_class(columns, which.class)
      # two classes: the other's probability is 1 - p (forest probabilities sum to 1)
      target <- if (per_row && length(columns) > 2) columns else columns[k]
    }
  }
  pd <- partial_dependence(object, train, pred.var, kind = if (per_row) "individual" else "average",
                           custom_values = .grid_values(grid), method = "auto", response = response,
                           target = target, n_trees = n.trees, grid_resolution = 2L, n_jobs = n_jobs,
                           include_missing = FALSE)  # pdp draws no missing-value point
  tidy <- .strip_pd(pd)
  at <- .grid_index(tidy, grid, pred.var)
  n_grid <- at$size
  if (!per_row) {
    y <- rep(NA_real_, n_grid)
    y[at$tidy] <- tidy$yhat
    y <- y[at$grid]
    if (bernoulli && classification) y <- if (.pick_class(labels %||% c("1", "0"), which.class) == 1) y else 1 - y
    return(cbind(grid, yhat = y))
  }
  # one matrix (rows x grid points) per output
  outputs <- unique(tidy$output)
  mats <- lapply(outputs, function(o) {
    s <- tidy$output == o
    m <- matrix(NA_real_, nrow(train), n_grid)
    m[cbind(tidy$row[s], at$tidy[s])] <- tidy$yhat[s]
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
      columns <- labels %||% c("1", "0")
    }
    k <- .pick_class(columns, which.class)
    if (length(columns) == 2 && length(mats) == 1) {  # class k only: the other is 1 - p
      other <- 1 - mats[[1]]
      other[abs(other) < 1e-10] <- 0
      mats <- if (k == 1) list(mats[[1]], other) else list(other, mats[[1]])
    }
    if (prob) mats[[k]] else .centered_logit_matrices(mats, k)
  } else {
    m <- mats[[1]]
    if (!is.null(inv.link)) m[] <- inv.link(m)
    m
  }
  .rows_result(grid, y, at$grid, ice)
}

# gbm's weighted tree traversal (plot.gbm's numbers): pdpx's recursion on the link scale.
.partial_gbm_recursive <- function(object, grid, train, pred.var, type, which.class, prob, n.trees, n_jobs) {
  dist <- .gbm_distribution(object)
  if (!dist %in% .gbm_supported) {
    .stop("pdpx::partial() reads gbm models of distributions ", paste(.gbm_supported, collapse = ", "),
         call. = FALSE)
  }
  pd <- partial_dependence(object, train, pred.var, kind = "average", custom_values = .grid_values(grid),
                           method = "recursion", response = "raw", n_trees = n.trees, grid_resolution = 2L,
                           n_jobs = n_jobs, include_missing = FALSE)
  tidy <- .strip_pd(pd)
  at <- .grid_index(tidy, grid, pred.var)
  y <- rep(NA_real_, at$size)
  y[at$tidy] <- tidy$yhat
  y <- y[at$grid]
  if (dist == "bernoulli") {
    pr <- cbind(stats::plogis(y), 1 - stats::plogis(y))
    k <- .pick_class(c("1", "0"), which.class)
    y <- if (prob) pr[, k] else .centered_logit(pr, k)
  }
  cbind(grid, yhat = y)
}

