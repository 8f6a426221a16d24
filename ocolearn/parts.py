"""Pluggable parts as pytrees: numbers are leaves, choices are structure.

Every loss, schedule, projection and learner is a frozen dataclass registered as a pytree
(``register``). Its numeric fields (a rate, a radius, a C) are array
leaves, so ``jax.jit`` sees a new value as new data and never recompiles, and a stack of parts
with the same structure can be swept with ``jax.vmap``. Fields named in ``static`` (a Python
callable, a number of classes) are part of the tree structure.

A subclass names itself with ``name=`` and is then found by that name in its family's registry,
which is how configuration files build parts::

    class L2Ball(Projection, name="l2_ball"):
        radius: float = 1.0
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax


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
