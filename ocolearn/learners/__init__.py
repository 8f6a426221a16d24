"""Online learners, one module per family, all run by ``ocolearn.run``."""

from ocolearn.learners.base import Learner
from ocolearn.learners.ogd import OGD, OGDState, ridge

__all__ = ["Learner", "OGD", "OGDState", "ridge"]
