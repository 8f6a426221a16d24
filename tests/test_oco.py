"""Mirror descent, FTRL, FTRL-Proximal and Hedge against float64 transcriptions of their papers,
against OGD and river where the rules coincide, and against their regret bounds."""

import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ocolearn import (
    FTRL,
    OGD,
    OMD,
    Box,
    Constant,
    Euclidean,
    FTRLProximal,
    Hedge,
    Hinge,
    Identity,
    InvSqrt,
    L2Ball,
    Linear,
    Logistic,
    NegEntropy,
    PNorm,
    SignedEntropy,
    Simplex,
    Sparse,
    Squared,
    run,
)
from ocolearn.config import from_dict, load_study
from ocolearn.regret import (
    experts_regret,
    hedge_regret_bound,
    least_squares_in_ball,
    ogd_regret_bound,
    ons_parameters,
    ons_regret_bound,
    prefix_best_linear,
    prefix_best_squared,
    regret_curve,
    round_losses,
    strongly_convex_regret_bound,
)
from ocolearn.sequences import adaptive_experts_losses, bounded_regression, experts_losses, random_signs

D = 5


def stream(n=60, seed=0, binary=False, sparse_rows=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    if sparse_rows:
        X *= rng.random((n, D)) < 0.5
    y = X @ rng.normal(size=D) + 0.1 * rng.normal(size=n)
    if binary:
        y = np.where(y >= 0, 1.0, -1.0)
    return X.astype(np.float32), y.astype(np.float32)


# float64 derivatives of the losses, written out for the transcriptions
DERIVATIVE = {
    "squared": lambda p, y: p - y,
    "hinge": lambda p, y: -y if y * p < 1 else 0.0,
    "logistic": lambda p, y: -y / (1.0 + math.exp(y * p)),
    "linear": lambda p, y: 1.0,
}


def weights_of(learner, X, y):
    return np.asarray(run(learner, jnp.asarray(X), jnp.asarray(y)).state.w, np.float64)


@pytest.mark.parametrize(
    "schedule, projection",
    [
        (Constant(0.05), Identity()),
        (InvSqrt(0.1), L2Ball(0.5)),
        (InvSqrt(0.3), Simplex(1.0)),
        (Constant(0.1), Box(-0.2, 0.3)),
    ],
    ids=["identity", "l2_ball", "simplex", "box"],
)
def test_omd_with_the_euclidean_map_is_ogd(schedule, projection):
    X, y = stream()
    omd = OMD(Squared(), schedule, Euclidean(projection))
    # OGD starts at w_1 = 0 whatever the set; OMD at argmin_K psi = P(0): start OMD where OGD does.
    start = omd.init(D)._replace(w=jnp.zeros(D), theta=jnp.zeros(D))
    omd = run(omd, X, y, state=start)
    ogd = run(OGD(Squared(), schedule, projection), X, y)
    np.testing.assert_allclose(omd.state.w, ogd.state.w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(omd.trace.loss, ogd.trace.loss, rtol=1e-5, atol=1e-6)
    if isinstance(projection, Identity):
        np.testing.assert_array_equal(omd.state.w, ogd.state.w)


def simplex(v, radius):
    """The Euclidean projection onto {w >= 0, sum w = radius} by sorting (Duchi, Shalev-Shwartz,
    Singer and Chandra 2008, Figure 1)."""
    mu = np.sort(v)[::-1]
    cumulative = np.cumsum(mu) - radius
    rho = np.nonzero(mu - cumulative / np.arange(1, len(v) + 1) > 0)[0][-1]
    return np.maximum(v - cumulative[rho] / (rho + 1), 0.0)


def projected_gradient_descent(X, y, eta, project, loss):
    """Zinkevich 2003's projected OGD from OMD's own start, the point of the set nearest 0:
    w_1 = P(0), w_{t+1} = P(w_t - eta_t g_t). Returns the weights played in each round."""
    w = project(np.zeros(X.shape[1]))
    played = []
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y.astype(np.float64), strict=True), 1):
        played.append(w)
        w = project(w - eta(t) * DERIVATIVE[loss](w @ x, target) * x)
    return np.array(played)


