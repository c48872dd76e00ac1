# Finding and loading the Python side (the pdpx Python package) through reticulate.
#
# reticulate 1.28 (Debian's) cannot convert NumPy arrays when NumPy 2 is installed:
# everything crossing the boundary is a data.frame (R -> pandas), a list, a string,
# a number, or a raw vector (numbers as little-endian doubles).

.pdpx_env <- new.env(parent = emptyenv())

#' The Python interpreter pdpx uses
#'
#' Looked up, in order: the option `pdpx.python`, the environment variable
#' `PDPX_PYTHON`, then `.venv/bin/python` in the repository that holds this
#' package's source (searched upwards from the package directory and from the
#' working directory).
#'
#' @return The path of the Python executable, or `NULL` when none was found
#'   (reticulate's default Python is then used).
#' @examples
#' pdpx_python()
#' @export
pdpx_python <- function() {
  opt <- getOption("pdpx.python")
  if (!is.null(opt) && nzchar(opt)) {
    return(path.expand(opt))
  }
  env <- Sys.getenv("PDPX_PYTHON", "")
  if (nzchar(env)) {
    return(path.expand(env))
  }
  starts <- unique(c(.package_dir(), getwd()))
  for (start in starts) {
    dir <- normalizePath(start, mustWork = FALSE)
    for (i in 1:6) {
      for (exe in c(file.path(dir, ".venv", "bin", "python"), file.path(dir, ".venv", "Scripts", "python.exe"))) {
        if (file.exists(exe)) {
          return(exe)
        }
      }
      parent <- dirname(dir)
      if (identical(parent, dir)) break
      dir <- parent
    }
  }
  NULL
}

.package_dir <- function() {
  dir <- tryCatch(getNamespaceInfo("pdpx", "path"), error = function(e) "")
  if (!nzchar(dir)) dir <- system.file(package = "pdpx")
  if (nzchar(dir)) dir else character(0)
}

#' Is the pdpx Python package importable?
#'
#' @return `TRUE` or `FALSE`, never an error.
#' @examples
#' pdpx_available()
#' @export
pdpx_available <- function() {
  isTRUE(tryCatch(!is.null(.pdpx_py()), error = function(e) FALSE))
}

# The Python modules, imported once per R session.
.pdpx_py <- function() {
  if (!is.null(.pdpx_env$py)) {
    return(.pdpx_env$py)
  }
  python <- pdpx_python()
  if (!is.null(python) && !file.exists(python)) {
    stop("the Python interpreter '", python, "' set for pdpx does not exist. Set ",
         "options(pdpx.python = '/path/to/python') or the environment variable PDPX_PYTHON ",
         "to a Python that has pdpx installed (in the pdpx repository: `make setup`, ",
         "then .venv/bin/python).", call. = FALSE)
  }
  if (reticulate::py_available(initialize = FALSE)) {
    active <- reticulate::py_config()$python
    if (!is.null(python) && !.same_python(active, python)) {
      warning("reticulate already uses the Python '", active, "', not '", python,
              "' (reticulate binds one Python per R session). pdpx tries the active one.",
              call. = FALSE)
    }
  } else if (!is.null(python)) {
    reticulate::use_python(python, required = TRUE)
  }
  if (!reticulate::py_module_available("pdpx")) {
    used <- tryCatch(reticulate::py_config()$python, error = function(e) "(none found)")
    stop("the pdpx Python package is not importable from the Python '", used, "'. ",
         "In the pdpx repository run `make setup` (it creates .venv with pdpx installed), ",
         "or point R to a Python that has it: options(pdpx.python = '/path/to/python') or ",
         "Sys.setenv(PDPX_PYTHON = '/path/to/python') before the first pdpx call.",
         call. = FALSE)
  }
  py <- list(
    pdpx = reticulate::import("pdpx", convert = TRUE),
    bridge = reticulate::import("pdpx.r_bridge", convert = TRUE)
  )
  .pdpx_env$py <- py
  py
}

.same_python <- function(a, b) {
  if (identical(a, b)) return(TRUE)
  na <- normalizePath(a, mustWork = FALSE)
  nb <- normalizePath(b, mustWork = FALSE)
  identical(na, nb) || identical(dirname(dirname(a)), dirname(dirname(b)))
}

