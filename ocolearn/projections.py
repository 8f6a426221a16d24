"""Euclidean projections ``P(w) = argmin_{u in F} ||u - w||`` onto convex sets F.

Each projection works on weights of any shape (``(d,)`` or ``(K, d)``, taken as one vector)
and knows two numbers of its set for the OGD regret bound (Zinkevich 2003): ``diameter(size)``,
``max_{u, v in F} ||u - v||``, and ``max_norm(size)``, ``max_{u in F} ||u||``, where ``size`` is
the number of weights. Unbounded sets give ``inf``.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ocolearn.features import add_scaled, last_feature, norm, sqnorm
from ocolearn.parts import ConfigError, Part, concrete, hyper


class Projection(Part, family=True):
    """A projection onto a closed convex set: ``projection(w) -> w``."""

    def __call__(self, w):
        raise NotImplementedError

    carries_norm = False  # the set's step uses ||w||^2, carried from round to round (the L2 ball)

    def update(self, w, a, x, wx, ww, intercept=False):
        """``(P(w + a x), ||P(w + a x)||^2)`` given ``wx = w . x`` and ``ww = ||w||^2``.

        The step of a projected learner in one call, so that a set can avoid extra passes over
        the weights. By default the second value is ``ww`` itself: only sets that use the norm
        keep it. ``intercept``: the last coordinate is an intercept's weight, stepped but not
        projected (``keep_last``).
        """
        return keep_last(self, add_scaled(w, a, x), intercept), ww

    def norm_state(self):
        """The initial carried ``ww`` of ``update`` (at w = 0)."""
        return jnp.zeros((2,), jnp.float32)

    def refresh(self, t, w, ww, intercept=False):
        """``ww`` after round ``t``, re-summed from ``w`` where the set carries it (``L2Ball``)."""
        return ww

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


def keep_last(projection, v, intercept):
    """``P(v)``, or with ``intercept`` the last coordinate (the last column of ``(K, d)``) kept as
    it is and the set's projection applied to the others: an intercept's weight is not projected
    (scikit-learn leaves its intercept unpenalized)."""
    if not intercept:
        return projection(v)
    return jnp.concatenate([projection(v[..., :-1]), v[..., -1:]], axis=-1)


def carried_sum(w, intercept=False):
    """The L2 ball's carried ``||w||^2`` (``hi + lo`` with ``lo = 0``) summed from ``w`` itself."""
    return jnp.stack([sum_of_squares(head(w) if intercept else w), jnp.zeros((), w.dtype)])


def head(v):
    """``v`` with its last coordinate set to 0: the weights an intercept's projection sees."""
    return v.at[..., -1].set(0)


def two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly (Knuth's TwoSum, any
    magnitudes; Knuth, TAOCP vol. 2, 4.2.2, Theorem B)."""
    s = a + b
    b_virtual = s - a
    return s, (a - (s - b_virtual)) + (b - b_virtual)


def _split(a):
    """Dekker's split of a float32 into two halves of 12 significant bits, ``a = high + low``."""
    c = 4097.0 * a  # 2^12 + 1
    high = c - (c - a)
    return high, a - high


