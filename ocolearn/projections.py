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

from ocolearn.features import (
    Sparse,
    add_scaled,
    dot,
    floor_log2,
    is_last,
    last_feature,
    norm,
    power_of_two,
    sqnorm,
    values,
)
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


def carried_sum(w, intercept=False, radius=1.0):
    """The L2 ball's carried ``ww``, an upper bound of ``||c w||^2`` (``carry_unit``: c = 1 for the
    radii in [2^-48, 2^49)), summed from ``w`` itself: the squares of ``c w`` added in pairs level
    by level (``tree_sum``), then raised by a power of two >= ``gamma(h + 3)`` (h = ceil(log2
    size) additions, the square, the raise) and by ``2 size TINY`` (the results XLA flushes to 0), so that it is
    not below ``||c w||^2`` whatever the rounding."""
    v = carry_unit(radius) * (head(w) if intercept else w)
    s = tree_sum(v * v)
    g = gamma(math.ceil(math.log2(max(v.size, 1))) + 3)
    return s + pow2_above(g) * s + 2 * v.size * TINY


def tree_sum(p):
    """The sum of all of ``p``'s entries, added in pairs level by level (a zero joins an odd
    level): each entry passes through ceil(log2 size) additions, so the sum errs by at most
    ``gamma(ceil(log2 size))`` of the sum of |entries|. Only element-wise additions, which XLA
    neither reorders nor batches differently: a sweep in chunks gives the whole sweep's bits."""
    p = p.reshape(-1)
    while p.shape[0] > 1:
        if p.shape[0] % 2:
            p = jnp.concatenate([p, jnp.zeros_like(p[:1])])
        p = p[0::2] + p[1::2]
    return p[0]


def head(v):
    """``v`` with its last coordinate set to 0: the weights an intercept's projection sees."""
    return v.at[..., -1].set(0)


def without_last(x):
    """``x`` with its last feature (the intercept's constant) set to 0, dense or sparse."""
    if isinstance(x, Sparse):
        return Sparse(x.idx, jnp.where(is_last(x), 0.0, x.val), x.dim)
    return jnp.where(is_last(x), 0.0, x)


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
UNIT = 2.0**-24  # u: a float32 rounding to nearest errs by at most u |z| (for |z| in the normal range)
TINY = 2.0**-126  # float32's smallest normal number: XLA flushes smaller results to 0, an error below TINY
INSIDE = 1 - 16 * UNIT  # S <= kr^2 INSIDE: the step stays inside the ball, f = 1 (``factors``)
SMALLEST_RADIUS, LARGEST_RADIUS = 2.0**-100, 2.0**100  # the L2 ball's radii, where its scaled quantities are normal


def gamma(n):
    """``gamma_n = n u / (1 - n u)``: n roundings in a row (a product of n factors ``1 + delta``
    with ``|delta| <= u``) err by at most gamma_n relative, and a float32 sum or dot product of n
    terms, in any order, fused or not, by at most gamma_n of the sum of the |terms| (Higham 2002,
    "Accuracy and Stability of Numerical Algorithms", Lemma 3.1 and (3.5)). A Python float."""
    if n * UNIT >= 0.25:
        raise ValueError(f"the L2 ball's error bounds hold for sums of fewer than 2^22 terms, got {n}")
    return n * UNIT / (1 - n * UNIT)


def pow2_above(c):
    """The least power of two >= c (0 for c = 0): a coefficient by which products are exact, so
    that a sum of them has the same bits fused into a multiply-add or not."""
    return 0.0 if c == 0 else 2.0 ** math.ceil(math.log2(c))


def carry_exponent(radius):
    """The exponent of ``carry_unit(radius)``."""
    e = floor_log2(radius)
    return jnp.clip(jnp.where(jnp.abs(e) <= 48, 0, -e), -126, 126)


def carry_unit(radius):
    """``c``, the unit of the L2 ball's carried ``ww`` (an upper bound of ``||c w||^2``): 1 for
    the radii in [2^-48, 2^49), where ``radius^2`` and u of it are normal float32 numbers, and
    ``2^-floor_log2(radius)`` outside (c radius in [1, 2)), where radius^2 would flush to 0 (below
    1.1e-19: U was 0 and the ball stopped projecting) or overflow."""
    return power_of_two(carry_exponent(radius))


