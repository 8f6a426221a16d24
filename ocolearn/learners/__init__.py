"""Online learners, one module per family, all run by ``ocolearn.run``."""

from ocolearn.learners.adagrad import AdaGrad, AdaGradState
from ocolearn.learners.base import Learner
from ocolearn.learners.cocob import COCOB, COCOBState
from ocolearn.learners.coin import CoinBetting, CoinState
from ocolearn.learners.confidence import AROW, CW, SCW, GaussianState
from ocolearn.learners.dog import DoG, DoGState
from ocolearn.learners.flh import FLH, FLHState
from ocolearn.learners.from_optax import FromOptax, OptaxState, from_optax
from ocolearn.learners.ftrl import FTRL, FTRLState
from ocolearn.learners.ftrl_proximal import FTRLProximal, FTRLProximalState
from ocolearn.learners.hedge import Hedge
from ocolearn.learners.mechanic import Mechanic, MechanicState
from ocolearn.learners.metagrad import MetaGrad, MetaGradState
from ocolearn.learners.mira import MIRA, MIRAState, normalized
from ocolearn.learners.nag import NAG, NAGState
from ocolearn.learners.ogd import OCPSVM, OGD, OCPSVMState, OGDState, ridge
from ocolearn.learners.omd import OMD, OMDState
from ocolearn.learners.one_vs_rest import OneVsRest, OneVsRestState
from ocolearn.learners.ons import ONS, ONSState, SketchedONS, SketchedONSState
from ocolearn.learners.passive_aggressive import PassiveAggressive, PAState
from ocolearn.learners.pegasos import Pegasos, PegasosState
from ocolearn.learners.perceptron import Perceptron, PerceptronState
from ocolearn.learners.winnow import Winnow, WinnowState

__all__ = [
    "AROW",
    "AdaGrad",
    "AdaGradState",
    "COCOB",
    "COCOBState",
    "DoG",
    "DoGState",
    "FLH",
    "FLHState",
    "Mechanic",
    "MechanicState",
    "MetaGrad",
    "MetaGradState",
    "CW",
    "CoinBetting",
    "CoinState",
    "FromOptax",
    "FTRL",
    "FTRLProximal",
    "FTRLProximalState",
    "FTRLState",
    "Hedge",
    "OMD",
    "OMDState",
    "GaussianState",
    "NAG",
    "NAGState",
    "ONS",
    "ONSState",
    "OptaxState",
    "SCW",
    "SketchedONS",
    "SketchedONSState",
    "from_optax",
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
