"""FTRL-Proximal with per-coordinate rates and L1/L2 (McMahan et al. 2013, Algorithm 1)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot, is_last, local, put, values
from ocolearn.learners.base import Learner, ratio
from ocolearn.losses import Logistic, Loss
from ocolearn.parts import hyper


class FTRLProximalState(NamedTuple):
    t: jax.Array
    w: jax.Array
    z: jax.Array  # the paper's z_i
    s: jax.Array  # sqrt(n_i): the root of the sum of squared gradients (a root cannot overflow)


class FTRLProximal(Learner, name="ftrl_proximal", static=("river_order", "intercept")):
    """FTRL-Proximal (McMahan et al. 2013, "Ad click prediction: a view from the trenches",
    Algorithm 1), for any loss of ``w . x`` (the paper's is the logistic loss)::

        w_{t,i} = 0                                                      if |z_i| <= l1
                = -(z_i - sgn(z_i) l1) / ((beta + sqrt(n_i)) / alpha + l2)   otherwise
        g_i = loss'(w_t . x_t, y_t) x_{t,i}
        sigma_i = (sqrt(n_i + g_i^2) - sqrt(n_i)) / alpha
        z_i <- z_i + g_i - sigma_i w_{t,i},    n_i <- n_i + g_i^2

    for the features i of x_t (O(nnz) a round); ``state.w`` holds the weights of the next round.
    VW's ``--ftrl`` computes the same. The per-coordinate rate is ``alpha / (beta + sqrt(n_i))``.

    ``river_order=True`` replays river's ``optim.FTRLProximal`` (as of river 0.26), which differs
    from Algorithm 1 in two ways: each step first recomputes w_i from the z, n *before* the
    round's gradient and only then updates z, n, so it predicts with the weights of the round
    before (a lag of one round); and it keeps a weight's old value where ``|z_i| <= l1``, where
    the paper sets it to 0. ``tests/test_oco.py`` shows that this order reproduces river's weights.

    ``intercept=True`` (set by ``ocolearn.learners.pipeline.with_pipeline`` behind an ``Intercept`` step):
    the last feature is the intercept, with l1 = l2 = 0 (unpenalized, as scikit-learn leaves
    ``intercept_``); it keeps its per-coordinate rate.
    """

    alpha: float = hyper(0.1, gt=0)
    beta: float = hyper(1.0, ge=0)
    l1: float = hyper(1.0, ge=0)
    l2: float = hyper(1.0, ge=0)
    loss: Loss = Logistic()
    river_order: bool = False
    intercept: bool = False

    def init(self, num_features):
        zeros = jnp.zeros((num_features,), jnp.float32)
        return FTRLProximalState(jnp.ones((), jnp.int32), zeros, zeros, zeros)

    def predict(self, state, x):
        return dot(state.w, x)

    def closed_form(self, z, s, free=False):
        """``argmin_w z w + l1 |w| + (1/2) ((beta + sqrt(n)) / alpha + l2) w^2``, per coordinate
        (0 where that curvature is 0: a feature never seen with beta = l2 = 0); coordinates
        where ``free`` (the intercept) have l1 = l2 = 0."""
        l1, l2 = jnp.where(free, 0.0, self.l1), jnp.where(free, 0.0, self.l2)
        shrunk = jnp.sign(z) * jnp.maximum(jnp.abs(z) - l1, 0.0)
        return -ratio(shrunk, (self.beta + s) / self.alpha + l2)

    def update(self, state, example):
        x, y = example
        g = self.loss.derivative(dot(state.w, x), y) * values(x)
        z, s, w = local(state.z, x), local(state.s, x), local(state.w, x)
        free = is_last(x) if self.intercept else False
        if self.river_order:
            w = jnp.where((jnp.abs(z) > self.l1) | free, self.closed_form(z, s, free), w)
        s_next = jnp.hypot(s, g)
        z = z + g - (s_next - s) / self.alpha * w
        if not self.river_order:
            w = self.closed_form(z, s_next, free)
        return FTRLProximalState(state.t + 1, put(state.w, x, w), put(state.z, x, z), put(state.s, x, s_next))
