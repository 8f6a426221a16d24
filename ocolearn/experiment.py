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

A classification experiment (the task declared or inferred from the target,
``ocolearn.data.task``) writes instead ``metrics.json`` with the mistakes of each pass and the
test error (``classify``), and ``mistakes.png``. Both write ``model.npz``, the model file that
``ocolearn predict`` and ``ocolearn test`` read.
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
from ocolearn import plots, provenance  # plots: imported before a run opens its output folder
from ocolearn.checks import check_rounds
from ocolearn.config import ConfigError, DataSpec, Experiment
from ocolearn.data.sparse_text import SparseData, class_indices
from ocolearn.data.task import Labels, infer
from ocolearn.data.textdirs import read_text_folders
from ocolearn.features import Sparse, num_features, row
from ocolearn.io import atomic_write, write_json, writes_folder
from ocolearn.learners.pipeline import steps_of, with_pipeline
from ocolearn.modelfile import save, scores
from ocolearn.names import key_of
from ocolearn.pipeline import (
    TrainOptions,
    check_learner,
    check_step,
    csv_settings,
    csv_steps,
    error_rate,
    loss_name,
    model_of,
    read_data,
    source_of,
    targets,
)
from ocolearn.projections import Identity
from ocolearn.regret import best_fixed_weights, gradient_bound, ogd_regret_bound, regret_curve, round_losses
from ocolearn.run import is_mistake, round_order, run, run_passes
from ocolearn.sizes import estimate, refuse

DEFINITIONS = {
    "average_loss": "(1/T) sum_t (yhat_t - y_t)^2 over the recorded predictions",
    "comparator_*_loss": "(1/T) sum_t (u . x_t - y_t)^2 for the comparator u, over the same rounds",
    "learner_loss": "(1/T) sum_t loss(w_t . x_t, y_t), w_t the weights played in round t (before its update)",
    "regret": "sum_t loss(w_t . x_t, y_t) - sum_t loss(u . x_t, y_t), u the feasible comparator, "
    "in the learner's loss (1/2 (p - y)^2 for 'squared')",
    "regret_bound": "Zinkevich (2003) Theorem 1 for the set's diameter and the data's gradient bound",
    "diameter": "D, the largest distance between two points of the feasible set; null: the set is unbounded",
    "gradient_bound": "G = max_t sup_{w in F} ||grad loss_t(w)|| on the data; null: unbounded (an unbounded set)",
    "recorded_regret": "sum_t (yhat_t - y_t)^2 - sum_t (u . x_t - y_t)^2 = T (average_loss - comparator_feasible_loss)",
    "x_t": "the row of round t as the learner was fed it: behind [pipeline] parts with running statistics "
    "(online scaling) each row is scaled with the statistics of the rows before it, so a comparator u is a "
    "fixed weight vector of those rows, and a learner that follows the changing scale can have negative regret",
    "comparator_offline_loss": "(1/T) sum_t (v . r_t + b - y_t)^2 for the least-squares fit (v, b) of the raw "
    "rows r_t with an intercept, over the same rounds: what a batch fit of an affine model reaches",
}


def load_data(experiment: Experiment):
    """``(X, y)`` in float64 for the experiment's ``[data]`` table (learners see float32): the
    raw feature columns, R-scaled where ``batch_scale`` says; the ``[pipeline]`` parts act in
    the run (``learner_of``)."""
    spec, source = experiment.data, experiment.data.source
    table = _batch_scaled(spec)
    return datasets.design(table, table_features(spec, table), spec.target, False, source)


def table_features(spec: DataSpec, table) -> list[str]:
    """A ``[data]`` table's feature columns: ``data.features``, or every column of ``table`` but
    the target, as ``ocolearn train`` reads a CSV file (one not numeric is an error naming the key)."""
    if spec.features:
        return list(spec.features)
    features = [name for name in table if name != spec.target]
    text = next((name for name in features if table[name].dtype.kind not in "fi"), None)
    if text is not None:
        raise datasets.DataError(
            f"{spec.source}: column {text!r} is not numeric; list the feature columns in 'data.features' "
            "(without it, every column but the target is a feature)"
        )
    return features


