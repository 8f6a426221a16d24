"""Sparse steps against their floor and scikit-learn's CSR path, medians of alternating repeats.

    python benchmarks/bench_sparse_steps.py [--n 200000] [--repeats 5] [--out benchmarks/records]

One pass over hashed sparse rows (2^18 buckets, about 50 non-zeros, ``bench_classifiers.sparse_data``)
for Pegasos, PA-I, the Perceptron (which also keeps its average), binary MIRA and AdaGrad on the
hinge loss, each against its nearest scikit-learn peer on CSR: ``SGDClassifier`` with the same
rule where there is one (Pegasos: hinge with ``alpha = lam`` and the "optimal" rate; PA-I:
``pa1``; the averaged Perceptron: ``loss="perceptron", average=True``), else the nearest (MIRA:
``pa1``; AdaGrad: the hinge SGD). scikit-learn's plain ``Perceptron`` (no average) is shown too.

Two floors show what bounds a round: the same scan doing only a 50-entry gather from the 1 MB
weight table, a scalar, and a 50-entry read-add-write back (one scatter chain, as Pegasos and
PA need), and a compiled numba loop doing the same in plain machine code, once with its sum
``w . x`` in order and once reordered into vector lanes (fastmath).

Each learner is measured against the JAX floor with its own memory traffic (its ``floor`` in the
record): Pegasos and PA keep one number per feature (the 1 MB table); the averaged Perceptron
(w and its sums u) and AdaGrad (w and G) keep two, binary MIRA four (two classes' w and u),
interleaved per feature in one table (``features.update_table``), so their floors gather 50
rows of 2 or 4 numbers (one cache line each) and add back into the same rows, the same
instructions per row as the one-number floor. Every method runs
once per repeat, in turn, so load on a shared machine falls on all of them alike. Prints a
table of medians and writes ``OUT/sparse_steps_cpu.json`` (``benchmarks/tables.py`` puts it in
docs/benchmarks.md).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from bench_classifiers import D_SPARSE, LAM, NNZ, sklearn_fit, sparse_data
from common import Record, alternate, ocolearn_pass, options, result

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import MIRA, AdaGrad, Hinge, PassiveAggressive, Pegasos, Perceptron, Sparse
from ocolearn.features import add_scaled, dot, table_dot, table_rows, update_table

FLOOR = "floor: JAX gather + scatter"
FLOOR_2 = "floor: JAX gather + scatter, 2 numbers per feature"
FLOOR_4 = "floor: JAX gather + scatter, 4 numbers per feature"
FLOOR_4_SCORES = "floor: JAX gather + scatter, 4 numbers per feature, 2 scores"


def floor_pass(X, scatter=False, width=1, scores=1):
    """Only the memory traffic of a sparse step: gather, one scalar, scatter-add back, written
    as ``features.add_scaled`` writes it (one ``dynamic_update_slice`` per non-zero) or, with
    ``scatter``, as one scatter op (``w.at[idx].add``). ``width`` > 1: a table of that many
    numbers per feature (``features.update_table``), the first of them the weights. ``scores``
    = 2: the scalar comes from two dot products (the first two numbers per feature), the
    arithmetic every binary MIRA step needs to compare its classes' scores."""

    @jax.jit
    def gather_scatter(X):
        def step(w, i):
            x = Sparse(X.idx[i], X.val[i], X.dim)
            if width > 1:
                s = table_dot(table_rows(w, x), x, slice(0, scores) if scores > 1 else 0)
                a = jnp.where((s[0] - s[1] if scores > 1 else s) < 1.0, 0.01, 0.0)
                return update_table(w, x, lambda row, v, c: row + c * v, jnp.full((width,), a)), None
            a = jnp.where(dot(w, x) < 1.0, 0.01, 0.0)
            return (w.at[x.idx].add(a * x.val) if scatter else add_scaled(w, a, x)), None

        shape = (X.dim, width) if width > 1 else (X.dim,)
        return jax.lax.scan(step, jnp.zeros(shape, jnp.float32), jnp.arange(X.idx.shape[0]))[0]

    return lambda: jax.block_until_ready(gather_scatter(X))


def numba_floor(idx, val, fastmath=False):
    """The floor's round in numba; ``fastmath`` lets LLVM reorder the sum ``w . x`` into
    vector lanes (as ``features.pairwise_sum`` does by hand), so it is no longer a chain."""
    import numba

    @numba.njit(fastmath=fastmath)
    def loop(idx, val):
        w = np.zeros(D_SPARSE, np.float32)
        for r in range(idx.shape[0]):
            s = np.float32(0.0)
            for j in range(idx.shape[1]):
                s += w[idx[r, j]] * val[r, j]
            a = np.float32(0.01) if s < 1 else np.float32(0.0)
            for j in range(idx.shape[1]):
                w[idx[r, j]] += a * val[r, j]
        return w

    return lambda: loop(idx, val)


