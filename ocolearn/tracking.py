"""Optional experiment tracking: ``--track mlflow`` logs a run, a sweep or a training to MLflow.

``start(kind, experiment, run_name)`` is called before the work (so a missing ``mlflow`` fails
at once, and the run's start time is the work's); ``Tracker.log(...)`` records it afterwards as
one MLflow run in the MLflow experiment named ``experiment``:

- ``params``: the resolved config, flattened to dotted keys (``learner.schedule.eta``);
- ``metrics``: every number in ``metrics`` (nested keys dotted), a list of numbers as a metric
  history (``mistakes_per_pass``: one step per pass); keys ending in ``_w`` (weights) are left
  out;
- ``series``: per-round curves as metric histories, step = round, thinned evenly to at most
  ``MAX_STEPS`` points (the last round always kept);
- ``table``: a sweep's table (a row per configuration and seed): one nested run per distinct
  value of the ``table_params`` columns (a configuration), its other columns averaged over
  that configuration's rows (its seeds) as metrics, with their standard deviation as
  ``NAME_std``. One run per row would be thousands of runs, which the file store writes at
  tens of milliseconds each; the rows themselves are in the ``sweep.csv`` artifact;
- ``folder``: its figures and small outputs (``*.png``, ``*.json``, ``*.toml``, ``sweep.csv``, a
  study's leaderboard)
  as artifacts,
  and ``files``: more files to attach (a model file).

The store is ``MLFLOW_TRACKING_URI`` if set, else the folder ``mlruns/`` under the working
directory. MLflow 3 keeps such a file store only on request, so ocolearn sets
``MLFLOW_ALLOW_FILE_STORE=true`` for it (the ``mlflow-skinny`` extra has no database backend).
The store is asked once before the work: one that cannot be used (a server that does not
answer, a scheme MLflow does not know, a database it cannot open) is a ``TrackingError``.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import numpy as np

from ocolearn.config import ConfigError

MAX_STEPS = 2000
BATCH = 1000  # MLflow's most metrics in one log_batch call
ARTIFACTS = ("*.png", "*.json", "*.toml", "sweep.csv", "leaderboard.csv", "leaderboard.md")


class TrackingError(ConfigError):
    """Tracking was asked for but cannot be done (``mlflow`` is not installed)."""


def start(kind: str | None, experiment: str, run_name: str) -> Tracker:
    """A tracker for ``kind`` (``"mlflow"``, or None for none: its ``log`` does nothing)."""
    if kind is None:
        return Tracker(None, experiment, run_name)
    if kind != "mlflow":
        raise TrackingError(f"--track {kind!r}: the tracker known is 'mlflow'")
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise TrackingError("--track mlflow needs MLflow: pip install 'ocolearn[mlflow]'") from None
    uri = os.environ.get("MLFLOW_TRACKING_URI") or Path("mlruns").resolve().as_uri()
    if uri.startswith("file:"):
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        where = f"the MLflow store {uri}"
    else:  # a server, asked with few retries (MLflow's default retries one that does not answer for minutes)
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "10")
        where = f"the MLflow server {uri}" if uri.startswith(("http:", "https:")) else f"the MLflow store {uri}"
    # Asked once, before the work: a store that cannot be used (an unknown scheme, a database
    # MLflow cannot open, a server that does not answer) fails now, not after the work is done.
    try:
        client = MlflowClient(uri)
        client.search_experiments(max_results=1)
    except Exception as e:  # (MlflowException, UnsupportedModelRegistryStoreURIException, ConnectionError, ...)
        raise TrackingError(f"--track mlflow: {where} (MLFLOW_TRACKING_URI) cannot be used: {_reason(e)}") from None
    return Tracker(client, experiment, run_name, where)


def _reason(e: Exception) -> str:
    """The first line of an exception's words (at most 200 characters), or its class's name."""
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__


def flatten(table, prefix="") -> dict:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``."""
    out = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _number(value) -> float | None:
    if isinstance(value, bool | int | float | np.number) and math.isfinite(float(value)):
        return float(value)
    return None


def _steps(n: int) -> np.ndarray:
    """At most ``MAX_STEPS`` indices into ``n`` rounds, evenly spread, the last one included."""
    if n <= MAX_STEPS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, MAX_STEPS).round().astype(int))


