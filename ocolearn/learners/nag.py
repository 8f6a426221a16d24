"""Normalized adaptive gradient, NAG (Ross, Mineiro and Langford 2013, Algorithm 2)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import largest_seen, local, put, values
from ocolearn.learners.base import Learner, ratio
from ocolearn.losses import Loss, Squared
from ocolearn.parts import hyper


class NAGState(NamedTuple):
    t: jax.Array
    w: jax.Array
    s: jax.Array  # the largest |x_i| seen, per feature
    G: jax.Array  # sum of the squared gradients, per feature
    N: jax.Array  # sum over rounds of sum_i x_i^2 / s_i^2


class NAG(Learner, name="nag"):
    """Normalized Adaptive Gradient (Ross, Mineiro and Langford 2013, Algorithm 2)::

        for i with |x_i| > s_i:  w_i <- w_i s_i^2 / x_i^2,  s_i <- |x_i|
        yhat = w . x;  N <- N + sum_i x_i^2 / s_i^2
        g_i = loss'(yhat, y) x_i,   G_i <- G_i + g_i^2
        w_i <- w_i - eta sqrt(t / N) g_i / (s_i sqrt(G_i))

    Scale-free: multiplying feature i by c > 0 everywhere multiplies s_i and sqrt(G_i) by c
    and divides w_i by c, so every prediction is unchanged (tested). ``predict`` applies the
    rescaling of the first line for the example at hand. Features absent from x (x_i = 0) do
    not move, so a step is O(nnz) on sparse x.

    **Its defaults need tuning for regression.** Its steps are bounded by its rate, not by the
    error, (``eta`` = 1.0, normalized per feature), so the intercept does not reach targets on a raw
    scale within a pass: with the defaults and the default pipeline it loses to the mean on diabetes
    (held-out MSE 23,040 against the mean's 4,965) and TrumpApproval (161 against 2.82)
    (``benchmarks/default_learner.py --registry``; docs/choosing-a-learner.md). Set ``eta`` near the
    targets' scale, or use ``ogd`` at a constant rate (``train``'s default for regression); as a
    classifier its defaults beat the majority class on the four classification sets.
    """

    eta: float = hyper(1.0, gt=0)
    loss: Loss = Squared()

    def init(self, num_features):
        zeros = jnp.zeros((num_features,), jnp.float32)
        return NAGState(jnp.ones((), jnp.int32), zeros, zeros, zeros, jnp.zeros((), jnp.float32))

    def _rescaled(self, state, x):
        """``(w, s)`` at x's features after the rescaling of the first line."""
        w, s, new = local(state.w, x), local(state.s, x), largest_seen(state.s, x)
        return jnp.where(new > s, w * ratio(s * s, new * new), w), new

    def predict(self, state, x):
        return self._rescaled(state, x)[0] @ values(x)

    def update(self, state, example):
        x, y = example
        xv = values(x)
        w, s = self._rescaled(state, x)
        N = state.N + jnp.sum(ratio(xv * xv, s * s))
        g = self.loss.derivative(w @ xv, y) * xv
        G = local(state.G, x) + g * g
        rate = self.eta * jnp.sqrt(ratio(state.t.astype(jnp.float32), N))
        w = w - rate * ratio(g, s * jnp.sqrt(G))
        return NAGState(state.t + 1, put(state.w, x, w), put(state.s, x, s), put(state.G, x, G), N)
