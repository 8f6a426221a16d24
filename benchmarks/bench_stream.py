"""End to end from text: ``ocolearn train`` (Pegasos, streamed), ``ocolearn predict`` and
``ocolearn test`` against Vowpal Wabbit and scikit-learn on a generated svmlight file, with rows
per second and peak memory; and the svmlight parser's throughput.

    python benchmarks/bench_stream.py [--rows 4500000] [--small-rows 1125000] [--repeats 5]
                                      [--only ocolearn,vw,sklearn [--keep-earlier]]
                                      [--scratch benchmarks/scratch]
                                      [--out benchmarks/records]

The files (about 2 GB and 0.5 GB: rows of 50 distinct hashed features out of 2^20 with
counts 1 to 3 as values, as hashed words would have; labels +-1 from a hidden linear rule)
are generated once into the scratch folder and reused by later runs (the VW twin only when VW
runs). Each tool runs in its own process, timed from start to finish, reading and parsing the
text file itself (loading counted on every side), and its peak resident memory is the process's
``ru_maxrss``. Repeats alternate between the runs:

- ocolearn: ``ocolearn train --learner pegasos --bits 20 --labels=-1,1 --scale none`` (streamed in
  chunks; unscaled, as VW's ``--sgd`` and as ``--scale auto`` left sparse rows when the record was made);
  ``ocolearn predict MODEL FILE --out PRED`` and ``ocolearn test MODEL FILE`` on the same file,
  with a model trained (untimed, before the rounds) on the small file;
- Vowpal Wabbit with its defaults: ``vw -d FILE.vw --loss_function hinge -b 20`` on the same rows
  in VW's text format (``label |f index:value ...``): its adaptive, normalized, invariant update
  with a constant feature;
- Vowpal Wabbit with the settings closest to plain Pegasos: ``--sgd`` (none of the three),
  ``--noconstant``, ``--l2 lam`` and the rate ``1/(lam t)`` (``-l 1/lam --power_t 1``);
- scikit-learn: ``load_svmlight_file`` then ``SGDClassifier(loss="hinge")`` for one epoch
  through ``fit``.

``--only ocolearn`` leaves out VW and scikit-learn (a quick run); with ``--keep-earlier`` the
left-out runs' results are kept from the record already in OUT (same ``--rows``), marked with
that record's date: the table then compares medians only. The parser: megabytes per second of
ocolearn's compiled svmlight parser (one thread) and of its line-by-line Python reference
parser, on prefixes of the small file, in this process. Writes ``OUT/stream_cpu.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
from common import SCRATCH, Record, alternate, options

BITS, NNZ, LAM = 20, 50, 1e-6


@numba.njit(cache=True)
def _write_rows(indices, values, labels, out, vw):
    """Format rows ``label [|f ]index:value ...`` into ``out``; returns the bytes used."""
    p = 0
    for i in range(labels.size):
        if labels[i] < 0:
            out[p] = 45
            p += 1
        out[p] = 49
        p += 1
        if vw:
            for c in (32, 124, 102):
                out[p] = c
                p += 1
        for j in range(indices.shape[1]):
            out[p] = 32
            p += 1
            index, digits = indices[i, j], 0
            while True:  # the index's decimal digits, written backwards then reversed
                out[p + digits] = 48 + index % 10
                index //= 10
                digits += 1
                if index == 0:
                    break
            for a in range(digits // 2):
                out[p + a], out[p + digits - 1 - a] = out[p + digits - 1 - a], out[p + a]
            p += digits
            out[p] = 58
            out[p + 1] = 48 + values[i, j]  # a count, 1 to 3
            p += 2
        out[p] = 10
        p += 1
    return p


def generate(rows, path, vw=False, seed=0, block=200_000):
    """The svmlight file (or with ``vw`` its twin in VW's format: the same rows, as the same seed
    draws them), made once: an existing file is reused."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(1 << BITS)
    tmp = path.with_name(path.name + ".tmp")  # renamed when complete: a killed run leaves no short file
    with open(tmp, "wb") as f:
        for start in range(0, rows, block):
            n = min(block, rows - start)
            # sorted draws plus 0..NNZ-1: strictly increasing, so distinct, and below 2^20
            idx = np.sort(rng.integers(1, (1 << BITS) - NNZ, (n, NNZ)), axis=1) + np.arange(NNZ)
            counts = rng.integers(1, 4, (n, NNZ))
            labels = np.where((w[idx] * counts).sum(axis=1) > 0, 1, -1).astype(np.int64)
            out = np.empty(n * (NNZ * 12 + 8), np.uint8)
            used = _write_rows(idx, counts, labels, out, vw)
            f.write(out[:used].tobytes())
    tmp.replace(path)
    return path