def _batch_scaled(spec):
    table = datasets.load_table(spec.source)
    if spec.batch_scale:
        table = datasets.scale(table, None if spec.batch_scale is True else spec.batch_scale, spec.source)
    return table


def _label_names(column) -> list[str]:
    return [v if isinstance(v, str) else f"{v:g}" for v in column.tolist()]


def load_examples(experiment: Experiment) -> SparseData:
    """The experiment's ``[data]`` in memory (``read_examples``)."""
    return read_examples(experiment.data)


TASK_KEY = "data.task"  # what declares the task in a config, as its messages name it
CONFIG_KEYS = ("learner.", TASK_KEY)  # a config's keys, as its messages name them (``check_learner``)


def read_examples(spec: DataSpec, task_key: str = TASK_KEY) -> SparseData:
    """A ``[data]`` table's examples in memory, through the one reading path: features (dense
    for tables and CSV), and class indices with the sorted label names, or for a regression
    task (declared or inferred, ``ocolearn.data.task``) the target values with labels None.
    Documents of a text folder come in the order shuffled once by ``data.order_seed``;
    ``task_key`` is the key that declares the task, as messages name it."""
    if spec.format == "table":
        table = _batch_scaled(spec)
        X = datasets.feature_matrix(table, table_features(spec, table), False, spec.source)
        if spec.target not in table:
            raise datasets.DataError(f"{spec.source}: unknown target {spec.target!r}; columns: {', '.join(table)}")
        column, lines = table[spec.target], np.arange(2, len(X) + 2)
        names = _label_names(column)
        for line, name in zip(lines, names, strict=True):
            datasets.check_target(name, f"{spec.source}, line {line}", spec.target)
        numeric = column.dtype.kind in "fi"
        distinct = sorted(set(names), key=float if numeric else None)
        found = Labels(distinct, numeric, numeric and bool(np.all(np.mod(column, 1) == 0)) if numeric else False)
        if infer(found, spec.task, spec.source, task_key) == "regression":  # float64: the comparators are exact
            return SparseData(X, column.astype(np.float64), None, lines)
        order, key = float if numeric else None, key_of(task_key, "labels")
        y, labels = class_indices(spec.source, names, lines, spec.labels or None, order, key)
        return SparseData(X.astype(np.float32), y, labels, lines)
    if spec.format == "text" and spec.bits is None:
        data = read_text_folders(spec.source, labels=spec.labels or None, key=key_of(task_key, "labels"))[0]
        if spec.order_seed is None:
            return data
        order = np.random.default_rng(spec.order_seed).permutation(len(data.y))
        return SparseData(row(data.X, order), data.y[order], data.labels, data.lines[order])
    return read_data(
        spec.source,
        spec.format,
        bits=spec.bits,
        dim=spec.dim,
        labels=spec.labels or None,
        zero_based=spec.zero_based,
        target=spec.target,
        task=spec.task,
        order_seed=spec.order_seed if spec.format == "text" else None,
        task_key=task_key,
    )


def task_of(data: SparseData) -> str:
    if data.labels is None:
        return "regression"
    return "binary" if len(data.labels) == 2 else "multiclass"


def takes_classes(learner) -> bool:
    """Whether the learner has a ``classes`` field, set from the data (a multiclass rule); FLH's
    ``classes`` is its experts' and not a field of its own."""
    return "classes" in getattr(learner, "__dataclass_fields__", {})


