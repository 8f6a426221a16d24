"""The one runner: a ``jax.lax.scan`` over rounds of the online protocol.

Each round t the learner sees example ``x_t``, predicts with its current state, is charged
``loss_t = learner.loss(w_t . x_t, y_t)`` (progressive validation: the prediction is made
before the label is used), then updates. With ``predict_after_update=True`` the *recorded*
prediction is the one made after the update (as the OGD post plots it); the charged loss is
still that of the weights played, so regret keeps its meaning.

Everything else (cumulative loss, regret, mistakes per pass) is derived from the trace.
The learner is a jit argument, so new hyperparameter values never recompile and
``jax.vmap(run, in_axes=(0, None, None))`` sweeps a stack of learners in one program.
"""

from __future__ import annotations

import numbers
from functools import lru_cache, partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ocolearn import metrics
from ocolearn.checks import (
    check_count,
    check_data,
    check_rounds,
    check_rows_after,
    fold_row,
    in_loop,
    rows_held,
    rows_unseen,
)
from ocolearn.data import DataError
from ocolearn.data.containers import rows_of
from ocolearn.features import num_features, rolled_writes, row, writes_rolled
from ocolearn.names import MAX_SEED, is_seed
from ocolearn.shuffle import host_order


class Trace(NamedTuple):
    """What each round recorded, in round order (T = passes * n rounds)."""

    prediction: jax.Array  # (T,) or (T, K): the recorded prediction of each round
    target: jax.Array  # (T,)
    loss: jax.Array  # (T,): learner.loss of the weights played, before the round's update
    index: jax.Array  # (T,): the row of the data set seen in each round
    snapshots: Any = None  # (T // k, ...): the weights after rounds k, 2k, ... if asked for


class Summary(NamedTuple):
    """Sums over all rounds, kept in the scan's carry instead of a per-round trace."""

    loss: jax.Array  # sum of the charged losses
    squared_error: jax.Array  # sum of (prediction - target)^2 of the recorded predictions
    mistakes: jax.Array  # rounds whose recorded prediction has the wrong sign (+-1 targets) or argmax
    nonfinite: jax.Array  # the first round (the learner's t) whose prediction or loss was NaN or inf; 0: none
    log_loss: jax.Array  # sum of the log losses of the recorded predictions (metrics.log_losses), 0 unless
    # the learner's scores are log-odds (metrics.has_probabilities)


def is_mistake(prediction, target):
    """A wrong sign of a score against a +-1 label, or a wrong argmax of (K,) class scores;
    a NaN or infinite prediction is always a mistake."""
    finite = jnp.all(jnp.isfinite(prediction))
    if prediction.ndim == 0:
        return ~(finite & (prediction * target > 0))
    return ~finite | (jnp.argmax(prediction) != target)


def round_sums(prediction, target, loss, t=0, probabilities=False) -> Summary:
    """One round's terms of the ``Summary`` sums; ``nonfinite`` is the round ``t`` if its
    prediction or loss is NaN or infinite, else 0; ``log_loss`` the prediction's log loss with
    ``probabilities`` (``metrics.has_probabilities`` of the learner), else 0."""
    error = prediction - target if prediction.ndim == 0 else jnp.zeros((), prediction.dtype)
    bad = ~(jnp.isfinite(loss) & jnp.all(jnp.isfinite(prediction)))
    nonfinite = jnp.where(bad, t, 0).astype(jnp.int32)
    log_loss = metrics.log_losses(prediction, target, jnp) if probabilities else jnp.zeros((), loss.dtype)
    return Summary(loss, error * error, is_mistake(prediction, target).astype(jnp.int32), nonfinite, log_loss)


@jax.jit
def held_out(learner, state, X, y) -> Summary:
    """The ``Summary`` sums of ``state``'s predictions on the rows of ``(X, y)``, learning
    nothing from them: the loss on held-out rows (Vowpal Wabbit's ``--holdout_period``)."""

    def one(i):
        prediction = learner.predict(state, row(X, i))
        return round_sums(prediction, y[i], learner.loss.value(prediction, y[i]), 0, metrics.has_probabilities(learner))

    sums = jax.tree.map(jnp.sum, jax.vmap(one)(jnp.arange(y.shape[0])))
    return sums._replace(nonfinite=jnp.zeros((), jnp.int32))


