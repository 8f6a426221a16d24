"""``intercept=True`` of the learners with a projection or a regularizer: the last coordinate is
an intercept's weight that takes its step but is neither projected nor shrunk. Each against a
float64 transcription in which the bias coordinate is handled apart, and each shown to differ
from ``intercept=False`` on the same data (so the field does something). Every registered learner
is classified (``RULE``): left out (checked behind the default pipeline), included (documented,
and that behaviour checked) or no constraint."""

import numpy as np
import pytest
import test_parameter_free
from test_parameter_free import metagrad_agrees, metagrad_by_hand

from ocolearn import OGD, AdaGrad, Constant, Hinge, InvSqrt, L2Ball, Pegasos, Sparse, Squared, run
from ocolearn.learners import (
    FTRL,
    OCPSVM,
    OMD,
    ONS,
    DoG,
    FTRLProximal,
    Mechanic,
    MetaGrad,
    SketchedONS,
    from_optax,
)
from ocolearn.learners.base import Learner
from ocolearn.mirror_maps import Euclidean, NegEntropy, PNorm, SignedEntropy
from ocolearn.parts import fields_of
from ocolearn.pipeline import with_intercept_field, with_pipeline
from ocolearn.preprocess import default_steps


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


# --- the other learners with a projection: float64 transcriptions, the intercept left out ---


def head_ball(w, radius):
    """``w`` with all but its last coordinate projected onto the L2 ball of ``radius``."""
    w = w.copy()
    w[:-1] *= min(1.0, radius / max(np.linalg.norm(w[:-1]), 1e-300))
    return w


def stream(n=60, d=3):
    """``y = 5 + x . beta + noise`` on rows with a constant 1 last, float64 for the transcriptions."""
    X, y = with_constant(n=n, d=d, offset=5.0)
    return X, y, X.astype(np.float64), y.astype(np.float64)


def close(learner, X, y, expected, rtol=1e-4, atol=1e-5):
    """``learner`` with its intercept field set (as the pipeline sets it) agrees with ``expected``
    (a float64 transcription with the intercept left out), whose intercept's weight is out of the
    ball; the weights of ``learner`` itself (the field off) do not."""
    w = np.asarray(run(with_intercept_field(learner), X, y, trace=False).state.w, np.float64)
    np.testing.assert_allclose(w, expected, rtol=rtol, atol=atol)
    plain = np.asarray(run(learner, X, y, trace=False).state.w, np.float64)
    assert abs(plain[-1] - expected[-1]) > 0.1


def test_dog_leaves_the_intercept_out_of_its_ball():
    X, y, X64, y64 = stream(n=200)
    w, rbar, G = np.zeros(X.shape[1]), 0.1, 0.0
    for x, target in zip(X64, y64, strict=True):  # Ivgi et al. 2023, Algorithm 1; rbar over all of w
        g = (w @ x - target) * x
        rbar, G = max(rbar, np.linalg.norm(w)), G + g @ g
        w = head_ball(w - rbar / np.sqrt(G) * g, 1.0)
    assert abs(w[-1]) > 2.0
    close(DoG(0.1, projection=L2Ball(1.0)), X, y, w)


def test_ftrl_and_omd_leave_the_intercept_out_of_a_euclidean_ball():
    X, y, X64, y64 = stream()
    theta_ftrl, theta_omd = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    w_ftrl, w_omd = theta_ftrl.copy(), theta_omd.copy()
    for t, (x, target) in enumerate(zip(X64, y64, strict=True), start=1):
        eta = 0.1 / np.sqrt(t)
        theta_ftrl -= (w_ftrl @ x - target) * x  # the lazy projection of -eta_t sum g
        w_ftrl = head_ball(eta * theta_ftrl, 1.0)
        theta_omd = head_ball(theta_omd - eta * (w_omd @ x - target) * x, 1.0)  # the greedy one
        w_omd = theta_omd
    assert abs(w_ftrl[-1]) > 2.0 and abs(w_omd[-1]) > 2.0
    mirror = Euclidean(L2Ball(1.0))
    close(FTRL(Squared(), InvSqrt(0.1), mirror), X, y, w_ftrl)
    close(OMD(Squared(), InvSqrt(0.1), mirror), X, y, w_omd)


