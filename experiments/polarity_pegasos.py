"""Pegasos on movie-review polarity: validation error against lambda, and score as confidence.

    python experiments/polarity_pegasos.py [--out runs/polarity_pegasos] [--record PATH] [--set data.source=PATH]

Runs configs/polarity_pegasos.toml: every lambda of its [sweep] over the same shuffled
epochs, as one compiled sweep, scored by the error of the final weights on the held-out
reviews; twice: behind the config's [pipeline] (VW-style ``normalize``, the settings of the
text command of docs/tutorials/text-classifiers.md) and on the write-up's raw word counts (no intercept, no scaling).
Writes OUT/polarity_pegasos.json (errors by lambda, the confidence table: accuracy where
|score| > 1 and where not, at the configured lambda and pipeline), OUT/polarity_pegasos.png
and RECORD (by default experiments/records/polarity_pegasos.json, committed).

Why a script and not a study config (``ocolearn study``): a folder of text read as word counts,
lambda swept twice (behind the pipeline and on the raw counts) over several epochs, and a table
of accuracy by |score| (a study runs one pass and reports errors, not confidences).
"""

import argparse
import json
import sys
from pathlib import Path

import jax
import matplotlib.pyplot as plt
import numpy as np

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import plots
from ocolearn.config import ConfigError, load
from ocolearn.data import DataError
from ocolearn.experiment import load_examples, split_validation, steps_for
from ocolearn.features import row
from ocolearn.io import write_json
from ocolearn.pipeline import targets, with_pipeline
from ocolearn.sweep import stack_values, sweep

CONFIG = Path(__file__).resolve().parent.parent / "configs/polarity_pegasos.toml"
RECORDS = Path(__file__).resolve().parent / "records"


def held_out_scores(learners, states, X):
    """The score of each held-out row (raw, through the learners' steps) for each of the
    stacked learners (C,) and their final states (C, S): (C, S, n)."""

    def one(learner, state):
        return jax.vmap(learner.predict, (None, 0))(state, X)

    return np.asarray(jax.vmap(jax.vmap(one, (None, 0)))(learners, states), np.float64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/polarity_pegasos")
    parser.add_argument(
        "--record", default=str(RECORDS / "polarity_pegasos.json"), help="the committed record of the numbers"
    )
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    try:
        experiment = load(CONFIG, args.set)
        source = Path(experiment.data.source)
        if not source.is_dir():  # (the data is not in the repository: a fresh clone has none)
            raise DataError(
                f"{source}: no review polarity data there (relative to {Path.cwd()}); put Pang and Lee's "
                "txt_sentoken folder (pos/ and neg/) there or pass --set data.source=PATH"
            )
        data = load_examples(experiment)
    except (ConfigError, DataError) as e:
        print(f"polarity_pegasos: error: {e}", file=sys.stderr)
        sys.exit(2)
    spec, learner = experiment.sweep, experiment.learner
    y = targets(learner, data)
    train, held = split_validation(None, y, spec.validation, spec.validation_seed)
    lams = spec.axes()["learner.lam"]
    seeds = list(range(spec.seeds)) if spec.seeds else [experiment.run.shuffle_seed]
    X_train, X_held = row(data.X, train), row(data.X, held)

    def errors_of(steps):
        """Held-out scores (C, S, n) and errors (C, S) of every lambda behind ``steps``."""
        learners = with_pipeline(stack_values(learner, {"lam": lams}), steps, stacked=len(lams))
        result = sweep(learners, X_train, y[train], seeds, passes=experiment.run.passes)
        held_scores = held_out_scores(learners, result.state, X_held)
        return held_scores, np.mean(held_scores * y[held] <= 0, axis=-1)

    held_scores, errors = errors_of(steps_for(experiment, data.X))
    _, raw_errors = errors_of(())  # the write-up's raw counts
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
        "pipeline": {"intercept": experiment.pipeline.intercept, "scale": experiment.pipeline.scale},
        "validation_error": {
            f"{lam:g}": [float(errors[i].mean()), float(errors[i].std())] for i, lam in enumerate(lams)
        },
        "best_lambda": float(lams[np.argmin(errors.mean(axis=1))]),
        "validation_error_raw_counts": {
            f"{lam:g}": [float(raw_errors[i].mean()), float(raw_errors[i].std())] for i, lam in enumerate(lams)
        },
        "best_lambda_raw_counts": float(lams[np.argmin(raw_errors.mean(axis=1))]),
        "confidence": table,
    }
    out = Path(args.out)
    write_json(out / "polarity_pegasos.json", report)
    write_json(args.record, report)
    fig, ax = plt.subplots(figsize=(6, 4))
    piped = f"{'intercept, ' if experiment.pipeline.intercept else ''}scale {experiment.pipeline.scale}"
    for e, style, label in [(errors, "o-", piped), (raw_errors, "s--", "raw counts (the write-up)")]:
        ax.errorbar(lams, e.mean(axis=1), yerr=e.std(axis=1), fmt=style, color="black", capsize=3, label=label)
    ax.set(xlabel=r"$\lambda$", ylabel="validation error (mean, sd over orders)", xscale="log")
    ax.legend(frameon=False)
    ax.set_title(f"Pegasos, {len(train)} reviews, {experiment.run.passes} epochs, word counts", fontsize=10)
    plots.save(fig, out / "polarity_pegasos.png")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
