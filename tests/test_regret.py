import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ocolearn import (
    OGD,
    Absolute,
    Box,
    Constant,
    Hinge,
    InvSqrt,
    L1Ball,
    L2Ball,
    Logistic,
    OGDState,
    Squared,
    dot,
    ridge,
    run,
)
from ocolearn.regret import (
    gradient_bound,
    in_float64,
    least_squares,
    least_squares_in_ball,
    ogd_regret_bound,
    ons_parameters,
    ons_regret_bound,
    prefix_best_linear,
    prefix_best_squared,
    regret_curve,
    round_losses,
    scaled_norm,
    strongly_convex_regret_bound,
)


def objective(X, y, u):
    return np.sum((X @ u - y) ** 2)


def test_the_bounds_are_the_papers_closed_forms():
    # The property tests only check regret below these bounds, which a looser bound passes too.
    # Numbers chosen so that no two terms coincide (G^2 != 2 G, 2 lam != 1, D^2 != 2 D).
    # Zinkevich 2003, Theorem 1 scaled by eta: D^2 sqrt(t) / (2 eta) + (sqrt(t) - 1/2) eta G^2; D = 3, G = 4, eta = 0.5.
    np.testing.assert_allclose(ogd_regret_bound(InvSqrt(0.5), 3.0, 4.0, 4)[[0, 3]], [13.0, 30.0], rtol=1e-12)
    # Hazan, Agarwal and Kale 2007, Theorem 1: G^2 / (2 lam) (1 + ln t); G = 3, lam = 0.25: 18 (1 + ln t).
    np.testing.assert_allclose(strongly_convex_regret_bound(3.0, 0.25, 3), [18.0, 30.47664925, 37.7750212], rtol=1e-9)
    # Hazan 2016, the ONS theorem: gamma = min(1 / (4 G D), alpha) / 2 and epsilon = 1 / (gamma D)^2,
    # with either side of the min: 1 / (4 * 2 * 3) = 1/24 against alpha = 1 and alpha = 0.01.
    assert ons_parameters(1.0, 2.0, 3.0) == pytest.approx((1 / 48, 256.0), rel=1e-12)
    assert ons_parameters(0.01, 2.0, 3.0) == pytest.approx((0.005, 1 / 0.015**2), rel=1e-12)
    # (d / (2 gamma)) ln(t G^2 / epsilon + 1) + gamma epsilon D^2 / 2 with d = 3: 72 ln(1 + t / 64) + 24,
    np.testing.assert_allclose(ons_regret_bound(1 / 48, 256.0, 2.0, 3.0, 3, 2), [25.11630143, 26.21555942], rtol=1e-9)
    # below the theorem's simplified 5 (1 / alpha + G D) d ln T (alpha = 1) at T = 1000: 226.4 <= 725.3.
    assert ons_regret_bound(1 / 48, 256.0, 2.0, 3.0, 3, 1000)[-1] <= 5 * (1 / 1.0 + 2.0 * 3.0) * 3 * np.log(1000)


def test_scaled_norm_is_the_norm_without_overflow():
    assert scaled_norm(np.array([3e200, 4e200])) == pytest.approx(5e200, rel=1e-15)  # (squares would overflow)
    assert scaled_norm(np.array([3e-200, 4e-200])) == pytest.approx(5e-200, rel=1e-15)  # (and underflow)
    assert scaled_norm(np.array([np.inf, 1.0])) == np.inf and scaled_norm(np.zeros(3)) == 0.0
    assert scaled_norm(np.array([])) == 0.0


def test_prefix_comparators_are_the_minima_of_each_prefix_over_the_last_axis():
    # Targets whose prefix means run above 1 and below -1: the clipped mean binds on both sides.
    y = np.array([3.0, 2.0, -9.0, 0.5, -0.25, 0.0])
    grid = np.linspace(-1.0, 1.0, 200_001)  # u in [-1, 1], steps of 1e-5
    brute = [np.min(0.5 * ((grid[:, None] - y[None, :t]) ** 2).sum(axis=1)) for t in range(1, 7)]
    np.testing.assert_allclose(prefix_best_squared(y, -1.0, 1.0), brute, rtol=1e-8, atol=1e-9)
    g = np.array([0.5, -2.0, 1.0, 3.0])  # min over |u| <= 2 of u * sum(g): -2 |sum|
    np.testing.assert_allclose(prefix_best_linear(g, 2.0), [-1.0, -3.0, -1.0, -5.0])
    # Stacked sequences, (2, 3, T): each is its own last axis.
    stacked = np.stack([np.stack([y, -y, y / 4]), np.stack([y[::-1], y * 0, -y / 4])])
    for index in np.ndindex(2, 3):
        np.testing.assert_array_equal(
            prefix_best_squared(stacked, -1.0, 1.0)[index], prefix_best_squared(stacked[index], -1.0, 1.0)
        )
        np.testing.assert_array_equal(prefix_best_linear(stacked, 2.0)[index], prefix_best_linear(stacked[index], 2.0))