def _zero_summary():
    # NumPy zeros: a program takes them as it takes JAX's, without the 0.2 ms of three JAX calls
    # (an estimator's fit, a stream's chunks: a run() per call).
    return Summary(np.float32(0), np.float32(0), np.int32(0), np.int32(0), np.float32(0))


class Result(NamedTuple):
    state: Any  # the learner's state after the last round
    trace: Trace | Summary


def round_order(n: int, passes: int, key=None, first_pass=0):
    """Row indices of all rounds: ``passes`` times ``0..n-1``, pass p permuted by
    ``jax.random.permutation(fold_in(key, p), n)`` if ``key`` (passes are numbered from
    ``first_pass``, which may be traced). A concrete key's shuffles are drawn on the host
    (``shuffle.host_order``, the same bits, no compile); a traced one's in the program."""
    if key is None:
        return jnp.tile(jnp.arange(n, dtype=jnp.int32), passes)
    drawn = host_order(key, n, passes, first_pass)
    if drawn is not None:
        return drawn.reshape(-1)
    if passes == 1:  # (mapped over one pass number, it compiled 0.1 s slower: 0.38 s against 0.27)
        return jax.random.permutation(jax.random.fold_in(key, first_pass), n).astype(jnp.int32)
    # One shuffle mapped over the passes' numbers, the same bits as a shuffle written out per pass,
    # which compiled in 14 s at 100 passes (0.6 s so).
    numbers = jnp.asarray(first_pass, jnp.int32) + jnp.arange(passes, dtype=jnp.int32)
    perms = jax.vmap(lambda p: jax.random.permutation(jax.random.fold_in(key, p), n))(numbers)
    return perms.reshape(-1).astype(jnp.int32)


def as_key(seed):
    """A PRNG key from an integer seed in 0..``MAX_SEED`` (Python's or NumPy's; JAX keeps a
    seed's low 32 bits, so -1 would shuffle as 2^32 - 1 does: a ``ValueError``); keys (typed, or
    raw uint32 words) and None pass through; anything else is a ``TypeError`` naming the seed."""
    if isinstance(seed, numbers.Integral):
        if not is_seed(seed):
            raise ValueError(f"seed: {seed} is not a seed in 0..{MAX_SEED}")
        return _key_of(int(seed))
    dtype = getattr(seed, "dtype", None)
    if seed is None or (
        dtype is not None and (jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key) or dtype == np.uint32)
    ):
        return seed
    raise TypeError(f"seed: {seed!r} is neither an integer nor a PRNG key")


@lru_cache(maxsize=64)
def _key_of(seed: int):
    """``jax.random.key(seed)``, made once per seed (keys are immutable; making one is 0.1 ms)."""
    return jax.random.key(seed)


