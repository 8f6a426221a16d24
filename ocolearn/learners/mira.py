"""MIRA, the multiclass margin-infused relaxed algorithm (Crammer and Singer 2003)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import sqnorm, table_dot, table_rows
from ocolearn.learners.base import Learner, average_of_iterates
from ocolearn.learners.perceptron import PerceptronState, columns, step_with_average
from ocolearn.losses import MulticlassHinge
from ocolearn.parts import hyper


class MIRAState(NamedTuple):
    t: jax.Array
    table: jax.Array  # (d, 2K): per feature, its K weights and K sums u, side by side

    w = PerceptronState.w  # (K, d)
    u = PerceptronState.u  # (K, d): sum of s * (update of round s), for the averaged weights


class MIRA(Learner, name="mira", static=("classes",)):
    """Multiclass MIRA as in the Clojure MIRA write-up, labels 0..K-1, weights (K, d)::

        yhat = argmax_k w_k . x
        if yhat != y:
            alpha = (cost[y, yhat] - (w_y . x - w_yhat . x)) / (2 ||x||^2)
            w_y += alpha x;  w_yhat -= alpha x

    (Crammer and Singer 2003, with the single-constraint update of the write-up). ``cost`` is
    the label-loss matrix (K, K), by default 0/1 (``1 - I``); an all-zero example changes
    nothing. ``averaged(state)`` is the average of the weights after each round, kept with the
    same O(nnz) bookkeeping as the averaged Perceptron, in the same table (one read and one
    write of each feature's 2K numbers per step); ``normalized(w)`` scales each class's
    weights to unit L2 norm, as the write-up does with its final weights.
    """

    classes: int = hyper(2, ge=2, integer=True)
    cost: jax.Array | None = hyper(None, ge=0)

    @property
    def loss(self):
        return MulticlassHinge()

    def init(self, num_features):
        return MIRAState(jnp.ones((), jnp.int32), jnp.zeros((num_features, 2 * self.classes), jnp.float32))

    def predict(self, state, x):
        return table_dot(table_rows(state.table, x), x, columns(self.classes))

    def update(self, state, example):
        x, y = example
        scores = self.predict(state, x)
        guess = jnp.argmax(scores)
        cost = 1.0 - jnp.eye(self.classes) if self.cost is None else jnp.asarray(self.cost, jnp.float32)
        xx = sqnorm(x)
        alpha = (cost[y, guess] - (scores[y] - scores[guess])) / (2.0 * jnp.where(xx > 0, xx, 1.0))
        alpha = jnp.where((guess != y) & (xx > 0), alpha, 0.0)
        k = jnp.arange(self.classes)
        step = (alpha * ((k == y) * 1.0 - (k == guess))).astype(state.table.dtype)
        return MIRAState(state.t + 1, step_with_average(state, step, x))

    def averaged(self, state):
        """The average of the weights after each of the ``t - 1`` rounds so far."""
        return average_of_iterates(state)


def normalized(w):
    """Each class's weights scaled to unit L2 norm (rows of zeros stay zero)."""
    norms = jnp.sqrt(jnp.sum(w * w, axis=-1, keepdims=True))
    return w / jnp.where(norms > 0, norms, 1.0)
