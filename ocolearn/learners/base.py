"""The learner interface.

A learner is a pytree of parts (numbers are leaves) with three pure functions:

- ``init(num_features) -> state``, a NamedTuple whose first fields are the round ``t`` (int32,
  starting at 1) and the weights ``w`` (float32), with exactly the shapes and dtypes that
  ``update`` returns;
- ``predict(state, x) -> score`` (``w . x``, or ``(K,)`` scores);
- ``update(state, (x, y)) -> state``, one round of the algorithm;
- ``weighted_update(state, (x, y), weight) -> state``, one round on an example that counts
  ``weight`` times (scikit-learn's ``sample_weight``; the runner calls it only in weighted runs);
- ``unscaled(state)`` and ``mix(state) -> state``, before and after averaging states over
  shards (``ocolearn.parallel``);
- ``weights(state)``, the weights the state stands for (``state.w`` by default).

``loss`` is the loss the runner charges each round with. A learner never loops: the runner
(``ocolearn.run``) does.
"""

from __future__ import annotations

import jax.numpy as jnp

from ocolearn.losses import Weighted
from ocolearn.mirror_maps import Euclidean
from ocolearn.parts import Part, fields_of
from ocolearn.projections import head, keep_last


class Learner(Part, family=True):
    """Base of all learners; see the module docstring for the contract."""

    def init(self, num_features: int):
        raise NotImplementedError

    def predict(self, state, x):
        raise NotImplementedError

    def update(self, state, example):
        raise NotImplementedError

    def weighted_update(self, state, example, weight):
        """One round on an example that counts ``weight`` (>= 0) times: by default the round of
        this learner on the loss ``weight * loss`` (``losses.Weighted``), so that the gradient it
        follows is ``weight * loss'(w . x, y) x``. For OGD without a projection (and the other
        learners that step along the gradient, as scikit-learn's SGD does) this is scikit-learn's
        ``update *= sample_weight``; for an adaptive learner (AdaGrad, FTRL, ONS, the
        parameter-free ones) it is the learner run on the weighted losses, whose gradient bound
        (which some of them assume to be 1) grows with the largest weight. Learners whose step
        is not a multiple of a loss's gradient say their own rule, or take no weight (an error)."""
        if "loss" not in fields_of(type(self)):
            raise ValueError(
                f"{self.name} takes no per-example weight (sample_weight, class_weight): its step is not "
                "a loss's gradient; learners with a loss field, perceptron, pegasos, passive_aggressive and "
                "one_vs_rest over them do"
            )
        return self.replace(loss=Weighted(self.loss, weight)).update(state, example)

    def weights(self, state):
        """The weights ``w`` the state stands for (``state.w`` unless a learner keeps them in
        another form, as Pegasos keeps ``scale * W``)."""
        return state.w

    tidy_every = 0  # > 0: the runner calls ``tidy(state)`` after every so many rounds

    def tidy(self, state):
        """Occasional O(d) upkeep that keeps the state's numbers in range without changing the
        weights it stands for (Pegasos folds its scale); the runner calls it every
        ``tidy_every`` rounds, outside the per-round step. Default: as it is."""
        return state

    def unscaled(self, state):
        """The same weights held in ``state.w`` itself (Pegasos: ``W <- scale W``, ``scale <- 1``),
        so that averaging the floating leaves of states averages the weights they stand for
        (``ocolearn.parallel``). Default: as it is."""
        return state

    def mix(self, state):
        """A state whose floating leaves were averaged over shards (parallel SGD), made
        consistent again (quantities derived from ``w`` recomputed). Default: as it is."""
        return state


def positive(score):
    """The decision of a binary classifier from its score: +1 iff ``score > 0``, so a tie is -1
    (Littlestone 1988's Winnow: 1 iff ``w . x > theta``). One rule for a learner's updates and
    for the model file's predictions (``ocolearn.modelfile.predict``)."""
    return score > 0


def ratio(a, b):
    """``a / b``, and 0 where ``b`` is 0 (a feature never seen, a zero gradient): the guarded
    division of the adaptive learners."""
    return jnp.where(b > 0, a / jnp.where(b > 0, b, 1.0), 0.0)


def average_of_iterates(state):
    """``(1/T) sum_{t<=T} w_{t+1} = ((T + 1) w - u) / T`` after T = t - 1 rounds (Freund and
    Schapire 1999's averaged weights, the online-to-batch average)."""
    rounds = jnp.maximum(state.t - 1, 1).astype(state.w.dtype)
    return ((rounds + 1) * state.w - state.u) / rounds


def mirrored(learner, method, theta):
    """``learner.mirror.method(theta)`` (``"weights"`` or ``"project"``, both P for a
    ``Euclidean`` map); with ``learner.intercept`` and a ``Euclidean`` map, the last coordinate
    (an intercept's weight) left out of P (``keep_last``). The other maps include it: the
    entropies' simplex constrains the sum of every coordinate, the p-norm map couples them all."""
    if learner.intercept and isinstance(learner.mirror, Euclidean):
        return keep_last(learner.mirror.projection, theta, True)
    return getattr(learner.mirror, method)(theta)


def ball_in_norm(ball, v, S, intercept=False):
    """``argmin_{||u|| <= radius} (u - v)' S^-1 (u - v)`` for symmetric positive definite ``S``,
    the generalized projection of ONS (``S = A^-1``) and MetaGrad (``S = Sigma``): with
    ``S = Q diag(kappa) Q'``, ``u = Q in_norm(Q'v, 1 / kappa)`` (``L2Ball.in_norm``).

    ``intercept``: the ball bounds all coordinates but the last, ``u_h``, and the last, ``u_b``,
    is free. Given ``u_h`` the form is least at ``u_b = v_b + S_bh S_hh^-1 (u_h - v_h)``, where it
    is ``(u_h - v_h)' S_hh^-1 (u_h - v_h)`` (``S_hh^-1`` is the Schur complement of ``S^-1``'s
    ``bb`` block): so ``u_h`` is the ball's projection of ``v_h`` in the norm of ``S_hh^-1``."""
    n = v.shape[0] - 1 if intercept else v.shape[0]
    if n == 0:  # an intercept alone: nothing to bound
        return v
    kappa, Q = jnp.linalg.eigh(S[:n, :n])
    h = 1.0 / jnp.maximum(kappa, jnp.finfo(kappa.dtype).tiny)
    u = Q @ ball.in_norm(Q.T @ v[:n], h)
    if not intercept:
        return u
    return jnp.append(u, v[-1] + S[-1, :n] @ (Q @ (h * (Q.T @ (u - v[:n])))))


def outside(ball, v, intercept=False):
    """Whether ``v`` (or each row of ``(k, d)`` ``v``) is outside the ball, its last coordinate
    left out with ``intercept``."""
    v = head(v) if intercept else v
    return jnp.sum(v * v, axis=-1) > ball.radius**2
