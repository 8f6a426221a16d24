"""End to end from text: ``ocolearn train`` (Pegasos, streamed) against Vowpal Wabbit and
scikit-learn on a generated svmlight file, with rows per second and peak memory.

    python benchmarks/bench_stream.py [--rows 4500000] [--small-rows 1125000]

The files (about 2 GB and 0.5 GB: rows of 50 distinct hashed features out of 2^20 with
counts 1 to 3 as values, as hashed words would have; labels +-1 from a hidden linear rule)
are generated once into
benchmarks/results/. Each tool runs in its own process, timed from start to finish, and its
peak resident memory is the process's ``ru_maxrss``:

- ocolearn: ``ocolearn train --learner pegasos --bits 20 --labels=-1,1`` (streamed in chunks);
- Vowpal Wabbit: ``vw -d FILE.vw --loss_function hinge -b 20`` on the same rows in VW's text
  format (``label |f index:value ...``), parsing and learning as VW does from text;
- scikit-learn: ``load_svmlight_file`` then ``SGDClassifier(loss="hinge")`` for one epoch.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numba
import numpy as np
from common import RESULTS

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


def generate(rows, name, seed=0, block=200_000):
    """The svmlight file and its VW twin, made once."""
    svm, vw = RESULTS / f"{name}.svm", RESULTS / f"{name}.vw"
    if svm.exists() and vw.exists():
        return svm, vw
    RESULTS.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(1 << BITS)
    with open(svm, "wb") as f, open(vw, "wb") as g:
        for start in range(0, rows, block):
            n = min(block, rows - start)
            # sorted draws plus 0..NNZ-1: strictly increasing, so distinct, and below 2^20
            idx = np.sort(rng.integers(1, (1 << BITS) - NNZ, (n, NNZ)), axis=1) + np.arange(NNZ)
            counts = rng.integers(1, 4, (n, NNZ))
            labels = np.where((w[idx] * counts).sum(axis=1) > 0, 1, -1).astype(np.int64)
            out = np.empty(n * (NNZ * 12 + 8), np.uint8)
            for target, is_vw in ((f, False), (g, True)):
                used = _write_rows(idx, counts, labels, out, is_vw)
                target.write(out[:used].tobytes())
    return svm, vw


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


def ocolearn_code(path):
    args = ["train", str(path), "--learner", "pegasos", "--set", f"lam={LAM}", "--bits", str(BITS), "--labels=-1,1"]
    args += ["--model", str(RESULTS / "stream_model.npz"), "--quiet"]
    return f"from ocolearn.cli import main; main({args!r})"


def vw_code(path):
    return (
        "import vowpalwabbit\n"
        f"ws = vowpalwabbit.Workspace('-d {path} --loss_function hinge -b {BITS} --quiet')\n"
        "ws.run_parser(); ws.finish()"
    )


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_500_000)
    parser.add_argument("--small-rows", type=int, default=1_125_000)
    args = parser.parse_args()
    start = time.perf_counter()
    big_svm, big_vw = generate(args.rows, f"stream_{args.rows}")
    small_svm, _ = generate(args.small_rows, f"stream_{args.small_rows}")
    size = big_svm.stat().st_size / 1e9
    rows = []
    measure(ocolearn_code(small_svm))  # fills the compilation cache for the chunk shape
    for name, code, n, env in (
        ("ocolearn train (Pegasos, streamed)", ocolearn_code(big_svm), args.rows, None),
        ("ocolearn train, compiling afresh", ocolearn_code(big_svm), args.rows, {"OCOLEARN_CACHE": "0"}),
        (f"ocolearn train, {args.small_rows:,} rows", ocolearn_code(small_svm), args.small_rows, None),
        ("Vowpal Wabbit, text", vw_code(big_vw), args.rows, None),
        ("scikit-learn load_svmlight_file + SGDClassifier", sklearn_code(big_svm), args.rows, None),
    ):
        seconds, peak = measure(code, env)
        rows.append({"name": name, "rows": n, "seconds": seconds, "rows_per_s": n / seconds, "peak_mb": peak})
        print(json.dumps(rows[-1]))
    (RESULTS / "stream.json").write_text(
        json.dumps({"file_gb": size, "rows": args.rows, "results": rows, "command": " ".join(sys.argv)}, indent=2)
    )
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
