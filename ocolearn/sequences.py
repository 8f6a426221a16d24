"""Generated loss sequences for the experts and regret-rate studies (and their tests).

- ``experts_losses(kind, T, N, seed)``: a ``(T, N)`` float32 array of the experts' losses in
  [0, 1], one row per round (the example Hedge sees):

  * ``"random"``: expert i's losses are independent Bernoulli(mu_i), ``mu_i`` spread evenly over
    [0.3, 0.7] in a random order: one expert is best by a margin;
  * ``"coins"``: every loss a fair coin, the randomized adversary of the lower bound (no
    algorithm's expected regret is below about ``sqrt(T ln N / 2)`` as T and N grow,
    Cesa-Bianchi and Lugosi 2006, Theorem 3.7);

- ``adaptive_experts_losses(learner, T, N)``: the adaptive adversary against ``learner``, which
  gives loss 1 to the expert the learner weighs most (the first of ties) and 0 to the others, in
  every round: the sequence that punishes a learner that commits.
- ``random_signs(T, M, seed)``: ``(M, T, 1)`` independent +-1 gradients of linear losses in one
  dimension, the randomized adversary against any online learner on [-1, 1]: the expected regret is
  ``E |sum_t g_t| ~ sqrt(2 T / pi)`` whatever the learner plays (Hazan 2016, chapter 3, the lower bound).
- ``bounded_regression(T, M, d, seed)``: ``(M, T, d)`` features on the unit sphere and ``(M, T)``
  targets ``y = u* . x + (3/4) s`` with ``||u*|| = 1/4`` and s a fair +-1 coin, so ``|y| <= 1``: with
  ``||w|| <= 1`` the squared loss ``(w . x - y)^2 / 2`` has ``|w . x - y| <= 2``, so it is
  1/4-exp-concave with gradients bounded by 2.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

KINDS = ("random", "coins")


def experts_losses(kind: str, T: int, N: int, seed: int = 0) -> np.ndarray:
    """A ``(T, N)`` float32 sequence of the experts' losses in {0, 1}; see the module docstring."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        mu = rng.permutation(np.linspace(0.3, 0.7, N))
    elif kind == "coins":
        mu = np.full(N, 0.5)
    else:
        raise ValueError(f"unknown experts sequence {kind!r}; known: {', '.join(KINDS)}, adaptive")
    return (rng.random((T, N)) < mu).astype(np.float32)


def adaptive_experts_losses(learner, T: int, N: int) -> np.ndarray:
    """``l_t = e_{argmax_i w_{t,i}}``, with ``w_t`` the learner's weights before round t."""

    def one_round(state, _):
        losses = jax.nn.one_hot(jnp.argmax(learner.weights(state)), N, dtype=jnp.float32)
        return learner.update(state, (losses, jnp.float32(0.0))), losses

    _, losses = jax.lax.scan(one_round, learner.init(N), None, length=T)
    return np.asarray(losses)


def random_signs(T: int, M: int, seed: int = 0) -> np.ndarray:
    """``(M, T, 1)`` independent fair +-1 signs (M sequences of T one-dimensional gradients)."""
    rng = np.random.default_rng(seed)
    return np.where(rng.random((M, T, 1)) < 0.5, -1.0, 1.0).astype(np.float32)


def bounded_regression(T: int, M: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of shapes ``(M, T, d)`` and ``(M, T)``, float32; see the module docstring."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(M, T, d))
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    u = rng.normal(size=(M, 1, d))
    u *= 0.25 / np.linalg.norm(u, axis=-1, keepdims=True)
    y = np.sum(X * u, axis=-1) + 0.75 * np.where(rng.random((M, T)) < 0.5, -1.0, 1.0)
    return X.astype(np.float32), y.astype(np.float32)
