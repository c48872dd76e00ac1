# The model zoo of pdp's partial(): for each model class, whether it is a regression or a
# classification model, how its predictions and class probabilities are obtained (pdp 0.8.2's
# rules), and the checks that only numbers on the intended scale are ever averaged.

# Classes with a rule, looked up in S3 dispatch order (the first class of the model that has one).
.rule_classes <- c("train", "randomForest", "ranger", "gbm", "glm", "lm", "lda", "qda", "multinom", "nnet",
                   "svm", "ksvm", "naiveBayes", "earth", "fda", "mars", "rpart", "BinaryTree", "RandomForest",
                   "classbagg", "regbagg", "nls", "ppr")

.model_kind <- function(object) {
  cls <- c(class(object), if (isS4(object)) methods::is(object))
  hit <- cls[cls %in% .rule_classes]
  if (length(hit)) hit[1] else NA_character_
}

.model_label <- function(object) paste0("\"", class(object)[1], "\"")

# The predict generic of `object`: the S4 generic of the package defining an S4 model's class
# when there is one (kernlab's predict methods are S4 methods, which stats::predict never
# reaches), else stats::predict.
.predict_generic <- function(object) {
  pkg <- if (isS4(object)) attr(class(object), "package") else NULL
  if (!is.null(pkg) && requireNamespace(pkg, quietly = TRUE)) {
    f <- get0("predict", envir = asNamespace(pkg), inherits = FALSE)
    if (methods::is(f, "standardGeneric")) return(f)
  }
  stats::predict
}

# regression or classification, as pdp decides it; anything else is an error.
.pdp_task <- function(object) {
  kind <- .model_kind(object)
  other <- function(what) {
    .stop("partial() computes partial dependence of regression and classification models; this ",
         .model_label(object), " model is ", what, ". Give a pred.fun returning the number to average, e.g. ",
         "pred.fun = function(object, newdata) mean(predict(object, newdata))", call. = FALSE)
  }
  family <- function(f) if (f == "binomial") "classification"
                        else if (f %in% c("gaussian", "Gamma", "inverse.gaussian", "poisson")) "regression"
                        else other(paste0("of family ", f))
  if (is.na(kind)) {
    .warn("the task of a ", .model_label(object), " model could not be determined; assuming ",
            "type = \"regression\" (as pdp does): give type = \"classification\" for a classifier",
            call. = FALSE)
    return("regression")
  }
  switch(kind,
    train = switch(object$modelType, Classification = "classification", Regression = "regression",
                   other(paste("a caret", object$modelType, "model"))),
    randomForest = {
      if (identical(object$type, "unsupervised")) .stop("an unsupervised randomForest makes no predictions", call. = FALSE)
      object$type
    },
    ranger = switch(object$treetype, Regression = "regression", "Probability estimation" = "classification",
                    Classification = "classification", other(paste("a", tolower(object$treetype), "forest"))),
    gbm = {
      d <- .gbm_distribution(object)
      if (d %in% c("bernoulli", "huberized", "multinomial", "adaboost")) "classification"
      else if (d %in% c("coxph", "gaussian", "laplace", "tdist", "gamma", "poisson", "tweedie")) "regression"
      else other(paste("of distribution", d))
    },
    glm = family(object$family$family),
    earth = if (is.null(object$glm.list)) "regression" else family(object$glm.list[[1L]]$family$family),
    lda = , qda = , multinom = , naiveBayes = , fda = , classbagg = "classification",
    lm = , regbagg = , nls = "regression",
    nnet = if (is.null(object$lev)) "regression" else "classification",
    svm = if (object$type %in% c(3, 4)) "regression" else if (object$type == 2) other("a one-class svm")
          else "classification",
    ksvm = if (grepl("svr$", object@type)) "regression" else if (grepl("svc$", object@type)) "classification"
           else other(paste("of type", object@type)),
    mars = if (NCOL(object$fitted.values) > 1) other("a multivariate response model") else "regression",
    ppr = if (object$q > 1) other("a multivariate response model") else "regression",
    rpart = switch(object$method, anova = "regression", class = "classification",
                   other(paste("of method", object$method))),
    BinaryTree = , RandomForest = {
      r <- object@responses
      if (r@is_nominal) "classification" else if (r@is_ordinal || r@is_censored) other("not nominal or numeric")
      else "regression"
    }
  )
}

# ---------------------------------------------------------------------------
# regression: one number per row
# ---------------------------------------------------------------------------