@pytest.mark.parametrize(
    "projection, project",
    [
        (Simplex(1.0), lambda v: simplex(v, 1.0)),
        (Simplex(3.0), lambda v: simplex(v, 3.0)),
        (Box(0.1, 0.4), lambda v: np.clip(v, 0.1, 0.4)),
        (L2Ball(0.5), lambda v: l2_ball(v, 0.5)),
    ],
    ids=["simplex", "simplex_3", "box_without_0", "l2_ball"],
)
def test_omd_with_the_euclidean_map_from_its_own_start(projection, project):
    """OMD's own w_1 = argmin_K ||w||^2 / 2 = P_K(0): the simplex's centre, a box's corner
    nearest 0; then every point played is projected OGD's from there."""
    X, y = stream()
    result = run(OMD(Squared(), InvSqrt(0.3), Euclidean(projection)), X, y)
    played = projected_gradient_descent(X, y, inv_sqrt(0.3), project, "squared")
    np.testing.assert_allclose(result.trace.prediction, np.einsum("td,td->t", played, X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(OMD(mirror=Euclidean(projection)).init(D).w, project(np.zeros(D)), atol=1e-7)


def eg(X, y, eta, radius, loss):
    """Kivinen and Warmuth (1997), EG: w_{t+1,i} = w_{t,i} exp(-eta_t g_{t,i}) / Z, w_1 = radius / d."""
    w = np.full(X.shape[1], radius / X.shape[1])
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y.astype(np.float64), strict=True), 1):
        r = w * np.exp(-eta(t) * DERIVATIVE[loss](w @ x, target) * x)
        w = radius * r / r.sum()
    return w


def eg_pm(X, y, eta, radius, loss):
    """Kivinen and Warmuth (1997), EG+-: w+ <- w+ exp(-eta g) / Z, w- <- w- exp(eta g) / Z with
    Z = (sum(w+ r+) + sum(w- r-)) / U, w = w+ - w-, w+_1 = w-_1 = U / (2d)."""
    plus = minus = np.full(X.shape[1], radius / (2 * X.shape[1]))
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y.astype(np.float64), strict=True), 1):
        r = np.exp(-eta(t) * DERIVATIVE[loss]((plus - minus) @ x, target) * x)
        Z = (np.sum(plus * r) + np.sum(minus / r)) / radius
        plus, minus = plus * r / Z, minus / r / Z
    return plus - minus


def link(theta, p):
    """Gentile (2003): f_i(theta) = sign(theta_i) |theta_i|^(p-1) / ||theta||_p^(p-2)."""
    norm = np.sum(np.abs(theta) ** p) ** (1 / p)
    return np.zeros_like(theta) if norm == 0 else np.sign(theta) * np.abs(theta) ** (p - 1) / norm ** (p - 2)


def p_norm(X, y, eta, p, loss):
    """Gentile (2003), the p-norm algorithm: theta_{t+1} = theta_t - eta_t g_t, w_t = f(theta_t)."""
    theta = np.zeros(X.shape[1])
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y.astype(np.float64), strict=True), 1):
        theta = theta - eta(t) * DERIVATIVE[loss](link(theta, p) @ x, target) * x
    return link(theta, p)


def ftrl(X, y, eta, weights, loss):
    """FTRL on linearized losses: w_{t+1} = weights(-eta_t sum_{s<=t} g_s), w_1 = weights(0)."""
    G = np.zeros(X.shape[1])
    w = weights(G)
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y.astype(np.float64), strict=True), 1):
        G = G + DERIVATIVE[loss](w @ x, target) * x
        w = weights(-eta(t) * G)
    return w


def softmax(v, radius):
    e = np.exp(v - v.max())
    return radius * e / e.sum()


def l2_ball(v, radius):
    return v * min(1.0, radius / max(np.linalg.norm(v), 1e-300))


def inv_sqrt(eta):
    return lambda t: eta / math.sqrt(t)


def constant(eta):
    return lambda t: eta