def test_optax_leaves_the_intercept_out_of_its_ball():
    X, y, X64, y64 = stream()
    w = np.zeros(X.shape[1])
    for x, target in zip(X64, y64, strict=True):
        w = head_ball(w - 0.05 * (w @ x - target) * x, 1.0)
    assert abs(w[-1]) > 2.0
    close(from_optax("sgd", projection=L2Ball(1.0), learning_rate=0.05), X, y, w)


def test_ocp_svm_leaves_the_intercept_out_of_its_ball():
    """Hinge OGD with eta_t = 1 / sqrt(t) in the ball of 1 / sqrt(lam) = 0.5, the averaged
    iterates too; the labels mostly +1, so the intercept's weight leaves the ball."""
    X, y, X64, _ = stream(n=80)
    labels = np.where(y > 4.0, 1.0, -1.0)
    w, total = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    for t, (x, label) in enumerate(zip(X64, labels, strict=True), start=1):
        if label * (w @ x) < 1:
            w = head_ball(w + label * x / np.sqrt(t), 0.5)
        total += w
    assert abs(w[-1]) > 0.6 and 0 < (labels < 0).sum() < 40
    learner = OCPSVM(4.0)
    close(learner, X, labels.astype(np.float32), w)
    state = run(with_intercept_field(learner), X, labels.astype(np.float32), trace=False).state
    np.testing.assert_allclose(learner.averaged(state), total / len(X), rtol=1e-4, atol=1e-5)


def head_ball_in_norm(v, A, radius):
    """``argmin_{||u[:-1]|| <= radius} (u - v)' A (u - v)`` by bisection on the KKT multiplier:
    ``u = (A + mu E)^-1 A v`` with ``E = diag(1, ..., 1, 0)`` (the ball's constraint on all but the
    last coordinate), ``||u[:-1]||`` falling as mu grows."""
    if np.linalg.norm(v[:-1]) <= radius:
        return v
    E = np.diag(np.append(np.ones(len(v) - 1), 0.0))

    def u(mu):
        return np.linalg.solve(A + mu * E, A @ v)

    lo, hi = 0.0, 1.0
    while np.linalg.norm(u(hi)[:-1]) > radius:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mu = (lo + hi) / 2
        lo, hi = (mu, hi) if np.linalg.norm(u(mu)[:-1]) > radius else (lo, mu)
    return u(hi)


def test_ons_leaves_the_intercept_out_of_its_generalized_projection():
    X, y, X64, y64 = stream()
    gamma, radius = 0.2, 1.0
    A, w, binding = np.eye(X.shape[1]), np.zeros(X.shape[1]), 0
    for x, target in zip(X64, y64, strict=True):  # Hazan et al. 2007, Algorithm 2, epsilon = 1
        g = (w @ x - target) * x
        A += np.outer(g, g)
        v = w - np.linalg.solve(A, g) / gamma
        w = head_ball_in_norm(v, A, radius)
        binding += np.linalg.norm(v[:-1]) > radius
    assert abs(w[-1]) > 2.0 and binding > 5
    close(ONS(gamma, projection=L2Ball(radius)), X, y, w, rtol=1e-3, atol=1e-4)


