import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ocolearn import OGD, Constant, InvSqrt, L2Ball, Perceptron, Squared, ridge, run, run_passes


def ones_stream(n, c):
    return jnp.ones((n, 1), jnp.float32), jnp.full((n,), c, jnp.float32)


def test_one_dimensional_recurrence_constant_rate():
    # x_t = 1, y_t = c: w_{t+1} = w_t - eta (w_t - c), so w_t = c (1 - (1 - eta)^(t - 1)).
    eta, c, n = 0.3, 2.0, 12
    result = run(OGD(Squared(), Constant(eta)), *ones_stream(n, c), snapshot_every=1)
    t = np.arange(1, n + 1)
    np.testing.assert_allclose(result.trace.snapshots[:, 0], c * (1 - (1 - eta) ** t), rtol=1e-6)
    np.testing.assert_allclose(result.trace.prediction, c * (1 - (1 - eta) ** (t - 1)), rtol=1e-6, atol=1e-7)


def test_one_dimensional_recurrence_with_projection_and_root_rate():
    # w_{t+1} = min(r, (1 - eta/sqrt(t)) w_t + eta/sqrt(t) c): the product form, clipped at r.
    eta, c, r, n = 0.5, 3.0, 2.5, 20
    result = run(ridge(InvSqrt(eta), r), *ones_stream(n, c), snapshot_every=1)
    expected, w = [], 0.0
    for t in range(1, n + 1):
        w = min(r, c * (1 - np.prod(1 - eta / np.sqrt(np.arange(1, t + 1)))))
        expected.append(w)
    # The ball's factor errs inwards only, by at most the margins added between re-sums (every 16
    # rounds): 16 (26 u + (2 G + 24 u) (2 rho + rho^2)) of r^2, G = 8u at d = 1, half of it in the norm
    # (L2Ball.update; here the steps are rho <= 0.1 of the weights once the ball is reached).
    inward = 16 * (26 + 40 * 0.21) / 2 * 2.0**-24
    snapshots = np.asarray(result.trace.snapshots[:, 0], np.float64)
    np.testing.assert_allclose(snapshots, expected, rtol=inward)
    assert np.all(snapshots <= np.asarray(expected) * (1 + 2.0**-23))
    assert result.trace.snapshots[-1, 0] == pytest.approx(r, rel=inward)


def test_prediction_after_update_is_recorded_on_request():
    X, y = ones_stream(5, 1.0)
    before = run(OGD(Squared(), Constant(0.5)), X, y)
    after = run(OGD(Squared(), Constant(0.5)), X, y, predict_after_update=True, snapshot_every=1)
    np.testing.assert_allclose(after.trace.prediction, after.trace.snapshots[:, 0])
    np.testing.assert_allclose(after.trace.prediction[:-1], before.trace.prediction[1:])
    np.testing.assert_array_equal(after.trace.loss, before.trace.loss)  # charged on the played weights


def test_passes_and_shuffling():
    rng = np.random.default_rng(1)
    X = jnp.asarray(rng.normal(size=(10, 3)).astype(np.float32))
    y = jnp.asarray(rng.normal(size=10).astype(np.float32))
    learner = ridge(InvSqrt(0.2), 5.0)
    stored = run(learner, X, y, passes=3)
    np.testing.assert_array_equal(stored.trace.index, np.tile(np.arange(10), 3))
    shuffled = run(learner, X, y, seed=7, passes=3)
    order = np.asarray(shuffled.trace.index).reshape(3, 10)
    for p in range(3):
        assert sorted(order[p]) == list(range(10))
    assert len({tuple(o) for o in order}) == 3  # each pass draws a fresh permutation
    np.testing.assert_array_equal(shuffled.trace.target, np.asarray(y)[np.asarray(shuffled.trace.index)])
    # Same seed, same numbers, bit for bit; a seed or a key give the same run.
    again = run(learner, X, y, seed=jax.random.key(7), passes=3)
    np.testing.assert_array_equal(again.state.w, shuffled.state.w)
    np.testing.assert_array_equal(again.trace.loss, shuffled.trace.loss)


def test_continuing_from_a_state_equals_one_run():
    rng = np.random.default_rng(2)
    X = jnp.asarray(rng.normal(size=(30, 4)).astype(np.float32))
    y = jnp.asarray(rng.normal(size=30).astype(np.float32))
    learner = ridge(InvSqrt(0.1), 1.0)
    whole = run(learner, X, y)
    first = run(learner, X[:13], y[:13])
    second = run(learner, X[13:], y[13:], state=first.state)
    np.testing.assert_array_equal(second.state.w, whole.state.w)
    np.testing.assert_array_equal(np.concatenate([first.trace.loss, second.trace.loss]), whole.trace.loss)


