"""Adaptive, second-order and parameter-free learners against NumPy transcriptions of their
papers' pseudo-code (float64), and the properties they promise."""

from statistics import NormalDist

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocolearn import (
    AROW,
    COCOB,
    CW,
    NAG,
    OGD,
    ONS,
    SCW,
    AdaGrad,
    Box,
    CoinBetting,
    Hinge,
    InvSqrt,
    L1Ball,
    L2Ball,
    Pegasos,
    SketchedONS,
    Sparse,
    Squared,
    from_optax,
    run,
)
from ocolearn.features import norm
from ocolearn.learners.metagrad import MetaGrad
from ocolearn.learners.ons import frequent_directions
from ocolearn.projections import _simplex_threshold, below_largest


def regression(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)).astype(np.float32)
    return X, y


def binary(n=80, d=5, seed=1):
    X, y = regression(n, d, seed)
    return X, np.where(y > 0, 1.0, -1.0).astype(np.float32)


def close(a, b, rtol=2e-4, atol=2e-5):
    np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=rtol, atol=atol)


# AdaGrad ------------------------------------------------------------------------------------


def diag_ball(v, h, r):
    """argmin_{||u|| <= r} sum h (u - v)^2 by bisection on the KKT multiplier (float64)."""
    if np.linalg.norm(v) <= r:
        return v
    lo, hi = 0.0, h.max() * np.linalg.norm(v) / r
    for _ in range(200):
        mu = (lo + hi) / 2
        lo, hi = (mu, hi) if np.linalg.norm(h * v / (h + mu)) > r else (lo, mu)
    return h * v / (h + hi)


def adagrad_by_hand(X, y, eta, delta=0.0, l1=None, box=None, radius=None):
    w, G = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    for x, target in zip(X.astype(np.float64), y, strict=True):
        g = (w @ x - target) * x
        G += g * g
        H = delta + np.sqrt(G)
        v = w - np.where(H > 0, eta * g / np.where(H > 0, H, 1), 0)
        if l1 is not None:
            v = np.sign(v) * np.maximum(np.abs(v) - np.where(H > 0, eta * l1 / np.where(H > 0, H, 1), 0), 0)
        if box is not None:
            v = np.clip(v, *box)
        if radius is not None:
            v = diag_ball(v, H, radius)
        w = v
    return w


@pytest.mark.parametrize(
    "kwargs, learner",
    [
        ({}, AdaGrad(0.5)),
        ({"delta": 0.1}, AdaGrad(0.5, 0.1)),
        ({"box": (-0.3, 0.4)}, AdaGrad(0.5, projection=Box(-0.3, 0.4))),
        ({"radius": 0.8}, AdaGrad(0.5, projection=L2Ball(0.8))),
        ({"l1": 0.2}, AdaGrad(0.5, l1=0.2)),
        ({"l1": 0.2, "box": (-0.3, 0.4)}, AdaGrad(0.5, l1=0.2, projection=Box(-0.3, 0.4))),
    ],
    ids=["plain", "delta", "box", "l2_ball", "l1", "l1_box"],
)
def test_adagrad_is_figure_1(kwargs, learner):
    X, y = regression()
    close(run(learner, X, y).state.w, adagrad_by_hand(X, y, 0.5, **kwargs))


# Compiled once, as AdaGrad's round runs it (called outside a compiled function, its bisection's
# fori_loop would be traced and compiled again at every call).
in_unit_ball = jax.jit(lambda v, h: L2Ball(1.0).in_norm(v, h))


@given(
    v=st.lists(st.floats(-10, 10), min_size=3, max_size=3),
    h=st.lists(st.floats(0.01, 10), min_size=3, max_size=3),
)
def test_diagonal_norm_projection_onto_the_ball_is_the_nearest_point(v, h):
    v, h = np.array(v), np.array(h)
    u = np.asarray(in_unit_ball(jnp.asarray(v, jnp.float32), jnp.asarray(h, jnp.float32)), np.float64)
    assert np.linalg.norm(u) <= 1.0 + 1e-5
    close(u, diag_ball(v, h, 1.0), rtol=1e-3, atol=1e-4)


