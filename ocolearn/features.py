"""Feature vectors, dense or sparse, behind the three operations a linear learner needs.

- dense: an array ``x`` of shape ``(d,)`` (a batch: ``(n, d)``);
- sparse: ``Sparse(idx, val, dim)``, ``idx`` int32 and ``val`` float32 of shape ``(k,)`` (a
  batch: ``(n, k)``), padded with value 0. The indices of one example must be distinct apart
  from padding (the readers merge repeated features); padding may use any valid index.

The operations, written once for both (weights ``w`` are ``(d,)``, or ``(K, d)`` for K classes):

- ``dot(w, x)``: ``w . x`` (a scalar, or ``(K,)`` scores);
- ``add_scaled(w, a, x)``: ``w + a x`` (``a`` a scalar, or ``(K,)`` for one scale per class);
- ``sqnorm(x)``: ``||x||^2``;

and, for multiplicative learners (Winnow), ``multiply_scaled(w, base, a, x)``: ``w * base^(a x)``.
Learners with per-feature state (AdaGrad, NAG, the confidence-weighted family) work on the
features present in x: ``local(v, x)`` reads a per-feature array there, ``values(x)`` gives
x's values there, and ``put(v, x, new)`` writes it back (for dense x, "there" is everywhere).

The three operations of the Clojure MIRA write-up; a sparse step costs O(k), not O(d).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ocolearn.parts import register


@dataclasses.dataclass(frozen=True)
class Sparse:
    """Padded sparse features: ``x[idx[j]] = val[j]``, in a space of ``dim`` features."""

    idx: jax.Array
    val: jax.Array
    dim: int

    @property
    def shape(self):
        return (*self.idx.shape[:-1], self.dim)

    def __len__(self):
        return self.idx.shape[0]

    def todense(self):
        """The dense array of the same shape (for small problems and tests)."""
        idx, val = np.asarray(self.idx), np.asarray(self.val, np.float32)
        out = np.zeros((*idx.shape[:-1], self.dim), np.float32)
        # Each example's position (one axis per batch axis); one example (k,) has none: shape (0, 1), not -1.
        rows = np.indices(idx.shape[:-1]).reshape(idx.ndim - 1, np.prod(idx.shape[:-1], dtype=int))
        np.add.at(out, (*[np.repeat(r, idx.shape[-1]) for r in rows], idx.reshape(-1)), val.reshape(-1))
        return out


register(Sparse, data_fields=["idx", "val"], meta_fields=["dim"])


def num_features(x) -> int:
    """d, the dimension of the feature space of ``x`` (dense or sparse, one example or a batch)."""
    return x.dim if isinstance(x, Sparse) else x.shape[-1]


def dot(w, x):
    """``w . x``: a scalar for ``w`` of shape ``(d,)``, scores ``(K,)`` for ``(K, d)``.

    On sparse x the k products are summed pairwise (``pairwise_sum``), not in a chain."""
    if isinstance(x, Sparse):
        return pairwise_sum(jnp.take(w, x.idx, axis=-1) * x.val)
    return w @ x


def pairwise_sum(p):
    """The sum over the last axis of ``p``, added in pairs level by level (a zero joins an odd
    level) down to four, then reduced: about ``log2 k`` dependent additions instead of the
    k - 1 of a running sum, which XLA keeps in order. In a sparse step the sum ``w . x`` lies
    on the path from one round's update to the next round's, so its latency is the round's
    (``benchmarks/bench_sparse_steps.py``). The last additions are a reduction rather than
    slices, which XLA would copy into each of the step's k writes."""
    while p.shape[-1] > 4:
        if p.shape[-1] % 2:
            p = jnp.concatenate([p, jnp.zeros_like(p[..., :1])], axis=-1)
        p = p[..., 0::2] + p[..., 1::2]
    return jnp.sum(p, axis=-1)


def add_scaled(w, a, x):
    """``w + a x``; for ``w`` of shape ``(K, d)``, ``a`` may be a ``(K,)`` vector of scales."""
    a = jnp.asarray(a, w.dtype)
    if w.ndim == 2:
        a = jnp.broadcast_to(a, w.shape[:1])[:, None]
    if isinstance(x, Sparse):
        a = _once(a)
        return _update_columns(w, x, lambda column, v: column + a * v)
    return w + a * x