def test_least_squares_matches_numpy():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 4)), rng.normal(size=50)
    np.testing.assert_allclose(least_squares(X, y), np.linalg.lstsq(X, y, rcond=None)[0], rtol=1e-12)


def test_ball_solution_against_brute_force_in_two_dimensions():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(40, 2)), rng.normal(size=40) + 3 * rng.normal(size=(40, 2)) @ [1.0, -2.0]
    radius = 0.7
    u = least_squares_in_ball(X, y, radius)
    assert np.linalg.norm(u) == pytest.approx(radius, rel=1e-12)
    # Every point of a fine polar grid of the disk is at least as bad. The objective at a point g
    # is g'(X'X)g - 2 g'X'y + y'y (exact algebra; a (800000, 40) product took 7 s of CPU).
    r, a = np.meshgrid(np.linspace(0, radius, 400), np.linspace(0, 2 * np.pi, 2000))
    grid = np.stack([(r * np.cos(a)).ravel(), (r * np.sin(a)).ravel()], axis=1)
    values = np.einsum("ni,ij,nj->n", grid, X.T @ X, grid) - 2 * grid @ (X.T @ y) + y @ y
    assert objective(X, y, u) <= values.min() + 1e-9
    assert objective(X, y, u) == pytest.approx(values.min(), rel=1e-4)


@given(
    data=st.integers(1, 6).flatmap(
        lambda d: st.tuples(
            hnp.arrays(np.float64, (30, d), elements=st.floats(-3, 3)),
            hnp.arrays(np.float64, 30, elements=st.floats(-3, 3)),
        )
    ),
    radius=st.floats(0.05, 5.0),
    seed=st.integers(0, 2**16),
)
def test_ball_solution_is_optimal_and_feasible(data, radius, seed):
    X, y = data
    u = least_squares_in_ball(X, y, radius)
    assert np.linalg.norm(u) <= radius * (1 + 1e-9)
    # KKT: grad = 2 X^T (X u - y) = -2 mu u with mu >= 0, mu = 0 unless on the sphere.
    grad = X.T @ (X @ u - y)
    if np.linalg.norm(u) < radius * (1 - 1e-9):
        assert np.linalg.norm(grad) <= 1e-7 * (1 + np.linalg.norm(X) ** 2 * (1 + np.linalg.norm(u)))
    # No random feasible point is better.
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(500, X.shape[1]))
    points *= radius * rng.uniform(0, 1, (500, 1)) ** (1 / X.shape[1]) / np.linalg.norm(points, axis=1, keepdims=True)
    best = np.min(np.sum((points @ X.T - y) ** 2, axis=1))
    assert objective(X, y, u) <= best + 1e-8 * (1 + best)


def test_ball_solution_of_tiny_rows_does_not_overflow():
    # Rows of 4e-159 make the least-squares solution 1e158, whose squares overflowed in ||u||
    # (a RuntimeWarning, an error in the suite); Hypothesis found such rows now and then.
    X, y = np.zeros((30, 2)), np.ones(30)
    X[0, 0], X[1, 1] = 4e-159, 1.2e-158
    u = least_squares_in_ball(X, y, 1.0)
    # On the sphere, along X^T y = (4e-159, 1.2e-158): the squares of X are negligible beside it.
    np.testing.assert_allclose(u, np.array([1.0, 3.0]) / np.sqrt(10.0), rtol=1e-12)


ROUNDS = 60  # the longest sequence drawn; every run is the first n of ROUNDS rounds


def sequences(max_d=3):
    return st.integers(1, max_d).flatmap(
        lambda d: st.integers(2, ROUNDS).flatmap(
            lambda n: st.tuples(
                hnp.arrays(np.float32, (n, d), elements=st.floats(-3, 3, width=32)),
                hnp.arrays(np.float32, n, elements=st.floats(-3, 3, width=32)),
            )
        )
    )


