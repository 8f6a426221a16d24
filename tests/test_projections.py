import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ocolearn.projections import (
    PAIRWISE_UP_TO,
    Box,
    Identity,
    L1Ball,
    L2Ball,
    NonNegative,
    Projection,
    Simplex,
    _simplex_threshold,
    _threshold_by_pairs,
    _threshold_by_sorting,
    carried_sum,
)

SETS = [Identity(), L2Ball(1.5), L1Ball(2.0), Simplex(1.0), Box(-0.5, 0.25), NonNegative()]
vectors = hnp.arrays(np.float32, st.integers(1, 12), elements=st.floats(-10, 10, width=32))


def inside(projection, u, tol=1e-5):
    """Membership in the set, by its definition (independent of the projection code)."""
    name = projection.name
    if name == "l2_ball":
        return np.linalg.norm(u) <= projection.radius * (1 + tol)
    if name == "l1_ball":
        return np.abs(u).sum() <= projection.radius * (1 + tol)
    if name == "simplex":
        return np.all(u >= -tol) and abs(u.sum() - projection.radius) <= tol * max(1, len(u))
    if name == "box":
        return np.all(u >= projection.lower - tol) and np.all(u <= projection.upper + tol)
    if name == "non_negative":
        return np.all(u >= 0)
    return True


def reference_simplex(v, z):
    """Projection onto {u >= 0, sum u = z} by bisection on theta in float64 (no sorting)."""
    v = np.asarray(v, np.float64)
    lo, hi = v.min() - z, v.max()
    for _ in range(200):
        theta = 0.5 * (lo + hi)
        lo, hi = (theta, hi) if np.maximum(v - theta, 0).sum() > z else (lo, theta)
    return np.maximum(v - 0.5 * (lo + hi), 0)


def test_every_registered_projection_is_tested():
    assert {type(p) for p in SETS} == set(Projection.registry.values())