def multiply_scaled(w, base, a, x):
    """``w_i * base^(a x_i)`` for every feature i: the multiplicative step of Winnow, O(k) on
    sparse x (features absent from x keep their weight)."""
    if isinstance(x, Sparse):
        a = _once(a)
        return _update_columns(w, x, lambda column, v: column * base ** (a * v))
    return w * base ** (a * x)


def dense(x):
    """One example as a dense ``(d,)`` vector (for learners whose step is O(d) anyway)."""
    if isinstance(x, Sparse):
        return jnp.zeros((x.dim,), x.val.dtype).at[x.idx].add(x.val)
    return x


def values(x):
    """x's values at the features it holds: ``x`` itself (dense) or its stored values (sparse)."""
    return x.val if isinstance(x, Sparse) else x


def local(v, x):
    """A per-feature array ``v`` (``(d,)`` or ``(K, d)``) at the features of x (``values(x)``'s
    positions)."""
    return jnp.take(v, x.idx, axis=-1) if isinstance(x, Sparse) else v


def largest_seen(s, x):
    """``max(s_i, |x_i|)`` at the features of x (laid out as ``local(s, x)``): the per-feature
    scale of Vowpal Wabbit's normalized updates, which ``NAG`` folds into its step and the
    ``normalize`` preprocessing part divides by."""
    return jnp.maximum(local(s, x), jnp.abs(values(x)))


def is_last(x):
    """Which of ``values(x)``'s positions hold the last feature (index d - 1): where an
    ``Intercept`` step puts its constant."""
    if isinstance(x, Sparse):
        return x.idx == x.dim - 1
    return jnp.arange(x.shape[-1]) == x.shape[-1] - 1


def last_feature(x):
    """The value of x's last feature (the intercept's constant; 0 where a sparse x lacks it)."""
    if isinstance(x, Sparse):
        return jnp.sum(jnp.where(is_last(x), x.val, 0.0))
    return x[..., -1]


def put(v, x, new):
    """``v`` with ``new`` (as ``local(v, x)`` is laid out) written at the features of x. Sparse
    entries with value 0 (padding) write nothing, so padding never overwrites a real feature."""
    if not isinstance(x, Sparse):
        return new.astype(v.dtype)
    new = _once(jnp.moveaxis(jnp.asarray(new, v.dtype), -1, 0))  # (k, ...)

    def write(column, value, j):
        return jnp.where(value != 0, new[j][..., None], column)

    return _update_columns(v, x, write, with_index=True)


def table_rows(table, x):
    """The rows of a per-feature table ``(d, m)`` (m numbers kept per feature, interleaved) at
    x's features: the whole table for dense x, ``(k, m)`` gathered in one go for sparse x."""
    return jnp.take(table, x.idx, axis=0) if isinstance(x, Sparse) else table


def table_column(table, x, column):
    """Column ``column`` (one number per feature) of a per-feature table ``(d, m)`` at x's
    features, laid out as ``values(x)``. On sparse x a gather of its own, not a slice of
    ``table_rows``'s rows: rows that feed a second computation besides ``table_dot`` are stored
    and read back, which made AdaGrad's round 1.7 times the floor's instead of 1.2
    (``benchmarks/bench_sparse_steps.py``)."""
    return table[x.idx, column] if isinstance(x, Sparse) else table[:, column]


def table_dot(rows, x, columns):
    """``w . x`` where ``w`` is ``columns`` (a slice) of the table whose rows at x's features are
    ``rows`` (``table_rows``): a scalar for one column, one score per column for several. On
    sparse x summed pairwise, as ``dot``."""
    w = rows[:, columns]
    if isinstance(x, Sparse):
        return pairwise_sum(jnp.moveaxis(w * (x.val[:, None] if w.ndim == 2 else x.val), 0, -1))
    return jnp.moveaxis(w, 0, -1) @ x


def update_table(table, x, change, coefficients):
    """``table[i] = change(table[i], x_i, coefficients)`` for the features i of x, on a
    per-feature table ``(d, m)`` whose m numbers (a learner's weights and their companions,
    interleaved) are read and written together: one slice of m numbers per non-zero on sparse x
    (``_update_columns``'s way: one read and one write of adjacent numbers serve all m), all
    rows at once on dense x. A row comes as ``(1, m)`` (sparse) or the table ``(d, m)`` (dense),
    ``x_i`` as ``(1, 1)`` or ``(d, 1)``, so that it broadcasts over a row; ``coefficients`` (the
    step's numbers) are computed once, not in each write. ``change`` must leave a row unchanged
    where x_i = 0 (padding)."""
    coefficients = _once(coefficients)
    if not isinstance(x, Sparse):
        return change(table, x[:, None], coefficients).astype(table.dtype)
    return _update_rows(table, x, lambda row, j: change(row, x.val[j].reshape(1, 1), coefficients))