def run(
    learner,
    X,
    y,
    seed=None,
    *,
    state=None,
    passes=1,
    first_pass=0,
    predict_after_update=False,
    snapshot_every=0,
    trace=True,
    summary=None,
    weights=None,
    order=None,
):
    """Run ``learner`` online over the rows of ``(X, y)``; returns ``Result(state, trace)``.

    Before any compute it checks the learner's hyperparameters (``Part.check``: a
    ``ConfigError`` naming the key), ``passes``, and the data (``checks.check_data``: a
    ``DataError`` for mismatched lengths, numbers float32 cannot hold, or targets the loss
    does not take); where X's values are float32 already, its rows are checked by the rounds
    that read them, and a bad one is the same ``DataError`` once the run is over
    (``checks.in_loop``).
    A NaN or infinite prediction counts as a mistake, and the summary's
    ``nonfinite`` holds the first round where a prediction or loss was one
    (``checks.first_nonfinite`` finds it in a trace; ``checks.check_finite`` raises on it).

    Args:
      learner: any learner (a pytree; its numbers are traced, so sweeps never recompile).
      X: features, dense ``(n, d)`` or ``Sparse`` with ``(n, k)`` fields; a ``scipy.sparse`` matrix
        or a pandas or polars DataFrame is read as ``ocolearn.data.containers.rows_of`` reads it.
      y: targets ``(n,)``.
      seed: None for the stored order, or an integer seed in 0..2^32 - 1 / a PRNG key: each
        pass is then a fresh permutation, ``jax.random.permutation(fold_in(key, pass), n)``
        (drawn on the host where the key is concrete: ``ocolearn.shuffle``).
      state: a state to continue from (default ``learner.init(d)``).
      passes: how many times to go over the data.
      first_pass: the number of the first pass (its shuffle), to continue a run pass by pass.
      predict_after_update: record the prediction made after each update.
      snapshot_every: k > 0 records the weights after every k rounds.
      trace: False keeps only a ``Summary`` of sums over the rounds (constant memory in T).
      summary: with ``trace=False``, sums to continue from (a chunked run carries them, so
        that its sums are the whole run's, bit for bit).
      weights: None, or how many times each row counts, ``(n,)`` (finite, >= 0; ``(n, K)`` for
        one-vs-rest, one per copy): a round on row i is then ``learner.weighted_update(state,
        (x_i, y_i), weights[i])`` (scikit-learn's ``sample_weight``). The charged loss stays
        unweighted. Without weights the rounds are ``update``'s, the same program as before.
      order: instead of ``seed``, the rounds' order drawn already, ``(passes, n)`` row indices
        (pass p plays the rows ``order[p]``): a sweep draws each seed's shuffles once for all its
        configurations (``shuffle.seed_orders``).

    >>> import jax.numpy as jnp
    >>> from ocolearn import OGD, Constant
    >>> X, y = jnp.eye(2), jnp.array([1.0, -1.0])
    >>> result = run(OGD(schedule=Constant(0.5)), X, y, passes=2)
    >>> result.state.w.tolist(), result.trace.loss.tolist()
    ([0.75, -0.75], [0.5, 0.5, 0.125, 0.125])
    """
    learner.check("learner")
    check_count(passes, "passes")
    X = rows_of(X)
    rows_in_loop = in_loop(X)  # else check_data checks X's rows before the run
    check_data(learner, X, y, rows=not rows_in_loop)
    check_rounds(learner, state, len(y), passes)
    weights = check_weights(weights, len(y))
    if state is None:
        # Built here, not inside the program: a fresh run and one continued from a state are then
        # one program, and a run in chunks gives the whole run's bits. (Built inside, t is a
        # constant that XLA counts with the loop, 1.1x faster at d = 10, but XLA then fused a
        # summary's sum of squares into multiply-adds that the program continuing from a state
        # did not: tests/test_defects.py.)
        state = learner.init(num_features(X))
    if not trace and snapshot_every:
        raise ValueError("snapshots need trace=True")
    first_pass = np.int32(first_pass) if isinstance(first_pass, int) else jnp.asarray(first_pass, jnp.int32)
    summary = _zero_summary() if summary is None else Summary(*summary)
    key = as_key(seed)
    if order is not None:
        if key is not None or jnp.shape(order) != (passes, len(y)):
            raise ValueError(f"order must be ({passes}, {len(y)}) row indices, given instead of a seed")
        if not isinstance(order, jax.core.Tracer) and len(y) and not np.all((0 <= order) & (order < len(y))):
            raise ValueError(f"order must hold row indices 0 to {len(y) - 1}")  # (a gather would clamp them)
    elif key is not None and (trace or passes == 1 or passes * len(y) <= HOST_ORDER_ROUNDS):
        # A concrete key's shuffles are drawn here, once, outside the program (shuffle.py: the same
        # bits; drawn inside, they were 0.12 s of each seeded program's compile) and given to it; a
        # traced key's, or those of many passes over many rows in a summed run (whose memory would
        # grow with the passes), inside.
        order = host_order(key, len(y), passes, first_pass)
    if order is not None:
        key = None
    args = (learner, X, y, key, order, state, summary, first_pass, weights)
    result = _run(*args, passes, predict_after_update, snapshot_every, trace, writes_rolled())
    if rows_in_loop:
        check_rows_after(learner, X, y, result.trace)
    return result


