"""Winnow and Balanced Winnow (Littlestone 1988): multiplicative updates for sparse targets."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot, multiply_scaled
from ocolearn.learners.base import Learner
from ocolearn.losses import PerceptronLoss
from ocolearn.parts import hyper


class WinnowState(NamedTuple):
    t: jax.Array
    w: jax.Array  # Winnow: the weights; Balanced Winnow: w+
    negative: jax.Array  # Balanced Winnow: w- (the weights are w+ - w-); Winnow: empty


class Winnow(Learner, name="winnow", static=("balanced",)):
    """Winnow2 (Littlestone 1988, section 5), labels in {-1, +1}, non-negative features::

        predict +1 iff w . x >= threshold                      (w_1 = 1)
        on a mistake:  w_i *= promotion^(y x_i)

    (promotion on a missed positive, demotion by the same factor on a false positive).
    ``threshold`` 0 means d / 2. Balanced Winnow (``balanced = true``) keeps w+ and w-
    (w+_1 = 2, w-_1 = 1) and predicts +1 iff ``(w+ - w-) . x >= threshold``; on a mistake
    ``w+_i *= promotion^(y x_i)`` and ``w-_i *= promotion^(-y x_i)``, so weights may be
    negative in effect. The score the runner records is ``w . x - threshold``.
    """

    promotion: float = hyper(2.0, gt=1)
    threshold: float = hyper(0.0, ge=0)
    balanced: bool = False

    @property
    def loss(self):
        return PerceptronLoss()

    def _threshold(self, d):
        return jnp.where(self.threshold > 0, self.threshold, d / 2.0)

    def init(self, num_features):
        ones = jnp.ones((num_features,), jnp.float32)
        if self.balanced:
            return WinnowState(jnp.ones((), jnp.int32), 2.0 * ones, ones)
        return WinnowState(jnp.ones((), jnp.int32), ones, jnp.zeros((0,), jnp.float32))

    def weights(self, state):
        return state.w - state.negative if self.balanced else state.w

    def predict(self, state, x):
        score = dot(state.w, x) - (dot(state.negative, x) if self.balanced else 0.0)
        return score - self._threshold(state.w.shape[-1])

    def update(self, state, example):
        x, y = example
        a = -self.loss.derivative(self.predict(state, x), y)  # y on a mistake (score * y <= 0), else 0
        w = multiply_scaled(state.w, self.promotion, a, x)
        negative = multiply_scaled(state.negative, self.promotion, -a, x) if self.balanced else state.negative
        return WinnowState(state.t + 1, w, negative)