def _groups(table: dict, keys: list[str]):
    """``(values of keys, {column: mean})`` for each distinct combination of the ``keys``
    columns of ``table`` (in order of first appearance), the other numeric columns averaged
    over its rows, with ``column_std`` beside each where it has several rows."""
    if not table:
        return []
    columns = {k: np.asarray(v) for k, v in table.items()}
    rest = [k for k in columns if k not in keys and columns[k].dtype.kind in "biuf"]
    combos = np.stack([columns[k].astype(np.float64) for k in keys], axis=1)
    _, first, which = np.unique(combos, axis=0, return_index=True, return_inverse=True)
    out = []
    for g in np.argsort(first):
        rows = which.ravel() == g
        numbers = {}
        for k in rest:
            values = columns[k][rows].astype(np.float64)
            numbers[k] = float(values.mean())
            if values.size > 1:
                numbers[f"{k}_std"] = float(values.std())
        out.append(({k: columns[k][first[g]].item() for k in keys}, numbers))
    return out


class Tracker:
    def __init__(self, client, experiment: str, run_name: str, where: str = "the MLflow store"):
        self.client, self.experiment, self.run_name, self.where = client, experiment, run_name, where
        self.started = int(time.time() * 1000)

    def log(self, **record):
        """Record the finished work as an MLflow run (see the module docstring; ``_log``);
        returns its id, or None without a tracker. A store that fails now (full, made
        read-only, a server gone) is a ``TrackingError`` that says the outputs are written."""
        if self.client is None:
            return None
        try:
            return self._log(**record)
        except Exception as e:  # (MlflowException, OSError, requests' errors: all mean the run was not logged)
            raise TrackingError(
                f"--track mlflow: {self.where} (MLFLOW_TRACKING_URI) failed to log the run, whose outputs are "
                f"written: {_reason(e)}"
            ) from None

    def _log(self, *, params, metrics, series=None, table=None, table_params=(), folder=None, files=()):
        from mlflow.entities import Metric

        found = self.client.get_experiment_by_name(self.experiment)
        experiment_id = found.experiment_id if found else self.client.create_experiment(self.experiment)
        now = int(time.time() * 1000)
        history = []
        for key, value in flatten(metrics).items():
            if key.endswith("_w"):
                continue
            values = value if isinstance(value, list | tuple) else [value]
            for step, v in enumerate(values, start=1 if isinstance(value, list | tuple) else 0):
                if (number := _number(v)) is not None:
                    history.append(Metric(key, number, now, step))
        for key, curve in (series or {}).items():
            curve = np.asarray(curve, np.float64)
            if curve.ndim == 1:
                history += [Metric(key, float(curve[i]), now, int(i) + 1) for i in _steps(curve.size)]
        run_id = self._run(experiment_id, self.run_name, flatten(params), history)
        for child_params, numbers in _groups(table or {}, list(table_params)):
            child = [Metric(k, v, now, 0) for k, v in numbers.items() if _number(v) is not None]
            name = ", ".join(f"{k.split('.')[-1]}={v:.6g}" for k, v in child_params.items())
            self._run(experiment_id, name, child_params, child, parent=run_id)
        if folder is not None:
            for pattern in ARTIFACTS:
                for path in sorted(Path(folder).glob(pattern)):
                    self.client.log_artifact(run_id, str(path))
        for path in files:
            self.client.log_artifact(run_id, str(path))
        self.client.set_terminated(run_id, end_time=int(time.time() * 1000))
        return run_id

    def _run(self, experiment_id, name, params, metrics, parent=None) -> str:
        """A finished MLflow run (nested under ``parent``) holding ``params`` and ``metrics``."""
        from mlflow.entities import Param

        tags = {"mlflow.parentRunId": parent} if parent else {}
        run = self.client.create_run(experiment_id, start_time=self.started, tags=tags, run_name=name)
        run_id = run.info.run_id
        params = [Param(k, str(v)) for k, v in params.items()]
        for i in range(0, max(len(params), 1), 100):  # MLflow's most params in one call
            self.client.log_batch(run_id, params=params[i : i + 100])
        for i in range(0, len(metrics), BATCH):
            self.client.log_batch(run_id, metrics=metrics[i : i + BATCH])
        if parent:
            self.client.set_terminated(run_id, end_time=int(time.time() * 1000))
        return run_id
