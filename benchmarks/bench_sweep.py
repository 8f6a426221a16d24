"""A 16 x 16 sweep (rates x radii) of projected OGD, against looping over the configurations.

    python benchmarks/bench_sweep.py [--n 100000] [--d 100] [--grid 16]

Side by side in one run: ocolearn's sweep (one compiled program), ocolearn's single runs looped
in Python, and scikit-learn ``SGDRegressor`` (one epoch each, no projection) looped. Rates are
configuration-examples per second; the compile time of the sweep is reported apart.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import numpy as np
from common import best_time, regression_data, report, sklearn_sgd_epoch

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import InvSqrt, ridge, run
from ocolearn.sweep import product, stack_values, sweep


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--grid", type=int, default=16)
    args = parser.parse_args()
    X, y = regression_data(args.n, args.d)
    grid = product(
        {"schedule.eta": np.geomspace(0.01, 1.0, args.grid), "projection.radius": np.geomspace(0.1, 10, args.grid)}
    )
    configs = len(grid["schedule.eta"])
    template = ridge(InvSqrt(1.0), 1.0)
    learners = stack_values(template, grid)
    Xj, yj = jax.device_put(X), jax.device_put(y)

    start = time.perf_counter()
    sweep(learners, Xj, yj)  # compiles
    first = time.perf_counter() - start
    sweep_s, _ = best_time(lambda: sweep(learners, Xj, yj))

    singles = [
        template.replace(schedule=InvSqrt(e), projection=template.projection.replace(radius=r))
        for e, r in zip(grid["schedule.eta"], grid["projection.radius"], strict=True)
    ]
    jax.block_until_ready(run(singles[0], Xj, yj, trace=False))
    one_s, _ = best_time(lambda: jax.block_until_ready(run(singles[0], Xj, yj, trace=False)))
    looped_s, _ = best_time(lambda: [jax.block_until_ready(run(s, Xj, yj, trace=False)) for s in singles], repeat=1)

    X64, y64 = X.astype(np.float64), y.astype(np.float64)

    def sklearn_loop():
        for eta in grid["schedule.eta"]:
            sklearn_sgd_epoch(X64, y64, eta)

    sklearn_s, _ = best_time(sklearn_loop, repeat=1)
    work = configs * args.n
    rows = [
        {
            "name": f"ocolearn sweep ({configs} configurations, one program)",
            "examples_per_s": work / sweep_s,
            "seconds": sweep_s,
        },
        {"name": "ocolearn single runs, looped in Python", "examples_per_s": work / looped_s, "seconds": looped_s},
        {"name": "scikit-learn SGDRegressor, looped", "examples_per_s": work / sklearn_s, "seconds": sklearn_s},
    ]
    title = (
        f"Sweep of projected OGD, {configs} configurations, n = {args.n:,}, d = {args.d}: "
        f"sweep {sweep_s:.2f} s (first call with compile {first:.2f} s), one configuration {one_s * 1e3:.1f} ms, "
        f"sweep / one = {sweep_s / one_s:.0f}x"
    )
    report(title, rows, rows[0]["name"], "sweep", "python benchmarks/bench_sweep.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
