"""Passive-Aggressive learners (Crammer, Dekel, Keshet, Shalev-Shwartz and Singer 2006)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import add_scaled, dot, sqnorm
from ocolearn.learners.base import Learner
from ocolearn.losses import Hinge, Loss


class PAState(NamedTuple):
    t: jax.Array
    w: jax.Array


class PassiveAggressive(Learner, name="passive_aggressive", static=("variant",)):
    """PA, PA-I and PA-II (Crammer et al. 2006, Figure 1) for classification with the hinge
    loss (labels in {-1, +1}) and for regression with the epsilon-insensitive loss::

        l_t = loss(w_t . x_t, y_t)
        tau_t = l_t / ||x_t||^2                  (variant 0, PA)
              = min(C, l_t / ||x_t||^2)          (variant 1, PA-I)
              = l_t / (||x_t||^2 + 1 / (2 C))    (variant 2, PA-II)
        w_{t+1} = w_t - tau_t * loss'(w_t . x_t, y_t) * x_t

    where ``-loss'`` is ``y_t`` for the hinge and ``sign(y_t - w_t . x_t)`` for the
    epsilon-insensitive loss when ``l_t > 0`` (Figure 1 and section 5). An all-zero example
    leaves ``w`` unchanged (tau is taken as 0 where ``||x||^2 = 0``). The same rules as
    scikit-learn's ``SGDClassifier``/``SGDRegressor`` with ``learning_rate="pa1"|"pa2"`` and
    ``eta0=C``.
    """

    C: float = 1.0
    variant: int = 1
    loss: Loss = Hinge()

    def init(self, num_features):
        return PAState(jnp.ones((), jnp.int32), jnp.zeros((num_features,), jnp.float32))

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        p = dot(state.w, x)
        if self.variant not in (0, 1, 2):
            raise ValueError(f"PassiveAggressive variant must be 0 (PA), 1 (PA-I) or 2 (PA-II), got {self.variant}")
        loss, xx = self.loss.value(p, y), sqnorm(x)
        safe = jnp.where(xx > 0, xx, 1.0)
        tau = {0: loss / safe, 1: jnp.minimum(self.C, loss / safe), 2: loss / (xx + 0.5 / self.C)}[self.variant]
        tau = jnp.where(xx > 0, tau, 0.0)
        return PAState(state.t + 1, add_scaled(state.w, -tau * self.loss.derivative(p, y), x))