def fit_learner(learner, data: SparseData, where: str, keys=CONFIG_KEYS):
    """The learner with ``classes`` set to the data's number of classes where it has that
    field (a multiclass task), checked against the task (``ocolearn.pipeline.check_learner``,
    its messages naming the file's ``keys``)."""
    task = task_of(data)
    if task == "multiclass" and takes_classes(learner) and learner.classes != len(data.labels):
        if learner.classes not in (0, 2):  # 0 and 2: the defaults of binary learners; K is set from the data
            raise ConfigError(
                f"{where}: {keys[0]}classes = {learner.classes}, but the data has {len(data.labels)} labels"
            )
        learner = learner.replace(classes=len(data.labels))
    check_learner(learner, task, data.labels or (), where, keys)
    if data.X is not None:  # (a state larger than memory: refused before it is allocated)
        dense = not isinstance(data.X, Sparse)
        check_step(learner, num_features(data.X), dense, where, option=f"{where}: 'data.dim' or 'data.bits'")
    return learner


def steps_for(experiment: Experiment, X) -> tuple:
    """The ``[pipeline]`` parts for rows like ``X`` (``ocolearn.pipeline.TrainOptions.steps``),
    behind a CSV file's imputation (``ocolearn.pipeline.csv_steps``)."""
    spec, data = experiment.pipeline, experiment.data
    try:
        steps = TrainOptions(intercept=spec.intercept, scale=spec.scale).steps(not isinstance(X, Sparse))
    except ConfigError as e:
        raise ConfigError(f"{experiment.source}: 'pipeline.scale': {e}") from None
    if data.format != "csv":
        return steps
    return (*csv_steps(data.source, data.target), *steps)


def learner_of(experiment: Experiment, data: SparseData, learner=None):
    """The experiment's learner (or ``learner``) fitted to the data's task behind its
    ``[pipeline]`` parts: what the run runs."""
    learner = fit_learner(experiment.learner if learner is None else learner, data, experiment.source)
    return with_pipeline(learner, steps_for(experiment, data.X))


def classify(experiment: Experiment, data: SparseData | None = None):
    """Train the classifier pass by pass on the rows not held out by ``data.test``; returns
    the metrics (mistakes and training error rate of each pass, progressive, before each
    round's update; the test error of the final and, where kept, averaged weights), the
    learner (``classes`` set from the data) and its final state."""
    data = load_examples(experiment) if data is None else data
    opts, spec = experiment.run, experiment.data
    learner = learner_of(experiment, data)
    y = targets(learner, data)
    train, test = split_validation(None, y, spec.test, spec.test_seed, f"{experiment.source}: 'data.test'")
    passes = run_passes(
        learner, row(data.X, train), y[train], opts.shuffle_seed, passes=opts.passes, stop_early=opts.stop_early
    )
    metrics = {
        "name": experiment.name,
        "task": task_of(data),
        "labels": data.labels,
        "train_rows": len(train),
        "test_rows": len(test),
        "passes_run": len(passes.mistakes),
        "mistakes_per_pass": passes.mistakes,
        "training_error_per_pass": [m / len(train) for m in passes.mistakes],
    }
    if len(test):
        held = SparseData(row(data.X, test), data.y[test], data.labels)
        dim = num_features(data.X)
        metrics["test_error"] = error_rate(model_of(learner, passes.state, data.labels, dim), held)
        if hasattr(learner, "averaged"):
            averaged = model_of(learner, passes.state, data.labels, dim, averaged=True)
            metrics["test_error_averaged"] = error_rate(averaged, held)
    return metrics, learner, passes.state


def _dense(X, where: str):
    """Dense features for the regression metrics (comparators need them)."""
    if not isinstance(X, Sparse):
        return X
    if X.shape[0] * X.dim > 50_000_000:
        raise datasets.DataError(
            f"{where}: {X.shape[0]} rows x {X.dim} features is too large for 'ocolearn run' (its comparators are "
            "dense); train it with 'ocolearn train', which streams"
        )
    return X.todense()


