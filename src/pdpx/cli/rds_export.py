"""Reading an R model file (``.rds``, ``.rda``, ``.RData``) the user opted in to, in an R process of its own.

An R file is code to R (:mod:`pdpx.cli.rds_check` says how), so pdpx never reads one in its own
process: once the user has opted in (``--allow-pickle``) and the file's bytes have passed
:func:`pdpx.cli.rds_check.check_r_file`, :func:`export_r_file` starts ``Rscript`` on it, which
reads the model and writes its trees to a data-only export (``export_model.R``, the same
code as ``pdpx::export_model()`` of the R package: it reads the model's parts with
``.subset2`` and strips their attributes, so no method runs on them); pdpx then reads
that file (:mod:`pdpx.adapters.rexport`), predictions come from the trees, and no R runs
in pdpx's process.

The R process is fenced in: ``--vanilla`` (no profile, no site or user environment file,
no saved workspace), only R's own library on its search path and only the base package
attached (``.libPaths(character())``, ``R_DEFAULT_PACKAGES=NULL``: a reference to an
installed package finds none), a fresh temporary folder as working directory and home,
no inherited environment, standard input closed, its address space, output file size and
run time limited (the memory budget plus :data:`R_BASE`, the budget, :data:`R_TIMEOUT`),
and its own process group, killed on time-out.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

from ..core.config import format_bytes

#: seconds the R process may take
R_TIMEOUT = 600
#: address space R takes before it reads anything (its libraries), allowed on top of the budget
R_BASE = 1 << 30

#: run by ``Rscript -e``: arguments (the exporter's file, the model file, "rds" or "rda", the object's name in an
#: .rda, the output file)
DRIVER = """a <- commandArgs(TRUE)
.libPaths(character())
e <- new.env()
sys.source(a[1], envir = e)
m <- if (a[3] == "rds") readRDS(a[2]) else {
  b <- new.env(parent = emptyenv())
  load(a[2], envir = b)
  get(a[4], envir = b, inherits = FALSE)
}
e$.export_write(e$.export_document(m), a[5])
"""


class RProcessError(ValueError):
    """R could not export the model (the message is R's, or why R could not run)."""


def exporter_script() -> Path:
    """The exporter R code shipped with pdpx (a copy of the R package's ``R/export.R``)."""
    return Path(str(resources.files("pdpx.cli").joinpath("export_model.R")))


def export_r_file(path, *, kind: str, name: str | None, budget: int, folder) -> Path:
    """Export the model in the R file ``path`` (``kind`` "rds" or "rda"; ``name``: the object's name in an .rda)
    to ``folder``/model.pdpx.json with a fenced R process; returns that file. :class:`RProcessError` if R fails."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        raise RProcessError("reading an R file needs R (Rscript was not found on PATH)")
    folder = Path(folder)
    out = folder / "model.pdpx.json"
    home = Path(tempfile.mkdtemp(dir=folder))
    args = [rscript, "--vanilla", "-e", DRIVER, str(exporter_script()), str(Path(path).resolve()), kind, name or "",
            str(out)]
    with subprocess.Popen(args, cwd=home, env=_environment(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True,
                          preexec_fn=_limits(budget) if os.name == "posix" else None) as proc:
        try:
            _, stderr = proc.communicate(timeout=R_TIMEOUT)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise RProcessError(f"R did not finish reading the file within {R_TIMEOUT} s") from None
    if proc.returncode != 0 or not out.is_file():
        raise RProcessError(_r_error(stderr, proc.returncode, budget))
    return out


def _kill_group(proc: subprocess.Popen) -> None:
    """End the R process and any it started (its own session's group), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL) if os.name == "posix" else proc.kill()
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def _environment(home: Path) -> dict:
    """The R process's whole environment: nothing of the user's but PATH."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(home),
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "R_DEFAULT_PACKAGES": "NULL", "R_LIBS": "",
            "R_LIBS_USER": str(home), "R_LIBS_SITE": str(home), "R_ENVIRON": "", "R_ENVIRON_USER": "",
            "R_PROFILE": "", "R_PROFILE_USER": ""}


def _limits(budget: int):
    """What the R process runs with (set in the child before R starts): address space, file size, no core."""
    def apply():  # pragma: no cover - runs in the child
        import resource

        for limit, value in ((resource.RLIMIT_AS, budget + R_BASE), (resource.RLIMIT_FSIZE, budget),
                             (resource.RLIMIT_CORE, 0)):
            try:
                resource.setrlimit(limit, (value, value))
            except (ValueError, OSError):
                pass
    return apply


def _r_error(stderr: str, code: int, budget: int) -> str:
    """R's own error, in one line, or what stopped it."""
    lines = [x.strip() for x in (stderr or "").splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("Error")]
    if errors:
        i = lines.index(errors[-1])
        text = " ".join(lines[i:i + 3]) if lines[i].endswith(":") else lines[i]
        text = text.split(":", 1)[1].strip() if ":" in text else text
        if "cannot allocate" in text:
            text += f" (R may use the memory budget, {format_bytes(budget)}, plus {format_bytes(R_BASE)})"
        return f"R: {text}"
    if code < 0:
        return f"R stopped (signal {-code})"
    return f"R stopped with status {code}" + (f": {lines[-1]}" if lines else "")


def main() -> int:  # pragma: no cover - a manual check: python -m pdpx.cli.rds_export FILE
    """Export the R file named on the command line next to it (for trying the fence by hand)."""
    from .rds_check import check_r_file

    path = Path(sys.argv[1])
    facts = check_r_file(path, budget=1 << 30)
    out = export_r_file(path, kind="rda" if facts.name else "rds", name=facts.name, budget=1 << 30,
                        folder=tempfile.mkdtemp())
    print(out)
    return 0