.regression_predictions <- function(object, newdata) {
  kind <- .model_kind(object)
  kind <- if (is.na(kind)) "" else kind
  predict <- .predict_generic(object)
  p <- switch(kind,
    mars = predict(object, newdata = data.matrix(newdata)),
    ranger = predict(object, data = newdata)$predictions,
    predict(object, newdata = newdata)
  )
  if ((is.matrix(p) || is.data.frame(p)) && ncol(p) >= 1) p <- p[, 1L, drop = TRUE]  # pdp: the first column
  .check_numbers(p, nrow(newdata), object, kind)
}

# A numeric vector of one prediction per row, or an error naming the model class and the pred.fun to write.
.check_numbers <- function(p, n, object, kind = "", api = "partial") {
  if (is.numeric(p) && !is.factor(p) && is.null(dim(p)) && length(p) == n) return(as.double(p))
  what <- if (is.factor(p) || is.character(p) || is.logical(p)) "class labels"
          else if (is.list(p)) paste0("a list (", paste(names(p), collapse = ", "), ")")
          else if (is.numeric(p)) sprintf("%d numbers for %d rows", length(p), n)
          else paste0("an object of class ", class(p)[1])
  if (api == "partial_dependence") {
    numeric_parts <- if (is.list(p) && !is.null(names(p))) names(p)[vapply(p, is.numeric, TRUE)] else character(0)
    example <- if (length(numeric_parts)) paste0("predict(object, newdata)$", numeric_parts[1])
               else "predict(object, newdata, type = \"prob\")"
    .stop("predict() of a ", .model_label(object), " model returns ", what, ", not numbers, and pdpx has no rule ",
         "for this class: give pred_fun returning a numeric vector or a matrix with one column per output, e.g. ",
         "pred_fun = function(object, newdata) ", example, call. = FALSE)
  }
  classifier <- !is.na(kind) && nzchar(kind) &&
    identical(tryCatch(.pdp_task(object), error = function(e) ""), "classification")
  hint <- if (classifier) {
    paste0("pdpx reads it as a classification model: use type = \"auto\" (or \"classification\"), ",
           "or give a pred.fun returning the number to average")
  } else {
    paste0("pdpx has no rule for this class. Give a pred.fun returning the number to average, e.g. ",
           "pred.fun = function(object, newdata) mean(predict(object, newdata, type = \"prob\")[, 1]) for the ",
           "probability of the first class, or type = \"classification\" if it has a predict(type = \"prob\")")
  }
  .stop("predict() of a ", .model_label(object), " model returns ", what, ", not one number per row on the ",
       "regression scale, and pdpx never averages those; ", hint, call. = FALSE)
}

# ---------------------------------------------------------------------------
# classification: one probability per class and row
# ---------------------------------------------------------------------------

# Labels of the two columns cbind(p, 1 - p) of a model predicting the probability p of the event.
.binary_labels <- function(object, kind) {
  lv <- switch(kind,
    glm = { y <- if (!is.null(object$model)) stats::model.response(object$model); if (is.factor(y)) levels(y)
            else if (is.logical(y)) c("FALSE", "TRUE") },
    earth = object$levels,
    multinom = , nnet = object$lev
  )
  if (length(lv) == 2) rev(as.character(lv)) else c("1", "0")
}

.two_columns <- function(p, labels) {
  p <- as.double(p)
  out <- cbind(p, 1 - p)
  colnames(out) <- labels
  out
}

.raw_probabilities <- function(object, newdata, kind) {
  predict <- .predict_generic(object)
  switch(kind,
    glm = , earth = .two_columns(predict(object, newdata = newdata, type = "response"), .binary_labels(object, kind)),
    lda = , qda = predict(object, newdata = newdata)$posterior,
    multinom = , nnet = {
      p <- predict(object, newdata = newdata, type = if (kind == "multinom") "probs" else "raw")
      if (NCOL(p) == 1) .two_columns(p, .binary_labels(object, kind)) else p
    },
    svm = {
      if (is.null(object$call$probability)) {
        .stop("class probabilities of an svm model need it fitted with probability = TRUE (pdp refuses it ",
             "too): refit with svm(..., probability = TRUE), or give a pred.fun", call. = FALSE)
      }
      p <- attr(predict(object, newdata = newdata, probability = TRUE), "probabilities")
      if (is.null(p)) .stop("this svm model returns no class probabilities: refit it with probability = TRUE", call. = FALSE)
      p
    },
    ksvm = {
      if (is.null(object@kcall$prob.model)) {
        .stop("class probabilities of a ksvm model need it fitted with prob.model = TRUE (pdp refuses it too): ",
             "refit with ksvm(..., prob.model = TRUE), or give a pred.fun", call. = FALSE)
      }
      predict(object, newdata = newdata, type = "probabilities")
    },
    naiveBayes = predict(object, newdata = newdata, type = "raw"),
    fda = predict(object, newdata = newdata, type = "posterior"),
    BinaryTree = , RandomForest = {
      p <- do.call(rbind, predict(object, newdata = newdata, type = "prob"))
      colnames(p) <- levels(object@responses@variables[[1L]])
      p
    },
    tryCatch(predict(object, newdata = newdata, type = "prob"), error = function(e) {
      .stop("class probabilities of a ", .model_label(object), " model could not be obtained with ",
           "predict(type = \"prob\"): ", conditionMessage(e), ". Give a pred.fun", call. = FALSE)
    })
  )
}

