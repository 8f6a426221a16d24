"""Any optax gradient transformation as an online learner."""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from ocolearn.features import dense, dot
from ocolearn.learners.base import Learner
from ocolearn.losses import Loss, Squared
from ocolearn.parts import ConfigError, Valid
from ocolearn.projections import Identity, Projection, keep_last


class OptaxState(NamedTuple):
    t: jax.Array
    w: jax.Array
    opt: Any  # the transformation's state


# The valid values of optax's common arguments, by name (others: any finite number). A negative
# learning rate is gradient ascent: optax takes it, and the run climbs the loss.
RANGES = {
    "learning_rate": Valid(0.0, low_open=True),
    "momentum": Valid(0.0, 1.0),
    "b1": Valid(0.0, 1.0, high_open=True),
    "b2": Valid(0.0, 1.0, high_open=True),
    "decay": Valid(0.0, 1.0),
    "eps": Valid(0.0),
    "eps_root": Valid(0.0),
    "weight_decay": Valid(0.0),
    "initial_accumulator_value": Valid(0.0),
}


class FromOptax(Learner, name="optax", static=("transformation", "intercept")):
    """An ``optax.GradientTransformation`` as an online learner, with a loss and a set::

        g_t = loss'(w_t . x_t, y_t) x_t
        u_t, s_t = transformation.update(g_t, s_{t-1}, w_t)
        w_{t+1} = P(w_t + u_t)

    ``transformation`` is a ``GradientTransformation`` or the name of an optax optimizer
    (``"adagrad"``, ``"adam"``, ...), built with ``optax.inject_hyperparams`` from
    ``hyperparams``. The numbers in ``hyperparams`` are leaves of the learner, so they can be
    swept without recompiling: they are written into an ``inject_hyperparams`` state every
    round. ``from_optax(optax.sgd(schedule))`` with ``schedule(count) = eta(count + 1)`` is
    ocolearn's OGD with ``eta_t`` (tested). Gradients are dense (O(d) a round).

    ``intercept=True``: the last coordinate of w is an intercept's weight, left out of P
    (``keep_last``). A weight decay inside the transformation (``adamw``'s ``weight_decay``) is
    the transformation's own and shrinks every coordinate, the intercept's included.

    **Its defaults need tuning**: it has none to run with: optax's ``learning_rate`` must be set
    (``hyperparams.learning_rate``), so it is left out of the comparison with the constant predictor
    (``benchmarks/default_learner.py --registry``; docs/choosing-a-learner.md).
    """

    transformation: str | optax.GradientTransformation = "sgd"
    hyperparams: dict | None = None
    loss: Loss = Squared()
    projection: Projection = Identity()
    intercept: bool = False

    def check(self, where=""):
        """The name is an optax optimizer, ``hyperparams`` are its arguments, finite numbers."""
        super().check(where)
        prefix = f"{where}." if where else ""
        if isinstance(self.transformation, str):
            maker = getattr(optax, self.transformation, None)
            if not callable(maker) or self.transformation.startswith("_"):
                key = prefix + "transformation"
                raise ConfigError(
                    f"{key} must name an optax optimizer (sgd, adam, ...), got {self.transformation!r}", key
                )
            signature = inspect.signature(maker)
            known = signature.parameters
            required = [p for p in known.values() if p.default is p.empty and p.kind != p.VAR_KEYWORD]
            returns = signature.return_annotation
            if any(p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL) for p in required) or (
                returns is not signature.empty and "GradientTransformation" not in str(returns)
            ):  # (tree_map_params, l2_loss, ...: optax functions that make no transformation)
                key = prefix + "transformation"
                raise ConfigError(
                    f"{key}: optax.{self.transformation} is not an optimizer (a gradient transformation made "
                    "from numbers); name one such as sgd or adam",
                    key,
                )
            for name in self.hyperparams or {}:
                if name not in known:
                    key = f"{prefix}hyperparams.{name}"
                    raise ConfigError(
                        f"{key} is not an argument of optax.{self.transformation}: {', '.join(known)}", key
                    )
            for p in required:
                if p.name not in (self.hyperparams or {}):
                    key = f"{prefix}hyperparams.{p.name}"
                    raise ConfigError(
                        f"{key} is missing: optax.{self.transformation} needs {p.name}: set {key}",
                        key,
                    )
        for name, value in (self.hyperparams or {}).items():
            RANGES.get(name, Valid()).check(value, f"{prefix}hyperparams.{name}")

    def _tx(self) -> optax.GradientTransformation:
        if isinstance(self.transformation, str):
            maker = getattr(optax, self.transformation)
            return optax.inject_hyperparams(maker)(**(self.hyperparams or {}))
        return self.transformation

    def _with_hyperparams(self, opt):
        if not self.hyperparams:
            return opt
        if not hasattr(opt, "hyperparams"):
            raise ValueError("hyperparams need a transformation made by optax.inject_hyperparams")
        values = {k: jnp.asarray(v, jnp.asarray(opt.hyperparams[k]).dtype) for k, v in self.hyperparams.items()}
        return opt._replace(hyperparams={**opt.hyperparams, **values})

    def init(self, num_features):
        w = jnp.zeros((num_features,), jnp.float32)
        return OptaxState(jnp.ones((), jnp.int32), w, self._with_hyperparams(self._tx().init(w)))

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        x, y = example
        g = (self.loss.derivative(dot(state.w, x), y) * dense(x)).astype(state.w.dtype)
        updates, opt = self._tx().update(g, self._with_hyperparams(state.opt), state.w)
        w = keep_last(self.projection, optax.apply_updates(state.w, updates), self.intercept).astype(state.w.dtype)
        return OptaxState(state.t + 1, w, opt)


def from_optax(transformation, loss: Loss | None = None, projection: Projection | None = None, **hyperparams):
    """``FromOptax(transformation, hyperparams, loss, projection)`` (squared loss and no set by
    default); e.g.
    ``from_optax(optax.inject_hyperparams(optax.adagrad)(learning_rate=0.1), Hinge(), learning_rate=0.1)``
    or ``from_optax("adagrad", learning_rate=0.1)``."""
    return FromOptax(transformation, hyperparams or None, loss or Squared(), projection or Identity())
