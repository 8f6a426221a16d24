"""Parameter-free learning by coin betting (Orabona and Pal 2016)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot, local, norm, put, values
from ocolearn.learners.base import Learner, ratio
from ocolearn.losses import Loss, Squared
from ocolearn.parts import hyper


class CoinState(NamedTuple):
    t: jax.Array
    w: jax.Array  # the bet for the next round
    theta: jax.Array  # sum of the scaled negative gradients
    wealth: jax.Array  # epsilon + sum of the scaled rewards (one number, or one per feature)
    scale: jax.Array  # the largest gradient norm (or |g_i|) seen: L


class CoinBetting(Learner, name="coin_betting", static=("per_coordinate",)):
    """Online learning by betting with the Krichevsky-Trofimov bettor (Orabona and Pal 2016,
    section 5: "KT-based OLO in Hilbert space"), needing neither a rate nor a radius::

        c_t = -g_t / L_t                  (so ||c_t|| <= 1; L_t = max_{s <= t} ||g_s||)
        Wealth_t = Wealth_{t-1} + <c_t, w_t>,   Wealth_0 = epsilon
        theta_t = theta_{t-1} + c_t
        w_{t+1} = (theta_t / (t + 1)) Wealth_t                            (a bet of fraction theta_t / (t + 1))

    ``per_coordinate``: one such bettor per feature (c_{t,i} = -g_{t,i} / L_{t,i},
    ``w_{t+1,i} = theta_{t,i} Wealth_{t,i} / (t + 1)``), the form that adapts to each feature's
    scale. The paper assumes ||g_t|| <= 1; dividing by the largest gradient seen so far (as
    Orabona and Tommasi 2017 do) keeps every ``|c_t| <= 1``, so the wealth stays positive, without
    asking for a bound. With a fixed ``L`` the regret against any u is
    O(L ||u|| sqrt(T log(1 + ||u|| T / epsilon))). Every bet moves with t, so a round is O(d)
    even on sparse x.

    **Its defaults need tuning for regression.** It assumes gradients of about unit size (the
    comparator's scale is learned slowly), so the intercept does not reach targets on a raw scale
    within a pass: with the defaults and the default pipeline it loses to the mean on diabetes
    (held-out MSE 19,160 against the mean's 4,965) and TrumpApproval (14.9 against 2.82)
    (``benchmarks/default_learner.py --registry``; docs/choosing-a-learner.md). Set ``epsilon`` (the
    initial wealth) near the targets' scale, or use ``ogd`` at a constant rate (``train``'s default
    for regression); as a classifier its defaults beat the majority class on the four classification
    sets.
    """

    epsilon: float = hyper(1.0, gt=0)
    per_coordinate: bool = False
    loss: Loss = Squared()

    def init(self, num_features):
        zeros = jnp.zeros((num_features,), jnp.float32)
        shape = (num_features,) if self.per_coordinate else ()
        eps = jnp.full(shape, self.epsilon, jnp.float32)
        return CoinState(jnp.ones((), jnp.int32), zeros, zeros, eps, jnp.zeros(shape, jnp.float32))

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        t1 = (state.t + 1).astype(jnp.float32)
        p = dot(state.w, x)
        slope = self.loss.derivative(p, y)
        g = slope * values(x)
        if self.per_coordinate:
            scale = jnp.maximum(local(state.scale, x), jnp.abs(g))
            c = ratio(-g, scale)
            w = local(state.w, x)
            wealth = local(state.wealth, x) + c * w
            theta = local(state.theta, x) + c
            # Every feature's bet theta_i Wealth_i / (t + 1) moves with t; features absent
            # from x keep theta and Wealth, so their bets are rescaled by t / (t + 1).
            shrink = state.t.astype(jnp.float32) / t1
            W = put(state.w * shrink, x, theta * wealth / t1)
            return CoinState(
                state.t + 1,
                W,
                put(state.theta, x, theta),
                put(state.wealth, x, wealth),
                put(state.scale, x, scale),
            )
        scale = jnp.maximum(state.scale, norm(g))
        inverse = ratio(1.0, scale)
        wealth = state.wealth - inverse * p * slope  # + <c_t, w_t> = -<g_t, w_t> / L_t, <g_t, w_t> = loss' w . x
        theta = put(state.theta, x, local(state.theta, x) - inverse * g)
        return CoinState(state.t + 1, theta * wealth / t1, theta, wealth, scale)
