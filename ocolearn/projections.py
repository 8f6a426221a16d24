"""Euclidean projections ``P(w) = argmin_{u in F} ||u - w||`` onto convex sets F.

Each projection works on weights of any shape (``(d,)`` or ``(K, d)``, taken as one vector)
and knows two numbers of its set for the OGD regret bound (Zinkevich 2003): ``diameter(size)``,
``max_{u, v in F} ||u - v||``, and ``max_norm(size)``, ``max_{u in F} ||u||``, where ``size`` is
the number of weights. Unbounded sets give ``inf``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ocolearn.features import add_scaled, norm, sqnorm
from ocolearn.parts import ConfigError, Part, concrete, hyper


class Projection(Part, family=True):
    """A projection onto a closed convex set: ``projection(w) -> w``."""

    def __call__(self, w):
        raise NotImplementedError

    def update(self, w, a, x, wx, ww):
        """``(P(w + a x), ||P(w + a x)||^2)`` given ``wx = w . x`` and ``ww = ||w||^2``.

        The step of a projected learner in one call, so that a set can avoid extra passes over
        the weights. By default the second value is 0: only sets that use the norm keep it.
        """
        return self(add_scaled(w, a, x)), jnp.zeros_like(ww)

    separable = False  # the set is a product of intervals: any diagonal norm projects by clipping

    def in_norm(self, v, h):
        """``argmin_{u in F} sum_i h_i (u_i - v_i)^2`` for ``h >= 0``: the projection in the
        diagonal norm of AdaGrad (Duchi et al. 2011, section 1); the Euclidean one for a
        separable set."""
        if self.separable:
            return self(v)
        raise NotImplementedError(
            f"the {self.name} projection has no diagonal-norm form here; use identity, box, non_negative or l2_ball"
        )

    def diameter(self, size: int) -> float:
        return math.inf

    def max_norm(self, size: int) -> float:
        return math.inf


class Identity(Projection, name="identity"):
    """F = R^d: ``P(w) = w``."""

    separable = True

    def __call__(self, w):
        return w


def sum_of_squares(v):
    """``||v||^2`` as the product of ``v * v`` with a constant vector of ones. Not ``jnp.sum``:
    under ``vmap`` XLA:CPU orders a reduction differently for different batch sizes, and a
    sweep in chunks must give the whole sweep's bits; a product with an unbatched operand is
    the form ``dot(w, x)`` takes in a sweep, which does not."""
    flat = v.reshape(-1)
    return (flat * flat) @ jnp.ones(flat.shape, flat.dtype)


def step_norm(ww, a, wx, xx):
    """``||w + a x||`` from ``ww = ||w||^2``, ``wx = w . x`` and ``xx = ||x||^2``, in O(1):
    relative to ``m = max(1, ||w||, |a| ||x||)``, so a huge step cannot overflow (and small ones
    are not scaled into underflow)."""
    m = jnp.maximum(jnp.maximum(jnp.sqrt(ww), jnp.abs(a) * jnp.sqrt(xx)), 1.0)
    s = a / m
    return m * jnp.sqrt(jnp.maximum(ww / m / m + 2 * s * (wx / m) + s * s * xx, 0.0))


class L2Ball(Projection, name="l2_ball"):
    """F = {u : ||u||_2 <= radius}: ``P(w) = w min(1, radius / ||w||)``.

    The post's ``l2Projection lambda``; ``radius`` is its lambda.
    """

    radius: float = hyper(1.0, gt=0)

    def __call__(self, w):
        # Safe at w = 0, where any factor leaves w unchanged.
        return w * jnp.minimum(1.0, self.radius / jnp.maximum(norm(w), jnp.finfo(w.dtype).tiny))

    def update(self, w, a, x, wx, ww):
        """``P(w + a x) = f (w + a x)`` with ``f = min(1, radius / ||w + a x||)`` and
        ``||w + a x||^2 = ww + 2 a wx + a^2 ||x||^2`` (``step_norm``), so the factor needs no pass
        over the weights of its own.

        The squared norm returned is summed from the new weights themselves (one more pass over
        them, about 1.5x the time of a d = 100 step on CPU), not carried forward by the formula:
        carried in float32 it drifted (increments below half an ulp of ``ww`` vanish), by 4.6%
        over 10^6 rounds of an inactive ball, and the iterate left an active one (issue 10).
        Each round's error is now that of one float32 sum, and does not add up."""
        f = jnp.minimum(1.0, self.radius / jnp.maximum(step_norm(ww, a, wx, sqnorm(x)), jnp.finfo(w.dtype).tiny))
        new = add_scaled(f * w, f * a, x)
        return new, sum_of_squares(new)

    def in_norm(self, v, h, iterations=64):
        """``u_i = h_i v_i / (h_i + mu)`` with the ``mu >= 0`` at which ``||u|| = radius`` (the
        KKT conditions of the diagonal-norm projection; ``||u(mu)||`` falls as mu grows), found
        by bisection to float precision; ``u = v`` inside. In units of ``max(h)``
        (``q = h / max(h)``, ``s = mu / max(h)`` in ``[0, ||v|| / radius]``), so huge h are fine."""
        tiny = jnp.finfo(v.dtype).tiny
        length = norm(v)
        q = h / jnp.maximum(jnp.max(h), tiny)

        def u_of(s):
            return v * jnp.where(q + s > 0, q / jnp.where(q + s > 0, q + s, 1.0), 1.0)

        def halve(_, bracket):
            lo, hi = bracket
            mid = 0.5 * (lo + hi)
            big = jnp.sum(u_of(mid) ** 2) > self.radius**2
            return jnp.where(big, mid, lo), jnp.where(big, hi, mid)

        top = length / jnp.maximum(self.radius, tiny)
        _, hi = jax.lax.fori_loop(0, iterations, halve, (jnp.zeros_like(length), top))
        return jnp.where(length > self.radius, self(u_of(hi)), v)

    def diameter(self, size):
        return 2.0 * float(self.radius)

    def max_norm(self, size):
        return float(self.radius)


