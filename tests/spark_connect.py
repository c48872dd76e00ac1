"""One Spark Connect process for the tests that need one (issue 50, point 5: one JVM where one suffices).

A Connect session cannot share a process with the classic Spark session the other tests use, so each Connect test
ran its script in a Python process of its own, each starting a Connect server (a JVM, most of its 30 s). The test
modules register their scripts here at import; the first test to ask for its output runs every registered script
in one process, one after the other on one Connect session (``spark`` in each script's namespace), and each test then
checks its own script's output as before. A script that raises fails its own test (with its traceback), not the
other's.
"""

from __future__ import annotations

import json
import subprocess
import sys

#: name -> the script's text (without starting or stopping the session: the runner does both)
SCRIPTS: dict[str, str] = {}
_OUTPUT: dict[str, tuple[bool, str]] = {}

RUNNER = """
import json, os, sys, traceback, warnings
warnings.simplefilter("ignore")
os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote("local[2]").getOrCreate()
for name, body in json.loads(sys.stdin.read()).items():
    print("@@@ start " + name, flush=True)
    try:
        exec(compile(body, name, "exec"), {"__name__": "__main__", "spark": spark})
        print("@@@ ok " + name, flush=True)
    except BaseException:
        print(traceback.format_exc(), flush=True)
        print("@@@ failed " + name, flush=True)
spark.stop()
"""


def register(name: str, script: str) -> None:
    SCRIPTS[name] = script


def output(name: str, cwd, timeout: float = 1500) -> str:
    """The standard output of the registered script ``name`` (run with every other one not run yet)."""
    if name not in _OUTPUT:
        todo = {k: v for k, v in SCRIPTS.items() if k not in _OUTPUT}
        out = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(todo), capture_output=True, text=True,
                             timeout=timeout, cwd=cwd)
        _read(out.stdout, todo, out.stderr[-3000:])
    ok, text = _OUTPUT[name]
    assert ok, text
    return text


def _read(stdout: str, todo: dict, stderr: str) -> None:
    current, lines = None, []
    for line in stdout.splitlines():
        if line.startswith("@@@ start "):
            current, lines = line[len("@@@ start "):], []
        elif line.startswith(("@@@ ok ", "@@@ failed ")) and current is not None:
            _OUTPUT[current] = (line.startswith("@@@ ok "), "\n".join(lines))
            current = None
        else:
            lines.append(line)
    for k in todo:  # the process died before finishing it (or before starting it)
        _OUTPUT.setdefault(k, (False, f"the Connect process ended before {k} finished:\n" + "\n".join(lines)
                                      + "\n" + stderr))
