"""Preprocessing parts and the pipeline learner: against float64 transcriptions, river, and
their own folded linear model."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import Stop, stopping_progress

from ocolearn.features import Sparse
from ocolearn.learners import OGD, FTRLProximal, Perceptron
from ocolearn.losses import Logistic
from ocolearn.pipeline import Pipeline, raw_linear, with_pipeline
from ocolearn.preprocess import Intercept, Moments, Normalize, Preprocess, Standardize, default_steps
from ocolearn.run import run
from ocolearn.schedules import Constant


def mixed_scales(n=300, seed=0):
    """A binary table whose features differ by orders of magnitude and are off centre."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1.0, 30.0, 0.01, 500.0] + [3.0, -40.0, 0.5, 2000.0]
    score = (X - [3.0, -40.0, 0.5, 2000.0]) / [1.0, 30.0, 0.01, 500.0] @ [1.0, -2.0, 0.5, 1.0] + 0.7
    y = np.where(score + rng.normal(scale=0.5, size=n) > 0, 1.0, -1.0)
    return X, y


def progressive_by_hand(X, y, eta, leaky=False):
    """float64 transcription: Welford mean and population variance, river's order (predict with
    the statistics before the row; learn after adding it), logistic OGD with a constant rate on
    the standardized row and a constant feature 1. ``leaky`` predicts with the row already in
    the statistics (a broken order the tests must reject)."""
    n, d = X.shape
    mean, var, count = np.zeros(d), np.zeros(d), 0
    w = np.zeros(d + 1)

    def scaled(v, m, s2):
        return np.append(np.where(s2 > 0, (v - m) / np.sqrt(np.where(s2 > 0, s2, 1)), 0.0), 1.0)

    predictions = []
    for x, target in zip(X, y, strict=True):
        new_count = count + 1
        new_mean = mean + (x - mean) / new_count
        new_var = var + ((x - mean) * (x - new_mean) - var) / new_count
        seen = (new_mean, new_var) if leaky else (mean, var)
        predictions.append(w @ scaled(x, *seen))
        count, mean, var = new_count, new_mean, new_var
        z = scaled(x, mean, var)
        p = w @ z
        w = w - eta * (-target / (1 + np.exp(target * p))) * z
    return np.array(predictions), w, (mean, var)


def test_standardize_matches_welford_and_river_order():
    X, y = mixed_scales()
    # clip = 0: river's rule exactly (the default clips predictions of rows far outside those seen)
    learner = with_pipeline(OGD(loss=Logistic(), schedule=Constant(0.05)), (Standardize(clip=0.0), Intercept()))
    result = run(learner, X.astype(np.float32), y.astype(np.float32))
    predictions, w, (mean, var) = progressive_by_hand(X.astype(np.float32).astype(np.float64), y, 0.05)
    np.testing.assert_allclose(result.trace.prediction, predictions, rtol=2e-4, atol=2e-4)
    np.testing.assert_allclose(result.state.w, w, rtol=2e-4, atol=2e-4)
    moments = result.state.steps[0]
    np.testing.assert_allclose(moments.mean, mean, rtol=1e-5)
    np.testing.assert_allclose(moments.sd, np.sqrt(var), rtol=1e-4)
    leaky, _, _ = progressive_by_hand(X.astype(np.float64), y, 0.05, leaky=True)
    assert np.max(np.abs(np.asarray(result.trace.prediction) - leaky)) > 0.05  # the order is seen


