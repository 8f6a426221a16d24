"""MetaGrad, a grid of learning rates combined by tilted exponential weights (van Erven and
Koolen 2016)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dense, dot, norm
from ocolearn.learners.base import Learner, ball_in_norm, outside
from ocolearn.losses import Loss, Squared
from ocolearn.parts import cond, hyper
from ocolearn.projections import L2Ball


class MetaGradState(NamedTuple):
    t: jax.Array
    w: jax.Array  # the master's weights
    W: jax.Array  # (k, d): each eta-expert's weights
    Sigma: jax.Array  # (k, d, d): each expert's Sigma_t
    log_pi: jax.Array  # (k,): log weights of the experts, up to a constant


class MetaGrad(Learner, name="metagrad", static=("rates", "intercept")):
    """MetaGrad, full-matrix version (van Erven and Koolen 2016, Algorithms 1 and 2), on the
    ball U of ``radius`` (diameter D = 2 radius) with gradients bounded by G (``lipschitz``).

    Experts on the grid ``eta_i = 2^-i / (5 D G)``, i = 0..k-1 (``rates`` = k; the paper's
    ``ceil(log2(T) / 2) + 1``: the default 8 covers T up to 2^14), with prior
    ``pi_1^i ~ 1 / ((i + 1)(i + 2))``. Each round, with ``g_t`` the gradient at the master's
    ``w_t`` and ``r_t^i = (w_t - w_t^i) . g_t``::

        w_t = sum_i pi_t^i eta_i w_t^i / sum_i pi_t^i eta_i                        (master)
        pi_{t+1}^i ~ pi_t^i exp(eta_i r_t^i - eta_i^2 (r_t^i)^2)                   (surrogate losses)
        Sigma_{t+1}^i = (Sigma_t^i^-1 + 2 eta_i^2 g_t g_t')^-1,   Sigma_1 = D^2 I
        w_{t+1}^i = Pi_U^{Sigma_{t+1}^i}(w_t^i - eta_i Sigma_{t+1}^i g_t (1 - 2 eta_i r_t^i))

    ``Pi_U^Sigma`` is the projection onto U in the norm of ``Sigma^-1`` (an eigendecomposition
    and a 1-D root, as in ``ONS``). Sigma follows by Sherman-Morrison on ``g / ||g||``. Regret
    ``O(sqrt(V_T d log T) + d G D log T)`` with ``V_T = sum_t ((u - w_t) . g_t)^2``; the paper
    assumes D and G known. O(k d^2) a round, O(k d^3) in the rounds where an expert's step
    leaves the ball (``_projected``).

    ``intercept=True``: the last coordinate is an intercept's weight, left out of U (each expert's
    projection bounds the others, ``ball_in_norm``); D = 2 radius still sets the rates and Sigma_1.

    **Its defaults need tuning for regression.** Its rates and domain assume ``lipschitz`` = 1 and
    ``radius`` = 1, so the intercept does not reach targets on a raw scale within a pass: with the
    defaults and the default pipeline it loses to the mean on diabetes (held-out MSE 25,040 against
    the mean's 4,965) and TrumpApproval (206 against 2.82) (``benchmarks/default_learner.py
    --registry``; docs/choosing-a-learner.md). Set ``radius`` and ``lipschitz`` to the data's scale,
    or use ``ogd`` at a constant rate (``train``'s default for regression); as a classifier its
    defaults beat the majority class on the four classification sets.
    """

    radius: float = hyper(1.0, gt=0)
    lipschitz: float = hyper(1.0, gt=0)
    rates: int = hyper(8, ge=1, le=64, integer=True)
    loss: Loss = Squared()
    intercept: bool = False

    def etas(self):
        """The grid of learning rates, largest first."""
        D = 2.0 * self.radius
        return 2.0 ** -jnp.arange(self.rates, dtype=jnp.float32) / (5.0 * D * self.lipschitz)

    def init(self, num_features):
        k, d = self.rates, num_features
        i = jnp.arange(k, dtype=jnp.float32)
        D = 2.0 * self.radius
        Sigma = jnp.broadcast_to(D * D * jnp.eye(d, dtype=jnp.float32), (k, d, d))
        zeros = jnp.zeros((d,), jnp.float32)
        return MetaGradState(
            jnp.ones((), jnp.int32), zeros, jnp.zeros((k, d), jnp.float32), Sigma, -jnp.log((i + 1) * (i + 2))
        )

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        eta = self.etas()
        g = self.loss.derivative(dot(state.w, x), y) * dense(x)
        n = norm(g)
        unit = jnp.where(n > 0, g / jnp.where(n > 0, n, 1.0), 0.0)
        r = (state.w[None, :] - state.W) @ g  # (k,)
        surrogate = jnp.nan_to_num(self._surrogate(eta, r), nan=jnp.inf)
        log_pi = state.log_pi - jnp.minimum(surrogate, jnp.finfo(jnp.float32).max)
        log_pi = log_pi - jnp.max(log_pi)
        # Sherman-Morrison with c = 2 eta^2 and z = Sigma u, written so that n^2 may overflow:
        # Sigma - z z' / (1 / (c n^2) + u'z), and Sigma_{t+1} g = z / (1 / n + c n u'z)
        z = jnp.einsum("kde,e->kd", state.Sigma, unit)
        c = 2.0 * eta * eta
        uz = z @ unit
        moved = n > 0
        safe_n = jnp.where(moved, n, 1.0)
        shrink = jnp.where(moved, 1.0 / (1.0 / (c * safe_n * safe_n) + uz), 0.0)
        Sigma = state.Sigma - jnp.einsum("k,kd,ke->kde", shrink, z, z)
        Sigma_g = z * jnp.where(moved, 1.0 / (1.0 / safe_n + c * safe_n * uz), 0.0)[:, None]
        V = state.W - (eta * self._tilt(eta, r))[:, None] * Sigma_g
        W = self._projected(V, Sigma)
        p = jnp.exp(log_pi) * eta
        w = p @ W / jnp.sum(p)
        return MetaGradState(state.t + 1, w.astype(state.w.dtype), W.astype(state.W.dtype), Sigma, log_pi)

    @staticmethod
    def _surrogate(eta, r):
        """Each expert's surrogate loss at the master's point, ``-eta r + eta^2 r^2``."""
        return -eta * r + eta * eta * r * r

    @staticmethod
    def _tilt(eta, r):
        """The factor ``1 - 2 eta r`` of the surrogate's gradient at the expert's point: with
        ``r(u) = (w - u) . g``, the gradient of ``-eta r(u) + eta^2 r(u)^2`` is
        ``eta g (1 - 2 eta r(u))``."""
        return 1.0 - 2.0 * eta * r

    def _projected(self, V, Sigma):
        """Each expert's step ``V[i]`` projected (``_project``) where it left the ball. The
        eigendecompositions run only in the rounds where one did (``lax.cond``; under ``vmap``,
        in sweeps, both branches run and are selected from, as before): most of a round's time
        where they run (``benchmarks/bench_projected_rounds.py``)."""
        left = outside(L2Ball(self.radius), V, self.intercept)
        return cond(jnp.any(left), self._project_each, lambda V, *_: V, V, Sigma, left)

    @jax.jit
    def _project_each(self, V, Sigma, outside):
        """``_project`` of every expert. Compiled on its own (inside a compiled function, XLA
        inlines it): called eagerly, the ``vmap`` of the ball's ``lax.cond`` compiled at every call."""
        return jax.vmap(self._project)(V, Sigma, outside)

    def _project(self, v, Sigma, outside):
        """``argmin_{||u|| <= radius} (u - v)' Sigma^-1 (u - v)`` (the ball on all but the last
        coordinate with ``intercept``); ``v`` itself unless ``outside``."""
        return jnp.where(outside, ball_in_norm(L2Ball(self.radius), v, Sigma, self.intercept), v)
