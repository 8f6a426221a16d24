"""The iris regret study of the OGD post: its three settings, each run's outputs, one figure.

    python experiments/iris_regret.py [--out runs/iris_regret] [--record PATH] [--set key=value ...]

Runs configs/iris_ridge_{arbitrary,magic,noball}.toml into OUT/<name>/, draws OUT/iris_regret.png:
normalized cumulative loss (top) and regret with its bound (bottom), and writes the numbers of
each setting to RECORD (default experiments/records/iris_regret.json, committed).

Why a script and not a study config (``ocolearn study``): the regret of each of the post's
settings against the best point of its own ball, with Zinkevich's bound (a study measures regret
against the best affine predictor, unconstrained, and states no bound); each setting is an
`ocolearn run` config; `make demo` runs it.
"""

import argparse
import json
from pathlib import Path

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import plots
from ocolearn.config import load
from ocolearn.experiment import run_experiment
from ocolearn.io import write_json

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
RECORDS = Path(__file__).resolve().parent / "records"
SETTINGS = ("iris_ridge_arbitrary", "iris_ridge_magic", "iris_ridge_noball")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/iris_regret")
    parser.add_argument(
        "--record", default=str(RECORDS / "iris_regret.json"), help="the committed record of the numbers"
    )
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    panels, record = [], {}
    for name in SETTINGS:
        experiment = load(CONFIGS / f"{name}.toml", args.set)
        metrics, curves = run_experiment(experiment, Path(args.out) / name)
        spec = experiment.learner
        panels.append((f"{name}: eta={spec.schedule.eta:g}, lambda={spec.projection.radius:g}", curves))
        keys = ("average_loss", "comparator_feasible_loss", "comparator_unconstrained_loss", "regret", "regret_bound")
        record[name] = {"eta": spec.schedule.eta, "lambda": spec.projection.radius, **{k: metrics.get(k) for k in keys}}
        print(json.dumps({"name": name, **record[name]}))
    plots.grid(panels, Path(args.out) / "iris_regret.png")
    write_json(args.record, record)
    print(f"wrote {args.out}/")


if __name__ == "__main__":
    main()
