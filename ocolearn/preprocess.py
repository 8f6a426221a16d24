"""Preprocessing parts: an intercept and online scaling, composed in front of any learner.

A preprocessing part has a learner's shape: ``init(dim) -> state``, and pure functions of a
row ``x`` (dense ``(d,)`` or ``Sparse``) and that state, numbers as leaves (sweepable and
vmappable like any part), registered by name for configs and model files:

- ``transform(state, x) -> x'``: the row as the learner sees it, learning nothing;
- ``observe(state, x) -> state``: the running statistics updated with the row;
- ``step(state, x) -> (state, x')``: both, in the order every door uses (``observe`` first);
- ``out_dim(dim)``: the width of ``x'``;
- ``fold(state, w) -> (w_in, b)``: every part here is affine in x, ``x' = A x + c``, so weights
  ``w`` on ``x'`` score a row as the weights ``A^T w`` on ``x`` plus the constant ``w . c``: a
  model file stores the folded linear model of the raw features (``ocolearn.pipeline.raw_linear``).
  The fold is NumPy on the host and returns float64 whatever the dtypes of ``state`` and ``w``
  (float32 converts exactly): ``w . x - w . mean`` cancels where a feature's mean is large next
  to its spread, which float32 cannot afford.

**When statistics move.** One rule for every part, river's (``Pipeline.predict_one`` then
``learn_one``, ``preprocessing.StandardScaler``): the prediction of round t scales x_t with the
statistics of the rows before it; the update then adds x_t to them and the learner learns from
x_t scaled with the statistics that include it. The prediction charged in progressive
validation is so a function of x_1..x_t and y_1..y_{t-1} only, and the step uses the freshest
estimate (at t = 1, whose variance is 0, a row standardizes to 0 and only the intercept learns).

``ocolearn.pipeline.Pipeline`` composes the parts with a learner into one ``(state, example) ->
state`` step, which the one runner runs.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ocolearn.features import Sparse, largest_seen, local, put, values
from ocolearn.learners.base import ratio
from ocolearn.names import SCALES
from ocolearn.parts import ConfigError, Part, hyper


class Preprocess(Part, family=True):
    """Base of the preprocessing parts; see the module docstring for the contract."""

    def init(self, dim: int):
        return ()

    def out_dim(self, dim: int) -> int:
        return dim

    def transform(self, state, x):
        raise NotImplementedError

    def observe(self, state, x):
        return state

    def step(self, state, x):
        """``(state, x')``: the statistics updated with ``x``, then ``x`` transformed with them."""
        state = self.observe(state, x)
        return state, self.transform(state, x)

    def fold(self, state, w):
        raise NotImplementedError


class Intercept(Preprocess, name="intercept"):
    """A constant feature: ``x' = (x, value)``, the last coordinate (index d). Its weight is the
    model's intercept; learners with a regularizer or a projection leave it out of them
    (their ``intercept`` field, set by ``ocolearn.pipeline.with_pipeline``), as scikit-learn's
    ``SGDClassifier`` leaves its ``intercept_`` unpenalized. Vowpal Wabbit's constant feature;
    scikit-learn's ``fit_intercept=True``."""

    value: float = hyper(1.0, gt=0)

    def out_dim(self, dim):
        return dim + 1

    def transform(self, state, x):
        if isinstance(x, Sparse):
            last = jnp.full(x.idx.shape[:-1] + (1,), x.dim, x.idx.dtype)
            constant = jnp.broadcast_to(jnp.asarray(self.value, x.val.dtype), last.shape)
            return Sparse(jnp.concatenate([x.idx, last], -1), jnp.concatenate([x.val, constant], -1), x.dim + 1)
        constant = jnp.broadcast_to(jnp.asarray(self.value, x.dtype), x.shape[:-1] + (1,))
        return jnp.concatenate([x, constant], -1)

    def fold(self, state, w):
        return w[..., :-1], w[..., -1] * np.float64(self.value)


class Moments(NamedTuple):
    count: jax.Array  # rows seen
    mean: jax.Array  # (d,) running mean
    sd: jax.Array  # (d,) running (population) standard deviation


class Standardize(Preprocess, name="standardize"):
    """Online standardization (Welford 1962), river's ``StandardScaler``: after n rows::

        mean_n = mean_{n-1} + (x_n - mean_{n-1}) / n
        var_n  = var_{n-1} + ((x_n - mean_{n-1}) (x_n - mean_n) - var_{n-1}) / n
        x'     = (x - mean) / sqrt(var),   0 where var = 0

    (the population variance; a constant feature becomes 0). The state keeps the deviation,
    ``sd_n = sqrt((n - 1) / n) hypot(sd_{n-1}, (x_n - mean_{n-1}) / sqrt(n))``, the same recurrence
    (``var_n = (1 - 1/n) (var_{n-1} + delta^2 / n)``) without squares, so features as large as
    float32 holds (1e20: a variance of 1e40) scale without overflow. ``x - mean`` is computed
    halved, ``x/2 - mean/2`` (the same bits halved: halving is exact), and ``x'`` as
    ``(x/2 - mean/2) / (sd/2)``, so rows as far apart as float32's range (3e38 then -3e38) give
    finite statistics and rows. Dense rows only: centring a sparse row would fill it; scale
    sparse rows with ``normalize``.

    **The early rows.** A row is predicted with the statistics of the rows before it, and after
    few rows a deviation can be tiny: on river's TrumpApproval, two rows in, round 3's row
    standardized to thousands and predicted ~2.5e7 (river's own progressive MSE there is 63, its
    held-out MSE 0.38). So ``x'`` is clipped to ``+-clip sqrt(n)`` after n rows. A row among the
    statistics cannot lie further than ``sqrt(n - 1)`` deviations from their mean (Samuelson's
    inequality), so the rows the learner learns from (standardized after ``observe``) are never
    clipped and the weights are river's: only predictions of rows far outside the rows seen are
    bounded, as they would be had the row been counted (``sqrt(n)`` with it). ``clip = 0`` is
    river's rule exactly (no clip). The model file's folded linear model (``fold``) scores without the clip,
    with the final statistics, where the bound (``sqrt`` of the rows trained on) is rarely reached."""

    clip: float = hyper(1.0, ge=0)

    def init(self, dim):
        zeros = jnp.zeros((dim,), jnp.float32)
        return Moments(jnp.zeros((), jnp.float32), zeros, zeros)

    def observe(self, state, x):
        _dense_only(x)
        n = state.count + 1.0
        half = _half_delta(state, x)
        sd = 2.0 * (jnp.sqrt((n - 1.0) / n) * jnp.hypot(0.5 * state.sd, half / jnp.sqrt(n)))
        return Moments(n, state.mean + 2.0 * (half / n), sd)

    def transform(self, state, x):
        _dense_only(x)
        bound = jnp.where(self.clip > 0, self.clip * jnp.sqrt(jnp.maximum(state.count, 1.0)), jnp.inf)
        return jnp.clip(ratio(_half_delta(state, x), 0.5 * state.sd), -bound, bound)

    def fold(self, state, w):
        scaled = _over(w, state.sd)
        return scaled, -(scaled @ state.mean)


class Normalize(Preprocess, name="normalize"):
    """Per-feature scaling by the largest magnitude seen, the normalization of Vowpal Wabbit's
    default update (Ross, Mineiro and Langford 2013, the ``s_i`` of Algorithm 2, which
    ``ocolearn.learners.nag`` folds into its step instead)::

        s_i = max(s_i, |x_i|),   x'_i = x_i / s_i   (0 where s_i = 0)

    O(nnz) on sparse rows: features absent from x keep their scale. Scale-free: multiplying a
    feature by c > 0 everywhere leaves every x' unchanged."""

    def init(self, dim):
        return jnp.zeros((dim,), jnp.float32)

    def observe(self, state, x):
        return put(state, x, largest_seen(state, x))

    def transform(self, state, x):
        return self._scaled(x, local(state, x))

    def step(self, state, x):
        """``observe`` then ``transform``. On sparse rows a read of the state after its writes
        makes XLA copy the whole state (d numbers) in every round; ``written`` finds what ``put``
        wrote from a k x k table of x's k entries instead. So the table where it is the smaller,
        ``k^2 <= d``, the read otherwise. ``train`` with Pegasos (2026-12-03,
        ``benchmarks/bench_users.py``'s commands): 300,000 VW rows of 21 entries hashed into
        2^18 features, 0.64 s with the table against 20.1 s with the read; the README's
        polarity command (2,000 documents, rows padded to 1,072 entries, 2^18 features, 10
        passes), 2.2 s in all with the read against 10.3 s with the table."""
        if isinstance(x, Sparse) and x.idx.shape[-1] ** 2 > x.dim:
            return super().step(state, x)
        new = largest_seen(state, x)
        state = put(state, x, new)
        return state, self._scaled(x, written(x, new) if isinstance(x, Sparse) else new)

    @staticmethod
    def _scaled(x, scale):
        scaled = values(x) * ratio(1.0, scale)
        return Sparse(x.idx, scaled, x.dim) if isinstance(x, Sparse) else scaled

    def fold(self, state, w):
        return _over(w, state), np.zeros(w.shape[:-1])


def written(x: Sparse, new):
    """What ``put(v, x, new)`` leaves at each of x's features, without reading the result: the
    value of the last entry writing that index (``put`` writes in order, and entries of value 0
    write nothing). An entry of value 0 gets one of them (it scales 0)."""
    k = x.idx.shape[-1]
    writes = (x.idx[:, None] == x.idx[None, :]) & (x.val[None, :] != 0)  # (j, j'): j' writes j's feature
    last = jnp.max(jnp.where(writes, jnp.arange(k), 0), axis=1)
    return jnp.take(new, last, axis=-1)


class Means(NamedTuple):
    count: jax.Array  # (k,) cells seen (not missing) in each column
    mean: jax.Array  # (k,) their running mean


class Impute(Preprocess, name="impute", static=("columns", "indicators")):
    """Online mean imputation with missing-value indicators: river's ``StatImputer`` with
    ``stats.Mean()``, beside scikit-learn's ``SimpleImputer(add_indicator=True)``, which fills
    every column and adds indicators for the columns that had a missing value when fitted. It
    keeps the running mean of every feature in ``columns`` (a table's numeric columns,
    ``ocolearn.data.csvfile.Table``); ``indicators[i]`` is the indicator feature of
    ``columns[i]``, or -1 for a column without one. A missing cell of a column with an
    indicator is read as 0 with the indicator 1; then::

        mean_i <- mean of the cells of column i seen so far that were not missing
        x'_c = x_c + m_i mean_i,   the indicator m_i kept as a feature

    so a missing cell becomes the column's running mean (0 before any cell is seen, as river's
    ``StatImputer``), a present one stays. Linear in x (``x_c`` is 0 where ``m_i`` is 1), so it
    folds into the raw weights: ``w_in[m_i] = w[m_i] + w[c] mean_i``. A column without an
    indicator has no missing cell in the rows a pipeline learns from (its table's first pass
    found none); the final means are a model's, and its table reads a missing cell of such a
    column as the column's mean (``Table.of_settings``), the score the imputed row gets. Dense
    rows only."""

    columns: tuple = ()
    indicators: tuple = ()

    def init(self, dim):
        zeros = jnp.zeros((len(self.columns),), jnp.float32)
        return Means(zeros, zeros)

    def _missing(self, x):
        """``(..., k)``: 1 where the cell of ``columns[i]`` is missing (its indicator), else 0."""
        _table_rows(x)
        has = np.asarray(self.indicators) >= 0
        return jnp.where(has, x[..., np.where(has, self.indicators, 0).tolist()], 0.0)

    def observe(self, state, x):
        seen = 1.0 - self._missing(x)
        count = state.count + seen
        half = 0.5 * x[..., list(self.columns)] - 0.5 * state.mean  # (halved: finite for any float32 cells)
        return Means(count, state.mean + 2.0 * (seen * ratio(half, count)))

    def transform(self, state, x):
        missing = self._missing(x)  # (first: it refuses a sparse row)
        return jnp.asarray(x).at[..., list(self.columns)].add(missing * state.mean)  # (finite means)

    def fold(self, state, w):
        w, mean = np.array(w, np.float64), np.asarray(state.mean)
        for i, (c, m) in enumerate(zip(self.columns, self.indicators, strict=True)):
            if m >= 0:
                w[..., m] += w[..., c] * mean[i]
        return w, np.zeros(w.shape[:-1])


def _table_rows(x):
    if isinstance(x, Sparse):
        raise ConfigError("impute needs dense rows (the columns of a table)")


def _half_delta(state: Moments, x):
    """``(x - mean) / 2`` as ``x/2 - mean/2``: the same bits halved (halving is exact above
    float32's subnormals), finite for any two float32 numbers."""
    return 0.5 * x - 0.5 * state.mean


def _over(w, scale):
    """``w / scale`` in float64 (NumPy, for ``fold``), 0 where ``scale`` is 0: ``ratio`` on the host."""
    scale = np.asarray(scale, np.float64)
    return np.where(scale > 0, np.asarray(w) / np.where(scale > 0, scale, 1.0), 0.0)


def _dense_only(x):
    if isinstance(x, Sparse):
        raise ConfigError("standardize needs dense rows (centring fills a sparse row); use scale = 'normalize'")


def default_steps(dense: bool, intercept: bool = True, scale: str = "auto") -> tuple[Preprocess, ...]:
    """The preprocessing every door applies unless told otherwise: online scaling
    (``scale = "auto"``: ``standardize`` dense rows; ``normalize`` sparse rows, which centring
    would fill: O(nnz) steps, a scale per feature in the state, counts and indicators kept in
    [0, 1], and rows of raw measurements, which unscaled diverge or lose to a constant, learn),
    then the intercept as the last feature. Measured with each learner's defaults on
    scikit-learn's breast_cancer, wine and diabetes given as sparse rows (75/25 split,
    ``random_state=0``, one pass; held-out accuracy, or MSE), normalize against none:
    perceptron 0.944 and 0.881 (breast_cancer), 0.844 and 0.178 (wine); OGD (hinge) 0.916 and
    0.371, 0.889 and 0.356; Pegasos 0.923 and 0.881, 0.511 and 0.289; logistic OGD 0.762 and
    0.811 (the one loss), 0.756 and 0.489; OGD (squared, diabetes) 3,227 and 4,898; ``train``'s
    default learner on the same rows as svmlight files 0.902 and 0.664, 0.889 and 0.778, MSE
    2,981 and 4,772. Standardized dense rows score 0.944 to 0.978 on the two (MSE 3,345 on
    diabetes): ``ocolearn.data.containers`` reads an in-memory sparse matrix of few features as
    dense rows. ``river`` is ``standardize`` by river's rule exactly, without the clip of far
    rows' predictions (``Standardize(clip=0)``)."""
    if scale not in SCALES:
        raise ConfigError(f"{scale!r} is not one of {', '.join(SCALES)}", "scale")
    if scale == "auto":
        scale = "standardize" if dense else "normalize"
    if scale in ("standardize", "river") and not dense:
        raise ConfigError(f"{scale!r} needs dense rows (csv, tables); use 'normalize' for sparse ones", "scale")
    river = (Standardize(clip=0.0),)
    steps = {"standardize": (Standardize(),), "normalize": (Normalize(),), "none": (), "river": river}[scale]
    return steps + ((Intercept(),) if intercept else ())
