"""Multiclass Perceptron and MIRA against direct NumPy transcriptions of their rules."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocolearn import MIRA, MulticlassHinge, MulticlassPerceptronLoss, OneVsRest, PassiveAggressive, Perceptron, run
from ocolearn.learners import normalized


def stream(n=120, d=5, K=4, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.integers(-16, 17, size=(n, d)) / 8).astype(np.float32)
    y = np.argmax(X @ rng.normal(size=(d, K)) + 0.5 * rng.normal(size=(n, K)), axis=1).astype(np.int32)
    return X, y


def perceptron_by_hand(X, y, K):
    w = np.zeros((K, X.shape[1]))
    for x, label in zip(X.astype(np.float64), y, strict=True):
        s = w @ x
        rival = max((k for k in range(K) if k != label), key=lambda k: (s[k], -k))
        if s[rival] >= s[label]:
            w[label] += x
            w[rival] -= x
    return w


def mira_by_hand(X, y, K, cost):
    w = np.zeros((K, X.shape[1]))
    for x, label in zip(X.astype(np.float64), y, strict=True):
        s = w @ x
        guess = int(np.argmax(s))
        if guess != label and x @ x > 0:
            alpha = (cost[label, guess] - (s[label] - s[guess])) / (2 * (x @ x))
            w[label] += alpha * x
            w[guess] -= alpha * x
    return w


def test_multiclass_perceptron_rule():
    X, y = stream()
    np.testing.assert_array_equal(run(Perceptron(classes=4), X, y).state.w, perceptron_by_hand(X, y, 4))


@pytest.mark.parametrize("cost", [None, "asymmetric"])
def test_mira_rule(cost):
    X, y = stream()
    matrix = 1 - np.eye(4) if cost is None else (1 - np.eye(4)) * (1 + np.arange(4))[:, None]
    learner = MIRA(classes=4, cost=None if cost is None else jnp.asarray(matrix, jnp.float32))
    np.testing.assert_allclose(run(learner, X, y).state.w, mira_by_hand(X, y, 4, matrix), rtol=1e-4, atol=1e-5)


def test_mira_first_step_closed_form():
    learner = MIRA(classes=3, cost=jnp.asarray([[0, 2, 2], [1, 0, 1], [1, 1, 0]], jnp.float32))
    state = learner.update(learner.init(2), (jnp.array([1.0, 1.0]), 1))  # guess 0 (all scores 0)
    # alpha = (cost[1, 0] - 0) / (2 * 2) = 1/4
    np.testing.assert_allclose(state.w, [[-0.25, -0.25], [0.25, 0.25], [0, 0]])
    again = learner.update(learner.init(2), (jnp.zeros(2), 1))
    np.testing.assert_array_equal(again.w, np.zeros((3, 2)))  # an all-zero example changes nothing


@pytest.mark.parametrize("learner", [MIRA(classes=4), Perceptron(classes=4)], ids=["mira", "perceptron"])
def test_averaged_weights_and_mistakes(learner):
    X, y = stream()
    result = run(learner, X, y, snapshot_every=1)
    np.testing.assert_allclose(
        learner.averaged(result.state),
        np.asarray(result.trace.snapshots, np.float64).mean(axis=0),
        rtol=1e-4,
        atol=1e-4,
    )
    mistakes = int(np.sum(np.argmax(result.trace.prediction, axis=1) != y))
    assert int(run(learner, X, y, trace=False).trace.mistakes) == mistakes > 0


def test_normalized_rows():
    w = normalized(jnp.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(w, [[0.6, 0.8], [0.0, 0.0]])


@pytest.mark.parametrize("loss", [MulticlassHinge(), MulticlassPerceptronLoss()], ids=lambda loss: loss.name)
@given(scores=st.lists(st.floats(-5, 5, width=32), min_size=2, max_size=6, unique=True), pick=st.integers(0, 5))
def test_multiclass_derivative_is_jax_grad(loss, scores, pick):
    s = jnp.asarray(scores, jnp.float32)
    y = pick % len(scores)
    rival = max(v for k, v in enumerate(scores) if k != y)
    margin = scores[y] - rival
    if min(abs(margin), abs(margin - 1.0)) < 1e-3:
        return  # at a kink the derivative is a convention
    np.testing.assert_allclose(loss.derivative(s, y), jax.grad(loss.value)(s, y), atol=1e-6)


def pa_multiclass_by_hand(X, y, K, C, variant):
    """Crammer et al. (2006), section 7, max-loss update with 0/1 cost, in float64."""
    w = np.zeros((K, X.shape[1]))
    for x, label in zip(X.astype(np.float64), y, strict=True):
        s = w @ x
        rival = max((k for k in range(K) if k != label), key=lambda k: (s[k], -k))
        loss = max(0.0, 1.0 - (s[label] - s[rival]))
        q = 2 * (x @ x)
        if loss == 0 or q == 0:
            continue
        tau = [loss / q, min(C, loss / q), loss / (q + 1 / (2 * C))][variant]
        w[label] += tau * x
        w[rival] -= tau * x
    return w


@pytest.mark.parametrize("variant", [0, 1, 2])
def test_multiclass_pa_rule(variant):
    X, y = stream()
    learner = PassiveAggressive(0.05, variant, classes=4)
    assert isinstance(learner.loss, MulticlassHinge)
    np.testing.assert_allclose(
        run(learner, X, y).state.w, pa_multiclass_by_hand(X, y, 4, 0.05, variant), rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize(
    "learner, model",
    [
        (Perceptron(), lambda sklearn: sklearn.Perceptron(fit_intercept=False, shuffle=False, max_iter=1, tol=None)),
        (
            PassiveAggressive(0.1, 1),
            lambda sklearn: sklearn.SGDClassifier(
                loss="hinge",
                learning_rate="pa1",
                eta0=0.1,
                penalty=None,
                fit_intercept=False,
                shuffle=False,
                max_iter=1,
                tol=None,
            ),
        ),
    ],
    ids=["perceptron", "pa1"],
)
def test_one_vs_rest_equals_scikit_learn(learner, model, sklearn):
    X, y = stream()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch does not "converge"
        expected = model(sklearn).fit(X.astype(np.float64), y).coef_
    ovr = OneVsRest(learner, classes=4)
    result = run(ovr, X, y)
    np.testing.assert_allclose(ovr.weights(result.state), expected, rtol=1e-5, atol=1e-5)
    scores = np.stack([ovr.predict(result.state, x) for x in X])
    np.testing.assert_array_equal(np.argmax(scores, axis=1), np.argmax(X @ expected.T, axis=1))


def test_classification_experiment_reports_what_the_weights_do(tmp_path):
    from pathlib import Path

    from ocolearn.config import load
    from ocolearn.experiment import learner_of, load_examples, run_experiment, split_validation
    from ocolearn.pipeline import raw_linear
    from ocolearn.preprocess import Intercept, Standardize
    from ocolearn.run import run_passes

    experiment = load(Path(__file__).parent.parent / "configs/iris_species.toml", ["run.passes=4"])
    metrics, _ = run_experiment(experiment, tmp_path)
    data = load_examples(experiment)
    assert data.labels == ["setosa", "versicolor", "virginica"] and data.X.shape == (150, 4)
    learner = learner_of(experiment, data)  # the [pipeline]: online standardization, then the intercept
    assert learner.steps == (Standardize(), Intercept())
    train, test = split_validation(None, data.y, 0.3, 0)
    passes = run_passes(learner, data.X[train], data.y[train], 0, passes=4)
    assert metrics["mistakes_per_pass"] == passes.mistakes and metrics["test_rows"] == 45
    (w, w0), (a, a0) = (
        raw_linear(learner, passes.state),
        raw_linear(learner, passes.state, learner.averaged(passes.state)),
    )
    X = data.X[test].astype(np.float64)
    assert metrics["test_error"] == np.mean(np.argmax(X @ w.astype(np.float32).T - w0, axis=1) != data.y[test])
    assert metrics["test_error_averaged"] == np.mean(np.argmax(X @ a.astype(np.float32).T - a0, axis=1) != data.y[test])
    assert (tmp_path / "mistakes.png").exists() and (tmp_path / "metrics.json").exists()