# ---------------------------------------------------------------------------
# Python's errors and warnings in R's words
# ---------------------------------------------------------------------------

# The exported function the user called (the outermost one: partial() calls partial_dependence()),
# named in errors and warnings, and the argument names of that function for Python's names.
.enter_api <- function(name) {
  prev <- .pdpx_env$api
  if (is.null(prev)) .pdpx_env$api <- name
  prev
}

.leave_api <- function(prev) {
  .pdpx_env$api <- prev
  invisible()
}

.api_name <- function() .pdpx_env$api %||% "partial_dependence"

# R's own errors and warnings, named by the function the user called ("partial(): which.class must
# be ..."), as Python's are (.r_words); outside such a call, as they are.
.stop <- function(..., call. = FALSE) {
  api <- .pdpx_env$api
  stop(if (is.null(api)) "" else paste0(api, "(): "), ..., call. = FALSE)
}

.warn <- function(..., call. = FALSE) {
  api <- .pdpx_env$api
  warning(if (is.null(api)) "" else paste0(api, "(): "), ..., call. = FALSE)
}

# Python's argument names as each R function spells them (the rest are the same in R and Python).
.api_args <- list(
  partial = c(X = "train", features = "pred.var", target = "which.class", grid_resolution = "grid.resolution",
              custom_values = "pred.grid", centered = "center"),
  partial_dependence = c(X = "data", centered = "center"),
  ale = c(X = "data", centered = "center"),
  pd_importance = c(X = "data"),
  h_statistic = c(X = "data")
)

