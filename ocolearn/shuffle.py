"""A seeded run's shuffles drawn on the host: ``jax.random.permutation(fold_in(key, p), n)``,
bit for bit, in NumPy.

``run(..., seed=s)`` plays pass p in the order ``jax.random.permutation(jax.random.fold_in(key,
p), n)``. Drawn inside the compiled run, that shuffle (the Threefry-2x32 hash of Salmon et al.
2011, "Parallel random numbers: as easy as 1, 2, 3", and a sort) took about 0.12 s of each
seeded program's compile, 0.2 s against 0.07 for the same run unseeded (150 rows): every learner
and shape compiled it again. Here it is the same arithmetic on uint32 arrays, outside any
program: no compile, and at 10^6 rows 0.2 s against XLA:CPU's 0.54 s (NumPy's stable sort is
faster than XLA:CPU's).

JAX's algorithm (``jax._src.random.core._shuffle``, threefry keys with
``jax_threefry_partitionable``, JAX's default): ``ceil(3 ln n / ln(2^32 - 1))`` rounds, each
splitting the key in two, drawing n 32-bit words from the second half (Threefry of the counter
i, the two output words xored) and stably sorting the indices by them. ``fold_in(key, p)`` is
Threefry of the counter ``(0, p)``. ``run``, ``sweep`` (``seed_orders``) and ``parallel_sgd``
draw their shuffles here; ``host_order`` returns None where it would not be JAX's bits (a key
traced inside a program, another PRNG, the other Threefry layout), and they draw them inside
the program instead (``run.round_order``). ``tests/test_shuffle.py`` and
``tests/test_parallel.py`` check that the two agree.
"""

from __future__ import annotations

import jax
import numpy as np

# The rotations of Threefry-2x32's rounds, alternating in groups of four (Salmon et al. 2011, Table 4).
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
PARITY = 0x1BD11BDA  # the key schedule's constant
WORD = 0xFFFFFFFF
BLOCK = 1 << 20  # words hashed at a time: a few temporaries of 4 MB, however many rows and passes


def threefry2x32(k1, k2, x1, x2):
    """Threefry-2x32 with 20 rounds of the counters ``(x1, x2)`` under the keys ``(k1, k2)``,
    as JAX's ``threefry2x32_p``: five groups of four rounds ``x1 += x2; x2 = rotl(x2, r) ^ x1``,
    each group followed by a key injection. On Python ints below 2^32 (a key's words: 5 us a
    hash, where NumPy takes 85 on arrays of one) or on uint32 arrays that broadcast together
    (a pass's words), whose arithmetic wraps as the hash means it to."""
    wrap = (lambda v: v & WORD) if isinstance(x1, int) else (lambda v: v)
    ks = (k1, k2, k1 ^ k2 ^ PARITY)
    x1, x2 = wrap(x1 + ks[0]), wrap(x2 + ks[1])
    for group in range(5):
        for r in ROTATIONS[group % 2]:
            x1 += x2
            x1 = wrap(x1)
            x2 = wrap(x2 << r) | (x2 >> (32 - r))
            x2 ^= x1
        x1 = wrap(x1 + ks[(group + 1) % 3])
        x2 = wrap(x2 + ks[(group + 2) % 3] + group + 1)
    return x1, x2


def fold_in(key, data: int):
    """``jax.random.fold_in``: Threefry of the counter ``(0, data)``."""
    return threefry2x32(*key, 0, data & WORD)


def split(key):
    """``jax.random.split(key)``'s two keys: Threefry of the counters ``(0, 0)`` and ``(0, 1)``."""
    return threefry2x32(*key, 0, 0), threefry2x32(*key, 0, 1)


def drawn_here(impl: str) -> bool:
    """Whether JAX draws with the PRNG ``impl`` what this module transcribes: Threefry-2x32, its
    bits laid out by ``jax_threefry_partitionable`` (JAX's default)."""
    return impl == "threefry2x32" and jax.config.jax_threefry_partitionable


def host_key(key):
    """``key``'s two uint32 words if it is a concrete Threefry key whose shuffles ``host_order``
    draws as JAX does, else None."""
    if isinstance(key, jax.core.Tracer):
        return None
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        if not drawn_here(str(jax.random.key_impl(key))) or key.shape:
            return None
        key = jax.random.key_data(key)
    elif key.dtype != np.uint32 or key.shape != (2,) or not drawn_here(jax.config.jax_default_prng_impl):
        return None  # (a raw key: JAX reads it with the default PRNG)
    words = np.asarray(key)
    return int(words[0]), int(words[1])


def host_order(key, n: int, passes: int, first_pass) -> np.ndarray | None:
    """The rows' order of passes ``first_pass .. first_pass + passes - 1`` over n rows, as
    ``(passes, n)`` int32: row p is ``jax.random.permutation(jax.random.fold_in(key, first_pass
    + p), n)``, bit for bit; None where the key (or a traced ``first_pass``) cannot be drawn
    here."""
    words = host_key(key)
    if words is None or isinstance(first_pass, jax.core.Tracer):
        return None
    return order_of(words, n, passes, first_pass)


def seed_orders(seeds, n: int, passes: int) -> np.ndarray | None:
    """``host_order(jax.random.key(s), n, passes, 0)`` for each uint32 seed s, as ``(S, passes,
    n)`` int32 (a sweep's shuffles); None where JAX's keys are not the Threefry keys drawn here.
    ``jax.random.key`` makes a 32-bit seed's words ``(0, s)`` (``threefry_seed``)."""
    if not drawn_here(jax.config.jax_default_prng_impl):
        return None
    return np.stack([order_of((0, int(s)), n, passes, 0) for s in np.asarray(seeds, np.uint32)])


def order_of(words, n: int, passes: int, first_pass) -> np.ndarray:
    """``host_order`` of the key whose two uint32 words are ``words``."""
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(WORD)))
    keys = [fold_in(words, int(first_pass) + p) for p in range(passes)]
    order = np.broadcast_to(np.arange(n, dtype=np.int32), (passes, n)).copy()
    group = max(1, BLOCK // max(n, 1))  # passes shuffled at a time
    for _ in range(rounds):
        keys, drawing = zip(*map(split, keys), strict=True)  # the second key draws this round's words
        for first in range(0, passes, group):
            some = slice(first, first + group)
            words = random_words(np.array(drawing[some], np.uint32), n)
            order[some] = np.take_along_axis(order[some], np.argsort(words, axis=1, kind="stable"), axis=1)
    return order


def random_words(keys, n: int) -> np.ndarray:
    """``jax.random.bits(key, (n,))`` for each key of ``keys``, ``(K, 2)`` uint32, as ``(K, n)``
    uint32: Threefry of the counters ``(0, i)``, the two output words xored; hashed ``BLOCK`` at a
    time."""
    out = np.empty((len(keys), n), np.uint32)
    k1, k2 = keys[:, :1], keys[:, 1:]
    for start in range(0, n, BLOCK):
        counters = np.arange(start, min(n, start + BLOCK), dtype=np.uint32)[None, :]
        h1, h2 = threefry2x32(k1, k2, np.zeros_like(counters), counters)
        np.bitwise_xor(h1, h2, out=out[:, start : start + BLOCK])
    return out