@pytest.mark.parametrize("projection", SETS, ids=lambda p: p.name)
@given(v=vectors)
def test_lands_in_the_set_and_is_idempotent(projection, v):
    p = np.asarray(projection(jnp.asarray(v)))
    assert inside(projection, p)
    np.testing.assert_allclose(projection(jnp.asarray(p)), p, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("projection", SETS, ids=lambda p: p.name)
@given(
    pair=st.integers(1, 8).flatmap(
        lambda d: st.tuples(*[hnp.arrays(np.float32, d, elements=st.floats(-10, 10, width=32))] * 2)
    )
)
def test_non_expansive(projection, pair):
    a, b = pair
    pa, pb = np.asarray(projection(jnp.asarray(a))), np.asarray(projection(jnp.asarray(b)))
    assert np.linalg.norm(pa - pb) <= np.linalg.norm(a - b) * (1 + 1e-5) + 1e-5


@pytest.mark.parametrize("projection", SETS, ids=lambda p: p.name)
@given(v=vectors, seed=st.integers(0, 2**16))
def test_is_the_nearest_point(projection, v, seed):
    # Variational inequality of the projection: <v - P(v), u - P(v)> <= 0 for u in the set.
    p = np.asarray(projection(jnp.asarray(v)), np.float64)
    points = np.random.default_rng(seed).normal(0, 5, (16, len(v))).astype(np.float32)
    for u in (np.asarray(projection(jnp.asarray(point)), np.float64) for point in points):
        assert np.dot(v - p, u - p) <= 1e-3 * (1 + np.abs(v).sum())


@given(v=vectors)
def test_l1_ball_is_exact(v):
    z = 2.0
    p = np.asarray(L1Ball(z)(jnp.asarray(v)), np.float64)
    if np.abs(v).sum() <= z:
        np.testing.assert_array_equal(p, v)
    else:
        np.testing.assert_allclose(p, np.sign(v) * reference_simplex(np.abs(v), z), atol=1e-5)
        assert np.abs(p).sum() == pytest.approx(z, rel=1e-5)


@given(v=vectors)
def test_simplex_is_exact(v):
    np.testing.assert_allclose(Simplex(1.0)(jnp.asarray(v)), reference_simplex(v, 1.0), atol=1e-5)


@pytest.mark.parametrize("d", [1, 7, PAIRWISE_UP_TO, PAIRWISE_UP_TO + 1, 300])
def test_the_threshold_by_comparisons_and_by_sorting_is_the_projection(d):
    # Up to PAIRWISE_UP_TO entries theta is the largest f over the entries' counts (no sort), beyond
    # it Figure 1's sort: both are the float64 bisection's point, with the largest entries tied, and
    # with a z that keeps every entry (theta < min v); at z = 0 theta is max v (P = 0).
    v = np.random.default_rng(d).normal(0, 3, d).astype(np.float32)
    v[np.argsort(v)[-min(d, 4) :]] = v.max()
    assert _simplex_threshold(jnp.asarray(v), 0.0) == v.max()
    for z in (1.0, 5.0, 10 * float(np.abs(v).sum())):
        np.testing.assert_allclose(Simplex(z)(jnp.asarray(v)), reference_simplex(v, z), atol=2e-5 * max(1, z))
        by_pairs, by_sorting = (f(jnp.asarray(v), z) for f in (_threshold_by_pairs, _threshold_by_sorting))
        np.testing.assert_allclose(by_pairs, by_sorting, rtol=1e-6, atol=1e-6)  # (both ways at every d)
        outside = np.abs(v).sum() > z  # (inside, the ball leaves v as it is)
        expected = np.sign(v) * reference_simplex(np.abs(v), z) if outside else v
        np.testing.assert_allclose(L1Ball(z)(jnp.asarray(v)), expected, atol=2e-5)


def test_l2_ball_on_the_boundary_and_at_zero():
    np.testing.assert_allclose(L2Ball(1.0)(jnp.array([3.0, 4.0])), [0.6, 0.8], rtol=1e-6)
    np.testing.assert_array_equal(L2Ball(1.0)(jnp.array([0.6, 0.8])), np.float32([0.6, 0.8]))
    np.testing.assert_array_equal(L2Ball(1.0)(jnp.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(L1Ball(1.0)(jnp.zeros(3)), np.zeros(3))


def test_works_on_matrices_as_one_vector():
    w = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(L2Ball(1.0)(w), w / np.linalg.norm(np.arange(6.0)), rtol=1e-6)
    assert L1Ball(1.0)(w).shape == (2, 3)


def test_diameters():
    assert L2Ball(2.0).diameter(5) == 4.0
    assert Box(-1.0, 1.0).diameter(4) == 4.0
    assert Simplex(1.0).diameter(3) == pytest.approx(np.sqrt(2))
    assert Identity().diameter(3) == float("inf")


@pytest.mark.parametrize("projection", SETS, ids=lambda p: p.name)
@given(
    pair=st.integers(1, 8).flatmap(
        lambda d: st.tuples(*[hnp.arrays(np.float32, d, elements=st.floats(-10, 10, width=32))] * 2)
    ),
    a=st.one_of(st.floats(-10, 10, width=32), st.sampled_from([0.0, 1e15, -1e18])),
)
def test_update_is_the_projection_of_the_step(projection, pair, a):
    x, v = pair
    w = np.asarray(projection(jnp.asarray(v)))  # a point of the set, as learners hold
    ww = jnp.float32(np.sum(w.astype(np.float64) ** 2))
    new, sqnorm = projection.update(jnp.asarray(w), jnp.float32(a), jnp.asarray(x), jnp.dot(w, x), ww)
    if projection.name == "l2_ball" and 4 * len(x) * 2.0**-126 * float(a) ** 2 > 1e-6 * projection.radius**2:
        # Squares that flush to 0: the ball allows 4 n TINY a^2 for them in S (L2Ball.update, (1)), and with
        # a = 1e18 that can put the point 1% inside; it stays inside, below its carried bound.
        norm2 = float(np.sum(np.asarray(new, np.float64) ** 2))
        assert np.sqrt(norm2) <= projection.radius * (1 + 1e-6) and norm2 <= float(sqnorm)
        return
    expected = np.asarray(projection(jnp.asarray(w.astype(np.float64) + np.float64(a) * x, jnp.float32)))
    np.testing.assert_allclose(new, expected, rtol=2e-5, atol=1e-5 * (1 + np.abs(expected).max()))
    if projection.name == "l2_ball":
        assert float(sqnorm) == pytest.approx(float(np.sum(np.asarray(new, np.float64) ** 2)), rel=1e-4, abs=1e-6)


def test_projections_are_found_by_their_names():
    assert Projection.registry == {
        "identity": Identity,
        "l2_ball": L2Ball,
        "l1_ball": L1Ball,
        "simplex": Simplex,
        "box": Box,
        "non_negative": NonNegative,
    }


def test_the_diagonal_norm_projection_exists_for_separable_sets_and_the_ball_only():
    v, h = jnp.array([3.0, -1.0, 0.5]), jnp.array([1.0, 4.0, 0.25])
    np.testing.assert_array_equal(Identity().in_norm(v, h), v)
    np.testing.assert_array_equal(Box(-0.5, 0.25).in_norm(v, h), [0.25, -0.5, 0.25])
    np.testing.assert_array_equal(NonNegative().in_norm(v, h), [3.0, 0.0, 0.5])
    for projection in (L1Ball(1.0), Simplex(1.0)):
        with pytest.raises(NotImplementedError, match=f"^the {projection.name} projection has no diagonal-norm form"):
            projection.in_norm(v, h)


def test_the_l2_ball_leaves_its_inside_alone():
    # Killed mutants: factors min(2, r / ||w||) in the projection and in its one-pass update.
    assert L2Ball().radius == 1.0
    w, x = jnp.array([0.3, -0.4]), jnp.array([1.0, 2.0])
    np.testing.assert_array_equal(L2Ball(1.5)(w), w)
    new, sqnorm = L2Ball(1.5).update(w, jnp.float32(0.1), x, w @ x, w @ w)
    np.testing.assert_allclose(new, w + 0.1 * x, rtol=1e-6)
    # The carried value, transcribed from L2Ball.update's proof in float64: S raised, 8u U, 8u ||x||^2 and
    # G = 8u (n = 2) on a^2 ||x||^2, and |a| (2 G r ||x|| + 16 u |w.x|) (max(r, ||w||^2 / r) = r);
    # then the margin m = 16 u S + 2 u V + 8 u a^2 X (f = 1 here), to within half a unit u.
    u, U, wx, xx, a = 2.0**-24, float(w @ w), float(w @ x), 5.0, 0.1
    X = xx * (1 + 8 * u) * (1 + 8 * u)
    S = U * (1 + 8 * u) + a * (2 * wx + a * X) + a * (2 * 8 * u * 1.5 * np.sqrt(xx * (1 + 8 * u)) + 16 * u * abs(wx))
    expected = S + 16 * u * S + 2 * u * U * (1 + 8 * u) + 8 * u * a * a * X
    assert float(sqnorm) == pytest.approx(expected, abs=u / 2)
    assert float(new @ new) < expected - 10 * u  # (an upper bound with room: the margins are 14u here)


def test_the_balls_unit_is_2_to_the_minus_32_over_the_radius_rounded_to_a_power_of_two():
    from ocolearn.projections import unit_of

    radii = np.concatenate([np.geomspace(1e-45, 3e38, 4001), [1.0, 0.5, 0.75, 2.0**-126, 2.0**-149]]).astype(np.float32)
    mantissa, exponent = np.frexp(radii.astype(np.float64))
    expected = np.ldexp(1.0, np.clip(-32 - exponent, -63, 63))
    np.testing.assert_array_equal(np.asarray(jax.vmap(unit_of)(jnp.asarray(radii))), expected.astype(np.float32))


def reference_shifted(v, z):
    """The float64 simplex projection of ``v`` found from ``v - max(v)`` (shift-invariant)."""
    return reference_simplex(v - v.max(), z)


@pytest.mark.parametrize("offset", [0.0, 1e6, 1e12, -1e12, 1e18, -1e30])
def test_the_simplex_and_the_l1_ball_hold_their_radius_far_from_zero(offset):
    # Entries near 1e12 less a radius of 1 were 1e12 in float32: every entry of the projection was 0.
    rng = np.random.default_rng(7)
    v = (offset + rng.uniform(-4, 4, 9) * max(1.0, abs(offset)) * 1e-7).astype(np.float32)
    v[3] = np.float32(offset) + np.float32(max(1.0, abs(offset)) * 1e-6)  # one entry clearly largest
    v64 = v.astype(np.float64)
    p = np.asarray(Simplex(1.0)(jnp.asarray(v)), np.float64)
    np.testing.assert_allclose(p, reference_shifted(v64, 1.0), atol=1e-5)
    assert p.sum() == pytest.approx(1.0, rel=1e-5) and p.min() >= 0
    q = np.asarray(L1Ball(2.0)(jnp.asarray(v)), np.float64)
    if np.abs(v64).sum() <= 2.0:
        np.testing.assert_array_equal(q, v64)
    else:
        np.testing.assert_allclose(q, np.sign(v64) * reference_shifted(np.abs(v64), 2.0), atol=1e-5)
        assert np.abs(q).sum() == pytest.approx(2.0, rel=1e-5)


def extreme_points(projection, size):
    """Points of the set that reach its diameter and its largest norm: the corners of the box,
    the vertices of the simplex and of the L1 ball, two antipodes of the L2 ball."""
    eye = np.eye(size)
    if projection.name == "box":
        corners = np.array(np.meshgrid(*[[projection.lower, projection.upper]] * size)).reshape(size, -1).T
        return corners
    if projection.name == "simplex":
        return projection.radius * eye
    if projection.name in ("l1_ball", "l2_ball"):
        return projection.radius * np.concatenate([eye, -eye])
    raise ValueError(projection.name)


@pytest.mark.parametrize("size", [1, 2, 5])
@pytest.mark.parametrize(
    "projection", [L2Ball(1.5), L1Ball(2.0), Simplex(3.0), Box(-0.5, 2.0), Box(-3.0, 1.0)], ids=lambda p: repr(p)
)
def test_diameter_and_largest_norm_are_those_of_the_extreme_points(projection, size):
    points = extreme_points(projection, size)
    distances = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
    assert projection.diameter(size) == pytest.approx(distances.max(), rel=1e-12)
    assert projection.max_norm(size) == pytest.approx(np.linalg.norm(points, axis=1).max(), rel=1e-12)


@pytest.mark.parametrize("projection", [Identity(), NonNegative()], ids=lambda p: p.name)
def test_unbounded_sets_have_infinite_diameter_and_norm(projection):
    assert projection.diameter(3) == float("inf") and projection.max_norm(3) == float("inf")


@pytest.mark.parametrize(
    "projection", [L1Ball(1.0), Simplex(1.0), Box(-0.5, 0.25), NonNegative()], ids=lambda p: p.name
)
@pytest.mark.parametrize("shape", [(5,), (3, 4)])
def test_update_with_an_intercept_steps_the_last_column_unprojected(projection, shape):
    # Projection.update: the last coordinate (the last column of (K, d) weights) takes its step as it
    # is; the others are projected together, as one vector.
    rng = np.random.default_rng(3)
    w, x = rng.uniform(-2, 2, shape).astype(np.float32), rng.uniform(-2, 2, shape[-1]).astype(np.float32)
    a = np.float32(1.5)
    new, ww = projection.update(jnp.asarray(w), a, jnp.asarray(x), None, jnp.float32(7.0), intercept=True)
    v = w + a * x
    assert new.shape == shape and float(ww) == 7.0
    np.testing.assert_array_equal(np.asarray(new)[..., -1], v[..., -1])
    np.testing.assert_array_equal(np.asarray(new)[..., :-1], np.asarray(projection(jnp.asarray(v[..., :-1]))))
    assert not np.array_equal(np.asarray(new)[..., :-1], v[..., :-1])  # the others were projected


def carried_sum_transcribed(w, intercept=False, radius=1.0):
    """``carried_sum`` in float32 step by step with NumPy: ``c`` from the radius's exponent (1 for
    radii in [2^-48, 2^49), else 2^-floor(log2 radius)), the squares summed in pairs level by level
    (a zero joining an odd level), raised by the power of two above gamma(ceil(log2 size) + 3)
    and by 2 size TINY."""
    e = int(np.floor(np.log2(np.float32(radius))))
    c = np.float32(1.0 if abs(e) <= 48 else 2.0 ** np.clip(-e, -126, 126))
    v = np.array(w, np.float32).reshape(-1) * c
    if intercept:
        v[-1] = 0
    p = v * v
    while p.size > 1:
        p = np.concatenate([p, np.zeros(p.size % 2, np.float32)])
        p = p[0::2] + p[1::2]
    s = p[0]
    n = max(v.size, 1)
    g = math.ceil(math.log2(n)) + 3
    gamma = g * 2.0**-24 / (1 - g * 2.0**-24)
    raise_ = np.float32(2.0 ** math.ceil(math.log2(gamma)))
    return s + raise_ * s + np.float32(2 * v.size * 2.0**-126)


@pytest.mark.parametrize("size", [1, 2, 3, 10, 64, 100])
@pytest.mark.parametrize("radius", [1.0, 2.0**-60, 2.0**60])
def test_the_carried_sum_is_its_transcription_bit_for_bit(size, radius):
    rng = np.random.default_rng(size)
    for w in (np.zeros(size, np.float32), (rng.standard_normal(size) * radius).astype(np.float32)):
        for intercept in (False, True):
            got = float(carried_sum(jnp.asarray(w), intercept, radius))
            assert got == float(carried_sum_transcribed(w, intercept, radius)) > 0
    w = (rng.standard_normal(size) + 1).astype(np.float32)
    assert float(carried_sum(jnp.asarray(w))) == float(carried_sum_transcribed(w))  # the defaults
