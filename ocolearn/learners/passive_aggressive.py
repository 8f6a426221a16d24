"""Passive-Aggressive learners (Crammer, Dekel, Keshet, Shalev-Shwartz and Singer 2006)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import Sparse, add_scaled, dot, sqnorm, values
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
    unchanged (tau is taken as 0 where ``q_t = 0``). The step ``tau_t x_t`` is computed as
    ``(tau_t s) (x_t / s)`` with ``s = max_i |x_{t,i}|``, so that features of 1e20 or 1e-30,
    whose ``||x||^2`` float32 cannot hold, take the same step as in exact arithmetic. (What
    float32 cannot do is score such rows when the weights are on their scale: PA-I's weights
    on rows of 1e-30 are ~C x, and their scores, ~C ||x||^2 ~ 1e-60, read as 0 while the
    weights are Figure 1's; a model file's scores, in float64, are right.) PA-I's
    step moves the prediction by at most ``C ||x_t||^2`` a round: with C = 1, targets of 1e30
    are out of reach in any number of rounds one can run (scale the targets, or take PA,
    variant 0, whose step is the whole way). The binary rules are scikit-learn's
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
        # tau x = (tau s) u with u = x / s, s = max |x_i|: q = s^2 q_u, and tau s below never
        # forms s^2, which float32 overflows for |x_i| ~ 1e20 and flushes to 0 for ~1e-30
        s = jnp.max(jnp.abs(values(x)))
        u = _divided(x, jnp.where(s > 0, s, 1.0))
        q = sqnorm(u) * jnp.sum(g * g)
        ok = q > 0
        s, q = jnp.where(ok, s, 1.0), jnp.where(ok, q, 1.0)
        if self.variant == 0:
            step = loss / s / q
        elif self.variant == 1:
            step = jnp.minimum(self.C * s, loss / s / q)
        else:  # tau s = loss s / (s^2 q + 1 / (2C)), in the form whose terms stay in range for this s
            big = s >= 1
            step = jnp.where(big, loss / s / (q + 0.5 / self.C / s / s), loss * s / (s * s * q + 0.5 / self.C))
        step = jnp.where(ok, step, 0.0)
        if weight is not None:
            step = step * weight
        return PAState(state.t + 1, add_scaled(state.w, -step * g, u))

    def weighted_update(self, state, example, weight):
        """The round with ``tau_t`` scaled by ``weight`` (after PA-I's clipping at C):
        scikit-learn's ``PassiveAggressiveClassifier``/``Regressor`` with ``sample_weight``
        (``update = min(C, l / q); update *= sample_weight``)."""
        return self.update(state, example, weight)


def _divided(x, s):
    """``x / s`` for dense or sparse ``x``."""
    return Sparse(x.idx, x.val / s, x.dim) if isinstance(x, Sparse) else x / s