class Frozen(OGD):
    """Broken on purpose: never moves from w_1 = 0."""

    def update(self, state, example):
        return state._replace(t=state.t + 1)


class SignFlipped(OGD):
    """Broken on purpose: steps up the gradient, ``w + eta_t loss' x``."""

    def update(self, state, example):
        x, y = example
        step = self.schedule(state.t) * self.loss.derivative(dot(state.w, x), y)
        w, sqnorm = self.projection.update(state.w, step, x, dot(state.w, x), state.sqnorm, t=state.t)
        return OGDState(state.t + 1, w, sqnorm)


class RateIgnored(OGD):
    """Broken on purpose: steps with eta = 1, whatever the schedule says."""

    def update(self, state, example):
        return OGD(self.loss, Constant(1.0), self.projection).update(state, example)


BROKEN = [Frozen, SignFlipped, RateIgnored]


def ogd_regret_holds(learner, X, y, comparators, bound):
    """Zinkevich's (2003) guarantee for this run, as a check that a wrong learner fails:

    - the regret against each comparator u in F is below ``bound`` at every t, and
    - each round keeps the inequality the proof of Theorem 1 adds up, for each u::

          loss'_t . (w_t - u) <= (||w_t - u||^2 - ||w_{t+1} - u||^2) / (2 eta_t) + eta_t ||g_t||^2 / 2

      with ``g_t = loss'(w_t . x_t, y_t) x_t`` (convexity, then the step and the projection's
      non-expansiveness). The bound alone passes a learner that never moves (its regret is a
      fraction of the bound on short runs); this per-round inequality does not.

    Returns the list of what failed (empty: it holds).

    The n rows run as the first n rounds of ``ROUNDS``, zero rows after them, and every per-round
    quantity is taken over ``ROUNDS`` rounds and cut to the first n: a run is causal (round t sees
    rows 1..t only) and these quantities are per round, so the numbers checked are those of the n
    rows alone, and one compiled program per dimension serves every n Hypothesis draws (one per n
    made the file compile about 500 programs)."""
    n, d = X.shape
    X64, y64 = np.zeros((ROUNDS, d)), np.ones(ROUNDS)  # zero rows, labelled 1 (valid for every loss)
    X64[:n], y64[:n] = X, y
    result = run(learner, jnp.asarray(X64, jnp.float32), jnp.asarray(y64, jnp.float32), snapshot_every=1)
    W = np.concatenate([np.zeros((1, d)), np.asarray(result.trace.snapshots, np.float64)])
    eta = np.asarray(learner.schedule(jnp.arange(1, ROUNDS + 1)), np.float64)
    derivative = in_float64(learner.loss.derivative, np.sum(W[:-1] * X64, axis=1), y64)
    g = derivative[:, None] * X64
    failures = []
    for u in comparators:
        u = np.asarray(u, np.float64)
        regret = regret_curve(result.trace.loss, round_losses(learner.loss, u, X64, y64, result.trace.index))[:n]
        if np.any(regret > bound + 1e-4 * (1 + bound)):
            failures.append(f"regret above the bound against {u}")
        before, after = np.sum((W[:-1] - u) ** 2, axis=1), np.sum((W[1:] - u) ** 2, axis=1)
        lhs = np.sum(g * (W[:-1] - u), axis=1)
        rhs = (before - after) / (2 * eta) + eta * np.sum(g * g, axis=1) / 2
        slack = 1e-5 * (1 + np.abs(lhs) + (before + after) / eta)  # float32 iterates
        excess = (lhs - rhs - slack)[:n]
        if np.any(excess > 0):
            failures.append(f"round {int(np.argmax(excess)) + 1} breaks the one-step inequality for {u}")
    return failures


def ridge_case(X, y, eta, radius):
    learner = ridge(InvSqrt(eta), radius)
    u = least_squares_in_ball(X, y, radius)
    bound = ogd_regret_bound(learner.schedule, 2 * radius, gradient_bound(Squared(), L2Ball(radius), X, y), len(y))
    return learner, [u, np.zeros_like(u)], bound


@given(data=sequences(), eta=st.floats(0.01, 2.0), radius=st.floats(0.1, 3.0))
def test_ridge_regret_is_below_zinkevich_bound(data, eta, radius):
    X, y = data
    learner, comparators, bound = ridge_case(X, y, eta, radius)
    assert ogd_regret_holds(learner, X, y, comparators, bound) == []