@pytest.mark.parametrize(
    "learner, transcription, binary",
    [
        (OMD(Squared(), InvSqrt(0.2), NegEntropy(2.0)), lambda X, y: eg(X, y, inv_sqrt(0.2), 2.0, "squared"), False),
        (OMD(Linear(), Constant(0.3), NegEntropy(1.0)), lambda X, y: eg(X, y, constant(0.3), 1.0, "linear"), False),
        (OMD(Hinge(), InvSqrt(0.5), SignedEntropy(3.0)), lambda X, y: eg_pm(X, y, inv_sqrt(0.5), 3.0, "hinge"), True),
        (
            OMD(Squared(), Constant(0.05), SignedEntropy(4.0)),
            lambda X, y: eg_pm(X, y, constant(0.05), 4.0, "squared"),
            False,
        ),
        (
            OMD(Squared(), Constant(0.02), PNorm(2 * math.log(D))),
            lambda X, y: p_norm(X, y, constant(0.02), 2 * math.log(D), "squared"),
            False,
        ),
        (OMD(Hinge(), InvSqrt(0.3), PNorm(4.0)), lambda X, y: p_norm(X, y, inv_sqrt(0.3), 4.0, "hinge"), True),
        (
            FTRL(Logistic(), InvSqrt(0.5), NegEntropy(2.0)),
            lambda X, y: ftrl(X, y, inv_sqrt(0.5), lambda v: softmax(v, 2.0), "logistic"),
            True,
        ),
        (
            FTRL(Squared(), Constant(0.01), Euclidean(L2Ball(0.7))),
            lambda X, y: ftrl(X, y, constant(0.01), lambda v: l2_ball(v, 0.7), "squared"),
            False,
        ),
        (
            FTRL(Squared(), InvSqrt(0.02), PNorm(3.0)),
            lambda X, y: ftrl(X, y, inv_sqrt(0.02), lambda v: link(v, 3.0), "squared"),
            False,
        ),
    ],
    ids=[
        "eg",
        "eg_linear",
        "eg_pm_hinge",
        "eg_pm_squared",
        "p_norm_2lnd",
        "p_norm_hinge",
        "ftrl_entropy",
        "ftrl_lazy_l2",
        "ftrl_p_norm",
    ],
)
def test_mirror_learners_equal_their_float64_transcriptions(learner, transcription, binary):
    X, y = stream(binary=binary)
    expected = transcription(X, y)
    np.testing.assert_allclose(weights_of(learner, X, y), expected, rtol=2e-4, atol=2e-5)
    assert not np.allclose(expected, learner.init(D).w, atol=1e-3)  # the run moved the weights


