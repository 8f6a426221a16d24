"""Checks at the boundary: what a run is given (before any compute, or row by row in its loop), and what it produced.

- ``check_count``: a count option (passes, chunk rows) is an integer in range.
- ``check_data``: the examples fit the learner: as many targets as rows, every feature value
  a finite float32, sparse indices inside the feature space, and targets of the kind the
  learner's loss declares (``Loss.targets``: real numbers, labels -1/+1, or classes 0..K-1).
  Where X's values are float32 already, its rows (values and sparse indices) are checked by the
  runner's loop instead (``in_loop``, ``fold_row``, ``check_rows_after``), where the row is in
  cache: for 10^6 rows at d = 100 the pass over X before the run took 31 ms (a run takes 95),
  the fold in the loop 1 ms; at d = 10, 5 ms and nothing measurable (of 33); for 200,000 sparse
  rows of 50 values, 11 ms and none (of 26 to 36; each measured in processes of its own).
- ``check_float32``: parsed numbers fit float32; readers call it with each value's line.
- ``check_rounds``: a learner whose state holds a fixed number of slots (FLH's experts) has
  room for the rounds it is about to run, else a ``ConfigError`` naming the setting; and no
  run counts more rounds than its int32 round counter holds (``MAX_ROUNDS``).
- ``check_finite``: after a run (each chunk or pass of a stream), the state holds no NaN or
  infinity and no prediction or loss was one; else a ``NonFiniteError`` naming the round.

Each check is vectorized over concrete arrays (NumPy on the host, jax on its device) and passes
traced values (inside ``jit``/``vmap``), so the runner's compiled rounds carry no checks.
Hyperparameter ranges are declared with the parts themselves (``ocolearn.parts.hyper``).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ocolearn.data import DataError
from ocolearn.features import Sparse
from ocolearn.parts import ConfigError

FLOAT32_MAX = float(np.finfo(np.float32).max)


class NonFiniteError(ValueError):
    """A run diverged: its weights, predictions or losses became NaN or infinite."""


def check_count(value, key: str, least: int = 1) -> None:
    """``value`` is an integer ``>= least``, else a ``ConfigError`` naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ConfigError(f"{key} must be an integer >= {least}, got {value!r}", key)


MAX_ROUNDS = 2**31 - 1  # rounds and rows are counted in int32 inside the compiled run


def _first(ok):
    """The index of the first False of a boolean array (NumPy or jax), or None if all hold:
    one reduction on the array's device, and a copy to the host only on failure."""
    if bool(ok.all()):
        return None
    ok = np.asarray(ok)
    return np.unravel_index(np.argmin(ok), ok.shape)


def _fits_float32(values):
    """Which values float32 holds: finite, and within +-FLOAT32_MAX if wider than float32."""
    if np.issubdtype(values.dtype, np.floating) and values.dtype.itemsize > 4:
        return abs(values) <= FLOAT32_MAX  # False for NaN and +-inf too
    return (jnp if isinstance(values, jax.Array) else np).isfinite(values)  # 10x faster than the above


def _describe(value) -> str:
    value = float(value)
    if not np.isfinite(value):
        return f"{value} is not a finite number"
    return f"{value:g} is beyond float32's range (+-{FLOAT32_MAX:.7g})"


def check_float32(values, source: str, lines=None, indptr=None) -> None:
    """Raise ``DataError`` at the first of ``values`` that float32 cannot hold (NaN, infinite,
    or beyond +-3.4028235e38), naming ``source`` and its line: ``lines`` holds each row's
    line number; the rows are ``values``' first axis, or for CSR entries the spans of
    ``indptr``. Vectorized: one pass over the values unless one is bad.

    >>> check_float32(np.array([[1.0, 2.0], [3.0, 1e300]]), "data.csv", lines=np.array([2, 3]))
    Traceback (most recent call last):
    ...
    ocolearn.data.DataError: data.csv, line 3: 1e+300 is beyond float32's range (+-3.402823e+38)
    """
    values = np.asarray(values)
    bad = _first(_fits_float32(values))
    if bad is None:
        return
    row = bad[0] if indptr is None else int(np.searchsorted(indptr, bad[0], side="right")) - 1
    where = source if lines is None else f"{source}, line {int(np.asarray(lines)[row])}"
    raise DataError(f"{where}: {_describe(values[bad])}")


