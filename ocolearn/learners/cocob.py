"""COCOB, continuous coin betting per coordinate (Orabona and Tommasi 2017)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot, local, put, values
from ocolearn.learners.base import Learner, ratio
from ocolearn.losses import Loss, Squared
from ocolearn.parts import hyper


class COCOBState(NamedTuple):
    t: jax.Array
    w: jax.Array
    L: jax.Array  # per feature: the largest |g_{s,i}| seen
    G: jax.Array  # per feature: sum of |g_{s,i}|
    reward: jax.Array  # per feature: sum of (w_{s,i} - w_{1,i}) c_{s,i}
    theta: jax.Array  # per feature: sum of c_{s,i}


class COCOB(Learner, name="cocob", static=("backprop",)):
    """COntinuous COin Betting (Orabona and Tommasi 2017), one bettor per feature, betting on the
    negative gradients ``c_t = -g_t``, with ``w_1 = 0``::

        L_{t,i} = max(L_{t-1,i}, |c_{t,i}|),   G_{t,i} = G_{t-1,i} + |c_{t,i}|
        Reward_{t,i} = Reward_{t-1,i} + w_{t,i} c_{t,i},   theta_{t,i} = theta_{t-1,i} + c_{t,i}
        w_{t+1,i} = (1 / L_{t,i}) (2 sigma(2 theta_{t,i} / (G_{t,i} + L_{t,i})) - 1) (L_{t,i} + Reward_{t,i})

    Algorithm 1 (COCOB), with the data-dependent betting fraction ``2 sigma(2x) - 1 = tanh(x)``
    of ``x = theta / (G + L)``; the paper takes the bound ``L_i`` as an input, here it is the
    largest ``|c_{t,i}|`` seen so far, as in its Algorithm 2, so nothing is asked for.
    ``backprop=True`` is Algorithm 2 (COCOB-Backprop) instead::

        Reward_{t,i} = max(Reward_{t-1,i} + w_{t,i} c_{t,i}, 0)
        w_{t+1,i} = theta_{t,i} / (L_{t,i} max(G_{t,i} + L_{t,i}, alpha L_{t,i})) (L_{t,i} + Reward_{t,i})

    with the paper's ``alpha = 100``, which holds the first steps back (made for deep networks;
    only ``backprop`` uses ``alpha``). A feature with L = 0 has not moved. Features absent from
    x keep their state, so a step is O(nnz).
    """

    alpha: float = hyper(100.0, gt=0)
    backprop: bool = False
    loss: Loss = Squared()

    def init(self, num_features):
        zeros = jnp.zeros((num_features,), jnp.float32)
        return COCOBState(jnp.ones((), jnp.int32), zeros, zeros, zeros, zeros, zeros)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        w = local(state.w, x)
        c = -self.loss.derivative(dot(state.w, x), y) * values(x)
        L = jnp.maximum(local(state.L, x), jnp.abs(c))
        G = local(state.G, x) + jnp.abs(c)
        reward = local(state.reward, x) + w * c
        theta = local(state.theta, x) + c
        if self.backprop:
            reward = jnp.maximum(reward, 0.0)
            w = ratio(theta * (L + reward), L * jnp.maximum(G + L, self.alpha * L))
        else:
            w = ratio(jnp.tanh(ratio(theta, G + L)) * (L + reward), L)
        return COCOBState(
            state.t + 1,
            put(state.w, x, w),
            put(state.L, x, L),
            put(state.G, x, G),
            put(state.reward, x, reward),
            put(state.theta, x, theta),
        )