def test_adagrad_l1_gives_exact_zeros_and_the_sparse_step_equals_the_dense():
    X, y = regression(d=8)
    X[:, 5:] *= 0.01  # weak features: the L1 term keeps them at 0
    w = np.asarray(run(AdaGrad(0.5, l1=0.5), X, y).state.w)
    assert np.sum(w == 0.0) >= 3 and np.any(w != 0.0)
    idx = np.tile(np.arange(8, dtype=np.int32)[::-1], (len(y), 1))
    sparse = Sparse(jnp.asarray(idx), jnp.asarray(X[:, ::-1]), 8)
    close(run(AdaGrad(0.5), sparse, y).state.w, np.asarray(run(AdaGrad(0.5), X, y).state.w, np.float64), 1e-5, 1e-6)


def test_adagrad_features_whose_sum_of_squares_stays_0_do_not_move():
    """A gradient whose square underflows (float32: |g| < 1e-23) leaves G = 0, so H = 0 with
    delta = 0: the feature does not move (a division by H would move it to -inf)."""
    tiny = np.float32(1e-30)
    for x in (jnp.array([tiny, 1.0]), Sparse(jnp.array([0, 1], jnp.int32), jnp.array([tiny, 1.0]), 2)):
        state = AdaGrad(0.5).update(AdaGrad(0.5).init(2), (x, 1.0))  # squared loss: g = -x
        np.testing.assert_array_equal(state.G, [0.0, 1.0])
        np.testing.assert_array_equal(state.w, [0.0, 0.5])


# NAG ----------------------------------------------------------------------------------------


def nag_by_hand(X, y, eta):
    d = X.shape[1]
    w, s, G, N = np.zeros(d), np.zeros(d), np.zeros(d), 0.0
    predictions = []
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y, strict=True), start=1):
        for i in range(d):
            if abs(x[i]) > s[i]:
                w[i] = w[i] * s[i] ** 2 / x[i] ** 2
                s[i] = abs(x[i])
        p = w @ x
        predictions.append(p)
        N += sum(x[i] ** 2 / s[i] ** 2 for i in range(d) if s[i] > 0)
        for i in range(d):
            g = (p - target) * x[i]
            G[i] += g * g
            if G[i] > 0:
                w[i] -= eta * np.sqrt(t / N) * g / (s[i] * np.sqrt(G[i]))
    return w, np.array(predictions)


def test_nag_is_algorithm_2():
    X, y = regression()
    X[5:9, 1] = 0.0  # a feature that is absent for a while
    w, predictions = nag_by_hand(X, y, 0.7)
    result = run(NAG(0.7), X, y)
    close(result.state.w, w)
    close(result.trace.prediction, predictions)


@pytest.mark.parametrize("column", [0, 2])
def test_nag_predictions_do_not_change_when_a_feature_is_scaled_by_1000(column):
    X, y = regression(n=100)
    scaled = X.copy()
    scaled[:, column] *= 1000.0
    before, after = run(NAG(0.5), X, y).trace.prediction, run(NAG(0.5), scaled, y).trace.prediction
    close(after, np.asarray(before, np.float64), rtol=1e-4, atol=1e-5)
    # AdaGrad, for contrast, is not invariant.
    assert not np.allclose(run(AdaGrad(0.5), X, y).trace.prediction, run(AdaGrad(0.5), scaled, y).trace.prediction)


# The confidence-weighted family -------------------------------------------------------------


def gaussian_by_hand(X, y, rule, classes=0, a=1.0):
    """Diagonal CW / AROW / SCW as in the papers; multiclass by the top-1 single constraint."""
    K = max(classes, 1)
    mu, sigma = np.zeros((K, X.shape[1])), np.full((K, X.shape[1]), a)
    for x, label in zip(X.astype(np.float64), y, strict=True):
        if classes:
            s = mu @ x
            r = max((k for k in range(K) if k != label), key=lambda k: (s[k], -k))
            rows, signs = [int(label), r], [1.0, -1.0]
            m, v = s[int(label)] - s[r], (sigma[int(label)] + sigma[r]) @ (x * x)
        else:
            rows, signs = [0], [float(label)]
            m, v = label * (mu[0] @ x), sigma[0] @ (x * x)
        if v == 0:
            continue
        alpha, update = rule(m, v)
        if alpha <= 0:
            continue
        for row, sign in zip(rows, signs, strict=True):
            mu[row] += alpha * sign * sigma[row] * x
            sigma[row] = update(sigma[row], x * x, alpha)
    return mu if classes else mu[0]


