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

from ocolearn.features import Sparse, add_scaled, floor_log2, last_feature, norm, power_of_two, sqnorm
from ocolearn.parts import ConfigError, Part, concrete, cond, hyper


class Projection(Part, family=True):
    """A projection onto a closed convex set: ``projection(w) -> w``."""

    def __call__(self, w):
        raise NotImplementedError

    carries_norm = False  # the set's step uses ||w||^2, carried from round to round (the L2 ball)

    def update(self, w, a, x, wx, ww, intercept=False, t=None):
        """``(P(w + a x), ||P(w + a x)||^2)`` given ``wx = w . x`` and ``ww = ||w||^2``.

        The step of a projected learner in one call, so that a set can avoid extra passes over
        the weights. ``ww`` is a float32 scalar; by default the second value is ``ww`` itself: only
        sets that use the norm keep it. ``intercept``: the last coordinate is an intercept's weight, stepped but not
        projected (``keep_last``). ``t``: the round (the L2 ball re-sums its carried norm at
        rounds fixed by t).
        """
        return keep_last(self, add_scaled(w, a, x), intercept), ww

    def norm_state(self):
        """The initial carried ``ww`` of ``update`` (at w = 0): a scalar. (Not a vector with room
        for a compensation term: under ``vmap`` the stacked ``(configurations, 2)`` carry was
        written through a padding loop that cost a 256-configuration sweep a quarter of its time,
        ``benchmarks/bench_sweep.py``.)"""
        return jnp.zeros((), jnp.float32)

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
    """The L2 ball's carried ``ww = ||w||^2`` summed from ``w`` itself."""
    return sum_of_squares(head(w) if intercept else w)


def head(v):
    """``v`` with its last coordinate set to 0: the weights an intercept's projection sees."""
    return v.at[..., -1].set(0)


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


RESUM_EVERY = 16  # the L2 ball's carried ||w||^2 is re-summed from w after every so many rounds (a power of two)
UNIT = 2.0**-24  # u, float32's unit roundoff


def unit_of(radius):
    """``k = 2^-32 / radius`` rounded to a power of two (``2^(-32 - e)`` for ``radius = m 2^e``,
    0.5 <= m < 1, the exponent clipped to [-63, 63]). Scaling by a power of two changes no bits, so
    ``k^2 ||w + a x||^2`` gives the factor of ``||w + a x||^2`` itself, but it cannot overflow for
    steps up to ``|a| ||x|| = 2^32 1.8e19 radius`` (float32 squares overflow beyond 1.8e19), and
    the ball's own scale, ``(k radius)^2 >= 2^-66``, stays far above float32's smallest normal
    number.

    Read from the bits: e = floor_log2(radius) + 1, so k = 2^clip(-33 - floor_log2(radius), -63, 63)
    (a subnormal radius, floor_log2 -127, gets 2^63, as for the smallest normal ones). A few
    integer operations where ``frexp`` and ``ldexp`` took some thirty with their special cases, in
    every round: XLA does not hoist them out of the loop."""
    return power_of_two(jnp.clip(-33 - floor_log2(radius), -63, 63))


@jax.custom_batching.custom_vmap
def factors(S, kr, a):
    """``(f, f a)`` with ``f = min(1, kr / sqrt(S))``: one reciprocal square root on the path
    of a round. Under ``vmap`` (a sweep) ``kr / sqrt(max(S, kr^2))`` and ``kr a / sqrt(...)``
    instead (exactly 1 and a where S <= kr^2, as sqrt(fl(y^2)) = y): ending in a division, each
    is one buffer that the (configurations, d) update loop reads. With the ``min`` XLA:CPU fused
    ``min`` and ``f a``, and with them the round's step, into that loop (a 256-configuration
    sweep 11% slower, ``benchmarks/bench_sweep.py``); with the divisions a single run at d = 10
    is 8% slower."""
    f = jnp.minimum(1.0, kr * jax.lax.rsqrt(jnp.maximum(S, 0.0)))
    return f, f * a