LEARNERS = [
    OGD(Hinge(), InvSqrt(0.5), L2Ball(2.0)),
    OGD(Logistic(), Constant(0.1), L1Ball(1.0)),
    OGD(Absolute(), InvSqrt(1.0), Box(-0.5, 0.5)),
]


def feasible_case(learner, X, y, seed):
    if learner.loss.name != "absolute":
        y = np.where(y >= 0, 1.0, -1.0).astype(np.float32)
    d = X.shape[1]
    G = gradient_bound(learner.loss, learner.projection, X, y)
    bound = ogd_regret_bound(learner.schedule, learner.projection.diameter(d), G, len(y))
    rng = np.random.default_rng(seed)
    points = [learner.projection(jnp.asarray(p)) for p in rng.normal(0, 3, (5, d)).astype(np.float32)]
    return y, [np.zeros(d), *np.asarray(points)], bound


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda learner: f"{learner.loss.name}-{learner.projection.name}")
@given(data=sequences(), seed=st.integers(0, 2**16))
def test_regret_against_any_feasible_point_is_below_the_bound(learner, data, seed):
    # The bound holds for every fixed u in F, so it can be checked without a batch solver.
    X, y = data
    y, comparators, bound = feasible_case(learner, X, y, seed)
    assert ogd_regret_holds(learner, X, y, comparators, bound) == []


def fixed_sequences(count=10, n=40, d=3):
    rng = np.random.default_rng(0)
    for _ in range(count):
        X = rng.uniform(-3, 3, (n, d)).astype(np.float32)
        yield X, (X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)).astype(np.float32)


@pytest.mark.parametrize("broken", BROKEN, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("case", ["ridge", *range(len(LEARNERS))], ids=lambda c: str(c))
def test_each_broken_learner_fails_the_property(broken, case):
    # On every one of ten fixed sequences: a learner that is wrong is caught by the property,
    # and the same sequences pass with the right learner.
    for i, (X, y) in enumerate(fixed_sequences()):
        if case == "ridge":
            learner, comparators, bound = ridge_case(X, y, 0.5, 1.0)
        else:
            learner = LEARNERS[case]
            y, comparators, bound = feasible_case(learner, X, y, i)
        wrong = broken(learner.loss, learner.schedule, learner.projection)
        assert ogd_regret_holds(learner, X, y, comparators, bound) == []
        assert ogd_regret_holds(wrong, X, y, comparators, bound) != [], f"{broken.__name__} passes on sequence {i}"


def test_the_bound_alone_passes_a_learner_that_never_moves():
    # Why the property checks each round too: regret below the bound alone cannot tell.
    X, y = next(fixed_sequences())
    learner, (u, _), bound = ridge_case(X, y, 0.5, 1.0)
    frozen = run(Frozen(learner.loss, learner.schedule, learner.projection), X, y).trace
    assert np.all(regret_curve(frozen.loss, round_losses(Squared(), u, X, y, frozen.index)) <= bound)


def test_bound_closed_form():
    bound = ogd_regret_bound(InvSqrt(0.5), 2.0, 3.0, 4)
    t = np.arange(1, 5)
    np.testing.assert_allclose(bound, 4 * np.sqrt(t) / 1.0 + (np.sqrt(t) - 0.5) * 0.5 * 9)
    eta = 0.1
    np.testing.assert_allclose(
        ogd_regret_bound(Constant(eta), 2.0, 3.0, 4), 4 / (2 * eta) + 0.5 * 9 * eta * t, rtol=1e-6
    )
    assert ogd_regret_bound(InvSqrt(0.5), float("inf"), 3.0, 4) is None


def test_gradient_bound_dominates_every_gradient_in_the_ball():
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    G = gradient_bound(Squared(), L2Ball(1.5), X, y)
    w = rng.normal(size=(1000, 3))
    w *= 1.5 / np.linalg.norm(w, axis=1, keepdims=True)
    grads = (w @ X.T - y)[:, :, None] * X[None]
    assert np.linalg.norm(grads, axis=2).max() <= G
    assert np.linalg.norm(grads, axis=2).max() >= 0.9 * G  # and is not loose on the sphere


def test_ball_solution_with_tiny_numbers():
    # ||X^T y|| underflows if squared (found by hypothesis): the bracket must not collapse to 0.
    X = np.zeros((30, 1))
    X[0, 0] = 3.68321689e-106
    u = least_squares_in_ball(X, np.full(30, 3.68321689e-106), 0.5)
    np.testing.assert_allclose(u, [0.5], rtol=1e-12)
