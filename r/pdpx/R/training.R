# Where partial() finds the training data when `train` is not given (as pdp looks for it), and
# the tree model inside a caret `train` object that pdpx can read as it is.

.no_training_data <- function(object) {
  .stop("the training data could not be found from the ", .model_label(object), " model; pass it as ",
       "train = <data.frame>", call. = FALSE)
}

# caret: the stored trainingData (without .outcome); party's S4 models: their data slot; other
# models: the `data` argument of the model's call (`x` for the x/y interfaces of randomForest,
# svm and earth), evaluated where partial() was called, then where the model's formula was
# written, then in the global environment. A matrix or list found is made a data.frame.
.training_data <- function(object, env) {
  if (inherits(object, "train")) {
    train <- object$trainingData
    if (is.null(train)) .no_training_data(object)
    train$.outcome <- NULL
    return(train)
  }
  if (isS4(object)) {
    if (methods::is(object, "BinaryTree") || methods::is(object, "RandomForest")) {
      return(object@data@get("input"))
    }
    .no_training_data(object)
  }
  args <- if (inherits(object, "randomForest")) {
    if (inherits(object, "randomForest.formula")) "data" else "x"
  } else if (inherits(object, c("svm", "earth"))) c("data", "x") else "data"
  mcall <- tryCatch(stats::getCall(object), error = function(e) NULL)
  if (!is.call(mcall)) .no_training_data(object)
  envs <- list(env, tryCatch(attr(stats::terms(object), ".Environment"), error = function(e) NULL), globalenv())
  for (arg in args) {
    expr <- .call_argument(mcall, arg, env)
    if (is.null(expr)) next
    for (e in Filter(is.environment, envs)) {
      found <- tryCatch(eval(expr, e), error = function(err) NULL)
      if (is.data.frame(found)) return(found)
      if (is.matrix(found) || (is.list(found) && !is.object(found))) return(as.data.frame(found))
    }
  }
  .no_training_data(object)
}

# The expression given for argument `arg` in a model's call, matched by name (positional
# arguments named against the fitting function, as match.call() names them).
.call_argument <- function(mcall, arg, env) {
  if (!is.null(mcall[[arg]])) return(mcall[[arg]])
  f <- tryCatch(eval(mcall[[1L]], env), error = function(e) NULL)
  if (!is.function(f) || is.primitive(f)) return(NULL)
  matched <- tryCatch(match.call(f, mcall), error = function(e) NULL)
  if (is.null(matched)) NULL else matched[[arg]]
}

# A caret `train` object whose final model is a randomForest, a ranger or a gbm that predict.train
# feeds the data's own columns: no preProcess, and (formula interface) a model matrix that is the
# numeric columns themselves (no dummy variables, no transformed terms). Returns the model and
# what partial() needs to read it like predict.train, or NULL (then predict.train runs, by brute force).
# `bernoulli`: also a bernoulli gbm (caret codes its first class as the event).
.train_tree <- function(object, data, bernoulli = TRUE) {
  if (!inherits(object, "train")) return(NULL)
  fm <- object$finalModel
  inputs <- if (inherits(fm, "randomForest")) .rf_predictors(fm)
            else if (inherits(fm, "ranger")) fm$forest$independent.variable.names
            else if (inherits(fm, "gbm")) fm$var.names
  if (is.null(inputs) || !is.null(object$preProcess) || !all(inputs %in% names(data))) return(NULL)
  if (!is.null(object$terms)) {
    numeric_cols <- all(vapply(data[inputs], function(x) is.numeric(x) && !is.object(x), TRUE))
    if (!numeric_cols || !setequal(object$coefnames, inputs)) return(NULL)
  }
  classification <- identical(object$modelType, "Classification")
  if (inherits(fm, "gbm")) {
    d <- .gbm_distribution(fm)
    ok <- if (classification) bernoulli && d == "bernoulli" else d %in% c("gaussian", "laplace")
    if (!ok) return(NULL)
  }
  if (inherits(fm, "ranger") && classification && !identical(fm$treetype, "Probability estimation")) {
    .stop("this caret model's ranger forest gives no class probabilities (predict(type = \"prob\") fails, ",
         "and pdp refuses it): refit with trainControl(classProbs = TRUE)", call. = FALSE)
  }
  list(model = fm, levels = if (classification) as.character(object$levels),
       n.trees = if (inherits(fm, "gbm")) as.integer(fm$tuneValue$n.trees))
}