# The class probabilities of `object` for `newdata` as an n x K numeric matrix, checked.
.class_probabilities <- function(object, newdata) {
  kind <- .model_kind(object)
  p <- .raw_probabilities(object, newdata, if (is.na(kind)) "" else kind)
  .check_probabilities(p, nrow(newdata), object)
}

.check_probabilities <- function(p, n, object) {
  if (is.data.frame(p) && all(vapply(p, is.numeric, TRUE))) p <- as.matrix(p)
  if (!is.matrix(p) || !is.numeric(p) || nrow(p) != n || ncol(p) < 2) {
    what <- if (is.factor(p) || is.character(p)) "class labels" else if (is.matrix(p) || is.data.frame(p))
      sprintf("a %d x %d %s", NROW(p), NCOL(p), if (is.numeric(p)) "matrix" else "table of non-numbers")
      else paste("an object of class", class(p)[1])
    .stop("the class probabilities of a ", .model_label(object), " model came back as ", what, ", not a ",
         "matrix of one column per class and one row per row of data. Give a pred.fun returning the number to ",
         "average, e.g. pred.fun = function(object, newdata) mean(predict(object, newdata, type = \"prob\")[, 1])",
         call. = FALSE)
  }
  storage.mode(p) <- "double"
  v <- p[!is.na(p)]
  if (any(v < -1e-9 | v > 1 + 1e-9)) {
    .stop("the class probabilities of a ", .model_label(object), " model are outside [0, 1] (from ",
         signif(min(v), 4), " to ", signif(max(v), 4), "): they are not probabilities, and pdpx does not ",
         "average them. Give a pred.fun returning the number to average", call. = FALSE)
  }
  s <- rowSums(p)
  bad <- which(!is.na(s) & abs(s - 1) > 1e-6)
  if (length(bad)) {
    .stop("the class probabilities of a ", .model_label(object), " model do not sum to 1 in ", length(bad),
         " of ", n, " rows (e.g. ", signif(s[bad[1]], 6), "): they are not one probability per class, and pdpx ",
         "does not average them. Give a pred.fun returning the number to average", call. = FALSE)
  }
  if (is.null(colnames(p))) colnames(p) <- as.character(seq_len(ncol(p)))
  p
}

# The per-row number pdp averages: for classification the centered logit of class `which.class`
# (or its probability with prob = TRUE), for regression the prediction (with inv.link applied).
# Returns function(object, newdata); `as_matrix`: predict() receives a matrix, as the train given.
.row_values <- function(object, type, which.class, prob, inv.link, as_matrix) {
  force(which.class)
  prepare <- if (as_matrix) data.matrix else identity
  if (type == "classification") {
    function(object, newdata) {
      p <- .class_probabilities(object, prepare(newdata))
      k <- .pick_class(colnames(p), which.class)
      if (prob) p[, k] else .centered_logit(p, k)
    }
  } else {
    function(object, newdata) {
      p <- .regression_predictions(object, prepare(newdata))
      if (is.null(inv.link)) p else inv.link(p)
    }
  }
}

# Default predictions for partial_dependence(): predict() when it returns numbers, else the class
# probabilities of a classifier pdpx has a rule for, else an error naming the model class.
.default_predict <- function(object, probe) {
  predict <- .predict_generic(object)
  plain <- function(object, newdata) predict(object, newdata = newdata)
  p <- plain(object, probe)
  numeric_out <- (is.numeric(p) && !is.factor(p)) || (is.data.frame(p) && all(vapply(p, is.numeric, TRUE)))
  if (numeric_out) return(plain)
  kind <- .model_kind(object)
  classifier <- !is.na(kind) && identical(tryCatch(suppressWarnings(.pdp_task(object)), error = function(e) ""),
                                          "classification")
  if (classifier) return(function(object, newdata) .class_probabilities(object, newdata))
  .check_numbers(p, nrow(probe), object, api = "partial_dependence")
}