def check_rounds(learner, state, rows: int, passes: int = 1, where: str = "learner") -> None:
    """Raise ``ConfigError`` if ``learner``, or a part inside it, cannot run ``passes`` over
    ``rows`` examples from ``state`` (None: a fresh one): a part with a ``max_rounds`` (FLH: its
    slots of experts hold ``2^levels - 2`` rounds) names the setting ``rounds_key`` that bounds
    it; a run past round ``MAX_ROUNDS``, which the compiled run's int32 round counter cannot
    count (more rounds in one call, or a state carried from earlier calls that has counted
    most of them), names ``passes``. A traced round counter counts as a fresh state."""
    if passes * rows > MAX_ROUNDS:  # (before any learner's own limit: every run counts rounds in int32)
        raise ConfigError(
            f"passes: {_passes(passes)} over {rows} rows are {passes * rows} rounds, more than {MAX_ROUNDS}", "passes"
        )
    first = 1 if state is None or _is_traced(state.t) else int(np.max(np.asarray(state.t)))
    last = first + rows * passes - 1
    if first < 1:  # (every learner starts at round 1)
        raise ConfigError(
            f"passes: the state's round counter is {first}: it counted past {MAX_ROUNDS} and wrapped", "passes"
        )
    if last > MAX_ROUNDS:  # a state carried from call to call (chunks, partial_fit): its counter would wrap
        raise ConfigError(
            f"passes: {_passes(passes)} over {rows} rows from a state at round {first} run to round {last}, "
            f"more than {MAX_ROUNDS}",
            "passes",
        )
    for key, part in _parts(learner, where):
        limit = getattr(part, "max_rounds", None)  # (0 is a limit: FLH's levels = 1 holds no round)
        if limit is not None and last > limit:
            setting = f"{key}.{part.rounds_key}" if key else part.rounds_key
            raise ConfigError.keyed(
                f"{{key}} = {getattr(part, part.rounds_key)} lets {part.name} run {limit} rounds, "
                f"and this run goes to round {last}; raise {{key}}",
                setting,
            )


def _passes(count: int) -> str:
    return "1 pass" if count == 1 else f"{count} passes"


def _parts(part, key):
    """``(key, part)`` for ``part`` and every part among its fields, depth first. A pipeline's
    learner keeps the pipeline's key: configs and ``--set`` name its settings ``learner.X``."""
    if getattr(part, "name", None) == "pipeline":
        yield from _parts(part.learner, key)
        return
    yield key, part
    for name in getattr(part, "__dataclass_fields__", {}):
        value = getattr(part, name)
        if hasattr(value, "__dataclass_fields__"):
            yield from _parts(value, f"{key}.{name}" if key else name)


def _is_traced(tree) -> bool:
    return any(isinstance(a, jax.core.Tracer) for a in jax.tree.leaves(tree))


def _on_device(tree) -> bool:
    """Whether any array of ``tree`` lives on an accelerator (not NumPy, not jax on CPU)."""
    return any(
        isinstance(a, jax.Array) and any(d.platform != "cpu" for d in a.devices()) for a in jax.tree.leaves(tree)
    )


def _rows(X) -> int:
    return X.idx.shape[0] if isinstance(X, Sparse) else X.shape[0]