def test_progressive_accuracy_equals_rivers_pipeline():
    """river's ``StandardScaler() | LogisticRegression()`` (SGD 0.05, intercept_lr 0.05, no l2)
    and the same rule here: progressive accuracy within 1 point, weights within float32."""
    river = pytest.importorskip("river")
    from river import compose, linear_model, optim, preprocessing

    X, y = mixed_scales(n=400, seed=3)
    X = X.astype(np.float32).astype(np.float64)
    model = compose.Pipeline(
        preprocessing.StandardScaler(),
        linear_model.LogisticRegression(optimizer=optim.SGD(0.05), intercept_lr=0.05, l2=0.0),
    )
    theirs = []
    for x, target in zip(X, y, strict=True):
        row = {f"f{i}": v for i, v in enumerate(x)}
        theirs.append(model.predict_proba_one(row).get(True, 0.0) > 0.5)
        model.learn_one(row, bool(target > 0))
    assert river.__version__
    learner = with_pipeline(OGD(loss=Logistic(), schedule=Constant(0.05)), default_steps(dense=True))
    result = run(learner, X.astype(np.float32), y.astype(np.float32))
    ours = np.asarray(result.trace.prediction) > 0
    their_accuracy = np.mean(np.array(theirs) == (y > 0))
    our_accuracy = np.mean(ours == (y > 0))
    assert abs(our_accuracy - their_accuracy) <= 0.01
    weights = model["LogisticRegression"].weights
    np.testing.assert_allclose(result.state.w[:4], [weights[f"f{i}"] for i in range(4)], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(result.state.w[4], model["LogisticRegression"].intercept, rtol=1e-3, atol=1e-3)


def test_online_scaling_and_intercept_lift_accuracy():
    """On mixed scales the bare learner is far behind the pipeline (the point of scaling)."""
    X, y = mixed_scales(n=2000, seed=1)
    X32, y32 = X.astype(np.float32), y.astype(np.float32)
    bare = run(Perceptron(), X32, y32).trace
    piped = run(with_pipeline(Perceptron(), default_steps(dense=True)), X32, y32).trace
    accuracy = [np.mean((np.asarray(t.prediction) > 0) == (y > 0)) for t in (bare, piped)]
    assert accuracy[1] > 0.85 > accuracy[0] + 0.1


@pytest.mark.parametrize("steps", [(Standardize(), Intercept()), (Normalize(), Intercept(2.0)), (Normalize(),)])
def test_folded_linear_model_scores_as_the_pipeline(steps):
    X, y = mixed_scales(n=120, seed=2)
    learner = with_pipeline(OGD(loss=Logistic(), schedule=Constant(0.1)), steps)
    state = run(learner, X.astype(np.float32), y.astype(np.float32)).state
    w, offset = raw_linear(learner, state)
    expected = jax.vmap(learner.predict, (None, 0))(state, jnp.asarray(X, jnp.float32))
    np.testing.assert_allclose(X @ w - offset, expected, rtol=1e-4, atol=1e-3)


def test_sparse_rows_normalize_and_intercept():
    """On sparse rows: the scale is the largest |x_i| seen (O(nnz)), the intercept the last
    feature, padding changes nothing, and the folded model scores as the pipeline."""
    idx = jnp.array([[0, 2, 0], [1, 2, 0], [0, 3, 3]], jnp.int32)
    val = jnp.array([[2.0, -4.0, 0.0], [3.0, 1.0, 0.0], [-5.0, 0.5, 0.0]], jnp.float32)
    X, y = Sparse(idx, val, 4), jnp.array([1.0, -1.0, 1.0])
    learner = with_pipeline(Perceptron(), (Normalize(), Intercept()))
    state = run(learner, X, y).state
    np.testing.assert_array_equal(state.steps[0], [5.0, 3.0, 4.0, 0.5])
    assert state.inner.w.shape == (5,)
    dense = X.todense()
    expected = jax.vmap(learner.predict, (None, 0))(state, jnp.asarray(dense))
    w, offset = raw_linear(learner, state)
    np.testing.assert_allclose(dense @ w - offset, expected, rtol=1e-6)
    sparse_scores = jnp.stack([learner.predict(state, Sparse(idx[i], val[i], 4)) for i in range(3)])
    np.testing.assert_allclose(sparse_scores, expected, rtol=1e-6)


def test_normalize_step_is_observe_then_transform_bit_for_bit():
    # Normalize.step takes the scales from what put writes (no read of the state after its writes):
    # the same bits as the contract's observe then transform, on rows with repeated indices (hash
    # collisions: the last entry writing an index wins), zeros (padding, which write nothing), NaN.
    # Both ways: the k x k table of which entry writes which (k^2 <= d: 36 <= 40) and the read (36 > 8).
    rng = np.random.default_rng(5)
    step, base = Normalize(), Preprocess.step
    for dim in np.tile([8, 40], 100):
        state = jnp.asarray(rng.uniform(0, 2, dim), jnp.float32)  # below most |x_i|: the writes show
        idx = jnp.asarray(rng.integers(0, 8, 6), jnp.int32)
        val = rng.choice([0.0, 1.5, -3.0, 0.25, 7.0], 6) * rng.uniform(0.5, 2, 6)
        val = jnp.asarray(np.where(rng.random(6) < 0.05, np.nan, val), jnp.float32)
        x = Sparse(idx, val, int(dim))
        got, expected = jax.jit(step.step)(state, x), jax.jit(lambda s, x: base(step, s, x))(state, x)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1].val, expected[1].val)
    dense = jnp.asarray(rng.normal(size=state.shape), jnp.float32)
    np.testing.assert_array_equal(step.step(state, dense)[1], base(step, state, dense)[1])


