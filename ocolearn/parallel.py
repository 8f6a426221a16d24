"""Parallel SGD with model averaging, over devices with ``shard_map``.

The data is cut into ``shards`` contiguous blocks of ``n // shards`` rows (the last
``n mod shards`` rows are left out). Each shard runs the learner on its own block, and:

- ``average_every=0``: at the end the states are averaged, the SimuParallelSGD of Zinkevich,
  Weimer, Smola and Li (2010), Algorithm 3 ("partition the data, run SGD independently,
  average");
- ``average_every=k``: every k rounds of each shard the states are averaged and every shard
  continues from the average (iterative parameter mixing, McDonald, Hall and Mann 2010).

Averaging takes the mean of every floating-point leaf of the states once each holds its weights
explicitly (``learner.unscaled``: the mean of Pegasos' ``scale`` and ``W`` apart is not the mean
of the weights ``scale * W`` once the shards' scales differ), so the weights averaged are the
weights the states stand for, and any accumulators are averaged too; then ``learner.mix``
recomputes what derives from the weights. The round counter is the same on every shard. The shards are spread over the
local devices (``shard_map`` over a ``"shards"`` mesh axis, ``pmean`` to average), several per
device when there are more shards than devices.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from ocolearn.checks import check_data, check_rounds
from ocolearn.features import num_features
from ocolearn.run import as_key, round_order, round_step
from ocolearn.shuffle import fold_in, host_key, order_of


def _average(learner, states, axis_name):
    """Mean over the leading (shard) axis of every floating leaf of the unscaled states, then
    over devices."""

    def mean(a):
        if not jnp.issubdtype(a.dtype, jnp.floating):
            return a[0]
        return jax.lax.pmean(jnp.mean(a, axis=0), axis_name)

    return jax.tree.map(mean, jax.vmap(learner.unscaled)(states))


def parallel_sgd(learner, X, y, shards: int, *, average_every: int = 0, passes: int = 1, seed=None):
    """Run ``learner`` on ``shards`` blocks of the data in parallel; return the averaged state.

    Each shard's pass order is its stored order, or with ``seed`` a permutation per pass and
    shard (``fold_in(fold_in(key, shard), pass)``).
    """
    learner.check("learner")
    check_data(learner, X, y)  # the rows before the run: the shards' loops fold no check of them
    X, y = jax.tree.map(jnp.asarray, (X, y))
    m = len(y) // shards
    if m == 0:
        raise ValueError(f"{shards} shards need at least {shards} rows, got {len(y)}")
    check_rounds(learner, None, m, passes)  # each shard's learner runs m rounds a pass
    blocks = jax.tree.map(lambda a: a[: shards * m].reshape(shards, m, *a.shape[1:]), (X, y))
    devices = math.gcd(shards, len(jax.devices()))
    mesh = Mesh(np.array(jax.devices()[:devices]), ("shards",))
    key = as_key(seed)
    words = None if key is None else host_key(key)
    keys, orders = None, None
    if words is not None:  # each shard's orders drawn on the host, as run() draws a seeded run's (shuffle.py)
        orders = np.stack([order_of(fold_in(words, s), m, passes, 0).reshape(-1) for s in range(shards)])
    elif key is not None:
        keys = jax.vmap(lambda s: jax.random.fold_in(key, s))(jnp.arange(shards))
    state = learner.init(num_features(X))
    return _parallel(learner, blocks, keys, orders, state, mesh, passes, average_every)


@partial(jax.jit, static_argnums=(5, 6, 7))
def _parallel(learner, blocks, keys, orders, state, mesh, passes, average_every):
    rounds = passes * blocks[1].shape[1]
    k = average_every if 0 < average_every < rounds else rounds

    # After pmean every state leaf is the same on all devices (the counter is by construction).
    @partial(
        jax.shard_map,
        mesh=mesh,
        in_specs=(P(), P("shards"), P("shards"), P("shards"), P()),
        out_specs=P(),
        check_vma=False,
    )
    def on_devices(learner, blocks, keys, orders, state):
        local = blocks[1].shape[0]
        if keys is not None:
            orders = jax.vmap(lambda key: round_order(blocks[1].shape[1], passes, key))(keys)
        elif orders is None:
            orders = jnp.broadcast_to(round_order(blocks[1].shape[1], passes), (local, rounds))

        def shard_rounds(state, data, indices):
            X, y = data
            return jax.lax.scan(round_step(learner, X, y), state, indices)[0]

        def mix(state, indices):  # indices: (local shards, k)
            states = jax.vmap(shard_rounds, in_axes=(None, 0, 0))(state, blocks, indices)
            return learner.mix(_average(learner, states, "shards")), None

        full = (rounds // k) * k
        state, _ = jax.lax.scan(mix, state, orders[:, :full].reshape(local, rounds // k, k).swapaxes(0, 1))
        if full < rounds:
            state, _ = mix(state, orders[:, full:])
        return state

    return on_devices(learner, blocks, keys, orders, state)
