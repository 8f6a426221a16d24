"""Train a classifier on a sparse text file, save it, and predict or test with it.

A model file is an ``.npz`` holding the weights as array ``w`` (``(d,)`` binary, ``(K, d)``
multiclass), the label names as ``labels``, and the learner and feature settings as JSON in
``settings``, so that prediction needs nothing else. Files are written atomically.

Labels: with a multiclass learner (``classes``) the sorted distinct labels of the training
file become classes 0..K-1 (``classes`` is set from the data when not given); with a binary
one the file must hold exactly two labels, the smaller read as -1 and the larger as +1.
"""

from __future__ import annotations

import io
import json
from typing import NamedTuple

import numpy as np

from ocolearn.config import _build_part, apply_overrides
from ocolearn.data import DataError
from ocolearn.data.sparse_text import SparseData, class_indices, read_mira, read_svmlight, read_text_folders
from ocolearn.features import Sparse
from ocolearn.io import atomic_write
from ocolearn.learners import Learner
from ocolearn.parts import fields_of
from ocolearn.run import run_passes


class Model(NamedTuple):
    w: np.ndarray  # (d,) or (K, d)
    labels: list[str]
    settings: dict  # {"learner": config table, "format", "dim", "bits", "averaged"}
    offset: np.ndarray = np.zeros(())  # subtracted from w . x (Winnow's threshold), () or (K,)


def read_data(path, fmt: str, *, dim=None, bits=18, labels=None) -> SparseData:
    """A svmlight or MIRA-format file, or a folder of text files per label (``fmt`` "text",
    words hashed into ``2**bits`` buckets), as ``SparseData``; labels are always names."""
    if fmt == "mira":
        return read_mira(path, bits=bits, labels=labels)
    if fmt == "text":
        return read_text_folders(path, bits=bits, labels=labels)[0]
    if fmt != "svmlight":
        raise DataError(f"{path}: unknown format {fmt!r}; expected 'svmlight', 'mira' or 'text'")
    data = read_svmlight(path, dim=dim)
    y, classes = class_indices(path, [f"{v:g}" for v in data.y], data.lines, labels, order=float)
    return SparseData(data.X, y, classes, data.lines)


def build_learner(name: str, overrides=(), num_labels: int = 2) -> Learner:
    """A learner from its registered name and ``key=value`` overrides of its fields; a learner
    with ``classes`` gets the data's number of labels when there are more than two."""
    table = apply_overrides({"kind": name}, overrides)
    cls = Learner.registry.get(name)
    if cls is not None and "classes" in fields_of(cls) and "classes" not in table and num_labels > 2:
        table["classes"] = num_labels
    return _build_part(Learner, table, "learner", "--learner/--set")


def targets(learner: Learner, data: SparseData):
    """Class indices for multiclass learners, -1/+1 for binary ones."""
    if getattr(learner, "classes", 0):
        return data.y
    if len(data.labels) != 2:
        raise DataError(f"a binary learner needs exactly two labels, the data has {len(data.labels)}: {data.labels}")
    return np.where(data.y == 1, 1.0, -1.0).astype(np.float32)


def train(learner: Learner, data: SparseData, *, passes=1, seed=None, averaged=False, stop_early=False, settings=None):
    """Run ``learner`` over the data for up to ``passes`` passes (``stop_early``: until a pass
    without mistakes); the model holds its final (or averaged) weights, the learner's score
    for an all-zero example, negated, as ``offset``, and the mistakes of each pass in its
    settings."""
    result = run_passes(learner, data.X, targets(learner, data), seed, passes=passes, stop_early=stop_early)
    w = learner.averaged(result.state) if averaged else learner.weights(result.state)
    zero = Sparse(np.zeros((1,), np.int32), np.zeros((1,), np.float32), data.X.dim)
    offset = -np.asarray(learner.predict(result.state, zero), np.float32)
    settings = {
        **(settings or {}),
        "learner": learner.to_config(),
        "averaged": averaged,
        "dim": data.X.dim,
        "mistakes_per_pass": result.mistakes,
    }
    return Model(np.asarray(w, np.float32), list(data.labels), settings, offset)


def save(model: Model, path) -> None:
    """Write the model file atomically."""
    buffer = io.BytesIO()
    settings = json.dumps(model.settings)
    np.savez(buffer, w=model.w, labels=np.asarray(model.labels), settings=settings, offset=model.offset)
    atomic_write(path, buffer.getvalue())


def load(path) -> Model:
    """Read a model file; a file that is not one is an error naming it."""
    try:
        with np.load(path) as f:
            return Model(f["w"], [str(v) for v in f["labels"]], json.loads(str(f["settings"])), f["offset"])
    except (OSError, KeyError, ValueError) as e:
        raise DataError(f"{path}: not an ocolearn model file (an .npz with w, labels, settings, offset): {e}") from None


def scores(model: Model, X: Sparse) -> np.ndarray:
    """``w . x - offset`` for each row: ``(n,)`` binary, ``(n, K)`` multiclass."""
    idx, val = np.asarray(X.idx), np.asarray(X.val, np.float64)
    w = np.asarray(model.w, np.float64)
    if w.ndim == 1:
        return np.einsum("nk,nk->n", val, w[idx]) - model.offset
    return np.einsum("nk,cnk->nc", val, w[:, idx]) - model.offset


def predict(model: Model, X: Sparse) -> list[str]:
    """The predicted label name of each row."""
    s = scores(model, X)
    if model.w.ndim == 1:
        return [model.labels[1] if v > 0 else model.labels[0] for v in s]
    return [model.labels[k] for k in np.argmax(s, axis=1)]


def data_for(model: Model, path) -> SparseData:
    """Read ``path`` with the model's feature settings and label names."""
    s = model.settings
    return read_data(path, s["format"], dim=s["dim"], bits=s.get("bits", 18), labels=model.labels)


def error_rate(model: Model, data: SparseData) -> float:
    predicted = predict(model, data.X)
    return float(np.mean([p != data.labels[y] for p, y in zip(predicted, data.y, strict=True)]))


__all__ = [
    "Model",
    "build_learner",
    "data_for",
    "error_rate",
    "load",
    "predict",
    "read_data",
    "save",
    "targets",
    "train",
]
