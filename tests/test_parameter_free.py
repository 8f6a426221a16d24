"""Parameter-free learners (COCOB, DoG, Mechanic, MetaGrad) against float64 NumPy transcriptions
of their papers' pseudo-code, and configs/iris_coin.toml from the command line."""

import json

import numpy as np
import pytest

from ocolearn import COCOB, OGD, AdaGrad, DoG, InvSqrt, L2Ball, Linear, Mechanic, MetaGrad, Squared, run
from ocolearn.cli import main
from ocolearn.learners.cocob import BOX


def regression(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)).astype(np.float32)
    return X, y


def close(a, b, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=rtol, atol=atol)


def cocob_by_hand(X, y, backprop=False, alpha=100.0, loss="squared", L_known=None, G0_is_L=True):
    """Orabona and Tommasi 2017, Algorithm 1 (lines 2 and 6-10: G_0 = L, the sigmoid bet) or
    Algorithm 2 (COCOB-Backprop), from w_1 = 0. Algorithm 1's range L is ``L_known`` (the
    paper's input; the reward's floor -L then never binds, as the paper's analysis shows) or,
    without it, the largest |c| so far as in Algorithm 2 (``G0_is_L=False``:
    a wrong G_0 = 0, to show the test sees it). Returns the weights played in each round and
    the last."""
    d = X.shape[1]
    w, L, G, S, reward, theta = (np.zeros(d) for _ in range(6))
    played = []
    for x, target in zip(X.astype(np.float64), np.float64(y), strict=True):
        played.append(w)
        c = -((w @ x - target) if loss == "squared" else 1.0) * x
        L_before = L
        L = np.maximum(L, np.abs(c)) if L_known is None else np.full(d, L_known)
        if backprop:
            G = G + np.abs(c)
            reward = np.maximum(reward + w * c, 0)
            theta = theta + c
            w = theta / (L * np.maximum(G + L, alpha * L)) * (L + reward)
        else:
            S = S + np.abs(c)
            G = (L if G0_is_L else 0) + S  # lines 2 and 6: G_t = G_0 + sum |c|, G_0 = L (the current L)
            # the learner's guard (not the paper's): a round beyond the range seen loses at most the wealth
            reward = np.maximum(reward + w * c, -L_before)
            theta = theta + c
            sigma = 1 / (1 + np.exp(-2 * theta / (G + L)))
            w = (2 * sigma - 1) / L * (L + reward)
    return np.array(played), w


@pytest.mark.parametrize("backprop", [False, True], ids=["algorithm_1", "backprop"])
def test_cocob_is_the_papers_algorithm(backprop):
    X, y = regression()
    close(run(COCOB(backprop=backprop), X, y).state.w, cocob_by_hand(X, y, backprop)[1])
    # the transcription tells the two apart, so it would catch a learner running the other rule
    assert not np.allclose(cocob_by_hand(X, y, backprop)[1], cocob_by_hand(X, y, not backprop)[1], rtol=1e-2)