def test_standardize_refuses_sparse_rows():
    from ocolearn.parts import ConfigError

    with pytest.raises(ConfigError, match="normalize"):
        default_steps(dense=False, scale="standardize")


def test_intercept_is_not_regularized():
    """FTRL-Proximal with an l1 far above every gradient: the weights stay 0 except the
    intercept's, which learns the base rate (l1 = l2 = 0 there)."""
    X = np.zeros((200, 3), np.float32)
    X[:, 0] = np.tile([1.0, -1.0], 100)
    y = np.where(np.arange(200) % 4 == 0, -1.0, 1.0).astype(np.float32)
    learner = with_pipeline(FTRLProximal(l1=1e6, l2=0.0), (Intercept(),))
    assert learner.learner.intercept
    w = np.asarray(run(learner, X, y).state.w)
    assert np.all(w[:3] == 0) and w[3] > 0.5
    unexempt = Pipeline((Intercept(),), FTRLProximal(l1=1e6, l2=0.0))  # a broken rule: the intercept penalized
    assert np.all(np.asarray(run(unexempt, X, y).state.w) == 0)


def test_sweep_of_pipelines_equals_separate_runs():
    from ocolearn.sweep import stack_values, sweep

    X, y = mixed_scales(n=100)
    base = OGD(loss=Logistic(), schedule=Constant(0.1))
    stacked = stack_values(base, {"schedule.eta": np.array([0.01, 0.1, 1.0])})
    swept = sweep(with_pipeline(stacked, default_steps(True), stacked=3), X.astype(np.float32), y.astype(np.float32))
    for c, eta in enumerate([0.01, 0.1, 1.0]):
        one = with_pipeline(OGD(loss=Logistic(), schedule=Constant(eta)), default_steps(True))
        state = run(one, X.astype(np.float32), y.astype(np.float32)).state
        np.testing.assert_allclose(swept.state.w[c, 0], state.w, rtol=1e-6)


def test_moments_state_shapes_are_stable():
    learner = with_pipeline(Perceptron(), default_steps(True))
    state = learner.init(3)
    assert isinstance(state.steps[0], Moments)
    after = jax.eval_shape(learner.update, state, (jnp.zeros(3), jnp.float32(1)))
    assert jax.tree.map(lambda a: (a.shape, a.dtype), after) == jax.tree.map(lambda a: (a.shape, a.dtype), state)


