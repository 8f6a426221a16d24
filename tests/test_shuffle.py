"""The shuffles drawn on the host (ocolearn/shuffle.py) are JAX's, bit for bit, and a run or a
sweep plays the same rounds whether its shuffles are drawn on the host or inside its program."""

import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ocolearn.shuffle as shuffle
import ocolearn.sweep as sweeps
from ocolearn import OGD, InvSqrt, L2Ball, Pegasos, run
from ocolearn.sweep import stack, sweep


def jax_order(key, n, passes, first_pass):
    return np.stack(
        [np.asarray(jax.random.permutation(jax.random.fold_in(key, first_pass + p), n)) for p in range(passes)]
    )


# n = 1,625 is the last length JAX shuffles in one sort (ceil(3 ln n / ln(2^32 - 1)) rounds), 1,626
# the first in two; seeds include negative ones and the largest int32; pass numbers wrap as uint32.
@pytest.mark.parametrize("seed", [0, 7, 2**31 - 1, -1])
def test_host_order_is_jax_permutation_of_fold_in_bit_for_bit(seed):
    key = jax.random.key(seed)
    for n in (0, 1, 2, 3, 150, 1625, 1626):
        for first_pass, passes in ((0, 1), (3, 4), (2**31 - 2, 3)):
            order = shuffle.host_order(key, n, passes, first_pass)
            assert order.dtype == np.int32 and order.shape == (passes, n)
            np.testing.assert_array_equal(order, jax_order(key, n, passes, first_pass))


def test_blocks_of_rows_and_groups_of_passes_change_no_bit(monkeypatch):
    key = jax.random.key(5)
    expected = {n: jax_order(key, n, 7, 1) for n in (10, 64, 65, 200, 1700)}
    monkeypatch.setattr(shuffle, "BLOCK", 64)  # rows hashed 64 at a time; passes grouped 64 // n at a time
    for n, order in expected.items():
        np.testing.assert_array_equal(shuffle.host_order(key, n, 7, 1), order)


def test_rows_whose_words_tie_keep_their_order_as_in_jax():
    # JAX sorts each round's 32-bit words stably: rows that draw the same word keep their order.
    # At 100,000 rows about one pair in each round's words ties (n^2 / 2^33); four passes of two
    # rounds each make ties all but certain, and the test checks that they are there.
    key, n, passes = jax.random.key(0), 100_000, 4
    keys, ties = [shuffle.fold_in(shuffle.host_key(key), p) for p in range(passes)], 0
    for _ in range(2):  # ceil(3 ln n / ln(2^32 - 1)) = 2 rounds
        keys, drawing = zip(*map(shuffle.split, keys), strict=True)
        words = shuffle.random_words(np.array(drawing, np.uint32), n)
        ties += sum(n - len(np.unique(w)) for w in words)
    assert ties > 0
    np.testing.assert_array_equal(shuffle.host_order(key, n, passes, 0), jax_order(key, n, passes, 0))


def test_raw_keys_and_a_sweeps_uint32_seeds_are_jax_keys():
    raw = jax.random.PRNGKey(3)  # a legacy uint32 key, read with the default PRNG
    np.testing.assert_array_equal(shuffle.host_order(raw, 40, 2, 0), jax_order(raw, 40, 2, 0))
    seeds = np.array([0, 5, 2**32 - 1], np.uint32)
    orders = shuffle.seed_orders(seeds, 30, 2)
    for s, order in zip(seeds, orders, strict=True):
        np.testing.assert_array_equal(order, jax_order(jax.random.key(s), 30, 2, 0))


def test_keys_drawn_elsewhere_are_left_to_the_program():
    assert shuffle.host_order(jax.random.key(0, impl="rbg"), 10, 1, 0) is None
    drawn = []
    jax.jit(lambda key: drawn.append(shuffle.host_order(key, 10, 1, 0)) or key)(jax.random.key(0))
    assert drawn == [None]
    # another PRNG's seeded run still runs, its shuffles drawn in the program
    X, y = jnp.eye(4), jnp.array([1.0, -1.0, 1.0, -1.0])
    key = jax.random.key(0, impl="rbg")
    order = run(OGD(), X, y, key).trace.index
    np.testing.assert_array_equal(order, jax.random.permutation(jax.random.fold_in(key, 0), 4))