def add_to_rows(table, x, deltas):
    """``table[i] += delta_i`` for the features i of x, on a per-feature table ``(d, m)``, the
    deltas given as m columns (each laid out as ``values(x)``: ``(k,)`` for sparse x, ``(d,)``
    for dense x). For a step whose rows' changes cost more than a multiply-add (AdaGrad's square
    root and division per feature): computed for all of x's features at once (from
    ``table_column``), they are only added by the k writes, where ``update_table`` would compute
    each row's change in its own write. Columns rather than one ``(k, m)`` array: a column
    ending in a division is computed by one loop of vector instructions, where the loop that
    filled an interleaved array was scalar code with a branch around each division. A sparse
    entry with value 0 (padding) must have zero deltas."""
    deltas = [jnp.asarray(column, table.dtype) for column in deltas]
    if not isinstance(x, Sparse):
        return table + jnp.stack(deltas, axis=1)
    return _update_rows(table, x, lambda row, j: row + jnp.stack([column[j] for column in deltas])[None])


def _update_rows(table, x: Sparse, change):
    """``table[i] = change(table[i], j)`` for each stored ``(i, v)`` of x, the j-th, in order: a
    ``(1, m)`` slice of the 2-D table per non-zero. (Not slices of a reshaped flat view: the
    reshape of the scan's carried table became a copy of the whole table every round.)"""
    k, width = x.idx.shape[-1], table.shape[1]
    zero = jnp.zeros((), jnp.int32)

    def one(j, table):
        start = (x.idx[j], zero)
        changed = change(jax.lax.dynamic_slice(table, start, (1, width)), j)
        return jax.lax.dynamic_update_slice(table, changed.astype(table.dtype), start)

    return jax.lax.fori_loop(0, k, one, table, unroll=_unroll(k))


UNROLL_UP_TO = 64  # non-zeros per example written as straight-line code (more: a loop)
_rolled = contextvars.ContextVar("rolled", default=False)


@contextlib.contextmanager
def rolled_writes(rolled=True):
    """Trace the sparse writes (``put``, ``add_scaled``, ``update_table``...) of the steps traced
    inside as a loop of one write, not written out per non-zero; a sweep's program does
    (``benchmarks/bench_sparse_sweep.py``). Under a sweep's ``vmap`` over seeds, each seed playing
    the rows in its own order, a row's indices differ along the batch and each write is a scatter:
    written out 50 times a round, XLA:CPU compiled them in 2 to 22 s and ran them 5 to 9 times
    slower than a loop of one. Without seeds a loop compiles 4 to 6 times sooner and runs at 0.8
    (COCOB, five tables) to 1.1 times the speed.
    A single run keeps its writes written out: straight-line code in its one-kernel loop
    (``benchmarks/bench_sparse_steps.py``). The same operations in the same order.
    Read at trace time: a jitted function that traces steps must take it as a static argument
    (``run.run`` passes ``writes_rolled()`` to its program)."""
    token = _rolled.set(rolled)
    try:
        yield
    finally:
        _rolled.reset(token)


def writes_rolled() -> bool:
    """Whether steps traced now write sparse rows in a loop (``rolled_writes``)."""
    return _rolled.get()


def _unroll(k):
    """``fori_loop``'s ``unroll`` for a sparse write of k non-zeros."""
    return 1 if writes_rolled() else (True if k <= UNROLL_UP_TO else 8)


def _update_columns(w, x: Sparse, change, with_index=False):
    """``w[..., i] = change(w[..., i], v)`` for each stored ``(i, v)`` of ``x``, in order.

    One ``dynamic_update_slice`` per non-zero rather than a scatter: inside a ``scan`` on
    XLA:CPU a scatter cannot join the one-kernel loop and ran 4 to 6 times slower
    (``benchmarks/bench_classifiers.py``). Sequential, so repeated indices are also right.
    """
    k = x.idx.shape[-1]
    lead = w.shape[:-1]
    zero = jnp.zeros((), jnp.int32)

    def one(j, w):
        start = (*([zero] * len(lead)), x.idx[j])
        column = jax.lax.dynamic_slice(w, start, (*lead, 1))
        changed = change(column, x.val[j], j) if with_index else change(column, x.val[j])
        return jax.lax.dynamic_update_slice(w, changed.astype(w.dtype), start)

    return jax.lax.fori_loop(0, k, one, w, unroll=_unroll(k))