def test_hedge_is_eg_on_the_simplex_and_lazy_equals_greedy_at_a_constant_rate():
    L = experts_losses("random", 300, 7, seed=3)
    zero = np.zeros(len(L), np.float32)
    hedge = run(Hedge(0.2), L, zero)
    for other in (OMD(Linear(), Constant(0.2), NegEntropy()), FTRL(Linear(), Constant(0.2), NegEntropy())):
        result = run(other, L, zero)
        np.testing.assert_allclose(result.state.w, hedge.state.w, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(result.trace.loss, hedge.trace.loss, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hedge.state.w, eg(L, zero, constant(0.2), 1.0, "linear"), rtol=1e-4, atol=1e-7)
    # The charged loss is the expected loss of the expert drawn from the weights played.
    weights = np.full(7, 1 / 7)
    np.testing.assert_allclose(hedge.trace.loss[0], weights @ L[0], rtol=1e-6)


def algorithm_1(X, y, alpha, beta, l1, l2):
    """McMahan et al. (2013), Algorithm 1, in float64 (labels y in {-1, +1} -> {0, 1})."""
    z, n = np.zeros(X.shape[1]), np.zeros(X.shape[1])

    def weights():
        return np.where(np.abs(z) <= l1, 0.0, -(z - np.sign(z) * l1) / ((beta + np.sqrt(n)) / alpha + l2))

    for x, target in zip(X.astype(np.float64), y.astype(np.float64), strict=True):
        w = weights()
        p = 1.0 / (1.0 + np.exp(-(w @ x)))
        g = (p - (target + 1) / 2) * x
        sigma = (np.sqrt(n + g * g) - np.sqrt(n)) / alpha
        z = z + g - sigma * w
        n = n + g * g
    return weights()


def river_order(X, y, alpha, beta, l1, l2):
    """river's optim.FTRLProximal under LogisticRegression, in float64: the gradient is taken at
    the weights of the round before, each step first refreshes w_i where |z_i| > l1 (else keeps
    it) from the z, n before the round, then updates z, n."""
    z, n, w = np.zeros(X.shape[1]), np.zeros(X.shape[1]), np.zeros(X.shape[1])
    for x, target in zip(X.astype(np.float64), y.astype(np.float64), strict=True):
        g = (1.0 / (1.0 + np.exp(-(w @ x))) - (target + 1) / 2) * x
        w = np.where(np.abs(z) > l1, -(z - np.sign(z) * l1) / ((beta + np.sqrt(n)) / alpha + l2), w)
        sigma = (np.sqrt(n + g * g) - np.sqrt(n)) / alpha
        z = z + g - sigma * w
        n = n + g * g
    return w


HYPER = [(0.5, 1.0, 0.0, 1.0), (0.1, 1.0, 0.5, 0.1), (1.0, 0.5, 2.0, 0.0)]


@pytest.mark.parametrize("hyper", HYPER, ids=["l2", "l1_l2", "strong_l1"])
def test_ftrl_proximal_equals_algorithm_1(hyper):
    X, y = stream(120, seed=1, binary=True, sparse_rows=True)
    expected = algorithm_1(X, y, *hyper)
    learner = FTRLProximal(*hyper)
    w = weights_of(learner, X, y)
    np.testing.assert_allclose(w, expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(w == 0, expected == 0)  # L1 zeros exactly where the paper does
    # Sparse rows with padding give the same weights, in O(nnz) a round.
    idx = np.argsort(X == 0, axis=1, kind="stable").astype(np.int32)
    val = np.take_along_axis(X, idx, axis=1)
    np.testing.assert_allclose(run(learner, Sparse(idx, val, D), y).state.w, w, rtol=1e-6, atol=1e-7)


def test_ftrl_proximal_in_river_order_reproduces_river():
    linear_model = pytest.importorskip("river.linear_model")
    optim = pytest.importorskip("river.optim")
    X, y = stream(150, seed=2, binary=True)
    for alpha, beta, l1, l2 in HYPER:
        model = linear_model.LogisticRegression(optimizer=optim.FTRLProximal(alpha, beta, l1, l2), intercept_lr=0.0)
        for x, target in zip(X.astype(np.float64), y, strict=True):
            model.learn_one(dict(enumerate(x.tolist())), bool(target > 0))
        theirs = np.array([model.weights.get(i, 0.0) for i in range(D)])
        np.testing.assert_allclose(river_order(X, y, alpha, beta, l1, l2), theirs, rtol=1e-12, atol=1e-15)
        ours = weights_of(FTRLProximal(alpha, beta, l1, l2, river_order=True), X, y)
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)
        # Algorithm 1 (our default) is not river: a round of lag, and zeros where |z_i| <= l1.
        assert np.max(np.abs(weights_of(FTRLProximal(alpha, beta, l1, l2), X, y) - theirs)) > 1e-3


def hedge_stays_below_its_bound(change, kind, T, N, seed):
    """Hedge with the tuned rate, changed by ``change``, against the best expert of every prefix:
    R_t <= ln N / eta + eta t / 8 for all t, which is at most sqrt(T ln N / 2)."""
    tuned = Hedge.tuned(T, N)
    learner = change(tuned)
    L = adaptive_experts_losses(learner, T, N) if kind == "adaptive" else experts_losses(kind, T, N, seed)
    regret = experts_regret(run(learner, L, np.zeros(T, np.float32)).trace.loss, L)
    bound = hedge_regret_bound(tuned.eta, N, T)
    assert bound[-1] == pytest.approx(math.sqrt(T * math.log(N) / 2))
    return bool(np.all(regret <= bound + 1e-4 * bound))


CASES = [("random", 2000, 10, 0), ("random", 500, 2, 1), ("coins", 2000, 10, 2), ("adaptive", 2000, 10, 0)]


@pytest.mark.parametrize("kind, T, N, seed", CASES, ids=[f"{c[0]}-{c[1]}x{c[2]}" for c in CASES])
def test_hedge_regret_is_below_sqrt_T_ln_N_over_2(kind, T, N, seed):
    assert hedge_stays_below_its_bound(lambda h: h, kind, T, N, seed)


class SignFlippedHedge(Hedge):
    """Deliberately broken: w_{t+1,i} ∝ w_{t,i} exp(+eta l_{t,i}), weight to the worst experts."""

    def update(self, state, example):
        x, y = example
        return super().update(state, (-x, y))


class FrozenHedge(Hedge):
    """Deliberately broken: ignores its rate and the losses, and keeps the uniform weights."""

    def update(self, state, example):
        return state._replace(t=state.t + 1)


@pytest.mark.parametrize(
    "broken",
    [lambda h: SignFlippedHedge(h.eta), lambda h: FrozenHedge(h.eta)],
    ids=["sign_flipped", "rate_ignored_frozen"],
)
@pytest.mark.parametrize("kind, T, N, seed", [c for c in CASES if c[0] != "coins"])
def test_a_broken_hedge_fails_the_regret_test(broken, kind, T, N, seed):
    assert not hedge_stays_below_its_bound(broken, kind, T, N, seed)


def test_learners_come_from_configs_by_kind():
    raw = {
        "name": "oco",
        "data": {"features": ["Sepal.Width"], "target": "Petal.Width"},
        "learner": {"kind": "omd", "loss": "squared", "schedule": {"kind": "constant", "eta": 0.1}, "mirror": "p_norm"},
        "compare": {
            "eg": {"kind": "omd", "mirror": {"kind": "neg_entropy", "radius": 2.0}},
            "eg_pm": {"kind": "ftrl", "mirror": {"kind": "signed_entropy", "radius": 3.0}},
            "lazy": {"kind": "ftrl", "mirror": {"kind": "euclidean", "projection": {"kind": "l2_ball", "radius": 0.5}}},
            "hedge": {"kind": "hedge", "eta": 0.25},
            "ftrl_proximal": {"kind": "ftrl_proximal", "l1": 0.5, "river_order": True},
        },
    }
    experiment = from_dict(raw)
    assert experiment.learner == OMD(Squared(), Constant(0.1), PNorm())
    assert experiment.compare["eg"].mirror == NegEntropy(2.0)
    assert experiment.compare["eg_pm"].mirror == SignedEntropy(3.0)
    assert experiment.compare["lazy"].mirror == Euclidean(L2Ball(0.5))
    assert experiment.compare["hedge"] == Hedge(0.25)
    assert experiment.compare["ftrl_proximal"] == FTRLProximal(l1=0.5, river_order=True)
    assert from_dict(experiment.to_config()).compare == experiment.compare


def test_cli_trains_ftrl_proximal_on_svmlight(tmp_path, capsys):
    from ocolearn.cli import main
    from ocolearn.modelfile import load
    from ocolearn.pipeline import data_for, error_rate

    X, y = stream(200, seed=4, binary=True)
    path = tmp_path / "train.svm"
    path.write_text(
        "".join(
            f"{int(t)} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x)) + "\n"
            for x, t in zip(X, y, strict=True)
        )
    )
    model = tmp_path / "ftrl.npz"
    args = [
        "train",
        "--learner",
        "ftrl_proximal",
        "--set",
        "alpha=0.5",
        "--set",
        "l1=0.1",
        str(path),
        "--model",
        str(model),
    ]
    assert main([*args, "--passes", "2", "--chunk-rows", "256", "--quiet"]) == 0
    trained = load(model)
    assert trained.settings["learner"]["kind"] == "ftrl_proximal" and trained.settings["learner"]["l1"] == 0.1
    assert error_rate(trained, data_for(trained, path)) < 0.1
    assert main(["train", "--learner", "ftrl_proximal", "--set", "river=1", str(path), "--model", str(model)]) == 2
    assert "river" in capsys.readouterr().err


# The textbook's two rates (configs/rates.toml, experiments/rates.py), at test sizes.
RATES = Path(__file__).resolve().parent.parent / "configs" / "rates.toml"


def mean_regret_per_e_fold(regret, a, b):
    """``(R_b - R_a) / ln(b / a)`` of the mean regret curve (rounds a, b counted from 1)."""
    mean = regret.mean(axis=0)
    return (mean[b - 1] - mean[a - 1]) / math.log(b / a)


def vmapped_losses(learner, X, y):
    return np.asarray(jax.vmap(lambda X, y: run(learner, X, y).trace.loss)(X, y), np.float64)


class ClimbingOGD(OGD):
    """Deliberately broken: on linear losses, w_{t+1} = P(w_t + eta_t g_t), up the gradient."""

    def update(self, state, example):
        x, y = example
        return super().update(state, (-x, y))


def test_ogd_regret_grows_like_sqrt_T_on_random_signs():
    _, learners = load_study(RATES)
    ogd = learners["ogd_signs"]
    T, M = 1024, 64
    g = random_signs(T, M, seed=0)
    zero = np.zeros((M, T), np.float32)
    bound = ogd_regret_bound(ogd.schedule, ogd.projection.diameter(1), 1.0, T)
    regret = vmapped_losses(ogd, g, zero).cumsum(axis=1) - prefix_best_linear(g[..., 0])
    assert np.all(regret <= bound + 1e-6 * bound)
    # E R_T = E |sum g_t| ~ sqrt(2 T / pi): R / sqrt(T) levels off at about a quarter of the bound.
    ratio = regret.mean(axis=0) / bound
    assert 0.15 < ratio[-1] < 0.45 and 0.15 < ratio[T // 16 - 1] < 0.45
    # A sign-flipped OGD (it climbs the gradients) breaks the bound on the same sequences.
    flipped = ClimbingOGD(ogd.loss, ogd.schedule, ogd.projection)
    assert np.any(vmapped_losses(flipped, g, zero).cumsum(axis=1) - prefix_best_linear(g[..., 0]) > bound)


def test_inverse_time_steps_reach_log_T_on_strongly_convex_losses():
    _, learners = load_study(RATES)
    T, M = 4096, 64
    y = random_signs(T, M, seed=1)[..., 0]
    ones = np.ones((M, T, 1), np.float32)
    best = prefix_best_squared(y, -1.0, 1.0)
    fast, slow = (vmapped_losses(learners[n], ones, y).cumsum(axis=1) - best for n in ("ogd_strong", "ogd_strong_sqrt"))
    assert np.all(fast <= strongly_convex_regret_bound(2.0, 1.0, T) + 1e-6)
    # The regret added per e-fold of rounds stays put for log T, and grows for eta / sqrt(t).
    assert 0.8 < mean_regret_per_e_fold(fast, T // 8, T) / mean_regret_per_e_fold(fast, T // 64, T // 8) < 1.25
    assert mean_regret_per_e_fold(slow, T // 8, T) / mean_regret_per_e_fold(slow, T // 64, T // 8) > 1.5


def test_ons_regret_is_below_its_bound_on_exp_concave_losses():
    _, learners = load_study(RATES)
    ons = learners["ons_concave"]
    gamma, _ = ons_parameters(0.25, 2.0, 2.0)
    assert float(ons.gamma) <= gamma
    T, d = 1500, 3
    X, y = bounded_regression(T, 3, d, seed=2)
    bound = ons_regret_bound(float(ons.gamma), float(ons.epsilon), 2.0, 2.0, d, T)
    for m, losses in enumerate(vmapped_losses(ons, X, y)):
        assert np.max(np.abs(X[m] @ np.zeros(d) - y[m])) <= 1.0  # |y| <= 1, so |w . x - y| <= 2 in the ball
        u = least_squares_in_ball(X[m], y[m], 1.0)  # the bound holds against every fixed u in the ball
        assert np.all(regret_curve(losses, round_losses(Squared(), u, X[m], y[m], np.arange(T))) <= bound)


def test_a_bad_study_file_is_one_error_naming_the_key(tmp_path):
    from ocolearn.config import ConfigError

    path = tmp_path / "s.toml"
    for text, key in [
        ('[study]\nrounds = 10\n[learners.h]\nkind = "hedge"\netaa = 0.1\n', "learners.h.etaa"),
        ('[study]\nrounds = 10\n[learners.h]\nkind = "hedg"\n', "learners.h.kind"),
        ("[study]\nrounds = 10\n", "[learners.NAME]"),
        ('[studies]\n[learners.h]\nkind = "hedge"\n', "studies"),
    ]:
        path.write_text(text)
        with pytest.raises(ConfigError, match=key.replace(".", r"\.").replace("[", r"\[")):
            load_study(path)
