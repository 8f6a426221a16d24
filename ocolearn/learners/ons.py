"""Online Newton Step (Hazan, Agarwal and Kale 2007), full and sketched (Luo et al. 2016)."""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.features import dense, dot, norm
from ocolearn.learners.base import Learner, ball_in_norm, outside
from ocolearn.losses import Loss, Squared
from ocolearn.parts import cond, hyper
from ocolearn.projections import Identity, L2Ball, Projection


class ONSState(NamedTuple):
    t: jax.Array
    w: jax.Array
    A_inv: jax.Array  # the inverse of A_t = epsilon I + sum_s g_s g_s', kept by Sherman-Morrison


class ONS(Learner, name="ons", static=("intercept",)):
    """Online Newton Step (Hazan, Agarwal and Kale 2007, Algorithm 2) with a full d x d matrix::

        g_t = loss'(w_t . x_t, y_t) x_t,    A_t = A_{t-1} + g_t g_t',   A_0 = epsilon I
        w_{t+1} = argmin_{u in F} (u - v)' A_t (u - v),   v = w_t - (1 / gamma) A_t^{-1} g_t

    ``A_t^{-1}`` follows by Sherman-Morrison in O(d^2), written with ``g / ||g||`` so that huge
    gradients do not overflow. The generalized projection is the identity, or for the L2 ball
    ``u = Q diag(l / (l + mu)) Q' v`` with ``A_t = Q diag(l) Q'`` and the mu at which
    ``||u|| = radius`` (an eigendecomposition, O(d^3), in each round whose v leaves the ball). Regret
    O((1/alpha + G D) d log T) for alpha-exp-concave losses with gamma = min(1/(4GD), alpha)/2 and
    epsilon = 1 / (gamma^2 D^2) (G bounds the gradients, D is the set's diameter): ``epsilon`` is
    a setting of its own, and its default 1 is that choice only where gamma D = 1.

    ``intercept=True``: the last coordinate is an intercept's weight, left out of the ball: the
    generalized projection bounds the other coordinates and moves the last to where the form is
    least given them (``ball_in_norm``).

    **Its defaults need tuning for regression.** Its steps assume gradients of about unit size
    (``gamma`` = 1, ``epsilon`` = 1), so the intercept does not reach targets on a raw scale within
    a pass: with the defaults and the default pipeline it loses to the mean on diabetes (held-out
    MSE 28,290 against the mean's 4,965) and TrumpApproval (1,658 against 2.82)
    (``benchmarks/default_learner.py --registry``; docs/choosing-a-learner.md). Set ``gamma`` and
    ``epsilon`` to the losses' scale, or use ``ogd`` at a constant rate (``train``'s default for
    regression); as a classifier its defaults beat the majority class on the four classification
    sets.
    """

    gamma: float = hyper(1.0, gt=0)
    epsilon: float = hyper(1.0, gt=0)
    loss: Loss = Squared()
    projection: Projection = Identity()
    intercept: bool = False

    def init(self, num_features):
        eye = jnp.eye(num_features, dtype=jnp.float32)
        return ONSState(jnp.ones((), jnp.int32), jnp.zeros((num_features,), jnp.float32), eye / self.epsilon)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        g = self.loss.derivative(dot(state.w, x), y) * dense(x)
        n = norm(g)
        unit = jnp.where(n > 0, g / jnp.where(n > 0, n, 1.0), 0.0)
        z = state.A_inv @ unit
        A_inv = state.A_inv - jnp.outer(z, z) / (1.0 / (n * n) + unit @ z)  # (A + g g')^-1
        v = state.w - n * (A_inv @ unit) / self.gamma
        if isinstance(self.projection, L2Ball):
            v = self._projected(v, A_inv)
        elif not isinstance(self.projection, Identity):
            raise NotImplementedError("ONS projects onto the identity set or an L2 ball")
        return ONSState(state.t + 1, v.astype(jnp.float32), A_inv)

    def _projected(self, v, A_inv):
        """``v`` projected (``_project``) if it left the ball. The eigendecomposition runs only
        in the rounds where it did (``lax.cond``; under ``vmap``, in sweeps, both branches run
        and are selected from; ``benchmarks/bench_projected_rounds.py``)."""
        return cond(outside(self.projection, v, self.intercept), self._project, lambda v, _: v, v, A_inv)

    def _project(self, v, A_inv):
        """The generalized projection of ``v`` onto the ball in the norm of ``A`` (the intercept's
        weight left out with ``intercept``)."""
        return ball_in_norm(self.projection, v, A_inv, self.intercept)


class SketchedONSState(NamedTuple):
    t: jax.Array
    w: jax.Array
    B: jax.Array  # (m, d) Frequent-Directions sketch of the gradients / c: c^2 B'B ~ sum_s g_s g_s'
    c: jax.Array  # the largest gradient norm so far, so that B's numbers stay in range


