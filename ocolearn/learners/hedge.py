"""Hedge over N experts (Freund and Schapire 1997): EG on the simplex with linear losses."""

from __future__ import annotations

import math

from ocolearn.features import dot
from ocolearn.learners.base import Learner
from ocolearn.learners.omd import OMD
from ocolearn.losses import Linear
from ocolearn.mirror_maps import NegEntropy
from ocolearn.parts import hyper
from ocolearn.schedules import Constant


class Hedge(Learner, name="hedge"):
    """Hedge, the exponential weights over N experts (Freund and Schapire 1997; Littlestone and
    Warmuth 1994). The example is the vector of the experts' losses ``x_t = l_t`` in [0, 1]^N
    (``y`` is unused); the learner's loss is ``w_t . l_t``, the expected loss of the expert
    drawn from ``w_t``::

        w_{t+1,i} = w_{t,i} exp(-eta l_{t,i}) / sum_j w_{t,j} exp(-eta l_{t,j}),   w_1 = 1/N

    that is, ``OMD(Linear(), Constant(eta), NegEntropy(1))``, which it runs. Against the best
    expert its regret after t rounds is at most ``ln N / eta + eta t / 8`` (Hoeffding's lemma;
    Cesa-Bianchi and Lugosi 2006, Theorem 2.2), and ``eta = sqrt(8 ln N / T)`` (``tuned``)
    gives ``sqrt(T ln N / 2)`` after T rounds (``ocolearn.regret.hedge_regret_bound``).

    >>> import jax.numpy as jnp
    >>> hedge = Hedge(jnp.log(3.0))
    >>> state = hedge.update(hedge.init(2), (jnp.array([1.0, 0.0]), 0.0))
    >>> [round(v, 4) for v in state.w.tolist()]
    [0.25, 0.75]

    **Its defaults need tuning** in the sense that it is not a learner of feature rows: its rows are
    experts' losses in [0, 1]^N and its targets unused, so on a table it loses to the majority class
    everywhere (wine: 0.178 against 0.467) (``benchmarks/default_learner.py --registry``;
    docs/choosing-a-learner.md). Use it on experts' losses, with ``eta`` from ``tuned``.
    """

    eta: float = hyper(1.0, gt=0)

    @classmethod
    def tuned(cls, T: int, N: int) -> Hedge:
        """Hedge with ``eta = sqrt(8 ln N / T)``, the rate that minimizes the bound at T."""
        return cls(math.sqrt(8.0 * math.log(N) / T))

    @property
    def loss(self):
        return Linear()

    def _omd(self) -> OMD:
        return OMD(Linear(), Constant(self.eta), NegEntropy())

    def init(self, num_features):
        return self._omd().init(num_features)

    def predict(self, state, x):
        return dot(state.w, x)

    def update(self, state, example):
        return self._omd().update(state, example)