# Python's words in a message from Python, in R's: ['a', 'b'] -> c("a", "b"), 'a' -> "a",
# True/False/None -> TRUE/FALSE/NULL, name=value -> name = value, res.plot() -> plot(res),
# pdpx.partial_dependence -> partial_dependence(), Python's argument names -> the R function's,
# no exception class names (RuntimeError:, PdpxError:) and no traceback.
.r_words <- function(msg, api = .api_name(), prefix = TRUE) {
  msg <- sub("\n+(Detailed traceback|Run `reticulate::py_last_error\\(\\)`).*$", "", msg)
  msg <- gsub("(^|\n)([A-Za-z_][A-Za-z0-9_.]*\\.)?[A-Za-z_][A-Za-z0-9_]*(Error|Exception|Warning|Interrupt): ", "\\1",
              msg, perl = TRUE)
  msg <- sub("^Error in py_call_impl\\([^)]*\\) *: *", "", msg)
  # a class name inside a sentence ("the model raised RuntimeError: ..."): R's errors have none
  msg <- gsub("\\braised [A-Za-z_.]*(Error|Exception|Warning): ", "raised the error: ", msg, perl = TRUE)
  msg <- gsub("\\b[A-Za-z_]+\\.?[A-Z][A-Za-z]*(Error|Exception): ", "", msg, perl = TRUE)
  msg <- trimws(msg)
  # Python's repr of a list of strings or numbers: c(...)
  msg <- gsub("\\[((?:'[^']*'|-?[0-9.]+(?:e[-+]?[0-9]+)?)(?:, (?:'[^']*'|-?[0-9.]+(?:e[-+]?[0-9]+)?))*)\\]",
              "c(\\1)", msg, perl = TRUE)
  msg <- gsub("(?<![A-Za-z0-9_.])\\(((?:'[^']*')(?:, '[^']*')+),?\\)", "c(\\1)", msg, perl = TRUE)
  # quoted values: 'x' -> "x" (an apostrophe inside a word, as in model's, is left alone)
  msg <- gsub("(^|[\\s(\\[{,=:])'([^'\n]*)'(?=$|[\\s)\\]},.;:])", "\\1\"\\2\"", msg, perl = TRUE)
  msg <- gsub("\\bnp\\.[a-z_]+[0-9]*\\(([^()]*)\\)", "\\1", msg, perl = TRUE)  # numpy scalars' repr
  msg <- gsub("\\bNaN\\b", "NA", msg, perl = TRUE)  # R reads Python's missing numbers as NA
  msg <- gsub(" \\(or their positions [0-9]+\\.\\.[0-9]+\\)", "", msg)  # Python's 0-based positions
  msg <- gsub("\\bTrue\\b", "TRUE", msg, perl = TRUE)
  msg <- gsub("\\bFalse\\b", "FALSE", msg, perl = TRUE)
  msg <- gsub("\\bNone\\b(?! of)", "NULL", msg, perl = TRUE)  # not the English "None of ..."
  msg <- gsub("\\(an? (str|string)\\)", "(a character string)", msg)
  msg <- gsub("\\(an? (float|int|integer)\\)", "(a number)", msg)
  msg <- gsub("\\(a dict\\)", "(a named list)", msg)
  msg <- gsub("\\ba dict\\b", "a named list", msg)
  # results: Python's attributes and methods, R's functions
  # (R's results hold no support table: the sentence that points to it is left out)
  msg <- gsub(";? ?res\\.support and res\\.unsupported show where the grid has rows, and res\\.plot\\(\\) shades what has none",
              "", msg)
  msg <- gsub("\\bres\\.plot\\(\\)", "plot(res)", msg)
  msg <- gsub("\\bres\\.to_frame\\(\\)", "as.data.frame(res)", msg)
  msg <- gsub("\\bres\\.([a-z_]+)\\b", "attr(res, \"pdpx\")$\\1", msg)
  msg <- gsub("\\bpdpx\\.importance\\(", "pd_importance(", msg)  # a call written out: its arguments follow
  msg <- gsub("\\bpdpx\\.(partial_dependence|h_statistic|ale)\\(", "\\1(", msg)
  msg <- gsub("\\(?\\bpdpx\\.importance\\b\\)?", "pd_importance()", msg)
  msg <- gsub("\\bpdpx\\.(partial_dependence|h_statistic|ale)\\b(\\(\\))?", "\\1()", msg)
  # argument names
  args <- .api_args[[api]] %||% .api_args$partial_dependence
  for (py_name in names(args)) {
    # X (the data) wherever it stands alone; other names where they name an argument (followed by
    # =, a value or "must"), not the English word
    after <- if (py_name == "X") "(?=[= ]|$|[,.;:)'])" else "(?==| \"| must )"
    msg <- gsub(paste0("(?<![A-Za-z0-9_.\"'])", py_name, after), args[[py_name]], msg, perl = TRUE)
  }
  msg <- gsub("\\b([A-Za-z_][A-Za-z0-9_.]*)=(?=[\"A-Za-z0-9c(-])", "\\1 = ", msg, perl = TRUE)
  # the function: the one the user called, once (an R error raised inside the call may name it too)
  msg <- sub("^(pdpx\\.)?(partial_dependence|importance|h_statistic|ale)\\(\\): *", "", msg)
  msg <- gsub(paste0("(?<![A-Za-z0-9_.])", api, "\\(\\): "), "", msg, perl = TRUE)
  if (prefix) paste0(api, "(): ", msg) else msg
}

# Call Python; turn a Python exception into an R error in R's words (.r_words). When an R predict
# function failed inside the call, its own message is the error (with what pdpx says about where).
.py_call <- function(expr) {
  .pdpx_env$predict_error <- NULL
  tryCatch(expr, error = function(e) {
    raw <- conditionMessage(e)
    r_err <- .pdpx_env$predict_error
    .pdpx_env$predict_error <- NULL
    if (is.null(r_err)) stop(.r_words(raw), call. = FALSE)
    # the R error's own text stays as R wrote it (Python's words around it are translated)
    mark <- "\001R error\001"
    inside <- grepl(r_err, raw, fixed = TRUE)
    msg <- .r_words(if (inside) gsub(r_err, mark, raw, fixed = TRUE) else raw)
    shown <- sub(paste0("^", .api_name(), "\\(\\): "), "", r_err)
    msg <- if (inside) gsub(mark, shown, msg, fixed = TRUE) else paste0(msg, "\nthe model's predict() failed: ", shown)
    if (!grepl("predict", msg, fixed = TRUE)) {
      msg <- sub(shown, paste0("the model's predict() failed: ", shown), msg, fixed = TRUE)
    }
    stop(msg, call. = FALSE)
  })
}

