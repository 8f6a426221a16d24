"""Passive-Aggressive learners (Crammer, Dekel, Keshet, Shalev-Shwartz and Singer 2006)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import Sparse, add_scaled, dot, power_of_two, scaled_sqnorm
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
    ``(tau_t / k) (k x_t)`` with ``k = 2^e`` the power of two that puts ``||k x_t||`` in [1, 2)
    (``features.scaled_sqnorm``): scaling by a power of two changes no bits, so the step is the
    float32 formula's bit for bit where that formula's numbers are in range (PA and PA-I), and
    features of 1e20 or 1e-30, whose ``||x||^2`` float32 cannot hold, take the same step as in
    exact arithmetic. (What float32 cannot do is score such rows when the weights are on their
    scale: PA-I's weights on rows of 1e-30 are ~C x, and their scores, ~C ||x||^2 ~ 1e-60, read
    as 0 while the weights are Figure 1's; a model file's scores, in float64, are right.) PA-I's
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
        # tau x = (tau / k)(k x), k = 2^e with ||k x|| in [1, 2): q = k^2 ||x||^2 holds where ||x||^2
        # would overflow (|x_i| ~ 1e20) or flush to 0 (~1e-30), and tau / k where tau would
        q, e = scaled_sqnorm(x)
        k, k_inv = power_of_two(e), power_of_two(-e)
        q = q * jnp.sum(g * g)
        ok = q > 0
        q = jnp.where(ok, q, 1.0)
        lk = jnp.where(ok, loss * k, 0.0)  # tau / k = lk / q (0 where x = 0 or there is no loss)
        if self.variant == 0:
            num, den = lk, q
        elif self.variant == 1:  # min(C, tau) / k
            clip = self.C * k_inv < lk / q
            num, den = jnp.where(clip, self.C, lk), jnp.where(clip, k, q)
        else:  # tau / k = loss k / (q + k^2 / (2C)), in the form whose terms stay in range for this k
            large = k <= 1
            num = jnp.where(large, lk, jnp.where(ok, loss * k_inv, 0.0))
            den = jnp.where(large, q + k * k * (0.5 / self.C), q * k_inv * k_inv + 0.5 / self.C)
        # The coefficient ends in a division, which XLA computes once (cheaper work it repeats in each of
        # a sparse step's writes: with the min of Figure 1 there, 1.6x the floor's round). Written
        # num * -g, not -g * num: XLA's schedule follows the operands, and that order puts w . x ahead of
        # the sum of squares (with the other, 1.5x the floor, not 1.35x; benchmarks/bench_sparse_steps.py)
        step = num * -g / den
        if weight is not None:
            step = step * weight
        return PAState(state.t + 1, add_scaled(state.w, step, _scaled(x, k)))

    def weighted_update(self, state, example, weight):
        """The round with ``tau_t`` scaled by ``weight`` (after PA-I's clipping at C):
        scikit-learn's ``PassiveAggressiveClassifier``/``Regressor`` with ``sample_weight``
        (``update = min(C, l / q); update *= sample_weight``)."""
        return self.update(state, example, weight)


def _scaled(x, k):
    """``k x`` for dense or sparse ``x``."""
    return Sparse(x.idx, x.val * k, x.dim) if isinstance(x, Sparse) else x * k