def two_product(a, b):
    """``(p, e)`` with ``p = fl(a b)`` and ``p + e = a b`` exactly, barring overflow and
    underflow (Dekker 1971, "A floating-point technique for extending the available precision",
    mul12; the half products are exact, with or without fused multiply-adds)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def rounding_margin(f, ww, a, xx):
    """At least what rounding the new coordinates ``fl(fl(f w_i) + fl(f a) x_i)`` can add to their
    squared norm: each is within ``u/2 (|f w_i| + |v_i| + 2 |f a x_i|)`` of ``v_i = f (w_i + a x_i)``
    (three roundings and that of ``f a``; u = 2^-24), so with ``p = ||f w||``, ``q = ||f a x||``
    and ``||v|| <= p + q`` the squared norm moves by at most ``u (p + q) (2 p + 3 q)`` (to first
    order; ``ROUNDING`` is u rounded up to cover the rest)."""
    p = f * jnp.sqrt(jnp.maximum(ww[0] + ww[1], 0.0))
    q = f * jnp.abs(a) * jnp.sqrt(xx)
    return ROUNDING * (p + q) * (2.0 * p + 3.0 * q)


def step_increment(a, wx, xx):
    """``||w + a x||^2 - ||w||^2 = 2 a wx + a^2 xx`` as a float32 ``hi`` and the sum of what its
    products and sum round off (exact up to the inputs' own rounding and terms of order u^2)."""
    p, p_low = two_product(2.0 * a, wx)
    aa, aa_low = two_product(a, a)
    q, q_low = two_product(aa, xx)
    total, low = two_sum(p, q)
    return total, low + p_low + q_low + aa_low * xx


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


RESUM_EVERY = 64  # the L2 ball's carried ||w||^2 is re-summed from w after every so many rounds
ROUNDING = 2.0**-24 * (1 + 2.0**-10)  # u (float32's unit roundoff), rounded up


class L2Ball(Projection, name="l2_ball"):
    """F = {u : ||u||_2 <= radius}: ``P(w) = w min(1, radius / ||w||)``.

    The post's ``l2Projection lambda``; ``radius`` is its lambda.
    """

    radius: float = hyper(1.0, gt=0)
    carries_norm = True

    def __call__(self, w):
        # Safe at w = 0, where any factor leaves w unchanged.
        return w * jnp.minimum(1.0, self.radius / jnp.maximum(norm(w), jnp.finfo(w.dtype).tiny))

    def update(self, w, a, x, wx, ww, intercept=False):
        """``P(w + a x) = f (w + a x)`` with ``f = min(1, radius / ||w + a x||)``, in O(1) besides
        the step itself: ``||w + a x||^2 = ww + a (2 wx + a ||x||^2)``, with ``ww = hi + lo`` the
        squared norm carried from round to round as an unevaluated sum of two float32s. With
        ``intercept`` the last coordinate takes its step unprojected and stays out of ``ww``,
        ``wx`` and ``||x||^2``.

        Why carried. Summing ``||w||^2`` afresh from the new weights each round (issue 10) put a
        reduction over the weights into every round; under ``vmap`` it is a batched
        matrix-vector product that XLA does not fuse, and a 256-configuration sweep ran at half
        the speed it now runs at (``benchmarks/bench_sweep.py``). Carried in one float32 it
        drifted (an increment below half an ulp of ``ww`` vanished, every round alike: 4.6% over
        10^6 rounds, and the iterate left an active ball). A single run at d = 10 to 100 gains
        little: the double-float update below is itself a dependency from round to round, about
        as long as the sum it replaces (``benchmarks/bench_ogd.py``).

        How it stays exact. (1) ``step_increment`` and ``two_sum`` add ``a (2 wx + a ||x||^2)``
        to ``hi + lo`` with nothing rounded off (error-free transformations: Knuth's TwoSum,
        Dekker's product; O(u^2) remains, u = 2^-24). (2) ``f`` is computed from float32 sums;
        its own rounding does not add up, because the carried value is multiplied by the exact
        square of the float ``f`` applied (``two_product(f, f)``). (3) The weights stored are the
        rounded ``fl(fl(f w_i) + fl(f a) x_i)``, not ``f (w + a x)``; their squared norm can
        differ by up to ``rounding_margin`` (about 2u ||w||^2), and where steps fall below half an
        ulp of the weights it does so in one direction round after round (then the stored
        weights do not move, while the formula says they do). So the margin is added every
        round: the carried value stays an upper bound of ``||w||^2``, never below it, and the
        factor can only err inwards. (4) ``refresh`` re-sums ``||w||^2`` from the weights after
        every ``RESUM_EVERY`` = 64 rounds, at rounds fixed by t (the same in a run in chunks),
        so the margins add up to at most 64 * 2u (1 + 3 rho)^2 = 7.6e-6 (1 + 3 rho)^2 of
        ``||w||^2`` (rho = |a| ||x|| / ||w||, the step relative to the weights): the iterate lies
        inside the ball by at most that much relative to the exact projection (half of it in
        the norm), and the bound on the other side is that of one float32 sum.

        What remains, and the bound for the steps allowed. The one error not bounded above is
        that of the float32 sums ``wx`` and ``||x||^2`` themselves, ``f^2 (2 a dwx + a^2 dxx)``.
        In the worst case one round's is ``(2 rho + rho^2) gamma_d ||w||^2`` (gamma_d = d u /
        (1 - d u)); but rounding errors are of either sign and independent (Higham and Mary 2019,
        "A new approach to probabilistic rounding error analysis", SIAM J. Sci. Comput. 41(5),
        Theorem 2.4): the sum over the k <= 64 rounds between re-sums is at most
        ``lambda sqrt(k d) (2 rho + rho^2) u ||w||^2`` with probability at least
        ``1 - 2 exp(-lambda^2 / 2)``. For steps ``rho <= 1 / (4 sqrt(d))`` and lambda = 8
        (probability 1 - 3e-14 for each 64 rounds) that is at most 8 * 8 * 0.56 u = 2.1e-6 of
        ``||w||^2``: ``||w|| <= r (1 + 1.1e-6)``, to which the factor's rounding (2u) adds. Larger
        steps move the carried error further in proportion, but a step that leaves the ball is
        projected, and the factor f^2 < 1 shrinks the error carried in. Measured
        (``tests/test_defects.py``): over 10^7 rounds ``||w|| <= r (1 + 1e-6)``; at d = 1 and 2,
        where the sums are exact, the carried value is never more than 2u below ``||w||^2``
        (without the margin it fell 1.4e-6 below, and ``||w||`` reached r (1 + 1.07e-6)).
        """
        xx = sqnorm(x)
        if intercept:
            xl, wl = last_feature(x), w[..., -1]
            wx, xx = wx - wl * xl, jnp.maximum(xx - xl * xl, 0.0)
        tiny = jnp.finfo(w.dtype).tiny
        # The factor from float32 sums (its rounding does not add up: the carried norm below is
        # the exact square of the factor applied); the double float off the round's critical path.
        half = step_norm(ww[0] + ww[1], a, wx, xx)
        f = jnp.minimum(1.0, self.radius / jnp.maximum(half, tiny))
        new = add_scaled(f * w, f * a, x)
        if intercept:
            new = new.at[..., -1].set(wl + a * xl)
        inc, inc_low = step_increment(a, wx, xx)
        hi, lo = two_sum(ww[0], inc)
        lo = ww[1] + inc_low + lo
        ff, ff_low = two_product(f, f)
        top, top_low = two_product(ff, hi)
        hi, lo = two_sum(top, top_low + ff * lo + ff_low * hi + rounding_margin(f, ww, a, xx))
        fallback = jnp.stack([jnp.minimum(f * half, self.radius) ** 2, 0.0])
        carried = jnp.where(jnp.isfinite(hi + lo), jnp.stack([hi, lo]), fallback)
        return new, carried

    def refresh(self, t, w, ww, intercept=False):
        """``ww`` re-summed from ``w`` (``sum_of_squares``, an exact pass) after rounds t that are
        multiples of ``RESUM_EVERY``, else as carried. A ``lax.cond`` in the step: the pass runs
        only in those rounds (under ``vmap`` too, as t is the same in every configuration of a
        sweep), and at rounds fixed by t, so a run in chunks re-sums where the whole run does."""

        resum = partial(carried_sum, w, intercept)
        return jax.lax.cond(t % RESUM_EVERY == 0, resum, lambda: ww.astype(w.dtype))

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