def _simplex_threshold(v, z):
    """The theta with ``sum(max(v - theta, 0)) = z`` (Duchi et al. 2008, Figure 1), by sorting."""
    mu = jnp.sort(v)[::-1]
    cumsum = jnp.cumsum(mu)
    j = jnp.arange(1, mu.size + 1, dtype=v.dtype)
    rho = jnp.sum(mu - (cumsum - z) / j > 0)
    # rho >= 1 whenever z > 0; the guards keep z = 0 finite (theta = max(v), P(w) = 0).
    return (jnp.take(cumsum, jnp.maximum(rho - 1, 0)) - z) / jnp.maximum(rho, 1)


class L1Ball(Projection, name="l1_ball"):
    """F = {u : ||u||_1 <= radius}, exactly, by sorting (Duchi, Shalev-Shwartz, Singer and
    Chandra 2008, Figure 1 on |w|): ``P(w) = sign(w) max(|w| - theta, 0)``, theta = 0 inside."""

    radius: float = hyper(1.0, gt=0)

    def __call__(self, w):
        flat = w.reshape(-1)
        a = jnp.abs(flat)
        theta = jnp.where(jnp.sum(a) <= self.radius, 0.0, _simplex_threshold(a, self.radius))
        return (jnp.sign(flat) * jnp.maximum(a - theta, 0.0)).reshape(w.shape)

    def diameter(self, size):
        return 2.0 * float(self.radius)

    def max_norm(self, size):
        return float(self.radius)


class Simplex(Projection, name="simplex"):
    """F = {u : u >= 0, sum(u) = radius} (Duchi et al. 2008, Figure 1):
    ``P(w) = max(w - theta, 0)``."""

    radius: float = hyper(1.0, gt=0)

    def __call__(self, w):
        flat = w.reshape(-1)
        theta = _simplex_threshold(flat, self.radius)
        return jnp.maximum(flat - theta, 0.0).reshape(w.shape)

    def diameter(self, size):
        return math.sqrt(2.0) * float(self.radius) if size > 1 else 0.0

    def max_norm(self, size):
        return float(self.radius)


class Box(Projection, name="box"):
    """F = [lower, upper]^d: ``P(w) = clip(w, lower, upper)``."""

    lower: float = hyper(-1.0)
    upper: float = hyper(1.0)
    separable = True

    def check(self, where=""):
        super().check(where)
        lower, upper = concrete(self.lower), concrete(self.upper)
        if lower is not None and upper is not None and np.any(upper < lower):
            key = f"{where}.upper" if where else "upper"
            raise ConfigError(f"{key} must be >= lower, got upper {upper} < lower {lower}", key)

    def __call__(self, w):
        return jnp.clip(w, self.lower, self.upper)

    def diameter(self, size):
        return math.sqrt(size) * (float(self.upper) - float(self.lower))

    def max_norm(self, size):
        return math.sqrt(size) * max(abs(float(self.lower)), abs(float(self.upper)))


class NonNegative(Projection, name="non_negative"):
    """F = the non-negative orthant: ``P(w) = max(w, 0)``."""

    separable = True

    def __call__(self, w):
        return jnp.maximum(w, 0.0)