def regress(experiment: Experiment, data: SparseData):
    """Run a regression experiment on the rows not held out by ``data.test``: ``run_regression``'s
    metrics and curves, with ``test_mse`` and ``test_mae`` of the final weights on the
    held-out rows; returns ``(metrics, curves, snapshots, learner, state)``."""
    spec = experiment.data
    learner = learner_of(experiment, data)
    X, y = np.asarray(_dense(data.X, spec.source), np.float64), np.asarray(data.y, np.float64)
    train, test = split_validation(None, y, spec.test, spec.test_seed, f"{experiment.source}: 'data.test'")
    metrics, curves, snapshots, state = run_regression(experiment, X[train], y[train], learner)
    if len(test):
        error = scores(model_of(learner, state, [], X.shape[1]), X[test]) - y[test]
        metrics.update(train_rows=len(train), test_rows=len(test))
        metrics.update(test_mse=float(np.mean(error**2)), test_mae=float(np.mean(np.abs(error))))
    return metrics, curves, snapshots, learner, state


def experiment_model(experiment: Experiment, learner, state, data: SparseData):
    """The model file of a run, which ``ocolearn predict``/``test`` read: the pipeline folded
    into raw weights (``ocolearn.pipeline.model_of``); for a table, a CSV file with the feature
    columns (and the target) by name, its ``batch_scale`` folded in too, so the model reads the
    raw columns; for a data file, read as the run read it. None (with the reason) for words
    indexed by a run's own vocabulary."""
    spec = experiment.data
    task = task_of(data)
    labels = data.labels or []
    if spec.format == "text" and spec.bits is None:
        return None, "words were indexed by this run's vocabulary; set data.bits to hash them and get a model file"
    settings = {"task": task, "format": spec.format, "target": spec.target, "zero_based": spec.zero_based}
    if spec.format != "table":
        source = source_of(spec.source, spec.format, bits=spec.bits, target=spec.target)
        settings.update(bits=source.bits, **csv_settings(source))
        return model_of(learner, state, labels, num_features(data.X), settings=settings), ""
    raw = datasets.load_table(spec.source)
    features = table_features(spec, raw)
    settings.update(format="csv", bits=None, columns=features)
    model = model_of(learner, state, labels, num_features(data.X), settings=settings)
    scaled = set() if not spec.batch_scale else set(raw) if spec.batch_scale is True else set(spec.batch_scale)
    scaled = {c for c in scaled if raw[c].dtype.kind in "fi"}

    def centre_and_scale(name):
        return (raw[name].mean(), raw[name].std(ddof=1)) if name in scaled else (0.0, 1.0)

    mean, sd = np.array([centre_and_scale(f) for f in features], np.float64).T
    w_raw = np.asarray(model.w, np.float64) / sd
    offset = np.asarray(model.offset, np.float64) + w_raw @ mean
    if task == "regression" and spec.target in scaled:
        m, s = centre_and_scale(spec.target)
        w_raw, offset = s * w_raw, s * offset - m
    return model._replace(w=w_raw, offset=offset), ""


