"""Online mirror descent (Nemirovski and Yudin 1983; Beck and Teboulle 2003) over a mirror map."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot
from ocolearn.learners.base import Learner, mirrored
from ocolearn.losses import Loss, Squared
from ocolearn.mirror_maps import Euclidean, MirrorMap
from ocolearn.schedules import InvSqrt, Schedule


class OMDState(NamedTuple):
    t: jax.Array
    w: jax.Array
    theta: jax.Array  # the dual point of w_t: weights(theta) = w_t


class OMD(Learner, name="omd", static=("intercept",)):
    """Online mirror descent, the greedy ("active") form (Hazan 2016, chapter 5;
    Orabona 2019, chapter 6) for a loss of ``w . x``::

        g_t = loss'(w_t . x_t, y_t) x_t
        w_{t+1} = argmin_{u in K} B_psi(u, nabla psi^*(nabla psi(w_t) - eta_t g_t))

    computed on the dual point: ``theta_{t+1} = project(theta_t - eta_t g_t)``,
    ``w_{t+1} = weights(theta_{t+1})``, ``w_1 = weights(project(0)) = argmin_K psi``.
    With ``Euclidean(P)`` it is projected OGD (Zinkevich 2003); with ``NegEntropy`` it is
    Exponentiated Gradient (Kivinen and Warmuth 1997), and Hedge on linear losses; with
    ``SignedEntropy`` EG+-; with ``PNorm(p)`` the p-norm algorithm (Gentile 2003). For a
    constant rate the regret against u in K is at most
    ``B_psi(u, w_1) / eta + (eta / (2 sigma)) sum_t ||g_t||_*^2`` for psi sigma-strongly convex
    in ||.|| (Orabona 2019, chapter 6).

    ``intercept=True``: the last coordinate is an intercept's weight, stepped but left out of a
    Euclidean map's projection P; the entropies' simplex and the p-norm map include it
    (``mirrored``).

    >>> import jax.numpy as jnp
    >>> from ocolearn.losses import Linear
    >>> from ocolearn.mirror_maps import NegEntropy
    >>> from ocolearn.schedules import Constant
    >>> eg = OMD(Linear(), Constant(jnp.log(3.0)), NegEntropy())
    >>> state = eg.update(eg.init(2), (jnp.array([0.0, 1.0]), 0.0))
    >>> [round(v, 4) for v in state.w.tolist()]
    [0.75, 0.25]

    **Its defaults need tuning.** Its rate ``eta`` = 1 / sqrt(t) on standardized rows of d features
    (a gradient of size about sqrt(d + 1)) overshoots: behind the default pipeline it loses to the
    majority class on wine (held-out accuracy 0.333 against 0.467) and breast_cancer (0.427 against
    0.629), and to the mean on diabetes (MSE 1.8e7 against 4,965) (``benchmarks/default_learner.py
    --registry``; docs/choosing-a-learner.md). Set ``schedule.eta`` to 0.1 (OGD's default) or below.
    """

    loss: Loss = Squared()
    schedule: Schedule = InvSqrt()
    mirror: MirrorMap = Euclidean()
    intercept: bool = False

    def init(self, num_features):
        theta = mirrored(self, "project", self.mirror.zeros(num_features))
        return OMDState(jnp.ones((), jnp.int32), mirrored(self, "weights", theta).astype(jnp.float32), theta)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        a = -self.schedule(state.t) * self.loss.derivative(dot(state.w, x), y)
        theta = mirrored(self, "project", self.mirror.add(state.theta, a, x)).astype(state.theta.dtype)
        return OMDState(state.t + 1, mirrored(self, "weights", theta).astype(state.w.dtype), theta)
