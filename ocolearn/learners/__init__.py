"""Online learners, one module per family, all run by ``ocolearn.run``."""

from ocolearn.learners.base import Learner
from ocolearn.learners.mira import MIRA, MIRAState, normalized
from ocolearn.learners.ogd import OCPSVM, OGD, OCPSVMState, OGDState, ridge
from ocolearn.learners.one_vs_rest import OneVsRest, OneVsRestState
from ocolearn.learners.passive_aggressive import PassiveAggressive, PAState
from ocolearn.learners.pegasos import Pegasos, PegasosState
from ocolearn.learners.perceptron import Perceptron, PerceptronState
from ocolearn.learners.winnow import Winnow, WinnowState

__all__ = [
    "Learner",
    "MIRA",
    "MIRAState",
    "OCPSVM",
    "OCPSVMState",
    "OGD",
    "OGDState",
    "OneVsRest",
    "OneVsRestState",
    "PAState",
    "PassiveAggressive",
    "Pegasos",
    "PegasosState",
    "Perceptron",
    "PerceptronState",
    "Winnow",
    "WinnowState",
    "normalized",
    "ridge",
]
