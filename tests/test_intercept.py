"""``intercept=True`` of the learners with a projection or a regularizer (ogd, pegasos, adagrad):
the last coordinate is an intercept's weight that takes its step but is neither projected nor
shrunk. Each against a float64 transcription in which the bias coordinate is handled apart, and
each shown to differ from ``intercept=False`` on the same data (so the field does something)."""

import numpy as np
import pytest

from ocolearn import OGD, AdaGrad, Constant, Hinge, InvSqrt, L2Ball, Pegasos, Sparse, Squared, run


def with_constant(n=200, d=5, seed=0, offset=2.0):
    """Rows on a grid of 1/8 with a constant 1 appended last, and targets with a large offset
    (so the intercept's weight wants to leave any small ball)."""
    rng = np.random.default_rng(seed)
    X = (rng.integers(-16, 17, size=(n, d)) / 8).astype(np.float32)
    X = np.hstack([X, np.ones((n, 1), np.float32)])
    y = (X[:, :-1] @ rng.normal(size=d) + offset + 0.1 * rng.normal(size=n)).astype(np.float32)
    return X, y


def as_sparse(X):
    n, d = X.shape
    return Sparse(np.tile(np.arange(d, dtype=np.int32), (n, 1)), X, d)


def pegasos_by_hand(X, y, lam, project, passes):
    """Shalev-Shwartz et al. (2007), Figure 1 with k = 1, in float64, the last coordinate b an
    unshrunk, unprojected intercept: b += eta y x_d on a margin error."""
    w, b = np.zeros(X.shape[1] - 1), 0.0
    t = 0
    for _ in range(passes):
        for x, label in zip(X.astype(np.float64), y, strict=True):
            t += 1
            eta = 1 / (lam * t)
            violated = label * (w @ x[:-1] + b * x[-1]) < 1
            w = (1 - eta * lam) * w + (eta * label * x[:-1] if violated else 0.0)
            b = b + (eta * label * x[-1] if violated else 0.0)
            if project:
                w = w * min(1.0, (1 / np.sqrt(lam)) / max(np.linalg.norm(w), 1e-300))
    return np.append(w, b)


@pytest.mark.parametrize("project", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_pegasos_leaves_the_intercept_unshrunk_and_unprojected(project, sparse):
    X, y = with_constant(n=50)
    y = np.where(y > 2.0, 1.0, -1.0).astype(np.float32)
    lam, passes = 0.05, 20
    data = as_sparse(X) if sparse else X
    learner = Pegasos(lam, project, intercept=True)
    state = run(learner, data, y, passes=passes, trace=False).state
    expected = pegasos_by_hand(X, y, lam, project, passes)
    np.testing.assert_allclose(learner.weights(state), expected, rtol=1e-4, atol=1e-5)
    if project:
        assert float(state.sqnorm) == pytest.approx(float(expected[:-1] @ expected[:-1]), rel=1e-3)
    plain = Pegasos(lam, project).weights(run(Pegasos(lam, project), data, y, passes=passes, trace=False).state)
    assert abs(float(plain[-1]) - expected[-1]) > 1e-2  # without the field the bias is shrunk


def ogd_by_hand(X, y, eta, radius):
    """OGD on the squared loss, eta_t = eta / sqrt(t), the ball applied to all but the last
    coordinate (float64)."""
    w = np.zeros(X.shape[1])
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y, strict=True), start=1):
        w = w - eta / np.sqrt(t) * (w @ x - target) * x
        w[:-1] *= min(1.0, radius / max(np.linalg.norm(w[:-1]), 1e-300))
    return w


@pytest.mark.parametrize("sparse", [False, True])
def test_ogd_projects_all_but_the_intercept(sparse):
    X, y = with_constant(offset=5.0)
    data = as_sparse(X) if sparse else X
    learner = OGD(Squared(), InvSqrt(0.1), L2Ball(0.5), intercept=True)
    state = run(learner, data, y, passes=3, trace=False).state
    expected = ogd_by_hand(np.tile(X, (3, 1)), np.tile(y, 3), 0.1, 0.5)
    np.testing.assert_allclose(state.w, expected, rtol=1e-4, atol=1e-5)
    assert np.linalg.norm(expected[:-1]) == pytest.approx(0.5) and abs(expected[-1]) > 1.0  # ball active, bias out
    # The carried norm skips the intercept's weight.
    assert float(state.sqnorm) == pytest.approx(float(expected[:-1] @ expected[:-1]), rel=1e-5)
    plain = run(OGD(Squared(), InvSqrt(0.1), L2Ball(0.5)), data, y, passes=3, trace=False).state.w
    assert np.linalg.norm(plain) <= 0.5 * (1 + 1e-6)


def adagrad_l1_by_hand(X, y, eta, l1):
    """Diagonal AdaGrad's composite step with l1 (Duchi et al. 2011, section 5.1), no shrinkage on
    the last coordinate (float64)."""
    w, G = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    for x, target in zip(X.astype(np.float64), y, strict=True):
        g = (w @ x - target) * x
        G += g * g
        H = np.sqrt(G)
        safe = np.where(H > 0, H, 1.0)
        v = w - np.where(H > 0, eta * g / safe, 0.0)
        shrink = np.where(H > 0, eta * l1 / safe, 0.0)
        shrink[-1] = 0.0
        w = np.sign(v) * np.maximum(np.abs(v) - shrink, 0.0)
    return w


def test_adagrad_does_not_shrink_the_intercept():
    X, y = with_constant(offset=0.3)
    learner = AdaGrad(0.5, l1=0.4, intercept=True)
    state = run(learner, X, y, passes=2, trace=False).state
    expected = adagrad_l1_by_hand(np.tile(X, (2, 1)), np.tile(y, 2), 0.5, 0.4)
    np.testing.assert_allclose(state.w, expected, rtol=1e-4, atol=1e-5)
    plain = run(AdaGrad(0.5, l1=0.4), X, y, passes=2, trace=False).state.w
    assert abs(float(plain[-1]) - expected[-1]) > 1e-2


def test_adagrad_projects_all_but_the_intercept():
    X, y = with_constant(offset=5.0)
    learner = AdaGrad(0.5, projection=L2Ball(0.5), loss=Squared(), intercept=True)
    w = np.asarray(run(learner, X, y, trace=False).state.w, np.float64)
    assert np.linalg.norm(w[:-1]) <= 0.5 * (1 + 1e-5) and abs(w[-1]) > 1.0


def test_the_default_is_no_intercept():
    for learner in (OGD(Hinge(), Constant(0.1)), Pegasos(), AdaGrad()):
        assert learner.intercept is False
