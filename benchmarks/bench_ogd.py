"""One pass of projected OGD (squared loss, eta/sqrt(t), L2 ball) against its peers, in one run.

    python benchmarks/bench_ogd.py [--dims 10 100 1000] [--n 1000000] [--repeats 5]
                                   [--device cpu|gpu] [--no-peers] [--out benchmarks/records]

ocolearn runs as scikit-learn's ``fit`` and the C loop do, keeping the weights and the sums
of the losses (``run(..., trace=False)``, as ``bench_classifiers.py`` and the sweep time it), called
as users call it, its checks of the data included (``common.ocolearn_pass``); the
row "ocolearn, per-round trace" also records each round's prediction, target and loss (``run``'s
default), and "ocolearn, no projection" runs the same OGD without the ball (what the ball costs).

Peers on the same synthetic float32 data, timed in alternating repeats, each run timed on the second
of two passes back to back (``common.alternate``): scikit-learn
``SGDRegressor`` (one epoch through ``fit``, as users call it, input validation included;
``invscaling``, power_t 0.5, no projection), a plain NumPy loop, river ``LinearRegression`` with an
inverse-scaling SGD, and Vowpal Wabbit learning from its binary cache file (``--sgd``, and its
default adaptive/normalized/invariant update). What each row counts: ocolearn, scikit-learn, NumPy
and river start from arrays in memory; VW reads its cache from disk (no text parsing); "ocolearn,
from .npy" loads its arrays from disk in every repeat, loading counted like VW's. ocolearn is also
run in fresh processes without the one-kernel-loop flag (``OCOLEARN_FAST_CPU_LOOPS=0``; CPU only) to
show what it buys. Slow peers (NumPy loop, river) run on a prefix of the data.

The bound: on CPU the same rule in C (``ogd_reference.c``, compiled here by the system's compiler
at ``-O3 -march=native``, with and without ``-ffast-math``; ``c_reference.py``) runs on the same
arrays in memory, alternating with the rest, and its weights are checked against ocolearn's
(``max_abs_difference`` in the record). Writes ``OUT/ogd_DEVICE.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import c_reference
import numpy as np
from common import (
    SCRATCH,
    Record,
    alternate,
    ocolearn_pass,
    options,
    regression_data,
    result,
    sklearn_sgd_epoch,
    use_device,
    vw_cache,
    vw_from_cache,
)

import ocolearn  # noqa: F401  (first: XLA's CPU flags)

ETA, RADIUS = 0.1, 10.0


def learner_of(projected=True):
    """The benchmark's OGD (squared loss, eta/sqrt(t), the L2 ball); not ``projected``: the same
    OGD without the ball (the floor of the loop the ball is in)."""
    from ocolearn import InvSqrt, ridge
    from ocolearn.projections import Identity

    learner = ridge(InvSqrt(ETA), RADIUS)
    return learner if projected else learner.replace(projection=Identity())


def ocolearn_runs(X, y, npy):
    """Callables for the in-memory run, the run that loads its arrays from ``npy`` first, the
    in-memory run with the per-round trace (``run``'s default), and the in-memory run without the
    ball; each ``run(learner, X, y)`` as users call it (``common.ocolearn_pass``)."""
    import jax

    compile_s, in_memory = ocolearn_pass(learner_of(), X, y)
    _, with_trace = ocolearn_pass(learner_of(), X, y, trace=True)
    _, without_ball = ocolearn_pass(learner_of(projected=False), X, y)

    def from_disk():
        in_memory(jax.device_put(np.load(npy[0])), jax.device_put(np.load(npy[1])))

    return compile_s, in_memory, from_disk, with_trace, without_ball


def c_rows(X, y, weights):
    """The C reference's timed callables (with and without -ffast-math), and how far each one's
    final weights are from ocolearn's ``weights``."""
    rows, differences = {}, {}
    for fast in (True, False):
        once = c_reference.single(c_reference.compiled(fast), X, y, ETA, RADIUS)
        differences[c_reference.label(fast)] = float(np.max(np.abs(once() - weights)))
        rows[c_reference.label(fast)] = once
    return rows, differences


def numpy_loop(X, y):
    def loop():
        w = np.zeros(X.shape[1], np.float32)
        for t in range(len(y)):
            x = X[t]
            w -= np.float32(ETA / np.sqrt(t + 1) * (w @ x - y[t])) * x
            norm = np.sqrt(w @ w)
            if norm > RADIUS:
                w *= RADIUS / norm
        return w

    return loop


def river_loop(X, y):
    from river import linear_model, optim

    rows = [dict(enumerate(map(float, x))) for x in X]
    targets = list(map(float, y))

    def learn():
        model = linear_model.LinearRegression(
            optimizer=optim.SGD(optim.schedulers.InverseScaling(ETA, power=0.5)), intercept_lr=0.0, l2=0.0
        )
        for x, target in zip(rows, targets, strict=True):
            model.learn_one(x, target)

    return learn


def default_loops_process(n, d):
    """A callable: a fresh process with ``OCOLEARN_FAST_CPU_LOOPS=0`` compiles, then times one pass."""
    env = {**os.environ, "OCOLEARN_FAST_CPU_LOOPS": "0"}
    env.pop("XLA_FLAGS", None)

    def once() -> float:
        out = subprocess.run(
            [sys.executable, __file__, "--one-pass", str(n), str(d)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])

    return once


def one_pass(n, d):
    """The child of ``default_loops_process``: print the seconds of one compiled pass."""
    X, y = regression_data(n, d)
    _, run_once, *_ = ocolearn_runs(X, y, None)
    start = time.perf_counter()
    run_once()
    print(json.dumps({"seconds": time.perf_counter() - start}))


def main():
    if sys.argv[1:2] == ["--one-pass"]:
        return one_pass(int(sys.argv[2]), int(sys.argv[3]))
    parser = options(__doc__)
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument(
        "--no-peers", action="store_true", help="time ocolearn alone, from memory (no scikit-learn, VW, river)"
    )
    args = parser.parse_args()
    device = use_device(args.device)
    record = Record("ogd", args.out, args.repeats, eta=ETA, radius=RADIUS, n=args.n, dims=args.dims, back_to_back=True)
    if device == "cpu":
        record.data["c_compiler"] = c_reference.version()
    runs = []
    for d in args.dims:
        n = args.n if d <= 100 else args.n // 10  # keep d = 1000 inside memory with its float64 copy
        print(f"d = {d}, n = {n:,}", flush=True)
        X, y = regression_data(n, d)
        npy = () if args.no_peers else (SCRATCH / f"ogd_{n}x{d}_X.npy", SCRATCH / f"ogd_{n}x{d}_y.npy")
        for path, array in zip(npy, (X, y), strict=False):  # none with --no-peers
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, array)
        compile_s, in_memory, from_disk, with_trace, without_ball = ocolearn_runs(X, y, npy)
        timed = {
            "ocolearn": (n, in_memory),
            "ocolearn, per-round trace": (n, with_trace),
            "ocolearn, no projection (the loop's floor)": (n, without_ball),
        }
        differences = {}
        if device == "cpu":
            final = np.asarray(in_memory().state.w)
            c_timed, differences = c_rows(X, y, final)
            timed |= {name: (n, fn) for name, fn in c_timed.items()}
        if not args.no_peers:  # the peers, and the ocolearn rows that answer them
            timed["ocolearn, from .npy"] = (n, from_disk)
            if device == "cpu":
                timed["ocolearn, XLA default loops"] = (n, default_loops_process(n, d))
            small = min(n, 100_000)
            X64, y64 = X.astype(np.float64), y.astype(np.float64)
            cache = vw_cache(X, y, f"ogd_{n}x{d}")
            timed |= {
                "scikit-learn SGDRegressor (fit)": (n, lambda X64=X64, y64=y64: sklearn_sgd_epoch(X64, y64, ETA)),
                "Vowpal Wabbit --sgd, from its cache": (n, vw_from_cache(cache, f"--sgd -l {ETA}")),
                "Vowpal Wabbit default, from its cache": (n, vw_from_cache(cache, f"-l {ETA}")),
                "NumPy loop": (small, numpy_loop(X[:small], y[:small])),
                "river": (small // 5, river_loop(X[: small // 5], y[: small // 5])),
            }
        seconds = alternate({name: fn for name, (_, fn) in timed.items()}, args.repeats, back_to_back=True)
        rows = [
            result(
                name, count, seconds[name], **({"max_abs_difference": differences[name]} if name in differences else {})
            )
            for name, (count, _) in timed.items()
        ]
        runs.append({"d": d, "n": n, "compile_s": compile_s, "results": rows})
        for path in npy:
            path.unlink()
    record.save(runs=runs)


if __name__ == "__main__":
    main()