def test_cocob_is_algorithm_1_with_its_range_given():
    """Gradients of a linear loss (x_t = g_t) whose first row holds each feature's largest |g|:
    the running range is the paper's input L_i = 1 from round 1 on, so every point played is
    Algorithm 1's with G_{0,i} = L_i (line 2); with G_0 = 0 the points differ."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    X[0] = [1.0, -1.0, 1.0]
    y = np.zeros(200)
    result = run(COCOB(loss=Linear()), np.float32(X), np.float32(y))
    played, _ = cocob_by_hand(X, y, loss="linear", L_known=1.0)
    close(result.trace.prediction, np.einsum("td,td->t", played, X))
    without, _ = cocob_by_hand(X, y, loss="linear", L_known=1.0, G0_is_L=False)
    assert not np.allclose(without, played, rtol=1e-2)


def linear_rounds(*runs):
    """A 1-feature stream of a linear loss: ``(g, n)`` is n rounds of the gradient g (x_t = g_t)."""
    X = np.concatenate([np.full(n, g) for g, n in runs])[:, None]
    return X, np.zeros(len(X))


@pytest.mark.parametrize("backprop", [False, True], ids=["algorithm_1", "backprop"])
def test_cocob_keeps_its_wealth_through_a_jump_in_gradient_scale(backprop):
    """20 rounds of g = -0.01, then g = +100 (Orabona and Tommasi's Algorithm 1 with a running
    range: the jump round loses ~8.5e5, 1e4 times the wealth, and the paper's rule would bet
    the debt: w > 0 against a gradient > 0 ever after). The wealth L + Reward stays >= 0 and the
    bets turn against the new gradient, so the rounds after the jump gain (negative loss)."""
    X, y = linear_rounds((-0.01, 20), (100.0, 11))
    first = run(COCOB(loss=Linear(), backprop=backprop), np.float32(X[:21]), np.float32(y[:21]))
    assert float(first.state.L[0] + first.state.reward[0]) >= 0
    result = run(COCOB(loss=Linear(), backprop=backprop), np.float32(X), np.float32(y))
    after = np.asarray(result.trace.prediction[21:], np.float64)  # w_t g_t, g_t = 100
    assert np.all(after < 0) and float(result.state.L[0] + result.state.reward[0]) >= 0
    close(result.trace.prediction, cocob_by_hand(X, y, backprop, loss="linear")[0][:, 0] * X[:, 0], rtol=1e-4)


@pytest.mark.parametrize("backprop", [False, True], ids=["algorithm_1", "backprop"])
def test_cocob_stays_finite_on_a_constant_gradient(backprop):
    """300 rounds of g = -1 of a linear loss: the wealth doubles about every round, past float32
    (3.4e38) before round 200; the weights stop at the box |w| <= BOX instead, and are the
    paper's until they reach it. Then 300 rounds of g = +1: the bettor comes back through
    the box and bets the other way (it is not stuck at +BOX)."""
    X, y = linear_rounds((-1.0, 300), (1.0, 300))
    result = run(COCOB(loss=Linear(), backprop=backprop), np.float32(X), np.float32(y))
    w = np.asarray(result.trace.prediction, np.float64) / X[:, 0]
    assert np.all(np.isfinite(w)) and all(np.all(np.isfinite(leaf)) for leaf in result.state)
    np.testing.assert_allclose(np.max(np.abs(w)), BOX, rtol=1e-6)
    paper = cocob_by_hand(X[:300], y[:300], backprop, loss="linear")[0][:, 0]
    inside = np.abs(paper) < BOX
    assert 50 < inside.sum() < 200  # the box binds, after a while
    close(w[:300][inside], paper[inside], rtol=1e-3)
    assert w[-1] == -w[299] and w[-1] < 0


def dog_by_hand(X, y, r_epsilon=1e-6, radius=None):
    """Ivgi, Hinder and Carmon 2023, Algorithm 1, from w_1 = 0."""
    w = np.zeros(X.shape[1])
    rbar, G = r_epsilon, 0.0
    for x, target in zip(X.astype(np.float64), y, strict=True):
        g = (w @ x - target) * x
        rbar = max(rbar, np.linalg.norm(w))
        G += g @ g
        w = w - rbar / np.sqrt(G) * g
        if radius is not None and np.linalg.norm(w) > radius:
            w *= radius / np.linalg.norm(w)
    return w


@pytest.mark.parametrize("radius", [None, 0.5])
def test_dog_is_algorithm_1(radius):
    X, y = regression(n=200)
    learner = DoG(1e-3) if radius is None else DoG(1e-3, projection=L2Ball(radius))
    close(run(learner, X, y).state.w, dog_by_hand(X, y, 1e-3, radius))


def mechanic_by_hand(X, y, base_step, lam=0.01, s_init=1e-8, eps=1e-8, n=6, scalar_m=False):
    """Cutkosky, Defazio and Mehta 2023, Algorithm 1, from x_ref = x_1 = 0 with s_1 = 0 and
    m_0 = v_0 = r_0 = 0, every line for each beta_j = 1 - 10^-j at once; ``base_step(t, g) ->
    update``. ``scalar_m=True``: one undiscounted m = max(m, |h|) for all betas instead (a wrong
    rule, to show that the test sees it)."""
    beta = 1 - 10.0 ** -np.arange(1, n + 1)
    d = X.shape[1]
    w, delta = np.zeros(d), np.zeros(d)
    s, v, r, m = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y, strict=True), 1):
        g = (w @ x - target) * x
        decay = lam * np.linalg.norm(g) * s.sum() * w / np.linalg.norm(w) if np.linalg.norm(w) > 0 else 0
        h = delta @ (g + decay)
        delta = delta + base_step(t, g)
        m = np.maximum(m, abs(h)) if scalar_m else np.maximum(beta * m, abs(h))
        v = beta**2 * v + h * h
        r = np.maximum(0, beta * r - s * h)
        s = (s_init / n * m + r) / (np.sqrt(v) + eps)
        w = s.sum() * delta
    return w


def test_mechanic_around_ogd_and_around_adagrad_is_algorithm_1():
    X, y = regression(n=150)
    paper = mechanic_by_hand(X, y, lambda t, g: -g / np.sqrt(t))
    close(run(Mechanic(), X, y).state.w, paper, rtol=1e-3, atol=1e-4)
    # one undiscounted m for all betas (the rule before) is 24% off here: the test sees it
    assert not np.allclose(mechanic_by_hand(X, y, lambda t, g: -g / np.sqrt(t), scalar_m=True), paper, rtol=0.1)
    G = np.zeros(X.shape[1])

    def adagrad_step(t, g):
        G[:] += g * g
        return -0.5 * np.where(G > 0, g / np.sqrt(np.where(G > 0, G, 1)), 0)

    learner = Mechanic(AdaGrad(0.5), lam=0.1, s_init=1e-3)
    close(run(learner, X, y).state.w, mechanic_by_hand(X, y, adagrad_step, 0.1, 1e-3), rtol=1e-3, atol=1e-4)


def test_mechanic_learns_a_scale_the_base_lacks():
    """OGD with a rate 100 times too small is still far off after 3,000 rounds; Mechanic's scale
    grows to make up for it (on shorter streams it arrives late), and a frozen scale
    (s_init = 0: no wealth to bet) does not."""
    X, y = regression(n=3000)
    slow = OGD(Squared(), InvSqrt(1e-2))

    def loss(learner):
        return float(np.mean(run(learner, X, y).trace.loss[-50:]))

    assert loss(Mechanic(slow)) < 0.2 * loss(slow)
    assert loss(Mechanic(slow, s_init=0.0)) == pytest.approx(np.mean(0.5 * y[-50:].astype(np.float64) ** 2))  # w = 0


def test_mechanic_needs_a_base_with_a_loss_to_linearize(tmp_path, capsys):
    data = tmp_path / "d.svm"
    data.write_text("1 1:0.5\n-1 1:-0.5\n")
    code = main(
        ["train", "--learner", "mechanic", "--set", "base.kind=pegasos", str(data), "--model", str(tmp_path / "m")]
    )
    assert code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert (
        line.startswith("ocolearn: error: ")
        and "learner.base must have a 'loss' field to linearize, got pegasos" in line
    )


def ball_in_norm(v, A, radius):
    """argmin_{||u|| <= radius} (u - v)' A (u - v) by bisection on the multiplier: u = (A + mu I)^-1 A v."""
    if np.linalg.norm(v) <= radius:
        return v
    eye = np.eye(len(v))
    lo, hi = 0.0, np.linalg.norm(A) * np.linalg.norm(v) / radius
    for _ in range(200):
        mu = (lo + hi) / 2
        lo, hi = (mu, hi) if np.linalg.norm(np.linalg.solve(A + mu * eye, A @ v)) > radius else (lo, mu)
    return np.linalg.solve(A + hi * eye, A @ v)