def unit_exponent(radius):
    """The exponent of ``unit_of(radius)``."""
    return jnp.clip(-33 - floor_log2(radius), -63, 63)


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
    return power_of_two(unit_exponent(radius))


def rooted_factor(S, kr):
    """``min(1, kr rsqrt(S))``, a single run's factor as computed."""
    return jnp.minimum(1.0, kr * jax.lax.rsqrt(jnp.maximum(S, 0.0)))


@jax.custom_batching.custom_vmap
def factors(S, kr, a):
    """``(f, f a)`` with ``f = min(1, kr / sqrt(S))``: one reciprocal square root on the path
    of a round. Under ``vmap`` (a sweep) ``kr / max(sqrt(S), kr)`` and ``a / (max(sqrt(S), kr)
    (1 / kr))`` instead: ending in a division, each is one buffer that the (configurations, d)
    update loop reads. With the ``min`` XLA:CPU fused ``min`` and ``f a``, and with them the
    round's step, into that loop (a 256-configuration sweep 11% slower,
    ``benchmarks/bench_sweep.py``); with the divisions a single run at d = 10 is 8% slower.

    Where S <= kr^2 the batched f is exactly 1, but its ``f a`` is not always a: ``kr fl(1 / kr)``
    need not be 1 (13% of random draws differ, by at most 2u; the claim of exactness made before
    was wrong). Neither form takes ``kr^2`` or ``kr a``: with a constant radius XLA turned
    ``(k r)^2`` into ``k^2 r^2`` (infinite for r = 1e30), and ``a / (root / kr)`` into ``a kr /
    root`` (0 for r = 1e-30). ``L2Ball.update``'s proof counts f's rounding as 3u (a reciprocal
    square root within 2u, XLA:CPU's measured 1.25u, and the product) and ``f a``'s as 4 roundings
    from the product.

    On CPU a single run takes f = 1 without the reciprocal square root where ``S <= kr^2 (1 - 16
    u)`` (``INSIDE``), a branch: there, with the threshold's two roundings and rsqrt's 2u, ``kr
    rsqrt(S) >= 1 + 3u``, so the ``min`` gives 1 too and the bits are the same. Where the step
    stays inside the ball the branch takes the square root and the division off the round's path
    (the proof of ``L2Ball.update`` is unchanged: f = 1 exactly there). A pass of projected OGD at
    d = 10 (``benchmarks/bench_ogd.py``'s run) took 38 to 40 ms before and 32 to 33 after; where
    69% of the steps leave the ball, 39 and 32 ms; where every step does, the same time. A GPU
    (not measured here) computes f in every round, as before.
    """
    rooted = partial(rooted_factor, S, kr)
    kr_ = jax.lax.optimization_barrier(kr)  # (XLA turned (k r)^2 into k^2 r^2: inf for r = 1e30, and f = 1)
    branched = lambda: cond(S <= kr_ * kr_ * INSIDE, lambda: jnp.ones_like(kr * S), rooted)  # noqa: E731
    f = jax.lax.platform_dependent(cpu=branched, default=rooted)
    return f, f * a


@factors.def_vmap
def _batched_factors(axis_size, in_batched, S, kr, a):
    S, kr, a = (
        v if batched else jnp.broadcast_to(v, (axis_size, *jnp.shape(v)))
        for v, batched in zip((S, kr, a), in_batched, strict=True)
    )
    root = jnp.maximum(jnp.sqrt(S), kr)
    return (kr / root, a / (root * (1 / kr))), (True, True)


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


def head_sums(w, x, wx):
    """``(x', w . x', ||x'||^2)`` with x' = x less its last feature (``without_last``): the sums
    of the coordinates an intercept's ball projects, each summed on its own (``wx``, the sum with
    the intercept, is not used: ``w . x - w_l x_l`` lost every digit where the intercept's weight
    was large next to the rest)."""
    x = without_last(x)
    return x, dot(w, x), squares(x)


