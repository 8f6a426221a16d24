"""Run a configured experiment end to end and write its outputs.

``run_experiment(experiment, out_dir)`` writes, each file atomically:

- ``metrics.json``: T, ``average_loss`` = (1/T) sum_t (yhat_t - y_t)^2 over the recorded
  predictions, the comparators' mean squared errors, ``regret`` (R_T in the learner's loss,
  against the feasible comparator), ``regret_bound``, ``final_w`` and the definitions;
- ``trace.csv``: one row per round (t, row, prediction, target, loss, squared_error,
  cumulative_average_loss, regret);
- ``config.toml``: the resolved experiment, which reruns it exactly;
- ``normalized_loss.png`` and ``regret.png``; ``snapshots.npy`` if snapshots were asked for.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import tomli_w

from ocolearn import data as datasets
from ocolearn.config import Experiment
from ocolearn.io import atomic_write, write_json
from ocolearn.projections import Identity
from ocolearn.regret import best_fixed_weights, gradient_bound, ogd_regret_bound, regret_curve, round_losses
from ocolearn.run import run

DEFINITIONS = {
    "average_loss": "(1/T) sum_t (yhat_t - y_t)^2 over the recorded predictions",
    "comparator_*_loss": "(1/T) sum_t (u . x_t - y_t)^2 for the comparator u, over the same rounds",
    "learner_loss": "(1/T) sum_t loss(w_t . x_t, y_t), w_t the weights played in round t (before its update)",
    "regret": "sum_t loss(w_t . x_t, y_t) - sum_t loss(u . x_t, y_t), u the feasible comparator, "
    "in the learner's loss (1/2 (p - y)^2 for 'squared')",
    "regret_bound": "Zinkevich (2003) Theorem 1 for the set's diameter and the data's gradient bound",
    "recorded_regret": "sum_t (yhat_t - y_t)^2 - sum_t (u . x_t - y_t)^2 = T (average_loss - comparator_feasible_loss)",
}


def load_data(experiment: Experiment):
    """``(X, y)`` in float64 for the experiment's ``[data]`` table (learners see float32)."""
    spec, source = experiment.data, experiment.data.source
    table = datasets.load_table(source)
    if spec.scale:
        table = datasets.scale(table, None if spec.scale is True else spec.scale, source)
    return datasets.design(table, spec.features, spec.target, spec.intercept, source)


def evaluate(experiment: Experiment, X=None, y=None):
    """Run the experiment; returns ``(metrics, curves, snapshots)`` without writing anything."""
    if X is None:
        X, y = load_data(experiment)
    learner, opts = experiment.learner, experiment.run
    result = run(
        learner,
        np.asarray(X, np.float32),
        np.asarray(y, np.float32),
        opts.shuffle_seed,
        passes=opts.passes,
        predict_after_update=opts.predict_after_update,
        snapshot_every=opts.snapshot_every,
    )
    trace = result.trace
    index = np.asarray(trace.index)
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    prediction = np.asarray(trace.prediction, np.float64)
    target = y[index]
    squared_error = (prediction - target) ** 2
    T = len(target)
    t = np.arange(1, T + 1)
    curves = {
        "row": index,
        "prediction": prediction,
        "target": target,
        "loss": np.asarray(trace.loss),
        "squared_error": squared_error,
        "cumulative_average_loss": np.cumsum(squared_error) / t,
    }
    metrics = {
        "name": experiment.name,
        "T": T,
        "average_loss": float(squared_error.mean()),
        "learner_loss": float(np.mean(np.asarray(trace.loss, np.float64))),
    }
    projection = getattr(learner, "projection", None)
    feasible = unconstrained = None
    if projection is not None:
        unconstrained = best_fixed_weights(learner.loss, Identity(), X, y)
        feasible = best_fixed_weights(learner.loss, projection, X, y)
    for key, u in (("unconstrained", unconstrained), ("feasible", feasible)):
        if u is not None:
            comparator_error = (X[index] @ u - target) ** 2
            metrics[f"comparator_{key}_loss"] = curves[f"comparator_{key}_loss"] = float(comparator_error.mean())
            metrics[f"comparator_{key}_w"] = u.tolist()
    if feasible is not None:
        curves["regret"] = regret_curve(trace.loss, round_losses(learner.loss, feasible, X, y, index))
        metrics["regret"] = float(curves["regret"][-1])
        metrics["recorded_regret"] = T * (metrics["average_loss"] - metrics["comparator_feasible_loss"])
        G = gradient_bound(learner.loss, projection, X, y)
        D = projection.diameter(np.asarray(result.state.w).size)
        bound = ogd_regret_bound(learner.schedule, D, G, T) if hasattr(learner, "schedule") else None
        metrics["gradient_bound"], metrics["diameter"] = G, D
        if bound is not None:
            curves["regret_bound"] = bound
            metrics["regret_bound"] = float(bound[-1])
            metrics["regret_within_bound"] = bool(np.all(curves["regret"] <= bound))
    metrics["final_w"] = np.asarray(result.state.w).tolist()
    metrics["definitions"] = DEFINITIONS
    return metrics, curves, trace.snapshots


TRACE_COLUMNS = ("row", "prediction", "target", "loss", "squared_error", "cumulative_average_loss", "regret")


def trace_csv(curves: dict) -> str:
    """The per-round table as CSV text (floats written with enough digits to round-trip)."""
    columns = [c for c in TRACE_COLUMNS if c in curves]
    T = len(curves["target"])
    table = np.column_stack([np.arange(1, T + 1)] + [np.asarray(curves[c], np.float64) for c in columns])
    buffer = io.StringIO()
    fmt = ["%d", "%d"] + ["%.17g"] * (len(columns) - 1)
    np.savetxt(buffer, table, fmt=fmt, delimiter=",", header=",".join(["t", *columns]), comments="")
    return buffer.getvalue()


def run_experiment(experiment: Experiment, out_dir):
    """Evaluate the experiment and write its outputs into ``out_dir``; returns ``(metrics, curves)``."""
    from ocolearn import plots

    out = Path(out_dir)
    metrics, curves, snapshots = evaluate(experiment)
    atomic_write(out / "config.toml", tomli_w.dumps(experiment.to_config()))
    atomic_write(out / "trace.csv", trace_csv(curves))
    if snapshots is not None:
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(snapshots))
        atomic_write(out / "snapshots.npy", buffer.getvalue())
    plots.run_figures(curves, experiment.name, out)
    write_json(out / "metrics.json", metrics)
    return metrics, curves