def metagrad_by_hand(X, y, radius, G, k, mutant=None):
    """van Erven and Koolen 2016, Algorithms 1 (master) and 2 (eta-experts), full matrices:
    the master's w, the experts' W and log pi (its largest 0) after the last round. ``mutant``
    breaks one line, for the test to show it would see it: ``"tilt_sign"`` steps the experts
    with ``1 - 2 eta r`` turned into ``1 + 2 eta r``, ``"no_square"`` drops the ``-eta^2 r^2`` of
    the surrogate losses in the master's weights."""
    D = 2 * radius
    d = X.shape[1]
    eta = 2.0 ** -np.arange(k) / (5 * D * G)
    log_pi = -np.log((np.arange(k) + 1) * (np.arange(k) + 2))  # pi_1 ~ 1 / ((i + 1)(i + 2))
    W = np.zeros((k, d))
    Sigma = np.stack([D * D * np.eye(d)] * k)
    w = np.zeros(d)
    tilt = -1 if mutant == "tilt_sign" else 1
    square = 0 if mutant == "no_square" else 1
    for x, target in zip(X.astype(np.float64), y, strict=True):
        g = (w @ x - target) * x
        r = (w - W) @ g
        log_pi = log_pi + eta * r - square * eta**2 * r**2  # Algorithm 1: pi ~ pi exp(-surrogate loss)
        log_pi = log_pi - log_pi.max()
        for i in range(k):  # Algorithm 2, with the gradient of the surrogate at W[i]
            Sigma[i] = np.linalg.inv(np.linalg.inv(Sigma[i]) + 2 * eta[i] ** 2 * np.outer(g, g))
            v = W[i] - eta[i] * Sigma[i] @ g * (1 + tilt * 2 * eta[i] * (W[i] - w) @ g)
            W[i] = ball_in_norm(v, np.linalg.inv(Sigma[i]), radius)
        pi = np.exp(log_pi)
        w = (pi * eta) @ W / (pi * eta).sum()
    return w, W, log_pi


