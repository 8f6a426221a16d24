"""The model file: what every door writes and reads, in one place.

A model file is an ``.npz`` with

- ``w``: the weights of the raw features, ``(d,)`` for regression and binary tasks, ``(K, d)``
  for K classes; ``offset``: subtracted from ``w . x``, ``()`` or ``(K,)``; float64 (float32 in
  files written before: they load and score as they were). Together they are the
  whole pipeline folded into one linear model (``ocolearn.learners.pipeline.raw_linear``): the intercept,
  the online scaling with its final statistics, and the learner's own constant (Winnow's
  threshold), so ``score(x) = w . x - offset`` for a raw row x;
- ``labels``: the class names in class order (none for regression);
- ``settings``: JSON: the task, the learner and the pipeline's parts (``pipeline``, with their
  final statistics in ``pipeline_state``) as config tables, and how to read a file as the model
  was trained (format, dim, bits, zero_based, target, columns), with what training reported;
- ``pipeline_state.N``: the statistics' lists of numbers (a scale per feature: 2^18 of them for
  hashed text), each an array in place of its JSON list (``{"npz": "pipeline_state.N"}`` there):
  written and read bit for bit, and without a JSON number per feature. Files written before
  hold the lists in the JSON; they load the same.

Every door (``train``, ``run``, ``sweep``'s best configuration, the estimators) writes it with
``save`` and reads it with ``load``, which checks it before anything uses it; every door scores
with ``scores``, so a model predicts the same, to the bit, through each.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import NamedTuple

import numpy as np

from ocolearn.data import DataError, regular_file
from ocolearn.io import atomic_write, json_text
from ocolearn.learners.base import positive
from ocolearn.names import FORMATS

TASKS = ("regression", "binary", "multiclass")


class Model(NamedTuple):
    w: np.ndarray  # (d,) or (K, d): the raw features' weights
    labels: list[str]  # class names (none for regression)
    settings: dict  # {"task", "learner", "pipeline", "format", "dim", "bits", ...}
    offset: np.ndarray = np.zeros(())  # subtracted from w . x: () or (K,)

    @property
    def task(self) -> str:
        """regression, binary or multiclass (model files from before tasks: by their labels)."""
        if self.settings.get("task"):
            return self.settings["task"]
        return "regression" if not self.labels else "binary" if len(self.labels) == 2 else "multiclass"


STATE = "pipeline_state"  # the settings' key whose lists of numbers are stored as arrays


def save(model: Model, path) -> None:
    """Write the model file atomically (the pipeline's statistics' lists of numbers as arrays)."""
    buffer = io.BytesIO()
    arrays: dict[str, np.ndarray] = {}
    settings = dict(model.settings)
    if STATE in settings:
        settings[STATE] = _arrays_out(settings[STATE], arrays)
    settings = json_text(settings, indent=None)
    labels = np.asarray(model.labels, str)
    np.savez(buffer, w=model.w, labels=labels, settings=settings, offset=model.offset, **arrays)
    atomic_write(path, buffer.getvalue())


def _arrays_out(obj, arrays: dict):
    """``obj`` with each list of numbers of one type (float: float64, int: int64) replaced by
    ``{"npz": KEY}``, its array put in ``arrays`` under KEY; what ``_arrays_in`` undoes."""
    if isinstance(obj, dict):
        return {key: _arrays_out(value, arrays) for key, value in obj.items()}
    if not isinstance(obj, list | tuple):
        return obj
    kinds = set(map(type, obj))
    if kinds in ({float}, {int}) and (kinds == {float} or all(abs(v) < 1 << 63 for v in obj)):
        key = f"{STATE}.{len(arrays)}"
        arrays[key] = np.asarray(obj, np.float64 if kinds == {float} else np.int64)
        return {"npz": key}
    return [_arrays_out(value, arrays) for value in obj]


def _arrays_in(obj, arrays: dict):
    """``obj`` with each ``{"npz": KEY}`` replaced by the list of ``arrays[KEY]``."""
    if isinstance(obj, dict):
        if list(obj) == ["npz"] and obj["npz"] in arrays:
            return arrays[obj["npz"]].tolist()
        return {key: _arrays_in(value, arrays) for key, value in obj.items()}
    if isinstance(obj, list):
        return [_arrays_in(value, arrays) for value in obj]
    return obj


ARRAYS = ("w", "labels", "settings", "offset")  # what every model file holds, beside the statistics' arrays


def load(path) -> Model:
    """Read and check a model file; a file that is not one, or a model that cannot be right
    (``check``), is a ``DataError`` naming it; so is a named pipe or a device (``regular_file``)."""
    regular_file(path, "model file")
    what = f"an .npz with {', '.join(ARRAYS)}"
    try:
        with np.load(path, allow_pickle=False) as f:
            if missing := [key for key in ARRAYS if key not in f.files]:
                raise DataError(f"{path}: not an ocolearn model file ({what}): it has no {', '.join(missing)}")
            keys = (*ARRAYS, *(k for k in f.files if k.startswith(f"{STATE}.")))
            for key in keys:
                _fits_memory(f, key, path)
            arrays = {key: f[key] for key in keys}
        settings = json.loads(str(arrays["settings"]))
        if isinstance(settings, dict) and STATE in settings:
            settings[STATE] = _arrays_in(settings[STATE], arrays)
    except DataError:
        raise
    except FileNotFoundError:
        raise DataError(f"{path}: no such model file") from None
    except IsADirectoryError:
        raise DataError(f"{path}: a folder, not a model file") from None
    except (OSError, KeyError, ValueError, EOFError, RecursionError, zipfile.BadZipFile) as e:
        reason = "" if "pickle" in str(e) else f": {getattr(e, 'strerror', None) or str(e) or type(e).__name__}"
        reason = ": settings nested too deep to read" if isinstance(e, RecursionError) else reason
        raise DataError(f"{path}: not an ocolearn model file ({what}){reason}") from None
    model = Model(arrays["w"], [str(v) for v in np.atleast_1d(arrays["labels"])], settings, arrays["offset"])
    check(model, path)
    return model


def _fits_memory(npz, key: str, path) -> None:
    """Refuse an array of the model file that would not fit in memory, from its header, before
    it is read (a crafted header claims what it likes: 2e9 float64 is 15 GiB); a member of
    the archive not named ``KEY.npy`` is left to NumPy's own checks."""
    from ocolearn.sizes import estimate, gib, memory

    if f"{key}.npy" not in npz.zip.namelist():
        return
    with npz.zip.open(f"{key}.npy") as f:
        version = np.lib.format.read_magic(f)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(f)
    need = estimate(int(np.prod(shape, dtype=object)), itemsize=dtype.itemsize, features=1).bytes
    if need > memory():
        raise DataError(
            f"{path}: not a usable ocolearn model: its {key} of shape {shape} ({dtype}) would take {gib(need)}, "
            f"more than the {gib(memory())} of memory this process may use"
        )