def test_metagrad_leaves_the_intercept_out_of_its_experts_projections(monkeypatch):
    """The float64 MetaGrad of ``test_parameter_free`` with each expert's projection on all but
    the last coordinate (``head_ball_in_norm``, by bisection: independent of the Schur-complement
    form the learner uses)."""
    X, y, _, _ = stream(n=80, d=2)
    radius = 0.5
    G = float(np.max(np.linalg.norm(X, axis=1) * np.abs(y)))
    binding = []

    def projection(v, A, radius):
        binding.append(np.linalg.norm(v[:-1]) > radius)
        return head_ball_in_norm(v, A, radius)

    monkeypatch.setattr(test_parameter_free, "ball_in_norm", projection)
    reference = metagrad_by_hand(X, y, radius, G, 5)
    assert sum(binding) > 5 and abs(reference[0][-1]) > 2 * radius
    state = run(with_intercept_field(MetaGrad(radius, G, 5)), X, y, trace=False).state
    assert metagrad_agrees(state, reference, radius)
    plain = run(MetaGrad(radius, G, 5), X, y, trace=False).state
    assert np.linalg.norm(np.asarray(plain.w, np.float64)) <= radius * (1 + 1e-6)


# --- the rule, for every registered learner ---

LEFT_OUT = {  # a learner whose projection or regularizer is small: (learner, labels?, bound on ||w without b||)
    "ogd": (OGD(Squared(), InvSqrt(0.5), L2Ball(1.0)), False, 1.0),
    "dog": (DoG(projection=L2Ball(1.0)), False, 1.0),
    "ftrl": (FTRL(Squared(), InvSqrt(1.0), Euclidean(L2Ball(1.0))), False, 1.0),
    "omd": (OMD(Squared(), InvSqrt(0.5), Euclidean(L2Ball(1.0))), False, 1.0),
    "optax": (from_optax("sgd", projection=L2Ball(1.0), learning_rate=0.05), False, 1.0),
    "ons": (ONS(0.1, projection=L2Ball(1.0)), False, 1.0),
    "metagrad": (MetaGrad(1.0, 10.0), False, 1.0),
    "adagrad": (AdaGrad(0.5, projection=L2Ball(1.0)), False, 1.0),
    "ftrl_proximal": (FTRLProximal(1.0, l1=1e4, l2=1e4, loss=Squared()), False, 0.0),
    "pegasos": (Pegasos(4.0, project=True), True, 0.5),
    "ocp_svm": (OCPSVM(4.0), True, 0.5),
}
INCLUDED = {  # the constraint is on more than the weights (docstrings, README; tested below)
    "mechanic": "its scale and its decay lam (its base leaves the intercept out on its own)",
    "sketched_ons": "K_t bounds each prediction w . x_t",
}
NONE = {  # no projection, no regularizer (flh, one_vs_rest, pipeline: their learner's field, set by the pipeline)
    "arow", "cocob", "coin_betting", "cw", "flh", "hedge", "mira", "nag", "one_vs_rest",
    "passive_aggressive", "perceptron", "pipeline", "scw", "winnow",
}  # fmt: skip
CONSTRAINTS = {"projection", "mirror", "l1", "l2", "lam", "radius"}  # (C: an aggressiveness in PA and SCW)


def test_every_learner_is_classified():
    """A learner added later must say what it does with the intercept; one with a field named
    like a constraint is not 'none'."""
    assert set(Learner.registry) == set(LEFT_OUT) | set(INCLUDED) | NONE
    for name in NONE:
        assert not CONSTRAINTS & set(fields_of(Learner.registry[name])), name
    for name in INCLUDED:
        assert "intercept" in Learner.registry[name].__doc__