def check_weights(weights, n: int):
    """``weights`` as a float32 array of ``n`` rows (or None), or a ``DataError`` saying what is
    wrong with them: another length, a value that is negative, NaN or infinite."""
    if weights is None:
        return None
    numbers = np.asarray(weights, np.float32)
    if numbers.ndim not in (1, 2) or len(numbers) != n:
        raise DataError(f"weights must hold one number per row ({n}), got shape {numbers.shape}")
    bad = ~(np.isfinite(numbers) & (numbers >= 0))
    if bad.any():
        i = np.unravel_index(np.argmax(bad), numbers.shape)
        raise DataError(f"weights[{i[0]}] is {float(numbers[i]):g}; weights are finite numbers >= 0")
    return jnp.asarray(numbers)


def round_step(learner, X, y, predict_after_update=False, weights=None):
    """One round of the protocol for row ``i``: ``(state, i) -> (state, (prediction, target, loss))``;
    with ``weights``, the round's update is ``learner.weighted_update`` with row i's weight."""

    def one_round(state, i):
        x, target = row(X, i), y[i]
        prediction = learner.predict(state, x)
        loss = learner.loss.value(prediction, target)
        if weights is None:
            state = learner.update(state, (x, target))
        else:
            state = learner.weighted_update(state, (x, target), weights[i])
        if predict_after_update:
            prediction = learner.predict(state, x)
        return state, (prediction, target, loss)

    return one_round


def scan_in_blocks(rounds, carry, indices, size, after):
    """``rounds(carry, indices) -> (carry, per-round outputs)`` over all ``indices``, calling
    ``after(carry) -> (carry, output)`` after every full block of ``size`` rounds (none if
    ``size`` is 0); the rounds left after the last full block run without it. Returns
    ``(carry, per-round outputs, per-block outputs)``, the last None when ``size`` is 0."""
    if size <= 0:
        carry, out = rounds(carry, indices)
        return carry, out, None
    blocks = indices.shape[0] // size

    def block(carry, chunk):
        carry, out = rounds(carry, chunk)
        carry, extra = after(carry)
        return carry, (out, extra)

    carry, (out, extra) = jax.lax.scan(block, carry, indices[: blocks * size].reshape(blocks, size))
    out = jax.tree.map(lambda a: a.reshape(blocks * size, *a.shape[2:]), out)
    if blocks * size < indices.shape[0]:
        carry, rest = rounds(carry, indices[blocks * size :])
        out = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), out, rest)
    return carry, out, extra


def tidy_scan(learner, step, carry, indices, tidy=None):
    """``lax.scan(step, carry, indices)``, applying ``tidy`` (default ``learner.tidy``) to the
    carry after every ``learner.tidy_every`` rounds: a learner's occasional O(d) upkeep, such
    as Pegasos folding its scale into its weights, kept out of the per-round step (control
    flow inside the step would stop XLA:CPU from compiling the loop into one kernel)."""
    tidy = tidy or learner.tidy

    def after(carry):
        return tidy(carry), None

    carry, out, _ = scan_in_blocks(partial(jax.lax.scan, step), carry, indices, learner.tidy_every, after)
    return carry, out


HOST_ORDER_ROUNDS = 1 << 24  # a summed run of many passes takes its shuffles drawn on the host up to 64 MB of them


@partial(jax.jit, static_argnums=(9, 10, 11, 12, 13))
def _run(*args):
    """``_rounds(*args[:-1])`` traced with sparse writes as loops or written out as ``args[-1]``
    says (``features.rolled_writes``; run() passes ``writes_rolled()``): static, so that a
    sweep's loops and a single run's written-out writes are programs of their own."""
    with rolled_writes(args[-1]):
        return _rounds(*args[:-1])