def check(model: Model, path="the model") -> None:
    """A ``DataError`` naming the file and the field where a model cannot be used: settings
    that are not a table, an unknown task or format, a dimension that is not a positive
    integer, weights of the wrong rank or width for the task, labels, dimension and bits, or
    weights and offset that are not finite numbers."""

    def bad(why):
        return DataError(f"{path}: not a usable ocolearn model: {why}")

    s = model.settings
    if not isinstance(s, dict):
        raise bad(f"settings must be a table, got {type(s).__name__}")
    task = model.task
    if task not in TASKS:
        raise bad(f"task {task!r} is not one of {', '.join(TASKS)}")
    if s.get("format", "svmlight") not in FORMATS:
        raise bad(f"format {s.get('format')!r} is not one of {', '.join(FORMATS)}")
    dim, bits = s.get("dim"), s.get("bits")
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise bad(f"dim must be a positive integer, got {dim!r}")
    if bits is not None and (isinstance(bits, bool) or not isinstance(bits, int) or not 1 <= bits <= 30):
        raise bad(f"bits must be an integer in 1..30, got {bits!r}")
    w, offset = np.asarray(model.w), np.asarray(model.offset)
    if w.dtype.kind != "f" or offset.dtype.kind != "f":
        raise bad("w and offset must be arrays of floats")
    ranks = {"regression": (1,), "binary": (1, 2), "multiclass": (2,)}[task]  # binary: one-vs-rest's 2 rows too
    if w.ndim not in ranks:
        raise bad(f"a {task} model has weights of rank {' or '.join(map(str, ranks))}, got shape {w.shape}")
    if w.shape[-1] != dim:
        raise bad(f"w has {w.shape[-1]} columns for dim {dim}")
    labels = len(model.labels)
    if task == "binary" and labels != 2:
        raise bad(f"a binary model names 2 labels, got {labels}")
    if w.ndim == 2 and w.shape[0] != labels:
        raise bad(f"w has {w.shape[0]} rows for {labels} labels")
    if offset.shape not in ((), w.shape[:-1]):
        raise bad(f"offset has shape {offset.shape} for weights of shape {w.shape}")
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(offset))):
        raise bad("its weights are not all finite (the training diverged)")
    if s.get("format") == "csv" and s.get("table"):
        from ocolearn.data.csvfile import Table

        try:
            Table.of_settings(s)
        except DataError as e:
            raise bad(str(e)) from None


def scores(model: Model, X, rows=2048) -> np.ndarray:
    """``w . x - offset`` for each row (sparse or dense): ``(n,)`` binary, ``(n, K)`` multiclass,
    in float64; sparse rows ``rows`` at a time, so the gathered weights stay in cache."""
    from ocolearn.features import Sparse

    w = np.asarray(model.w, np.float64)
    if not isinstance(X, Sparse):
        return np.asarray(X, np.float64) @ w.T - model.offset
    idx, val = np.asarray(X.idx), np.asarray(X.val)
    out = np.empty((len(idx), *w.shape[:-1]))
    for a in range(0, len(idx), rows):
        part = val[a : a + rows].astype(np.float64)
        if w.ndim == 1:
            out[a : a + rows] = np.einsum("nk,nk->n", part, np.take(w, idx[a : a + rows]))
        else:
            out[a : a + rows] = np.einsum("nk,cnk->nc", part, w[:, idx[a : a + rows]])
    return out - model.offset


def classes_of(s: np.ndarray) -> np.ndarray:
    """Class indices predicted from scores (a binary score is class 1 where ``positive``: the
    learners' own rule)."""
    return positive(s).astype(np.int32) if s.ndim == 1 else np.argmax(s, axis=1).astype(np.int32)


def predict(model: Model, X) -> list:
    """The predicted label name of each row (the predicted value, for regression)."""
    s = scores(model, X)
    if model.task == "regression":
        return s.tolist()
    return [model.labels[k] for k in classes_of(s)]
