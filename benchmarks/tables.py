"""Rewrite the README's benchmark tables from benchmarks/results/*.json (run after the benchmarks).

python benchmarks/tables.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from common import RESULTS

README = Path(__file__).resolve().parent.parent / "README.md"


def ogd_table() -> str:
    dims = [10, 100, 1000]
    data = {d: json.loads((RESULTS / f"ogd_d{d}.json").read_text()) for d in dims}
    lines = [
        "### Projected OGD, one pass (squared loss, eta/sqrt(t), L2 ball)",
        "",
        "`python benchmarks/bench_ogd.py` on the 2-core x86-64 machine CI runs on. n = 1,000,000 for",
        "d = 10 and 100, 100,000 for d = 1000 (the NumPy loop and river run on prefixes). Examples per",
        "second, and in brackets how many times faster ocolearn is.",
        "",
        "| implementation | d = 10 | d = 100 | d = 1000 |",
        "|---|---:|---:|---:|",
    ]
    for row in data[100]:
        cells = []
        for d in dims:
            base = data[d][0]["examples_per_s"]
            rate = next(r for r in data[d] if r["name"] == row["name"])["examples_per_s"]
            cells.append(f"{rate / 1e6:.2f} M/s" + ("" if rate == base else f" ({base / rate:.1f}x)"))
        lines.append(f"| {row['name']} | " + " | ".join(cells) + " |")
    compile_s = ", ".join(f"{data[d][0]['compile_s']:.2f} s (d = {d})" for d in dims)
    lines += ["", f"Compile time of ocolearn's run: {compile_s}."]
    return "\n".join(lines)


def sweep_table() -> str:
    rows = json.loads((RESULTS / "sweep.json").read_text())
    title = (RESULTS / "sweep.md").read_text().splitlines()[0].removeprefix("### ")
    base = rows[0]["examples_per_s"]
    lines = [
        "### Sweep: 256 configurations (16 rates x 16 radii) of projected OGD, n = 100,000, d = 100",
        "",
        f"`python benchmarks/bench_sweep.py`, same machine. {title.split(': ', 1)[1]}.",
        "Configuration-examples per second, and in brackets how many times faster the sweep is.",
        "",
        "| implementation | configuration-examples/s | seconds |",
        "|---|---:|---:|",
    ]
    for r in rows:
        ratio = "" if r is rows[0] else f" ({base / r['examples_per_s']:.1f}x)"
        lines.append(f"| {r['name']} | {r['examples_per_s'] / 1e6:.1f} M/s{ratio} | {r['seconds']:.2f} |")
    return "\n".join(lines)


def classifier_table() -> str:
    lines = [
        "### Classifiers: dense PA-I and sparse Pegasos, one pass",
        "",
        "`python benchmarks/bench_classifiers.py`, same machine. PA-I (C = 1) on 1,000,000 x 100 dense",
        "rows; Pegasos (lambda = 1e-4) on 200,000 hashed rows (2^18 buckets, about 50 non-zeros). VW has",
        "no PA: its row is hinge-loss SGD. The NumPy loops and river run on prefixes. Examples per",
        "second, and in brackets how many times faster ocolearn is.",
        "",
        "| implementation | examples/s | | implementation | examples/s |",
        "|---|---:|---|---|---:|",
    ]
    dense, sparse = (json.loads((RESULTS / f"{n}.json").read_text()) for n in ("pa_dense", "pegasos_sparse"))

    def cell(rows, r):
        base = rows[0]["examples_per_s"]
        rate = r["examples_per_s"]
        return f"{r['name']} | {rate / 1e6:.2f} M/s" + ("" if r is rows[0] else f" ({base / rate:.1f}x)")

    for a, b in zip(dense, sparse, strict=True):
        lines.append(f"| {cell(dense, a)} | | {cell(sparse, b)} |")
    return "\n".join(lines)


def stream_table() -> str:
    report = json.loads((RESULTS / "stream.json").read_text())
    results = report["results"]
    base = results[0]["rows_per_s"]
    lines = [
        f"### From text, end to end: a {report['file_gb']:.1f} GB svmlight file, {report['rows']:,} rows",
        "",
        "`python benchmarks/bench_stream.py`, same machine: 2^20 hashed features, 50 non-zeros a row,",
        "one pass of Pegasos (ocolearn) or hinge-loss SGD (VW, scikit-learn), each tool in a fresh",
        "process, from start to finish; peak memory is the process's maximum resident set.",
        "",
        "| run | rows | seconds | rows/s | ocolearn is faster by | peak memory |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        ratio = "" if r is results[0] else f"{base / r['rows_per_s']:.2f}x"
        lines.append(
            f"| {r['name']} | {r['rows']:,} | {r['seconds']:.1f} | {r['rows_per_s'] / 1e3:,.0f} k | {ratio} "
            f"| {r['peak_mb']:,.0f} MB |"
        )
    return "\n".join(lines)


def main():
    text = README.read_text()
    tables = (
        ("ogd", ogd_table()),
        ("sweep", sweep_table()),
        ("classifiers", classifier_table()),
        ("stream", stream_table()),
    )
    for name, table in tables:
        pattern = re.compile(rf"<!-- bench:{name} -->.*?<!-- /bench:{name} -->", re.S)
        block = f"<!-- bench:{name} -->\n{table}\n<!-- /bench:{name} -->"
        if not pattern.search(text):
            raise SystemExit(f"README.md has no <!-- bench:{name} --> ... <!-- /bench:{name} --> block")
        text = pattern.sub(lambda _, block=block: block, text)
    README.write_text(text)
    print("README.md tables updated")


if __name__ == "__main__":
    main()
