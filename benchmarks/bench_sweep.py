"""Sweeps of projected OGD (rates x radii) as one compiled program, against looping over the configurations.

    python benchmarks/bench_sweep.py [--configs 256] [--n 100000] [--d 100] [--repeats 5]
                                     [--device cpu|gpu] [--no-peers] [--out benchmarks/records]

Each ``--configs C`` (a square: a sqrt(C) x sqrt(C) grid of rates x radii) runs as one ocolearn
sweep, timed in repeats after its compile. For the first C, unless ``--no-peers``, the same
configurations also run as ocolearn single runs looped in Python, and as scikit-learn
``SGDRegressor`` fits looped (one epoch through ``fit`` per configuration, as users call it; no
projection, so only the rate matters to it), alternating with the sweep; one configuration's
single run is timed (for the first C) in every case, and so is the same sweep without the ball
(its floor: the loop of steps alone). On CPU the bound: the same sweep in C
(``ogd_reference.c``'s ``ogd_sweep``, compiled here at ``-O3 -march=native``, with and without
``-ffast-math``; ``c_reference.py``), each row read once for all configurations, its weights checked
against the sweep's (``max_abs_difference``). All start from arrays in memory (no loading counted).
Rates are configuration-examples per second. Writes ``OUT/sweep_DEVICE.json``.

On a GPU: ``python benchmarks/bench_sweep.py --device gpu --configs 256 4096 65536 --no-peers``.
"""

from __future__ import annotations

import math
import time

import c_reference
import numpy as np
from common import Record, alternate, options, regression_data, result, sklearn_sgd_epoch, use_device

import ocolearn  # noqa: F401  (first: XLA's CPU flags)


def grid_learners(configs):
    from ocolearn import InvSqrt, ridge
    from ocolearn.sweep import product, stack_values

    side = math.isqrt(configs)
    if side * side != configs:
        raise SystemExit(f"bench_sweep: error: --configs {configs} is not a square (a side x side grid)")
    grid = product({"schedule.eta": np.geomspace(0.01, 1.0, side), "projection.radius": np.geomspace(0.1, 10, side)})
    template = ridge(InvSqrt(1.0), 1.0)
    return template, grid, stack_values(template, grid)


def unprojected_learners(template, grid):
    """The grid's rates without the ball: the sweep's loop with nothing but the steps."""
    from ocolearn.projections import Identity
    from ocolearn.sweep import stack_values

    return stack_values(template.replace(projection=Identity()), {"schedule.eta": grid["schedule.eta"]})


def singles(template, grid, X, Xj, yj, peers):
    """Timed callables: one configuration's single run, and with ``peers`` the loops over them all."""
    import jax

    from ocolearn import InvSqrt, run

    learners = [
        template.replace(schedule=InvSqrt(e), projection=template.projection.replace(radius=r))
        for e, r in zip(grid["schedule.eta"], grid["projection.radius"], strict=True)
    ]

    def one(learner=learners[0]):
        return jax.block_until_ready(run(learner, Xj, yj, trace=False))

    one()
    if not peers:
        return {"one configuration, single run": one}
    X64, y64 = X.astype(np.float64), np.asarray(yj, np.float64)
    return {
        "one configuration, single run": one,
        "ocolearn single runs, looped in Python": lambda: [one(s) for s in learners],
        "scikit-learn SGDRegressor (fit), looped": lambda: [
            sklearn_sgd_epoch(X64, y64, eta) for eta in grid["schedule.eta"]
        ],
    }


def main():
    parser = options(__doc__)
    parser.add_argument("--configs", type=int, nargs="+", default=[256], help="numbers of configurations (squares)")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--no-peers", action="store_true", help="time the sweep alone")
    args = parser.parse_args()
    device = use_device(args.device)
    import jax

    from ocolearn.sweep import sweep

    record = Record("sweep", args.out, args.repeats, n=args.n, d=args.d, configs=args.configs)
    X, y = regression_data(args.n, args.d)
    Xj, yj = jax.device_put(X), jax.device_put(y)
    sweeps = []
    for i, configs in enumerate(args.configs):
        print(f"{configs} configurations", flush=True)
        template, grid, learners = grid_learners(configs)
        start = time.perf_counter()
        jax.block_until_ready(sweep(learners, Xj, yj))  # compiles
        first = time.perf_counter() - start
        timed = {
            f"ocolearn sweep ({configs:,} configurations, one program)": lambda ls=learners: jax.block_until_ready(
                sweep(ls, Xj, yj)
            )
        }
        if i == 0:  # the floor: the same sweep without the ball
            unprojected = unprojected_learners(template, grid)
            jax.block_until_ready(sweep(unprojected, Xj, yj))
            timed["ocolearn sweep, no projection (the loop's floor)"] = lambda ls=unprojected: jax.block_until_ready(
                sweep(ls, Xj, yj)
            )
        entry = {"configs": configs, "first_call_s": first}
        differences = {}
        if i == 0:
            timed |= singles(template, grid, X, Xj, yj, peers=not args.no_peers)
            if device == "cpu":
                swept = np.asarray(sweep(learners, Xj, yj).state.w)[:, 0]
                for fast in (True, False):
                    name = c_reference.label(fast)
                    once = c_reference.sweep(
                        c_reference.compiled(fast), X, y, grid["schedule.eta"], grid["projection.radius"]
                    )
                    differences[name] = float(np.max(np.abs(once() - swept)))
                    timed[name] = once
                record.data["c_compiler"] = c_reference.version()
        seconds = alternate(timed, args.repeats)
        work = {name: (args.n if name.startswith("one configuration") else configs * args.n) for name in timed}
        entry["results"] = [
            result(
                name,
                work[name],
                seconds[name],
                **({"max_abs_difference": differences[name]} if name in differences else {}),
            )
            for name in timed
        ]
        sweeps.append(entry)
    record.save(sweeps=sweeps)


if __name__ == "__main__":
    main()
