"""Dense PA-I and sparse Pegasos against their peers, and the estimators' many-pass fits, in one run.

    python benchmarks/bench_classifiers.py [--n-dense 1000000] [--n-sparse 200000] [--repeats 5]
        [--parts dense sparse passes] [--device cpu|gpu] [--no-peers] [--out benchmarks/records]

PA-I (C = 1), one pass over n x 100 dense float32 examples with +-1 labels: ocolearn,
scikit-learn ``SGDClassifier(learning_rate="pa1")`` (the same rule, weights equal in
``tests/test_classifiers.py``), Vowpal Wabbit ``--sgd --loss_function hinge`` from its cache
(VW has no PA; the nearest hinge-loss learner), river ``PAClassifier`` and a NumPy loop.

Pegasos (lam = 1e-4), one pass over hashed sparse examples (2^18 buckets, about 50 non-zeros
each, values 1/sqrt(nnz)): ocolearn on padded sparse rows, scikit-learn ``SGDClassifier``
(hinge, L2 alpha = lam, its "optimal" rate 1/(alpha (t + t0)): Pegasos' rule up to t0) on CSR,
VW ``--loss_function hinge --l2 lam`` from its cache, river and a NumPy loop.

Many passes over little data, as estimators are used (a grid search fits many): PA-I through
``OnlineClassifier("passive_aggressive", max_iter=PASSES)`` and scikit-learn's
``SGDClassifier(learning_rate="pa1", max_iter=PASSES, tol=None)``, each with its defaults
otherwise (an intercept; ocolearn also scales online) and a shuffle per pass, on 1,000 x 20 dense
rows; and the same ocolearn fit of one pass, the cost of a fit besides its passes.

What each row counts: ocolearn, scikit-learn (through ``fit``, as users call it, so its input
validation counts), NumPy and river start from arrays in memory; VW reads its binary cache file
from disk in every repeat (no text parsing). Slow peers (NumPy, river) run on a prefix. Repeats
alternate between the implementations. Writes ``OUT/classifiers_DEVICE.json``.
"""

from __future__ import annotations

import warnings

import numpy as np
from common import (
    Record,
    alternate,
    ocolearn_pass,
    options,
    result,
    use_device,
    vw_cache,
    vw_cache_of,
    vw_from_cache,
)

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import PassiveAggressive, Pegasos, Sparse

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


def sklearn_fit(model, X, y):
    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one epoch does not "converge"
            model.fit(X, y)

    return fit


def sgd_classifier(**kw):
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(max_iter=1, tol=None, shuffle=False, fit_intercept=False, **kw)


def river_loop(model, rows, y):
    labels = [bool(v > 0) for v in y]

    def learn():
        m = model.clone()
        for x, label in zip(rows, labels, strict=True):
            m.learn_one(x, label)

    return learn


def numpy_pa(X, y):
    def loop():
        w = np.zeros(X.shape[1], np.float32)
        for x, label in zip(X, y, strict=True):
            loss = 1.0 - label * (w @ x)
            if loss > 0:
                w += min(C, loss / (x @ x)) * label * x
        return w

    return loop


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

    return loop


def dense(n, peers, repeats):
    X, y = dense_data(n)
    timed = {"ocolearn": (n, ocolearn_pass(PassiveAggressive(C, 1), X, y)[1])}
    if peers:
        from river import linear_model

        small = min(n, 50_000)
        cache = vw_cache(X, y, f"pa_{n}x100")
        pa1 = sgd_classifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=C)
        river_rows = [dict(enumerate(map(float, x))) for x in X[:small]]
        timed |= {
            "scikit-learn SGDClassifier pa1 (fit)": (n, sklearn_fit(pa1, X.astype(np.float64), y)),
            "Vowpal Wabbit --sgd hinge, from its cache": (n, vw_from_cache(cache, "--sgd --loss_function hinge")),
            "NumPy loop": (small, numpy_pa(X[:small], y[:small])),
            "river PAClassifier": (small, river_loop(linear_model.PAClassifier(C=C, mode=1), river_rows, y[:small])),
        }
    return measure(timed, repeats)


