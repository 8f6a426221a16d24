import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ocolearn.features import (
    Sparse,
    add_scaled,
    add_to_rows,
    dense,
    dot,
    is_last,
    largest_seen,
    last_feature,
    local,
    multiply_scaled,
    norm,
    num_features,
    put,
    row,
    scaled_sqnorm,
    sqnorm,
    table_column,
    table_dot,
    table_rows,
    update_table,
    values,
)


def random_sparse(rng, n, k, d):
    """n examples with k distinct indices each, some padding (value 0) at the end."""
    idx = np.stack([rng.choice(d, size=k, replace=False) for _ in range(n)]).astype(np.int32)
    val = rng.normal(size=(n, k)).astype(np.float32)
    val[:, k - 2 :] = 0.0  # padding
    return Sparse(jnp.asarray(idx), jnp.asarray(val), d)


@pytest.mark.parametrize("w_shape", [(20,), (3, 20)])
def test_sparse_and_dense_agree(w_shape):
    rng = np.random.default_rng(0)
    batch = random_sparse(rng, 5, 6, 20)
    dense = batch.todense()
    w = jnp.asarray(rng.normal(size=w_shape).astype(np.float32))
    scale = 0.7 if len(w_shape) == 1 else jnp.array([0.5, -1.0, 2.0])
    for i in range(5):
        x, xd = row(batch, i), jnp.asarray(dense[i])
        np.testing.assert_allclose(dot(w, x), dot(w, xd), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(add_scaled(w, scale, x), add_scaled(w, scale, xd), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(sqnorm(x), sqnorm(xd), rtol=1e-6)
        np.testing.assert_allclose(dot(w, xd), np.asarray(w) @ dense[i], rtol=1e-5, atol=1e-6)


def test_todense_and_dimensions():
    x = Sparse(jnp.array([[2, 0]], jnp.int32), jnp.array([[1.5, 0.0]]), 4)
    np.testing.assert_array_equal(x.todense(), [[0, 0, 1.5, 0]])
    assert num_features(x) == 4 and x.shape == (1, 4) and len(x) == 1
    assert num_features(jnp.zeros((3, 7))) == 7


def test_numpy_backed_sparse_rows_under_vmap_and_jit():
    """A batch of NumPy arrays indexed by a traced row number (vmap over rows, a jitted loop)
    once raised TracerArrayConversionError."""
    import jax

    rng = np.random.default_rng(3)
    dense_rows = random_sparse(rng, 6, 4, 10)
    batch = Sparse(np.asarray(dense_rows.idx), np.asarray(dense_rows.val), 10)
    w = jnp.asarray(rng.normal(size=10).astype(np.float32))
    expected = batch.todense() @ np.asarray(w)
    got = jax.vmap(lambda i: dot(w, row(batch, i)))(jnp.arange(6))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda i: dot(w, row(batch, i)))(2), expected[2], rtol=1e-5, atol=1e-6)