def run_regression(experiment: Experiment, X=None, y=None, learner=None):
    """Run the experiment (its learner behind its ``[pipeline]``, or ``learner``); returns
    ``(metrics, curves, snapshots, state)`` without writing anything. With preprocessing the
    comparators are the best fixed weights over the rows as the learner predicted on them
    (``Pipeline.fed_rows``: a fixed sequence of losses, since the parts' statistics depend on
    the data alone), so the regret keeps its meaning."""
    if X is None:
        X, y = load_data(experiment)
    if learner is None:
        learner = with_pipeline(experiment.learner, steps_for(experiment, X))
    opts = experiment.run
    check_rounds(learner, None, len(y), opts.passes)  # (first: a count beyond the runner's, whatever the memory)
    rounds = len(y) * opts.passes  # (traced, and each round's row gathered in float64 below)
    what = f"a traced run of {rounds:,} rounds over {np.shape(X)[1]:,} features"
    refuse(estimate(rounds, np.shape(X)[1], trace=True), "passes", what)
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
    rows = index = np.asarray(trace.index)
    raw = np.asarray(X, np.float64)[rows]
    if steps_of(learner)[0]:  # the comparators' rows: as fed, one per round
        X, y, index = learner.fed_rows(np.asarray(X, np.float32), rows), np.asarray(y)[rows], np.arange(len(rows))
    piped, learner = learner, steps_of(learner)[1]
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    prediction = np.asarray(trace.prediction, np.float64)
    target = y[index]
    squared_error = (prediction - target) ** 2
    T = len(target)
    t = np.arange(1, T + 1)
    curves = {
        "row": rows,
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
    affine = np.column_stack([raw, np.ones(len(raw))])
    offline = affine @ np.linalg.lstsq(affine, target, rcond=None)[0]
    metrics["comparator_offline_loss"] = float(np.mean((offline - target) ** 2))
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
        D = projection.diameter(np.asarray(piped.weights(result.state)).size)
        bound = ogd_regret_bound(learner.schedule, D, G, T) if hasattr(learner, "schedule") else None
        metrics["gradient_bound"], metrics["diameter"] = G, D
        if bound is not None:
            curves["regret_bound"] = bound
            metrics["regret_bound"] = float(bound[-1])
            metrics["regret_within_bound"] = bool(np.all(curves["regret"] <= bound))
    metrics["final_w"] = np.asarray(piped.weights(result.state)).tolist()
    metrics["definitions"] = DEFINITIONS
    return metrics, curves, trace.snapshots, result.state


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


@writes_folder("run")  # (the folder is written as a unit: the old one or the new one, never a mix)
def run_experiment(experiment: Experiment, out_dir):
    """Evaluate the experiment and write its outputs (and ``model.npz``, the model file
    ``ocolearn predict``/``test`` read) into ``out_dir``; returns ``(metrics, curves)``."""
    out = Path(out_dir)
    provenance.write(out)  # what produced the folder (ocolearn.provenance)
    data = load_examples(experiment)
    if task_of(data) != "regression":
        metrics, learner, state = classify(experiment, data)
        curves = {}
    else:
        metrics, curves, snapshots, learner, state = regress(experiment, data)
    if not np.all(np.isfinite(np.asarray(learner.weights(state)))):
        raise datasets.DataError(
            f"{experiment.source}: the weights became infinite or NaN; use a smaller step size or a larger "
            "regularization, or scale the features"
        )
    model, why_not = experiment_model(experiment, learner, state, data)
    metrics["model"] = "model.npz" if model is not None else f"none: {why_not}"
    atomic_write(out / "config.toml", tomli_w.dumps(experiment.to_config()))
    if model is not None:
        save(model, out / "model.npz")
    if not curves:
        plots.mistakes_figure({experiment.name: metrics["mistakes_per_pass"]}, out / "mistakes.png")
        write_json(out / "metrics.json", metrics)
        return metrics, {}
    atomic_write(out / "trace.csv", trace_csv(curves))
    if snapshots is not None:
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(snapshots))
        atomic_write(out / "snapshots.npy", buffer.getvalue())
    plots.run_figures(curves, experiment.name, out, experiment.learner.name)
    write_json(out / "metrics.json", metrics)
    return metrics, curves


def split_validation(X, y, fraction: float, seed: int, where: str = "'data.test'"):
    """``(train rows, held-out rows)`` index arrays: a ``fraction`` of the rows of ``y``
    chosen by ``seed``; both keep the stored order. Holding out every row is an error naming ``where``."""
    n = len(y)
    held = np.sort(np.random.default_rng(seed).permutation(n)[: int(round(fraction * n))])
    if len(held) == n:
        raise ConfigError(f"{where} = {fraction} holds out all {n} rows: none is left to learn from")
    return np.setdiff1d(np.arange(n), held), held


def _config_learner(learners, c):
    return jax.tree.map(lambda a: a[c], learners)