def sparse(n, peers, repeats):
    idx, val, y = sparse_data(n)
    timed = {"ocolearn": (n, ocolearn_pass(Pegasos(LAM), Sparse(idx, val, D_SPARSE), y)[1])}
    if peers:
        import scipy.sparse
        from river import linear_model, optim

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
        hinge = linear_model.LogisticRegression(
            optimizer=optim.SGD(optim.schedulers.InverseScaling(1.0, 1.0)), loss=optim.losses.Hinge(), l2=LAM
        )
        optimal = sgd_classifier(loss="hinge", alpha=LAM, learning_rate="optimal")
        timed |= {
            "scikit-learn SGDClassifier, CSR (fit)": (n, sklearn_fit(optimal, csr, y)),
            "Vowpal Wabbit hinge --l2, from its cache": (
                n,
                vw_from_cache(cache, f"--loss_function hinge --l2 {LAM} -b 18"),
            ),
            "NumPy loop": (small, numpy_pegasos(idx[:small], val[:small], y[:small])),
            "river LogisticRegression (hinge)": (small, river_loop(hinge, river_rows, y[:small])),
        }
    return measure(timed, repeats)


def many_passes(passes, peers, repeats):
    from ocolearn.estimators import OnlineClassifier

    X, y = dense_data(1000, d=20)
    n = len(y)
    timed = {
        f"ocolearn OnlineClassifier, {passes} passes (fit)": (
            n * passes,
            sklearn_fit(OnlineClassifier("passive_aggressive", max_iter=passes, random_state=0), X, y),
        ),
        "ocolearn OnlineClassifier, 1 pass (fit)": (
            n,
            sklearn_fit(OnlineClassifier("passive_aggressive", max_iter=1, random_state=0), X, y),
        ),
    }
    if peers:
        from sklearn.linear_model import SGDClassifier

        pa1 = SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=C, max_iter=passes, tol=None)
        timed[f"scikit-learn SGDClassifier pa1, {passes} passes (fit)"] = (
            n * passes,
            sklearn_fit(pa1.set_params(random_state=0), X.astype(np.float64), y),
        )
    return measure(timed, repeats)


def measure(timed, repeats):
    seconds = alternate({name: fn for name, (_, fn) in timed.items()}, repeats)
    return [result(name, count, seconds[name]) for name, (count, _) in timed.items()]


def main():
    parser = options(__doc__)
    parser.add_argument("--n-dense", type=int, default=1_000_000)
    parser.add_argument("--n-sparse", type=int, default=200_000)
    parser.add_argument("--passes", type=int, default=100, help="passes of the estimators' fits")
    parser.add_argument(
        "--parts", nargs="+", choices=["dense", "sparse", "passes"], default=["dense", "sparse", "passes"]
    )
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--no-peers", action="store_true", help="time ocolearn alone (no scikit-learn, VW, river)")
    args = parser.parse_args()
    use_device(args.device)
    record = Record(
        "classifiers",
        args.out,
        args.repeats,
        n_dense=args.n_dense,
        n_sparse=args.n_sparse,
        passes=args.passes,
        C=C,
        lam=LAM,
    )
    parts = {}
    if "dense" in args.parts:
        print(f"PA-I, dense, n = {args.n_dense:,}", flush=True)
        parts["pa_dense"] = dense(args.n_dense, not args.no_peers, args.repeats)
    if "sparse" in args.parts:
        print(f"Pegasos, sparse, n = {args.n_sparse:,}", flush=True)
        parts["pegasos_sparse"] = sparse(args.n_sparse, not args.no_peers, args.repeats)
    if "passes" in args.parts:
        print(f"PA-I, estimators, {args.passes} passes over 1,000 rows", flush=True)
        parts["estimator_passes"] = many_passes(args.passes, not args.no_peers, args.repeats)
    record.save(parts=parts)


if __name__ == "__main__":
    main()
