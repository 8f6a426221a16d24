"""Pluggable parts as pytrees: numbers are leaves, choices are structure.

Every loss, schedule, projection and learner is a frozen dataclass registered as a pytree
(``register``). Its numeric fields (a rate, a radius, a C) are array
leaves, so ``jax.jit`` sees a new value as new data and never recompiles, and a stack of parts
with the same structure can be swept with ``jax.vmap``. Fields named in ``static`` (a Python
callable, a number of classes) are part of the tree structure.

A subclass names itself with ``name=`` and is then found by that name in its family's registry,
which is how configuration files build parts::

    class L2Ball(Projection, name="l2_ball"):
        radius: float = hyper(1.0, gt=0)

``hyper`` declares a number's valid values next to its default, and ``Part.check`` (run when a
part is made, and by the runner and sweeps on stacked values) enforces them, so a bad setting
is one ``ConfigError`` naming the key before any data is read, not NaN weights later. Traced
values (inside ``jit``/``vmap``) are not checked; a sweep's stacked arrays are checked element
by element.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import jax
import numpy as np


def cond(pred, true_fun, false_fun, *operands):
    """``jax.lax.cond(pred, true_fun, false_fun, *operands)`` inside a compiled function (a
    run's scan, ``jit``, ``vmap``: there only the taken branch runs, or both and a select under
    ``vmap``); outside one, where ``pred`` is a concrete value, the taken branch called as
    Python. ``lax.cond`` called eagerly traces its branches afresh and compiles them at every
    call (60 to 70 ms each on this project's 2-core machine, 2026-12-02), so a learner's
    ``update`` or a projection called step by step would compile every round."""
    if isinstance(pred, jax.core.Tracer):
        return jax.lax.cond(pred, true_fun, false_fun, *operands)
    return true_fun(*operands) if bool(pred) else false_fun(*operands)


class ConfigError(ValueError):
    """A setting out of its declared range or of the wrong kind. For a hyperparameter the
    message starts with its key, ``lam must be > 0, got 0``, and ``key`` holds it, so that
    whoever built the part can say where it sits (``at``): ``learner.base.lam must be ...``,
    or a door its own name for the setting (``named``: ``--passes``, ``run.passes``). A message
    that names its key elsewhere too is made by ``keyed``."""

    def __init__(self, message: str, key: str | None = None, template: str | None = None):
        super().__init__(message)
        self.key, self.template = key, template

    @classmethod
    def keyed(cls, template: str, key: str) -> ConfigError:
        """The error whose message is ``template`` with ``{key}`` where it names its key."""
        return cls(template.replace("{key}", key), key, template)

    def named(self, key: str) -> ConfigError:
        """The same error with its key called ``key`` wherever the message names it (its start,
        unless made by ``keyed``)."""
        return ConfigError.keyed(self.template or "{key}" + str(self)[len(self.key) :], key)

    def at(self, prefix: str) -> ConfigError:
        """The same error for the part found at ``prefix``: its key becomes ``prefix.key``."""
        if self.key is None or not prefix:
            return self
        return self.named(f"{prefix}.{self.key}")


def _number(x) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else f"{float(x):g}"


@dataclasses.dataclass(frozen=True)
class Valid:
    """The valid values of a hyperparameter: a finite number in an interval (each bound open
    or closed), an integer if ``integer``, one of ``choices`` if given, or one of ``also``
    (values with a special meaning outside the interval, like ``classes = 0`` for binary)."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    choices: tuple = ()
    also: tuple = ()

    def contains(self, v: np.ndarray) -> np.ndarray:
        """Element by element: which of the values ``v`` are valid."""
        if self.choices:
            return np.isin(v, self.choices)
        ok = np.isfinite(v) & ((v > self.low) if self.low_open else (v >= self.low))
        ok &= (v < self.high) if self.high_open else (v <= self.high)
        if self.integer:
            ok &= v == np.round(v)
        return ok | np.isin(v, self.also) if self.also else ok

    def __str__(self) -> str:
        if self.choices:
            return "one of " + ", ".join(_number(c) for c in self.choices)
        kind = "an integer " if self.integer else ""
        low, high = _number(self.low), _number(self.high)
        if self.low > -math.inf and self.high < math.inf:
            text = f"{kind}in {'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}"
        elif self.low > -math.inf:
            text = f"{kind}{'>' if self.low_open else '>='} {low}"
        elif self.high < math.inf:
            text = f"{kind}{'<' if self.high_open else '<='} {high}"
        else:
            text = kind.strip() or "a finite number"
        return text + "".join(f" or {_number(a)}" for a in self.also)

    def check(self, value, key: str) -> None:
        """Raise ``ConfigError`` if a concrete ``value`` (a number or an array of them, every
        element checked) is not valid; None (an optional number left out) and traced values
        pass."""
        v = concrete(value)
        if v is None:
            return
        if v.dtype.kind not in "iuf":
            raise ConfigError(f"{key} must be a number ({self}), got {value!r}", key)
        ok = self.contains(v)
        if not ok.all():
            where = np.unravel_index(np.argmin(ok), v.shape)
            at = f" (at index {', '.join(map(str, where))})" if v.ndim else ""
            raise ConfigError(f"{key} must be {self}, got {_number(v[where])}{at}", key)


def hyper(default, *, gt=None, ge=None, lt=None, le=None, integer=False, choices=(), also=()):
    """A numeric field with its valid values declared: ``lam: float = hyper(1e-4, gt=0)``
    (``gt``/``ge``/``lt``/``le`` bounds, ``integer``, a set of ``choices``, or special values
    ``also`` allowed outside the bounds)."""
    low = gt if gt is not None else ge if ge is not None else -math.inf
    high = lt if lt is not None else le if le is not None else math.inf
    valid = Valid(low, high, gt is not None, lt is not None, integer, tuple(choices), tuple(also))
    return dataclasses.field(default=default, metadata={"valid": valid})


def concrete(value) -> np.ndarray | None:
    """``value`` as a NumPy array, or None where it is None or traced (inside ``jit`` or
    ``vmap`` nothing is checked: the values were checked where they were made concrete)."""
    if value is None or isinstance(value, jax.core.Tracer):
        return None
    return np.asarray(value)


def register(cls: type, data_fields, meta_fields) -> type:
    """Register a frozen dataclass as a pytree node: ``data_fields`` are children (leaves or
    subtrees), ``meta_fields`` are static structure.

    Not ``jax.tree_util.register_dataclass``: in JAX 0.10 its tree structures of two different
    classes with the same fields compare equal, so jit's cache could hand one learner the
    program compiled for another (``tests/test_parts.py``). Unflattening skips ``__init__``, so
    leaves may be tracers or batched values.
    """
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten_with_keys(x):
        children = [(jax.tree_util.GetAttrKey(n), getattr(x, n)) for n in data_fields]
        return children, tuple(getattr(x, n) for n in meta_fields)

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(meta, children):
        obj = object.__new__(cls)
        for name, value in zip(data_fields + meta_fields, (*children, *meta), strict=True):
            object.__setattr__(obj, name, value)
        return obj

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)
    return cls