@writes_folder("sweep")
def run_sweep(experiment: Experiment, out_dir, *, chunk_size=None):
    """Run the experiment's ``[sweep]`` as one compiled program and write into ``out_dir``:

    - ``sweep.csv``: a row per configuration and seed: the swept values, then for regression
      ``average_loss`` (mean (yhat - y)^2 of the recorded predictions), ``learner_loss``,
      ``regret`` against that configuration's feasible comparator (where one is solved
      exactly), ``mistakes`` (for +-1 targets) and ``validation_loss`` (mean squared error of
      the final weights on the held-out rows, if ``validation`` is set); for classifiers
      ``error_rate`` (progressive mistakes / rounds), ``learner_loss`` (the mean loss charged:
      the hinge for Pegasos) and ``validation_error`` (of the final weights on the held-out rows);
    - ``model.npz``: the model file of the best configuration after its first order, which
      ``ocolearn predict``/``test`` and ``OnlineClassifier.load`` read like any other;
    - ``best.json`` and ``best.toml``: the configuration with the lowest mean score over
      seeds (``sweep.score``; by default ``validation_loss``/``validation_error`` if rows are
      held out, else ``average_loss``/``error_rate``) and its resolved experiment;
    - ``sweep.png`` (a heatmap for two swept keys, curves with bands over seeds for one) and,
      for regression, ``best_regret.png`` (regret curves of the best configurations).

    Returns ``(table, best)``.
    """
    data = load_examples(experiment)
    compute = _sweep_regression if task_of(data) == "regression" else _sweep_classifier
    table, columns, score, bands, model_for = compute(experiment, data, chunk_size)
    axes = experiment.sweep.axes()
    num = len(next(iter(columns.values())))
    num_seeds = len(table[score]) // num
    mean = table[score].reshape(num, num_seeds).mean(axis=1)
    diverged = int(np.count_nonzero(~np.isfinite(mean)))  # (NaN or infinite weights: their rows read nan)
    if diverged == num:
        raise datasets.DataError(f"{experiment.source}: every one of the {num} configurations diverged (NaN scores)")
    best_c = int(np.nanargmin(np.where(np.isfinite(mean), mean, np.nan)))
    best_values = {k: float(v[best_c]) for k, v in columns.items()}
    best = {
        "score": score,
        "mean_score": float(mean[best_c]),
        "std_score": float(table[score].reshape(num, num_seeds)[best_c].std()),
        "values": best_values,
        "configurations": num,
        "seeds": num_seeds,
    }
    if diverged:
        best["diverged"] = f"{diverged} of {num} configurations diverged: their scores in sweep.csv are nan or inf"
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
    atomic_write(out / "best.toml", tomli_w.dumps(apply_values(experiment, best_values).to_config()))
    model, why_not = model_for(best_c)
    if model is not None:
        save(model, out / "model.npz")
    best["model"] = "model.npz: the best configuration, first order" if model is not None else f"none: {why_not}"
    write_json(out / "best.json", best)
    plots.sweep_figure(axes, mean.reshape([len(v) for v in axes.values()]), score, out / "sweep.png")
    if bands is not None:
        curves = bands(np.argsort(mean)[:3])
        if curves:
            plots.regret_bands(curves, out / "best_regret.png")
    return table, best


def _sweep_setup(experiment: Experiment, learner, n: int, X):
    """What both sweeps share: the swept columns, the stacked learners (behind the
    ``[pipeline]`` parts, for rows like ``X``), the seeds, and the (train, held-out) rows."""
    from ocolearn.sweep import LANES, _one, product, stack_values

    spec, opts = experiment.sweep, experiment.run
    train, held = (np.arange(n), np.arange(0))
    if spec.validation > 0:
        train, held = split_validation(
            None, np.arange(n), spec.validation, spec.validation_seed, f"{experiment.source}: 'sweep.validation'"
        )
    columns = product(spec.axes())
    learners = stack_values(learner, {k.removeprefix("learner."): v for k, v in columns.items()})
    learners = with_pipeline(learners, steps_for(experiment, X), stacked=len(next(iter(columns.values()))))
    if spec.seeds:
        seeds = list(range(spec.seeds))
    else:
        seeds = None if opts.shuffle_seed is None else [opts.shuffle_seed]
    # Before the summed sweep: the best configurations' curves, traced over every seed (one chunk of LANES)
    check_rounds(_one(learners), None, len(train), opts.passes)  # (first, as sweep checks: a count beyond the runner's)
    rounds, orders = len(train) * opts.passes, len(seeds or [0])
    what = f"the traced curves of {LANES} configurations x {orders} seeds over {rounds:,} rounds"
    refuse(estimate(rounds, orders=orders, grid=LANES, trace=True), "seeds", what)
    return columns, learners, seeds, train, held


