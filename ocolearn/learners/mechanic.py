"""Mechanic, a learned scale around any base learner (Cutkosky, Defazio and Mehta 2023)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot, norm, values
from ocolearn.learners.base import Learner, ratio
from ocolearn.learners.ogd import OGD
from ocolearn.losses import Loss, Squared
from ocolearn.parts import ConfigError, fields_of, hyper
from ocolearn.schedules import InvSqrt


class _Slope(Loss):
    """``p * y``, derivative ``y``: fed the example ``(x_t, loss'_t)``, a base learner takes the
    step of the gradient ``loss'_t x_t`` at Mechanic's weights instead of at its own."""

    def value(self, p, y):
        return p * y

    def derivative(self, p, y):
        return y + 0.0 * p


class MechanicState(NamedTuple):
    t: jax.Array
    w: jax.Array  # w_t = w_ref + (sum_j s_{t,j}) Delta_t, w_ref = 0
    base: Any  # the base learner's state; its weights are Delta_t
    s: jax.Array  # (n,): one scale per beta
    v: jax.Array  # (n,): beta^2-discounted sum of h^2
    r: jax.Array  # (n,): beta-discounted reward, clipped at 0
    m: jax.Array  # (n,): max(beta m, |h|), a beta-discounted largest |h|


class Mechanic(Learner, name="mechanic", static=("betas",)):
    """Mechanic (Cutkosky, Defazio and Mehta 2023, Algorithm 1): the base learner's weights are
    taken as a direction ``Delta_t`` and a scale ``s`` is learned for it by n parameter-free
    scalar bettors, one per discount ``beta_j = 1 - 10^-j``, j = 1..n (each line below is
    per beta, as vectors over j)::

        g_t = loss'(w_t . x_t, y_t) x_t                              (at the weights played)
        Delta_{t+1} = Delta_t + BASE(g_t)                              (the base's own step)
        h_t = <Delta_t, g_t + lambda ||g_t|| (sum_j s_{t,j}) w_t / ||w_t||>
        m_t = max(beta m_{t-1}, |h_t|),   v_t = beta^2 v_{t-1} + h_t^2
        r_t = max(0, beta r_{t-1} - s_t h_t),   W_t = (s_init / n) m_t + r_t
        s_{t+1} = W_t / (sqrt(v_t) + epsilon)
        w_{t+1} = w_ref + (sum_j s_{t+1,j}) Delta_{t+1},   w_ref = w_1 = 0,   s_1 = m_0 = v_0 = r_0 = 0

    ``m`` is each bettor's discounted largest ``|h|``, so its share of the initial wealth
    ``(s_init / n) m_t`` forgets old large ``|h|`` at its own rate beta, as in the authors'
    implementation (optax's ``contrib.mechanize``, which adds eps to ``|h|``; not here: while
    every h has been 0, m = r = 0 and the scale is 0 either way).

    The paper's defaults: n = 6 (``betas``), ``lam`` (lambda) = 0.01, ``s_init`` = 1e-8,
    ``epsilon`` = 1e-8, and a base whose own rate is of order 1 (here OGD with 1/sqrt(t)). The
    base sees the gradients at Mechanic's weights through a linearized loss, so any learner
    with a ``loss`` field is a base (a projection of the base acts on its own Delta, not on w).
    A round with g_t = 0 carries no information and leaves the
    state as it is (the discounts would otherwise move s). The scale starts at s_init and grows
    at best geometrically, so on short streams it arrives late.

    Behind an ``Intercept`` step the base leaves the intercept out of its own projection or
    regularizer (its ``intercept`` field, where it has one); the decay ``lambda ... w / ||w||``
    and the scale include the intercept's weight, with every other coordinate of w.

    **Its defaults need tuning for regression.** It scales its base's steps from ``s_init`` = 1e-8
    up, slowly, so the intercept does not reach targets on a raw scale within a pass: with the
    defaults and the default pipeline it loses to the mean on diabetes (held-out MSE 5,328 against
    the mean's 4,965) and TrumpApproval (3.89 against 2.82) (``benchmarks/default_learner.py
    --registry``; docs/choosing-a-learner.md). Set ``s_init`` near the weights' expected size, or
    use ``ogd`` at a constant rate (``train``'s default for regression); as a classifier its
    defaults beat the majority class on the four classification sets.
    """

    base: Learner = OGD(Squared(), InvSqrt(1.0))
    lam: float = hyper(0.01, ge=0)
    s_init: float = hyper(1e-8, ge=0)
    epsilon: float = hyper(1e-8, gt=0)
    betas: int = hyper(6, ge=1, le=7, integer=True)  # beta = 1 - 10^-j stays below 1 in float32
    loss: Loss = Squared()

    def check(self, where=""):
        super().check(where)
        if "loss" not in fields_of(type(self.base)):
            key = f"{where}.base" if where else "base"
            raise ConfigError(
                f"{key} must have a 'loss' field to linearize, got {self.base.name}; "
                "use one that has (ogd, adagrad, nag, ons, cocob, dog, coin_betting, ...)",
                key,
            )

    def _beta(self):
        return 1.0 - 10.0 ** -jnp.arange(1, self.betas + 1, dtype=jnp.float32)

    def init(self, num_features):
        zeros = jnp.zeros((self.betas,), jnp.float32)
        w = jnp.zeros((num_features,), jnp.float32)
        base = self.base.replace(loss=_Slope()).init(num_features)
        return MechanicState(jnp.ones((), jnp.int32), w, base, zeros, zeros, zeros, zeros)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        slope = self.loss.derivative(dot(state.w, x), y)
        delta = self.base.weights(state.base)
        total = jnp.sum(state.s)
        g_norm = jnp.abs(slope) * norm(values(x))
        decay = self.lam * g_norm * total * ratio(jnp.sum(delta * state.w), norm(state.w))
        h = slope * dot(delta, x) + decay
        base = self.base.replace(loss=_Slope()).update(state.base, (x, slope))
        beta = self._beta()
        m = jnp.maximum(beta * state.m, jnp.abs(h))
        v = beta * beta * state.v + h * h
        r = jnp.maximum(0.0, beta * state.r - state.s * h)
        s = ((self.s_init / self.betas) * m + r) / (jnp.sqrt(v) + self.epsilon)
        w = jnp.sum(s) * self.base.weights(base)
        new = MechanicState(state.t + 1, w.astype(state.w.dtype), base, s, v, r, m)
        moved = g_norm > 0
        return jax.tree.map(lambda a, b: jnp.where(moved, a, b), new, state._replace(t=state.t + 1))
