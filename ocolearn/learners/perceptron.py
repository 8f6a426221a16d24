"""The Perceptron (Rosenblatt 1958), binary and multiclass, with averaged weights."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot
from ocolearn.learners.base import Learner, average_of_iterates, step_with_average
from ocolearn.losses import MulticlassPerceptronLoss, PerceptronLoss
from ocolearn.parts import hyper


class PerceptronState(NamedTuple):
    t: jax.Array
    w: jax.Array  # the working weights
    u: jax.Array  # sum of s * (update of round s): the averaged weights follow from w and u


class Perceptron(Learner, name="perceptron", static=("classes",)):
    """The Perceptron. Binary (``classes = 0``, labels in {-1, +1})::

        if y_t (w_t . x_t) <= 0:  w_{t+1} = w_t + y_t x_t

    (Rosenblatt 1958; the mistake bound (R / gamma)^2 of Novikoff 1962). Multiclass
    (``classes = K``, labels 0..K-1, weights (K, d), prediction ``argmax_k w_k . x``): on a
    mistake, ``w_y += x`` and ``w_yhat -= x`` (Collins 2002; a tie counts as a mistake, as
    ``<= 0`` does for two classes). It also keeps the
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

    classes: int = hyper(0, ge=2, integer=True, also=(0,))

    @property
    def loss(self):
        return MulticlassPerceptronLoss() if self.classes else PerceptronLoss()

    def init(self, num_features):
        zeros = jnp.zeros((self.classes, num_features) if self.classes else (num_features,), jnp.float32)
        return PerceptronState(jnp.ones((), jnp.int32), zeros, zeros)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example, weight=None):
        x, y = example
        step = -self.loss.derivative(dot(state.w, x), y).astype(state.w.dtype)  # y, or e_y - e_yhat
        if weight is not None:
            step = step * weight
        return PerceptronState(state.t + 1, *step_with_average(state, step, x))

    def weighted_update(self, state, example, weight):
        """A mistake moves ``w`` by ``weight y x`` (multiclass: ``weight x`` to each of the two
        rows), and the average follows: scikit-learn's ``Perceptron`` with ``sample_weight``
        (its ``update *= sample_weight``)."""
        return self.update(state, example, weight)

    def averaged(self, state):
        """The average of the weights after each of the ``t - 1`` rounds so far."""
        return average_of_iterates(state)