@factors.def_vmap
def _batched_factors(axis_size, in_batched, S, kr, a):
    S, kr, a = (
        v if batched else jnp.broadcast_to(v, (axis_size, *jnp.shape(v)))
        for v, batched in zip((S, kr, a), in_batched, strict=True)
    )
    root = jnp.sqrt(jnp.maximum(S, kr * kr))
    return (kr / root, (kr * a) / root), (True, True)


@jax.custom_batching.custom_vmap
def scaled_step(f, fa, a, w, x):
    """The projected step ``f (w + a x)`` of a single run, with ``fa = f a``: the factor f comes
    last, one multiplication after it on the round's path (``f w + (f a) x`` takes two, and at
    d = 10, where a round is its latency, ran 4% slower). Under ``vmap`` (a sweep) ``f w + (f a)
    x`` instead: there XLA:CPU fused the sum ``w + a x``, with a's own computation, into the
    (configurations, d) update loop, and a 256-configuration sweep took 0.38 s where this takes
    0.33 (``benchmarks/bench_sweep.py``). Both are within the rounding ``L2Ball.update`` allows."""
    return f * add_scaled(w, a, x)


@scaled_step.def_vmap
def _batched_scaled_step(axis_size, in_batched, f, fa, a, w, x):
    axes = jax.tree.map(lambda batched: 0 if batched else None, in_batched)
    step = jax.vmap(lambda f, fa, a, w, x: add_scaled(f * w, fa, x), in_axes=tuple(axes), axis_size=axis_size)
    return step(f, fa, a, w, x), True


def squares(x):
    """``||x||^2`` of an example: dense as the dot ``x @ x``, which XLA:CPU vectorizes (``jnp.sum``
    is a chain of additions in order); sparse as ``sqnorm``. x is the same in every configuration
    of a sweep, so the sum does not depend on how many run at once."""
    return sqnorm(x) if isinstance(x, Sparse) else x @ x


