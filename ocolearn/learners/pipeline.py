"""A pipeline: preprocessing parts in front of a learner, as one learner.

``Pipeline(steps, learner)`` is itself a ``Learner``, so the one runner (``ocolearn.run``), the
sweeps (``vmap`` over stacked learners), the streams (chunks, checkpoints, resume) and the
parallel runs take it unchanged: its state carries the steps' statistics beside the
learner's state, and one round is::

    predict:  x' = T_n(... T_1(x))            with the statistics before the round
    update:   s_j <- observe_j(s_j, x_{j-1}),  x_j = T_j(s_j, x_{j-1})   for j = 1..n
              learner.update(state, (x_n, y))

(``ocolearn.preprocess``: river's order, the prediction never uses the round's row in the
statistics). Every part is affine in x, so the scores of a pipeline are those of one linear
model of the raw features: ``raw_linear`` folds them into ``(w, offset)`` with
``score = w . x - offset``, what model files store and every door scores with.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ocolearn.learners.base import Learner
from ocolearn.learners.perceptron import Perceptron
from ocolearn.preprocess import Intercept, Preprocess


class PipelineState(NamedTuple):
    inner: Any  # the learner's state
    steps: tuple  # each preprocessing part's state, in order

    @property
    def t(self):
        return self.inner.t

    @property
    def w(self):
        """The learner's weights over the transformed features."""
        return self.inner.w


class Pipeline(Learner, name="pipeline"):
    """Preprocessing ``steps`` (``ocolearn.preprocess``) in front of ``learner``; see the module
    docstring. With no steps it is the learner itself, round for round."""

    steps: tuple = ()
    learner: Learner = Perceptron()

    def check(self, where=""):
        super().check(where)
        for j, step in enumerate(self.steps):
            step.check(f"{where}.steps.{j}" if where else f"steps.{j}")

    from_files = False  # built by the doors from [pipeline] and [learner], not named in a file

    @property
    def loss(self):
        return self.learner.loss

    def to_config(self):
        return {"kind": self.name, "steps": [s.to_config() for s in self.steps], "learner": self.learner.to_config()}

    @property
    def classes(self):
        """The learner's number of classes (0: a binary or real-valued learner), which the runner's
        data checks and the target maps read."""
        return getattr(self.learner, "classes", 0)

    @property
    def tidy_every(self):
        return self.learner.tidy_every

    def dims(self, num_features: int) -> list[int]:
        """The width of the rows entering each step, then the learner's."""
        out = [num_features]
        for step in self.steps:
            out.append(step.out_dim(out[-1]))
        return out

    def init(self, num_features):
        dims = self.dims(num_features)
        states = tuple(step.init(d) for step, d in zip(self.steps, dims, strict=False))
        return PipelineState(self.learner.init(dims[-1]), states)

    def transform(self, states, x):
        """The row as the learner sees it, with the steps' current statistics."""
        for step, s in zip(self.steps, states, strict=True):
            x = step.transform(s, x)
        return x

    def predict(self, state, x):
        return self.learner.predict(state.inner, self.transform(state.steps, x))

    def update(self, state, example, weight=None):
        x, y = example
        states = []
        for step, s in zip(self.steps, state.steps, strict=True):
            s, x = step.step(s, x)
            states.append(s)
        if weight is None:
            return PipelineState(self.learner.update(state.inner, (x, y)), tuple(states))
        return PipelineState(self.learner.weighted_update(state.inner, (x, y), weight), tuple(states))

    def weighted_update(self, state, example, weight):
        """The learner's round weighted (``learner.weighted_update``); the steps' statistics take
        in every row whatever its weight (they describe the rows seen)."""
        return self.update(state, example, weight)

    def weights(self, state):
        return self.learner.weights(state.inner)

    def fed_rows(self, X, order):
        """The rows ``X[order]`` as the learner predicted on them, round by round: each
        transformed with the statistics of the rows before it (dense rows, ``(T, d')``)."""
        X = jnp.asarray(X)

        def one(states, i):
            x = X[i]
            fed = self.transform(states, x)
            return tuple(step.step(s, x)[0] for step, s in zip(self.steps, states, strict=True)), fed

        states = self.init(X.shape[1]).steps
        return np.asarray(jax.lax.scan(one, states, jnp.asarray(order))[1])

    def tidy(self, state):
        return state._replace(inner=self.learner.tidy(state.inner))

    def unscaled(self, state):
        return state._replace(inner=self.learner.unscaled(state.inner))

    def mix(self, state):
        return state._replace(inner=self.learner.mix(state.inner))

    def __getattr__(self, name):
        # ``averaged`` exists exactly where the learner keeps averaged weights (``hasattr``).
        if name == "averaged" and hasattr(self.learner, "averaged"):
            return lambda state: self.learner.averaged(state.inner)
        raise AttributeError(name)


def with_intercept_field(learner: Learner, on: bool = True) -> Learner:
    """``learner`` with ``intercept = on`` wherever it (or a nested learner, as one-vs-rest's
    base) has that field: the last coordinate of its weights is then an intercept that its
    regularizer and projection leave alone."""
    changes = {}
    for name in learner.__dataclass_fields__:
        value = getattr(learner, name)
        if isinstance(value, Learner):
            changes[name] = with_intercept_field(value, on)
    if "intercept" in learner.__dataclass_fields__:
        changes["intercept"] = on
    return learner.replace(**changes) if changes else learner


def with_pipeline(learner: Learner, steps=(), stacked: int = 0) -> Learner:
    """The learner behind ``steps`` (itself when there are none); with an ``Intercept`` step
    its regularizer and projection leave the intercept out (``with_intercept_field``). For a
    stack of ``stacked`` learners (``ocolearn.sweep.stack_values``) the steps' numbers are
    stacked alike."""
    steps = tuple(steps)
    if not steps:
        return learner
    if any(isinstance(s, Intercept) for s in steps):
        learner = with_intercept_field(learner)
    if stacked:
        steps = jax.tree.map(lambda a: jnp.broadcast_to(jnp.asarray(a), (stacked, *jnp.shape(a))), steps)
    return Pipeline(steps, learner)


def steps_of(learner) -> tuple[tuple[Preprocess, ...], Any]:
    """``(steps, learner)`` of a pipeline, ``((), learner)`` of a bare learner."""
    return (learner.steps, learner.learner) if isinstance(learner, Pipeline) else ((), learner)


def raw_linear(learner: Learner, state, weights=None):
    """``(w, offset)`` in float64 such that ``score(x) = w . x - offset`` for every raw row x:
    the steps folded from the last to the first (``Preprocess.fold``), and the learner's own
    score of an all-zero row (Winnow's threshold) in the offset. ``weights`` replaces the
    learner's weights (its averaged ones, say)."""
    steps, inner = steps_of(learner)
    inner_state, step_states = (state.inner, state.steps) if steps else (state, ())
    w = np.asarray(inner.weights(inner_state) if weights is None else weights, np.float64)
    constant = np.asarray(inner.predict(inner_state, np.zeros(w.shape[-1])), np.float64)
    for step, s in zip(reversed(steps), reversed(step_states), strict=True):
        w, b = step.fold(jax.tree.map(np.asarray, s), w)  # (float64 out: Preprocess.fold)
        constant = constant + b
    return w, -constant
