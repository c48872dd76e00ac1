#' Create a Python environment with pdpx for this package
#'
#' Makes a virtual environment (`python -m venv`) at `envdir`, installs the pdpx
#' Python package into it with pip (from `source`: a path to the pdpx repository,
#' or a pip requirement), and sets `options(pdpx.python = ...)` for this session.
#' The install includes the exact tree engine (numba); its kernels are then compiled
#' once into numba's cache (about half a minute), so that the first
#' `partial_dependence()` of a session only loads them.
#' To use it in later sessions, put `PDPX_PYTHON=<envdir>/bin/python` in
#' `~/.Renviron` (the returned path).
#'
#' @param envdir Where to create the environment (default: `venv` in
#'   `tools::R_user_dir("pdpx", "data")`).
#' @param source What pip installs: a local pdpx checkout (default: the repository
#'   this package was installed from, when found) or a requirement such as `"pdpx"`.
#' @param python The Python used to create the environment.
#' @return The path of the environment's Python, invisibly.
#' @examples
#' \dontrun{
#' py <- install_pdpx("~/.pdpx-venv", source = "~/src/pdpx")
#' }
#' @export
install_pdpx <- function(envdir = .default_envdir(), source = NULL,
                         python = Sys.which("python3")) {
  .check_string(envdir, "envdir")
  if (!nzchar(python)) .stop("no python3 found on the PATH; give python = '/path/to/python3'", call. = FALSE)
  if (is.null(source)) source <- .repo_root()
  if (is.null(source)) {
    .stop("give source = the path of a pdpx checkout (or a pip requirement naming pdpx)", call. = FALSE)
  }
  envdir <- path.expand(envdir)
  dir.create(dirname(envdir), recursive = TRUE, showWarnings = FALSE)
  # PYTHONSAFEPATH: Python (3.11+) then imports nothing from R's working folder (a stray pip.py or numpy.py there)
  run <- function(cmd, args) {
    status <- system2(cmd, args, env = "PYTHONSAFEPATH=1")
    if (!identical(status, 0L)) .stop("failed: ", cmd, " ", paste(args, collapse = " "), call. = FALSE)
  }
  run(python, c("-m", "venv", shQuote(envdir)))
  exe <- file.path(envdir, if (.Platform$OS.type == "windows") "Scripts/python.exe" else "bin/python")
  run(exe, c("-m", "pip", "install", "--quiet", "--upgrade", "pip"))
  run(exe, c("-m", "pip", "install", "--quiet", shQuote(path.expand(source))))
  message("Compiling pdpx's exact tree kernels (once, about half a minute)...")
  run(exe, c("-m", "pdpx.plugins.trees.warmup"))
  options(pdpx.python = exe)
  message("pdpx installed in ", envdir, ". For later sessions add to ~/.Renviron:\nPDPX_PYTHON=", exe)
  invisible(exe)
}

# The pdpx repository holding this package's source (a directory with pyproject.toml), if any.
.repo_root <- function() {
  for (start in unique(c(.package_dir(), getwd()))) {
    dir <- normalizePath(start, mustWork = FALSE)
    for (i in 1:6) {
      if (file.exists(file.path(dir, "pyproject.toml")) && dir.exists(file.path(dir, "src", "pdpx"))) return(dir)
      parent <- dirname(dir)
      if (identical(parent, dir)) break
      dir <- parent
    }
  }
  NULL
}

# In a function body (not only a default argument) so that R CMD check sees the use of tools.
.default_envdir <- function() file.path(tools::R_user_dir("pdpx", "data"), "venv")