def check_data(learner, X, y, rows: bool = True) -> None:
    """Raise ``DataError`` if ``(X, y)`` cannot be run by ``learner``: a different number of
    rows and targets, a feature value float32 cannot hold, a sparse index outside
    ``0..dim-1``, or a target that is not what the learner's loss takes (``Loss.targets``).
    ``rows=False`` leaves X's values and sparse indices out (a run that checks them in its loop,
    ``in_loop``).
    Traced data is not checked."""
    if _is_traced((X, y)):
        return
    X, y = (X if hasattr(X, "shape") else np.asarray(X)), (y if hasattr(y, "shape") else np.asarray(y))
    if (X.idx.ndim if isinstance(X, Sparse) else np.ndim(X)) != 2 or np.ndim(y) != 1:
        raise DataError(
            f"X must be a matrix of rows (n, d) and y a vector (n,), got shapes {np.shape(X)} and {np.shape(y)}"
        )
    if _rows(X) != len(y):
        raise DataError(f"X has {_rows(X)} rows but y has {len(y)} targets")
    kind, classes = learner.loss.targets, getattr(learner, "classes", 0)
    if kind == "class" and not np.issubdtype(y.dtype, np.integer):
        raise DataError(f"y holds {y.dtype} numbers; classes are integers 0..{classes - 1} for {learner.name}")
    values, idx, dim = (X.val, X.idx, X.dim) if isinstance(X, Sparse) else (X, None, 0)
    if not rows:
        values, idx = None, None
    if _on_device((values, idx, y)):  # one fused pass there, no copy to the host
        if bool(_all_hold(values, idx, dim, y, kind, classes)):
            return
    values, idx, y = (None if a is None else np.asarray(a) for a in (values, idx, y))  # no copy on CPU
    conditions = _conditions(values, idx, dim, y, kind, classes)
    if all(bool(ok.all()) for _, ok in conditions):
        return
    # Something is wrong: find the first bad entry, in the order of the conditions.
    name, bad = next((name, bad) for name, ok in conditions if (bad := _first(ok)))
    row = bad[0]
    if name == "value":
        raise DataError(f"X row {row}: {_describe(values[bad])}")
    if name == "index":
        raise DataError(f"X row {row}: feature index {idx[bad]} is outside 0..{dim - 1}")
    if name == "target":
        raise DataError(f"y row {row}: {_describe(y[bad])}")
    if name == "sign":
        label, loss = f"label {float(y[bad]):g}", learner.loss.name
        raise DataError(f"y row {row}: {label} is not -1 or +1, which {learner.name} with the {loss} loss takes")
    raise DataError(f"y row {row}: class {y[bad]} is not one of 0..{classes - 1} (classes = {classes})")


def _conditions(values, idx, dim, y, kind, classes):
    """``(name, which entries hold)`` for each condition on the data, as NumPy or jax arrays:
    feature values (unless None) and targets within float32, sparse indices in ``0..dim-1``, targets of
    the ``kind`` the loss takes."""
    out = [] if values is None else [("value", _fits_float32(values))]
    if idx is not None:
        out.append(("index", (idx >= 0) & (idx < dim)))
    out.append(("target", _fits_float32(y)))
    if kind == "sign":
        out.append(("sign", (y == 1) | (y == -1)))
    elif kind == "class":
        out.append(("class", (y >= 0) & (y < classes)))
    return out


@partial(jax.jit, static_argnums=(2, 4, 5))
def _all_hold(values, idx, dim, y, kind, classes):
    """Whether every condition holds: one fused pass over the data on its device."""
    return jnp.all(jnp.stack([jnp.all(ok) for _, ok in _conditions(values, idx, dim, y, kind, classes)]))


def in_loop(X) -> bool:
    """Whether a run checks X's rows in its loop rather than before it: where X's values are
    float32 already (or narrower). There each round reads its row anyway and folds it into a
    running check (``rows_unseen``, ``fold_row``, ``rows_held``); a run whose rows did not all
    hold reports a NaN total loss (``run._run``), which ``check_rows_after`` turns into the
    ``DataError`` that ``check_data`` gives. Wider floats, and sparse indices wider than 32 bits,
    are checked before: their conversion to float32 could overflow, and to int32 wrap."""
    values = X.val if isinstance(X, Sparse) else X
    dtype = np.dtype(getattr(values, "dtype", np.float64))  # nested lists become float64
    if isinstance(X, Sparse) and np.dtype(getattr(X.idx, "dtype", np.int64)).itemsize > 4:
        return False  # (int64 indices become int32 in the program: 2^32 + 1 would read as feature 1)
    return not (np.issubdtype(dtype, np.floating) and dtype.itemsize > 4)


