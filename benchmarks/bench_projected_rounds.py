"""Rounds of the learners that project onto the L2 ball in a matrix's norm, and of OGD onto the
L1 ball, with steps that stay inside the ball and with steps that leave it.

    python benchmarks/bench_projected_rounds.py [--n 50000] [--repeats 5] [--out benchmarks/records]

AdaGrad (eta 0.5; the ball in its diagonal norm: a bisection), ONS (the ball in the norm of its
A_t: an eigendecomposition), MetaGrad (8 experts, an eigendecomposition each) and hinge OGD onto
the L1 ball (eta 0.5 / sqrt(t); a sort, on the signs of the targets) at d = 6 on the rows of
``common.regression_data``. Each projects only in the rounds whose step leaves the ball (a
``lax.cond``; before 2026-12-01, 2026-12-02 for the L1 ball, every round computed the projection
and a ``where`` kept it or not). At radius 100 no step leaves the ball; at radius 0.01 most do: the
record counts, for each, the rounds in which the step left it (the rounds whose state differs from the learner's without
the projection, run from the same state). Timed as users call ``run`` (``trace=False``, its checks
included), from arrays in memory, after one unmeasured round (the compile); the rows alternate
within each repeat. Writes ``OUT/projected_rounds_cpu.json``; ``benchmarks/tables.py`` puts it in
the README.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from common import Record, alternate, ocolearn_pass, options, regression_data, result

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import OGD, ONS, AdaGrad, Hinge, InvSqrt, L1Ball, L2Ball
from ocolearn.learners.metagrad import MetaGrad

D = 6
RADII = {"inside": 100.0, "leaving": 0.01}


class MetaGradUnprojected(MetaGrad):
    def _projected(self, V, Sigma):
        return V


def learners(radius):
    """``name: (learner, the same learner without its projection)``."""
    return {
        "AdaGrad": (AdaGrad(0.5, projection=L2Ball(radius)), AdaGrad(0.5)),
        "ONS": (ONS(projection=L2Ball(radius)), ONS()),
        "MetaGrad": (MetaGrad(radius, 5.0), MetaGradUnprojected(radius, 5.0)),
        "hinge OGD (L1 ball)": (OGD(Hinge(), InvSqrt(0.5), L1Ball(radius)), OGD(Hinge(), InvSqrt(0.5))),
    }


def rounds_projected(learner, unprojected, X, y) -> int:
    """In how many rounds the learner's state differs from its unprojected step's, from the same state."""

    def step(state, example):
        a, b = learner.update(state, example), unprojected.update(state, example)
        pairs = zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
        return a, jnp.any(jnp.stack([jnp.any(p != q) for p, q in pairs]))

    return int(jax.lax.scan(step, learner.init(D), (jnp.asarray(X), jnp.asarray(y)))[1].sum())


def main() -> None:
    parser = options(__doc__)
    parser.add_argument("--n", type=int, default=50_000, help="rows (default 50,000)")
    args = parser.parse_args()
    X, y = regression_data(args.n, D)
    record = Record("projected_rounds", args.out, args.repeats, n=args.n, d=D, radii=RADII)
    runs, projected = {}, {}
    for where, radius in RADII.items():
        for name, (learner, unprojected) in learners(radius).items():
            key = f"{name}, radius {radius:g} ({where})"
            targets = np.sign(y) if isinstance(learner, OGD) else y  # (the hinge loss takes -1 and 1)
            runs[key] = ocolearn_pass(learner, X, targets)[1]
            projected[key] = rounds_projected(learner, unprojected, X, targets)
    times = alternate(runs, args.repeats, warmup=False)  # ocolearn_pass ran each once
    results = [result(key, args.n, t, rounds_projected=projected[key]) for key, t in times.items()]
    for r in results:
        print(f"{r['name']:32s} {1e6 / r['median_examples_per_s']:7.2f} us a round, {r['rounds_projected']} projected")
    record.save(results=results)


if __name__ == "__main__":
    main()
