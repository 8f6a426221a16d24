"""Sweeps over sparse rows: the writes as loops (the library) against written out.

    python benchmarks/bench_sparse_sweep.py [--n 20000] [--repeats 5] [--out benchmarks/records]

A sweep of 16 configurations over 2 seeds plays each seed's shuffle of the rows, so under the
``vmap`` over seeds a row's indices differ along the batch and every write of a sparse step is a
scatter. Since 2026-12-02 a sweep traces its writes as a loop of one write
(``features.rolled_writes``); before, as a single run does, one write per non-zero written out. The
same sweeps without seeds (the indices shared along the batch) are run both ways too. PA-I (C),
AdaGrad on the hinge loss (eta) and COCOB on the hinge loss (alpha), each swept over 16 values, on
the hashed rows of ``bench_classifiers.sparse_data`` (2^18 buckets, about 50 non-zeros). The
sweep's program (``sweep._sweep_chunk``, as ``sweep`` calls it, each seed's orders drawn on the
host) is lowered and compiled once per way, timed, then run in turn, the ways alternating within
each repeat (the data on the device; ``sweep``'s checks and transfers not timed, alike for both).
Writes ``OUT/sparse_sweep_cpu.json``; ``benchmarks/tables.py`` puts it in docs/benchmarks.md.
"""

from __future__ import annotations

import contextlib
import time

import jax
import numpy as np
from bench_classifiers import D_SPARSE, NNZ, sparse_data
from common import Record, alternate, options, result

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import COCOB, AdaGrad, Hinge, PassiveAggressive, Sparse, features
from ocolearn.shuffle import seed_orders
from ocolearn.sweep import LANES, _sweep_chunk, stack_values

SEEDS = [0, 1]
SWEPT = {
    "PA-I": (PassiveAggressive(), "C"),
    "AdaGrad (hinge)": (AdaGrad(loss=Hinge()), "eta"),
    "COCOB (hinge)": (COCOB(loss=Hinge()), "alpha"),
}


@contextlib.contextmanager
def writes(unroll):
    """Steps traced with ``fori_loop(..., unroll=unroll(k))`` for their writes of k non-zeros,
    whatever the sweep asks."""
    library = features._unroll
    features._unroll = unroll
    try:
        yield
    finally:
        features._unroll = library


WAYS = {
    "loops": lambda k: 1,
    "written out": lambda k: True if k <= features.UNROLL_UP_TO else 8,  # the rule before 2026-12-02
}


def compiled_sweep(learners, orders, X, y):
    """``(seconds to lower and compile, the compiled program as a function of nothing)``."""
    options = dict(passes=1, predict_after_update=False, trace=False)
    start = time.perf_counter()
    program = _sweep_chunk.lower(learners, None, orders, X, y, None, **options).compile()
    seconds = time.perf_counter() - start
    return seconds, lambda: jax.block_until_ready(program(learners, None, orders, X, y, None))


def main() -> None:
    parser = options(__doc__)
    parser.add_argument("--n", type=int, default=20_000)
    args = parser.parse_args()
    record = Record("sparse_sweep", args.out, args.repeats, n=args.n, buckets=D_SPARSE, nnz=NNZ, configs=LANES)
    idx, val, y = sparse_data(args.n)
    X, y = Sparse(jax.device_put(idx), jax.device_put(val), D_SPARSE), jax.device_put(y)
    runs, compile_seconds = {}, {}
    for seeds in (SEEDS, None):
        orders = None if seeds is None else jax.device_put(seed_orders(seeds, args.n, 1))
        for name, (learner, field) in SWEPT.items():
            learners = stack_values(learner, {field: np.geomspace(0.01, 10.0, LANES)})
            for way, unroll in WAYS.items():
                jax.clear_caches()  # (the steps are traced again, the other way)
                with writes(unroll):
                    key = f"{name}{'' if seeds else ' without seeds'}, {way}"
                    compile_seconds[key], runs[key] = compiled_sweep(learners, orders, X, y)
    times = alternate(runs, args.repeats)

    def examples(key):  # configuration-examples
        return args.n * LANES * (1 if "without seeds" in key else len(SEEDS))

    results = [result(key, examples(key), t, compile_seconds=compile_seconds[key]) for key, t in times.items()]
    for r in results:
        seconds = r["examples"] / r["median_examples_per_s"]
        print(f"{r['name']:32s} compile {r['compile_seconds']:6.2f} s, run {seconds:6.3f} s")
    record.save(results=results, seeds=SEEDS)


if __name__ == "__main__":
    main()