def stream(n=1100, d=3, seed=5):
    rng = np.random.default_rng(seed)
    X = jnp.asarray(rng.normal(size=(n, d)).astype(np.float32))
    return X, jnp.sign(X @ jnp.array([1.0, -2.0, 0.5]) + 0.3 * jnp.asarray(rng.normal(size=n), jnp.float32))


def leaves_equal(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("trace", [True, False])
def test_a_run_with_its_shuffles_drawn_in_the_program_has_the_same_bits(monkeypatch, trace):
    """A traced key (run inside jit) and many passes over many rows (a summed run past
    HOST_ORDER_ROUNDS) draw their shuffles in the program: the same rounds, the same bits."""
    X, y = stream()
    learner = Pegasos(0.01)  # its upkeep every 1,024 rounds falls inside the second pass
    key = jax.random.key(7)
    host = run(learner, X, y, key, passes=3, first_pass=2, trace=trace)
    inside = jax.jit(lambda key: run(learner, X, y, key, passes=3, first_pass=2, trace=trace))(key)
    leaves_equal(host, inside)
    if not trace:
        monkeypatch.setattr(importlib.import_module("ocolearn.run"), "HOST_ORDER_ROUNDS", 0)
        leaves_equal(host, run(learner, X, y, 7, passes=3, first_pass=2, trace=False))


def test_a_sweep_with_its_shuffles_drawn_in_the_program_has_the_same_bits(monkeypatch):
    X, y = stream(n=300)
    learners = stack([OGD(schedule=InvSqrt(eta), projection=L2Ball(1.0)) for eta in (0.05, 0.2)])
    host = sweep(learners, X, y, seeds=[3, 2**32 - 1], passes=2)
    monkeypatch.setattr(sweeps, "seed_orders", lambda *args: None)
    leaves_equal(host, sweep(learners, X, y, seeds=[3, 2**32 - 1], passes=2))


def test_an_order_given_is_played_and_checked():
    X, y = jnp.eye(3), jnp.array([1.0, 2.0, 3.0])
    order = np.array([[2, 0, 1], [1, 2, 0]], np.int32)
    result = run(OGD(), X, y, passes=2, order=order)
    np.testing.assert_array_equal(result.trace.index, order.reshape(-1))
    with pytest.raises(ValueError, match=r"order must be \(2, 3\) row indices"):
        run(OGD(), X, y, passes=2, order=order[:1])
    with pytest.raises(ValueError, match="instead of a seed"):
        run(OGD(), X, y, 0, passes=2, order=order)
    with pytest.raises(ValueError, match="row indices 0 to 2"):
        run(OGD(), X, y, passes=2, order=order - 1)


def test_numpys_integers_seed_as_pythons_and_other_seeds_are_refused():
    X, y = jnp.eye(5), jnp.arange(5.0)
    expected = run(OGD(), X, y, 3).trace.index
    for seed in (np.int64(3), np.int32(3), np.uint32(3), jax.random.key(3), np.array([0, 3], np.uint32)):
        np.testing.assert_array_equal(run(OGD(), X, y, seed).trace.index, expected)
    for seed in (3.0, "3", np.float32(3)):
        with pytest.raises(TypeError, match="is neither an integer nor a PRNG key"):
            run(OGD(), X, y, seed)
    # JAX keeps a seed's low 32 bits: -1 would shuffle as 2^32 - 1, and 2^32 as 0
    for seed in (-1, 2**32, np.int64(-1), True):  # (a bool is a slip: True shuffled as seed 1 did)
        with pytest.raises(ValueError, match=r"seed: (-?\d+|True) is not a seed in 0..4294967295"):
            run(OGD(), X, y, seed)
    for seeds in ([-1], [2**32], [1.5], [0, True and 2.0], [0, False]):
        with pytest.raises(ValueError, match=r"seeds: .* is not a seed in 0..4294967295"):
            sweep(stack([OGD(), OGD()]), X, y, seeds=seeds)