def metagrad_agrees(state, reference, radius):
    """Whether a MetaGrad state is the reference's ``(w, W, log pi)``, to a tolerance at least
    15 times float32's error over these rounds and at least 4 times below what either mutant
    moves (the square's least: log pi by 4.1e-5 at radius 1.5)."""
    w, W, log_pi = reference
    return (
        np.allclose(np.asarray(state.w, np.float64), w, rtol=0, atol=1e-5 * radius)
        and np.allclose(np.asarray(state.W, np.float64), W, rtol=0, atol=1e-5 * radius)
        and np.allclose(np.asarray(state.log_pi, np.float64), log_pi, rtol=0, atol=1e-5)
    )


def metagrad_case(radius):
    """80 rounds in 3 dimensions, with G the largest gradient at w = 0 (about the largest seen):
    the rates eta = 2^-i / (5 D G) are then as large as the rule allows, so that eta r, the
    tilt and the quadratic surrogate, move the experts' weights and the log pi well beyond
    float32's error (with G at the worst-case bound ||x|| (radius ||x|| + |y|) they do not)."""
    X, y = regression(n=80, d=3)
    G = float(np.max(np.linalg.norm(X, axis=1) * np.abs(y)))
    return X, y, G


@pytest.mark.parametrize("radius", [0.5, 1.5])
def test_metagrad_is_algorithms_1_and_2(radius):
    X, y, G = metagrad_case(radius)
    state = run(MetaGrad(radius, G, 5), X, y).state
    assert metagrad_agrees(state, metagrad_by_hand(X, y, radius, G, 5), radius)


class TiltFlipped(MetaGrad):
    """A broken MetaGrad: the experts step with ``1 + 2 eta r``."""

    @staticmethod
    def _tilt(eta, r):
        return 1.0 + 2.0 * eta * r


class NoSquare(MetaGrad):
    """A broken MetaGrad: the surrogate losses lose their quadratic term."""

    @staticmethod
    def _surrogate(eta, r):
        return -eta * r


@pytest.mark.parametrize("broken", [TiltFlipped, NoSquare], ids=["tilt_sign", "no_square"])
@pytest.mark.parametrize("radius", [0.5, 1.5])
def test_metagrad_test_rejects_a_broken_metagrad(radius, broken):
    """A MetaGrad with the tilt's sign flipped or the surrogate's square dropped fails the test
    above; each is its float64 mutant transcription, so the test tells them apart for the
    right reason."""
    X, y, G = metagrad_case(radius)
    state = run(broken(radius, G, 5), X, y).state
    assert not metagrad_agrees(state, metagrad_by_hand(X, y, radius, G, 5), radius)
    mutant = "tilt_sign" if broken is TiltFlipped else "no_square"
    assert metagrad_agrees(state, metagrad_by_hand(X, y, radius, G, 5, mutant), radius)


class Unprojected(MetaGrad):
    """A broken MetaGrad: its experts' steps are not projected onto the ball."""

    def _project(self, v, Sigma, outside):
        return v


@pytest.mark.parametrize("radius", [0.5, 1.5])
def test_metagrad_experts_stay_in_the_ball_where_unprojected_ones_leave_it(radius):
    # The invariant battery's streams keep an unprojected MetaGrad's steps inside radius 1; these
    # rates (eta = 2^-i / (5 D G) with G about the largest gradient) take its experts out.
    X, y, G = metagrad_case(radius)
    inside, outside = (run(learner(radius, G, 5), X, y).state for learner in (MetaGrad, Unprojected))
    assert np.max(np.linalg.norm(np.asarray(inside.W, np.float64), axis=1)) <= radius * (1 + 1e-6)
    assert np.linalg.norm(np.asarray(inside.w, np.float64)) <= radius * (1 + 1e-6)
    assert np.max(np.linalg.norm(np.asarray(outside.W, np.float64), axis=1)) > 1.1 * radius
    assert not metagrad_agrees(outside, metagrad_by_hand(X, y, radius, G, 5), radius)


def test_iris_coin_config_runs_a_shuffle_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "coin"
    assert main(["run", "configs/iris_coin.toml", "--set", "run.shuffle_seed=3", "--out", str(out)]) in (0, None)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["T"] == 150 and np.isfinite(metrics["average_loss"])
    rows = np.loadtxt(out / "trace.csv", delimiter=",", skiprows=1)
    assert sorted(rows[:, 1].astype(int).tolist()) == list(range(150))
    assert rows[:, 1].astype(int).tolist() != list(range(150))  # a shuffled order, not the stored one