def test_streamed_and_resumed_pipeline_equals_the_whole_run(tmp_path):
    """A CSV file streamed in chunks of 7 rows behind online standardization and the intercept
    gives the in-memory run's weights and statistics bit for bit, and so does a run stopped in
    its second pass and resumed from its checkpoint (the parts' statistics are checkpointed
    with the learner's state)."""
    from ocolearn.data import DataError
    from ocolearn.data.stream import Source
    from ocolearn.pipeline import read_data, target_map
    from ocolearn.streaming import run_stream

    X, y = mixed_scales(n=60, seed=4)
    path = tmp_path / "mixed.csv"
    rows = (",".join([*(repr(float(v)) for v in x), "yes" if t > 0 else "no"]) for x, t in zip(X, y, strict=True))
    path.write_text("a,b,c,d,label\n" + "\n".join(rows) + "\n")
    data = read_data(path, "csv", target="label")
    learner = with_pipeline(Perceptron(), default_steps(dense=True))
    targets = target_map(learner, data.labels)
    whole = run(learner, data.X, targets(data.y), passes=2, trace=False)
    source = Source(str(path), "csv", dim=4, labels=tuple(data.labels), target="label", task="binary")
    options = dict(targets=targets, passes=2, chunk_rows=7)
    streamed = run_stream(learner, source, **options)
    for a, b in zip(jax.tree.leaves(streamed.state), jax.tree.leaves(whole.state), strict=True):
        np.testing.assert_array_equal(a, b)

    ckpt = tmp_path / "run.ckpt.npz"
    with pytest.raises(Stop):
        run_stream(learner, source, checkpoint=ckpt, checkpoint_every=7, progress=stopping_progress(12), **options)
    resumed = run_stream(learner, source, checkpoint=ckpt, checkpoint_every=7, resume=True, **options)
    for a, b in zip(jax.tree.leaves(resumed.state), jax.tree.leaves(whole.state), strict=True):
        np.testing.assert_array_equal(a, b)
    other = with_pipeline(Perceptron(), (Intercept(),))  # another pipeline: not this run's checkpoint
    with pytest.raises(DataError, match="another run"):
        run_stream(other, source, checkpoint=ckpt, resume=True, **options)


def test_standardize_is_scale_free_up_to_float32s_range():
    """Multiplying a feature by 1e20 (a variance of 1e40, beyond float32) changes no scaled row
    and so no prediction: the deviation is carried without squares."""
    X, y = mixed_scales(n=200, seed=5)
    big = X * [1.0, 1.0, 1e20 / 0.01, 1.0]
    learner = with_pipeline(Perceptron(), default_steps(dense=True))
    small_run = run(learner, X.astype(np.float32), y.astype(np.float32))
    big_run = run(learner, big.astype(np.float32), y.astype(np.float32))
    assert np.all(np.isfinite(big_run.state.w)) and np.all(np.isfinite(big_run.state.steps[0].sd))
    np.testing.assert_allclose(big_run.trace.prediction, small_run.trace.prediction, rtol=1e-3, atol=1e-3)


def test_standardize_stays_finite_across_float32s_range():
    """Rows 3e38, -3e38, 1e38 (each a float32; their differences are not): the mean and the
    deviation are float64's, each scaled row is finite, and each round's prediction too (the
    second one scales -3e38 with the first row's statistics: a deviation of 0, so 0)."""
    column = np.array([3e38, -3e38, 1e38])
    X = np.stack([column, [1.0, 2.0, 4.0]], 1).astype(np.float32)
    part = Standardize()
    state, rows = jax.lax.scan(part.step, part.init(2), jnp.asarray(X))
    mean, sd = X.astype(np.float64).mean(0), X.astype(np.float64).std(0)
    np.testing.assert_allclose(state.mean, mean, rtol=1e-6)
    np.testing.assert_allclose(state.sd, sd, rtol=1e-6)
    np.testing.assert_allclose(rows[-1], (X[-1] - mean) / sd, rtol=1e-6)
    np.testing.assert_allclose(rows[1], [-1.0, 1.0], rtol=1e-6)  # two rows: each one deviation from their mean
    result = run(with_pipeline(Perceptron(), default_steps(dense=True)), X, np.float32([1, -1, 1]))
    assert np.all(np.isfinite(result.trace.prediction)) and np.all(np.isfinite(result.state.w))


