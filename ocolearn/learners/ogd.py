"""Projected Online Gradient Descent (Zinkevich 2003) and online ridge regression."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot
from ocolearn.learners.base import Learner
from ocolearn.losses import Hinge, Loss, Squared
from ocolearn.parts import hyper
from ocolearn.projections import Identity, L2Ball, Projection, carried_sum
from ocolearn.schedules import InvSqrt, Schedule, as_schedule


class OGDState(NamedTuple):
    t: jax.Array
    w: jax.Array
    sqnorm: jax.Array  # an upper bound of ||w||^2 where the projection carries it (the L2 ball), else 0


class OGD(Learner, name="ogd", static=("intercept",)):
    """Greedy projection (Zinkevich 2003, Algorithm 1), for any loss, schedule and set::

        w_{t+1} = P(w_t - eta_t * loss'(w_t . x_t, y_t) * x_t),   w_1 = 0,

    the Haskell ``ogd rate projection (Ogdstate t w) dc`` of the OGD post. With
    ``eta_t = eta / sqrt(t)`` its regret against any fixed u in F is at most
    ``D^2 sqrt(T) / (2 eta) + (sqrt(T) - 1/2) eta G^2`` (Theorem 1, D the diameter of F, G a
    bound on the gradient norms; see ``ocolearn.regret``).

    ``intercept=True``: the last coordinate of w is an intercept's weight (the constant feature
    a pipeline appends last): it takes its gradient step but is left out of the projection, which
    applies to the other coordinates (scikit-learn's SGD leaves its intercept unpenalized).

    >>> import jax.numpy as jnp
    >>> learner = OGD(Squared(), InvSqrt(1.0), L2Ball(0.5))
    >>> state = learner.update(learner.init(2), (jnp.array([1.0, 0.0]), 2.0))
    >>> w = state.w.tolist()  # on the sphere, up to the ball's proven allowance (L2Ball.update)
    >>> 0.5 * (1 - 1e-6) <= w[0] <= 0.5, w[1], int(state.t)
    (True, 0.0, 2)
    """

    loss: Loss = Squared()
    # eta = 0.1 by default: behind the default pipeline (standardized features and an
    # intercept) ||x||^2 is about d + 1, and a squared-loss step overshoots once
    # eta_t ||x||^2 > 2; eta = 1 made the first pass on a 10-feature table diverge before
    # the 1/sqrt(t) decay caught up (scikit-learn's diabetes: progressive loss 475,143).
    schedule: Schedule = InvSqrt(0.1)
    projection: Projection = Identity()
    intercept: bool = False

    def init(self, num_features):
        return OGDState(jnp.ones((), jnp.int32), jnp.zeros((num_features,), jnp.float32), self.projection.norm_state())

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        wx = dot(state.w, x)
        step = -self.schedule(state.t) * self.loss.derivative(wx, y)
        w, sqnorm = self.projection.update(state.w, step, x, wx, state.sqnorm, self.intercept, state.t)
        w = w.astype(state.w.dtype)
        sqnorm = sqnorm.astype(state.sqnorm.dtype)
        return OGDState(state.t + 1, w, sqnorm)

    def mix(self, state):
        """After averaging states: ``||w||^2`` of the average, where the projection carries it."""
        if not self.projection.carries_norm:
            return state
        return state._replace(sqnorm=carried_sum(state.w, self.intercept, self.projection.radius))


def ridge(rate, radius) -> OGD:
    """Online ridge regression: OGD on the squared loss inside the L2 ball of ``radius``.

    The post's ``fitRidge rate lambda = fitOGDReg rate (l2Projection lambda) mseDiff``;
    ``rate`` is a schedule (a number means a constant rate)::

        w_{t+1} = P(w_t - eta_t (w_t . x_t - y_t) x_t),   P(w) = w min(1, radius / ||w||).
    """
    return OGD(Squared(), as_schedule(rate), L2Ball(radius))


class OCPSVMState(NamedTuple):
    t: jax.Array
    w: jax.Array
    sqnorm: jax.Array  # an upper bound of ||w||^2, as OGD's
    mean: jax.Array  # the average of w_2, ..., w_t, the weights after each round so far


class OCPSVM(Learner, name="ocp_svm", static=("intercept",)):
    """The online-convex-programming SVM of the lecture notes: OGD on the hinge loss with
    ``eta_t = 1 / sqrt(t)`` inside the ball of radius ``1 / sqrt(lam)`` (where the SVM's
    minimizer lies, Shalev-Shwartz et al. 2007, Theorem 1), and the online-to-batch average
    of its iterates as the classifier (Cesa-Bianchi, Conconi and Gentile 2004)::

        w_{t+1} = P(w_t + eta_t y_t x_t [y_t w_t . x_t < 1]),   P(w) = w min(1, 1 / (sqrt(lam) ||w||))
        wbar_T = (1/T) sum_{t<=T} w_{t+1}

    ``state.w`` plays each round; ``averaged(state)`` is ``wbar``, updated as a running mean
    (O(d) a round, as the projection rescales all of ``w``).

    ``intercept=True``: the last coordinate is an intercept's weight, left out of the ball (OGD's
    ``intercept``).
    """

    lam: float = hyper(0.1, gt=0)
    intercept: bool = False

    @property
    def loss(self):
        return Hinge()

    def _ogd(self) -> OGD:
        return OGD(Hinge(), InvSqrt(1.0), L2Ball(1.0 / jnp.sqrt(self.lam)), self.intercept)

    def init(self, num_features):
        return OCPSVMState(*self._ogd().init(num_features), jnp.zeros((num_features,), jnp.float32))

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        t, w, sqnorm = self._ogd().update(OGDState(*state[:3]), example)
        mean = state.mean + (w - state.mean) / state.t.astype(w.dtype)
        return OCPSVMState(t, w, sqnorm, mean)

    def averaged(self, state):
        """``(1/T) sum_{t<=T} w_{t+1}`` after T = t - 1 rounds."""
        return state.mean

    def mix(self, state):
        return state._replace(sqnorm=carried_sum(state.w, self.intercept, self._ogd().projection.radius))
