"""The Perceptron (Rosenblatt 1958), binary and multiclass, with averaged weights."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import table_dot, table_rows, update_table
from ocolearn.learners.base import Learner, average_of_iterates
from ocolearn.losses import MulticlassPerceptronLoss, PerceptronLoss
from ocolearn.parts import hyper


class PerceptronState(NamedTuple):
    t: jax.Array
    table: jax.Array  # (d, 2) or (d, 2K): per feature, its weights and its sums u, side by side

    @property
    def w(self):
        """The working weights, ``(d,)`` or ``(K, d)``."""
        return interleaved(self.table, 0)

    @property
    def u(self):
        """The sum of ``s * (update of round s)``: the averaged weights follow from ``w`` and ``u``."""
        return interleaved(self.table, 1)


def interleaved(table, which):
    """Part ``which`` (0 or 1) of a table ``(d, 2)`` or ``(d, 2K)`` holding two (K, d) arrays
    side by side per feature: ``(d,)`` for one class, ``(K, d)`` for K."""
    width = table.shape[-1] // 2
    part = table[..., which * width : (which + 1) * width]
    return part[..., 0] if width == 1 else jnp.swapaxes(part, -1, -2)


def columns(classes):
    """The table's columns of the working weights: 0 for a binary learner, the first K else."""
    return slice(0, classes) if classes else 0


def step_with_average(state, step, x):
    """The table after the step ``w += step x`` (``step`` a scalar or (K,)), with ``u += t step x``
    in the same read and write of each feature's row (Daume's bookkeeping of the averaged
    perceptron: ``average_of_iterates`` follows in O(nnz) per step)."""
    t = state.t.astype(state.table.dtype)
    coefficients = jnp.concatenate([jnp.atleast_1d(step), jnp.atleast_1d(step * t)])
    return update_table(state.table, x, lambda row, v, c: row + c * v, coefficients)


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
    "averaged perceptron" of Freund and Schapire 1999, with Daume's bookkeeping). ``w`` and ``u``
    are kept side by side per feature in one table, so that a sparse step reads and writes each
    feature's numbers once (one gather and one write per non-zero, as a plain Perceptron's).

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
        table = jnp.zeros((num_features, 2 * max(self.classes, 1)), jnp.float32)
        return PerceptronState(jnp.ones((), jnp.int32), table)

    def predict(self, state, x):
        return table_dot(table_rows(state.table, x), x, columns(self.classes))

    def update(self, state, example, weight=None):
        x, y = example
        step = -self.loss.derivative(self.predict(state, x), y).astype(state.table.dtype)  # y, or e_y - e_yhat
        if weight is not None:
            step = step * weight
        return PerceptronState(state.t + 1, step_with_average(state, step, x))

    def weighted_update(self, state, example, weight):
        """A mistake moves ``w`` by ``weight y x`` (multiclass: ``weight x`` to each of the two
        rows), and the average follows: scikit-learn's ``Perceptron`` with ``sample_weight``
        (its ``update *= sample_weight``)."""
        return self.update(state, example, weight)

    def averaged(self, state):
        """The average of the weights after each of the ``t - 1`` rounds so far."""
        return average_of_iterates(state)
