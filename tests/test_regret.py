import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ocolearn import OGD, Absolute, Box, Constant, Hinge, InvSqrt, L1Ball, L2Ball, Logistic, Squared, ridge, run
from ocolearn.regret import (
    gradient_bound,
    least_squares,
    least_squares_in_ball,
    ogd_regret_bound,
    regret_curve,
    round_losses,
)


def objective(X, y, u):
    return np.sum((X @ u - y) ** 2)


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
    # Every point of a fine polar grid of the disk is at least as bad.
    r, a = np.meshgrid(np.linspace(0, radius, 400), np.linspace(0, 2 * np.pi, 2000))
    grid = np.stack([(r * np.cos(a)).ravel(), (r * np.sin(a)).ravel()], axis=1)
    values = np.sum((grid @ X.T - y) ** 2, axis=1)
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


def sequences(max_d=3):
    return st.integers(1, max_d).flatmap(
        lambda d: st.integers(2, 60).flatmap(
            lambda n: st.tuples(
                hnp.arrays(np.float32, (n, d), elements=st.floats(-3, 3, width=32)),
                hnp.arrays(np.float32, n, elements=st.floats(-3, 3, width=32)),
            )
        )
    )


@given(data=sequences(), eta=st.floats(0.01, 2.0), radius=st.floats(0.1, 3.0))
def test_ridge_regret_is_below_zinkevich_bound(data, eta, radius):
    X, y = data
    learner = ridge(InvSqrt(eta), radius)
    trace = run(learner, jnp.asarray(X), jnp.asarray(y)).trace
    u = least_squares_in_ball(X, y, radius)
    regret = regret_curve(trace.loss, round_losses(Squared(), u, X, y, trace.index))
    bound = ogd_regret_bound(learner.schedule, 2 * radius, gradient_bound(Squared(), L2Ball(radius), X, y), len(y))
    assert np.all(regret <= bound + 1e-4 * (1 + bound))


@pytest.mark.parametrize(
    "learner",
    [
        OGD(Hinge(), InvSqrt(0.5), L2Ball(2.0)),
        OGD(Logistic(), Constant(0.1), L1Ball(1.0)),
        OGD(Absolute(), InvSqrt(1.0), Box(-0.5, 0.5)),
    ],
    ids=lambda learner: f"{learner.loss.name}-{learner.projection.name}",
)
@given(data=sequences(), seed=st.integers(0, 2**16))
def test_regret_against_any_feasible_point_is_below_the_bound(learner, data, seed):
    # The bound holds for every fixed u in F, so it can be checked without a batch solver.
    X, y = data
    if learner.loss.name != "absolute":
        y = np.where(y >= 0, 1.0, -1.0).astype(np.float32)
    trace = run(learner, jnp.asarray(X), jnp.asarray(y)).trace
    d = X.shape[1]
    G = gradient_bound(learner.loss, learner.projection, X, y)
    bound = ogd_regret_bound(learner.schedule, learner.projection.diameter(d), G, len(y))
    rng = np.random.default_rng(seed)
    for u in [
        np.zeros(d),
        *np.asarray([learner.projection(jnp.asarray(p)) for p in rng.normal(0, 3, (5, d)).astype(np.float32)]),
    ]:
        regret = regret_curve(trace.loss, round_losses(learner.loss, np.asarray(u, np.float64), X, y, trace.index))
        assert np.all(regret <= bound + 1e-4 * (1 + bound))


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