def _models(experiment: Experiment, data: SparseData, learners, result):
    """``model_for(c)``: the model file of configuration c after its first order (seed)."""

    def model_for(c):
        state = jax.tree.map(lambda a: a[c, 0], result.state)
        return experiment_model(experiment, _config_learner(learners, c), state, data)

    return model_for


def _sweep_classifier(experiment: Experiment, data: SparseData, chunk_size):
    """The sweep table of a classifier: error rate and loss per configuration and seed, and
    the error of the final weights on the held-out rows."""
    from ocolearn.sweep import sweep

    learner = fit_learner(experiment.learner, data, experiment.source)
    y = targets(learner, data)
    columns, learners, seeds, train, held = _sweep_setup(experiment, learner, len(y), data.X)
    passes = experiment.run.passes
    result = sweep(learners, row(data.X, train), y[train], seeds, passes=passes, chunk_size=chunk_size)
    num, num_seeds = result.trace.loss.shape
    T = len(train) * passes
    table = {k: np.repeat(v, num_seeds) for k, v in columns.items()}
    table["seed"] = np.tile([-1] if seeds is None else seeds, num)  # -1: the stored order
    table["error_rate"] = (np.asarray(result.trace.mistakes, np.float64) / T).ravel()
    table["learner_loss"] = (np.asarray(result.trace.loss, np.float64) / T).ravel()
    if len(held):
        X_held, y_held = row(data.X, held), jnp.asarray(y[held])

        def held_error(one, state):
            scores = jax.vmap(one.predict, (None, 0))(state, X_held)
            return jnp.mean(jax.vmap(is_mistake)(scores, y_held))  # a non-finite score is a mistake

        errors = jax.vmap(jax.vmap(held_error, (None, 0)))(learners, result.state)
        table["validation_error"] = np.asarray(errors, np.float64).ravel()
    score = experiment.sweep.score or ("validation_error" if len(held) else "error_rate")
    if score == "hinge":
        if loss_name(learner) != "hinge":
            raise datasets.DataError(f"{experiment.source}: sweep.score 'hinge' needs a learner charged the hinge")
        score = "learner_loss"
    if score not in table:
        raise datasets.DataError(f"{experiment.source}: sweep.score {score!r} is not a classifier's score")
    return table, columns, score, None, _models(experiment, data, learners, result)


