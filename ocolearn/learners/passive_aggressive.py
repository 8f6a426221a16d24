"""Passive-Aggressive learners (Crammer, Dekel, Keshet, Shalev-Shwartz and Singer 2006)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import add_scaled, dot, sqnorm
from ocolearn.learners.base import Learner
from ocolearn.losses import Hinge, Loss, MulticlassHinge
from ocolearn.parts import hyper


class PAState(NamedTuple):
    t: jax.Array
    w: jax.Array


class PassiveAggressive(Learner, name="passive_aggressive", static=("variant", "classes")):
    """PA, PA-I and PA-II (Crammer et al. 2006, Figure 1) for classification with the hinge
    loss (labels in {-1, +1}), for regression with the epsilon-insensitive loss, and for K
    classes (``classes = K``, labels 0..K-1, weights (K, d), the multiclass hinge)::

        l_t = loss(w_t . x_t, y_t),   g_t = loss'(w_t . x_t, y_t),   q_t = ||g_t||^2 ||x_t||^2
        tau_t = l_t / q_t                  (variant 0, PA)
              = min(C, l_t / q_t)          (variant 1, PA-I)
              = l_t / (q_t + 1 / (2 C))    (variant 2, PA-II)
        w_{t+1} = w_t - tau_t * g_t x_t

    where ``-g_t`` is ``y_t`` for the hinge and ``sign(y_t - w_t . x_t)`` for the
    epsilon-insensitive loss when ``l_t > 0`` (Figure 1 and section 5), so ``q_t = ||x_t||^2``.
    Multiclass (section 7, the max-loss update with 0/1 label cost): with r the best-scoring
    wrong class, ``l_t = max(0, 1 - (w_y . x - w_r . x))``, ``g_t = e_r - e_y`` and
    ``q_t = 2 ||x_t||^2``: ``w_y += tau x``, ``w_r -= tau x``. An all-zero example leaves ``w``
    unchanged (tau is taken as 0 where ``q_t = 0``). The binary rules are scikit-learn's
    ``PassiveAggressiveClassifier``/``SGDClassifier``/``SGDRegressor`` with
    ``learning_rate="pa1"|"pa2"`` and ``eta0=C``.
    """

    C: float = hyper(1.0, gt=0)
    variant: int = hyper(1, choices=(0, 1, 2))
    loss: Loss = Hinge()
    classes: int = hyper(0, ge=2, integer=True, also=(0,))

    def __post_init__(self):
        super().__post_init__()
        if self.classes and isinstance(self.loss, Hinge):
            object.__setattr__(self, "loss", MulticlassHinge())
        if self.classes and not isinstance(self.loss, MulticlassHinge):
            raise ValueError(f"PassiveAggressive(classes={self.classes}) needs the multiclass hinge, got {self.loss}")

    def init(self, num_features):
        shape = (self.classes, num_features) if self.classes else (num_features,)
        return PAState(jnp.ones((), jnp.int32), jnp.zeros(shape, jnp.float32))

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example, weight=None):
        x, y = example
        p = dot(state.w, x)
        loss, g = self.loss.value(p, y), self.loss.derivative(p, y)
        q = sqnorm(x) * jnp.sum(g * g)
        safe = jnp.where(q > 0, q, 1.0)
        tau = {0: loss / safe, 1: jnp.minimum(self.C, loss / safe), 2: loss / (q + 0.5 / self.C)}[self.variant]
        tau = jnp.where(q > 0, tau, 0.0)
        if weight is not None:
            tau = tau * weight
        return PAState(state.t + 1, add_scaled(state.w, -tau * g, x))

    def weighted_update(self, state, example, weight):
        """The round with ``tau_t`` scaled by ``weight`` (after PA-I's clipping at C):
        scikit-learn's ``PassiveAggressiveClassifier``/``Regressor`` with ``sample_weight``
        (``update = min(C, l / q); update *= sample_weight``)."""
        return self.update(state, example, weight)
