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
from ocolearn.data.sparse_text import (
    DEFAULT_BITS,
    SparseData,
    class_indices,
    csv_header,
    csv_lines,
    label_names,
    read_bytes,
    read_mira,
    read_svmlight,
    read_text_folders,
)
from ocolearn.features import Sparse
from ocolearn.io import atomic_write
from ocolearn.learners import Learner
from ocolearn.learners.base import positive
from ocolearn.parts import fields_of
from ocolearn.run import run_passes


class Model(NamedTuple):
    w: np.ndarray  # (d,) or (K, d)
    labels: list[str]
    settings: dict  # {"learner": config table, "format", "dim", "bits", "averaged"}
    offset: np.ndarray = np.zeros(())  # subtracted from w . x (Winnow's threshold), () or (K,)


def read_data(path, fmt: str, *, dim=None, bits=None, labels=None, zero_based="auto", target="") -> SparseData:
    """A svmlight or MIRA-format file, or a folder of text files per label (``fmt`` "text"),
    as ``SparseData``; labels are always names. ``bits`` hashes MIRA feature names and words
    (default 18) and svmlight indices (if given) into ``2**bits`` buckets."""
    if fmt == "mira":
        return read_mira(path, bits=bits or DEFAULT_BITS, labels=labels)
    if fmt == "text":
        return read_text_folders(path, bits=bits or DEFAULT_BITS, labels=labels)[0]
    if fmt == "csv":
        block = csv_lines(read_bytes(path), 1, path, csv_header(path), target)
        X = block.values.astype(np.float32).reshape(len(block.labels), -1)
        y, classes = class_indices(path, block.labels.tolist(), block.lines, labels)
        return SparseData(X, y, classes, block.lines)
    if fmt != "svmlight":
        raise DataError(f"{path}: unknown format {fmt!r}; expected 'svmlight', 'mira', 'csv' or 'text'")
    data = read_svmlight(path, dim=dim, zero_based=zero_based, bits=bits)
    y, classes = class_indices(path, label_names(data.y).tolist(), data.lines, labels, order=float)
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
    return target_map(learner, data.labels)(data.y)


def train(learner: Learner, data: SparseData, *, passes=1, seed=None, averaged=False, stop_early=False, settings=None):
    """Run ``learner`` over the data for up to ``passes`` passes (``stop_early``: until a pass
    without mistakes); see ``model_of``."""
    result = run_passes(learner, data.X, targets(learner, data), seed, passes=passes, stop_early=stop_early)
    settings = {**(settings or {}), "mistakes_per_pass": result.mistakes}
    return model_of(learner, result.state, list(data.labels), data.X.dim, averaged, settings)


def target_map(learner: Learner, labels):
    """Class indices -> the learner's targets: as they are for a multiclass learner, -1/+1
    for a binary one (which needs exactly two labels)."""
    if getattr(learner, "classes", 0):
        return lambda y: y
    if len(labels) != 2:
        raise DataError(f"a binary learner needs exactly two labels, the data has {len(labels)}: {list(labels)}")
    return lambda y: np.where(y == 1, 1.0, -1.0).astype(np.float32)


def model_of(learner: Learner, state, labels, dim: int, averaged=False, settings=None) -> Model:
    """The model of a trained state: its final (or averaged) weights, the learner's score for
    an all-zero example, negated, as ``offset``, and the learner in the settings."""
    w = learner.averaged(state) if averaged else learner.weights(state)
    zero = Sparse(np.zeros((1,), np.int32), np.zeros((1,), np.float32), dim)
    offset = -np.asarray(learner.predict(state, zero), np.float32)
    settings = {**(settings or {}), "learner": learner.to_config(), "averaged": averaged, "dim": dim}
    return Model(np.asarray(w, np.float32), list(labels), settings, offset)


def train_file(
    name: str,
    overrides,
    path,
    fmt: str = "svmlight",
    *,
    bits=None,
    dim=None,
    labels=None,
    zero_based=False,
    skip_bad=False,
    chunk_rows=65536,
    passes=1,
    seed=None,
    averaged=False,
    stop_early=False,
    checkpoint=None,
    checkpoint_every=0,
    resume=False,
    progress=None,
    target="",
) -> Model:
    """Train the named learner on an svmlight or MIRA-format file streamed in chunks
    (``ocolearn.streaming.run_stream``: constant memory, checkpoints, resume). Without
    ``labels`` (and, for svmlight without hashing, ``dim``) one first pass over the file
    finds them; ``bits`` hashes MIRA names (default 18) or svmlight indices. A CSV file has a
    header line; its ``target`` column holds the labels, every other column is a feature."""
    from ocolearn.data.stream import Source, scan
    from ocolearn.streaming import run_stream

    if fmt not in ("svmlight", "mira", "csv"):
        raise DataError(f"{path}: streaming reads 'svmlight', 'mira' or 'csv' files, not {fmt!r}")
    if fmt == "csv" and not target:
        raise DataError(f"{path}: a CSV file needs --target, the column of labels")
    bits = (bits or DEFAULT_BITS) if fmt == "mira" else bits
    source = Source(str(path), fmt, dim or 0, tuple(labels or ()), zero_based, bits, skip_bad, target=target)
    if bits is not None:
        source = source._replace(dim=1 << bits)
    if not labels or not source.dim or fmt == "csv":
        found, found_dim, width = scan(source)
        source = source._replace(labels=tuple(labels or found), dim=source.dim or found_dim, width=width)
    learner = build_learner(name, overrides, len(source.labels))
    result = run_stream(
        learner,
        source,
        targets=target_map(learner, source.labels),
        passes=passes,
        chunk_rows=chunk_rows,
        seed=seed,
        checkpoint=checkpoint,
        checkpoint_every=checkpoint_every,
        resume=resume,
        stop_early=stop_early,
        progress=progress,
    )
    settings = {
        "format": fmt,
        "bits": bits,
        "zero_based": zero_based,
        "target": target,
        "mistakes_per_pass": result.mistakes_per_pass,
        "skipped_lines": result.skipped,
        "rounds": result.rounds,
        "average_loss": float(result.summary.loss) / max(result.rounds, 1),
    }
    return model_of(learner, result.state, source.labels, source.dim, averaged, settings)


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


def scores(model: Model, X) -> np.ndarray:
    """``w . x - offset`` for each row (sparse or dense): ``(n,)`` binary, ``(n, K)`` multiclass."""
    w = np.asarray(model.w, np.float64)
    if not isinstance(X, Sparse):
        return np.asarray(X, np.float64) @ w.T - model.offset
    idx, val = np.asarray(X.idx), np.asarray(X.val, np.float64)
    if w.ndim == 1:
        return np.einsum("nk,nk->n", val, w[idx]) - model.offset
    return np.einsum("nk,cnk->nc", val, w[:, idx]) - model.offset


def predict(model: Model, X: Sparse) -> list[str]:
    """The predicted label name of each row."""
    s = scores(model, X)
    if model.w.ndim == 1:
        return [model.labels[1] if positive(v) else model.labels[0] for v in s]
    return [model.labels[k] for k in np.argmax(s, axis=1)]


def data_for(model: Model, path) -> SparseData:
    """Read ``path`` with the model's feature settings and label names."""
    s = model.settings
    zero_based = s.get("zero_based", "auto")
    options = dict(dim=s["dim"], bits=s.get("bits"), labels=model.labels, zero_based=zero_based)
    return read_data(path, s["format"], target=s.get("target", ""), **options)


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
    "train_file",
]