def test_model_of_folds_the_averaged_weights_and_records_the_pipeline():
    # model_of: the averaged weights of the inner learner, folded through the steps' final statistics,
    # in float64; the settings name the learner, the steps and their statistics.
    from ocolearn.learners import MIRA
    from ocolearn.pipeline import model_of

    rng = np.random.default_rng(4)
    X = jnp.asarray(rng.normal(size=(60, 4)) * [1.0, 10.0, 0.1, 3.0] + [0.0, 50.0, 0.0, -2.0], jnp.float32)
    y = jnp.asarray(rng.integers(0, 3, 60), jnp.int32)
    steps = (Standardize(), Intercept())
    learner = with_pipeline(MIRA(classes=3), steps)
    state = run(learner, X, y).state
    last = model_of(learner, state, ["a", "b", "c"], 4)
    model = model_of(learner, state, ["a", "b", "c"], 4, averaged=True, settings={"format": "csv"})
    w, offset = raw_linear(learner, state, learner.learner.averaged(state.inner))
    assert model.w.dtype == np.float64 and model.offset.dtype == np.float64
    np.testing.assert_array_equal(model.w, w)
    np.testing.assert_array_equal(model.offset, offset)
    assert not np.array_equal(model.w, last.w)  # the average, not the last weights
    assert model.settings["averaged"] is True and last.settings["averaged"] is False
    assert model.settings["format"] == "csv" and model.settings["dim"] == 4 and model.labels == ["a", "b", "c"]
    assert model.settings["learner"] == learner.learner.to_config()
    assert model.settings["pipeline"] == [s.to_config() for s in steps]
    stored = model.settings["pipeline_state"]
    assert [list(stored[0]), stored[1]] == [[np.asarray(a).tolist() for a in state.steps[0]], ()]
    assert model.settings["normalized"] is False
    # normalize: each class's weights (and offset) over the row's L2 norm
    normalized = model_of(learner, state, ["a", "b", "c"], 4, averaged=True, normalize=True)
    norms = np.linalg.norm(w, axis=1)
    np.testing.assert_allclose(normalized.w, w / norms[:, None], rtol=1e-15)
    np.testing.assert_allclose(normalized.offset, offset / norms, rtol=1e-15)
    assert normalized.settings["normalized"] is True
    # a class that never learned keeps its zero weights (no 0/0); a binary model's one row is scaled too
    silent = state._replace(inner=state.inner._replace(table=state.inner.table.at[:, 1].set(0.0)))  # class 1's w
    scaled = model_of(learner, silent, ["a", "b", "c"], 4, normalize=True)
    assert not scaled.w[1].any() and scaled.offset[1] == 0.0
    np.testing.assert_allclose(np.linalg.norm(scaled.w[[0, 2]], axis=1), 1.0, rtol=1e-15)
    binary = with_pipeline(Perceptron(), steps)
    signs = jnp.where(y == 0, 1.0, -1.0)
    binary_state = run(binary, X, signs).state
    w, offset = raw_linear(binary, binary_state)
    unit = model_of(binary, binary_state, ["-1", "1"], 4, normalize=True)
    np.testing.assert_allclose(unit.w, w / np.linalg.norm(w), rtol=1e-15)
    np.testing.assert_allclose(unit.offset, offset / np.linalg.norm(w), rtol=1e-15)
    # without steps: the learner's own state
    plain = run(MIRA(classes=3), X, y).state
    np.testing.assert_array_equal(
        model_of(MIRA(classes=3), plain, ["a", "b", "c"], 4, averaged=True).w,
        np.asarray(MIRA(classes=3).averaged(plain), np.float64),
    )


def test_raw_linear_is_float64_with_steps_and_without():
    rng = np.random.default_rng(6)
    X = jnp.asarray(rng.normal(size=(30, 3)), jnp.float32)
    y = jnp.asarray(rng.normal(size=30), jnp.float32)
    for learner in (OGD(), with_pipeline(OGD(), (Standardize(), Intercept()))):
        w, offset = raw_linear(learner, run(learner, X, y).state)
        assert w.dtype == np.float64 and np.asarray(offset).dtype == np.float64


@pytest.mark.parametrize("clip", [0.5, 1.0, 3.0])
def test_standardize_clips_a_predicted_row_to_clip_sqrt_n_deviations_both_ways(clip):
    state = Moments(jnp.float32(9.0), jnp.zeros(3, jnp.float32), jnp.ones(3, jnp.float32))
    x = jnp.asarray([1e6, -1e6, 0.25], jnp.float32)
    np.testing.assert_array_equal(Standardize(clip=clip).transform(state, x), [3 * clip, -3 * clip, 0.25])
    assert Standardize(clip=0.0).transform(state, x).tolist() == [1e6, -1e6, 0.25]  # river's rule: no clip