def frequent_directions(B, g):
    """Liberty's (2013) Frequent Directions step: put ``g`` in the last row of the sketch
    (zero after every step), then shrink every squared singular value by the smallest one, so
    that the last row is zero again. ``0 <= G'G - B'B`` and ``||G'G - B'B|| <= ||G||_F^2 / m``.
    Via the m x m eigendecomposition of ``B B'``: O(m^2 d)."""
    B = B.at[-1].set(g)
    lam, U = jnp.linalg.eigh(B @ B.T)  # ascending; B = U diag(sqrt(lam)) V'
    lam = jnp.maximum(lam, 0.0)
    keep = jnp.sqrt(jnp.maximum(lam - lam[0], 0.0)) / jnp.sqrt(jnp.where(lam > 0, lam, 1.0))
    return ((keep[:, None] * U.T) @ B)[::-1]  # largest first; the smallest (now zero) last


class SketchedONS(Learner, name="sketched_ons", static=("sketch_size",)):
    """Sketched Online Newton, SON (Luo, Agarwal, Cesa-Bianchi and Langford 2016, Algorithm 1
    with Frequent Directions): ONS with ``A_t`` replaced by ``epsilon I + B_t' B_t``, ``B_t``
    an m-row sketch of the gradients (``frequent_directions``), and each round's weights
    projected onto ``K_t = {w : |w . x_t| <= C}`` in the norm of ``A_{t-1}`` (their step 5)::

        w_t = u_t - tau_C(u_t . x_t) A_{t-1}^{-1} x_t / (x_t' A_{t-1}^{-1} x_t),
              tau_C(p) = sign(p) max(|p| - C, 0),  so that  w_t . x_t = clip(u_t . x_t, -C, C)
        g_t = loss'(w_t . x_t, y_t) x_t,   B_t = FD(B_{t-1}, g_t)
        u_{t+1} = w_t - (1 / gamma) A_t^{-1} g_t

    with ``A^{-1} v = (v - B' (epsilon I_m + B B')^{-1} B v) / epsilon`` (Woodbury), O(m^2 d + m^3)
    a round. ``state.w`` is ``u_t``, and the prediction is ``clip(u_t . x_t, -C, C)``. The
    projection keeps every prediction, and so every gradient, bounded: without it (``C = inf``)
    a sketch that has shrunk a direction away steps along it with the full ``1 / (gamma
    epsilon)`` and the weights diverge (Gaussian regression, d = 8, m = 3: NaN within 2,000
    rounds). ``C`` defaults to 1, the scale of a margin; for regression set it to the range of
    the targets. With ``m > d`` nothing is ever shrunk away and with ``C = inf`` it equals
    ``ONS`` with the identity set. The sketch is kept divided by the largest gradient norm so
    far (FD commutes with scaling), so huge gradients cannot overflow ``B B'``.

    Behind an ``Intercept`` step ``K_t`` bounds the whole prediction, the intercept's part
    included (a bound on ``w . x_t``, not on the weights).

    **Its defaults need tuning for regression.** Its steps assume gradients of about unit size
    (``gamma`` = 1, ``epsilon`` = 1), so the intercept does not reach targets on a raw scale within
    a pass: with the defaults and the default pipeline it loses to the mean on diabetes (held-out
    MSE 28,180 against the mean's 4,965) and TrumpApproval (1,658 against 2.82)
    (``benchmarks/default_learner.py --registry``; docs/choosing-a-learner.md). Set ``gamma`` and
    ``epsilon`` to the losses' scale, or use ``ogd`` at a constant rate (``train``'s default for
    regression); as a classifier its defaults beat the majority class on the four classification
    sets.
    """

    gamma: float = hyper(1.0, gt=0)
    epsilon: float = hyper(1.0, gt=0)
    sketch_size: int = hyper(10, ge=1, integer=True)
    loss: Loss = Squared()
    C: float = hyper(1.0, gt=0, also=(math.inf,))  # inf: no K_t projection

    def init(self, num_features):
        B = jnp.zeros((self.sketch_size, num_features), jnp.float32)
        zero = jnp.zeros((), jnp.float32)
        return SketchedONSState(jnp.ones((), jnp.int32), jnp.zeros((num_features,), jnp.float32), B, zero)

    def predict(self, state, x):
        return jnp.clip(dot(state.w, x), -self.C, self.C)

    def _solve(self, B, c, v):
        """``epsilon A^{-1} v`` for ``A = epsilon I + c^2 B' B``."""
        safe = jnp.where(c > 0, c, 1.0)
        ridge = jnp.maximum(self.epsilon / (safe * safe), jnp.finfo(B.dtype).tiny)
        small = ridge * jnp.eye(B.shape[0], dtype=B.dtype) + B @ B.T  # (epsilon I + c^2 B B') / c^2
        return v - B.T @ jnp.linalg.solve(small, B @ v)

    def update(self, state, example):
        x, y = example
        x = dense(x)
        ux = dot(state.w, x)
        tau = jnp.sign(ux) * jnp.maximum(jnp.abs(ux) - self.C, 0.0)
        direction = self._solve(state.B, state.c, x)  # epsilon A_{t-1}^{-1} x
        length = x @ direction
        w = state.w - jnp.where(tau != 0, tau / jnp.where(tau != 0, length, 1.0), 0.0) * direction
        g = self.loss.derivative(ux - tau, y) * x
        c = jnp.maximum(state.c, norm(g))
        safe = jnp.where(c > 0, c, 1.0)
        B = frequent_directions(state.B * (state.c / safe), g / safe)
        step = self._solve(B, c, g) / self.epsilon
        return SketchedONSState(state.t + 1, w - step / self.gamma, B, c)
