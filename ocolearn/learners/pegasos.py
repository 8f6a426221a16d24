"""Pegasos (Shalev-Shwartz, Singer and Srebro 2007), O(nnz) per step on sparse data."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import add_scaled, dot, sqnorm
from ocolearn.learners.base import Learner
from ocolearn.losses import Hinge
from ocolearn.parts import hyper

FOLD_BELOW = 1e-4  # fold the scale into W when it falls below this (keeps W's magnitude bounded)


class PegasosState(NamedTuple):
    t: jax.Array
    w: jax.Array  # W: the weights are scale * W
    scale: jax.Array
    sqnorm: jax.Array  # ||scale * W||^2


class Pegasos(Learner, name="pegasos", static=("project",)):
    """Pegasos, the primal estimated sub-gradient solver for SVM, one example per step
    (Shalev-Shwartz et al. 2007, Figure 1 with k = 1), labels in {-1, +1}::

        eta_t = 1 / (lam t)
        w_{t+1/2} = (1 - eta_t lam) w_t + eta_t 1[y_t w_t . x_t < 1] y_t x_t
        w_{t+1} = min(1, (1 / sqrt(lam)) / ||w_{t+1/2}||) w_{t+1/2}     (if ``project``)

    The weights are kept as ``scale * W`` so that the shrinkage is one multiplication and a
    step touches only the non-zero features of x; ``||w||^2`` is updated from ``W . x`` in
    O(nnz). At t = 1 the factor ``1 - eta_1 lam`` is 0: the scale restarts at 1 and
    ``W . x`` counts as 0 (a state with t = 1 has W = 0, as ``init`` makes it). Every
    ``tidy_every`` rounds, a scale below 1e-4 is folded back into W by a power of two
    (``tidy``, O(d), exact), so it does not underflow. Without a projection the scale is exactly 1/t, so it could only
    underflow after 10^38 rounds. ``weights(state)`` gives ``scale * W``.
    """

    tidy_every = 1024

    lam: float = hyper(1e-4, gt=0)
    project: bool = False

    @property
    def loss(self):
        return Hinge()

    def init(self, num_features):
        one, zero = jnp.ones((), jnp.float32), jnp.zeros((), jnp.float32)
        return PegasosState(jnp.ones((), jnp.int32), jnp.zeros((num_features,), jnp.float32), one, zero)

    def weights(self, state):
        return state.scale * state.w

    def predict(self, state, x):
        return state.scale * dot(state.w, x)

    def update(self, state, example):
        x, y = example
        eta = 1.0 / (self.lam * state.t.astype(jnp.float32))
        shrink = 1.0 - eta * self.lam
        Wx = dot(state.w, x)
        violated = y * state.scale * Wx < 1.0
        # Shrink: a scalar, unless it is 0 (t = 1, where W = 0): then the scale restarts at 1.
        first = shrink <= 0
        scale = jnp.where(first, 1.0, state.scale * shrink)
        ww = jnp.where(first, 0.0, state.sqnorm * shrink * shrink)
        Wx = jnp.where(first, 0.0, Wx)
        a = jnp.where(violated, eta * y / scale, 0.0)  # W += a x  <=>  w += eta y x
        ww = ww + scale * scale * (2 * a * Wx + a * a * sqnorm(x))
        W = add_scaled(state.w, a, x)
        if self.project:
            factor = jnp.minimum(1.0, 1.0 / jnp.sqrt(self.lam * jnp.maximum(ww, jnp.finfo(jnp.float32).tiny)))
            scale, ww = scale * factor, ww * factor * factor
        return PegasosState(state.t + 1, W, scale, jnp.maximum(ww, 0.0))

    def tidy(self, state):
        """Where the scale is below ``FOLD_BELOW``: ``W <- 2^e W``, ``scale <- scale / 2^e``
        for the power of two ``2^e`` in the scale (to [0.5, 1)). Multiplying by a power of two
        is exact, and every later step then computes the same numbers times 2^e, so when the
        fold happens (the chunking of a run) changes no result."""
        _, e = jnp.frexp(state.scale)
        factor = jnp.where(state.scale < FOLD_BELOW, jnp.ldexp(jnp.ones_like(state.scale), e), 1.0)
        return state._replace(w=state.w * factor, scale=state.scale / factor)