def cw_rule(eta):
    phi = NormalDist().inv_cdf(eta)

    def rule(m, v):
        b = 1 + 2 * phi * m
        alpha = max(0.0, (-b + np.sqrt(b * b - 8 * phi * (m - phi * v))) / (4 * phi * v))
        return alpha, lambda s, xx, alpha: 1 / (1 / s + 2 * alpha * phi * xx)

    return rule


def arow_rule(r):
    def rule(m, v):
        beta = 1 / (v + r)
        return (max(0.0, 1 - m) * beta if m < 1 else 0.0), lambda s, xx, alpha: s - beta * s * s * xx

    return rule


def scw_rule(C, eta, variant):
    phi = NormalDist().inv_cdf(eta)
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2

    def rule(m, v):
        if phi * np.sqrt(v) - m <= 0:
            return 0.0, None
        if variant == 1:
            alpha = min(C, max(0.0, (-m * psi + np.sqrt(m * m * phi**4 / 4 + v * phi * phi * zeta)) / (v * zeta)))
        else:
            n = v + 1 / (2 * C)
            gamma = phi * np.sqrt(phi**2 * m * m * v * v + 4 * n * v * (n + v * phi**2))
            alpha = max(0.0, (-(2 * m * n + phi**2 * m * v) + gamma) / (2 * (n * n + n * v * phi**2)))
        u = (-alpha * v * phi + np.sqrt(alpha**2 * v**2 * phi**2 + 4 * v)) ** 2 / 4
        beta = alpha * phi / (np.sqrt(u) + v * alpha * phi)
        return alpha, lambda s, xx, alpha: s - beta * s * s * xx

    return rule


GAUSSIANS = [
    (CW(eta=0.8), cw_rule(0.8)),
    (AROW(r=0.5), arow_rule(0.5)),
    (SCW(C=0.5, eta=0.8, variant=1), scw_rule(0.5, 0.8, 1)),
    (SCW(C=0.5, eta=0.8, variant=2), scw_rule(0.5, 0.8, 2)),
]


@pytest.mark.parametrize("learner, rule", GAUSSIANS, ids=["cw", "arow", "scw1", "scw2"])
def test_confidence_weighted_binary_rules(learner, rule):
    X, y = binary()
    close(run(learner, X, y).state.w, gaussian_by_hand(X, y, rule), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("learner, rule", GAUSSIANS, ids=["cw", "arow", "scw1", "scw2"])
def test_confidence_weighted_multiclass_rules(learner, rule):
    X, y = regression(n=90, d=4, seed=3)
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])).astype(np.int32)
    multiclass = learner.replace(classes=3)
    close(run(multiclass, X, labels).state.w, gaussian_by_hand(X, labels, rule, 3), rtol=1e-3, atol=1e-4)


def test_arow_variance_only_shrinks_on_the_features_seen():
    X, y = binary()
    X[:, 4] = 0.0
    sigma = np.asarray(run(AROW(), X, y).state.sigma)
    assert sigma[4] == 1.0 and np.all(sigma[:4] < 1.0) and np.all(sigma > 0)


# ONS and its sketch -------------------------------------------------------------------------


def ons_by_hand(X, y, gamma, epsilon, radius=None):
    d = X.shape[1]
    w, A = np.zeros(d), epsilon * np.eye(d)
    for x, target in zip(X.astype(np.float64), y, strict=True):
        g = (w @ x - target) * x
        A += np.outer(g, g)
        v = w - np.linalg.solve(A, g) / gamma
        if radius is not None and np.linalg.norm(v) > radius:
            lam, Q = np.linalg.eigh(A)
            v = Q @ diag_ball(Q.T @ v, lam, radius)
        w = v
    return w


@pytest.mark.parametrize("radius", [None, 0.7])
def test_ons_is_algorithm_2(radius):
    X, y = regression(n=40, d=3)
    learner = ONS(2.0, 1.0) if radius is None else ONS(2.0, 1.0, projection=L2Ball(radius))
    close(run(learner, X, y).state.w, ons_by_hand(X, y, 2.0, 1.0, radius), rtol=1e-3, atol=1e-4)