def test_impute_folds_each_mean_into_its_indicator_feature_even_the_first():
    # fold: an imputed mean m_i stands in for a missing cell, where the indicator feature is 1, so the
    # indicator's weight takes w_c m_i; indicator -1: none. Feature 0 as an indicator is one too.
    from ocolearn.preprocess import Impute, Means

    step = Impute(columns=(1, 2), indicators=(0, -1))
    state = Means(jnp.float32(4.0), jnp.asarray([10.0, -3.0], jnp.float32))
    w, offset = step.fold(jax.tree.map(lambda a: np.asarray(a, np.float64), state), np.array([[0.5, 2.0, 7.0]]))
    np.testing.assert_array_equal(w, [[0.5 + 2.0 * 10.0, 2.0, 7.0]])
    assert offset.shape == (1,) and not offset.any()


def test_the_steps_refuse_what_they_cannot_do_naming_the_key():
    from ocolearn.parts import ConfigError

    with pytest.raises(ConfigError) as caught:
        default_steps(True, scale="bogus")
    assert str(caught.value) == "'bogus' is not one of auto, standardize, normalize, none, river"
    assert caught.value.key == "scale"
    for scale in ("standardize", "river"):
        with pytest.raises(ConfigError, match=f"^'{scale}' needs dense rows") as caught:
            default_steps(False, scale=scale)
        assert caught.value.key == "scale"


def test_each_scale_names_its_parts():
    # The table behind ``scale``: which parts every door puts in front of the learner.
    assert default_steps(True) == (Standardize(), Intercept())
    assert default_steps(False) == (Normalize(), Intercept())
    assert default_steps(True, scale="river") == (Standardize(clip=0.0), Intercept())
    assert default_steps(True, False, "river") == (Standardize(clip=0.0),)
    assert default_steps(False, scale="none") == (Intercept(),)
    assert default_steps(True, False, "none") == ()
    assert default_steps(True, scale="normalize") == (Normalize(), Intercept())


def test_each_dense_only_step_refuses_a_sparse_row_in_every_method():
    # Not only through default_steps: a part composed by hand says what it needs, at the row.
    from ocolearn.parts import ConfigError
    from ocolearn.preprocess import Impute

    row = Sparse(jnp.array([0, 2], jnp.int32), jnp.array([1.0, 2.0], jnp.float32), 3)
    standardize = Standardize()
    message = "^standardize needs dense rows \\(centring fills a sparse row\\); use scale = 'normalize'$"
    for method in (standardize.observe, standardize.transform, standardize.step):
        with pytest.raises(ConfigError, match=message):
            method(standardize.init(3), row)
    impute = Impute(columns=(1, 2), indicators=(0, -1))
    for method in (impute.observe, impute.transform):
        with pytest.raises(ConfigError, match="^impute needs dense rows \\(the columns of a table\\)$"):
            method(impute.init(3), row)


def test_intercept_appends_its_constant_to_a_batch_in_the_rows_dtypes():
    dense = jnp.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], jnp.float16)
    out = Intercept(2.5).transform((), dense)
    assert out.dtype == jnp.float16 and out.shape == (3, 3)
    np.testing.assert_array_equal(out, [[1.0, 2.0, 2.5], [3.0, 4.0, 2.5], [5.0, 6.0, 2.5]])
    idx = jnp.asarray([[0, 3], [1, 1]], jnp.int16)
    val = jnp.asarray([[1.0, -2.0], [0.5, 0.0]], jnp.float16)
    out = Intercept(2.5).transform((), Sparse(idx, val, 4))
    assert out.dim == 5 and out.idx.dtype == jnp.int16 and out.val.dtype == jnp.float16
    np.testing.assert_array_equal(out.idx, [[0, 3, 4], [1, 1, 4]])
    np.testing.assert_array_equal(out.val, [[1.0, -2.0, 2.5], [0.5, 0.0, 2.5]])
    np.testing.assert_array_equal(out.todense(), [[1.0, 0, 0, -2.0, 2.5], [0, 0.5, 0, 0, 2.5]])