class L2Ball(Projection, name="l2_ball"):
    """F = {u : ||u||_2 <= radius}: ``P(w) = w min(1, radius / ||w||)``.

    The post's ``l2Projection lambda``; ``radius`` is its lambda.
    """

    radius: float = hyper(1.0, gt=0)
    carries_norm = True

    def __call__(self, w):
        # Safe at w = 0, where any factor leaves w unchanged.
        return w * jnp.minimum(1.0, self.radius / jnp.maximum(norm(w), jnp.finfo(w.dtype).tiny))

    def update(self, w, a, x, wx, ww, intercept=False, t=None):
        """``P(w + a x) = f (w + a x)`` with ``f = min(1, radius / ||w + a x||)``, in O(1) besides
        the step itself: ``S = U + a (2 wx + a ||x||^2)`` with ``U = ww`` an upper bound of
        ``||w||^2`` carried from round to round, and ``f = radius / sqrt(S)``
        where ``S > radius^2`` (``factors``). With ``intercept`` the last coordinate takes its
        step unprojected and stays out of ``U``, ``wx`` and ``||x||^2``.

        Why so. Summing ``||w||^2`` afresh each round puts a reduction over the weights into
        every round; under ``vmap`` it is a batched matrix-vector product that XLA does not fuse
        (a 256-configuration sweep at half speed, issue 10). What lies between one round's
        weights and the next's is the round's latency: here ``S`` (three multiply-adds), one
        reciprocal square root and the step; the new bound ``U'`` is computed beside the next
        round's ``w . x``. The previous version carried ``||w||^2`` as a double float
        (error-free sums and products) and took the factor from ``step_norm`` (2 square roots, 3
        divisions): 15 M examples/s at d = 10 where this runs 29 (``benchmarks/bench_ogd.py``).

        How it stays exact: ``U`` never falls below ``||w||^2`` of the weights stored (up to the
        float32 sums ``wx``, ``||x||^2`` and the re-sum, below), so the factor can only err inwards.
        With v = w + a x (exact), ``T = |a| (2 |wx| + |a| ||x||^2)``, p = f ||w||, q = f |a| ||x||
        and u = 2^-24, to first order in u: (1) ``S`` is four roundings (or fewer, fused) from ``U +
        a (2 wx + a ||x||^2) >= ||v||^2``: within ``u U + 4 u T``. (2) The weights stored, ``fl(fl(f
        w_i) + fl(f a) x_i)``, are within ``u/2 (|f w_i| + |f v_i| + 2 |f a x_i|)`` of ``f v_i`` (a
        single run's ``fl(f fl(w_i + a x_i))``, ``scaled_step``, within ``u/2 (2 |f v_i| + |f a
        x_i|)``, no more as ``|v_i| <= |w_i| + |a x_i|``), so their squared norm exceeds ``f^2
        ||v||^2`` by at most ``u (p + q)(2 p + 3 q) <= u (2.5 p^2 + 15.5 q^2) <= u f^2 (2.5 U + 15.5
        T)`` (5pq <= 0.5 p^2 + 12.5 q^2; a^2 ||x||^2 <= T). Where steps fall below half an ulp of
        the weights this goes one way round after round (the stored weights do not move while the
        formula says they do), so it is added, not hoped away. (3) ``U' = fl(f fl(f fl(S + m)))``
        rounds the sum by u and the products by 2u. So ``M = f^2 m = u f^2 (8 U + 24 T)`` covers (1)
        to (3), which need ``6.5 U + 22.5 T`` (m's own four roundings take at most 4u of it). f
        itself needs no accuracy: ``U'`` is computed from the f applied (where S > radius^2, ``f^2
        S`` is radius^2 to a few u).

        The drift, and the re-sum. Each margin moves ``U`` above ``||w||^2`` for good, and a
        projection keeps the gap (it sets ``U'`` to radius^2 and the weights a gap's worth
        inside). So after every ``RESUM_EVERY`` = 16 rounds (t a multiple of 16: the same rounds
        in a run in chunks, and in every configuration of a sweep, where the ``lax.cond`` on t
        stays a branch) ``U`` is re-summed from the new weights (``carried_sum``). Between
        re-sums the margins add up to at most ``16 u (8 + 24 (2 rho + rho^2))`` of ``||w||^2``
        (rho = |a| ||x|| / ||w||, the step relative to the weights; 7.6e-6 for small steps): the
        iterate lies inside the ball by at most that much relative to the exact projection (half
        of it in the norm).

        What remains, and the bound for the steps allowed. Not bounded above: the float32 sums
        ``wx`` and ``||x||^2``, an error of ``f^2 (2 a dwx + a^2 dxx)``, and the re-sum's own (one
        float32 sum of squares, as in ``__call__``). In the worst case one round's is ``(2 rho +
        rho^2) gamma_d ||w||^2`` (gamma_d = d u / (1 - d u)); but rounding errors are of either
        sign and independent (Higham and Mary 2019, "A new approach to probabilistic rounding
        error analysis", SIAM J. Sci. Comput. 41(5), Theorem 2.4): the sum over the k <= 16
        rounds between re-sums is at most ``lambda sqrt(k d) (2 rho + rho^2) u ||w||^2`` with
        probability at least ``1 - 2 exp(-lambda^2 / 2)``. For steps ``rho <= 1 / (4 sqrt(d))``
        and lambda = 8 (probability 1 - 3e-14 for each 16 rounds) that is at most 8 * 4 * 0.56 u
        = 1.1e-6 of ``||w||^2``: ``||w|| <= r (1 + 0.6e-6)``, to which the factor's rounding (2u)
        adds. Larger steps move the error further in proportion, but a step that leaves the ball
        is projected, and the factor f^2 < 1 shrinks the error carried in. Measured
        (``tests/test_defects.py``): over 10^7 rounds ``||w|| <= r (1 + 1e-6)``; at d = 1 and 2,
        where the sums are (nearly) exact, ``U`` is never more than 2u below ``||w||^2`` (it
        was 0.5u below at worst, the re-sum's rounding); without the margin it fell 18u below,
        never re-summed an inactive ball's ``U`` was 1% above ``||w||^2`` after 20,000 rounds,
        and with neither the iterate left the ball.

        Huge steps. f comes from ``k^2 S`` (``unit_of``: the same bits), which does not overflow for
        steps up to 2^32 1.8e19 radii (in a single run, and up to 3.4e38, float32's largest number,
        in each coordinate ``a x_i``: beyond, ``w + a x`` is infinite); where ``S`` itself does,
        ``U'`` is ``(1 + 16 u) radius^2`` (f < 1 there, and ``||w'|| <= radius (1 + 2u)``). Beyond,
        ``U'`` is NaN, and so are the next round's weights: a run that diverged that far is reported
        as diverged.
        """
        xx = squares(x)
        if intercept:
            xl, wl = last_feature(x), w[..., -1]
            wx, xx = wx - wl * xl, jnp.maximum(xx - xl * xl, 0.0)
        top, r = ww, self.radius
        k = unit_of(r)  # k^2 multiplies what is known before a: the path to f is that of S
        kk = k * k
        S_k = kk * top + a * (2.0 * (kk * wx) + a * (kk * xx))
        f, fa = factors(S_k, k * r, a)
        new = scaled_step(f, fa, a, w, x)
        if intercept:
            new = new.at[..., -1].set(wl + a * xl)
        # U' = f (f (S + m)) with m = u (8 U + 24 T), T = p + q: f^2 m = M. f last, so that huge
        # steps neither overflow nor underflow (f^2 alone can be below float32's smallest normal
        # number). Each term of m is a product by a power of two (24 u p = 16 u p + 8 u p), which is
        # exact: fused into a multiply-add or not, every sum gives the same bits. (XLA:CPU fused
        # M's sums of products in some vectorized loops and not in others, and a sweep's bits
        # depended on how many configurations ran at once.)
        S, abs_a = top + a * (2.0 * wx + a * xx), jnp.abs(a)
        p, q = abs_a * (2.0 * jnp.abs(wx)), abs_a * (abs_a * xx)  # T = p + q
        m = 8 * UNIT * top + 16 * UNIT * p + 8 * UNIT * p + 16 * UNIT * q + 8 * UNIT * q
        bound = jnp.where(jnp.isfinite(S), f * (f * (S + m)), (1 + 16 * UNIT) * (r * r))
        # Beyond 2^32 1.8e19 radii even k^2 S overflows and f is 0: not silently, the next
        # round's factor, and so the weights, are NaN (a diverged run says so).
        bound = jnp.where(jnp.isfinite(S_k), bound, jnp.nan)
        if t is None:
            return new, bound
        due = (t & (RESUM_EVERY - 1)) == 0  # t % RESUM_EVERY == 0 for t >= 1, without the signed remainder
        return new, cond(due, partial(carried_sum, new, intercept), lambda: bound)

    def in_norm(self, v, h, iterations=64):
        """``u_i = h_i v_i / (h_i + mu)`` with the ``mu >= 0`` at which ``||u|| = radius`` (the
        KKT conditions of the diagonal-norm projection; ``||u(mu)||`` falls as mu grows), found
        by bisection to float precision; ``u = v`` inside. In units of ``max(h)``
        (``q = h / max(h)``, ``s = mu / max(h)`` in ``[0, ||v|| / radius]``), so huge h are fine.
        The bisection runs only where v is outside (``lax.cond``; under ``vmap`` both branches
        run and the outside ones are kept, as a ``where`` would), with the same bits; what a
        round costs either way: ``benchmarks/bench_projected_rounds.py``."""
        length = norm(v)
        return cond(length > self.radius, lambda: self._bisect(v, h, length, iterations), lambda: v)

    @partial(jax.jit, static_argnames="iterations")
    def _bisect(self, v, h, length, iterations):
        """``in_norm``'s point for a ``v`` outside the ball. Compiled on its own (inside a
        compiled function, XLA inlines it): a ``fori_loop`` called eagerly compiles at every call."""
        tiny = jnp.finfo(v.dtype).tiny
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
        return self(u_of(hi))

    def diameter(self, size):
        return 2.0 * float(self.radius)

    def max_norm(self, size):
        return float(self.radius)