class BisectingEveryRound(L2Ball):
    """The ball's diagonal-norm projection as it was: the bisection in every round, its point
    kept only where v is outside (a ``where``, no ``lax.cond``)."""

    def in_norm(self, v, h, iterations=64):
        length = norm(v)
        return jnp.where(length > self.radius, self._bisect(v, h, length, iterations), v)


class ONSProjectingEveryRound(ONS):
    def _projected(self, v, A_inv):
        return jnp.where(jnp.sum(v * v) > self.projection.radius**2, self._project(v, A_inv), v)


class MetaGradProjectingEveryRound(MetaGrad):
    def _projected(self, V, Sigma):
        return jax.vmap(self._project)(V, Sigma, jnp.sum(V * V, axis=1) > self.radius**2)


class ShrinkingEveryRound(L1Ball):
    """The L1 ball as it was: the sort in every round, w itself kept where it is inside (a
    ``where``, no ``lax.cond``)."""

    def __call__(self, w):
        flat = w.reshape(-1)
        a = below_largest(jnp.abs(flat))
        shrunk = (jnp.sign(flat) * jnp.maximum(a - _simplex_threshold(a, self.radius), 0.0)).reshape(w.shape)
        return jnp.where(jnp.sum(jnp.abs(flat)) <= self.radius, w, shrunk)


class NeverProjecting(L2Ball):
    """A broken ball: the condition inverted, projecting only the steps that stay inside."""

    def in_norm(self, v, h, iterations=64):
        length = norm(v)
        return jax.lax.cond(length > self.radius, lambda: v, lambda: self._bisect(v, h, length, iterations))


def test_projections_run_only_in_the_rounds_that_leave_the_ball_and_change_no_bit():
    # AdaGrad, ONS and MetaGrad project onto the ball under a lax.cond, only in the rounds whose
    # step left it, and OGD onto the L1 ball: the same bits as projecting every round and keeping
    # the result where the step left the ball. At radius 0.3 on this stream the steps leave it in
    # 253, 224 and 273 of the 300 rounds (counted against the unprojected learners, 2026-12-01),
    # hinge OGD's in 292 (2026-12-02): both branches run.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 5)).astype(np.float32)
    y = (X @ rng.normal(size=5) * 2 + 0.3 * rng.normal(size=300)).astype(np.float32)
    pairs = [
        (AdaGrad(0.5, projection=L2Ball(0.3)), AdaGrad(0.5, projection=BisectingEveryRound(0.3))),
        (ONS(projection=L2Ball(0.3)), ONSProjectingEveryRound(projection=L2Ball(0.3))),
        (MetaGrad(0.3, 5.0, 5), MetaGradProjectingEveryRound(0.3, 5.0, 5)),
        (OGD(Hinge(), InvSqrt(0.5), L1Ball(0.3)), OGD(Hinge(), InvSqrt(0.5), ShrinkingEveryRound(0.3))),
    ]
    for learner, every_round in pairs:
        target = np.sign(y) if isinstance(learner, OGD) else y
        ran, reference = run(learner, X, target), run(every_round, X, target)
        for a, b in zip(jax.tree.leaves(ran), jax.tree.leaves(reference), strict=True):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes(), type(learner).__name__
    inverted = run(AdaGrad(0.5, projection=NeverProjecting(0.3)), X, y).state.table
    assert not np.array_equal(inverted, run(pairs[0][0], X, y).state.table)