def test_table_columns_and_added_rows_on_sparse_and_dense_rows():
    """A per-feature table (d, 2): its columns at x's features, and per-feature changes added
    to its rows, agree on sparse and dense x; padding at the index of a real feature of the
    same row, after it, adds nothing (the real feature keeps its change)."""
    table = jnp.asarray(np.arange(16, dtype=np.float32).reshape(8, 2))
    x = Sparse(jnp.array([3, 5, 3], jnp.int32), jnp.array([1.5, -2.0, 0.0]), 8)  # the last: padding
    xd = dense(x)
    np.testing.assert_array_equal(table_column(table, x, 1), [7.0, 11.0, 7.0])
    np.testing.assert_array_equal(table_column(table, xd, 1), np.arange(1, 16, 2))
    expected = np.arange(16, dtype=np.float32).reshape(8, 2)
    expected[3] += [1.5, 2.25]
    expected[5] += [-2.0, 4.0]
    for v in (x.val, xd):  # changes laid out as x's values: (k,) sparse, (d,) dense
        got = add_to_rows(table, x if v is x.val else xd, [v, v * v])
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_scaled_sqnorm_is_the_float64_norm_at_every_scale_and_scale_free_in_its_bits(sparse):
    """``scaled_sqnorm(x) = (||2^e x||^2, e)`` with ``||2^e x||`` in [1, 2): at 2^m x for m from
    -110 to 110 (||x||^2 from 2^-220 to 2^220, float32 holds neither end) the norm is float64's,
    and the sum's bits are those at m = 0 (scaling by a power of two changes none), with e + m
    the same; features of 1e20 and 1e-30 too. An all-zero row is (0, 126)."""
    rng = np.random.default_rng(3)
    rows = (rng.normal(size=(8, 12)) * np.exp2(rng.integers(-8, 9, size=(8, 12)))).astype(np.float32)
    rows[:, -2:] = 0.0  # padding, for the sparse rows

    def scaled(v):
        x = Sparse(jnp.arange(v.size, dtype=jnp.int32), jnp.asarray(v), v.size) if sparse else jnp.asarray(v)
        q, e = jax.jit(scaled_sqnorm)(x)
        return np.float32(q), int(e)

    for v in rows:
        q0, e0 = scaled(v)
        for m in range(-110, 111, 10):
            q, e = scaled(np.float32(v * 2.0**m))
            assert 1.0 <= q < 4.0 and q.tobytes() == q0.tobytes() and e + m == e0
            exact = np.sum(np.float64(v) ** 2) * 4.0**m
            np.testing.assert_allclose(np.float64(q) * 4.0 ** -np.float64(e), exact, rtol=1e-6)
        for scale in (1e20, 1e-30):
            q, e = scaled(np.float32(v * scale))
            exact = np.sum((np.float64(np.float32(v * scale)) / scale) ** 2) * scale**2
            np.testing.assert_allclose(np.float64(q) * 4.0 ** -np.float64(e), exact, rtol=1e-6)
    assert scaled(np.zeros(12, np.float32)) == (0.0, 126)


def test_todense_of_one_example_and_of_a_stack_of_batches():
    """``todense`` of one example ``(k,)`` is ``(d,)``, of a stack of batches ``(s, n, k)`` is
    ``(s, n, d)``: each value at its row and index, float32; padding adds 0."""
    one = Sparse(np.array([3, 0, 1], np.int32), np.array([2.5, -1.0, 0.0]), 5)
    np.testing.assert_array_equal(one.todense(), [-1.0, 0.0, 0.0, 2.5, 0.0])
    assert one.todense().dtype == np.float32 and num_features(one) == 5
    idx = np.array([[[0, 2, 0], [1, 0, 0]], [[2, 1, 0], [0, 0, 0]]], np.int32)
    val = np.array([[[1.0, 2.0, 0.0], [3.0, 0.0, 0.0]], [[4.0, 5.0, 0.0], [6.0, 0.0, 0.0]]])
    stacked = Sparse(idx, val, 3).todense()
    np.testing.assert_array_equal(stacked, [[[1, 0, 2], [0, 3, 0]], [[0, 5, 4], [6, 0, 0]]])
    assert stacked.dtype == np.float32 and num_features(jnp.zeros(6)) == 6


def test_sparse_sums_of_any_number_of_values_are_exact_on_whole_numbers():
    """``dot`` and ``sqnorm`` of k = 1..40 stored values (odd counts pad a level with a zero),
    on whole numbers whose sums float32 holds exactly, whatever the order: the float64 sums. Under
    ``jit``, as the runner calls them (one program for each k; run op by op, each of the pairwise
    sum's levels compiled by itself, and the test took 25 s)."""
    rng = np.random.default_rng(5)
    sums = jax.jit(lambda w, x: (dot(w, x), sqnorm(x)))
    for k in range(1, 41):
        idx = rng.choice(50, size=k, replace=False).astype(np.int32)
        val = rng.integers(-20, 21, size=k).astype(np.float32)
        w = rng.integers(-20, 21, size=(2, 50)).astype(np.float32)
        wx, xx = sums(w, Sparse(idx, val, 50))  # (numpy arrays: jnp.asarray compiles a copy per shape)
        np.testing.assert_array_equal(wx, w[:, idx].astype(np.float64) @ val)
        np.testing.assert_array_equal(xx, np.sum(np.float64(val) ** 2))


