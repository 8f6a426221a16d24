"""Hyperparameter and seed sweeps as one compiled program, sharded over devices.

A sweep stacks C learners of one structure (their numbers along a leading axis) and runs
``vmap`` over them, and inside over S shuffle seeds, of the runner: one ``jit`` program whose
values are data, so a second sweep with other values compiles nothing. The configurations are
run in chunks sized to the memory budget (every chunk has the same shape: one compile), and
each chunk's configuration axis is sharded over all local devices (``jax.sharding``), the data
replicated.

>>> import jax.numpy as jnp
>>> from ocolearn import InvSqrt, ridge
>>> grid = product({"schedule.eta": [0.01, 0.1], "projection.radius": [1.0, 2.0, 3.0]})
>>> learners = stack_values(ridge(InvSqrt(1.0), 1.0), grid)
>>> X, y = jnp.ones((8, 2)), jnp.ones(8)
>>> out = sweep(learners, X, y, seeds=3)
>>> out.state.w.shape, out.trace.loss.shape    # (configurations, seeds, ...)
((6, 3, 2), (6, 3))
"""

from __future__ import annotations

import itertools
import math
import numbers
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ocolearn.checks import check_count, check_data, check_rounds, check_rows_after, in_loop
from ocolearn.data.containers import rows_of
from ocolearn.features import num_features, rolled_writes
from ocolearn.names import MAX_SEED, is_seed
from ocolearn.run import HOST_ORDER_ROUNDS, Result, run
from ocolearn.shuffle import seed_orders
from ocolearn.sizes import Need, estimate, memory, refuse


def leaf_paths(tree) -> list[str]:
    """The dotted paths of a pytree's leaves, e.g. ``["schedule.eta", "projection.radius"]``."""
    flat, _ = jax.tree_util.tree_flatten_with_path(tree)
    return [jax.tree_util.keystr(path, simple=True, separator=".") for path, _ in flat]


def product(axes: dict) -> dict[str, np.ndarray]:
    """The Cartesian product of named value lists, as one column per name (first name slowest)."""
    names = list(axes)
    rows = list(itertools.product(*[np.asarray(axes[n], np.float64).tolist() for n in names]))
    return {n: np.array([r[i] for r in rows]) for i, n in enumerate(names)}


def stack_values(template, columns: dict[str, np.ndarray]):
    """``template`` with the named leaves replaced by columns of values: C stacked learners.

    Leaves not named keep the template's value. Names are leaf paths (``leaf_paths``).
    """
    paths = leaf_paths(template)
    unknown = [n for n in columns if n not in paths]
    if unknown:
        raise KeyError(f"{unknown[0]!r} is not a number of this learner; its numbers: {', '.join(paths)}")
    size = len(next(iter(columns.values())))
    leaves, tree = jax.tree.flatten(template)
    stacked = [
        jnp.asarray(columns[p] if p in columns else np.full(size, leaf), jnp.float32)
        for p, leaf in zip(paths, leaves, strict=True)
    ]
    return jax.tree.unflatten(tree, stacked)


def stack(learners):
    """Stack learners of one structure along a new leading axis."""
    structures = {jax.tree.structure(learner) for learner in learners}
    if len(structures) != 1:
        raise ValueError("a sweep stacks learners of one structure: only their numbers may differ")
    return jax.tree.map(lambda *v: jnp.stack([jnp.asarray(x, jnp.float32) for x in v]), *learners)


def seed_values(seeds):
    """The seeds as uint32 (a count S means seeds 0..S-1, or give a sequence of integers in
    ``0..MAX_SEED``, else a ``ValueError`` naming them); None stays None (the stored order).
    Seed s shuffles as ``run(..., seed=s)`` does."""
    if seeds is None:
        return None
    values = list(range(seeds) if isinstance(seeds, numbers.Integral) else seeds)
    bad = [s for s in values if not is_seed(s)]
    if bad:  # (uint32 would wrap -1 to 2^32 - 1, and cut 1.5 to 1)
        raise ValueError(f"seeds: {bad[0]!r} is not a seed in 0..{MAX_SEED}")
    return np.asarray(values, np.uint32)


def _place(tree, sharding):
    """Put host arrays on ``sharding``'s devices; in a multi-process run each process places
    its own shards (every process holds the same host values)."""
    if sharding is None:
        return tree

    def place(a):
        a = np.asarray(a)
        return jax.make_array_from_callback(a.shape, sharding, lambda index: a[index])

    return jax.tree.map(place, tree)


