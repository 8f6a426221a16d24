"""Adaptive, second-order and parameter-free learners against the post's OGD settings on iris.

    python experiments/iris_adaptive.py [--out runs/iris_adaptive] [--record PATH]

Runs the learners of configs/iris_adaptive.toml ([learner] and every [compare.*]) and the
post's three OGD settings (configs/iris_ridge_*.toml), all predicting before they update, on
the stored order, and draws OUT/iris_adaptive.png: the normalized cumulative loss
(1/t) sum_s (yhat_s - y_s)^2 of each, with the best fixed predictor's (least squares in
hindsight) and the best in the post's ball as lines, and writes the final average losses to
OUT/iris_adaptive.json and RECORD (by default experiments/records/iris_adaptive.json,
committed). The parameter-free learners over 9 orders: experiments/parameter_free.py.
"""

import argparse
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import Identity, L2Ball, Squared, plots, run
from ocolearn.config import load
from ocolearn.experiment import load_data
from ocolearn.io import write_json
from ocolearn.regret import best_fixed_weights

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
RECORDS = Path(__file__).resolve().parent / "records"
PICKS = ("iris_ridge_arbitrary", "iris_ridge_magic", "iris_ridge_noball")


def average_losses(learner, X, y, seed=None):
    """The running average of (yhat_t - y_t)^2, predicting before each update."""
    trace = run(learner, np.float32(X), np.float32(y), seed).trace
    errors = (np.asarray(trace.prediction, np.float64) - y[np.asarray(trace.index)]) ** 2
    return np.cumsum(errors) / np.arange(1, len(errors) + 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/iris_adaptive")
    parser.add_argument(
        "--record", default=str(RECORDS / "iris_adaptive.json"), help="the committed record of the numbers"
    )
    args = parser.parse_args()
    experiment = load(CONFIGS / "iris_adaptive.toml")
    X, y = load_data(experiment)
    learners = {f"ogd {name.removeprefix('iris_ridge_')}": load(CONFIGS / f"{name}.toml").learner for name in PICKS}
    learners[experiment.learner.name] = experiment.learner
    learners.update(experiment.compare)
    curves = {name: average_losses(learner, X, y) for name, learner in learners.items()}
    lines = {
        "least squares in hindsight": best_fixed_weights(Squared(), Identity(), X, y),
        "best in the ball of radius 0.3": best_fixed_weights(Squared(), L2Ball(0.3), X, y),
    }
    fig, ax = plt.subplots(figsize=(7, 4.5))
    t = np.arange(1, len(y) + 1)
    for name, curve in curves.items():
        ax.plot(t, curve, lw=1.6, ls="--" if name.startswith("ogd") else "-", label=f"{name}: {curve[-1]:.3f}")
    for (name, u), color in zip(lines.items(), ("black", "grey"), strict=True):
        ax.axhline(
            np.mean((X @ u - y) ** 2), color=color, lw=1, ls=":", label=f"{name}: {np.mean((X @ u - y) ** 2):.3f}"
        )
    ax.set(xlabel="t", ylabel=r"$\frac{1}{t}\sum_{s \leq t} (\hat y_s - y_s)^2$", ylim=(0, 1.2))
    ax.set_title("iris, stored order, predict then update", fontsize=10)
    ax.legend(fontsize=7)
    plots.save(fig, Path(args.out) / "iris_adaptive.png")

    report = {
        "final_average_loss": {name: float(curve[-1]) for name, curve in curves.items()},
        "hyperparameters": {name: learner.to_config() for name, learner in learners.items()},
    }
    write_json(Path(args.out) / "iris_adaptive.json", report)
    write_json(args.record, report)
    print(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
