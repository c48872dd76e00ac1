"""Run every benchmark in one process and write benchmarks/RESULTS.md.

Each ``bench_*.py`` module exposes ``run() -> list[dict]`` rows (see common.row).
Ratios compare pdpx with the reference measured in the same run.
"""

from __future__ import annotations

import datetime
import importlib
import os
import platform
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# The first-round benchmarks run first, in this order; any other bench_*.py follows by name,
# so a new benchmark is a new file and nothing else.
FIRST = ["bench_brute", "bench_trees", "bench_boosters", "bench_r"]
LAST = ["bench_scale", "bench_heterogeneity", "bench_spark"]  # the longest last: a run stopped part way
# keeps the rest (RESULTS.md is written after each benchmark)


def discover() -> list[str]:
    found = sorted(p.stem for p in HERE.glob("bench_*.py"))
    middle = [m for m in found if m not in FIRST and m not in LAST]
    return [m for m in FIRST if m in found] + middle + [m for m in LAST if m in found]


def fmt_s(s: float) -> str:
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def fmt_ref(r: dict) -> str:
    if r.get("unit") == "MiB":
        return f"{r['reference_s']:.0f} MiB"
    return fmt_s(r["reference_s"])


def main(argv: list[str]) -> int:
    wanted = argv or discover()
    rows, failures = [], []
    for name in wanted:
        if not (HERE / f"{name}.py").exists():
            continue
        print(f"== {name}", flush=True)
        try:
            mod = importlib.import_module(name)
            got = mod.run()
        except Exception:  # keep the other benchmarks' numbers; report the failure
            failures.append((name, traceback.format_exc()))
            print(failures[-1][1], file=sys.stderr)
            continue
        for r in got:
            print(f"  {r['case']}: pdpx {fmt_s(r['pdpx_s'])}, {r['reference']} {fmt_ref(r)}, "
                  f"ratio {r['ratio']:.1f}x, target {r['target']}: {'met' if r['met'] else 'MISSED'}", flush=True)
        rows.extend(got)
        extra = getattr(mod, "markdown", None)
        if extra:
            rows.append({"markdown": extra()})
        if not argv:  # written after each benchmark: a run stopped part way keeps what it measured
            (HERE / "RESULTS.md").write_text(table(rows, failures))
            print(f"wrote {HERE / 'RESULTS.md'} ({name})", flush=True)

    if argv:
        print(table(rows, failures))
    else:
        (HERE / "RESULTS.md").write_text(table(rows, failures))
    return 1 if failures else 0


def table(rows: list[dict], failures: list) -> str:
    """RESULTS.md's text for the rows (and failures) so far."""
    import numpy  # noqa: E401
    import sklearn

    lines = [
        "# Benchmark results",
        "",
        f"Written by `make bench` on {datetime.date.today()}: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"scikit-learn {sklearn.__version__}. Each row times pdpx and its reference in the same process; "
        "times are the best of several runs unless the case says otherwise. "
        "Ratio = reference time / pdpx time (higher is better for pdpx).",
        "",
        "| benchmark | case | pdpx | reference | reference time | ratio | target | |",
        "|---|---|---|---|---|---|---|---|",
    ]
    extras = []
    for r in rows:
        if "markdown" in r:
            extras.append(r["markdown"])
            continue
        lines.append(
            f"| {r['benchmark']} | {r['case']} | {fmt_s(r['pdpx_s'])} | {r['reference']} | {fmt_ref(r)} "
            f"| {r['ratio']:.1f}x | {r['target']} | {'met' if r['met'] else '**missed**'} |"
        )
    for e in extras:
        lines += ["", e]
    for name, tb in failures:
        lines += ["", f"**{name} failed:**", "", "```", tb.strip()[-2000:], "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