class Part:
    """Base of every pluggable part. Subclass with ``family=True`` to start a new registry."""

    registry: ClassVar[dict[str, type]]
    name: ClassVar[str]
    static_fields: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, *, name: str | None = None, family: bool = False, static=(), **kw):
        super().__init_subclass__(**kw)
        if family:
            cls.registry = {}
            return
        cls.static_fields = tuple(static) + tuple(getattr(cls, "static_fields", ()))
        dataclasses.dataclass(frozen=True)(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        register(cls, [n for n in names if n not in cls.static_fields], [n for n in names if n in cls.static_fields])
        if name is not None:
            if name in cls.registry:
                raise ValueError(f"two parts are named {name!r}")
            cls.name = name
            cls.registry[name] = cls

    def __post_init__(self):
        self.check()

    def check(self, where: str = "") -> None:
        """Raise ``ConfigError`` naming ``where.field`` where a number breaks its declared range
        (``hyper``), here or in a nested part. Subclasses add checks that involve several fields
        (and call this one)."""
        for f in dataclasses.fields(self):
            value, key = getattr(self, f.name), f"{where}.{f.name}" if where else f.name
            if isinstance(value, Part):
                value.check(key)
            elif "valid" in f.metadata:
                f.metadata["valid"].check(value, key)

    def replace(self, **changes: Any):
        """A copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def to_config(self) -> dict[str, Any]:
        """The part as a config table: ``{"kind": name, field: value, ...}``, nested for parts;
        fields that are None (an optional array left at its default) are left out."""
        table: dict[str, Any] = {"kind": self.name}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, Part):
                value = value.to_config()
            elif hasattr(value, "tolist"):
                value = value.tolist()
            table[f.name] = value
        return table


def fields_of(cls: type) -> dict[str, dataclasses.Field]:
    """The dataclass fields of a part class, by name."""
    return {f.name: f for f in dataclasses.fields(cls)}