def main():
    parser = options(__doc__)
    parser.add_argument("--n", type=int, default=200_000)
    args = parser.parse_args()

    import scipy.sparse
    from sklearn.linear_model import Perceptron as SkPerceptron
    from sklearn.linear_model import SGDClassifier

    n = args.n
    record = Record("sparse_steps", args.out, args.repeats, n=n, buckets=D_SPARSE, nnz=NNZ, lam=LAM)
    idx, val, y = sparse_data(n)
    X, yj = Sparse(jax.device_put(idx), jax.device_put(val), D_SPARSE), jax.device_put(y)
    classes = jax.device_put((y > 0).astype(np.int32))
    csr = scipy.sparse.csr_matrix((val.ravel().astype(np.float64), idx.ravel(), np.arange(0, n * NNZ + 1, NNZ)))
    csr.eliminate_zeros()
    fixed = dict(max_iter=1, tol=None, shuffle=False, fit_intercept=False)
    sgd_hinge = SGDClassifier(loss="hinge", alpha=LAM, learning_rate="optimal", **fixed)
    sgd_pa1 = SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0, **fixed)
    sgd_averaged = SGDClassifier(
        loss="perceptron", learning_rate="constant", eta0=1.0, penalty=None, average=True, **fixed
    )
    hinge, pa1 = "scikit-learn SGDClassifier hinge, optimal (CSR)", "scikit-learn SGDClassifier pa1 (CSR)"
    averaged = "scikit-learn SGDClassifier perceptron, averaged (CSR)"
    methods = {
        FLOOR: (floor_pass(X), None),
        FLOOR_2: (floor_pass(X, width=2), None),
        FLOOR_4: (floor_pass(X, width=4), None),
        FLOOR_4_SCORES: (floor_pass(X, width=4, scores=2), None),
        "floor: JAX gather + one scatter op": (floor_pass(X, scatter=True), None),
        "floor: numba loop": (numba_floor(idx, val), None),
        "floor: numba loop, sums reordered (fastmath)": (numba_floor(idx, val, fastmath=True), None),
        hinge: (sklearn_fit(sgd_hinge, csr, y), None),
        pa1: (sklearn_fit(sgd_pa1, csr, y), None),
        "scikit-learn Perceptron (CSR)": (sklearn_fit(SkPerceptron(**fixed), csr, y), None),
        averaged: (sklearn_fit(sgd_averaged, csr, y), None),
        "ocolearn pegasos": (ocolearn_pass(Pegasos(LAM), X, yj)[1], hinge),
        "ocolearn passive_aggressive (PA-I)": (ocolearn_pass(PassiveAggressive(1.0, 1), X, yj)[1], pa1),
        "ocolearn perceptron (and its average)": (ocolearn_pass(Perceptron(), X, yj)[1], averaged),
        "ocolearn mira (2 classes)": (ocolearn_pass(MIRA(2), X, classes)[1], pa1),
        "ocolearn adagrad (hinge)": (ocolearn_pass(AdaGrad(loss=Hinge()), X, yj)[1], hinge),
    }
    floors = {"perceptron": FLOOR_2, "adagrad": FLOOR_2, "mira": FLOOR_4}  # the same memory traffic
    floor_of = {
        name: next((f for k, f in floors.items() if name.startswith(f"ocolearn {k}")), FLOOR) for name in methods
    }
    arithmetic_floors = {"ocolearn mira (2 classes)": FLOOR_4_SCORES}  # the same traffic and dot products
    times = alternate({name: fn for name, (fn, _) in methods.items()}, args.repeats)
    results = [
        {
            **result(name, n, times[name]),
            "peer": peer,
            **({"floor": floor_of[name]} if peer else {}),
            **({"arithmetic_floor": arithmetic_floors[name]} if name in arithmetic_floors else {}),
        }
        for name, (_, peer) in methods.items()
    ]
    median = {name: float(np.median(t)) for name, t in times.items()}
    print(f"{'method':62s} {'median ms':>10s} {'M rows/s':>9s} {'vs peer':>8s} {'vs its floor':>12s}")
    for name, (_, peer) in methods.items():
        ratio = f"{median[peer] / median[name]:.2f}x" if peer else ""
        fair = f" ({median[name] / median[arithmetic_floors[name]]:.2f}x)" if name in arithmetic_floors else ""
        print(
            f"{name:62s} {median[name] * 1e3:10.1f} {n / median[name] / 1e6:9.2f} {ratio:>8s} "
            f"{median[name] / median[floor_of[name]]:11.2f}x{fair}"
        )
    record.save(results=results)


if __name__ == "__main__":
    main()
