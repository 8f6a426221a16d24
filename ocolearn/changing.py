"""Regret against comparators that move: the best sequence with at most k switches, and
adaptive regret, the largest regret over any interval of a given length.

Both rest on the best fixed loss of every segment of rounds ``[i, j)``,

    C[i, j] = min_{u in F} sum_{i <= t < j} loss_t(u),

which for the squared loss ``loss_t(u) = 1/2 (u . x_t - y_t)^2`` follows exactly from prefix
sums of ``x_t x_t'``, ``y_t x_t`` and ``y_t^2``: the segment's comparator is
``least_squares_in_ball_gram`` of its Gram matrix (in the L2 ball of the study, or
unconstrained), O(T^2 d^3) time for all segments and O(T d^2) memory: ``SegmentCosts`` computes
a segment's cost when it is asked for, and keeps no T x T table. For another loss,
``solver(X, y) -> u`` gives the best point of each segment.

- k switches (Herbster and Warmuth 1998's shifting comparator): ``min over 0 = s_0 < s_1 < ...
  < s_m < s_{m+1} = T, m <= k, of sum_j C[s_j, s_{j+1}]``, by dynamic programming over the
  segment ends, ``B[m, j] = min_{i < j} B[m-1, i] + C[i, j]``, O(k T^2) time, O(k T) memory.
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


class SegmentCosts:
    """``C[i, j]``, the least total loss of one fixed point of the set over rounds ``i..j-1``
    (0 <= i < j <= T), computed when asked for, and ``point(i, j)``, that point: no table of
    all T^2 segments is kept (their points alone took O(T^2 d) memory, 2 GB for T = 5,000 and
    d = 10). Squared loss with the identity or an L2 ball: exact, from the prefix sums of
    ``x_t x_t'``, ``y_t x_t`` and ``y_t^2`` (O(T d^2) memory, O(d^3) a segment). Otherwise
    ``solver(X_segment, y_segment) -> u`` gives each segment's best point.

    ``costs[i, j]`` with integers or with index arrays of one shape gives those costs;
    ``column(j)`` all of ``C[0..j-1, j]``, what the k-switch recursion takes at a time."""

    def __init__(self, loss, projection, X, y, solver=None):
        self.loss, self.solver = loss, solver
        self.X, self.y = np.asarray(X, np.float64), np.asarray(y, np.float64)
        self.T = len(self.y)
        if solver is not None:
            return
        if loss.name != "squared":
            raise ValueError(f"exact segment comparators need the squared loss, not {loss.name!r}: pass a solver")
        if isinstance(projection, Identity):
            self.radius = np.inf
        elif isinstance(projection, L2Ball):
            self.radius = float(projection.radius)
        else:
            raise ValueError(f"exact segment comparators need the identity or an L2 ball, not {projection.name!r}")
        X, y, d = self.X, self.y, self.X.shape[1]
        self.A = np.concatenate([np.zeros((1, d, d)), np.cumsum(X[:, :, None] * X[:, None, :], axis=0)])
        self.b = np.concatenate([np.zeros((1, d)), np.cumsum(y[:, None] * X, axis=0)])
        self.c = np.concatenate([[0.0], np.cumsum(y * y)])

    def point(self, i: int, j: int) -> np.ndarray:
        """The best fixed point of rounds ``i..j-1``."""
        if self.solver is not None:
            return np.asarray(self.solver(self.X[i:j], self.y[i:j]), np.float64)
        return least_squares_in_ball_gram(self.A[j] - self.A[i], self.b[j] - self.b[i], self.radius)

    def cost(self, i: int, j: int) -> float:
        """``C[i, j]``: ``inf`` unless ``0 <= i < j <= T``."""
        if not 0 <= i < j <= self.T:
            return np.inf
        u = self.point(i, j)
        if self.solver is not None:
            return float(np.sum(in_float64(self.loss.value, self.X[i:j] @ u, self.y[i:j])))
        A, b = self.A[j] - self.A[i], self.b[j] - self.b[i]
        return max(0.5 * (u @ A @ u - 2 * u @ b + self.c[j] - self.c[i]), 0.0)

    def column(self, j: int) -> np.ndarray:
        """``C[i, j]`` for i = 0..j-1."""
        return np.array([self.cost(i, j) for i in range(j)])

    def __getitem__(self, key):
        i, j = key
        if np.ndim(i) == 0 and np.ndim(j) == 0:
            return self.cost(int(i), int(j))
        i, j = np.broadcast_arrays(np.asarray(i), np.asarray(j))
        return np.array([self.cost(int(a), int(b)) for a, b in zip(i.ravel(), j.ravel(), strict=True)]).reshape(i.shape)


def segment_costs(loss, projection, X, y, solver=None) -> SegmentCosts:
    """The ``SegmentCosts`` of the rounds ``(X, y)``: ``C[i, j]`` and each segment's point on
    demand (see there); a ``ValueError`` for a loss or set without an exact solver and no
    ``solver``."""
    return SegmentCosts(loss, projection, X, y, solver)


class Switching(NamedTuple):
    """The best comparator sequence with at most k switches."""

    total: float  # its summed loss over the T rounds
    starts: list[int]  # the first round (0-based) of each segment; starts[0] == 0
    weights: np.ndarray  # (segments, d): the fixed point of each segment
    losses: np.ndarray  # (T,): its loss in each round


def _recursion(C, k: int):
    """``B[m, j]``, the least cost of rounds ``0..j-1`` in m + 1 segments, and ``back[m, j]``,
    where its last segment starts: ``B[m, j] = min_{i < j} B[m-1, i] + C[i, j]``, one column
    ``C[:j, j]`` at a time, so O(k T) memory besides C."""
    T = C.T if isinstance(C, SegmentCosts) else C.shape[0] - 1
    B = np.full((k + 1, T + 1), np.inf)
    back = np.zeros((k + 1, T + 1), np.int64)
    for j in range(1, T + 1):
        column = C.column(j) if isinstance(C, SegmentCosts) else C[:j, j]
        B[0, j] = column[0]
        for m in range(1, k + 1):
            options = B[m - 1, :j] + column
            back[m, j] = int(np.argmin(options))
            B[m, j] = options[back[m, j]]
    return B, back


def _best(B, back, k: int) -> tuple[float, list[int]]:
    """The least total with at most k switches and its segment starts; ties go to fewer
    switches, then to earlier segment ends."""
    T = B.shape[1] - 1
    m = int(np.argmin(B[: k + 1, T]))  # the first (fewest switches) of equal totals
    starts, j = [], T
    while m > 0:
        j = int(back[m, j])
        starts.append(j)
        m -= 1
    return float(B[: k + 1, T].min()), [0, *reversed(starts)]


def best_switching(C, k: int) -> tuple[float, list[int]]:
    """The least ``sum_j C[s_j, s_{j+1}]`` over at most ``k`` switches (k + 1 segments) and the
    segment starts ``[0, s_1, ..., s_m]``, by dynamic programming over the segment ends (``C``:
    a ``SegmentCosts`` or a ``(T + 1, T + 1)`` table); ties go to fewer switches, then to
    earlier segment ends."""
    return _best(*_recursion(C, k), k)


def k_switch(loss, projection, X, y, k: int, solver=None, costs=None) -> Switching:
    """The best sequence of points of the set with at most ``k`` switches over the rounds
    ``(X, y)`` (rows in the order played), and its loss in each round. ``costs``: the
    ``segment_costs`` of these rounds (they are computed as the recursion asks for them, all
    T (T + 1) / 2 segments once a call; for several k, ``k_switches`` does one pass).

    >>> from ocolearn import Identity, Squared
    >>> X, y = np.ones((6, 1)), np.array([1.0, 1.0, 1.0, 3.0, 3.0, 3.0])
    >>> best = k_switch(Squared(), Identity(), X, y, k=1)
    >>> best.total, best.starts, best.weights.ravel().tolist()
    (0.0, [0, 3], [1.0, 3.0])
    """
    return k_switches(loss, projection, X, y, [k], solver, costs)[k]


def k_switches(loss, projection, X, y, ks, solver=None, costs=None) -> dict[int, Switching]:
    """``k_switch`` for each k of ``ks``, from one pass over the segments: the recursion for
    the largest k holds the best total of every smaller number of switches."""
    C = segment_costs(loss, projection, X, y, solver) if costs is None else costs
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    B, back = _recursion(C, max(ks))
    out = {}
    for k in ks:
        total, starts = _best(B, back, k)
        bounds = list(zip(starts, [*starts[1:], len(y)], strict=True))
        weights = np.stack([C.point(s, e) for s, e in bounds])
        losses = np.concatenate(
            [in_float64(loss.value, X[s:e] @ u, y[s:e]) for (s, e), u in zip(bounds, weights, strict=True)]
        )
        out[k] = Switching(total, starts, weights, losses)
    return out


def interval_regrets(learner_losses, C, length: int):
    """``sum_{s <= t < s+L} loss_t(w_t) - C[s, s+L]`` for every start s = 0..T-L: the regret
    of the learner on each interval of ``length`` rounds against that interval's best point
    (``C``: the ``segment_costs``, or a table of them)."""
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