def memory_budget(device=None) -> int:
    """Bytes a sweep may use on ``device``: half of what it can hold (of the host's RAM on CPU)."""
    device = device or jax.devices()[0]
    stats = device.memory_stats() if device.platform != "cpu" else None
    if stats and "bytes_limit" in stats:
        return int(stats["bytes_limit"] - stats.get("bytes_in_use", 0)) // 2
    return memory() // 2


def bytes_per_config(learner_one, X, y, num_seeds: int, passes: int, trace: bool) -> int:
    """Memory of one configuration (all its seeds): its state and its trace or summary, with
    room for the step's temporaries."""
    # Built, not traced: eval_shape would trace a new function on every sweep.
    state = learner_one.init(num_features(X))
    state_bytes = sum(a.size * a.dtype.itemsize for a in jax.tree.leaves(state))
    return estimate(len(y), orders=max(1, num_seeds), passes=passes, state=state_bytes, trace=trace).bytes


def _wait(tree) -> None:
    """Wait for a dispatched computation in short sleeps: Ctrl-C (or SIGTERM) is raised in
    Python between two of them, at once, instead of when the whole chunk has run."""
    for leaf in jax.tree.leaves(tree):
        while not getattr(leaf, "is_ready", lambda: True)():
            time.sleep(0.01)


def _to_host(a):
    """A result as a NumPy array; gathered from all processes in a multi-process run."""
    if getattr(a, "is_fully_addressable", True):
        return np.asarray(a)
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(a, tiled=True))


def _one(tree):
    return jax.tree.map(lambda a: a[0], tree)


def _mesh():
    return Mesh(np.array(jax.devices()), ("configs",))


@partial(jax.jit, static_argnames=("passes", "predict_after_update", "trace"))
def _sweep_chunk(learners, seeds, orders, X, y, carry, *, passes, predict_after_update, trace):
    # Sparse writes as loops (features.rolled_writes): under the vmap over seeds a row's indices differ
    # along the batch and each write is a scatter; without seeds loops compile sooner, about as fast.
    with rolled_writes():

        def one_config(learner, carry):
            def one_seed(key, order, carry):
                state, summary = (None, None) if carry is None else carry
                options = dict(passes=passes, predict_after_update=predict_after_update, trace=trace)
                return run(learner, X, y, key, state=state, summary=summary, order=order, **options)

            if orders is not None:  # each seed's shuffles, drawn on the host once for every configuration
                return jax.vmap(lambda o, c: one_seed(None, o, c))(orders, carry)
            if seeds is None:
                return jax.tree.map(lambda a: a[None], one_seed(None, None, _one(carry)))
            return jax.vmap(lambda s, c: one_seed(jax.random.key(s), None, c))(seeds, carry)

        if not jax.tree.leaves(learners):  # a learner without numbers (the Perceptron): one configuration
            return jax.tree.map(lambda a: a[None], one_config(learners, _one(carry)))
        return jax.vmap(one_config)(learners, carry)


# Configurations run at once on a device come in multiples of 16, a vector of float32 in AVX-512
# (two in AVX2). XLA:CPU writes out a loop over few configurations as scalar code, one copy per
# configuration, and LLVM fuses a product and a sum into one multiply-add (one rounding instead of
# two) in some copies and not in others: on an AVX-512 Xeon a sweep of 6 configurations in chunks
# of 3 differed from the whole sweep in the last bits of the weights and sums, and chunks of 2 or
# 8 from one of 48 (tests/test_defects.py). Over whole vectors every configuration takes the same
# instructions: chunks of 16, 32 and 48 give the same bits.
LANES = 16


