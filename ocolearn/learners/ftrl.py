"""Follow the regularized leader on linearized losses (Shalev-Shwartz 2007; Abernethy, Hazan
and Rakhlin 2008), over a mirror map."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot
from ocolearn.learners.base import Learner, mirrored
from ocolearn.losses import Loss, Squared
from ocolearn.mirror_maps import Euclidean, MirrorMap
from ocolearn.schedules import InvSqrt, Schedule


class FTRLState(NamedTuple):
    t: jax.Array
    w: jax.Array
    theta: jax.Array  # -sum_{s<t} g_s, the negated sum of the gradients so far (dual)


class FTRL(Learner, name="ftrl", static=("intercept",)):
    """FTRL with linearized losses, the lazy ("dual averaging") form (Hazan 2016, chapter 5;
    Orabona 2019, chapter 7; Nesterov 2009)::

        g_t = loss'(w_t . x_t, y_t) x_t
        w_{t+1} = argmin_{u in K} eta_t sum_{s<=t} <g_s, u> + psi(u) = weights(-eta_t sum_{s<=t} g_s)

    and ``w_1 = weights(0) = argmin_K psi``. With ``Euclidean(P)`` it is the lazy projection
    ``P(-eta_t sum g_s)`` (Zinkevich 2003, section 5; with the identity and a constant rate it
    is OGD); with ``NegEntropy`` and a constant rate, Hedge / EG. For a non-increasing rate the
    regret against u in K is at most ``(psi(u) - min_K psi) / eta_T + (1 / (2 sigma))
    sum_t eta_{t-1} ||g_t||_*^2`` (Orabona 2019, chapter 7).

    ``intercept=True``: the last coordinate is an intercept's weight, left out of a Euclidean
    map's projection P (its weight is ``-eta_t sum_s g_s``'s last coordinate); the entropies'
    simplex and the p-norm map include it (``mirrored``).

    **Its defaults need tuning.** Its rate ``eta`` = 1 / sqrt(t) on standardized rows of d features
    (a gradient of size about sqrt(d + 1)) overshoots: behind the default pipeline it loses to the
    majority class on wine (held-out accuracy 0.356 against 0.467), breast_cancer (0.427 against
    0.629) and digits (0.082 against 0.084), and to the mean on diabetes (MSE 1.1e6 against 4,965)
    (``benchmarks/default_learner.py --registry``; docs/choosing-a-learner.md). Set ``schedule.eta``
    to 0.1 (OGD's default) or below.
    """

    loss: Loss = Squared()
    schedule: Schedule = InvSqrt()
    mirror: MirrorMap = Euclidean()
    intercept: bool = False

    def init(self, num_features):
        theta = self.mirror.zeros(num_features)
        return FTRLState(jnp.ones((), jnp.int32), mirrored(self, "weights", theta).astype(jnp.float32), theta)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        theta = self.mirror.add(state.theta, -self.loss.derivative(dot(state.w, x), y), x).astype(state.theta.dtype)
        w = mirrored(self, "weights", self.schedule(state.t) * theta)
        return FTRLState(state.t + 1, w.astype(state.w.dtype), theta)
