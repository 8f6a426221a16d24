"""ocolearn: online convex optimization and online linear learning on JAX.

A learner is a pure ``update(state, (x, y)) -> state`` assembled from pluggable parts (a loss
and its derivative, a rate schedule, a projection), run by one ``lax.scan`` runner under
``jit``. Importing ocolearn first lets XLA:CPU compile those scans into single kernels
(see ``ocolearn.fastloops``).

``import ocolearn`` itself imports no JAX: the public names below load their modules on first
use (PEP 562), so that ``ocolearn --help`` and the like answer at once. The XLA option is put
in place here, before anything can start JAX's backend.
"""

from __future__ import annotations

import importlib
import sys
import types

from ocolearn.fastloops import enable_fast_cpu_loops

enable_fast_cpu_loops()

__version__ = "0.1.0"

_HOMES = {
    "ocolearn.checks": ("NonFiniteError", "check_finite"),
    "ocolearn.features": ("Sparse", "add_scaled", "dot", "sqnorm"),
    "ocolearn.learners": (
        "AROW",
        "COCOB",
        "CW",
        "FLH",
        "FTRL",
        "MIRA",
        "NAG",
        "OCPSVM",
        "OGD",
        "OMD",
        "ONS",
        "SCW",
        "AdaGrad",
        "CoinBetting",
        "DoG",
        "FromOptax",
        "FTRLProximal",
        "Hedge",
        "Learner",
        "Mechanic",
        "MetaGrad",
        "OGDState",
        "OneVsRest",
        "PassiveAggressive",
        "PAState",
        "Pegasos",
        "Perceptron",
        "PerceptronState",
        "SketchedONS",
        "Winnow",
        "from_optax",
        "ridge",
    ),
    "ocolearn.learners.pipeline": ("Pipeline", "raw_linear", "with_pipeline"),
    "ocolearn.losses": (
        "Absolute",
        "EpsilonInsensitive",
        "FunctionLoss",
        "Hinge",
        "Linear",
        "Logistic",
        "Loss",
        "MulticlassHinge",
        "MulticlassPerceptronLoss",
        "PerceptronLoss",
        "Squared",
        "SquaredHinge",
    ),
    "ocolearn.mirror_maps": ("Euclidean", "MirrorMap", "NegEntropy", "PNorm", "SignedEntropy"),
    "ocolearn.parts": ("ConfigError",),
    "ocolearn.preprocess": ("Intercept", "Normalize", "Preprocess", "Standardize", "default_steps"),
    "ocolearn.projections": ("Box", "Identity", "L1Ball", "L2Ball", "NonNegative", "Projection", "Simplex"),
    "ocolearn.run": ("Passes", "Result", "Trace", "run", "run_passes"),
    "ocolearn.schedules": ("Constant", "InverseTime", "InvSqrt", "Optax", "Schedule", "as_schedule"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted([*_HOME, "enable_fast_cpu_loops"])


def __getattr__(name: str):
    """A public name, imported from its module on first use and kept."""
    if name not in _HOME:
        raise AttributeError(f"module 'ocolearn' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """Importing a submodule binds it as an attribute of its package; where a public name is
    also a submodule's (``ocolearn.run``, the module, holds ``run``, the function), bind the
    public name instead, as an eager ``from ocolearn.run import run`` here would."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _HOME.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
