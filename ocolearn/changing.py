"""Regret against comparators that move: the best sequence with at most k switches, and
adaptive regret, the largest regret over any interval of a given length.

Both rest on the best fixed loss of every segment of rounds ``[i, j)``,

    C[i, j] = min_{u in F} sum_{i <= t < j} loss_t(u),

which for the squared loss ``loss_t(u) = 1/2 (u . x_t - y_t)^2`` follows exactly from prefix
sums of ``x_t x_t'``, ``y_t x_t`` and ``y_t^2``: the segment's comparator is
``least_squares_in_ball_gram`` of its Gram matrix (in the L2 ball of the study, or
unconstrained), O(T^2 d^3) for all segments. For another loss, ``solver(X, y) -> u`` gives the
best point of each segment.

- k switches (Herbster and Warmuth 1998's shifting comparator): ``min over 0 = s_0 < s_1 < ...
  < s_m < s_{m+1} = T, m <= k, of sum_j C[s_j, s_{j+1}]``, by dynamic programming over the
  segment ends, ``B[m, j] = min_{i < j} B[m-1, i] + C[i, j]``, O(k T^2).
- Adaptive regret (Hazan and Seshadhri 2009; with intervals of one length, the strongly
  adaptive regret of Daniely, Gonen and Shalev-Shwartz 2015):
  ``max_s sum_{s <= t < s+L} loss_t(w_t) - C[s, s+L]``.

Rounds are the rows in the order played (``X[trace.index]``); everything is float64.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ocolearn.projections import Identity, L2Ball
from ocolearn.regret import in_float64, least_squares_in_ball_gram


def segment_costs(loss, projection, X, y, solver=None):
    """``C`` of shape ``(T + 1, T + 1)``: ``C[i, j]`` the least total loss of one fixed point of
    the set over rounds ``i..j-1`` (i < j; ``inf`` elsewhere), and ``U[i, j]`` that point.

    Squared loss with the identity or an L2 ball: exact, from prefix sums. Otherwise
    ``solver(X_segment, y_segment) -> u`` must give each segment's best point."""
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    T, d = X.shape
    C = np.full((T + 1, T + 1), np.inf)
    U = np.zeros((T + 1, T + 1, d))
    if solver is None:
        if loss.name != "squared":
            raise ValueError(f"exact segment comparators need the squared loss, not {loss.name!r}: pass a solver")
        if isinstance(projection, Identity):
            radius = np.inf
        elif isinstance(projection, L2Ball):
            radius = float(projection.radius)
        else:
            raise ValueError(f"exact segment comparators need the identity or an L2 ball, not {projection.name!r}")
        A = np.concatenate([np.zeros((1, d, d)), np.cumsum(X[:, :, None] * X[:, None, :], axis=0)])
        b = np.concatenate([np.zeros((1, d)), np.cumsum(y[:, None] * X, axis=0)])
        c = np.concatenate([[0.0], np.cumsum(y * y)])
        for i in range(T):
            for j in range(i + 1, T + 1):
                Aij, bij = A[j] - A[i], b[j] - b[i]
                u = least_squares_in_ball_gram(Aij, bij, radius)
                U[i, j] = u
                C[i, j] = max(0.5 * (u @ Aij @ u - 2 * u @ bij + c[j] - c[i]), 0.0)
        return C, U
    for i in range(T):
        for j in range(i + 1, T + 1):
            u = np.asarray(solver(X[i:j], y[i:j]), np.float64)
            U[i, j] = u
            C[i, j] = float(np.sum(in_float64(loss.value, X[i:j] @ u, y[i:j])))
    return C, U


class Switching(NamedTuple):
    """The best comparator sequence with at most k switches."""

    total: float  # its summed loss over the T rounds
    starts: list[int]  # the first round (0-based) of each segment; starts[0] == 0
    weights: np.ndarray  # (segments, d): the fixed point of each segment
    losses: np.ndarray  # (T,): its loss in each round


def best_switching(C, k: int) -> tuple[float, list[int]]:
    """The least ``sum_j C[s_j, s_{j+1}]`` over at most ``k`` switches (k + 1 segments) and the
    segment starts ``[0, s_1, ..., s_m]``, by dynamic programming; ties go to fewer switches,
    then to earlier segment ends."""
    T = C.shape[0] - 1
    B = np.full((k + 1, T + 1), np.inf)
    back = np.zeros((k + 1, T + 1), np.int64)
    B[0] = C[0]
    for m in range(1, k + 1):
        for j in range(1, T + 1):
            options = B[m - 1, :j] + C[:j, j]
            back[m, j] = int(np.argmin(options))
            B[m, j] = options[back[m, j]]
    m = int(np.argmin(B[:, T]))  # the first (fewest switches) of equal totals
    starts, j = [], T
    while m > 0:
        j = int(back[m, j])
        starts.append(j)
        m -= 1
    return float(B[:, T].min()), [0, *reversed(starts)]


def k_switch(loss, projection, X, y, k: int, solver=None, costs=None) -> Switching:
    """The best sequence of points of the set with at most ``k`` switches over the rounds
    ``(X, y)`` (rows in the order played), and its loss in each round. ``costs``: the
    ``segment_costs`` of these rounds, to reuse them for several k.

    >>> from ocolearn import Identity, Squared
    >>> X, y = np.ones((6, 1)), np.array([1.0, 1.0, 1.0, 3.0, 3.0, 3.0])
    >>> best = k_switch(Squared(), Identity(), X, y, k=1)
    >>> best.total, best.starts, best.weights.ravel().tolist()
    (0.0, [0, 3], [1.0, 3.0])
    """
    C, U = segment_costs(loss, projection, X, y, solver) if costs is None else costs
    total, starts = best_switching(C, k)
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    bounds = list(zip(starts, [*starts[1:], len(y)], strict=True))
    weights = np.stack([U[s, e] for s, e in bounds])
    losses = np.concatenate(
        [in_float64(loss.value, X[s:e] @ u, y[s:e]) for (s, e), u in zip(bounds, weights, strict=True)]
    )
    return Switching(total, starts, weights, losses)


def interval_regrets(learner_losses, C, length: int):
    """``sum_{s <= t < s+L} loss_t(w_t) - C[s, s+L]`` for every start s = 0..T-L: the regret
    of the learner on each interval of ``length`` rounds against that interval's best point."""
    losses = np.asarray(learner_losses, np.float64)
    T = len(losses)
    if not 1 <= length <= T:
        raise ValueError(f"the interval length must be in 1..{T}, got {length}")
    cumulative = np.concatenate([[0.0], np.cumsum(losses)])
    starts = np.arange(T - length + 1)
    return cumulative[starts + length] - cumulative[starts] - C[starts, starts + length]


def adaptive_regret(learner_losses, C, length: int) -> float:
    """The largest regret over any interval of ``length`` rounds (``interval_regrets``' maximum)."""
    return float(np.max(interval_regrets(learner_losses, C, length)))
