"""ocolearn: online convex optimization and online linear learning on JAX.

A learner is a pure ``update(state, (x, y)) -> state`` assembled from pluggable parts (a loss
and its derivative, a rate schedule, a projection), run by one ``lax.scan`` runner under
``jit``. Importing ocolearn first lets XLA:CPU compile those scans into single kernels
(see ``ocolearn.fastloops``).
"""

from ocolearn.fastloops import enable_fast_cpu_loops

enable_fast_cpu_loops()

from ocolearn.checks import NonFiniteError, check_finite  # noqa: E402
from ocolearn.features import Sparse, add_scaled, dot, sqnorm  # noqa: E402
from ocolearn.learners import (  # noqa: E402
    AROW,
    COCOB,
    CW,
    FLH,
    MIRA,
    NAG,
    OCPSVM,
    OGD,
    ONS,
    SCW,
    AdaGrad,
    CoinBetting,
    DoG,
    FromOptax,
    Learner,
    Mechanic,
    MetaGrad,
    OGDState,
    OneVsRest,
    PassiveAggressive,
    PAState,
    Pegasos,
    Perceptron,
    PerceptronState,
    SketchedONS,
    Winnow,
    from_optax,
    ridge,
)
from ocolearn.losses import (  # noqa: E402
    Absolute,
    EpsilonInsensitive,
    Hinge,
    Logistic,
    Loss,
    MulticlassHinge,
    MulticlassPerceptronLoss,
    PerceptronLoss,
    Squared,
    SquaredHinge,
)
from ocolearn.parts import ConfigError  # noqa: E402
from ocolearn.projections import (  # noqa: E402
    Box,
    Identity,
    L1Ball,
    L2Ball,
    NonNegative,
    Projection,
    Simplex,
)
from ocolearn.run import Passes, Result, Trace, run, run_passes  # noqa: E402
from ocolearn.schedules import Constant, InverseTime, InvSqrt, Optax, Schedule, as_schedule  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "AROW",
    "AdaGrad",
    "COCOB",
    "CW",
    "DoG",
    "FLH",
    "Mechanic",
    "MetaGrad",
    "CoinBetting",
    "FromOptax",
    "NAG",
    "ONS",
    "SCW",
    "SketchedONS",
    "from_optax",
    "Absolute",
    "Box",
    "ConfigError",
    "Constant",
    "EpsilonInsensitive",
    "Hinge",
    "Identity",
    "InverseTime",
    "InvSqrt",
    "L1Ball",
    "L2Ball",
    "Learner",
    "MIRA",
    "MulticlassHinge",
    "MulticlassPerceptronLoss",
    "Logistic",
    "Loss",
    "NonNegative",
    "NonFiniteError",
    "OCPSVM",
    "OGD",
    "OGDState",
    "OneVsRest",
    "Optax",
    "Passes",
    "PAState",
    "PassiveAggressive",
    "Pegasos",
    "Perceptron",
    "PerceptronLoss",
    "PerceptronState",
    "Projection",
    "Result",
    "Schedule",
    "Simplex",
    "Sparse",
    "Squared",
    "SquaredHinge",
    "Trace",
    "Winnow",
    "add_scaled",
    "as_schedule",
    "check_finite",
    "dot",
    "enable_fast_cpu_loops",
    "ridge",
    "run",
    "run_passes",
    "sqnorm",
]
