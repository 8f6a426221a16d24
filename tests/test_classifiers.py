"""Perceptron and Passive-Aggressive against scikit-learn, the papers' rules and Novikoff's bound."""

import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocolearn import OCPSVM, EpsilonInsensitive, PassiveAggressive, Perceptron, Sparse, run
from ocolearn.cli import main
from ocolearn.features import row


def binary(n=300, d=6, seed=0):
    """Features on a grid of 1/8 (sums are exact in float32 and float64), labels +-1."""
    rng = np.random.default_rng(seed)
    X = (rng.integers(-16, 17, size=(n, d)) / 8).astype(np.float32)
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0).astype(np.float32)
    return X, y


def one_epoch(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch does not "converge"
        return model.fit(X.astype(np.float64), y.astype(np.float64)).coef_.ravel()


SGD_OPTIONS = dict(penalty=None, fit_intercept=False, shuffle=False, max_iter=1, tol=None)


def test_perceptron_equals_scikit_learn_exactly(sklearn):
    X, y = binary()
    expected = one_epoch(sklearn.Perceptron(fit_intercept=False, shuffle=False, max_iter=1, tol=None), X, y)
    np.testing.assert_array_equal(run(Perceptron(), X, y).state.w, expected.astype(np.float32))


def test_averaged_perceptron_equals_scikit_learn_and_the_mean_of_the_weights(sklearn):
    X, y = binary()
    learner = Perceptron()
    result = run(learner, X, y, snapshot_every=1)
    averaged = np.asarray(learner.averaged(result.state))
    np.testing.assert_allclose(
        averaged, np.asarray(result.trace.snapshots, np.float64).mean(axis=0), rtol=1e-5, atol=1e-5
    )
    model = sklearn.SGDClassifier(loss="perceptron", learning_rate="constant", eta0=1.0, average=True, **SGD_OPTIONS)
    np.testing.assert_allclose(averaged, one_epoch(model, X, y), rtol=1e-5, atol=1e-5)
    assert not np.allclose(averaged, result.state.w)  # kept apart from the working weights


@pytest.mark.parametrize("variant, rate", [(1, "pa1"), (2, "pa2")])
@pytest.mark.parametrize("C", [0.01, 1.0])
def test_pa_classifier_equals_scikit_learn(variant, rate, C, sklearn):
    X, y = binary()
    model = sklearn.SGDClassifier(loss="hinge", learning_rate=rate, eta0=C, **SGD_OPTIONS)
    np.testing.assert_allclose(
        run(PassiveAggressive(C, variant), X, y).state.w, one_epoch(model, X, y), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("variant, rate", [(1, "pa1"), (2, "pa2")])
def test_pa_regression_equals_scikit_learn(variant, rate, sklearn):
    rng = np.random.default_rng(1)
    X = (rng.integers(-16, 17, size=(300, 5)) / 8).astype(np.float32)
    y = (X @ rng.normal(size=5) + 0.1 * rng.normal(size=300)).astype(np.float32)
    learner = PassiveAggressive(0.5, variant, EpsilonInsensitive(0.1))
    model = sklearn.SGDRegressor(loss="epsilon_insensitive", epsilon=0.1, learning_rate=rate, eta0=0.5, **SGD_OPTIONS)
    np.testing.assert_allclose(run(learner, X, y).state.w, one_epoch(model, X, y), rtol=1e-5, atol=1e-6)


def test_pa_variants_follow_figure_1():
    # One step from w = 0 on x = (3, 4): l = 1, ||x||^2 = 25.
    x, y = jnp.array([3.0, 4.0]), 1.0
    for variant, C, tau in [(0, 0.01, 1 / 25), (1, 0.01, 0.01), (1, 1.0, 1 / 25), (2, 0.5, 1 / 26)]:
        learner = PassiveAggressive(C, variant)
        state = learner.update(learner.init(2), (x, y))
        np.testing.assert_allclose(state.w, tau * np.array([3.0, 4.0]), rtol=1e-6)
    # PA (variant 0) is exactly passive-aggressive: the new margin is 1.
    learner = PassiveAggressive(variant=0)
    state = learner.update(learner.init(2), (x, y))
    assert float(learner.predict(state, x)) == pytest.approx(1.0)


def pa_by_hand(X, y, C, variant, kind, epsilon=0.1, classes=3):
    """Crammer et al. 2006, Figure 1 (binary hinge, "binary"; epsilon-insensitive regression,
    "regression") and section 7 (the max-loss multiclass update, "multiclass"), in float64."""
    d = X.shape[1]
    w = np.zeros((classes, d)) if kind == "multiclass" else np.zeros(d)
    for x, target in zip(X.astype(np.float64), y.astype(np.float64), strict=True):
        if kind == "multiclass":
            target = int(target)
            scores = w @ x
            rival = int(np.argmax(np.where(np.arange(classes) == target, -np.inf, scores)))
            loss, q = max(0.0, 1 - (scores[target] - scores[rival])), 2 * (x @ x)
        elif kind == "binary":
            loss, q = max(0.0, 1 - target * (w @ x)), x @ x
        else:
            loss, q = max(0.0, abs(w @ x - target) - epsilon), x @ x
        tau = {0: loss / q, 1: min(C, loss / q), 2: loss / (q + 1 / (2 * C))}[variant] if q > 0 else 0.0
        if kind == "multiclass":
            w[target] += tau * x
            w[rival] -= tau * x
        else:
            w = w + tau * (target if kind == "binary" else np.sign(target - w @ x)) * x
    return w


@pytest.mark.parametrize("scale", [1e20, 1e-30], ids=["1e20", "1e-30"])
@pytest.mark.parametrize("variant", [0, 1, 2])
def test_pa_takes_the_exact_step_on_features_float32_cannot_square(scale, variant):
    """||x||^2 of features of 1e20 overflows float32 and of 1e-30 flushes to 0 (the step was
    then 0: all-zero weights, every round a mistake); the weights are Figure 1's in float64.
    PA (variant 0) is scale-free: its predictions are those on the unscaled rows."""
    X, y = binary(n=60)
    Xs = np.float32(X * scale)
    result = run(PassiveAggressive(0.5, variant), Xs, y)
    expected = pa_by_hand(X * np.float64(scale), y, 0.5, variant, "binary")
    np.testing.assert_allclose(result.state.w, expected, rtol=1e-4, atol=1e-5 * np.max(np.abs(expected)))
    if variant == 0:
        plain = run(PassiveAggressive(0.5, 0), X, y)
        np.testing.assert_allclose(result.trace.prediction, plain.trace.prediction, rtol=1e-4, atol=1e-4)
        labels = np.arange(60) % 3
        multiclass = run(PassiveAggressive(0.5, 0, classes=3), Xs, labels)
        expected = pa_by_hand(X * np.float64(scale), labels, 0.5, 0, "multiclass")
        np.testing.assert_allclose(multiclass.state.w, expected, rtol=1e-4, atol=1e-5 * np.max(np.abs(expected)))


def as_sparse(X):
    """Dense rows as ``Sparse`` rows holding every feature."""
    n, d = X.shape
    return Sparse(jnp.tile(jnp.arange(d, dtype=jnp.int32), (n, 1)), jnp.asarray(X), d)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("variant, C", [(0, 1.0), (1, 0.05), (1, 10.0)])
def test_pa_step_is_the_float32_formula_bit_for_bit(variant, C, sparse):
    """The first round on rows of a grid of 1/8 (||x||^2 exact, 1 / ||x||^2 mostly not): the
    weights are Figure 1's in float32, ``tau = min(C, 1 / ||x||^2)`` rounded once and each
    ``tau y x_i`` rounded once, bit for bit. The step is taken as ``(tau / k)(k x)`` with k a
    power of two, which changes no bits (with ``x / max |x_i|``, the step of before, most rows
    were an ulp off)."""
    X, y = binary(n=40, d=7, seed=5)
    learner = PassiveAggressive(C, variant)
    rows = as_sparse(X) if sparse else jnp.asarray(X)
    for i, (x, label) in enumerate(zip(X, y, strict=True)):
        q = np.float32(x @ x)  # exact
        tau = np.float32(1.0) / q if variant == 0 else min(np.float32(C), np.float32(1.0) / q)
        state = learner.update(learner.init(7), (row(rows, i), label))
        expected = np.zeros(7, np.float32) + (tau * label) * x  # w_2 = w_1 + tau y x (0 + -0 = 0)
        assert np.asarray(state.w).tobytes() == expected.tobytes(), i


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_pa_is_scale_free_bit_for_bit(sparse):
    """PA (variant 0) on rows scaled by 2^m: the weights are 2^-m times those on the rows and
    the predictions the same, bit for bit, also at m = +-70 and +-100, where ||x||^2 is beyond
    float32 (2^+-200): the step's sum of squares is taken at a power-of-two unit that holds it."""
    X, y = binary(n=200)
    base = run(PassiveAggressive(variant=0), as_sparse(X) if sparse else X, y)
    for m in (-100, -70, 70, 100):
        Xm = np.float32(X * 2.0**m)
        result = run(PassiveAggressive(variant=0), as_sparse(Xm) if sparse else Xm, y)
        assert np.asarray(result.state.w).tobytes() == np.float32(base.state.w * 2.0**-m).tobytes(), m
        assert np.asarray(result.trace.prediction).tobytes() == np.asarray(base.trace.prediction).tobytes(), m


def test_pa_from_the_command_line_learns_rows_of_1e20(tmp_path, capsys):
    """The issue's run: train on svmlight rows of 1e20, not rescaled (``--scale none``; the default
    normalizes sparse rows now), wrote all-zero weights and exited 0; now the model is Figure 1's
    and tests as it should."""
    X, y = binary(n=120)
    data = tmp_path / "big.svm"
    rows = (
        " ".join([f"{int(t)}", *(f"{i + 1}:{v * 1e20:g}" for i, v in enumerate(x))]) for x, t in zip(X, y, strict=True)
    )
    data.write_text("\n".join(rows) + "\n")
    model = tmp_path / "big.npz"
    unscaled = ["--no-intercept", "--scale", "none"]
    assert main(["train", "--learner", "passive_aggressive", *unscaled, str(data), "--model", str(model)]) == 0
    w = np.load(model, allow_pickle=False)["w"]
    expected = pa_by_hand(X * 1e20, y, 1.0, 1, "binary")
    np.testing.assert_allclose(w.ravel(), expected, rtol=1e-4, atol=1e-5 * np.max(np.abs(expected)))
    capsys.readouterr()
    assert main(["test", str(model), str(data)]) == 0
    error = float(next(line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith("error")))
    assert error < 0.2


@pytest.mark.parametrize("variant", [0, 1, 2])
def test_pa_regression_on_targets_of_1e30_is_figure_1(variant):
    """Targets of 1e30: the steps are Figure 1's in float64. PA (variant 0) fits them; PA-I's
    step moves a prediction by at most C ||x||^2 a round, so with C = 0.5 its predictions stay
    ~1e30 below the targets, as the rule says (the docstring tells to scale the targets)."""
    rng = np.random.default_rng(2)
    X = (rng.integers(-16, 17, size=(60, 4)) / 8).astype(np.float32)
    y = np.float32((X @ rng.normal(size=4)) * 1e30)
    result = run(PassiveAggressive(0.5, variant, EpsilonInsensitive(0.1)), X, y)
    expected = pa_by_hand(X, y, 0.5, variant, "regression")
    np.testing.assert_allclose(result.state.w, expected, rtol=1e-4, atol=1e-5 * np.max(np.abs(expected)))


@given(seed=st.integers(0, 2**16), gamma=st.floats(0.05, 0.5), d=st.integers(2, 6))
def test_perceptron_mistakes_within_novikoff_bound(seed, gamma, d):
    """On data separable by a unit u with margin gamma inside radius R, at most (R/gamma)^2 mistakes."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    X = rng.uniform(-1, 1, size=(400, d))
    X = X[np.abs(X @ u) >= gamma][:100].astype(np.float32)
    y = np.sign(X @ u).astype(np.float32)
    margin = np.min(y * (X.astype(np.float64) @ u))
    R = np.linalg.norm(X.astype(np.float64), axis=1).max()
    trace = run(Perceptron(), X, y, passes=60).trace
    mistakes = int(np.sum(np.asarray(trace.prediction) * np.asarray(trace.target) <= 0))
    assert mistakes <= (R / margin) ** 2
    # and it has converged: the last pass makes none
    assert np.all(np.asarray(trace.prediction[-len(y) :]) * y > 0)


def pegasos_by_hand(X, y, lam, project, passes):
    """Shalev-Shwartz et al. (2007), Figure 1 with k = 1, in float64."""
    w = np.zeros(X.shape[1])
    t = 0
    for _ in range(passes):
        for x, label in zip(X.astype(np.float64), y, strict=True):
            t += 1
            eta = 1 / (lam * t)
            violated = label * (w @ x) < 1
            w = (1 - eta * lam) * w + (eta * label * x if violated else 0.0)
            if project:
                w = w * min(1.0, (1 / np.sqrt(lam)) / max(np.linalg.norm(w), 1e-300))
    return w


@pytest.mark.parametrize("project", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_pegasos_equals_figure_1(project, sparse):
    from ocolearn import Pegasos, Sparse

    X, y = binary(n=50, d=6)
    lam, passes = 0.05, 40  # 2,000 rounds (longer runs flip a margin test y w.x < 1 by rounding)
    data = X
    if sparse:
        data = Sparse(np.tile(np.arange(6, dtype=np.int32), (50, 1)), X, 6)
    learner = Pegasos(lam, project)
    state = run(learner, data, y, passes=passes, trace=False).state
    expected = pegasos_by_hand(X, y, lam, project, passes)
    np.testing.assert_allclose(learner.weights(state), expected, rtol=1e-4, atol=1e-5)
    assert float(state.sqnorm) == (pytest.approx(float(expected @ expected), rel=1e-3) if project else 0.0)


def test_pegasos_folds_the_scale_into_the_weights(monkeypatch):
    import jax

    from ocolearn import Pegasos
    from ocolearn.learners import pegasos

    monkeypatch.setattr(pegasos, "FOLD_BELOW", 0.5)  # fold often instead of after 10,000 rounds
    monkeypatch.setattr(Pegasos, "tidy_every", 7)  # and check for it every 7 rounds (1024 by default)
    jax.clear_caches()
    X, y = binary(n=50, d=6)
    learner = Pegasos(0.05, True)
    state = run(learner, X, y, passes=40, trace=False).state
    np.testing.assert_allclose(learner.weights(state), pegasos_by_hand(X, y, 0.05, True, 40), rtol=1e-4, atol=1e-5)
    assert 0.5 * 0.5 <= float(state.scale) <= 1.0  # folded at most 7 rounds ago (1/t alone: 1/2000)
    jax.clear_caches()


def test_pegasos_first_step_and_zero_examples():
    from ocolearn import Pegasos

    learner = Pegasos(0.5)
    state = learner.update(learner.init(2), (jnp.array([1.0, 2.0]), -1.0))  # 1 - eta_1 lam = 0
    np.testing.assert_allclose(learner.weights(state), [-2.0, -4.0])  # eta_1 = 1 / lam = 2
    state = learner.update(state, (jnp.zeros(2), 1.0))  # only the shrinkage (1 - 1/2)
    np.testing.assert_allclose(learner.weights(state), [-1.0, -2.0])


def winnow_by_hand(X, y, promotion, threshold, balanced, passes):
    """Littlestone (1988): Winnow2, and Balanced Winnow with w+ = 2, w- = 1, in float64."""
    d = X.shape[1]
    theta = threshold or d / 2
    pos, neg = (2.0 * np.ones(d), np.ones(d)) if balanced else (np.ones(d), np.zeros(d))
    for _ in range(passes):
        for x, label in zip(X.astype(np.float64), y, strict=True):
            predicted = 1.0 if (pos - neg) @ x > theta else -1.0  # 1 iff w . x > theta
            if predicted != label:  # only on mistakes
                pos = pos * promotion ** (label * x)
                if balanced:
                    neg = neg * promotion ** (-label * x)
    return pos - neg if balanced else pos


def disjunction(seed, d=30, k=3, n=300):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.15).astype(np.float32)
    relevant = rng.choice(d, size=k, replace=False)
    return X, np.where(X[:, relevant].sum(axis=1) > 0, 1.0, -1.0).astype(np.float32)


@pytest.mark.parametrize("balanced", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_winnow_rules(balanced, sparse):
    from ocolearn import Sparse, Winnow

    X, y = disjunction(0)
    X = X * np.float32(1.5)  # real-valued features exercise promotion ** (y x)
    learner = Winnow(promotion=1.5, threshold=0.0, balanced=balanced)
    data = Sparse(np.tile(np.arange(30, dtype=np.int32), (300, 1)), X, 30) if sparse else X
    state = run(learner, data, y, passes=3).state
    np.testing.assert_allclose(learner.weights(state), winnow_by_hand(X, y, 1.5, 0.0, balanced, 3), rtol=1e-5)


@given(seed=st.integers(0, 2**16), k=st.integers(1, 3))
def test_winnow_learns_monotone_disjunctions(seed, k):
    from ocolearn import Winnow

    X, y = disjunction(seed, k=k)
    trace = run(Winnow(), X, y, passes=60).trace
    last = np.asarray(trace.prediction[-len(y) :]) * y
    assert np.all(last > 0) or np.all(y == y[0])


def test_ocp_svm_is_projected_ogd_on_the_hinge_with_averaged_iterates():
    X, y = binary(n=200)
    lam = 0.3
    w, radius, iterates = np.zeros(X.shape[1]), 1 / np.sqrt(lam), []
    for t, (x, label) in enumerate(zip(X.astype(np.float64), y, strict=True), start=1):
        if label * (w @ x) < 1:
            w = w + label * x / np.sqrt(t)
        w = w * min(1.0, radius / np.linalg.norm(w)) if np.any(w) else w
        iterates.append(w)
    learner = OCPSVM(lam)
    state = run(learner, X, y).state
    np.testing.assert_allclose(state.w, w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(learner.averaged(state), np.mean(iterates, axis=0), rtol=1e-5, atol=1e-5)
    assert np.linalg.norm(state.w) <= radius * (1 + 1e-6)