def behind_the_pipeline(learner, labels):
    """``(||w without b||, b)`` of the learner behind the default pipeline (standardization, an
    intercept) on 400 rows of ``y = 5 + 0.3 x`` (``labels``: all +1)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 1)).astype(np.float32)
    y = np.ones(400, np.float32) if labels else (5 + 0.3 * x[:, 0]).astype(np.float32)
    pipeline = with_pipeline(learner, default_steps(True))
    w = np.asarray(pipeline.learner.weights(run(pipeline, x, y, trace=False).state.inner), np.float64)
    return np.linalg.norm(w[:-1]), w[-1]


def leaves_the_intercept_out(learner, labels, bound):
    """The weights without the intercept's stay in the set while the intercept's goes well past
    it, to within 0.2 of 5 on the regression (to above 1.5 times the radius on labels, where the hinge
    wants ``b >= 1``)."""
    rest, b = behind_the_pipeline(learner, labels)
    inside = rest <= bound * (1 + 1e-5) + 1e-6
    return bool(inside and (b > 1.5 * bound if labels else abs(b - 5.0) < 0.2))


@pytest.mark.parametrize("name", sorted(LEFT_OUT))
def test_the_intercept_is_left_out_behind_the_pipeline(name):
    learner, labels, bound = LEFT_OUT[name]
    assert "intercept" in fields_of(type(learner))
    assert leaves_the_intercept_out(learner, labels, bound)


class ProjectsTheIntercept(DoG):
    """A broken learner: it has the field, but projects the intercept with the rest."""

    def update(self, state, example):
        return DoG.update(self.replace(intercept=False), state, example)


def test_the_rule_rejects_a_learner_that_projects_the_intercept():
    rest, b = behind_the_pipeline(ProjectsTheIntercept(projection=L2Ball(1.0)), False)
    assert np.hypot(rest, b) <= 1.0 + 1e-5  # DoG's 0.99 before
    assert not leaves_the_intercept_out(ProjectsTheIntercept(projection=L2Ball(1.0)), False, 1.0)


@pytest.mark.parametrize("mirror", [NegEntropy(2.0), SignedEntropy(2.0), PNorm(3.0)], ids=lambda m: m.name)
def test_ftrl_and_omd_over_other_maps_include_the_intercept(mirror):
    """Documented: ``intercept`` changes only a Euclidean map's projection; the entropies' set
    (every coordinate's weight in one sum) and the p-norm map include the intercept's."""
    X, y = with_constant(n=40, d=3, offset=5.0)
    for kind in (FTRL, OMD):
        learner = kind(Squared(), InvSqrt(0.1), mirror)
        w = run(with_intercept_field(learner), X, y, trace=False).state.w
        assert learner.replace(intercept=True) == with_intercept_field(learner)
        np.testing.assert_array_equal(w, run(learner, X, y, trace=False).state.w)
        if not isinstance(mirror, PNorm):
            assert float(np.sum(np.abs(w))) <= 2.0 * (1 + 1e-5)


def test_optax_weight_decay_includes_the_intercept():
    """Documented: a transformation's own weight decay shrinks the intercept's weight too; the
    field changes only the projection, here none."""
    X, y = with_constant(n=40, d=3, offset=5.0)
    learner = from_optax("adamw", learning_rate=0.1, weight_decay=0.5)
    w = run(with_intercept_field(learner), X, y, trace=False).state.w
    np.testing.assert_array_equal(w, run(learner, X, y, trace=False).state.w)


def test_sketched_ons_bounds_the_whole_prediction():
    """Documented: K_t = {|w . x_t| <= C} bounds the prediction with the intercept's part, so behind
    the pipeline on y = 5 + 0.3 x every prediction is at most C = 1."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 1)).astype(np.float32)
    learner = with_pipeline(SketchedONS(C=1.0), default_steps(True))
    predictions = np.asarray(run(learner, x, (5 + 0.3 * x[:, 0]).astype(np.float32)).trace.prediction)
    assert np.max(np.abs(predictions)) <= 1.0 + 1e-6 and np.max(predictions) > 0.99


def test_mechanic_scales_the_intercept_with_the_rest():
    """Documented: w = s Delta, one scale for every coordinate (the intercept's included), while the
    base's own projection leaves the intercept out of Delta."""
    X, y = with_constant(n=60, d=3, offset=5.0)
    learner = with_intercept_field(Mechanic(OGD(Squared(), InvSqrt(1.0), L2Ball(0.5))))
    assert learner.base.intercept
    state = run(learner, X, y, trace=False).state
    w, delta = np.asarray(state.w, np.float64), np.asarray(state.base.w, np.float64)
    assert np.linalg.norm(delta[:-1]) <= 0.5 * (1 + 1e-5) and abs(delta[-1]) > 0.5
    np.testing.assert_allclose(w, w[-1] / delta[-1] * delta, rtol=1e-5)
