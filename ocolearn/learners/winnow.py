"""Winnow and Balanced Winnow (Littlestone 1988): multiplicative updates for sparse targets."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot, multiply_scaled
from ocolearn.learners.base import Learner, positive
from ocolearn.losses import PerceptronLoss
from ocolearn.parts import hyper


class WinnowState(NamedTuple):
    t: jax.Array
    w: jax.Array  # Winnow: the weights; Balanced Winnow: w+
    negative: jax.Array  # Balanced Winnow: w- (the weights are w+ - w-); Winnow: empty


class Winnow(Learner, name="winnow", static=("balanced",)):
    """Winnow2 (Littlestone 1988, section 5), labels in {-1, +1}, non-negative features::

        predict +1 iff w . x > threshold                       (w_1 = 1)
        on a mistake, and only then:  w_i *= promotion^(y x_i)

    (promotion on a missed positive, demotion by the same factor on a false positive; a tie
    ``w . x = threshold`` is a -1, as in the paper and in the model file: ``positive``).
    ``threshold`` 0 means d / 2. Balanced Winnow (``balanced = true``) keeps w+ and w-
    (w+_1 = 2, w-_1 = 1) and predicts +1 iff ``(w+ - w-) . x > threshold``; on a mistake
    ``w+_i *= promotion^(y x_i)`` and ``w-_i *= promotion^(-y x_i)``, so weights may be
    negative in effect. The score the runner records is ``w . x - threshold``, a tie recorded as
    ``-tiny`` so that its sign is the prediction (the runner counts a score of 0 as a mistake
    for either label, the Perceptron's convention).

    **Its defaults need tuning.** Its multiplicative updates are for non-negative features;
    standardized rows are signed, and it does no better than the majority class on breast_cancer
    (held-out accuracy 0.629, the majority's) and river's Phishing (0.543, the majority's)
    (``benchmarks/default_learner.py --registry``; docs/choosing-a-learner.md). Use ``balanced =
    true`` and non-negative features (``--scale normalize`` of counts or indicators).
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

    def _score(self, state, x):
        score = dot(state.w, x) - (dot(state.negative, x) if self.balanced else 0.0)
        return score - self._threshold(state.w.shape[-1])

    def predict(self, state, x):
        score = self._score(state, x)
        return jnp.where(score == 0, -jnp.finfo(score.dtype).tiny, score)

    def update(self, state, example):
        x, y = example
        a = jnp.where(jnp.where(positive(self._score(state, x)), 1.0, -1.0) != y, y, 0.0)  # y on a mistake, else 0
        w = multiply_scaled(state.w, self.promotion, a, x)
        negative = multiply_scaled(state.negative, self.promotion, -a, x) if self.balanced else state.negative
        return WinnowState(state.t + 1, w, negative)