def rows_unseen(X):
    """The start of a run's check of X's rows, traced: zeros the width of one row (and for sparse
    rows, the largest index seen, unsigned)."""
    if isinstance(X, Sparse):
        return jnp.zeros(X.val.shape[1:], X.val.dtype), jnp.zeros(X.idx.shape[1:], jnp.uint32)
    return jnp.zeros(X.shape[1:], X.dtype)


def fold_row(seen, x):
    """``seen`` with row ``x`` folded in: ``seen + 0 x`` stays 0 unless a value of x is NaN or
    infinite (0 inf is NaN), and never overflows; a sparse row's indices join a running maximum,
    where a negative index is a large unsigned one. Elementwise, with no reduction per round:
    at d = 10 the reduction a round spent on its own row cost 2.2 ms of 35 per 10^6 rows (CPU
    time, 35.0 against 32.8), this nothing measurable (each measured in processes of its own)."""
    if isinstance(x, Sparse):
        values, indices = seen
        return values + x.val * 0, jnp.maximum(indices, x.idx.astype(jnp.uint32))
    return seen + x * 0


def rows_held(seen, X):
    """Whether every row folded into ``seen`` is what ``check_data`` lets through: finite values,
    and sparse indices in ``0..dim-1``."""
    if isinstance(X, Sparse):
        values, indices = seen
        return jnp.all(jnp.isfinite(values)) & jnp.all(indices < X.dim)
    return jnp.all(jnp.isfinite(seen))


def check_rows_after(learner, X, y, trace) -> None:
    """After a run that checked X's rows in its loop (``in_loop``): if it reported a NaN or
    infinite loss (in ``trace``, or a ``Summary``'s sum; of one run or of a sweep's), check the
    data now, so that a bad row is the ``DataError`` naming it that ``check_data`` gives; a run
    that diverged on good data is left to ``check_finite``. One reduction over the losses, or a
    look at one number per run. (A ``Summary``'s ``nonfinite`` is not looked at: rows that did
    not all hold make its loss NaN (``run._run``), so a finite loss with ``nonfinite`` set is a
    run diverged on rows that held, where ``check_data`` would find nothing.)"""
    if _is_traced((X, y, trace)):
        return
    # NumPy (no copy on CPU): an eager jnp reduction would compile a program for every length.
    if not bool(np.isfinite(np.asarray(trace.loss)).all()):
        check_data(learner, X, y)


def first_nonfinite(result) -> int:
    """The first round (the learner's round ``t``) whose prediction or loss was NaN or
    infinite in ``result`` (a ``Result`` of ``run``, with a trace or a summary, or the
    ``Passes`` of ``run_passes``), 0 if none."""
    trace = getattr(result, "trace", result)
    if hasattr(trace, "nonfinite"):
        return int(trace.nonfinite)
    loss, prediction = np.asarray(trace.loss), np.asarray(trace.prediction)
    ok = np.isfinite(loss) & np.isfinite(prediction).reshape(len(loss), -1).all(axis=1)
    bad = _first(ok)
    return 0 if bad is None else int(result.state.t) - len(loss) + int(bad[0])


def check_finite(result, where: str = "") -> None:
    """Raise ``NonFiniteError`` if the run of ``result`` diverged: a NaN or infinity in its
    state, or a prediction or loss that was one (``first_nonfinite``). One reduction per state
    leaf; the streaming and command-line code calls it after each chunk or pass."""
    round_ = first_nonfinite(result)
    floats = [a for a in jax.tree.leaves(result.state) if jnp.issubdtype(jnp.result_type(a), jnp.floating)]
    if not round_ and all(np.isfinite(np.asarray(a)).all() for a in floats):  # (NumPy: no program to compile)
        return
    when = f"predictions from round {round_}" if round_ else f"weights after round {int(result.state.t) - 1}"
    raise NonFiniteError(
        f"{where + ': ' if where else ''}the run diverged: NaN or infinite {when}; "
        "try scaled features (--scale normalize, or standardize for dense rows), or a smaller rate (eta) "
        "or a larger lam where the learner has one"
    )
