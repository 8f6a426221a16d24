"""The Perceptron (Rosenblatt 1958) with online-to-batch averaged weights."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import add_scaled, dot
from ocolearn.learners.base import Learner
from ocolearn.losses import Loss, PerceptronLoss


class PerceptronState(NamedTuple):
    t: jax.Array
    w: jax.Array  # the working weights
    u: jax.Array  # sum of s * (update of round s): the averaged weights follow from w and u


class Perceptron(Learner, name="perceptron"):
    """Binary Perceptron, labels in {-1, +1}::

        if y_t (w_t . x_t) <= 0:  w_{t+1} = w_t + y_t x_t

    (Rosenblatt 1958; the mistake bound (R / gamma)^2 of Novikoff 1962). It also keeps the
    average of its weights after each round, ``averaged(state)``, without touching them:
    ``u`` sums ``s y_s x_s`` over the updates, so after T rounds
    ``(1/T) sum_{t<=T} w_{t+1} = ((T + 1) w - u) / T`` costs O(nnz) per update (the
    "averaged perceptron" of Freund and Schapire 1999, with Daume's bookkeeping).

    >>> import jax.numpy as jnp
    >>> p = Perceptron()
    >>> s = p.update(p.init(2), (jnp.array([1.0, 0.0]), -1.0))   # a mistake (0 <= 0)
    >>> s.w.tolist(), p.averaged(s).tolist()
    ([-1.0, 0.0], [-1.0, 0.0])
    """

    loss: Loss = PerceptronLoss()

    def init(self, num_features):
        zeros = jnp.zeros((num_features,), jnp.float32)
        return PerceptronState(jnp.ones((), jnp.int32), zeros, zeros)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        step = jnp.where(y * dot(state.w, x) <= 0, y, 0.0).astype(state.w.dtype)
        return PerceptronState(
            state.t + 1,
            add_scaled(state.w, step, x),
            add_scaled(state.u, step * state.t.astype(state.w.dtype), x),
        )

    def averaged(self, state):
        """The average of the weights after each of the ``t - 1`` rounds so far."""
        rounds = jnp.maximum(state.t - 1, 1).astype(state.w.dtype)
        return ((rounds + 1) * state.w - state.u) / rounds
