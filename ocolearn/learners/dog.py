"""DoG, distance over gradients (Ivgi, Hinder and Carmon 2023)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import add_scaled, dot, sqnorm
from ocolearn.learners.base import Learner, ratio
from ocolearn.losses import Loss, Squared
from ocolearn.parts import hyper
from ocolearn.projections import Identity, Projection, keep_last


class DoGState(NamedTuple):
    t: jax.Array
    w: jax.Array
    rbar: jax.Array  # max(r_epsilon, max_{s <= t} ||w_s - w_1||)
    G: jax.Array  # sum of ||g_s||^2


class DoG(Learner, name="dog", static=("intercept",)):
    """Distance over Gradients (Ivgi, Hinder and Carmon 2023, Algorithm 1), a step size from
    the distance travelled, with ``w_1 = 0``::

        rbar_t = max(r_epsilon, max_{s <= t} ||w_s - w_1||),   G_t = sum_{s <= t} ||g_s||^2
        w_{t+1} = P(w_t - (rbar_t / sqrt(G_t)) g_t)

    ``r_epsilon = alpha (1 + ||w_1||)`` with the authors' suggested ``alpha = 1e-6`` (1e-4 for
    models with batch normalization); as ``w_1 = 0`` it is the length of the first step.
    The step grows with the distance travelled, roughly geometrically at first, so DoG
    needs on the order of log(1 / r_epsilon)^2 rounds to reach the scale of the solution.
    Until a gradient is non-zero nothing moves. O(d) a round (the distance).

    ``intercept=True``: the last coordinate of w is an intercept's weight, stepped but left out
    of P (``keep_last``), as OGD leaves it; the distance ``rbar`` counts every coordinate.

    **Its defaults need tuning for regression.** Its first step is ``r_epsilon`` = 1e-6 times the
    gradient's size, and its steps grow with the distance travelled, so the intercept does not reach
    targets on a raw scale within a pass: with the defaults and the default pipeline it loses to the
    mean on diabetes (held-out MSE 28,280 against the mean's 4,965) (``benchmarks/default_learner.py
    --registry``; docs/choosing-a-learner.md). Set ``r_epsilon`` near the weights' expected size, or
    use ``ogd`` at a constant rate (``train``'s default for regression); as a classifier its
    defaults beat the majority class on the four classification sets.
    """

    r_epsilon: float = hyper(1e-6, gt=0)
    loss: Loss = Squared()
    projection: Projection = Identity()
    intercept: bool = False

    def init(self, num_features):
        zero = jnp.zeros((), jnp.float32)
        return DoGState(jnp.ones((), jnp.int32), jnp.zeros((num_features,), jnp.float32), zero + self.r_epsilon, zero)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        slope = self.loss.derivative(dot(state.w, x), y)
        rbar = jnp.maximum(state.rbar, jnp.sqrt(jnp.sum(state.w * state.w)))
        G = state.G + slope * slope * sqnorm(x)
        eta = ratio(rbar, jnp.sqrt(G))
        w = keep_last(self.projection, add_scaled(state.w, -eta * slope, x), self.intercept)
        return DoGState(state.t + 1, w.astype(state.w.dtype), rbar, G)
