"""Follow the Leading History (Hazan and Seshadhri 2009): a learner for changing environments."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dot
from ocolearn.learners.base import Learner
from ocolearn.learners.ons import ONS
from ocolearn.parts import hyper


class FLHState(NamedTuple):
    t: jax.Array
    w: jax.Array  # the weighted combination of the live experts' weights (d,) or (K, d)
    experts: Any  # the base learner's states, stacked over the 3 * levels slots
    log_v: jax.Array  # (slots,): log weights; dead or empty slots hold DEAD, -inf's finite stand-in
    start: jax.Array  # (slots,) int32: the round each expert started (0: empty)
    expiry: jax.Array  # (slots,) int32: the last round each expert is kept


# The log weight of a dead or empty slot: exp(DEAD) = 0 as exp(-inf) is, but a state holds no
# infinity, so the check that a run did not diverge (``checks.check_finite``) can look at all of it.
DEAD = -float(jnp.finfo(jnp.float32).max)


def _trailing_zeros(i):
    """The k of ``i = r 2^k`` with r odd (i >= 1)."""
    return jax.lax.population_count((i & -i) - 1)


class FLH(Learner, name="flh", static=("levels",)):
    """Follow the Leading History (Hazan and Seshadhri 2009, Algorithm 1, FLH, on the pruned
    working set S_t of its efficient version, FLH2): a new copy of the base learner (an expert)
    starts every round, and the experts are combined by exponential weights on their losses::

        w_t = sum_{j in S_t} v_t^j w_t^j              S_t: the live experts j (started at round j)
        vhat^j = v_t^j exp(-alpha f_t(w_t^j)) / sum_{i in S_t} v_t^i exp(-alpha f_t(w_t^i))
        vbar^{t+1} = 1 / (t + 1),   vbar^j = (1 - 1 / (t + 1)) vhat^j      j in S_t
        S_{t+1} = {j in S_t alive at round t + 1} + {t + 1}
        v_{t+1}^j = vbar^j / sum_{i in S_{t+1}} vbar^i                    j in S_{t+1}

    in the paper's order: the multiplicative update (normalized over all of S_t), the addition
    step, the pruning step, and the renormalization over S_{t+1}. Without pruning the last sum
    is 1 and this is Algorithm 1 line for line; with it, the weight of the experts dropped goes
    to all of S_{t+1} in proportion, the new expert's included (it holds 1/(t + 1) / Z >=
    1/(t + 1)), which keeps what the regret bound uses: the new expert's weight at least
    1/(t + 1) and each other's at least (1 - 1/(t + 1)) vhat^j. Here alpha is the
    exp-concavity of the loss (``alpha``), f_t the base learner's loss at round t evaluated at
    each expert's own point, and ``w_1 = w_1^1``, the base learner's own first point (in its
    set: the simplex's centre for a simplex base). Pruning keeps the expert started at round
    ``j = r 2^k`` (r odd) until round ``j + 2^(k+2)`` (the paper's lifetime of j, 2^(k+2) + 1
    rounds, counting round j), so at most 3 experts of each k are live and ``3 * levels`` slots
    hold them all while the experts started have ``k < levels``: O(log T) experts (the expert of ``r 2^k`` takes slot
    ``3k + ((r - 1) / 2 mod 3)``, whose last holder has expired). The update of round t starts
    the expert of round t + 1, so a run of T rounds needs ``T + 1 < 2^levels``: ``max_rounds``
    is ``2^levels - 2``, and the runner refuses a longer run naming ``levels``
    (``checks.check_rounds``) rather than overwrite a live expert (the slots are a fixed shape
    under ``jit``, so they cannot grow). With exp-concave losses and ONS experts (the default)
    the regret on every interval ``[r, s]`` is O(d log^2 T), the paper's adaptive regret.

    **Its defaults need tuning for regression.** Its experts are ONS learners (``gamma`` 0.5) whose
    steps assume bounded gradients, so the intercept does not reach targets on a raw scale within a
    pass: with the defaults and the default pipeline it loses to the mean on diabetes (held-out MSE
    28,280 against the mean's 4,965) and TrumpApproval (1,641 against 2.82)
    (``benchmarks/default_learner.py --registry``; docs/choosing-a-learner.md). Set the base's
    ``gamma`` and ``epsilon`` to the losses' scale, or use ``ogd`` at a constant rate (``train``'s
    default for regression); as a classifier its defaults beat the majority class on the four
    classification sets.
    """

    base: Learner = ONS(0.5, 1.0)
    alpha: float = hyper(0.5, gt=0)
    levels: int = hyper(16, ge=1, le=28, integer=True)  # 4 << k stays within int32

    rounds_key = "levels"

    @property
    def max_rounds(self):
        """The most rounds the ``3 * levels`` slots hold without overwriting a live expert."""
        return 2**self.levels - 2

    @property
    def loss(self):
        return self.base.loss

    @property
    def classes(self):
        """The experts' number of classes (multiclass experts), for the checks of the targets."""
        return getattr(self.base, "classes", 0)

    def init(self, num_features):
        slots = 3 * self.levels
        one = self.base.init(num_features)
        experts = jax.tree.map(lambda a: jnp.broadcast_to(a, (slots, *a.shape)), one)
        first = jnp.arange(slots) == 0
        return FLHState(
            jnp.ones((), jnp.int32),
            self.base.weights(one),
            experts,
            jnp.where(first, 0.0, DEAD).astype(jnp.float32),
            first.astype(jnp.int32),
            jnp.where(first, 1 + 4, 0).astype(jnp.int32),
        )

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        t = state.t
        live = (state.start > 0) & (state.expiry >= t)
        predictions = jax.vmap(self.base.predict, (0, None))(state.experts, x)
        losses = jax.vmap(self.loss.value, (0, None))(predictions, y)
        losses = jnp.minimum(jnp.nan_to_num(losses, nan=jnp.inf), jnp.finfo(jnp.float32).max)
        log_v = jnp.where(live, state.log_v - self.alpha * losses, -jnp.inf)
        experts = jax.vmap(self.base.update, (0, None))(state.experts, example)
        # the expert of round t + 1 = r 2^k, and which of the others stay
        i = t + 1
        k = jnp.minimum(_trailing_zeros(i), self.levels - 1)
        slot = 3 * k + ((i >> k) - 1) // 2 % 3
        here = jnp.arange(log_v.shape[0]) == slot
        stay = live & (state.expiry >= i) & ~here
        # the multiplicative update, normalized over all of S_t (the live experts, pruned or not)
        log_v = log_v - _log_sum(log_v, live)
        # the addition step, then the pruning step, then the weights renormalized over S_{t+1}
        n = i.astype(jnp.float32)
        log_v = jnp.where(stay, log_v + jnp.log1p(-1.0 / n), jnp.where(here, -jnp.log(n), -jnp.inf))
        log_v = jnp.where(stay | here, log_v - _log_sum(log_v, stay | here), DEAD)
        fresh = self.base.init(state.w.shape[-1])
        experts = jax.tree.map(lambda a, b: jnp.where(_along(here, a), b, a), experts, fresh)
        start = jnp.where(here, i, jnp.where(stay, state.start, 0))
        expiry = jnp.where(here, i + jnp.left_shift(4, k), jnp.where(stay, state.expiry, 0))
        v = jnp.exp(log_v)
        w = jnp.tensordot(v, jax.vmap(self.base.weights)(experts), axes=1) / jnp.sum(v)
        return FLHState(t + 1, w.astype(state.w.dtype), experts, log_v.astype(jnp.float32), start, expiry)


def _log_sum(log_v, mask):
    """``log sum_{mask} exp(log_v)``, shifted by its largest term (``mask`` is never empty: the
    expert started at round t is live at t and stays at t + 1)."""
    top = jnp.max(jnp.where(mask, log_v, -jnp.inf))
    return top + jnp.log(jnp.sum(jnp.where(mask, jnp.exp(log_v - top), 0.0)))


def _along(mask, a):
    """``mask`` (slots,) shaped to broadcast against a stacked leaf ``a`` (slots, ...)."""
    return mask.reshape(mask.shape + (1,) * (a.ndim - 1))
