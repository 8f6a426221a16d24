"""COCOB, continuous coin betting per coordinate (Orabona and Tommasi 2017)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot, local, put, values
from ocolearn.learners.base import Learner, ratio
from ocolearn.losses import Loss, Squared
from ocolearn.parts import hyper

BOX = 1e15  # |w_i| <= BOX: far beyond any fitted weight, and (BOX |x|)^2 still fits float32
FLOAT32_MAX = float(jnp.finfo(jnp.float32).max)


class COCOBState(NamedTuple):
    t: jax.Array
    w: jax.Array  # the weights played: the bets clipped to [-BOX, BOX]
    L: jax.Array  # per feature: the largest |c_{s,i}| seen
    G: jax.Array  # per feature: sum of |c_{s,i}| (the paper's G_{t,i} - G_{0,i})
    reward: jax.Array  # per feature: sum of (w_{s,i} - w_{1,i}) c_{s,i}
    theta: jax.Array  # per feature: sum of c_{s,i}


class COCOB(Learner, name="cocob", static=("backprop",)):
    """COntinuous COin Betting (Orabona and Tommasi 2017), one bettor per feature, betting on the
    negative gradients ``c_t = -g_t``, with ``w_1 = 0``. Algorithm 1 (COCOB), lines 6-10, with
    its initialization ``G_{0,i} = L_i`` (line 2), so that its ``G_{t,i} + L_i`` is
    ``G_{t,i} + 2 L_{t,i}`` with ``G`` the sum of ``|c|`` kept here::

        L_{t,i} = max(L_{t-1,i}, |c_{t,i}|),   G_{t,i} = G_{t-1,i} + |c_{t,i}|
        Reward_{t,i} = max(Reward_{t-1,i} + w_{t,i} c_{t,i}, -L_{t-1,i}),   theta_{t,i} = theta_{t-1,i} + c_{t,i}
        w_{t+1,i} = (1 / L_{t,i}) (2 sigma(2 theta_{t,i} / (G_{t,i} + 2 L_{t,i})) - 1) (L_{t,i} + Reward_{t,i})

    with the data-dependent betting fraction ``2 sigma(2x) - 1 = tanh(x)``. The paper takes the
    range ``L_i >= |c_{t,i}|`` as an input; here it is the largest ``|c_{t,i}|`` seen so far, as
    in its Algorithm 2, so nothing is asked for. On a stream whose first gradient of each
    feature is its largest, this is Algorithm 1 exactly. A later, larger gradient breaks the
    assumption of its analysis (``|c_t| <= L``, which keeps the wealth ``L + Reward`` positive):
    that round may lose more than the wealth, and the paper's rule would then bet the debt
    with the wrong sign ever after. The floor ``-L_{t-1,i}`` on the reward caps the loss at
    the wealth the bettor had; it never binds in a round with ``|c_{t,i}| <= L_{t-1,i}``, and
    the range gained, ``L_t - L_{t-1}``, is the bettor's new wealth. What remains: the round
    of the jump itself costs ``w_t |c_t|``, what the bettor staked for gradients of the old
    range (20 rounds of c = 0.01 then one c = -100 cost ~8.5e5; only a known range, or
    COCOB-Backprop's alpha, avoids it).

    ``backprop=True`` is Algorithm 2 (COCOB-Backprop) instead::

        Reward_{t,i} = max(Reward_{t-1,i} + w_{t,i} c_{t,i}, 0)
        w_{t+1,i} = theta_{t,i} / (L_{t,i} max(G_{t,i} + L_{t,i}, alpha L_{t,i})) (L_{t,i} + Reward_{t,i})

    (its ``G_{0,i} = L_{0,i} = 0``) with the paper's ``alpha = 100``, which holds the first
    steps back (made for deep networks; only ``backprop`` uses ``alpha``).

    Both bettors' wealth grows geometrically while the gradients keep their sign, which is
    right (the best point of a linear loss is at infinity) but overflows float32 within 200
    rounds of a constant gradient. So the weights live in the box ``|w_i| <= BOX`` (1e15) by
    the reduction to a convex domain of Cutkosky and Orabona 2018 ("Black-box reductions for
    parameter-free online learning in Banach spaces"), per feature: the point played is the
    bet clipped to the box, and the bettor is fed the gradient of ``g w + |g| dist(w, box)``
    at its bet, ``c~ = min(c, 0)`` above the box and ``max(c, 0)`` below, so it stops
    betting further out; its regret against any point of the box is kept. Inside the box it
    is the rule above, unchanged. A feature with L = 0 has not moved. Features absent from x
    keep their state, so a step is O(nnz).
    """

    alpha: float = hyper(100.0, gt=0)
    backprop: bool = False
    loss: Loss = Squared()

    def init(self, num_features):
        zeros = jnp.zeros((num_features,), jnp.float32)
        return COCOBState(jnp.ones((), jnp.int32), zeros, zeros, zeros, zeros, zeros)

    def predict(self, state, x):
        return dot(state.w, x)

    def _bet(self, L, G, reward, theta):
        """The bettor's ``w_{t+1}`` (before clipping to the box) from its sums."""
        if self.backprop:
            return ratio(theta * (L + reward), L * jnp.maximum(G + L, self.alpha * L))
        return ratio(jnp.tanh(ratio(theta, G + 2.0 * L)) * (L + reward), L)

    def update(self, state, example):
        x, y = example
        L, G, reward, theta = (local(a, x) for a in (state.L, state.G, state.reward, state.theta))
        bet = self._bet(L, G, reward, theta)
        c = -self.loss.derivative(dot(state.w, x), y) * values(x)
        c = jnp.where(bet > BOX, jnp.minimum(c, 0.0), jnp.where(bet < -BOX, jnp.maximum(c, 0.0), c))
        floor = 0.0 if self.backprop else -L
        L = jnp.maximum(L, jnp.abs(c))
        G = G + jnp.abs(c)
        reward = jnp.clip(reward + bet * c, floor, FLOAT32_MAX)
        theta = theta + c
        w = jnp.clip(self._bet(L, G, reward, theta), -BOX, BOX)
        return COCOBState(
            state.t + 1,
            put(state.w, x, w),
            put(state.L, x, L),
            put(state.G, x, G),
            put(state.reward, x, reward),
            put(state.theta, x, theta),
        )
