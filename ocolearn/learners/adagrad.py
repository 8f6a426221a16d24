"""AdaGrad, diagonal (Duchi, Hazan and Singer 2011), projected or composite with an L1 term."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import add_to_rows, table_column, table_dot, table_rows, values
from ocolearn.learners.base import Learner, ratio
from ocolearn.losses import Loss, Squared
from ocolearn.parts import hyper
from ocolearn.projections import Identity, Projection, keep_last


class AdaGradState(NamedTuple):
    t: jax.Array
    table: jax.Array  # (d, 2): per feature, its weight and its sum of squared gradients G

    @property
    def w(self):
        return self.table[..., 0]

    @property
    def G(self):
        """The sum of the squared gradients, per feature."""
        return self.table[..., 1]


def _changes(G, g, eta, delta):
    """The changes ``(w_i' - w_i, G_i' - G_i)`` of features with sums ``G_i`` and gradients
    ``g_i``: zero where g_i = 0, and w_i does not move where the new H_i is 0 (G_i' = 0 with
    delta = 0: a gradient whose square underflows). The division by infinity there (rather than
    ``ratio``'s select after the division) ends the step with its division, which XLA computes
    once for all the features instead of copying the select into each write."""
    H = delta + jnp.sqrt(G + g * g)
    return -(eta * g) / jnp.where(H > 0, H, jnp.inf), g * g


class AdaGrad(Learner, name="adagrad", static=("intercept",)):
    """Diagonal AdaGrad (Duchi, Hazan and Singer 2011, Figure 1 with diagonal H_t)::

        g_t = loss'(w_t . x_t, y_t) x_t,   G_t = G_{t-1} + g_t^2,   H_t = delta + sqrt(G_t)
        v = w_t - eta g_t / H_t
        w_{t+1} = argmin_{u in F} (u - v)' diag(H_t) (u - v)                      (l1 = None)
        w_{t+1} = P_F(sign(v) max(|v| - eta l1 / H_t, 0))                          (l1 >= 0)

    The first is the primal-dual / mirror-descent update projected in the Mahalanobis norm of
    H_t (``Projection.in_norm``: clipping for a box or the orthant, an exact 1-D root for the
    L2 ball); the second is the composite-mirror-descent step with ``l1 ||w||_1`` (section 5.1,
    FOBOS-style shrinkage), for sets that are products of intervals. Features with G = 0 do not
    move. With the identity set and no L1 term a step touches only x's features (O(nnz)), and
    each feature's ``w_i`` and ``G_i`` sit side by side in one table (one cache line): a sparse
    step computes the changes of all of x's features at once (their square roots and divisions
    in vector instructions) and then adds them, one write per non-zero.

    ``intercept=True``: the last coordinate of w is an intercept's weight (the constant feature a
    pipeline appends last): it takes its step ``v_d`` but neither the L1 shrinkage nor the
    projection, which apply to the other coordinates (scikit-learn's SGD leaves its intercept
    unpenalized).

    **Its defaults need tuning for regression.** Its steps are bounded by its rate, not by the
    error, a coordinate moving about ``eta`` = 0.1 a round, so the intercept does not reach targets
    on a raw scale within a pass: with the defaults and the default pipeline it loses to the mean on
    scikit-learn's diabetes (held-out MSE 27,060 against the mean's 4,965) and river's TrumpApproval
    (1,272 against 2.82) (``benchmarks/default_learner.py --registry``; docs/choosing-a-learner.md).
    Set ``eta`` near the targets' scale (or ``loss = 'logistic'`` for classes: the default
    classifier), or use ``ogd`` at a constant rate (``train``'s default for regression); as a
    classifier its defaults beat the majority class on the four classification sets.
    """

    eta: float = hyper(0.1, gt=0)
    delta: float = hyper(0.0, ge=0)
    l1: float | None = hyper(None, ge=0)
    loss: Loss = Squared()
    projection: Projection = Identity()
    intercept: bool = False

    def init(self, num_features):
        return AdaGradState(jnp.ones((), jnp.int32), jnp.zeros((num_features, 2), jnp.float32))

    def predict(self, state, x):
        return table_dot(table_rows(state.table, x), x, 0)

    def update(self, state, example):
        x, y = example
        slope = self.loss.derivative(self.predict(state, x), y)
        # Every feature's changes at once (vectorized square roots and divisions), then added.
        changes = _changes(table_column(state.table, x, 1), slope * values(x), self.eta, self.delta)
        table = add_to_rows(state.table, x, changes)
        if self.l1 is None and isinstance(self.projection, Identity):
            return AdaGradState(state.t + 1, table)
        w, G = table[:, 0], table[:, 1]
        H = self.delta + jnp.sqrt(G)
        if self.l1 is None:
            if self.intercept:
                projected = jnp.concatenate([self.projection.in_norm(w[:-1], H[:-1]), w[-1:]])
            else:
                projected = self.projection.in_norm(w, H)
            return AdaGradState(state.t + 1, jnp.stack([projected.astype(w.dtype), G], axis=1))
        if not self.projection.separable:
            raise NotImplementedError("AdaGrad with an L1 term needs a separable set: identity, box or non_negative")
        shrink = ratio(self.eta * self.l1, H)
        if self.intercept:
            shrink = shrink.at[-1].set(0.0)
        w = jnp.sign(w) * jnp.maximum(jnp.abs(w) - shrink, 0.0)
        w = keep_last(self.projection, w, self.intercept).astype(w.dtype)
        return AdaGradState(state.t + 1, jnp.stack([w, G], axis=1))