# A warning from Python, in R's words.
.py_warning <- function(w) warning(.r_words(w), call. = FALSE)

# Run an R predict function for Python: its error's message is kept for .py_call (Python sees it
# wrapped in its own exception class).
.r_predict <- function(expr) {
  withCallingHandlers(expr, error = function(e) {
    .pdpx_env$predict_error <- conditionMessage(e)
  })
}

# ---------------------------------------------------------------------------
# data across the boundary
# ---------------------------------------------------------------------------

# Doubles as a raw vector (Python receives a bytearray).
.raw64 <- function(x) writeBin(as.double(x), raw(), endian = "little")

.read64 <- function(x, n) readBin(x, "double", n = n, endian = "little")

# A character vector from what reticulate makes of a Python list of str / None.
.as_chr <- function(x) {
  if (is.null(x)) return(character(0))
  if (is.list(x)) {
    return(vapply(x, function(e) if (is.null(e)) NA_character_ else as.character(e), ""))
  }
  as.character(x)
}

# A data.frame as plain data for Python (pdpx.r_bridge.frame_from_r):
# numbers as raw float64 bytes, factors and text as codes + levels, NA kept as NA.
# Dates and times as numbers too: a Date as its days since 1970-01-01, a POSIXct as its
# seconds with its time zone (pandas datetime64, tz-aware when the column names a zone).
# Faster than reticulate's conversion, which also reads an integer NA as
# -2147483648, a logical NA as TRUE and a character NA as "NA". NULL when a column
# is of another class (list, ...): reticulate converts those.
.frame_payload <- function(df) {
  cols <- list()
  for (nm in names(df)) {
    v <- df[[nm]]
    cols[[nm]] <- if (inherits(v, "Date")) {
      list(type = "date", data = .raw64(unclass(v)))
    } else if (inherits(v, "POSIXt")) {
      list(type = "datetime", data = .raw64(as.double(as.POSIXct(v))), tz = .tz_of(v))
    } else if (is.factor(v)) {
      list(type = "factor", codes = .raw64(as.integer(v)), levels = as.list(levels(v)), ordered = is.ordered(v))
    } else if (is.character(v) && is.null(attributes(v))) {
      lv <- unique(v[!is.na(v)])
      list(type = "character", codes = .raw64(match(v, lv)), levels = as.list(lv))
    } else if (is.logical(v) && is.null(attributes(v))) {
      list(type = "logical", data = .raw64(v))
    } else if (is.integer(v) && is.null(attributes(v))) {
      list(type = "integer", data = .raw64(v))
    } else if (is.double(v) && is.null(attributes(v))) {
      list(type = "double", data = .raw64(v))
    } else {
      return(NULL)
    }
  }
  list(n = nrow(df), names = as.list(names(df)), columns = cols)
}

# Per column of `columns`: "days" when `data` holds it as a Date, "seconds" as a POSIXct, "" otherwise: R's
# tree libraries read such a column as data.matrix() does (its days or seconds since 1970-01-01 UTC), and so
# does pdpx (pdpx.r_wire.r_time_numbers).
.time_units <- function(data, columns) {
  vapply(columns, function(v) {
    col <- data[[v]]
    if (inherits(col, "Date")) "days" else if (inherits(col, "POSIXt")) "seconds" else ""
  }, "", USE.NAMES = FALSE)
}

# The time zone of a POSIXct ("" for the session's zone: named, so Python keeps R's wall clock).
.tz_of <- function(x) {
  tz <- attr(as.POSIXct(x), "tzone")[1]
  if (is.null(tz) || is.na(tz) || !nzchar(tz)) tz <- Sys.timezone()
  if (is.null(tz) || is.na(tz) || !nzchar(tz)) "UTC" else tz
}

# Seconds since 1970-01-01 UTC as a vector of the class of `template` (Date or POSIXct, its zone kept).
.as_time_like <- function(secs, template) {
  secs[is.nan(secs)] <- NA_real_
  if (inherits(template, "Date")) return(structure(secs / 86400, class = "Date"))
  .POSIXct(secs, tz = attr(template, "tzone")[1])
}