def _sweep_regression(experiment: Experiment, data: SparseData, chunk_size):
    """The sweep table of a regression learner (see ``run_sweep``), and a function giving
    the regret curves of chosen configurations."""
    from ocolearn.sweep import sweep

    opts = experiment.run
    X, y = np.asarray(_dense(data.X, experiment.data.source), np.float64), np.asarray(data.y, np.float64)
    learner = fit_learner(experiment.learner, data, experiment.source)
    columns, learners, seeds, train, held = _sweep_setup(experiment, learner, len(y), X)
    Xt, yt = X[train], y[train]
    run_opts = dict(passes=opts.passes, predict_after_update=opts.predict_after_update)
    X32, y32 = np.asarray(Xt, np.float32), np.asarray(yt, np.float32)
    result = sweep(learners, X32, y32, seeds, chunk_size=chunk_size, **run_opts)
    T = len(yt) * opts.passes
    num, num_seeds = result.trace.loss.shape
    table = {k: np.repeat(v, num_seeds) for k, v in columns.items()}
    table["seed"] = np.tile([-1] if seeds is None else seeds, num)  # -1: the stored order
    table["average_loss"] = (np.asarray(result.trace.squared_error, np.float64) / T).ravel()
    table["learner_loss"] = (np.asarray(result.trace.loss, np.float64) / T).ravel()
    solved = {}  # (projection's and parts' numbers[, seed]) -> (comparator weights or None, rows, targets, total)

    def comparator(c, s):
        """Configuration c's learner, its feasible comparator, the rows as the learner was fed them
        (``Pipeline.fed_rows``) with their targets, the comparator's loss summed over the rounds,
        and whether the rows are in seed s's round order. Behind parts with running statistics the
        rows fed depend on the order: they are fed in that order, and the comparator is solved per
        seed. Otherwise the rows are fed in their stored order (a round's row is ``trace.index``)
        and solved once per projection and preprocessing, its total ``passes`` times one pass's."""
        piped = _config_learner(learners, c)
        steps, one = steps_of(piped)
        ordered = bool(steps) and bool(jax.tree.leaves(piped.init(1).steps))
        seed = None if seeds is None else int(seeds[s])
        numbers = jax.tree.leaves((getattr(one, "projection", None), steps))
        key = (*(np.asarray(leaf).item() for leaf in numbers), seed if ordered else None)
        if key not in solved:
            key_s = None if seed is None else jax.random.key(seed)
            order = np.asarray(round_order(len(yt), opts.passes, key_s)) if ordered else np.arange(len(yt))
            rows, targets = piped.fed_rows(X32, order) if steps else Xt[order], yt[order]
            u = best_fixed_weights(one.loss, one.projection, rows, targets) if hasattr(one, "projection") else None
            total = np.nan if u is None else round_losses(one.loss, u, rows, targets, np.arange(len(order))).sum()
            solved[key] = (u, rows, targets, total * (1 if ordered else opts.passes))
        return one, *solved[key], ordered

    regret = [
        [np.asarray(result.trace.loss[c, s], np.float64) - comparator(c, s)[4] for s in range(num_seeds)]
        for c in range(num)
    ]
    table["regret"] = np.ravel(regret)
    if set(np.unique(y)) <= {-1.0, 1.0}:
        table["mistakes"] = np.asarray(result.trace.mistakes).ravel()
    if len(held):
        X_held, y_held = jnp.asarray(X[held], jnp.float32), jnp.asarray(y[held], jnp.float32)

        def held_loss(one, state):
            return jnp.mean((jax.vmap(one.predict, (None, 0))(state, X_held) - y_held) ** 2)

        losses = jax.vmap(jax.vmap(held_loss, (None, 0)))(learners, result.state)
        table["validation_loss"] = np.asarray(losses, np.float64).ravel()
    score = experiment.sweep.score or ("validation_loss" if len(held) else "average_loss")
    if score not in table:
        raise datasets.DataError(f"{experiment.source}: sweep.score {score!r} is not a regression score")

    def bands(top):
        """Regret curves of configurations ``top``, one band over seeds each."""
        traced = sweep(jax.tree.map(lambda a: a[top], learners), X32, y32, seeds, trace=True, **run_opts)
        out = []
        for j, c in enumerate(top):
            if comparator(c, 0)[1] is None:
                continue
            curves = []
            for s in range(num_seeds):
                one, u, rows, targets, _, ordered = comparator(c, s)
                rounds = np.arange(len(targets)) if ordered else traced.trace.index[j, s]
                curves.append(regret_curve(traced.trace.loss[j, s], round_losses(one.loss, u, rows, targets, rounds)))
            label = ", ".join(f"{k.split('.')[-1]}={columns[k][c]:.3g}" for k in columns)
            out.append((label, np.array(curves)))
        return out

    return table, columns, score, bands, _models(experiment, data, learners, result)


def apply_values(experiment: Experiment, values: dict) -> Experiment:
    """The experiment with learner numbers set by dotted key (``"learner.schedule.eta"``),
    without its sweep."""
    from ocolearn.sweep import leaf_paths

    paths = leaf_paths(experiment.learner)
    leaves, tree = jax.tree.flatten(experiment.learner)
    changed = {k.removeprefix("learner."): v for k, v in values.items()}
    leaves = [changed.get(p, leaf) for p, leaf in zip(paths, leaves, strict=True)]
    return dataclasses.replace(experiment, learner=jax.tree.unflatten(tree, leaves), sweep=None)
