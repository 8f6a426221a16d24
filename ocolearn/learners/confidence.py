"""The confidence-weighted family with diagonal covariance: CW, AROW and SCW-I/II.

Each keeps a Gaussian over weight vectors, mean ``w`` and diagonal covariance ``sigma``, and
predicts with the mean. A round computes the margin ``m`` and its variance ``v``:

- binary (labels +-1): ``m = y (w . x)``, ``v = sum_i sigma_i x_i^2``;
- multiclass (``classes = K``, labels 0..K-1, ``w`` and ``sigma`` of shape (K, d)), the
  single-constraint top-1 form of Crammer, Dredze and Kulesza (2009): with r the best-scoring
  wrong class, ``m = w_y . x - w_r . x`` and ``v = sum_i (sigma_yi + sigma_ri) x_i^2``;

then a rule gives ``alpha`` and the mean moves by ``alpha sigma x`` toward y (and away from r):
``w <- w + alpha y sigma x`` (binary), ``w_y += alpha sigma_y x``, ``w_r -= alpha sigma_r x``.
Only the features of x change, so a step is O(nnz) on sparse x.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import ndtri

from ocolearn.features import dot, local, put, values
from ocolearn.learners.base import Learner
from ocolearn.losses import Hinge, MulticlassHinge, _toward_rival
from ocolearn.parts import hyper


class GaussianState(NamedTuple):
    t: jax.Array
    w: jax.Array  # the mean
    sigma: jax.Array  # the diagonal of the covariance


def _safe(v):
    return jnp.where(v > 0, v, 1.0)


class _DiagonalGaussian(Learner, static=("classes",)):
    """The shared round of the family; subclasses give ``rule(m, v) -> (alpha, new_sigma)``."""

    classes: int = hyper(0, ge=2, integer=True, also=(0,))
    variance: float = hyper(1.0, gt=0)  # the initial sigma (a in the papers)

    @property
    def loss(self):
        return MulticlassHinge() if self.classes else Hinge()

    def init(self, num_features):
        shape = (self.classes, num_features) if self.classes else (num_features,)
        ones = jnp.ones(shape, jnp.float32)
        return GaussianState(jnp.ones((), jnp.int32), 0.0 * ones, self.variance * ones)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        xv = values(x)
        w, sigma = local(state.w, x), local(state.sigma, x)
        if self.classes:
            margin, toward_rival = _toward_rival(w @ xv, y)
            sign = -toward_rival[:, None]  # +1 on row y, -1 on row r, 0 elsewhere
            m, v = margin, jnp.sum(jnp.abs(sign) * sigma * xv * xv)
        else:
            sign = jnp.asarray(y, jnp.float32)
            m, v = y * (w @ xv), jnp.sum(sigma * xv * xv)
        alpha, new_sigma = self.rule(m, v, sigma, xv * xv)
        alpha = jnp.where(v > 0, alpha, 0.0)
        w = w + alpha * sign * sigma * xv
        sigma = jnp.where((alpha > 0) & (sign != 0), new_sigma, sigma)
        return GaussianState(state.t + 1, put(state.w, x, w), put(state.sigma, x, sigma))

    def rule(self, m, v, sigma, xx):
        raise NotImplementedError


class CW(_DiagonalGaussian, name="cw"):
    """Confidence-weighted learning (Dredze, Crammer and Pereira 2008), the variance version
    with diagonal covariance, ``phi = Phi^-1(eta)``::

        alpha = max(0, (-(1 + 2 phi m) + sqrt((1 + 2 phi m)^2 - 8 phi (m - phi v))) / (4 phi v))
        w <- w + alpha y sigma x,   1/sigma_i <- 1/sigma_i + 2 alpha phi x_i^2
    """

    eta: float = hyper(0.9, gt=0.5, lt=1)  # a probability: phi = Phi^-1(eta) > 0

    def rule(self, m, v, sigma, xx):
        phi = ndtri(self.eta)
        b = 1.0 + 2.0 * phi * m
        alpha = (-b + jnp.sqrt(jnp.maximum(b * b - 8.0 * phi * (m - phi * v), 0.0))) / (4.0 * phi * _safe(v))
        alpha = jnp.maximum(alpha, 0.0)
        return alpha, sigma / (1.0 + 2.0 * alpha * phi * sigma * xx)


class AROW(_DiagonalGaussian, name="arow"):
    """Adaptive regularization of weight vectors (Crammer, Kulesza and Dredze 2009, Figure 1,
    diagonal)::

        if m < 1:  beta = 1 / (v + r),  alpha = (1 - m) beta
                   w <- w + alpha y sigma x,   sigma_i <- sigma_i - beta sigma_i^2 x_i^2
    """

    r: float = hyper(1.0, gt=0)

    def rule(self, m, v, sigma, xx):
        beta = 1.0 / (v + self.r)
        alpha = jnp.where(m < 1.0, (1.0 - m) * beta, 0.0)
        return alpha, sigma - beta * sigma * sigma * xx


class SCW(_DiagonalGaussian, name="scw", static=("variant",)):
    """Soft confidence-weighted learning (Wang, Zhao and Hoi 2012), SCW-I (``variant = 1``)
    and SCW-II (``variant = 2``), diagonal; ``phi = Phi^-1(eta)``, ``psi = 1 + phi^2 / 2``,
    ``zeta = 1 + phi^2``; on a loss ``max(0, phi sqrt(v) - m) > 0``::

        SCW-I:  alpha = min(C, max(0, (-m psi + sqrt(m^2 phi^4 / 4 + v phi^2 zeta)) / (v zeta)))
        SCW-II: n = v + 1/(2C),  g = phi sqrt(phi^2 m^2 v^2 + 4 n v (n + v phi^2)),
                alpha = max(0, (-(2 m n + phi^2 m v) + g) / (2 (n^2 + n v phi^2)))
        u = (-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v))^2 / 4,  beta = alpha phi / (sqrt(u) + v alpha phi)
        w <- w + alpha y sigma x,   sigma_i <- sigma_i - beta sigma_i^2 x_i^2
    """

    C: float = hyper(1.0, gt=0)
    eta: float = hyper(0.9, gt=0.5, lt=1)
    variant: int = hyper(1, choices=(1, 2))

    def rule(self, m, v, sigma, xx):
        """The formulas above in units of ``S = max(1, sqrt(v))`` (m = S m', v = S^2 v',
        alpha = alpha' / S, beta = beta' / S^2), so that v^2 cannot overflow for huge x."""
        phi = ndtri(self.eta)
        psi, zeta = 1.0 + phi * phi / 2.0, 1.0 + phi * phi
        S = jnp.maximum(1.0, jnp.sqrt(v))
        m1, v1 = m / S, v / (S * S)
        if self.variant == 1:
            root = jnp.sqrt(m1 * m1 * phi**4 / 4.0 + v1 * phi * phi * zeta)
            a1 = jnp.minimum(self.C * S, jnp.maximum(0.0, (-m1 * psi + root) / (_safe(v1) * zeta)))
        else:
            n = v1 + 0.5 / (self.C * S * S)
            g = phi * jnp.sqrt(phi * phi * m1 * m1 * v1 * v1 + 4.0 * n * v1 * (n + v1 * phi * phi))
            a1 = jnp.maximum(0.0, (-(2.0 * m1 * n + phi * phi * m1 * v1) + g) / (2.0 * (n * n + n * v1 * phi * phi)))
        a1 = jnp.where(phi * jnp.sqrt(v) - m > 0, a1, 0.0)
        u = (-a1 * v1 * phi + jnp.sqrt(a1 * a1 * v1 * v1 * phi * phi + 4.0 * v1)) ** 2 / 4.0
        beta = a1 * phi / _safe(jnp.sqrt(u) + v1 * a1 * phi) / (S * S)
        return a1 / S, sigma - beta * sigma * sigma * xx
