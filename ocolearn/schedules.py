"""Rate schedules ``t -> eta_t`` of the round ``t = 1, 2, ...`` (an int32 array).

Any optax schedule (a callable of the step count) is accepted wherever a schedule is:
``as_schedule(optax.cosine_decay_schedule(0.1, 1000))``. optax counts steps from 0, so round t
uses the optax schedule's value at step ``t - 1``.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp

from ocolearn.parts import Part, hyper


class Schedule(Part, family=True):
    """A rate schedule: ``schedule(t) -> eta_t`` for ``t >= 1``."""

    def __call__(self, t):
        raise NotImplementedError


def _float(t):
    return jnp.asarray(t, jnp.float32)


class Constant(Schedule, name="constant"):
    """``eta_t = eta`` (the post's ``fixedRate``)."""

    eta: float = hyper(0.1, gt=0)

    def __call__(self, t):
        return self.eta * jnp.ones_like(_float(t))


class InvSqrt(Schedule, name="inv_sqrt"):
    """``eta_t = eta / sqrt(t)``: Zinkevich (2003), Theorem 1, gives O(sqrt(T)) regret."""

    eta: float = hyper(1.0, gt=0)

    def __call__(self, t):
        return self.eta / jnp.sqrt(_float(t))


class InverseTime(Schedule, name="inverse_time"):
    """``eta_t = 1 / (lam t)``: the Pegasos rate (Shalev-Shwartz et al. 2007) for a
    ``lam``-strongly convex objective (Hazan, Agarwal and Kale 2007, Theorem 1)."""

    lam: float = hyper(1.0, gt=0)

    def __call__(self, t):
        return 1.0 / (self.lam * _float(t))


class Optax(Schedule, name="optax", static=("schedule",)):
    """An optax schedule ``count -> value`` used as ``eta_t = schedule(t - 1)``."""

    from_files = False  # a Python callable: built in code, not from a config file
    schedule: Callable = None

    def __call__(self, t):
        return _float(self.schedule(jnp.asarray(t) - 1))


def as_schedule(rate) -> Schedule:
    """A ``Schedule`` from a schedule, a number (constant rate) or an optax schedule."""
    if isinstance(rate, Schedule):
        return rate
    if callable(rate):
        return Optax(rate)
    return Constant(rate)
