"""Pegasos (Shalev-Shwartz, Singer and Srebro 2007), O(nnz) per step on sparse data."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import Sparse, add_scaled, dot, last_feature, sqnorm
from ocolearn.learners.base import Learner
from ocolearn.losses import Hinge
from ocolearn.parts import cond, hyper
from ocolearn.projections import head, step_norm, sum_of_squares

FOLD_BELOW = 1e-4  # fold the scale into W when it falls below this (keeps W's magnitude bounded)


class PegasosState(NamedTuple):
    t: jax.Array
    w: jax.Array  # W: the weights are scale * W
    scale: jax.Array
    sqnorm: jax.Array  # ||scale * W||^2 when projecting (the projection needs it), else 0


class Pegasos(Learner, name="pegasos", static=("project", "intercept")):
    """Pegasos, the primal estimated sub-gradient solver for SVM, one example per step
    (Shalev-Shwartz et al. 2007, Figure 1 with k = 1), labels in {-1, +1}::

        eta_t = 1 / (lam t)
        w_{t+1/2} = (1 - eta_t lam) w_t + eta_t 1[y_t w_t . x_t < 1] y_t x_t
        w_{t+1} = min(1, (1 / sqrt(lam)) / ||w_{t+1/2}||) w_{t+1/2}     (if ``project``)

    The weights are kept as ``scale * W`` so that the shrinkage is one multiplication and a
    step touches only the non-zero features of x. The step on W, ``eta y / scale``, is computed
    before ``W . x``, so that a round waits only on the margin test for the previous round's
    update. With a projection ``||w||^2`` is updated from ``W . x`` in O(nnz) (``step_norm``);
    without one it is not needed and stays 0. At t = 1 the factor ``1 - eta_1 lam`` is 0: the
    scale restarts at 1 and ``W . x`` counts as 0 (a state with t = 1 has W = 0, as ``init``
    makes it). Every ``tidy_every`` rounds, a scale below 1e-4 is folded back into W by a power of two
    (``tidy``, O(d), exact), so it does not underflow. Without a projection the scale is
    exactly 1/t, so it could only underflow after 10^38 rounds; with one, the step folds and
    sums ``||w||^2`` afresh itself (``_refresh``). ``weights(state)`` gives ``scale * W``.

    ``intercept=True``: the last coordinate ``b`` of w is an intercept's weight (the constant
    feature a pipeline appends last). It takes the hinge step but neither the shrinkage nor the
    projection, which apply to the other coordinates (scikit-learn's SGD leaves its intercept
    unpenalized)::

        b_{t+1} = b_t + eta_t 1[y_t w_t . x_t < 1] y_t x_{t,d}

    In O(1) a round: ``W[d] = b_{t+1} / scale`` is written after the scale changes, and
    ``||w||^2`` counts only the other coordinates.
    """

    tidy_every = 1024

    lam: float = hyper(1e-4, gt=0)
    project: bool = False
    intercept: bool = False

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

    def update(self, state, example, weight=None):
        x, y = example
        eta = 1.0 / (self.lam * state.t.astype(jnp.float32))
        shrink = 1.0 - eta * self.lam
        # Shrink: a scalar, unless it is 0 (t = 1, where W = 0): then the scale restarts at 1.
        first = shrink <= 0
        scale = jnp.where(first, 1.0, state.scale * shrink)
        gain = eta * y if weight is None else eta * y * weight  # the hinge step's factor of x
        step = gain / scale  # W's step on a margin error, known before W . x is
        wx = state.scale * dot(state.w, x)  # w_t . x
        hit = y * wx < 1.0
        W = add_scaled(state.w, jnp.where(hit, step, 0.0), x)  # W += (b / scale) x  <=>  w += b x
        b = jnp.where(hit, gain, 0.0)  # w_{t+1/2} = shrink w_t + b x
        if self.intercept:  # the intercept's weight, unshrunk: bias + b x_d
            xl = last_feature(x)
            bias = state.scale * state.w[-1]
            wx = wx - bias * xl  # the other coordinates' w . x
            bias = bias + b * xl
        if not self.project:
            if self.intercept:
                W = W.at[-1].set(bias / scale)
            return PegasosState(state.t + 1, W, scale, state.sqnorm)
        xx = sqnorm(x)
        if self.intercept:
            xx = jnp.maximum(xx - xl * xl, 0.0)
        ww = jnp.where(first, 0.0, state.sqnorm * shrink * shrink)
        half = step_norm(ww, b, jnp.where(first, 0.0, wx * shrink), xx)  # ||w_{t+1/2}||
        factor = jnp.minimum(1.0, 1.0 / (jnp.sqrt(self.lam) * jnp.maximum(half, jnp.finfo(jnp.float32).tiny)))
        if self.intercept:
            W = W.at[-1].set(bias / (scale * factor))
        new = PegasosState(state.t + 1, W, scale * factor, (half * factor) ** 2)
        if not isinstance(x, Sparse):
            return self._refresh(new)
        due = (new.scale < FOLD_BELOW) | (state.t % self.tidy_every == 0)
        return cond(due, self._refresh, lambda s: s, new)

    def weighted_update(self, state, example, weight):
        """The round with the hinge step scaled: ``w_{t+1/2} = (1 - eta_t lam) w_t + weight eta_t
        1[y_t w_t . x_t < 1] y_t x_t``, the shrinkage (the regularizer's step) unweighted, as
        scikit-learn's SGD weights only the loss's step (``update *= sample_weight``)."""
        return self.update(state, example, weight)

    def _refresh(self, state):
        """``tidy``, and ``||w||^2`` summed from the weights, inside the projected step.

        A projection can shrink the scale by any factor in one round (about
        ``t sqrt(lam) / ||x||`` while ``t < ||x|| / sqrt(lam)``: from 1 to below 1e-38 within
        the first hundred rounds of unit rows at lam = 1e-4, and then ``eta y / scale`` is
        infinite), so the fold cannot wait for the runner's ``tidy``. And the squared norm
        carried by the formula drifts in float32 (by 2% over 10^6 rounds), which lets the
        iterate out of the ball. Dense steps touch all of W anyway, so they refresh every round;
        sparse ones only when the scale is small or every ``tidy_every`` rounds (``lax.cond``),
        which bounds the drift to that of 1,024 rounds."""
        state = self.tidy(state)
        return state._replace(sqnorm=self._sqnorm(state))

    def _sqnorm(self, state):
        """``||w||^2`` summed from the weights (without the intercept's)."""
        return state.scale * state.scale * sum_of_squares(head(state.w) if self.intercept else state.w)

    def unscaled(self, state):
        return state._replace(w=state.scale * state.w, scale=jnp.ones_like(state.scale))

    def mix(self, state):
        """After averaging unscaled states: ``||w||^2`` of the average (when projecting)."""
        if not self.project:
            return state
        return state._replace(sqnorm=self._sqnorm(state))

    def tidy(self, state):
        """Where the scale is below ``FOLD_BELOW``: ``W <- 2^e W``, ``scale <- scale / 2^e``
        for the power of two ``2^e`` in the scale (to [0.5, 1)). Multiplying by a power of two
        is exact, and every later step then computes the same numbers times 2^e, so when the
        fold happens (the chunking of a run) changes no result. W is touched only when the
        scale is small (``lax.cond``; a select under ``vmap``): a pass over W at every call
        would cost a sparse pass more than its steps do."""

        def fold(state):
            _, e = jnp.frexp(state.scale)
            factor = jnp.ldexp(jnp.ones_like(state.scale), e)
            return state._replace(w=state.w * factor, scale=state.scale / factor)

        return cond(state.scale < FOLD_BELOW, fold, lambda state: state, state)
