"""Projected Online Gradient Descent (Zinkevich 2003) and online ridge regression."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot
from ocolearn.learners.base import Learner
from ocolearn.losses import Loss, Squared
from ocolearn.projections import Identity, L2Ball, Projection
from ocolearn.schedules import InvSqrt, Schedule, as_schedule


class OGDState(NamedTuple):
    t: jax.Array
    w: jax.Array
    sqnorm: jax.Array  # ||w||^2 where the projection keeps it (the L2 ball), else 0


class OGD(Learner, name="ogd"):
    """Greedy projection (Zinkevich 2003, Algorithm 1), for any loss, schedule and set::

        w_{t+1} = P(w_t - eta_t * loss'(w_t . x_t, y_t) * x_t),   w_1 = 0,

    the Haskell ``ogd rate projection (Ogdstate t w) dc`` of the OGD post. With
    ``eta_t = eta / sqrt(t)`` its regret against any fixed u in F is at most
    ``D^2 sqrt(T) / (2 eta) + (sqrt(T) - 1/2) eta G^2`` (Theorem 1, D the diameter of F, G a
    bound on the gradient norms; see ``ocolearn.regret``).

    >>> import jax.numpy as jnp
    >>> learner = OGD(Squared(), InvSqrt(1.0), L2Ball(0.5))
    >>> state = learner.update(learner.init(2), (jnp.array([1.0, 0.0]), 2.0))
    >>> state.w.tolist(), int(state.t)
    ([0.5, 0.0], 2)
    """

    loss: Loss = Squared()
    schedule: Schedule = InvSqrt()
    projection: Projection = Identity()

    def init(self, num_features):
        return OGDState(jnp.ones((), jnp.int32), jnp.zeros((num_features,), jnp.float32), jnp.zeros((), jnp.float32))

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        wx = dot(state.w, x)
        step = -self.schedule(state.t) * self.loss.derivative(wx, y)
        w, sqnorm = self.projection.update(state.w, step, x, wx, state.sqnorm)
        return OGDState(state.t + 1, w.astype(state.w.dtype), sqnorm.astype(state.sqnorm.dtype))

    def mix(self, state):
        return state._replace(sqnorm=jnp.where(state.sqnorm > 0, jnp.sum(state.w * state.w), 0.0))


def ridge(rate, radius) -> OGD:
    """Online ridge regression: OGD on the squared loss inside the L2 ball of ``radius``.

    The post's ``fitRidge rate lambda = fitOGDReg rate (l2Projection lambda) mseDiff``;
    ``rate`` is a schedule (a number means a constant rate)::

        w_{t+1} = P(w_t - eta_t (w_t . x_t - y_t) x_t),   P(w) = w min(1, radius / ||w||).
    """
    return OGD(Squared(), as_schedule(rate), L2Ball(radius))
