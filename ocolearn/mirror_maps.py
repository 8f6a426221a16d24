"""Geometry as a part: a mirror map (a regularizer psi on a feasible set K) for mirror descent
and follow-the-regularized-leader (``ocolearn.learners.omd``, ``ocolearn.learners.ftrl``).

A map works on dual points ``theta`` (gradients live there) and gives, for the linear learners:

- ``zeros(d)``: the dual origin (shape ``(d,)``, or ``(2, d)`` for EG+-);
- ``add(theta, a, x)``: ``theta + a g(x)``, the dual direction of the example's features
  (``x`` itself, or ``(x, -x)`` for EG+-); O(nnz) on sparse x where the map allows;
- ``weights(theta)``: ``nabla psi_K^*(theta) = argmax_{w in K} <theta, w> - psi(w)``, the primal
  weights; FTRL plays ``weights(-eta_t sum_s g_s)``;
- ``project(theta)``: a dual point of the Bregman projection of ``weights(theta)``, i.e.
  ``nabla psi(weights(theta))`` with the constraint's multiplier absorbed: OMD keeps
  ``theta_t = project(...)`` so that ``weights(theta_t) = w_t``.

Maps (Hazan 2016, chapter 5; Orabona 2019, chapter 6):

- ``Euclidean(projection)``: ``psi = ||w||^2 / 2`` on the projection's set; OMD is projected
  OGD (Zinkevich 2003), FTRL its lazy projection.
- ``NegEntropy(radius)``: ``psi = sum_i w_i log w_i`` on ``{w >= 0, sum w = radius}``;
  ``weights = radius softmax(theta)``: OMD is Exponentiated Gradient (Kivinen and Warmuth 1997)
  and, on linear losses, Hedge (Freund and Schapire 1997).
- ``SignedEntropy(radius)``: the entropy on the 2d weights ``(w+, w-)`` with ``||w+||_1 +
  ||w-||_1 = radius`` and ``w = w+ - w-``: EG+- for weights of either sign (Kivinen and Warmuth
  1997).
- ``PNorm(p)``: ``psi = ||w||_q^2 / 2`` with ``1/p + 1/q = 1``, unconstrained;
  ``weights_i = sign(theta_i) |theta_i|^(p-1) / ||theta||_p^(p-2)``: the p-norm algorithms
  (Grove, Littlestone and Schuurmans 2001; Gentile 2003), p = 2 the Euclidean case and
  ``p = 2 ln d`` the choice that makes them behave like EG on sparse targets.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ocolearn.features import add_scaled
from ocolearn.parts import Part, hyper
from ocolearn.projections import Identity, Projection


class MirrorMap(Part, family=True):
    """A regularizer psi on a set K, through the operations on dual points of the module docstring."""

    def zeros(self, num_features: int):
        return jnp.zeros((num_features,), jnp.float32)

    def add(self, theta, a, x):
        return add_scaled(theta, a, x)

    def weights(self, theta):
        raise NotImplementedError

    def project(self, theta):
        return theta


class Euclidean(MirrorMap, name="euclidean"):
    """``psi = ||w||^2 / 2`` on the projection's set: ``weights = project = P``."""

    projection: Projection = Identity()

    def weights(self, theta):
        return self.projection(theta)

    def project(self, theta):
        return self.projection(theta)


def _normalized(theta, radius):
    """``theta - logsumexp(theta) + log(radius)``: the log-weights of the simplex point
    ``radius softmax(theta)`` (the entropy's Bregman projection is a normalization)."""
    return theta - jax.nn.logsumexp(theta) + jnp.log(radius)


class NegEntropy(MirrorMap, name="neg_entropy"):
    """``psi = sum_i w_i log w_i`` on ``{w >= 0, sum_i w_i = radius}``:
    ``weights(theta) = radius softmax(theta)``, and OMD's step is EG's
    ``w_{t+1,i} = w_{t,i} exp(-eta_t g_{t,i}) / Z_t``."""

    radius: float = hyper(1.0, gt=0)

    def weights(self, theta):
        return self.radius * jax.nn.softmax(theta.reshape(-1)).reshape(theta.shape)

    def project(self, theta):
        return _normalized(theta, self.radius)


class SignedEntropy(MirrorMap, name="signed_entropy"):
    """EG+-: the entropy on ``(w+, w-)`` (a ``(2, d)`` dual point) on
    ``{w+, w- >= 0, sum(w+) + sum(w-) = radius}``, with ``w = w+ - w-``. The example's
    direction is ``(x, -x)``, so OMD's step is Kivinen and Warmuth's
    ``w+_i <- w+_i exp(-eta g_i) / Z``, ``w-_i <- w-_i exp(eta g_i) / Z``."""

    radius: float = hyper(1.0, gt=0)

    def zeros(self, num_features):
        return jnp.zeros((2, num_features), jnp.float32)

    def add(self, theta, a, x):
        return add_scaled(theta, jnp.stack([a, -a]), x)

    def weights(self, theta):
        both = self.radius * jax.nn.softmax(theta.reshape(-1)).reshape(theta.shape)
        return both[0] - both[1]

    def project(self, theta):
        return _normalized(theta, self.radius)


class PNorm(MirrorMap, name="p_norm"):
    """``psi = ||w||_q^2 / 2`` (``1/p + 1/q = 1``, p >= 2), unconstrained:
    ``weights_i = sign(theta_i) |theta_i|^(p-1) / ||theta||_p^(p-2)``, computed in units of
    ``max_i |theta_i|`` (it is 1-homogeneous) so that it cannot overflow; 0 at ``theta = 0``."""

    p: float = hyper(2.0, ge=2)

    def weights(self, theta):
        m = jnp.max(jnp.abs(theta))
        u = theta / jnp.where(m > 0, m, 1.0)
        norm_p = jnp.sum(jnp.abs(u) ** self.p) ** (1.0 / self.p)  # >= 1 unless theta = 0
        return m * jnp.sign(u) * jnp.abs(u) ** (self.p - 1.0) / jnp.maximum(norm_p, 1.0) ** (self.p - 2.0)