def measure(code: str, env=None):
    """Seconds and peak RSS (MB) of running ``code`` in a fresh Python process."""
    wrapper = (
        "import resource, time, subprocess, sys, json, os\n"
        "start = time.perf_counter()\n"
        f"subprocess.run([sys.executable, '-c', {code!r}], check=True, env={{**os.environ, **{env or {}!r}}})\n"
        "seconds = time.perf_counter() - start\n"
        "print(json.dumps([seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))\n"
    )
    out = subprocess.run([sys.executable, "-c", wrapper], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def ocolearn_code(*args):
    return f"from ocolearn.cli import main; main({[str(a) for a in args]!r})"


def train_code(path, model):
    return ocolearn_code(
        "train", path, "--learner", "pegasos", "--set", f"lam={LAM}", "--bits", BITS, "--labels=-1,1",
        "--scale", "none", "--model", model, "--quiet",
    )  # fmt: skip


def vw_code(path, settings=""):
    return (
        "import vowpalwabbit\n"
        f"ws = vowpalwabbit.Workspace('-d {path} --loss_function hinge -b {BITS} --quiet {settings}')\n"
        "ws.run_parser(); ws.finish()"
    )


VW_PEGASOS = f"--sgd --noconstant --l2 {LAM} -l {1 / LAM:g} --power_t 1"


def parser_runs(path, compiled_mb=64, python_mb=4):
    """Timed callables parsing a prefix of ``path`` (cut at a line end) with the compiled parser
    and with the line-by-line Python reference; their sizes in bytes."""
    from ocolearn.data.svmlight import parse_svmlight, svmlight_lines

    with open(path, "rb") as f:
        data = f.read(compiled_mb << 20)
    big = data[: data.rindex(b"\n") + 1]
    small = big[: big.rindex(b"\n", 0, python_mb << 20) + 1]
    parse_svmlight(small, 1, path)  # compiles (or loads) the numba parser
    return {
        "compiled svmlight parser (numba, one thread)": (len(big), lambda: parse_svmlight(big, 1, path)),
        "line-by-line Python parser": (len(small), lambda: svmlight_lines(small, 1, path)),
    }


def sklearn_code(path):
    return (
        "import warnings\n"
        "from sklearn.datasets import load_svmlight_file\n"
        "from sklearn.linear_model import SGDClassifier\n"
        f"X, y = load_svmlight_file({str(path)!r}, n_features={1 << BITS})\n"
        "X.indices, X.indptr = X.indices.astype('int32'), X.indptr.astype('int32')  # SGD takes 32-bit\n"
        "warnings.simplefilter('ignore')\n"
        f"SGDClassifier(loss='hinge', alpha={LAM}, max_iter=1, tol=None, shuffle=False).fit(X, y)"
    )


TOOLS = ("ocolearn", "vw", "sklearn")


def kept_results(path, runs, rows) -> list[dict]:
    """The results in the record at ``path`` of runs not in ``runs`` (on a file of ``rows`` rows),
    each marked ``earlier`` with its record's date, command and commit: they were not measured in
    the same rounds."""
    if not path.exists():
        return []
    old = json.loads(path.read_text())
    if old["params"]["rows"] != rows:
        raise SystemExit(f"bench_stream: error: --keep-earlier: {path} is for {old['params']['rows']:,} rows")
    mark = {"date": old["date"], "command": old["command"], "ocolearn": old["versions"]["ocolearn"]}
    return [
        {**r, "earlier": r.get("earlier", mark)}
        for r in old["results"]
        if r["name"] not in runs and not r["name"].startswith("ocolearn")
    ]


def tools(text: str) -> set[str]:
    names = set(text.split(","))
    if not names <= set(TOOLS):
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated subset of {','.join(TOOLS)}")
    return names


def main():
    parser = options(__doc__)
    parser.add_argument("--rows", type=int, default=4_500_000, help="rows of the big file (default 4,500,000: 2 GB)")
    parser.add_argument("--small-rows", type=int, default=1_125_000, help="rows of the small file (default 1,125,000)")
    parser.add_argument("--only", type=tools, default=set(TOOLS), help="tools to run (default ocolearn,vw,sklearn)")
    parser.add_argument("--scratch", type=Path, default=SCRATCH, help="folder of the generated files (reused)")
    parser.add_argument(
        "--keep-earlier",
        action="store_true",
        help="with --only: keep the left-out runs' results from OUT/stream_cpu.json, marked with that run's date",
    )
    args = parser.parse_args()
    start = time.perf_counter()
    scratch = args.scratch
    record = Record("stream", args.out, args.repeats, rows=args.rows, small_rows=args.small_rows, bits=BITS, lam=LAM)
    big_svm = generate(args.rows, scratch / f"stream_{args.rows}.svm")
    small_svm = generate(args.small_rows, scratch / f"stream_{args.small_rows}.svm")
    big_vw = generate(args.rows, scratch / f"stream_{args.rows}.vw", vw=True) if "vw" in args.only else None
    print(f"files ready ({time.perf_counter() - start:.0f} s)", flush=True)

    parsers = parser_runs(small_svm)
    seconds = alternate({name: fn for name, (_, fn) in parsers.items()}, args.repeats)
    parsing = [{"name": name, "bytes": size, "seconds": seconds[name]} for name, (size, _) in parsers.items()]

    model, trained = scratch / "stream_model.npz", scratch / "stream_predict_model.npz"
    # fills the compilation cache for the chunk shape; the model predict and test use
    measure(train_code(small_svm, trained))
    runs = {}
    if "ocolearn" in args.only:
        runs = {
            "ocolearn train (Pegasos, streamed)": (args.rows, train_code(big_svm, model), None),
            "ocolearn predict (streamed, to a file)": (
                args.rows,
                ocolearn_code("predict", trained, big_svm, "--out", scratch / "stream_predictions.txt"),
                None,
            ),
            "ocolearn test (streamed, error rate)": (args.rows, ocolearn_code("test", trained, big_svm), None),
            "ocolearn train, compiling afresh": (args.rows, train_code(big_svm, model), {"OCOLEARN_CACHE": "0"}),
            f"ocolearn train, {args.small_rows:,} rows": (args.small_rows, train_code(small_svm, model), None),
        }
    if "vw" in args.only:
        runs["Vowpal Wabbit, defaults, text"] = (args.rows, vw_code(big_vw), None)
        runs["Vowpal Wabbit, closest to Pegasos, text"] = (args.rows, vw_code(big_vw, VW_PEGASOS), None)
    if "sklearn" in args.only:
        runs["scikit-learn load_svmlight_file + SGDClassifier (fit)"] = (args.rows, sklearn_code(big_svm), None)
    peaks = {name: [] for name in runs}
    earlier = kept_results(args.out / "stream_cpu.json", runs, args.rows) if args.keep_earlier else []

    def timed(name, code, env):
        def once() -> float:
            seconds, peak = measure(code, env)
            peaks[name].append(peak)
            return float(seconds)

        return once

    def save(seconds):
        results = [
            {"name": name, "rows": n, "seconds": seconds[name], "peak_mb": peaks[name]}
            for name, (n, _, _) in runs.items()
        ] + earlier
        record.data["repeats"] = len(seconds[next(iter(runs))])
        record.save(
            file_gb=big_svm.stat().st_size / 1e9,
            small_file_gb=small_svm.stat().st_size / 1e9,
            vw_pegasos_settings=VW_PEGASOS,
            results=results,
            parser=parsing,
        )

    runs_timed = {name: timed(name, code, env) for name, (_, code, env) in runs.items()}
    alternate(runs_timed, args.repeats, warmup=False, after_round=save)  # the record holds every finished round
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