def test_steps_called_by_hand_compile_once_not_at_every_call():
    # lax.cond called outside a compiled function traces and compiles its branches at every call
    # (60 to 70 ms a step), as a fori_loop or a vmap of a cond does; parts.cond calls the taken
    # branch there instead, and the ball's bisection and MetaGrad's projections are compiled
    # functions of their own. Steps by hand over the same rows a second time compile nothing.
    compiles = []
    counting = [True]
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, duration, **_: counting[0] and event.endswith("backend_compile_duration") and compiles.append(1)
    )
    rng = np.random.default_rng(4)
    X = rng.normal(size=(6, 3)).astype(np.float32)
    learners = [
        AdaGrad(0.5, projection=L2Ball(0.01)),
        ONS(projection=L2Ball(0.01)),
        MetaGrad(0.01, 5.0, 3),
        OGD(Hinge(), InvSqrt(0.5), L1Ball(0.01)),
        OGD(Squared(), InvSqrt(0.5), L2Ball(0.01)),  # the ball's re-sum every 16 rounds: rounds 16 and 32
        Pegasos(0.1),
    ]

    def steps(learner):
        state = learner.init(3)
        for t in range(40):
            state = learner.update(state, (X[t % 6], jnp.float32(1.0 - 2 * (t % 2))))

    try:
        for learner in learners:
            steps(learner)
            compiles.clear()
            steps(learner)
            assert not compiles, f"{type(learner).__name__}: {len(compiles)} compiles in 40 steps by hand"
    finally:
        counting[0] = False


def test_sketched_ons_with_room_for_every_direction_is_ons():
    X, y = regression(n=40, d=4)
    learner = SketchedONS(2.0, 1.0, sketch_size=5, C=jnp.inf)
    close(run(learner, X, y).state.w, ons_by_hand(X, y, 2.0, 1.0), rtol=1e-3, atol=1e-4)


def son_by_hand(X, y, gamma, epsilon, m, C):
    """Luo et al. (2016), Algorithm 1 with Frequent Directions (Liberty 2013), in float64:
    project u onto {w : |w . x| <= C} in the norm of A = epsilon I + B'B, step with A^{-1} g."""
    d = X.shape[1]
    u, B = np.zeros(d), np.zeros((m, d))
    for x, target in zip(X.astype(np.float64), y, strict=True):
        A = epsilon * np.eye(d) + B.T @ B
        p = u @ x
        tau = np.sign(p) * max(abs(p) - C, 0.0)
        Ax = np.linalg.solve(A, x)
        w = u - tau * Ax / (x @ Ax)
        g = (w @ x - target) * x
        B[-1] = g  # FD: the last row is free; shrink every squared singular value by the smallest
        _, sigma, Vt = np.linalg.svd(B, full_matrices=False)
        B = np.sqrt(np.maximum(sigma**2 - sigma[-1] ** 2, 0.0))[:, None] * Vt
        u = w - np.linalg.solve(epsilon * np.eye(d) + B.T @ B, g) / gamma
    return u


@pytest.mark.parametrize("m, C", [(3, 1.5), (2, 0.5), (3, np.inf)])
def test_sketched_ons_with_a_shrinking_sketch_is_algorithm_1(m, C):
    X, y = regression(n=80, d=6)
    learner = SketchedONS(2.0, 5.0, sketch_size=m, C=C)
    result = run(learner, X, y)
    close(result.state.w, son_by_hand(X, y, 2.0, 5.0, m, C), rtol=1e-3, atol=1e-4)
    assert np.all(np.abs(np.asarray(result.trace.prediction)) <= C)


@given(seed=st.integers(0, 1000), m=st.integers(2, 6))
def test_frequent_directions_guarantee(seed, m):
    G = np.random.default_rng(seed).normal(size=(30, 8)).astype(np.float32)
    B = jnp.zeros((m, 8), jnp.float32)
    for g in G:  # (compiled, as a learner's round runs it: one program per m, not each operation dispatched)
        B = jax.jit(frequent_directions)(B, jnp.asarray(g))
    gap = G.T.astype(np.float64) @ G - np.asarray(B, np.float64).T @ np.asarray(B, np.float64)
    eig = np.linalg.eigvalsh(gap)
    assert eig.min() >= -1e-3 * np.sum(G * G)  # B'B never exceeds G'G
    assert eig.max() <= np.sum(G * G) / m * (1 + 1e-4)  # Liberty (2013): ||G'G - B'B|| <= ||G||_F^2 / m


# Coin betting -------------------------------------------------------------------------------


def kt_by_hand(X, y, epsilon, per_coordinate):
    d = X.shape[1]
    shape = d if per_coordinate else 1
    w, theta, wealth, L = np.zeros(d), np.zeros(d), np.full(shape, epsilon), np.zeros(shape)
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y, strict=True), start=1):
        g = 0.5 * 2 * (w @ x - target) * x
        L = np.maximum(L, np.abs(g) if per_coordinate else np.linalg.norm(g))
        c = np.where(L > 0, -g / np.where(L > 0, L, 1), 0)
        wealth = wealth + (c * w if per_coordinate else c @ w)
        theta += c
        w = theta / (t + 1) * wealth
    return w