class L2Ball(Projection, name="l2_ball"):
    """F = {u : ||u||_2 <= radius}: ``P(w) = w min(1, radius / ||w||)``.

    The post's ``l2Projection lambda``; ``radius`` is its lambda.
    """

    radius: float = hyper(1.0, gt=0)
    carries_norm = True

    def check(self, where=""):
        """Also: a radius from ``SMALLEST_RADIUS`` to ``LARGEST_RADIUS``, where ``update``'s
        scaled quantities stay normal float32 numbers and its bound is proven."""
        super().check(where)
        r = concrete(self.radius)
        if r is not None and np.any((r < SMALLEST_RADIUS) | (r > LARGEST_RADIUS)):
            key = f"{where}.radius" if where else "radius"
            raise ConfigError(f"{key} must be from 2^-100 to 2^100 (7.9e-31 to 1.3e30), got {r:g}", key)

    def __call__(self, w):
        # Safe at w = 0, where any factor leaves w unchanged.
        return w * jnp.minimum(1.0, self.radius / jnp.maximum(norm(w), jnp.finfo(w.dtype).tiny))

    def update(self, w, a, x, wx, ww, intercept=False, t=None):
        """``P(w + a x) = f (w + a x)`` with ``f = min(1, radius / ||w + a x||)``, in O(1) besides
        the step itself: f from ``S >= ||w + a x||^2`` (the factor ``factors`` takes), found from
        ``U = ww``, an upper bound of ``||w||^2`` carried from round to round, and ``w . x``,
        ``||x||^2``. With ``intercept`` the last coordinate takes its step unprojected and stays
        out of U, and w . x and ||x||^2 are summed without it (x's last feature set to 0, so no
        difference cancels: ``w . x - w_l x_l`` lost every digit where the intercept's weight was
        large). U is carried in units of ``carry_unit`` (``||c w||^2``; c = 1 for the radii in
        [2^-48, 2^49)).

        Why so. Summing ``||w||^2`` afresh each round puts a reduction over the weights into every
        round; under ``vmap`` it is a batched matrix-vector product that XLA does not fuse (a
        256-configuration sweep at half speed, issue 10). What lies between one round's weights
        and the next's is the round's latency: S (a few multiply-adds), one reciprocal square root
        and the step; the next bound U' is computed beside the next round's ``w . x``.

        The guarantee (issue 41), for every radius accepted (``SMALLEST_RADIUS`` to
        ``LARGEST_RADIUS``) and every step whose entries ``a x_i`` are finite: ``||w|| <= radius (1
        + 16 u)`` (u = 2^-24, ``UNIT``; 9.5e-7) after every round, and ``U >= ||c w||^2``. It
        assumes float32 operations rounded to nearest (``|fl(z) - z| <= u |z|``, results below
        ``TINY`` flushed to 0 or not: an error below TINY) and a reciprocal square root within 2u
        (XLA:CPU's: 1.25u at most over 2 10^6 values). Proof, by induction over the rounds, with
        ``gamma`` the bound of n roundings or of an n-term float32 sum in any order, everything in
        units of ``k = unit_of(radius)`` (a power of two: kr = k radius in [2^-33, 2^-32) but for
        the clipped extremes, so that S does not overflow for steps below 2^32 1.8e19 radii),
        b = k a (exact), v = w + a x, n the terms of w . x and ||x||^2:

        (1) ``X = xx (1 + G) + 4 n TINY >= ||x||^2`` for the float32 ``xx`` (squares below TINY
        flush to 0; with a step of 1e18 and r = 1.5 that allowance puts the point 1% inside), and ``|fl(w . x) - w .
        x| <= gamma_n ||w|| ||x|| + 2 n TINY``, with ``G = pow2_above(gamma_{n+4})`` (the +4 covers
        the roundings that form X and E).
        (2) So ``k^2 ||v||^2 <= V + 2 b (k w.x) + b^2 X + |b| E`` with ``V = k^2 U / c^2`` and ``E
        = 2 G max(kr, V / kr) sqrt(X) + k 4 n TINY`` (``sqrt(V) <= max(kr, V / kr)``: one square
        root a round fewer; sqrt(X) serves the huge steps too). S sums these with at most four
        roundings a term, fused or not (E adds its last two terms first, off the path from V: the
        term ``k 4 n TINY`` takes five, which the flushes of w . x leave room for, being 2n - 1);
        raising each by 8u (``(1 + 8u) V``, U times the constant ``(1 + 8u) k^2 / c^2``, a power of
        two times 1 + 2^-21, in one rounding; ``X + 8u X``, ``16 u |k w.x|`` in E) and V by ``16
        TINY`` (six results that may flush) makes the float32 S >= k^2 ||v||^2.
        (3) The factor ``f = min(1, kr rsqrt(S))`` is within 3u of ``min(1, kr / sqrt(S))`` (a
        sweep's ``kr / max(sqrt(S), kr)``, 2u; its ``f a`` 4 roundings from the product), and the
        stored weights ``fl(fl(f w_i) + fl(f a) x_i)`` err from ``f v_i`` by at most ``u f (|v_i| +
        |w_i| + 5 |a x_i|)`` (a single run's ``fl(f fl(w_i + a x_i))``, less): ``||w'|| <= f (||v||
        + e)``, ``e <= u (||v|| + ||w|| + 5 |a| ||x||)``. As ``||v||^2 <= S``, ``f ||v|| <= radius (1
        + 3u)``; with ``||w|| <= radius (1 + 16 u)`` and ``|a| ||x|| <= ||v|| + ||w||``, ``f e <= 12 u
        radius``: ``||w'|| <= radius (1 + 15 u)``, and the float32 radius is within u of the one
        given.
        (4) ``||k w'||^2 <= f^2 (S + 2 e ||v|| + e^2)`` with ``2 e ||v|| <= u (8 ||v||^2 + ||w||^2 +
        5 a^2 ||x||^2)``, so ``U' = f (f ((S + m) c^2 / k^2)) + (A c^2 / k^2 + 8 TINY)`` covers it with
        ``m = 16 u S + 2 u V + 8 u b^2 X``: that is 8u, u and 5u, U''s own four roundings (4u of S;
        the products by the power of two c^2 / k^2 are exact), the weights that flush to 0 (u of S
        and ``A = 2^25 size TINY >= size k^2 TINY^2 / u``), and the second-order terms; 8 TINY covers
        the four results that may flush (``(S + m) c^2 / k^2``, the two products by f, ``A c^2 /
        k^2``). The f's come last, so the only products on the path from f to U' are two. Where S
        or U' overflows (below; U' also where ``c ||w + a x||`` passes 2^64 1.8e19, 2^16 radii and
        more for the radii above 2^30, whose k is clipped), U' is ``(1 + 64 u) (c radius)^2``, which
        (3) proves.
        (5) The re-sum (``carried_sum``) is an upper bound by construction.

        The drift, and the re-sum. Each margin moves U above ``||w||^2`` for good, and a
        projection keeps the gap. So after every ``RESUM_EVERY`` = 16 rounds (t a multiple of 16:
        the same rounds in a run in chunks, and in every configuration of a sweep, where the
        ``lax.cond`` on t stays a branch) U is re-summed from the new weights. Where ||w|| is near
        the radius, the margins between re-sums add up to at most ``16 (26 u + (2 G + 24 u) (2 rho
        + rho^2))`` of ``radius^2`` (``rho = |a| ||x|| / radius``): the iterate lies inside the ball by
        at most half that (1.3e-5 relative for small steps), and a re-sum lies above ``||w||^2`` by
        at most ``2 gamma(ceil(log2 d) + 3)``. The allowances for the worst case can put a
        projected step inside too: the sums' (measured 2.4e-5 inside at d = 64 and a step of 2
        radii that cancels the weights), and, at the smallest radii, that for products of ``w . x``
        flushed to 0, ``4 n TINY |a|`` in S (0.3% inside at r = 1e-30, d = 64, ||x|| = 1e-3).

        Huge steps. Where ``|b| sqrt(X) > 2^63`` (a step ``|a| sqrt(X)`` beyond 2^95 radii; 2^26
        radii for the radii above 2^30, where k is clipped to 2^-63; for the radii below 2^-96,
        where k is clipped to 2^63, beyond 1 in absolute terms) the factor is ``f = radius (1 -
        2^-21) / (|a| sqrt(X))`` with ``X >= ||x||^2``: ||w|| is below 2^-26 of the step there, so
        ``||w'|| < radius``. Elsewhere S < 2^127 cannot overflow (``b^2 X <= 2^126 (1 + 8u)``, the
        other terms below 2^102). The test is on b, known before S: the choice is off f's path
        (on ``isfinite(S)`` a single run at d = 10 took 4% longer). A step whose entries ``a x_i``
        overflow float32 gives infinite weights in a single run, and the run reports its divergence.
        """
        n = values(x).shape[-1]
        if intercept:
            last = w[..., -1] + a * last_feature(x)
            x, wx, xx = head_sums(w, x, wx)
        else:
            xx = squares(x)
        r = self.radius
        n_k, n_c = unit_exponent(r), carry_exponent(r)
        k = jax.lax.optimization_barrier(power_of_two(n_k))  # (with k a constant XLA turned (k a)^2 into k^2 a^2: inf)
        kr = k * r
        G, u = pow2_above(gamma(n + 4)), UNIT
        V = (power_of_two(2 * (n_k - n_c)) * (1 + 8 * u)) * ww + 16 * TINY  # k^2 U, raised for S's rounding
        X = xx + G * xx + 4 * n * TINY  # >= ||x||^2 (a pass for max |x|, to drop 4 n TINY at x = 0, cost 10%)
        Xp = X + 8 * u * X
        kwx, root_X = k * wx, jnp.sqrt(X)
        norm_w = jnp.maximum(kr, V * (1 / kr))  # >= sqrt(V), without a square root
        E = 2 * G * (norm_w * root_X) + (16 * u * jnp.abs(kwx) + jnp.maximum(k * (4 * n * TINY), TINY))
        b = k * a
        S = b * (2.0 * kwx + b * Xp) + (V + jnp.abs(b) * E)  # >= k^2 ||w + a x||^2
        if isinstance(S, jax.core.Tracer):
            f, fa = factors(S, kr, a)
        else:  # a step called by hand: factors' branch would be compiled at every call
            f = rooted_factor(S, kr)
            fa = f * a
        # Beyond 2^95 radii (see Huge steps) the step is all of w + a x (||w|| below 2^-26 of it).
        f_big = jnp.minimum(1.0, (r - r * 2.0**-21) / (jnp.abs(a) * root_X))
        huge = jnp.abs(b) * root_X > 2.0**63  # (S < 2^127 where not; known before S, off the path to f)
        f, fa = jnp.where(huge, f_big, f), jnp.where(huge, f_big * a, fa)
        new = scaled_step(f, fa, a, w, x)
        if intercept:
            new = new.at[..., -1].set(last)
        # U' = f (f ((S + m) c^2 / k^2)) + (A c^2 / k^2 + 8 TINY). Each term of m is a product by a
        # power of two, which is exact: fused into a multiply-add or not, every sum gives the same bits.
        # (XLA:CPU fused M's sums of products in some vectorized loops and not in others, and a
        # sweep's bits depended on how many configurations ran at once.)
        q = b * (b * Xp)
        m = 16 * u * S + 2 * u * V + 8 * u * q
        to_c = power_of_two(2 * (n_c - n_k))  # c^2 / k^2
        bound = f * (f * ((S + m) * to_c)) + (2.0**25 * w.size * TINY * to_c + 8 * TINY)
        cr = jax.lax.optimization_barrier(power_of_two(n_c) * r)  # (XLA turned (c r)^2 into c^2 r^2: inf)
        bound = jnp.where(jnp.isfinite(bound), bound, jnp.maximum((1 + 64 * u) * (cr * cr), ww))
        if t is None:
            return new, bound
        due = (t & (RESUM_EVERY - 1)) == 0  # t % RESUM_EVERY == 0 for t >= 1, without the signed remainder
        return new, cond(due, partial(carried_sum, new, intercept, r), lambda: bound)

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


def below_largest(v):
    """``v - max(v)``: the simplex's threshold moves with its entries (``theta(v - c) = theta(v) -
    c``), and found from the entries' distances below the largest it keeps the radius's digits. From
    v itself, the largest entry 1e12 less a radius of 1 is 1e12 in float32, and every entry of the
    projection was 0 (a point outside the simplex)."""
    return v - jnp.max(v)


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
    Figure 1 on ``|w|``; theta by ``_simplex_threshold``): ``P(w) = sign(w) max(|w| - theta, 0)``;
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
        a = below_largest(jnp.abs(flat))
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
        v = below_largest(w.reshape(-1))
        return jnp.maximum(v - _simplex_threshold(v, self.radius), 0.0).reshape(w.shape)

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
