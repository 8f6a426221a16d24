"""Regret against the best fixed weights in hindsight, and the OGD regret bound.

``R_t = sum_{s<=t} loss_s(w_s) - sum_{s<=t} loss_s(u*)``, with ``w_s`` the weights played in
round s (``Trace.loss``) and ``u*`` the best fixed weights over all T rounds in the feasible set.
Comparators are solved in float64, exactly where a closed form exists.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import numpy as np

from ocolearn.projections import Identity, L2Ball, Projection
from ocolearn.schedules import InvSqrt, Schedule


def least_squares(X, y):
    """The minimum-norm ``argmin_u ||X u - y||^2`` (R's ``lm(y ~ X - 1)``), by ``lstsq``."""
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    return np.linalg.lstsq(X, y, rcond=None)[0]


def least_squares_in_ball(X, y, radius):
    """``argmin_{||u|| <= radius} ||X u - y||^2``, exactly.

    With ``X^T X = V diag(s) V^T`` and ``c = V^T X^T y``: if the minimum-norm least-squares
    solution lies in the ball it is the answer; otherwise the solution is on the sphere,
    ``u(mu) = V diag(1 / (s + mu)) c`` with the unique ``mu > 0`` where ``||u(mu)|| = radius``
    (the KKT conditions of the trust-region problem; ``||u(mu)||`` decreases in mu). That 1-D
    root is found by bisection to the last bit of float64. As ``c`` lies in the range of
    ``X^T X``, the "hard case" of trust-region problems cannot occur.
    """
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    return least_squares_in_ball_gram(X.T @ X, X.T @ y, radius)


def scaled_norm(v):
    """``||v||`` computed as ``m ||v / m||`` with ``m = max |v_i|``: no overflow of the squares for
    entries beyond 1e154 (tiny rows make the least-squares solution that large)."""
    m = np.abs(v).max(initial=0.0)
    return m * np.linalg.norm(v / m) if 0 < m < np.inf else m


def least_squares_in_ball_gram(A, b, radius=np.inf):
    """``least_squares_in_ball`` from the Gram matrix ``A = X^T X`` and ``b = X^T y`` alone (an
    infinite radius: the minimum-norm least-squares solution), so that the comparators of many
    segments follow from prefix sums of ``x_t x_t^T`` and ``y_t x_t`` (``ocolearn.changing``)."""
    s, V = np.linalg.eigh(np.asarray(A, np.float64))
    c = V.T @ np.asarray(b, np.float64)
    keep = s > s.max(initial=0.0) * len(s) * np.finfo(np.float64).eps
    u0 = V[:, keep] @ (c[keep] / s[keep])
    if scaled_norm(u0) <= radius:
        return u0

    def norm(mu):
        with np.errstate(over="ignore"):  # an infinite ||u(mu)|| says as well that mu is too small
            return scaled_norm(c / (s + mu))

    m = np.abs(c).max()
    lo, hi = 0.0, m * np.linalg.norm(c / m) / radius  # ||u(hi)|| <= ||c|| / hi = radius (||c|| kept from underflow)
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if norm(mid) > radius else (lo, mid)
    return V @ (c / (s + hi))


def best_fixed_weights(loss, projection: Projection, X, y):
    """The best fixed weights in hindsight over the projection's set, where an exact solver
    exists (squared loss, unconstrained or in an L2 ball); None otherwise."""
    if loss.name != "squared":
        return None
    if isinstance(projection, Identity):
        return least_squares(X, y)
    if isinstance(projection, L2Ball):
        return least_squares_in_ball(X, y, float(projection.radius))
    return None


def in_float64(fn, *args):
    """``fn(*args)`` evaluated by JAX in float64 on the host (for comparators and bounds)."""
    with jax.enable_x64(True):
        return np.asarray(fn(*[np.asarray(a, np.float64) for a in args]), np.float64)


def loss_values(loss, p, y):
    """``loss(p_t, y_t)`` of predictions ``p`` (``(..., )`` scores or ``(..., K)``) in float64;
    class indices ``y`` stay integers."""
    p, y = np.asarray(p, np.float64), np.asarray(y)
    y = y if y.dtype.kind in "iu" else y.astype(np.float64)
    flat = jax.vmap(loss.value)
    with jax.enable_x64(True):
        out = flat(p.reshape(-1, *p.shape[y.ndim :]), y.reshape(-1))
    return np.asarray(out, np.float64).reshape(y.shape)


def round_losses(loss, u, X, y, index):
    """``loss(u . x_t, y_t)`` for the rows seen in each round, in float64."""
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    index = np.asarray(index)
    return in_float64(loss.value, X[index] @ np.asarray(u, np.float64), y[index])


def regret_curve(learner_losses, comparator_losses):
    """``R_t`` for t = 1..T, in float64."""
    return np.cumsum(np.asarray(learner_losses, np.float64)) - np.cumsum(comparator_losses)


def gradient_bound(loss, projection: Projection, X, y) -> float:
    """G = max_t sup_{w in F} ||grad loss_t(w)|| on the data: ``|loss'| ||x_t||`` with
    ``|w . x_t| <= max_{w in F} ||w|| * ||x_t||``."""
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    norms = np.linalg.norm(X, axis=1)
    p_max = projection.max_norm(X.shape[1]) * norms
    return float(np.max(norms * in_float64(loss.derivative_bound, p_max, y)))


def ogd_regret_bound(schedule: Schedule, diameter: float, G: float, T: int):
    """The bound on ``R_t`` of OGD for t = 1..T (Zinkevich 2003), or None if none applies.

    For ``eta_t = eta / sqrt(t)``, Theorem 1 (scaled by eta):
    ``R_t <= D^2 sqrt(t) / (2 eta) + (sqrt(t) - 1/2) eta G^2``. For any other non-increasing
    schedule, the inequality the theorem's proof rests on:
    ``R_t <= D^2 / (2 eta_t) + (G^2 / 2) sum_{s<=t} eta_s``.
    D is the diameter of the feasible set, G the gradient bound; an unbounded set has none.
    """
    if not math.isfinite(diameter) or not math.isfinite(G):
        return None
    t = np.arange(1, T + 1, dtype=np.float64)
    if isinstance(schedule, InvSqrt):
        eta = float(schedule.eta)
        return diameter**2 * np.sqrt(t) / (2 * eta) + (np.sqrt(t) - 0.5) * eta * G**2
    eta = np.asarray(schedule(np.arange(1, T + 1, dtype=np.int32)), np.float64)
    if np.any(np.diff(eta) > 0) or np.any(eta <= 0):
        return None
    return diameter**2 / (2 * eta) + 0.5 * G**2 * np.cumsum(eta)


def best_expert(losses):
    """The best expert in hindsight of a ``(T, N)`` sequence of the experts' losses:
    ``(i*, L*)`` with ``L* = min_i sum_t l_{t,i}``, in float64."""
    totals = np.sum(np.asarray(losses, np.float64), axis=0)
    return int(np.argmin(totals)), float(totals.min())


def experts_regret(learner_losses, losses):
    """``R_t = sum_{s<=t} w_s . l_s - min_i sum_{s<=t} l_{s,i}`` for t = 1..T: the regret against
    the best expert of each prefix (at t = T, the best expert in hindsight), in float64."""
    prefix = np.cumsum(np.asarray(losses, np.float64), axis=0)
    return np.cumsum(np.asarray(learner_losses, np.float64)) - prefix.min(axis=1)


def hedge_regret_bound(eta: float, N: int, T: int):
    """``R_t <= ln N / eta + eta t / 8`` for t = 1..T: Hedge's bound against every expert for
    losses in [0, 1] (Cesa-Bianchi and Lugosi 2006, Theorem 2.2). At the tuned
    ``eta = sqrt(8 ln N / T)`` it is ``sqrt(T ln N / 2)`` at T."""
    t = np.arange(1, T + 1, dtype=np.float64)
    return math.log(N) / eta + eta * t / 8.0


def strongly_convex_regret_bound(G: float, lam: float, T: int):
    """``R_t <= (G^2 / (2 lam)) (1 + ln t)`` for t = 1..T: OGD with ``eta_t = 1 / (lam t)`` on
    lam-strongly convex losses with gradients bounded by G (Hazan, Agarwal and Kale 2007,
    Theorem 1)."""
    t = np.arange(1, T + 1, dtype=np.float64)
    return G**2 / (2.0 * lam) * (1.0 + np.log(t))


def ons_parameters(alpha: float, G: float, D: float) -> tuple[float, float]:
    """``(gamma, epsilon)`` of ONS for alpha-exp-concave losses, gradients bounded by G and a set
    of diameter D: ``gamma = min(1 / (4 G D), alpha) / 2``, ``epsilon = 1 / (gamma^2 D^2)``
    (Hazan 2016, chapter 4, the ONS theorem)."""
    gamma = 0.5 * min(1.0 / (4.0 * G * D), alpha)
    return gamma, 1.0 / (gamma * D) ** 2


def ons_regret_bound(gamma: float, epsilon: float, G: float, D: float, d: int, T: int):
    """``R_t <= (d / (2 gamma)) ln(t G^2 / epsilon + 1) + gamma epsilon D^2 / 2`` for t = 1..T:
    ONS on alpha-exp-concave losses in d dimensions with ``gamma <= min(1 / (4 G D), alpha) / 2``
    and any ``epsilon > 0`` (the proof of Hazan 2016's ONS theorem, chapter 4, before it sets
    ``epsilon = 1 / (gamma D)^2`` and simplifies to ``5 (1/alpha + G D) d ln T``)."""
    t = np.arange(1, T + 1, dtype=np.float64)
    return d / (2.0 * gamma) * np.log(t * G**2 / epsilon + 1.0) + gamma * epsilon * D**2 / 2.0


def prefix_best_linear(g, radius: float = 1.0):
    """``min_{|u| <= radius} sum_{s<=t} g_s u = -radius |sum_{s<=t} g_s|`` for t = 1..T, over the
    last axis of one-dimensional gradients ``g`` (the comparator of each horizon t), in float64."""
    return -radius * np.abs(np.cumsum(np.asarray(g, np.float64), axis=-1))


def prefix_best_squared(y, lower: float, upper: float):
    """``min_{lower <= u <= upper} sum_{s<=t} (u - y_s)^2 / 2`` for t = 1..T over the last axis:
    at ``u = clip(mean(y_1..y_t))``, in float64 (squared loss with the feature x = 1)."""
    y = np.asarray(y, np.float64)
    t = np.arange(1, y.shape[-1] + 1)
    s, q = np.cumsum(y, axis=-1), np.cumsum(y * y, axis=-1)
    u = np.clip(s / t, lower, upper)
    return 0.5 * (t * u * u - 2 * u * s + q)


class Solved(NamedTuple):
    """An offline solve of ``min_u sum_t loss(u . x_t, y_t)``."""

    u: np.ndarray  # (d,) or (K, d): the weights found
    total: float  # sum_t loss(u . x_t, y_t) at u, in the loss itself (not smoothed): >= the minimum
    gradient_norm: float  # the norm of the (smoothed) objective's gradient where the solver stopped
    smoothing_gap: float  # T mu log K: the minimum is >= the smoothed minimum minus this


def _smoothed_total(loss_name: str, X, y, classes: int):
    """``u, mu -> sum_t loss_mu(u . x_t, y_t)``: the loss, or for the hinges their log-sum-exp
    smoothing ``mu log sum_r exp(a_r / mu)`` of ``max_r a_r`` (the binary hinge is
    ``max(0, 1 - y p)``, the multiclass one ``max_r (1[r != y] + s_r) - s_y``), which lies
    between the hinge and the hinge plus ``mu log K`` (K = 2 for the binary hinge)."""
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    def total(u, mu):
        if classes:
            scores = X @ u.T
            margins = scores + (jnp.arange(classes)[None, :] != y[:, None])
            own = jnp.take_along_axis(scores, y[:, None].astype(jnp.int32), axis=1)[:, 0]
            if loss_name == "multiclass_hinge":
                return jnp.sum(mu * logsumexp(margins / mu, axis=1) - own)
            raise ValueError(f"no offline solver for the multiclass loss {loss_name!r}")
        p = X @ u
        if loss_name == "hinge":
            return jnp.sum(mu * jnp.logaddexp(0.0, (1.0 - y * p) / mu))
        if loss_name == "logistic":
            return jnp.sum(jax.nn.softplus(-y * p))
        raise ValueError(f"no offline solver for the loss {loss_name!r}")

    return total


def best_fixed_convex(loss, X, y, classes: int = 0, tol: float = 1e-6, max_iter: int = 2000) -> Solved:
    """The best fixed weights in hindsight for a convex loss without a closed form (``hinge``,
    ``logistic``, ``multiclass_hinge`` with ``classes`` > 0 and class indices ``y``),
    ``argmin_u sum_t loss(u . x_t, y_t)`` over all of R^d (or R^{K x d}), by L-BFGS (optax) in
    float64, stopped when the gradient norm is at most ``tol`` or after ``max_iter`` steps.

    The hinges are not differentiable: they are replaced by their log-sum-exp smoothing with
    ``mu = 1, 0.1, ..., 1e-4`` in turn, each solve starting where the last stopped. As
    ``hinge <= smoothed <= hinge + mu log K``, the minimum of the hinge's total lies in
    ``[smoothed minimum - T mu log K, total at u]``; ``total`` is the exact loss at ``u``, the
    upper end, so a regret against it is never above the exact one. Only the smoothing part of
    the gap is bounded (``smoothing_gap``); the last solve's own gap (smoothed total at u less
    the smoothed minimum) is not: its gradient norm is recorded, but bounds the gap only
    where the distance to the minimizer is bounded, which separable data does not give: on data
    a linear rule separates, the minimum is approached only as ``||u||`` grows, and the solver
    stops at the tolerance.
    """
    import jax.numpy as jnp

    smooth = loss.name != "logistic"
    mus = (1.0, 0.1, 0.01, 1e-3, 1e-4) if smooth else (0.0,)
    with jax.enable_x64(True):
        X64 = jnp.asarray(X, jnp.float64)
        y64 = jnp.asarray(y, jnp.int32 if classes else jnp.float64)
        u = jnp.zeros((classes, X64.shape[1]) if classes else (X64.shape[1],), jnp.float64)
        options = dict(loss_name=loss.name, classes=classes, tol=tol, max_iter=max_iter)
        for mu in mus:
            u, norm = _solve(X64, y64, u, jnp.float64(mu), **options)
        u = np.asarray(u)
    p = np.asarray(X, np.float64) @ (u.T if classes else u)
    exact = float(loss_values(loss, p, y).sum())
    gap = len(y) * mus[-1] * math.log(classes or 2)
    return Solved(u, exact, float(norm), gap)


@partial(jax.jit, static_argnames=("loss_name", "classes", "tol", "max_iter"))
def _solve(X, y, u, mu, *, loss_name, classes, tol, max_iter):
    """One L-BFGS solve of the (smoothed) total loss; compiled once per shape and loss."""
    return _lbfgs(_smoothed_total(loss_name, X, y, classes), u, mu, tol=tol, max_iter=max_iter)


def _lbfgs(total, u, mu, *, tol, max_iter):
    """Minimize ``total(., mu)`` from ``u`` by optax's L-BFGS (its zoom line search) until the
    gradient norm is at most ``tol`` or ``max_iter`` steps; returns (u, gradient norm)."""
    import jax.numpy as jnp
    import optax

    def f(v):
        return total(v, mu)

    solver = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(f)

    def step(carry):
        v, state, _, k = carry
        value, grad = value_and_grad(v, state=state)
        updates, state = solver.update(grad, state, v, value=value, grad=grad, value_fn=f)
        return optax.apply_updates(v, updates), state, jnp.linalg.norm(grad), k + 1

    def going(carry):
        return (carry[2] > tol) & (carry[3] < max_iter)

    carry = (u, solver.init(u), jnp.asarray(jnp.inf, u.dtype), 0)
    v, state, _, _ = jax.lax.while_loop(going, step, carry)
    return v, jnp.linalg.norm(jax.grad(f)(v))