@pytest.mark.parametrize("k", [1, 4, 7, 30])
def test_snapshots_every_k_rounds(k):
    rng = np.random.default_rng(3)
    X = jnp.asarray(rng.normal(size=(25, 2)).astype(np.float32))
    y = jnp.asarray(rng.normal(size=25).astype(np.float32))
    learner = ridge(InvSqrt(0.3), L2Ball(0.8).radius)
    result = run(learner, X, y, snapshot_every=k)
    # the weights after every k rounds: runs of k rounds, each from the state the one before left
    # (one compiled run per k, where a run of each first m rounds compiled one per m)
    expected, state = [], learner.init(2)
    for m in range(k, 26, k):
        state = run(learner, X[m - k : m], y[m - k : m], state=state).state
        expected.append(state.w)
    assert result.trace.snapshots.shape == (25 // k, 2)
    np.testing.assert_allclose(result.trace.snapshots, np.reshape(expected, (-1, 2)), rtol=1e-6)
    np.testing.assert_array_equal(result.trace.loss, run(learner, X, y).trace.loss)


def test_passes_in_one_summed_program_equal_one_call_per_pass_continued():
    """run(passes=k, trace=False) loops over the passes inside its program, drawing each pass's
    shuffle there: the state and the sums are those of k one-pass calls, each continuing the
    last's state and sums, bit for bit, the passes numbered from first_pass. Pegasos over 1,100
    rows: its upkeep (every 1,024 rounds) falls at other rounds in the two ways."""
    from ocolearn import Pegasos

    rng = np.random.default_rng(5)
    X = jnp.asarray(rng.normal(size=(1100, 3)).astype(np.float32))
    y = jnp.sign(X @ jnp.array([1.0, -2.0, 0.5]) + 0.3 * jnp.asarray(rng.normal(size=1100), jnp.float32))
    for learner, seed in [(Pegasos(0.01), 7), (OGD(), None)]:
        whole = run(learner, X, y, seed, passes=3, first_pass=2, trace=False)
        state, summary = None, None
        for p in (2, 3, 4):
            state, summary = run(learner, X, y, seed, state=state, summary=summary, first_pass=p, trace=False)
        for a, b in zip(jax.tree.leaves((whole.state, whole.trace)), jax.tree.leaves((state, summary)), strict=True):
            np.testing.assert_array_equal(a, b)
    # the passes are the shuffles of passes 2, 3 and 4, not three of pass 2
    once = run(learner, X, y, 7, passes=3, first_pass=2, trace=False)
    repeated = run(learner, X, y, 7, first_pass=2, trace=False)
    for _ in range(2):
        repeated = run(learner, X, y, 7, state=repeated.state, summary=repeated.trace, first_pass=2, trace=False)
    assert not np.array_equal(once.state.w, repeated.state.w)


def test_pass_by_pass_equals_one_run_and_stops_when_separated():
    rng = np.random.default_rng(4)
    X = jnp.asarray(rng.normal(size=(40, 3)).astype(np.float32))
    y = jnp.sign(X @ jnp.array([1.0, -2.0, 0.5]))
    learner = Perceptron()
    whole = run(learner, X, y, 7, passes=6, trace=True)
    passes = run_passes(learner, X, y, 7, passes=6)
    np.testing.assert_array_equal(passes.state.w, whole.state.w)
    per_pass = np.asarray(whole.trace.prediction * whole.trace.target <= 0).reshape(6, 40).sum(axis=1)
    assert passes.mistakes == per_pass.tolist()
    np.testing.assert_allclose(passes.loss, np.asarray(whole.trace.loss).reshape(6, 40).sum(axis=1), rtol=1e-6)
    stopped = run_passes(learner, X, y, 7, passes=50, stop_early=True)
    assert stopped.mistakes[-1] == 0 and all(m > 0 for m in stopped.mistakes[:-1])
    # Separable: the weights no longer change, so more passes find no mistake either.
    assert run_passes(learner, X, y, 99, passes=3, state=stopped.state).mistakes == [0, 0, 0]


def test_a_state_whose_round_counter_would_wrap_is_refused():
    # run() checks its rounds from the state's counter: a state carried from call to call (a file
    # in chunks, partial_fit) would otherwise take the int32 counter past 2^31 - 1 and wrap
    from ocolearn.checks import MAX_ROUNDS
    from ocolearn.config import ConfigError

    X, y = ones_stream(10, 1.0)
    learner = OGD()
    state = learner.init(1)._replace(t=jnp.asarray(MAX_ROUNDS - 9, jnp.int32))
    with pytest.raises(ConfigError, match=f"from a state at round {MAX_ROUNDS - 8} run to round {MAX_ROUNDS + 1}"):
        run(learner, X, y, state=state._replace(t=state.t + 1))
    last = run(learner, X, y, state=state).state  # rounds up to 2^31 - 1; its counter for the next wraps
    with pytest.raises(ConfigError, match="the state's round counter is -2147483648: it counted past 2147483647"):
        run(learner, X[:1], y[:1], state=last)


def test_sparse_indices_wider_than_32_bits_are_checked_before_the_run():
    from ocolearn import Sparse
    from ocolearn.data import DataError

    y = jnp.ones(1)
    with pytest.raises(DataError, match="feature index 4294967297 is outside 0..2"):
        run(OGD(), Sparse(np.array([[2**32 + 1]], np.int64), np.ones((1, 1), np.float32), 3), y)
    np.testing.assert_array_equal(
        run(OGD(), Sparse(np.array([[1]], np.int64), np.ones((1, 1), np.float32), 3), y).state.w,
        np.array([0.0, 0.1, 0.0], np.float32),
    )
