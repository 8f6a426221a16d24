"""One pass of projected OGD (squared loss, eta/sqrt(t), L2 ball) against its peers, in one run.

    python benchmarks/bench_ogd.py [--dims 10 100 1000] [--n 1000000]

Peers on the same synthetic float32 data: scikit-learn ``SGDRegressor`` (one epoch,
``invscaling``, power_t 0.5, no projection), a plain NumPy loop, river ``LinearRegression``
with an inverse-scaling SGD, and Vowpal Wabbit learning from its binary cache (``--sgd``, and
its default adaptive/normalized/invariant update). ocolearn is also run in a fresh process
without the one-kernel-loop flag (``OCOLEARN_FAST_CPU_LOOPS=0``) to show what it buys.
Slow peers (NumPy loop, river) run on a prefix of the data; rates are examples per second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import jax
import numpy as np
from common import best_time, regression_data, report, sklearn_sgd_epoch, vw_cache, vw_from_cache

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import InvSqrt, ridge, run

ETA, RADIUS = 0.1, 10.0


def bench_ocolearn(X, y):
    """(compile seconds, examples/s) of the runner on the whole data."""
    learner = ridge(InvSqrt(ETA), RADIUS)
    Xj, yj = jax.device_put(X), jax.device_put(y)
    start = time.perf_counter()
    compiled = jax.jit(lambda lrn, X, y: run(lrn, X, y)).lower(learner, Xj, yj).compile()
    compile_s = time.perf_counter() - start
    seconds, _ = best_time(lambda: jax.block_until_ready(compiled(learner, Xj, yj)))
    return compile_s, len(y) / seconds


def bench_numpy(X, y):
    def loop():
        w = np.zeros(X.shape[1], np.float32)
        for t in range(len(y)):
            x = X[t]
            w -= np.float32(ETA / np.sqrt(t + 1) * (w @ x - y[t])) * x
            norm = np.sqrt(w @ w)
            if norm > RADIUS:
                w *= RADIUS / norm
        return w

    return len(y) / best_time(loop, repeat=1)[0]


def bench_sklearn(X, y):
    X64, y64 = X.astype(np.float64), y.astype(np.float64)
    return len(y) / best_time(lambda: sklearn_sgd_epoch(X64, y64, ETA))[0]


def bench_river(X, y):
    from river import linear_model, optim

    rows = [dict(enumerate(map(float, x))) for x in X]
    targets = list(map(float, y))

    def learn():
        model = linear_model.LinearRegression(
            optimizer=optim.SGD(optim.schedulers.InverseScaling(ETA, power=0.5)), intercept_lr=0.0, l2=0.0
        )
        for x, target in zip(rows, targets, strict=True):
            model.learn_one(x, target)

    return len(y) / best_time(learn, repeat=1)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--only-ocolearn", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    command = "python benchmarks/bench_ogd.py " + " ".join(sys.argv[1:])
    for d in args.dims:
        n = args.n if d <= 100 else args.n // 10  # keep d = 1000 inside memory with its float64 copy
        X, y = regression_data(n, d)
        compile_s, rate = bench_ocolearn(X, y)
        if args.only_ocolearn:
            print(json.dumps({"d": d, "compile_s": compile_s, "examples_per_s": rate}))
            continue
        env = {**os.environ, "OCOLEARN_FAST_CPU_LOOPS": "0"}
        env.pop("XLA_FLAGS", None)
        slow = subprocess.run(
            [sys.executable, __file__, "--only-ocolearn", "--dims", str(d), "--n", str(args.n)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        slow_rate = json.loads(slow.stdout.strip().splitlines()[-1])["examples_per_s"]
        small = min(n, 100_000)
        cache = vw_cache(X, y, f"ogd_{n}x{d}")
        rows = [
            {"name": "ocolearn", "examples_per_s": rate, "compile_s": compile_s},
            {"name": "ocolearn, XLA default loops", "examples_per_s": slow_rate},
            {"name": "scikit-learn SGDRegressor", "examples_per_s": bench_sklearn(X, y)},
            {"name": "Vowpal Wabbit --sgd (cache)", "examples_per_s": n / vw_from_cache(cache, f"--sgd -l {ETA}")},
            {"name": "Vowpal Wabbit default (cache)", "examples_per_s": n / vw_from_cache(cache, f"-l {ETA}")},
            {"name": "NumPy loop", "examples_per_s": bench_numpy(X[:small], y[:small])},
            {"name": "river", "examples_per_s": bench_river(X[: small // 5], y[: small // 5])},
        ]
        title = f"Projected OGD, one pass, n = {n:,}, d = {d} (ocolearn compile: {compile_s:.2f} s)"
        report(title, rows, "ocolearn", f"ogd_d{d}", command)


if __name__ == "__main__":
    main()