def chunk_for(learners, X, y, num_seeds, passes, trace, budget) -> int:
    """How many configurations fit in ``budget`` bytes next to the data."""
    data = sum(np.asarray(a).nbytes for a in jax.tree.leaves((X, y)))
    need = bytes_per_config(_one(learners), X, y, num_seeds, passes, trace)
    return max(1, (budget - data) // need)


def _refuse_beyond(learners, X, y, num_seeds, passes, trace, limit, least, runs) -> None:
    """Refuse a sweep whose fewest configurations run at once (``least``, a device's lanes)
    need more than ``limit`` bytes (the device's memory) next to the data, or whose ``runs`` configurations (padded)
    over every seed would take longer than a run may (``ocolearn.sizes.refuse``), naming
    ``seeds``, what a sweep's size grows with beyond its grid (``MAX_RUNS``, the config's check)."""
    data = sum(np.asarray(a).nbytes for a in jax.tree.leaves((X, y)))
    one = bytes_per_config(_one(learners), X, y, num_seeds, passes, trace)
    seconds = estimate(len(y), orders=num_seeds, grid=runs, passes=passes).seconds
    what = f"a sweep of {runs} configurations x {num_seeds} seeds over {len(y) * passes} rounds"
    refuse(Need(data + least * one, seconds), "seeds", what, limit=limit)


def sweep(
    learners,
    X,
    y,
    seeds=None,
    *,
    passes=1,
    predict_after_update=False,
    trace=False,
    chunk_size=None,
    memory=None,
    shard=True,
    carry=None,
) -> Result:
    """Run C stacked learners (``stack``/``stack_values``) over S seeds in one compiled program.

    Returns a ``Result`` whose leaves have leading axes ``(C, S)`` (S = 1 without seeds): the
    final states, and per-round ``Trace`` arrays if ``trace`` else a ``Summary`` of sums.
    ``chunk_size`` bounds the configurations run at once, rounded up to a multiple of ``LANES`` (16)
    per device, the last configuration repeated to fill it (so a configuration's numbers do not
    depend on it); by default it is what fits in ``memory`` bytes (default ``memory_budget()``) next
    to the data. ``shard`` spreads each chunk's configurations over all devices. ``carry`` =
    ``(state, summary)`` of an earlier sweep's ``Result`` (leaves with axes ``(C, S)``; summary None
    with ``trace``) continues it over more rows, as ``run``'s ``state=`` and ``summary=`` do: a sweep over rows read in
    chunks equals one over them all, bit for bit (``ocolearn.study``'s files read in chunks).
    """
    learners.check("learner")  # every stacked value
    check_count(passes, "passes")
    X = rows_of(X)  # a sparse matrix or a DataFrame, as ``run`` reads them (``containers.rows_of``)
    rows_in_loop = in_loop(X)  # else check_data checks X's rows before the sweep
    check_data(_one(learners), X, y, rows=not rows_in_loop)
    check_rounds(_one(learners), None if carry is None else _one(_one(carry[0])), y.shape[0], passes)
    num = jax.tree.leaves(learners)[0].shape[0] if jax.tree.leaves(learners) else 1
    num_seeds = 1 if seeds is None else seeds if isinstance(seeds, numbers.Integral) else len(seeds)
    devices = len(jax.devices()) if shard else 1
    budget = memory or memory_budget()
    if chunk_size is None:
        chunk_size = chunk_for(learners, X, y, num_seeds, passes, trace, budget)
    # A whole number of LANES configurations on each device, padded with the last: a configuration's
    # bits then do not depend on how many run at once (chunk_size, num).
    chunk_size = devices * LANES * math.ceil(min(chunk_size, num) / (devices * LANES))
    runs = chunk_size * math.ceil(num / chunk_size)
    _refuse_beyond(learners, X, y, num_seeds, passes, trace, 2 * memory_budget(), devices * LANES, runs)
    seeds = seed_values(seeds)  # (after the estimate: checking 10^6 seeds takes seconds)
    sharding = NamedSharding(_mesh(), P("configs")) if devices > 1 else None
    replicated = NamedSharding(_mesh(), P()) if devices > 1 else None
    # Each seed's shuffles are drawn here, on the host (shuffle.py: run's bits, without their
    # compile, 0.25 s of a seeded sweep's 0.35), where their memory stays below a summed sweep's
    # own; else inside the program.
    orders = None
    if seeds is not None and (trace or num_seeds * passes * len(y) <= HOST_ORDER_ROUNDS):
        orders = seed_orders(seeds, len(y), passes)
    seeds = seeds if orders is None else None  # (the program takes the orders alone)
    X, y, seeds, orders = _place((X, y, seeds, orders), replicated)
    outputs = []
    for start in range(0, num, chunk_size):
        index = np.minimum(np.arange(start, start + chunk_size), num - 1)  # pad with the last one
        chunk = jax.tree.map(lambda a, index=index: a[index], (learners, carry))
        chunk, carried = _place(chunk, sharding)
        options = dict(passes=passes, predict_after_update=predict_after_update, trace=trace)
        out = _sweep_chunk(chunk, seeds, orders, X, y, carried, **options)
        _wait(out)
        kept = min(chunk_size, num - start)
        outputs.append(jax.tree.map(lambda a, kept=kept: _to_host(a)[:kept], out))
    out = jax.tree.map(lambda *parts: np.concatenate(parts), *outputs)
    if rows_in_loop:
        check_rows_after(_one(learners), X, y, out.trace)
    return out