@pytest.mark.parametrize("per_coordinate", [False, True])
def test_coin_betting_is_the_kt_bettor(per_coordinate):
    X, y = regression()
    close(run(CoinBetting(1.0, per_coordinate), X, y).state.w, kt_by_hand(X, y, 1.0, per_coordinate))


@pytest.mark.parametrize("per_coordinate", [False, True])
def test_coin_betting_wealth_stays_positive_and_regret_is_sublinear(per_coordinate):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 3)).astype(np.float32)
    y = (X @ np.array([2.0, -1.0, 0.5]) + 0.1 * rng.normal(size=3000)).astype(np.float32)
    result = run(CoinBetting(per_coordinate=per_coordinate), X, y)
    assert np.all(np.asarray(result.state.wealth) > 0)
    loss = np.asarray(result.trace.loss, np.float64)
    best = 0.5 * np.mean((X @ np.linalg.lstsq(X, y, rcond=None)[0] - y) ** 2)
    assert loss[-1000:].mean() < best + 0.05  # no rate, no radius: it finds u* = (2, -1, 0.5)
    close(result.state.w, [2.0, -1.0, 0.5], rtol=0.05, atol=0.05)


# optax --------------------------------------------------------------------------------------


def test_from_optax_sgd_is_ogd():
    X, y = regression()
    ours = run(OGD(Squared(), InvSqrt(0.1)), X, y).state.w
    theirs = run(from_optax(optax.sgd(lambda count: 0.1 / jnp.sqrt(count + 1.0))), X, y).state.w
    np.testing.assert_allclose(theirs, ours, rtol=1e-6, atol=1e-7)


def test_from_optax_adagrad_sweeps_its_learning_rate_and_equals_optax_by_hand():
    X, y = binary()
    rates = jnp.array([0.05, 0.2, 1.0])
    base = from_optax("adagrad", Hinge(), learning_rate=0.1)
    stacked = jax.tree.map(lambda _: rates, base)
    swept = jax.vmap(lambda lrn: run(lrn, X, y).state.w)(stacked)
    for j, rate in enumerate(rates):
        tx, w = optax.adagrad(float(rate)), jnp.zeros(X.shape[1])
        state = tx.init(w)
        for x, target in zip(X, y, strict=True):
            g = jnp.where(target * (w @ x) < 1, -target, 0.0) * x
            updates, state = tx.update(g, state, w)
            w = optax.apply_updates(w, updates)
        np.testing.assert_allclose(swept[j], w, rtol=1e-5, atol=1e-6)


def test_adaptive_learners_come_from_configs_and_their_comparison_table(tmp_path):
    from pathlib import Path

    from ocolearn.config import load
    from ocolearn.study import load as load_study_file

    root = Path(__file__).parent.parent / "configs"
    study = load_study_file(root / "study_iris.toml", ["learners.ons.gamma=0.25", "learners.nag.eta=2"])
    learners = {name: entry.learner for name, entry in study.learners.items()}
    assert isinstance(learners["adagrad"], AdaGrad) and learners["ons"].gamma == 0.25
    assert learners["nag"].eta == 2.0 and isinstance(learners["kt"], CoinBetting)
    coin = load(root / "iris_coin.toml").learner
    assert coin == COCOB(loss=Squared())  # the best parameter-free learner of configs/study_iris.toml
    text = (root / "iris_coin.toml").read_text().split("[learner]")[0]
    (tmp_path / "optax.toml").write_text(
        text + '[learner]\nkind = "optax"\ntransformation = "adam"\nhyperparams = { learning_rate = 0.3 }\n'
        "[sweep.values]\n'learner.hyperparams.learning_rate' = [0.01, 0.1]\n"
    )
    experiment = load(tmp_path / "optax.toml")
    assert experiment.learner == from_optax("adam", learning_rate=0.3)
    assert experiment.sweep.axes()["learner.hyperparams.learning_rate"].tolist() == [0.01, 0.1]