def test_normalize_folds_a_feature_never_seen_to_weight_zero_and_each_sweep_member_apart():
    # x'_i = x_i / s_i and 0 where s_i = 0: a weight on a feature never seen scores nothing.
    scale = np.asarray([0.0, 2.0, 0.5], np.float32)
    w = np.asarray([[3.0, 4.0, 1.0], [-1.0, 1.0, 0.25]])
    folded, offset = Normalize().fold(scale, w)
    np.testing.assert_array_equal(folded, [[0.0, 2.0, 2.0], [0.0, 0.5, 0.5]])
    assert offset.shape == (2,) and not offset.any()
    third = np.float32(1 / 3)  # float32 parts, a float64 quotient: 1/3 over 3 is not float32's
    folded, _ = Normalize().fold(np.asarray([3.0], np.float32), np.asarray([third], np.float32))
    assert folded.dtype == np.float64 and folded[0] == np.float64(third) / 3.0


def test_impute_reads_an_indicator_at_feature_0_and_folds_float32_weights_in_float64():
    # indicators[i] = 0 is feature 0 (only -1 means none): a missing cell there takes the mean.
    from ocolearn.preprocess import Impute, Means

    step = Impute(columns=(1, 2), indicators=(0, -1))
    state = Means(jnp.asarray([4.0, 4.0], jnp.float32), jnp.asarray([10.0, -3.0], jnp.float32))
    np.testing.assert_array_equal(step.transform(state, jnp.asarray([1.0, 0.0, 7.0])), [1.0, 10.0, 7.0])
    np.testing.assert_array_equal(step.transform(state, jnp.asarray([0.0, 2.0, 7.0])), [0.0, 2.0, 7.0])
    after = step.observe(state, jnp.asarray([1.0, 0.0, 7.0]))  # the missing cell counts nowhere
    np.testing.assert_array_equal(after.count, [4.0, 5.0])
    np.testing.assert_array_equal(after.mean, [10.0, -3.0 + 10.0 / 5.0])
    mean = np.asarray([1e6 + 1 / 3, 0.0])
    w = np.asarray([0.1, 0.3, 0.0], np.float32)
    folded, _ = step.fold(Means(np.ones(2), mean), w)
    assert folded.dtype == np.float64
    assert folded[0] == np.float64(np.float32(0.1)) + np.float64(np.float32(0.3)) * mean[0]


def test_every_steps_state_is_float32_as_the_learners_even_with_x64_on():
    # One checkpoint format whatever jax_enable_x64 says: the statistics are float32 as every
    # learner's state is (and a float64 row under x64 is the caller's choice, not the state's).
    from ocolearn.preprocess import Impute

    with jax.enable_x64(True):
        for step in (Standardize(), Normalize(), Impute(columns=(0, 1), indicators=(2, -1)), Intercept()):
            dtypes = {leaf.dtype for leaf in jax.tree.leaves(step.init(3))}
            assert dtypes <= {jnp.dtype(jnp.float32)}, (step, dtypes)


def _array_shapes(jaxpr):
    """Every shape a program computes, its nested programs' included."""
    from jax.extend.core import jaxprs_in_params

    for eqn in jaxpr.eqns:
        yield from (v.aval.shape for v in eqn.outvars)
        for inner in jaxprs_in_params(eqn.params):
            yield from _array_shapes(inner)


@pytest.mark.parametrize(("k", "table"), [(20, True), (21, False)])
def test_normalize_step_builds_the_k_by_k_table_only_where_it_is_no_larger_than_the_state(k, table):
    # The table of which entry writes which costs k^2, the read of the state after its writes a copy
    # of its d numbers: the table where k^2 <= d (d = 400 here), never for long rows (documents).
    x = Sparse(jnp.arange(k, dtype=jnp.int32), jnp.ones(k, jnp.float32), 400)
    program = jax.make_jaxpr(Normalize().step)(jnp.zeros(400, jnp.float32), x).jaxpr
    assert ((k, k) in set(_array_shapes(program))) == table
