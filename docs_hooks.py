"""MkDocs hooks for the pdpx site (mkdocs.yml): the benchmark results are included at build time.

benchmarks/RESULTS.md (and the figure it shows) stay where `make bench` writes them; the site
gets them as the page benchmarks.md, and links from docs/ to ../benchmarks/RESULTS.md point to it.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).parent
BENCH = ROOT / "benchmarks"


def on_files(files, config):
    files.append(File.generated(config, "benchmarks.md", content=(BENCH / "RESULTS.md").read_text(encoding="utf-8")))
    for png in sorted(BENCH.glob("*.png")):
        files.append(File.generated(config, png.name, abs_src_path=str(png)))
    return files


def on_page_markdown(markdown, page, config, files):
    prefix = "../" * page.file.src_uri.count("/")
    return markdown.replace("../benchmarks/RESULTS.md", prefix + "benchmarks.md")