def _rounds(
    learner, X, y, key, order, state, summary, first_pass, weights, passes, predict_after_update, snapshot_every, trace
):
    y = jnp.asarray(y)
    one_round = round_step(learner, X, y, predict_after_update, weights)

    # X's rows are checked in the loop, where each round reads its row anyway (checks.in_loop): the
    # carry holds a running fold of them (checks.fold_row). A run whose rows did not all hold reports
    # a NaN total loss (its summary's sum, or its last round's loss in a trace: NaN in every round's
    # cost an extra pass over the trace, 5 ms of 35 per 10^6 rounds), and run() names the row.
    seen = rows_unseen(X)

    def tidy_first(carry):
        return (learner.tidy(carry[0]), *carry[1:])

    if not trace:
        probabilities = metrics.has_probabilities(learner)

        def summed_round(carry, i):
            state, sums, seen = carry
            t = state.t
            state, (prediction, target, loss) = one_round(state, i)
            terms = round_sums(prediction, target, loss, t, probabilities)
            first = jnp.where(sums.nonfinite == 0, terms.nonfinite, sums.nonfinite)
            added = Summary(*map(jnp.add, sums, terms))
            return (state, added._replace(nonfinite=first), fold_row(seen, row(X, i))), None

        def one_pass(carry, p):  # p: the pass's order (given), or its number
            rounds = p if order is not None else round_order(y.shape[0], 1, key, first_pass + p)
            return tidy_scan(learner, summed_round, carry, rounds, tidy_first)[0], None

        # Passes after the first are a loop of the program, over the passes' orders given or, past
        # HOST_ORDER_ROUNDS, over their numbers, each pass then drawing its shuffle in the loop:
        # the program's size does not grow with the passes (a shuffle per pass written out
        # compiled for minutes at 1,000 passes), nor then its memory (4 bytes per round).
        # A pass's rounds and sums are those of a run of that pass alone, continued (tidy's
        # upkeep changes no bit where it falls): the same bits as one call per pass.
        carry = (state, summary, seen)
        if passes == 1:
            carry = one_pass(carry, 0 if order is None else order[0])[0]
        else:
            carry = jax.lax.scan(one_pass, carry, jnp.arange(passes) if order is None else order)[0]
        state, sums, seen = carry
        return Result(state, sums._replace(loss=jnp.where(rows_held(seen, X), sums.loss, jnp.nan)))

    order = order.reshape(-1) if order is not None else round_order(y.shape[0], passes, key, first_pass)

    def traced_round(carry, i):
        state, seen = carry
        state, recorded = one_round(state, i)
        return (state, fold_row(seen, row(X, i))), recorded

    def rounds(carry, indices):
        return tidy_scan(learner, traced_round, carry, indices, tidy_first)

    if snapshot_every <= 0:
        (state, seen), recorded = rounds((state, seen), order)
        snapshots = None
    else:
        (state, seen), recorded, snapshots = scan_in_blocks(
            rounds, (state, seen), order, snapshot_every, lambda carry: (carry, learner.weights(carry[0]))
        )
    prediction, target, loss = recorded
    if loss.shape[0]:
        loss = loss.at[-1].set(jnp.where(rows_held(seen, X), loss[-1], jnp.nan))
    return Result(state, Trace(prediction, target, loss, index=order, snapshots=snapshots))


class Passes(NamedTuple):
    state: Any  # the learner's state after the last pass run
    mistakes: list[int]  # mistakes of each pass run (progressive: before each round's update)
    loss: list[float]  # the sum of the charged losses of each pass run
    nonfinite: int = 0  # the first round whose prediction or loss was NaN or infinite; 0: none


def run_passes(learner, X, y, seed=None, *, passes=1, stop_early=False, state=None) -> Passes:
    """Up to ``passes`` passes over ``(X, y)``, one compiled pass at a time, with the mistakes
    and the loss of each; ``stop_early`` stops after a pass without mistakes (the data was
    separated; the Perceptron and MIRA would not change any more). A pass in which a
    prediction or loss became NaN or infinite is the last (``nonfinite`` names the round;
    ``checks.check_finite`` turns it into an error). Otherwise the state equals
    ``run(..., passes=passes)``'s bit for bit: pass p has the same shuffle."""
    check_count(passes, "passes")
    X = rows_of(X)  # (any container, as run reads it)
    check_rounds(learner, state, len(y), passes)  # before the first pass, not at the one that would overflow
    if state is None:
        state = learner.init(num_features(X))
    mistakes, losses = [], []
    for p in range(passes):
        result = run(learner, X, y, seed, state=state, first_pass=p, trace=False)
        state = result.state
        mistakes.append(int(result.trace.mistakes))
        losses.append(float(result.trace.loss))
        if int(result.trace.nonfinite):
            return Passes(state, mistakes, losses, int(result.trace.nonfinite))
        if stop_early and mistakes[-1] == 0:
            break
    return Passes(state, mistakes, losses)
