"""Parameter-free learners (COCOB, DoG, Mechanic, MetaGrad) against float64 NumPy transcriptions
of their papers' pseudo-code, and configs/iris_coin.toml from the command line."""

import json

import numpy as np
import pytest

from ocolearn import COCOB, OGD, AdaGrad, DoG, InvSqrt, L2Ball, Mechanic, MetaGrad, Squared, run
from ocolearn.cli import main


def regression(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)).astype(np.float32)
    return X, y


def close(a, b, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=rtol, atol=atol)


def cocob_by_hand(X, y, backprop=False, alpha=100.0):
    """Orabona and Tommasi 2017, Algorithm 1 (the sigmoid bet) or 2 (COCOB-Backprop), L running."""
    d = X.shape[1]
    w, L, G, reward, theta = (np.zeros(d) for _ in range(5))
    sigma = 1 / (1 + np.exp(-2 * theta))
    for x, target in zip(X.astype(np.float64), y, strict=True):
        c = -(w @ x - target) * x
        L = np.maximum(L, np.abs(c))
        G = G + np.abs(c)
        reward = reward + w * c
        theta = theta + c
        if backprop:
            reward = np.maximum(reward, 0)
            w = theta / (L * np.maximum(G + L, alpha * L)) * (L + reward)
        else:
            sigma = 1 / (1 + np.exp(-2 * theta / (G + L)))
            w = (2 * sigma - 1) / L * (L + reward)
    return w


@pytest.mark.parametrize("backprop", [False, True], ids=["algorithm_1", "backprop"])
def test_cocob_is_the_papers_algorithm(backprop):
    X, y = regression()
    close(run(COCOB(backprop=backprop), X, y).state.w, cocob_by_hand(X, y, backprop))
    # the transcription tells the two apart, so it would catch a learner running the other rule
    assert not np.allclose(cocob_by_hand(X, y, backprop), cocob_by_hand(X, y, not backprop), rtol=1e-2)


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


def mechanic_by_hand(X, y, base_step, lam=0.01, s_init=1e-8, eps=1e-8, n=6):
    """Cutkosky, Defazio and Mehta 2023, Algorithm 1; ``base_step(t, g) -> update``."""
    beta = 1 - 10.0 ** -np.arange(1, n + 1)
    d = X.shape[1]
    w, delta = np.zeros(d), np.zeros(d)
    s, v, r, m = np.zeros(n), np.zeros(n), np.zeros(n), 0.0
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y, strict=True), 1):
        g = (w @ x - target) * x
        decay = lam * np.linalg.norm(g) * s.sum() * w / np.linalg.norm(w) if np.linalg.norm(w) > 0 else 0
        h = delta @ (g + decay)
        delta = delta + base_step(t, g)
        m = max(m, abs(h))
        v = beta**2 * v + h * h
        r = np.maximum(0, beta * r - s * h)
        s = (s_init / n * m + r) / (np.sqrt(v) + eps)
        w = s.sum() * delta
    return w


def test_mechanic_around_ogd_and_around_adagrad_is_algorithm_1():
    X, y = regression(n=150)
    close(run(Mechanic(), X, y).state.w, mechanic_by_hand(X, y, lambda t, g: -g / np.sqrt(t)), rtol=1e-3, atol=1e-4)
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


def metagrad_by_hand(X, y, radius, G, k):
    """van Erven and Koolen 2016, Algorithms 1 (master) and 2 (eta-experts), full matrices."""
    D = 2 * radius
    d = X.shape[1]
    eta = 2.0 ** -np.arange(k) / (5 * D * G)
    pi = 1 / ((np.arange(k) + 1) * (np.arange(k) + 2))
    pi = pi / pi.sum()
    W = np.zeros((k, d))
    Sigma = np.stack([D * D * np.eye(d)] * k)
    w = np.zeros(d)
    for x, target in zip(X.astype(np.float64), y, strict=True):
        g = (w @ x - target) * x
        r = (w - W) @ g
        pi = pi * np.exp(eta * r - eta**2 * r**2)
        pi = pi / pi.sum()
        for i in range(k):
            Sigma[i] = np.linalg.inv(np.linalg.inv(Sigma[i]) + 2 * eta[i] ** 2 * np.outer(g, g))
            v = W[i] - eta[i] * Sigma[i] @ g * (1 + 2 * eta[i] * (W[i] - w) @ g)
            W[i] = ball_in_norm(v, np.linalg.inv(Sigma[i]), radius)
        w = (pi * eta) @ W / (pi * eta).sum()
    return w


@pytest.mark.parametrize("radius", [0.5, 3.0], ids=["ball_binds", "ball_loose"])
def test_metagrad_is_algorithms_1_and_2(radius):
    X, y = regression(n=80, d=3)
    G = float(np.max(np.linalg.norm(X, axis=1) * (radius * np.linalg.norm(X, axis=1) + np.abs(y))))
    close(run(MetaGrad(radius, G, 5), X, y).state.w, metagrad_by_hand(X, y, radius, G, 5), rtol=1e-3, atol=1e-4)


def test_iris_coin_config_runs_a_shuffle_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "coin"
    assert main(["run", "configs/iris_coin.toml", "--set", "run.shuffle_seed=3", "--out", str(out)]) in (0, None)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["T"] == 150 and np.isfinite(metrics["average_loss"])
    rows = np.loadtxt(out / "trace.csv", delimiter=",", skiprows=1)
    assert sorted(rows[:, 1].astype(int).tolist()) == list(range(150))
    assert rows[:, 1].astype(int).tolist() != list(range(150))  # a shuffled order, not the stored one