PAIRWISE_UP_TO = 128  # entries; more: by sorting (benchmarks/bench_projected_rounds.py measures both)


def _simplex_threshold(v, z):
    """The theta with ``sum(max(v - theta, 0)) = z`` (Duchi et al. 2008, Figure 1): by comparing
    every pair of entries up to ``PAIRWISE_UP_TO`` entries, by sorting beyond."""
    return _threshold_by_pairs(v, z) if v.size <= PAIRWISE_UP_TO else _threshold_by_sorting(v, z)


def _threshold_by_sorting(v, z):
    """Figure 1: ``mu`` the entries in decreasing order, ``f(k) = (mu_1 + ... + mu_k - z) / k``,
    ``theta = f(rho)`` with ``rho`` the last k such that ``mu_k > f(k)``."""
    mu = jnp.sort(v)[::-1]
    cumsum = jnp.cumsum(mu)
    j = jnp.arange(1, mu.size + 1, dtype=v.dtype)
    rho = jnp.sum(mu - (cumsum - z) / j > 0)
    # rho >= 1 whenever z > 0; the guards keep z = 0 finite (theta = max(v), P(w) = 0).
    return (jnp.take(cumsum, jnp.maximum(rho - 1, 0)) - z) / jnp.maximum(rho, 1)


def _threshold_by_pairs(v, z):
    """Figure 1's theta without a sort: ``theta = f(rho) = max_k f(k)`` (Condat 2016, "Fast
    projection onto the simplex and the l1 ball", section 2), since ``f(k + 1) - f(k) = (mu_{k+1} -
    f(k)) / (k + 1)`` and ``mu_{k+1} > f(k)`` iff ``mu_{k+1} > f(k + 1)``, which holds exactly for
    the k + 1 <= rho: f rises up to rho and not after it. For each entry i, f at the count of the
    entries >= v_i is their sum less z over that count, and theta is the largest of these (rho
    ends a run of tied entries: a tie mu_{rho+1} = mu_rho > f(rho) would put rho + 1 <= rho). At
    z = 0 it is max(v). O(d^2) comparisons and sums, vector instructions in one loop where XLA:CPU's
    sort is a call of its own."""
    at_least = v[None, :] >= v[:, None]  # row i: the entries >= v_i
    sums = jnp.sum(jnp.where(at_least, v[None, :], 0.0), axis=1)
    return jnp.max((sums - z) / jnp.sum(at_least, axis=1).astype(v.dtype))


class L1Ball(Projection, name="l1_ball"):
    """F = {u : ||u||_1 <= radius}, exactly (Duchi, Shalev-Shwartz, Singer and Chandra 2008,
    Figure 1 on |w|; theta by ``_simplex_threshold``): ``P(w) = sign(w) max(|w| - theta, 0)``;
    ``P(w) = w`` inside. The threshold is found only where w is outside (``parts.cond``; under
    ``vmap`` both branches run and the outside ones are kept): inside, ``sign(w) max(|w| - 0, 0)``
    is w itself, bit for bit."""

    radius: float = hyper(1.0, gt=0)

    def __call__(self, w):
        inside = jnp.sum(jnp.abs(w.reshape(-1))) <= self.radius  # (a NaN sum is not inside)
        return cond(~inside, self._shrink, lambda w: w, w)

    def _shrink(self, w):
        """The projection of a ``w`` outside the ball."""
        flat = w.reshape(-1)
        a = jnp.abs(flat)
        return (jnp.sign(flat) * jnp.maximum(a - _simplex_threshold(a, self.radius), 0.0)).reshape(w.shape)

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
