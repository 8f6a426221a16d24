"""Multiclass online classifiers on bundled data: mistakes per pass and test error.

MIRA, the Perceptron, PA-I, and the confidence-weighted family (CW, AROW, SCW-I, diagonal,
multiclass by the top-1 constraint), each with its default hyperparameters.

    python experiments/multiclass.py [--out runs/multiclass] [--record PATH]

Runs configs/iris_species.toml and configs/wine.toml (each: 30% of the rows held out, up to
20 shuffled passes, stopping after a pass without mistakes) with each learner of LEARNERS,
writes OUT/<config>_<learner>/ (metrics, mistakes per pass), OUT/multiclass.json and
OUT/multiclass.png (mistakes per pass, a panel per data set) and RECORD (by default
experiments/records/multiclass.json, committed), and prints the table.

Why a script and not a study config (``ocolearn study``): up to 20 shuffled passes, stopping
after a pass without mistakes, and the mistakes of each pass (a study runs one pass, predict
then learn).
"""

import argparse
import json
from pathlib import Path

import matplotlib.pyplot as plt

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import plots
from ocolearn.config import load
from ocolearn.experiment import run_experiment
from ocolearn.io import write_json

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
RECORDS = Path(__file__).resolve().parent / "records"
DATA = ("iris_species", "wine")
LEARNERS = {
    "mira": [],
    "perceptron": ["learner.kind=perceptron"],
    "pa1": ["learner.kind=passive_aggressive", "learner.C=1.0", "learner.variant=1"],
    "cw": ["learner.kind=cw"],
    "arow": ["learner.kind=arow"],
    "scw1": ["learner.kind=scw"],
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/multiclass")
    parser.add_argument(
        "--record", default=str(RECORDS / "multiclass.json"), help="the committed record of the numbers"
    )
    args = parser.parse_args()
    out = Path(args.out)
    results = {}
    fig, axes = plt.subplots(1, len(DATA), figsize=(6 * len(DATA), 4))
    for ax, data in zip(axes, DATA, strict=True):
        for learner, overrides in LEARNERS.items():
            metrics, _ = run_experiment(load(CONFIGS / f"{data}.toml", overrides), out / f"{data}_{learner}")
            results[f"{data}/{learner}"] = {
                k: metrics.get(k) for k in ("mistakes_per_pass", "test_error", "test_error_averaged")
            }
            mistakes = metrics["mistakes_per_pass"]
            ax.plot(range(1, len(mistakes) + 1), mistakes, marker="o", ms=3, label=learner)
        ax.set(title=f"{data}: {metrics['train_rows']} training rows", xlabel="pass", ylabel="mistakes in the pass")
        ax.legend(fontsize=8)
    plots.save(fig, out / "multiclass.png")
    write_json(out / "multiclass.json", results)
    write_json(args.record, results)
    print("| data / learner | passes | mistakes in pass 1 | in the last pass | test error | averaged |")
    print("|---|---:|---:|---:|---:|---:|")
    for key, r in results.items():
        m, avg = r["mistakes_per_pass"], r["test_error_averaged"]
        print(
            f"| {key} | {len(m)} | {m[0]} | {m[-1]} | {r['test_error']:.3f} | {'' if avg is None else f'{avg:.3f}'} |"
        )
    print(json.dumps({"wrote": str(out)}))


if __name__ == "__main__":
    main()
