"""The OGD post's iris study, against an independent float64 transcription of its computation."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import in_process

from ocolearn.config import load
from ocolearn.data import IRIS_COLUMNS, load_iris, scale
from ocolearn.experiment import run_experiment

ROOT = Path(__file__).resolve().parent.parent
BALL_DRIFT = 1.3e-5  # the L2 ball's iterate lies at most this far inside (relative), L2Ball.update
SETTINGS = {"arbitrary": (1.0, 1.0), "magic": (0.045, 0.3), "noball": (0.045, 20.0)}


def post_computation(eta, lam):
    """The post, line by line, in NumPy float64: R's scale() on the four columns, w_1 = 0,
    w_{t+1} = P(w_t - eta/sqrt(t) x_t (w_t.x_t - y_t)), P(w) = w min(1, lam/||w||), and the
    prediction of round t made after its update."""
    raw = np.genfromtxt(ROOT / "ocolearn/data/iris.csv", delimiter=",", skip_header=1, usecols=(0, 1, 2, 3))
    z = (raw - raw.mean(axis=0)) / raw.std(axis=0, ddof=1)
    sepal_length, sepal_width, petal_length, petal_width = z.T
    X = np.column_stack([sepal_width, sepal_length, petal_length])
    y = petal_width
    w = np.zeros(3)
    predictions, played = [], []
    for t in range(1, len(y) + 1):
        x = X[t - 1]
        played.append(0.5 * (w @ x - y[t - 1]) ** 2)
        w = w - eta / np.sqrt(t) * x * (w @ x - y[t - 1])
        w = w * min(1.0, lam / np.linalg.norm(w))
        predictions.append(w @ x)
    average_loss = np.mean((np.array(predictions) - y) ** 2)
    u = np.linalg.lstsq(X, y, rcond=None)[0]  # lm(Petal.Width ~ Sepal.Width + Sepal.Length + Petal.Length - 1)
    return X, y, w, average_loss, u, np.array(played)


def test_iris_is_r_datasets_iris():
    iris = load_iris()
    assert [float(iris[c].sum()) for c in IRIS_COLUMNS] == pytest.approx([876.5, 458.6, 563.7, 179.9], abs=1e-9)
    # Rows 35 and 38 (1-based) are where UCI's iris.data differs from Fisher's table.
    assert [iris[c][34] for c in IRIS_COLUMNS] == [4.9, 3.1, 1.5, 0.2]
    assert [iris[c][37] for c in IRIS_COLUMNS] == [4.9, 3.6, 1.4, 0.1]
    assert list(np.unique(iris["Species"], return_counts=True)[1]) == [50, 50, 50]


def test_scale_is_r_scale():
    scaled = scale(load_iris())
    for c in IRIS_COLUMNS:
        assert scaled[c].mean() == pytest.approx(0.0, abs=1e-12)
        assert scaled[c].std(ddof=1) == pytest.approx(1.0, rel=1e-12)
    # R: scale(iris$Sepal.Length)[1] = -0.8976739
    assert scaled["Sepal.Length"][0] == pytest.approx(-0.8976739, abs=1e-7)


@pytest.mark.parametrize("setting", SETTINGS)
def test_metrics_agree_with_an_independent_transcription(setting, tmp_path):
    eta, lam = SETTINGS[setting]
    X, y, w, average_loss, u, played = post_computation(eta, lam)
    metrics, _ = run_experiment(load(ROOT / f"configs/iris_ridge_{setting}.toml"), tmp_path)
    assert metrics["T"] == 150
    assert metrics["average_loss"] == pytest.approx(average_loss, rel=1e-5)
    np.testing.assert_allclose(metrics["final_w"], w, rtol=1e-5, atol=1e-6)
    assert metrics["comparator_unconstrained_loss"] == pytest.approx(np.mean((X @ u - y) ** 2), rel=1e-9)
    assert metrics["learner_loss"] == pytest.approx(played.mean(), rel=1e-5)
    # The feasible comparator: the unconstrained one if it fits in the ball.
    if np.linalg.norm(u) <= lam:
        assert metrics["comparator_feasible_loss"] == pytest.approx(metrics["comparator_unconstrained_loss"], rel=1e-12)
    else:
        assert np.linalg.norm(metrics["comparator_feasible_w"]) == pytest.approx(lam, rel=1e-9)
        assert metrics["comparator_feasible_loss"] > metrics["comparator_unconstrained_loss"]
    u_star = np.array(metrics["comparator_feasible_w"])
    comparator = np.sum(0.5 * (X @ u_star - y) ** 2)
    # The float32 ball keeps its iterate up to BALL_DRIFT inside the sphere (the price of a bound
    # proven for every input: ocolearn.projections.L2Ball.update), and the regret, a difference
    # of sums 24x its size, moves with it: between the transcription's on the sphere and on the
    # sphere drawn in by that drift (the played loss grows as the ball shrinks, here), to 1e-4.
    inside = post_computation(eta, lam * (1 - BALL_DRIFT))[-1]
    low, high = sorted([played.sum() - comparator, inside.sum() - comparator])
    assert low * (1 - 1e-4) <= metrics["regret"] <= high * (1 + 1e-4)
    G = np.max(np.linalg.norm(X, axis=1) * (lam * np.linalg.norm(X, axis=1) + np.abs(y)))
    bound = (2 * lam) ** 2 * np.sqrt(150) / (2 * eta) + (np.sqrt(150) - 0.5) * eta * G**2
    assert metrics["regret_bound"] == pytest.approx(bound, rel=1e-9)
    assert metrics["regret"] <= metrics["regret_bound"] and metrics["regret_within_bound"]


def test_outputs_are_written_and_reproducible(tmp_path):
    # Once in a process of its own, as a user runs it, and once in this one: the same bits.
    config = ROOT / "configs/iris_ridge_magic.toml"
    done = subprocess.run(
        [sys.executable, "-m", "ocolearn.cli", "run", str(config), "--out", str(tmp_path / "a")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    done = in_process("run", config, "--out", tmp_path / "b")
    assert done.returncode == 0, done.stderr
    names = {"metrics.json", "trace.csv", "config.toml", "normalized_loss.png", "regret.png"}
    assert names <= {p.name for p in (tmp_path / "a").iterdir()}
    for name in ("metrics.json", "trace.csv"):  # same config, same numbers, bit for bit
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    trace = np.genfromtxt(tmp_path / "a/trace.csv", delimiter=",", names=True)
    metrics = json.loads((tmp_path / "a/metrics.json").read_text())
    assert len(trace) == 150
    assert trace["cumulative_average_loss"][-1] == pytest.approx(metrics["average_loss"], rel=1e-12)
    assert trace["regret"][-1] == pytest.approx(metrics["regret"], rel=1e-12)
    # The resolved config reruns the same experiment.
    rerun, _ = run_experiment(load(tmp_path / "a/config.toml"), tmp_path / "c")
    assert rerun == metrics


def test_set_overrides_and_shuffling(tmp_path):
    experiment = load(ROOT / "configs/iris_ridge_magic.toml", ["run.shuffle_seed=3", "learner.schedule.eta=0.1"])
    assert experiment.run.shuffle_seed == 3 and experiment.learner.schedule.eta == 0.1
    metrics, curves = run_experiment(experiment, tmp_path)
    assert sorted(curves["row"]) == list(range(150)) and list(curves["row"]) != list(range(150))
    # The comparators do not depend on the order of the rounds.
    stored, _ = run_experiment(load(ROOT / "configs/iris_ridge_magic.toml"), tmp_path / "stored")
    assert metrics["comparator_feasible_loss"] == pytest.approx(stored["comparator_feasible_loss"], rel=1e-12)
