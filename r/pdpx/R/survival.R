# survival::coxph models: risk, survival and cumulative hazard by R's own predict() and survfit(), brute
# (pdpx.adapters.rfunction.RSurvivalAdapter reads the curves at the asked times).

.is_coxph <- function(object) inherits(object, "coxph") && !inherits(object, "coxph.null")

.coxph_check <- function(object) {
  specials <- attr(stats::terms(object), "specials")
  if (length(specials$strata) || length(survival::survfit(object, se.fit = FALSE)$strata)) {
    .stop("partial dependence of a stratified coxph model is not supported: survfit() gives one curve per ",
          "stratum, not per row; fit the model without strata() or give a pred_fun", call. = FALSE)
  }
  if (length(specials$tt)) {
    .stop("partial dependence of a coxph model with tt() terms is not supported (its covariates change over ",
          "time); give a pred_fun", call. = FALSE)
  }
  invisible(TRUE)
}

# A coxph's curves for newdata, rows x survfit()'s times: "surv" or "cumhaz".
.coxph_curves <- function(object, newdata, what) {
  sf <- survival::survfit(object, newdata = newdata, se.fit = FALSE)
  m <- matrix(sf[[what]], nrow = length(sf$time))
  t(m)
}

.coxph_prepare <- function(object, data) {
  if (!requireNamespace("survival", quietly = TRUE)) {
    .stop("a coxph model needs the survival package to predict", call. = FALSE)
  }
  .coxph_check(object)
  vars <- all.vars(stats::delete.response(stats::terms(object)))
  absent <- setdiff(vars, names(data))
  if (length(absent)) .stop("data lacks the coxph model's predictors: ", paste(absent, collapse = ", "), call. = FALSE)
  X <- data[, vars, drop = FALSE]
  template <- X[0, , drop = FALSE]
  steps <- survival::survfit(object, se.fit = FALSE)$time
  force(object)
  curve <- function(what) function(payload) {
    nd <- .rebuild_frame(payload, template)
    .raw64(.r_predict(.coxph_curves(object, nd, what)))
  }
  score <- function(type) function(payload) {
    nd <- .rebuild_frame(payload, template)
    .raw64(.r_predict(as.double(stats::predict(object, newdata = nd, type = type))))
  }
  py <- .pdpx_py()
  spec <- list(type = "survival_function", survival = curve("surv"), cumulative_hazard = curve("cumhaz"),
               risk = score("risk"), raw = score("lp"), times = .raw64(steps), feature_names = as.list(vars),
               model_name = class(object)[1])
  list(adapter = .py_call(py$bridge$r_adapter(spec)), data = X)
}

# Whether partial() reads `object` as a survival model (times, response).
.is_survival_model <- function(object) {
  .is_coxph(object) || (.is_ranger(object) && identical(object$forest$treetype, "Survival"))
}

# partial() of a survival model: pdpx's result on the grid's values, per time the grid's rows with `time` and
# `yhat` (ICE: every row of train per grid point, yhat.id the row), the times one after another.
.partial_survival <- function(object, grid, train, pred.var, ice, times, response, n_jobs) {
  pd <- partial_dependence(object, train, pred.var, kind = if (ice) "individual" else "average",
                           response = response, times = times, custom_values = .grid_values(grid),
                           grid_resolution = 2L, n_jobs = n_jobs, include_missing = FALSE)
  tidy <- .strip_pd(pd)
  if (!"time" %in% names(tidy)) tidy$time <- NA_real_  # risk: one output, no time
  blocks <- lapply(unique(tidy$time), function(t) {
    part <- tidy[if (is.na(t)) rep(TRUE, nrow(tidy)) else tidy$time %in% t, , drop = FALSE]
    at <- .grid_index(part, grid, pred.var)
    if (ice) {
      y <- matrix(NA_real_, nrow(train), at$size)
      y[cbind(part$row, at$tidy)] <- part$yhat
      out <- .rows_result(grid, y, at$grid, TRUE)
    } else {
      y <- rep(NA_real_, at$size)
      y[at$tidy] <- part$yhat
      out <- cbind(grid, yhat = y[at$grid])
    }
    if (is.na(t)) return(out)
    data.frame(out[pred.var], time = t, out[setdiff(names(out), pred.var)], check.names = FALSE)
  })
  do.call(rbind, blocks)
}