def test_the_per_feature_reads_and_writes_on_sparse_and_dense_rows():
    """``local``, ``values``, ``largest_seen``, ``is_last``, ``last_feature``, ``put`` and
    ``multiply_scaled`` at x's features, by hand: x has 2.0 at feature 1, -3.0 at feature 4 (the
    last, d = 5) and padding (value 0) at feature 1, after it; the dense x has the same values."""
    x = Sparse(jnp.array([1, 4, 1], jnp.int32), jnp.array([2.0, -3.0, 0.0]), 5)
    xd = jnp.array([0.0, 2.0, 0.0, 0.0, -3.0])
    v = jnp.array([10.0, 11.0, 12.0, 13.0, 14.0])
    vk = jnp.stack([v, -v])  # (K, d)
    np.testing.assert_array_equal(local(v, x), [11.0, 14.0, 11.0])
    np.testing.assert_array_equal(local(vk, x), [[11.0, 14.0, 11.0], [-11.0, -14.0, -11.0]])
    np.testing.assert_array_equal(local(v, xd), v)
    s = jnp.array([1.0, 1.5, 5.0, 0.0, 4.0])
    np.testing.assert_array_equal(largest_seen(s, x), [2.0, 4.0, 1.5])
    np.testing.assert_array_equal(largest_seen(s, xd), [1.0, 2.0, 5.0, 0.0, 4.0])
    np.testing.assert_array_equal(is_last(x), [False, True, False])
    np.testing.assert_array_equal(is_last(xd), [False, False, False, False, True])
    assert float(last_feature(x)) == -3.0 and float(last_feature(xd)) == -3.0
    assert float(last_feature(Sparse(jnp.array([1, 2], jnp.int32), jnp.array([2.0, 7.0]), 5))) == 0.0
    np.testing.assert_array_equal(last_feature(jnp.stack([xd, 2 * xd])), [-3.0, -6.0])
    # put: the padding entry writes nothing, so feature 1 keeps the value written for it.
    np.testing.assert_array_equal(put(v, x, jnp.array([7.0, 8.0, 9.0])), [10.0, 7.0, 12.0, 13.0, 8.0])
    np.testing.assert_array_equal(
        put(vk, x, jnp.array([[7.0, 8.0, 9.0], [-7.0, -8.0, -9.0]])),
        [[10.0, 7.0, 12.0, 13.0, 8.0], [-10.0, -7.0, -12.0, -13.0, -8.0]],
    )
    np.testing.assert_array_equal(put(v, xd, jnp.arange(5)), [0.0, 1.0, 2.0, 3.0, 4.0])
    assert put(v, xd, jnp.arange(5)).dtype == v.dtype and put(v, x, jnp.arange(3)).dtype == v.dtype
    # multiply_scaled: w_i 2^(a x_i) with a = 0.5: feature 1 times 2, feature 4 times 2^-1.5; the rest kept.
    expected = np.array([10.0, 22.0, 12.0, 13.0, 14.0 * 2**-1.5], np.float32)
    np.testing.assert_allclose(multiply_scaled(v, 2.0, 0.5, x), expected, rtol=1e-6)
    np.testing.assert_allclose(multiply_scaled(v, 2.0, 0.5, xd), expected, rtol=1e-6)


def test_table_reads_dots_and_updates_on_sparse_and_dense_rows():
    """A per-feature table (d, 2): its rows at x's features, ``w . x`` of one column and of both,
    and a change of the rows at x's features, by hand; padding changes nothing."""
    table = jnp.asarray(np.arange(16, dtype=np.float32).reshape(8, 2))
    x = Sparse(jnp.array([3, 5, 1], jnp.int32), jnp.array([1.5, -2.0, 0.0]), 8)  # the last: padding
    xd = dense(x)
    np.testing.assert_array_equal(table_rows(table, x), [[6.0, 7.0], [10.0, 11.0], [2.0, 3.0]])
    np.testing.assert_array_equal(table_rows(table, xd), table)
    for z in (x, xd):
        rows = table_rows(table, z)
        assert float(table_dot(rows, z, 0)) == 6.0 * 1.5 - 10.0 * 2.0
        np.testing.assert_array_equal(table_dot(rows, z, slice(0, 2)), [-11.0, 7.0 * 1.5 - 11.0 * 2.0])
        changed = update_table(table, z, lambda row, xi, c: row + xi * c, jnp.array([1.0, 10.0]))
        expected = np.arange(16, dtype=np.float32).reshape(8, 2)
        expected[3] += [1.5, 15.0]
        expected[5] += [-2.0, -20.0]
        np.testing.assert_array_equal(changed, expected)