# The rows pdpx sends to a predict closure (pdpx.r_bridge.frame_columns),
# rebuilt as a data.frame with the column classes of `template` (a 0-row data.frame).
.rebuild_frame <- function(payload, template) {
  n <- as.integer(payload$n)
  nms <- .as_chr(payload$names)
  cols <- lapply(nms, function(nm) {
    v <- payload$columns[[nm]]
    v <- if (is.raw(v)) .read64(v, n) else .as_chr(v)
    if (is.double(v)) v[is.nan(v)] <- NA_real_  # Python's NaN is R's NA (C code tests ISNA, which NaN fails)
    tpl <- template[[nm]]
    if (is.null(tpl)) {
      v
    } else if (inherits(tpl, c("Date", "POSIXt"))) {
      .as_time_like(v, tpl)
    } else if (is.factor(tpl)) {
      v <- as.integer(v)
      attributes(v) <- list(levels = levels(tpl), class = class(tpl))
      v
    } else if (is.logical(tpl)) {
      as.logical(v)
    } else if (is.integer(tpl) && is.numeric(v) && all(is.na(v) | v == round(v))) {
      as.integer(v)
    } else {
      v
    }
  })
  names(cols) <- nms
  structure(cols, class = "data.frame", row.names = .set_row_names(n))
}

# What pdpx.r_bridge.frame_for_r returns, as a data.frame.
.decode_frame <- function(fr) {
  n <- as.integer(fr$n)
  nms <- .as_chr(fr$names)
  cols <- lapply(nms, function(nm) {
    col <- fr$columns[[nm]]
    if (identical(col$type, "character")) {
      levels <- .as_chr(col$levels)
      codes <- .read64(col$codes, n)
      levels[codes]
    } else if (identical(col$type, "datetime")) {
      tz <- if (nzchar(col$tz %||% "")) col$tz else "UTC"
      .as_time_like(.read64(col$data, n), .POSIXct(0, tz = tz))
    } else {
      v <- .read64(col$data, n)
      v[is.nan(v)] <- NA_real_  # Python's missing value (NaN) is R's NA
      if (identical(col$type, "integer")) as.integer(v) else v
    }
  })
  names(cols) <- nms
  structure(cols, class = "data.frame", row.names = .set_row_names(n))
}

# Predictions as a numeric matrix (rows x outputs), or an error that says what to do: class labels,
# lists and tables of non-numbers are never averaged.
.as_pred_matrix <- function(p, n = NULL, object = NULL) {
  model <- if (is.null(object)) "the model" else paste0("a \"", class(object)[1], "\" model")
  labels <- is.factor(p) || is.character(p) || is.logical(p) ||
    (is.data.frame(p) && !all(vapply(p, function(x) is.numeric(x) && !is.factor(x), TRUE)))
  if (labels) {
    stop("the predictions of ", model, " are class labels (or other non-numbers), which cannot be averaged. ",
         "Give pred_fun returning class probabilities, e.g. pred_fun = function(object, newdata) ",
         "predict(object, newdata, type = \"prob\")", call. = FALSE)
  }
  if (is.data.frame(p)) p <- as.matrix(p)
  if (is.list(p) || !(is.numeric(p) && is.null(dim(p)) || is.matrix(p) && is.numeric(p))) {
    what <- if (is.list(p) && !is.null(names(p))) paste0("a list (", paste(names(p), collapse = ", "), ")")
            else paste("an object of class", class(p)[1])
    stop("the predictions of ", model, " are ", what, ", not numbers: give pred_fun returning a numeric ",
         "vector or a matrix with one column per output, e.g. pred_fun = function(object, newdata) ",
         "predict(object, newdata)$posterior", call. = FALSE)
  }
  if (is.null(dim(p))) p <- matrix(as.double(p), ncol = 1)
  storage.mode(p) <- "double"
  if (!is.null(n) && nrow(p) != n) {
    stop("the predict function returned ", nrow(p), " predictions for ", n, " rows", call. = FALSE)
  }
  p
}
