"""One-vs-rest: K binary learners, one per class, as one multiclass learner."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ocolearn.learners.base import Learner
from ocolearn.learners.perceptron import Perceptron
from ocolearn.losses import MulticlassHinge
from ocolearn.parts import ConfigError, hyper


class OneVsRestState(NamedTuple):
    t: jax.Array
    inner: Any  # the binary learner's state, stacked over the K classes

    @property
    def w(self):
        """The (K, d) stacked weights of the binary learners' states."""
        return self.inner.w


class OneVsRest(Learner, name="one_vs_rest", static=("classes",)):
    """K copies of a binary learner (labels 0..K-1): copy k sees every example with label
    ``+1`` if ``y_t = k`` and ``-1`` otherwise, and the prediction is ``argmax_k w_k . x``::

        w_{k, t+1} = base.update(w_{k, t}, (x_t, 2 [y_t = k] - 1))   for k = 1..K

    (Rifkin and Klautau 2004), the K updates of a round run as one ``vmap``. scikit-learn's
    ``Perceptron``, ``PassiveAggressiveClassifier`` and ``SGDClassifier`` train K > 2 classes
    this way, so with the same binary rule the weights are theirs. Rounds are charged the
    multiclass hinge of the K scores.
    """

    base: Learner = Perceptron()
    classes: int = hyper(2, ge=2, integer=True)

    def check(self, where=""):
        super().check(where)
        if self.base.loss.targets == "class":
            key = f"{where}.base" if where else "base"
            raise ConfigError(f"{key} must be a binary learner, got {self.base.name} (multiclass)", key)

    @property
    def loss(self):
        return MulticlassHinge()

    def init(self, num_features):
        one = self.base.init(num_features)
        return OneVsRestState(one.t, jax.tree.map(lambda a: jnp.broadcast_to(a, (self.classes, *a.shape)), one))

    def predict(self, state, x):
        return jax.vmap(self.base.predict, in_axes=(0, None))(state.inner, x)

    def update(self, state, example, weight=None):
        x, y = example
        signs = jnp.where(jnp.arange(self.classes) == y, 1.0, -1.0).astype(jnp.float32)
        if weight is None:
            inner = jax.vmap(lambda s, label: self.base.update(s, (x, label)))(state.inner, signs)
        else:
            weights = jnp.broadcast_to(jnp.asarray(weight, jnp.float32), (self.classes,))
            inner = jax.vmap(lambda s, label, v: self.base.weighted_update(s, (x, label), v))(
                state.inner, signs, weights
            )
        return OneVsRestState(state.t + 1, inner)

    def weighted_update(self, state, example, weight):
        """Copy k's round with weight ``weight`` (a number, or ``(K,)``: one per copy), by
        ``base.weighted_update``. scikit-learn's one-vs-rest weights copy k's examples by
        ``sample_weight``, times ``class_weight[k]`` on its positives only: the estimators pass
        those ``(K,)`` weights."""
        return self.update(state, example, weight)

    def weights(self, state):
        return jax.vmap(self.base.weights)(state.inner)

    def averaged(self, state):
        """Each class's averaged weights, where the binary learner keeps them."""
        return jax.vmap(self.base.averaged)(state.inner)

    @property
    def tidy_every(self):
        return self.base.tidy_every

    def tidy(self, state):
        return OneVsRestState(state.t, jax.vmap(self.base.tidy)(state.inner))

    def unscaled(self, state):
        return OneVsRestState(state.t, jax.vmap(self.base.unscaled)(state.inner))

    def mix(self, state):
        return OneVsRestState(state.t, jax.vmap(self.base.mix)(state.inner))