def _once(a):
    """``a`` (a step's coefficient or new values), as a reduction XLA computes once. XLA fuses cheap
    elementwise work into every consumer, so without this each of a sparse step's k writes
    recomputes the coefficient (for MIRA: the class scores' comparisons and the cost lookup).
    Exact: ``a + 0`` (a zero keeps its value, its sign aside)."""
    return jnp.sum(jnp.stack([a, jnp.zeros_like(a)]), axis=0)


def norm(v):
    """``||v||_2`` computed relative to ``max |v|``, so that it cannot overflow (or underflow)
    where ``v . v`` would (float32: entries beyond about 1e19)."""
    m = jnp.max(jnp.abs(v))
    safe = jnp.where(m > 0, m, 1.0)
    return m * jnp.sqrt(jnp.sum((v / safe) ** 2))


def sqnorm(x):
    """``||x||^2`` (on sparse x summed pairwise, as ``dot``)."""
    if isinstance(x, Sparse):
        return pairwise_sum(x.val * x.val)
    return jnp.sum(x * x, axis=-1)


UNITS = (2.0**-70, 1.0, 2.0**70)  # ||x||^2 of any float32 x is in float32's range at one of them (scaled_sqnorm)


def power_of_two(n):
    """``2^n`` in float32 for an integer ``n`` in [-126, 127], exactly: written from its exponent bits."""
    return jax.lax.bitcast_convert_type((jnp.asarray(n, jnp.int32) + 127) << 23, jnp.float32)


def floor_log2(v):
    """``floor(log2 v)`` of a positive normal float32 ``v``, read from its exponent bits (-127 for
    0 and subnormal numbers)."""
    return ((jax.lax.bitcast_convert_type(jnp.asarray(v, jnp.float32), jnp.int32) >> 23) & 0xFF) - 127


def scaled_sqnorm(x):
    """``(||2^e x||^2, e)`` for one example x, with e the integer that puts ``||2^e x||`` in
    [1, 2) (clipped to [-126, 126], where ``2^e`` and ``2^-e`` are normal float32 numbers; for
    x = 0, ``(0, 126)``).

    Scaling by a power of two changes no bits, so ``||x||^2 = ||2^e x||^2 / 4^e`` to float32's
    rounding also where ``||x||^2`` itself is beyond float32 (features of 1e20 overflow it, of
    1e-30 flush it to 0), and ``2^e x_i`` are x's values, exactly, at a scale where a step's
    coefficient and its products with them stay in range. The sum of squares is taken at the
    three ``UNITS`` at once, of ``x``, ``2^-70 x`` and ``2^70 x``: x's when it lies in
    [2^-60, 2^100], else the one below (above), which holds it (each square is below 2^116: any x
    of fewer than 4096 values) and where each square float32 flushes to 0 is below 2^-66 of it;
    its exponent gives e. So no pass for ``max |x_i|`` precedes the sum, nor a division per
    feature follows it: on a sparse step those took 0.7x of the floor round's time
    (``benchmarks/bench_sparse_steps.py``)."""
    v = values(x)
    if v.shape[-1] == 1:  # XLA rewrites one value's (v u)^2 as v^2 u^2, which overflows or flushes to 0: a 0 joins
        v = jnp.concatenate([v, jnp.zeros_like(v)])
    squares = jnp.square(v[None, :] * jnp.asarray(UNITS, v.dtype)[:, None])
    low, mid, high = pairwise_sum(squares) if isinstance(x, Sparse) else jnp.sum(squares, axis=-1)
    big, small = mid > 2.0**100, mid < 2.0**-60  # an overflow (inf) is big
    s = jnp.where(big, low, jnp.where(small, high, mid))
    unit = jnp.where(big, -70, jnp.where(small, 70, 0))  # s = ||2^unit x||^2
    e = jnp.clip(unit - (floor_log2(s) >> 1), -126, 126)  # s in [2^f, 2^(f + 1)), f = floor_log2(s)
    return s * power_of_two(2 * (e - unit)), e


def row(batch, i):
    """Example ``i`` of a dense or sparse batch. A NumPy-backed batch indexed by a traced ``i``
    (under ``vmap`` or ``jit``) is read as a JAX array, since NumPy cannot index with a tracer."""
    traced = isinstance(i, jax.core.Tracer)
    return jax.tree.map(lambda a: (jnp.asarray(a) if traced else a)[i], batch)