def test_the_operations_keep_the_dtype_of_the_weights_and_values():
    """A step's weights and per-feature tables stay in their dtype (a ``lax.scan`` carries them
    unchanged), also where the step's numbers are float32 and the weights float16; ``dense``
    keeps the values' dtype."""
    w = jnp.arange(4, dtype=jnp.float16)
    x = Sparse(jnp.array([0, 2], jnp.int32), jnp.array([1.0, 2.0], jnp.float16), 4)
    table = jnp.zeros((4, 2), jnp.float16)
    for z in (x, dense(x)):
        got = add_scaled(w, jnp.float32(0.5), z)
        assert got.dtype == jnp.float16
        np.testing.assert_array_equal(got, [0.5, 1.0, 3.0, 3.0])
        v = values(z).astype(jnp.float32)
        added = add_to_rows(table, z, [v, 2 * v])
        changed = update_table(table, z, lambda row, xi, c: row + xi * c, jnp.array([1.0, 3.0], jnp.float32))
        assert added.dtype == changed.dtype == jnp.float16
        np.testing.assert_array_equal(added, [[1.0, 2.0], [0.0, 0.0], [2.0, 4.0], [0.0, 0.0]])
        np.testing.assert_array_equal(changed, [[1.0, 3.0], [0.0, 0.0], [2.0, 6.0], [0.0, 0.0]])
    assert dense(x).dtype == jnp.float16
    assert put(w, dense(x), jnp.ones(4, jnp.float32)).dtype == jnp.float16


def test_scaled_sqnorm_at_the_ends_of_float32():
    """x = 1.5 2^127 (||x|| beyond 2^126): e stops at -126, where 2^e is still a normal float32,
    so ``||2^-126 x||^2 = 3^2``. A row of one value of 1e-20 to 1e30 is float64's (compiled, XLA
    once rewrote its ``(2^70 x)^2`` as ``x^2 2^140``: NaN or -inf beyond 2^+-30). A row of 4,095
    features, one of 2^-47.5 (its square 2^-95) and the rest of 2^-63.05, whose squares (below
    2^-126) float32 flushes to 0: summed at x's own scale they would be lost, 2e-6 of the sum;
    at the scale of 2^70 x none is."""
    for sparse in (False, True):

        def scaled(v, sparse=sparse):
            x = Sparse(jnp.arange(v.size, dtype=jnp.int32), jnp.asarray(v), v.size) if sparse else jnp.asarray(v)
            q, e = jax.jit(scaled_sqnorm)(x)
            return float(q), int(e)

        assert scaled(np.array([1.5 * 2.0**127], np.float32)) == (9.0, -126)
        for value in np.float32([1e-20, 1e-10, 3.0, 1e16, 1e30]):
            q, e = scaled(np.array([value]))
            np.testing.assert_allclose(q * 4.0**-e, np.float64(value) ** 2, rtol=1e-6)
        tiny = np.full(4095, 2.0**-63.05, np.float32)
        tiny[0] = 2.0**-47.5
        q, e = scaled(tiny)
        np.testing.assert_allclose(q * 4.0**-e, np.sum(np.float64(tiny) ** 2), rtol=5e-7)


def test_sqnorm_of_a_dense_batch_is_one_number_per_row():
    np.testing.assert_array_equal(sqnorm(jnp.array([[3.0, 4.0], [1.0, 0.0]])), [25.0, 1.0])


def test_norm_holds_where_the_sum_of_squares_would_overflow_or_flush_to_zero():
    """``||v||`` relative to ``max |v|``: (3, -4) 10^20 (squares beyond float32) and 10^-30
    (squares flushed to 0) are 5 10^20 and 5 10^-30; an all-zero v is 0, not 0 / 0."""
    for scale in (1.0, 1e20, 1e-30):
        v = jnp.array([3.0, -4.0, 0.0], jnp.float32) * np.float32(scale)
        np.testing.assert_allclose(norm(v), 5.0 * scale, rtol=1e-6)
    assert float(norm(jnp.zeros(3))) == 0.0
