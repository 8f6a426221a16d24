"""Where are the good (eta, lambda) of online ridge on iris, and how far are the post's picks?

    python experiments/iris_sweep.py [--out runs/iris_sweep] [--record PATH]

Runs configs/iris_sweep.toml (a 32 x 32 grid of eta x lambda, 8 shuffled orders) as one
compiled sweep, scores the post's three hand-picked settings on the same orders, and draws
OUT/iris_sweep.png: the mean average loss over the grid with the picks marked. Its numbers go
to OUT/picks.json and RECORD (default experiments/records/iris_sweep.json, committed).

Why a script and not a study config (``ocolearn study``): one learner's 32 x 32 grid drawn as a
map with the post's picks marked: a sweep (`ocolearn sweep`), not a comparison of learners (a
study keeps only each learner's best value).
"""

import argparse
import json
from pathlib import Path

import numpy as np

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import Identity, Squared, plots
from ocolearn.config import load
from ocolearn.experiment import load_data, run_sweep
from ocolearn.io import write_json
from ocolearn.regret import best_fixed_weights
from ocolearn.sweep import stack, sweep

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "experiments/records"
PICKS = ("iris_ridge_arbitrary", "iris_ridge_magic", "iris_ridge_noball")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/iris_sweep")
    parser.add_argument(
        "--record", default=str(RECORDS / "iris_sweep.json"), help="the committed record of the numbers"
    )
    args = parser.parse_args()
    experiment = load(ROOT / "configs/iris_sweep.toml")
    table, best = run_sweep(experiment, args.out)
    axes = experiment.sweep.axes()
    seeds = list(range(experiment.sweep.seeds))
    mean = table["average_loss"].reshape(-1, len(seeds)).mean(axis=1).reshape([len(v) for v in axes.values()])

    picks = [load(ROOT / f"configs/{name}.toml").learner for name in PICKS]
    X, y = load_data(experiment)
    scored = sweep(stack(picks), np.float32(X), np.float32(y), seeds, predict_after_update=True)
    pick_loss = np.asarray(scored.trace.squared_error, np.float64).mean(axis=1) / len(y)
    report = {
        "configurations": int(mean.size),
        "seeds": len(seeds),
        "runs": int(mean.size) * len(seeds),
        "least_squares_norm": float(np.linalg.norm(best_fixed_weights(Squared(), Identity(), X, y))),
        "best": best,
        "picks": {
            name: {
                "eta": float(p.schedule.eta),
                "lambda": float(p.projection.radius),
                "mean_average_loss": float(loss),
                "times_the_best": float(loss / best["mean_score"]),
            }
            for name, p, loss in zip(PICKS, picks, pick_loss, strict=True)
        },
    }
    write_json(Path(args.out) / "picks.json", report)
    write_json(args.record, report)
    marks = [
        (name.removeprefix("iris_ridge_"), p.schedule.eta, p.projection.radius)
        for name, p in zip(PICKS, picks, strict=True)
    ]
    plots.sweep_figure(axes, mean, "average_loss", Path(args.out) / "iris_sweep.png", marks=marks)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
