"""Rounds of the learners that project onto the L2 ball in a matrix's norm, and of OGD onto the
L1 ball, with steps that stay inside the ball and with steps that leave it.

    python benchmarks/bench_projected_rounds.py [--n 50000] [--repeats 5] [--out benchmarks/records]

AdaGrad (eta 0.5; the ball in its diagonal norm: a bisection), ONS (the ball in the norm of its A_t:
an eigendecomposition), MetaGrad (8 experts, an eigendecomposition each) and hinge OGD onto the L1
ball (eta 0.5 / sqrt(t); its threshold by pairs, on the signs of the targets) at d = 6 on the rows of
``common.regression_data``. Each projects only in the rounds whose step leaves the ball (a
``lax.cond``; before 2026-12-01, 2026-12-02 for the L1 ball, every round computed the projection and
a ``where`` kept it or not). At radius 100 no step leaves the ball; at radius 0.01 most do: the
record counts, for each, the rounds in which the step left it (the rounds whose state differs from
the learner's without the projection, run from the same state). Timed as users call ``run``
(``trace=False``, its checks included), from arrays in memory, after one unmeasured round (the
compile); the rows alternate within each repeat, each timed on the second of two passes back to back
(a pass right after another program's ran up to 50 ms slower: 5 ms of AdaGrad's become 17 after the
simplex at d = 256). Then squared-loss OGD (eta 0.1 / sqrt(t)) onto the simplex of radius 1, which
projects every round, at d = 6, 32, 128 and 256, with the threshold found as the library finds it
(by comparing every pair of entries up to ``projections.PAIRWISE_UP_TO`` = 128 entries, by sorting
beyond) and by sorting at every size. Writes ``OUT/projected_rounds_cpu.json``;
``benchmarks/tables.py`` puts it in docs/benchmarks.md.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from common import Record, alternate, ocolearn_pass, options, regression_data, result

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import OGD, ONS, AdaGrad, Hinge, InvSqrt, L1Ball, L2Ball, Simplex
from ocolearn.learners.metagrad import MetaGrad
from ocolearn.projections import _threshold_by_sorting

D = 6
RADII = {"inside": 100.0, "leaving": 0.01}
SIMPLEX_D = (6, 32, 128, 256)


class MetaGradUnprojected(MetaGrad):
    def _projected(self, V, Sigma):
        return V


class SimplexBySorting(Simplex):
    """The simplex with Figure 1's sort at every size."""

    def __call__(self, w):
        flat = w.reshape(-1)
        return jnp.maximum(flat - _threshold_by_sorting(flat, self.radius), 0.0).reshape(w.shape)


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


def second_of_two(once):
    """A callable that runs ``once`` twice and returns the seconds of the second run."""

    def timed():
        once()
        start = time.perf_counter()
        once()
        return time.perf_counter() - start

    return timed


def main() -> None:
    parser = options(__doc__)
    parser.add_argument("--n", type=int, default=50_000, help="rows (default 50,000)")
    args = parser.parse_args()
    X, y = regression_data(args.n, D)
    params = dict(n=args.n, d=D, radii=RADII, simplex_d=SIMPLEX_D)
    record = Record("projected_rounds", args.out, args.repeats, **params)
    runs, projected = {}, {}
    for where, radius in RADII.items():
        for name, (learner, unprojected) in learners(radius).items():
            key = f"{name}, radius {radius:g} ({where})"
            targets = np.sign(y) if isinstance(learner, OGD) else y  # (the hinge loss takes -1 and 1)
            runs[key] = second_of_two(ocolearn_pass(learner, X, targets)[1])
            projected[key] = rounds_projected(learner, unprojected, X, targets)
    for d in SIMPLEX_D:
        Xd, yd = regression_data(args.n, d)
        for way, simplex in (("library", Simplex(1.0)), ("sorting", SimplexBySorting(1.0))):
            key = f"OGD onto the simplex, d = {d} ({way})"
            runs[key] = second_of_two(ocolearn_pass(OGD(schedule=InvSqrt(0.1), projection=simplex), Xd, yd)[1])
            projected[key] = args.n  # (the simplex is an equality: every round projects)
    times = alternate(runs, args.repeats, warmup=False)  # ocolearn_pass ran each once
    results = [result(key, args.n, t, rounds_projected=projected[key]) for key, t in times.items()]
    for r in results:
        print(f"{r['name']:32s} {1e6 / r['median_examples_per_s']:7.2f} us a round, {r['rounds_projected']} projected")
    record.save(results=results)


if __name__ == "__main__":
    main()
