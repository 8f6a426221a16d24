"""Pegasos on movie-review polarity: validation error against lambda, and score as confidence.

    python experiments/polarity_pegasos.py [--out runs/polarity_pegasos] [--record PATH] [--set data.source=PATH]

Runs configs/polarity_pegasos.toml: every lambda of its [sweep] over the same shuffled
epochs, as one compiled sweep, scored by the error of the final weights on the held-out
reviews. Writes OUT/polarity_pegasos.json (errors by lambda, the confidence table: accuracy
where |w . x| > 1 and where not, at the configured lambda), OUT/polarity_pegasos.png and RECORD (by default
experiments/records/polarity_pegasos.json, committed).
"""

import argparse
import json
from pathlib import Path

import jax
import matplotlib.pyplot as plt
import numpy as np

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import plots
from ocolearn.config import load
from ocolearn.experiment import load_examples, split_validation
from ocolearn.features import row
from ocolearn.io import write_json
from ocolearn.pipeline import targets
from ocolearn.sweep import stack_values, sweep

CONFIG = Path(__file__).resolve().parent.parent / "configs/polarity_pegasos.toml"
RECORDS = Path(__file__).resolve().parent / "records"


def scores(w, X):
    """``w . x`` of each sparse row for each of the weight vectors ``w`` (..., d)."""
    return np.einsum("...nk,nk->...n", w[..., np.asarray(X.idx)], np.asarray(X.val, np.float64))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/polarity_pegasos")
    parser.add_argument(
        "--record", default=str(RECORDS / "polarity_pegasos.json"), help="the committed record of the numbers"
    )
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    experiment = load(CONFIG, args.set)
    spec, learner = experiment.sweep, experiment.learner
    data = load_examples(experiment)
    y = targets(learner, data)
    train, held = split_validation(None, y, spec.validation, spec.validation_seed)
    lams = spec.axes()["learner.lam"]
    seeds = list(range(spec.seeds)) if spec.seeds else [experiment.run.shuffle_seed]
    result = sweep(
        stack_values(learner, {"lam": lams}), row(data.X, train), y[train], seeds, passes=experiment.run.passes
    )
    w = np.asarray(jax.vmap(jax.vmap(learner.weights))(result.state), np.float64)  # (C, S, d)
    held_scores = scores(w, row(data.X, held))  # (C, S, n)
    errors = np.mean(held_scores * y[held] <= 0, axis=-1)  # (C, S)
    c = int(np.argmin(np.abs(lams - learner.lam)))
    s, right = held_scores[c], held_scores[c] * y[held] > 0
    confident = np.abs(s) > 1
    table = {
        "lambda": float(lams[c]),
        "confident_fraction": float(confident.mean()),
        "confident_accuracy": float(right[confident].mean()),
        "other_accuracy": float(right[~confident].mean()),
    }
    report = {
        "train_rows": len(train),
        "validation_rows": len(held),
        "features": data.X.dim,
        "epochs": experiment.run.passes,
        "seeds": seeds,
        "validation_error": {
            f"{lam:g}": [float(errors[i].mean()), float(errors[i].std())] for i, lam in enumerate(lams)
        },
        "best_lambda": float(lams[np.argmin(errors.mean(axis=1))]),
        "confidence": table,
    }
    out = Path(args.out)
    write_json(out / "polarity_pegasos.json", report)
    write_json(args.record, report)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.errorbar(lams, errors.mean(axis=1), yerr=errors.std(axis=1), marker="o", color="black", capsize=3)
    ax.set(xlabel=r"$\lambda$", ylabel="validation error (mean, sd over orders)")
    ax.set_title(f"Pegasos, {len(train)} reviews, {experiment.run.passes} epochs, word counts", fontsize=10)
    plots.save(fig, out / "polarity_pegasos.png")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
