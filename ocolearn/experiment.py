"""Run a configured experiment end to end and write its outputs.

``run_experiment(experiment, out_dir)`` writes, each file atomically:

- ``metrics.json``: T, ``average_loss`` = (1/T) sum_t (yhat_t - y_t)^2 over the recorded
  predictions, the comparators' mean squared errors, ``regret`` (R_T in the learner's loss,
  against the feasible comparator), ``regret_bound``, ``final_w`` and the definitions;
- ``trace.csv``: one row per round (t, row, prediction, target, loss, squared_error,
  cumulative_average_loss, regret);
- ``config.toml``: the resolved experiment, which reruns it exactly;
- ``normalized_loss.png`` and ``regret.png``; ``snapshots.npy`` if snapshots were asked for;
- ``provenance.json``: versions, device, git commit, command line and time (``ocolearn.provenance``).

A classification experiment (class labels: a sparse format, or a table whose target is a
column of names) writes instead ``metrics.json`` with the mistakes of each pass and the test
error (``classify``), and ``mistakes.png``.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import tomli_w

from ocolearn import data as datasets
from ocolearn import provenance
from ocolearn.config import Experiment
from ocolearn.data.sparse_text import DEFAULT_BITS, SparseData, class_indices
from ocolearn.features import dot, row
from ocolearn.io import atomic_write, write_json
from ocolearn.model import read_data, targets
from ocolearn.projections import Identity
from ocolearn.regret import best_fixed_weights, gradient_bound, ogd_regret_bound, regret_curve, round_losses
from ocolearn.run import is_mistake, run, run_passes

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


def is_classification(experiment: Experiment) -> bool:
    """Class labels: a sparse or text format, or a table whose target column holds names."""
    spec = experiment.data
    if spec.format != "table":
        return True
    target = datasets.load_table(spec.source).get(spec.target)
    return target is not None and target.dtype.kind not in "fi"


def load_examples(experiment: Experiment) -> SparseData:
    """The experiment's ``[data]`` as classification examples: features (dense for tables),
    class indices and the sorted label names."""
    spec = experiment.data
    if spec.format != "table":
        bits = spec.bits if spec.format == "text" else (spec.bits or DEFAULT_BITS)
        return read_data(spec.source, spec.format, bits=bits)
    table = datasets.load_table(spec.source)
    if spec.scale:
        table = datasets.scale(table, None if spec.scale is True else spec.scale, spec.source)
    X = datasets.feature_matrix(table, spec.features, spec.intercept, spec.source).astype(np.float32)
    names = [v if isinstance(v, str) else f"{v:g}" for v in table[spec.target].tolist()]
    y, labels = class_indices(spec.source, names, range(2, len(names) + 2))
    return SparseData(X, y, labels, np.arange(2, len(names) + 2))


def error_rate(scores, y) -> float:
    """The fraction of wrong signs (+-1 targets) or wrong argmaxes (class indices)."""
    return float(np.mean(np.asarray(jax.vmap(is_mistake)(jnp.asarray(scores), jnp.asarray(y)))))


def classify(experiment: Experiment, data: SparseData | None = None) -> dict:
    """Train the classifier pass by pass on the rows not held out by ``data.test``; returns
    the metrics: mistakes and training error rate of each pass (progressive, before each
    round's update), and the test error of the final and, where kept, averaged weights."""
    data = load_examples(experiment) if data is None else data
    learner, opts, spec = experiment.learner, experiment.run, experiment.data
    y = targets(learner, data)
    train, test = split_validation(None, y, spec.test, spec.test_seed)
    passes = run_passes(
        learner, row(data.X, train), y[train], opts.shuffle_seed, passes=opts.passes, stop_early=opts.stop_early
    )
    metrics = {
        "name": experiment.name,
        "labels": data.labels,
        "train_rows": len(train),
        "test_rows": len(test),
        "passes_run": len(passes.mistakes),
        "mistakes_per_pass": passes.mistakes,
        "training_error_per_pass": [m / len(train) for m in passes.mistakes],
    }
    if len(test):
        X_test = row(data.X, test)
        metrics["test_error"] = error_rate(jax.vmap(learner.predict, (None, 0))(passes.state, X_test), y[test])
        if hasattr(learner, "averaged"):
            w = learner.averaged(passes.state)
            metrics["test_error_averaged"] = error_rate(jax.vmap(dot, (None, 0))(w, X_test), y[test])
    return metrics


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
        D = projection.diameter(np.asarray(learner.weights(result.state)).size)
        bound = ogd_regret_bound(learner.schedule, D, G, T) if hasattr(learner, "schedule") else None
        metrics["gradient_bound"], metrics["diameter"] = G, D
        if bound is not None:
            curves["regret_bound"] = bound
            metrics["regret_bound"] = float(bound[-1])
            metrics["regret_within_bound"] = bool(np.all(curves["regret"] <= bound))
    metrics["final_w"] = np.asarray(learner.weights(result.state)).tolist()
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
    provenance.write(out)  # what produced the folder (ocolearn.provenance)
    if is_classification(experiment):
        metrics = classify(experiment)
        atomic_write(out / "config.toml", tomli_w.dumps(experiment.to_config()))
        plots.mistakes_figure({experiment.name: metrics["mistakes_per_pass"]}, out / "mistakes.png")
        write_json(out / "metrics.json", metrics)
        return metrics, {}
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


def split_validation(X, y, fraction: float, seed: int):
    """``(train rows, held-out rows)`` index arrays: a ``fraction`` of the rows of ``y``
    chosen by ``seed``; both keep the stored order."""
    n = len(y)
    held = np.sort(np.random.default_rng(seed).permutation(n)[: int(round(fraction * n))])
    return np.setdiff1d(np.arange(n), held), held


def _config_learner(learners, c):
    return jax.tree.map(lambda a: a[c], learners)


def run_sweep(experiment: Experiment, out_dir, *, chunk_size=None):
    """Run the experiment's ``[sweep]`` as one compiled program and write into ``out_dir``:

    - ``sweep.csv``: a row per configuration and seed: the swept values, ``average_loss``
      (mean (yhat - y)^2 of the recorded predictions), ``learner_loss``, ``regret`` against
      that configuration's feasible comparator (where one is solved exactly), ``mistakes``
      (for +-1 targets) and ``validation_loss`` (mean squared error of the final weights on
      the held-out rows, if ``validation`` is set);
    - ``best.json`` and ``best.toml``: the configuration with the lowest mean score over
      seeds (``validation_loss`` if set, else ``average_loss``) and its resolved experiment;
    - ``sweep.png`` (a heatmap for two swept keys, curves with bands over seeds for one) and
      ``best_regret.png`` (regret curves of the best configurations, bands over seeds).

    Returns ``(table, best)``.
    """
    from ocolearn import plots
    from ocolearn.sweep import product, stack_values, sweep

    spec, opts = experiment.sweep, experiment.run
    X, y = load_data(experiment)
    train, held = (np.arange(len(y)), np.arange(0))
    if spec.validation > 0:
        train, held = split_validation(X, y, spec.validation, spec.validation_seed)
    Xt, yt = X[train], y[train]
    axes = spec.axes()
    columns = product(axes)
    learners = stack_values(experiment.learner, {k.removeprefix("learner."): v for k, v in columns.items()})
    if spec.seeds:
        seeds = list(range(spec.seeds))
    else:
        seeds = None if opts.shuffle_seed is None else [opts.shuffle_seed]
    run_opts = dict(passes=opts.passes, predict_after_update=opts.predict_after_update)
    X32, y32 = np.asarray(Xt, np.float32), np.asarray(yt, np.float32)
    result = sweep(learners, X32, y32, seeds, chunk_size=chunk_size, **run_opts)
    T = len(yt) * opts.passes
    num, num_seeds = result.trace.loss.shape
    table = {k: np.repeat(v, num_seeds) for k, v in columns.items()}
    table["seed"] = np.tile([-1] if seeds is None else seeds, num)  # -1: the stored order
    table["average_loss"] = (np.asarray(result.trace.squared_error, np.float64) / T).ravel()
    table["learner_loss"] = (np.asarray(result.trace.loss, np.float64) / T).ravel()
    solved = {}  # projection's numbers -> (comparator weights or None, its loss summed over rounds)

    def comparator(c):
        """The configuration's learner and its feasible comparator, solved once per projection."""
        learner = _config_learner(learners, c)
        key = tuple(np.asarray(leaf).item() for leaf in jax.tree.leaves(getattr(learner, "projection", None)))
        if key not in solved:
            u = best_fixed_weights(learner.loss, learner.projection, Xt, yt) if hasattr(learner, "projection") else None
            total = (
                np.nan if u is None else opts.passes * round_losses(learner.loss, u, Xt, yt, np.arange(len(yt))).sum()
            )
            solved[key] = (u, total)
        return learner, *solved[key]

    regret = [np.asarray(result.trace.loss[c], np.float64) - comparator(c)[2] for c in range(num)]
    table["regret"] = np.ravel(regret)
    if set(np.unique(y)) <= {-1.0, 1.0}:
        table["mistakes"] = np.asarray(result.trace.mistakes).ravel()
    if len(held):
        w = np.asarray(jax.vmap(jax.vmap(experiment.learner.weights))(result.state), np.float64)  # (C, S, d)
        table["validation_loss"] = np.mean((w @ X[held].T - y[held]) ** 2, axis=-1).ravel()
    score = "validation_loss" if len(held) else "average_loss"
    mean = table[score].reshape(num, num_seeds).mean(axis=1)
    best_c = int(np.nanargmin(mean))
    best_values = {k: float(v[best_c]) for k, v in columns.items()}
    best_experiment = apply_values(experiment, best_values)
    best = {
        "score": score,
        "mean_score": float(mean[best_c]),
        "std_score": float(table[score].reshape(num, num_seeds)[best_c].std()),
        "values": best_values,
        "configurations": num,
        "seeds": num_seeds,
    }
    out = Path(out_dir)
    provenance.write(out)  # what produced the folder (ocolearn.provenance)
    buffer = io.StringIO()
    names = list(table)
    np.savetxt(
        buffer,
        np.column_stack([table[n] for n in names]),
        fmt="%.10g",
        delimiter=",",
        header=",".join(names),
        comments="",
    )
    atomic_write(out / "sweep.csv", buffer.getvalue())
    atomic_write(out / "best.toml", tomli_w.dumps(best_experiment.to_config()))
    write_json(out / "best.json", best)
    plots.sweep_figure(axes, mean.reshape([len(v) for v in axes.values()]), score, out / "sweep.png")
    top = np.argsort(mean)[:3]
    top_learners = jax.tree.map(lambda a: a[top], learners)
    traced = sweep(top_learners, X32, y32, seeds, trace=True, **run_opts)
    bands = []
    for j, c in enumerate(top):
        learner, u, _ = comparator(c)
        if u is None:
            continue
        curves = [
            regret_curve(traced.trace.loss[j, s], round_losses(learner.loss, u, Xt, yt, traced.trace.index[j, s]))
            for s in range(num_seeds)
        ]
        label = ", ".join(f"{k.split('.')[-1]}={columns[k][c]:.3g}" for k in columns)
        bands.append((label, np.array(curves)))
    if bands:
        plots.regret_bands(bands, out / "best_regret.png")
    return table, best


def apply_values(experiment: Experiment, values: dict) -> Experiment:
    """The experiment with learner numbers set by dotted key (``"learner.schedule.eta"``),
    without its sweep."""
    from ocolearn.sweep import leaf_paths

    paths = leaf_paths(experiment.learner)
    leaves, tree = jax.tree.flatten(experiment.learner)
    changed = {k.removeprefix("learner."): v for k, v in values.items()}
    leaves = [changed.get(p, leaf) for p, leaf in zip(paths, leaves, strict=True)]
    return dataclasses.replace(experiment, learner=jax.tree.unflatten(tree, leaves), sweep=None)
