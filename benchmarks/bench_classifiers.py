"""Dense PA-I and sparse Pegasos against their peers, in one run.

    python benchmarks/bench_classifiers.py [--n-dense 1000000] [--n-sparse 200000]

PA-I (C = 1), one pass over n x 100 dense float32 examples with +-1 labels: ocolearn,
scikit-learn ``SGDClassifier(learning_rate="pa1")`` (the same rule, weights equal in
``tests/test_classifiers.py``), Vowpal Wabbit ``--sgd --loss_function hinge`` from its cache
(VW has no PA; the nearest hinge-loss learner), river ``PAClassifier`` and a NumPy loop.

Pegasos (lam = 1e-4), one pass over hashed sparse examples (2^18 buckets, about 50 non-zeros
each, values 1/sqrt(nnz)): ocolearn on padded sparse rows, scikit-learn ``SGDClassifier``
(hinge, L2 alpha = lam, its "optimal" rate 1/(alpha (t + t0)): Pegasos' rule up to t0) on CSR,
VW ``--loss_function hinge --l2 lam`` from its cache, river and a NumPy loop.
Slow peers (NumPy, river) run on a prefix; rates are examples per second.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import jax
import numpy as np
from common import best_time, report, vw_cache, vw_cache_of, vw_from_cache

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import PassiveAggressive, Pegasos, Sparse, run

C, LAM, D_SPARSE, NNZ = 1.0, 1e-4, 1 << 18, 50


def dense_data(n, d=100, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d), dtype=np.float32) / np.sqrt(d)).astype(np.float32)
    y = np.where(X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n) > 0, 1.0, -1.0).astype(np.float32)
    return X, y


def sparse_data(n, seed=0):
    """Padded (n, NNZ) hashed rows: distinct buckets in each row, about NNZ of them."""
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.integers(0, D_SPARSE, (n, NNZ)), axis=1).astype(np.int32)
    repeated = np.zeros_like(idx, bool)
    repeated[:, 1:] = idx[:, 1:] == idx[:, :-1]
    nnz = NNZ - repeated.sum(axis=1, keepdims=True)
    val = np.where(repeated, 0.0, 1.0 / np.sqrt(nnz)).astype(np.float32)
    w = rng.standard_normal(D_SPARSE)
    y = np.where((w[idx] * val).sum(axis=1) + 0.1 * rng.standard_normal(n) > 0, 1.0, -1.0).astype(np.float32)
    return idx, val, y


def time_ocolearn(learner, X, y):
    X, y = jax.device_put(X), jax.device_put(y)
    compiled = jax.jit(lambda lrn, X, y: run(lrn, X, y, trace=False)).lower(learner, X, y).compile()
    return len(y) / best_time(lambda: jax.block_until_ready(compiled(learner, X, y)))[0]


def time_sklearn(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch does not "converge"
        return len(y) / best_time(lambda: model.fit(X, y))[0]


def sgd_classifier(**kw):
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(max_iter=1, tol=None, shuffle=False, fit_intercept=False, **kw)


def time_river(model, rows, y):
    labels = [bool(v > 0) for v in y]

    def learn():
        m = model.clone()
        for x, label in zip(rows, labels, strict=True):
            m.learn_one(x, label)

    return len(y) / best_time(learn, repeat=1)[0]


def numpy_pa(X, y):
    def loop():
        w = np.zeros(X.shape[1], np.float32)
        for x, label in zip(X, y, strict=True):
            loss = 1.0 - label * (w @ x)
            if loss > 0:
                w += min(C, loss / (x @ x)) * label * x
        return w

    return len(y) / best_time(loop, repeat=1)[0]


def numpy_pegasos(idx, val, y):
    def loop():
        W, scale = np.zeros(D_SPARSE, np.float32), 1.0
        for t, (i, v, label) in enumerate(zip(idx, val, y, strict=True), start=1):
            eta = 1.0 / (LAM * t)
            margin = label * scale * (W[i] @ v)
            scale = scale * (1.0 - eta * LAM) if t > 1 else 1.0
            if margin < 1:
                np.add.at(W, i, eta * label / scale * v)
        return W

    return len(y) / best_time(loop, repeat=1)[0]


def dense(n, command):
    from river import linear_model

    X, y = dense_data(n)
    small = min(n, 50_000)
    cache = vw_cache(X, y, f"pa_{n}x100")
    rows = [
        {"name": "ocolearn", "examples_per_s": time_ocolearn(PassiveAggressive(C, 1), X, y)},
        {
            "name": "scikit-learn SGDClassifier pa1",
            "examples_per_s": time_sklearn(
                sgd_classifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=C), X.astype(np.float64), y
            ),
        },
        {
            "name": "Vowpal Wabbit --sgd hinge (cache)",
            "examples_per_s": n / vw_from_cache(cache, "--sgd --loss_function hinge"),
        },
        {"name": "NumPy loop", "examples_per_s": numpy_pa(X[:small], y[:small])},
        {
            "name": "river PAClassifier",
            "examples_per_s": time_river(
                linear_model.PAClassifier(C=C, mode=1), [dict(enumerate(map(float, x))) for x in X[:small]], y[:small]
            ),
        },
    ]
    report(f"PA-I, one pass, n = {n:,}, d = 100, dense", rows, "ocolearn", "pa_dense", command)


def sparse(n, command):
    import scipy.sparse
    from river import linear_model, optim

    idx, val, y = sparse_data(n)
    small = min(n, 20_000)
    csr = scipy.sparse.csr_matrix(
        (val.ravel().astype(np.float64), idx.ravel(), np.arange(0, n * NNZ + 1, NNZ)), shape=(n, D_SPARSE)
    )
    csr.eliminate_zeros()

    def write(path):
        with open(path, "w") as f:
            for i, v, label in zip(idx, val, y, strict=True):
                f.write(f"{label:g} |f " + " ".join(f"{a}:{b:.7g}" for a, b in zip(i, v, strict=True) if b) + "\n")

    cache = vw_cache_of(write, f"pegasos_{n}")
    river_rows = [
        {int(a): float(b) for a, b in zip(i, v, strict=True) if b}
        for i, v in zip(idx[:small], val[:small], strict=True)
    ]
    rows = [
        {"name": "ocolearn", "examples_per_s": time_ocolearn(Pegasos(LAM), Sparse(idx, val, D_SPARSE), y)},
        {
            "name": "scikit-learn SGDClassifier (CSR)",
            "examples_per_s": time_sklearn(sgd_classifier(loss="hinge", alpha=LAM, learning_rate="optimal"), csr, y),
        },
        {
            "name": "Vowpal Wabbit hinge --l2 (cache)",
            "examples_per_s": n / vw_from_cache(cache, f"--loss_function hinge --l2 {LAM} -b 18"),
        },
        {"name": "NumPy loop", "examples_per_s": numpy_pegasos(idx[:small], val[:small], y[:small])},
        {
            "name": "river LogisticRegression (hinge)",
            "examples_per_s": time_river(
                linear_model.LogisticRegression(
                    optimizer=optim.SGD(optim.schedulers.InverseScaling(1.0, 1.0)), loss=optim.losses.Hinge(), l2=LAM
                ),
                river_rows,
                y[:small],
            ),
        },
    ]
    report(
        f"Pegasos, one pass, n = {n:,}, 2^18 hashed features, ~50 non-zeros",
        rows,
        "ocolearn",
        "pegasos_sparse",
        command,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-dense", type=int, default=1_000_000)
    parser.add_argument("--n-sparse", type=int, default=200_000)
    args = parser.parse_args()
    command = "python benchmarks/bench_classifiers.py " + " ".join(sys.argv[1:])
    start = time.perf_counter()
    dense(args.n_dense, command)
    sparse(args.n_sparse, command)
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
