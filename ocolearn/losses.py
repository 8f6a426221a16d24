"""Losses of a linear prediction ``p = w . x`` against a target ``y``.

A loss gives its value ``value(p, y)`` and its closed-form derivative ``derivative(p, y)``
with respect to the prediction. The gradient with respect to the weights follows from the
chain rule, ``grad_w = derivative(w . x, y) * x``, which is how learners use it: one scalar per
example, then one ``add_scaled`` on dense or sparse features. At a kink the derivative is the
subgradient named in each docstring. Classification losses take labels ``y`` in {-1, +1}.

``derivative_bound(p_max, y)`` is ``sup_{|p| <= p_max} |derivative(p, y)|``; with the data's
feature norms it gives the gradient bound G of the OGD regret bound (Zinkevich 2003).

A loss is one function: a subclass that writes only ``value`` gets ``derivative`` from
``jax.grad`` of the value and ``derivative_bound`` from the derivative at ``p = +-p_max`` (exact
for a convex loss, whose derivative is non-decreasing in p); ``FunctionLoss`` wraps a plain
Python function. The closed forms below are written by hand because they are cheap, and
``tests/test_losses.py`` checks them against the derived ones.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from ocolearn.parts import Part, hyper


class Loss(Part, family=True):
    """A convex loss of the prediction: ``value(p, y)``, ``derivative(p, y)``. ``targets``
    declares what ``y`` may be, checked by the runner before a run: ``"real"`` numbers,
    ``"sign"`` labels in {-1, +1}, or ``"class"`` indices 0..K-1."""

    targets = "real"

    def value(self, p, y):
        raise NotImplementedError

    def derivative(self, p, y):
        """``d value / d p`` by ``jax.grad`` (at a kink, the subgradient JAX's rules pick); over
        leading batch axes where ``value`` is not a scalar."""
        p, y = jnp.asarray(p, jnp.result_type(p, jnp.float32)), jnp.asarray(y)
        if jax.eval_shape(self.value, p, y).shape == ():
            return jax.grad(self.value)(p, y)
        return jax.vmap(self.derivative, in_axes=(0, 0 if y.ndim else None))(p, y)

    def derivative_bound(self, p_max, y):
        """``max(|loss'(-p_max, y)|, |loss'(p_max, y)|)``: for a convex loss the derivative is
        non-decreasing in p, so this is its supremum over ``|p| <= p_max``; inf for an
        unbounded ``p_max``."""
        p_max = jnp.asarray(p_max, jnp.result_type(p_max, jnp.float32))
        p_max, y = jnp.broadcast_arrays(p_max, jnp.asarray(y, p_max.dtype))
        finite = jnp.isfinite(p_max)
        p = jnp.where(finite, p_max, 0.0)
        bound = jnp.maximum(jnp.abs(self.derivative(-p, y)), jnp.abs(self.derivative(p, y)))
        return jnp.where(finite, bound, jnp.inf)


class Squared(Loss, name="squared"):
    """``1/2 (p - y)^2``; derivative ``p - y``.

    The factor 1/2 makes the OGD step ``w - eta_t (w . x - y) x`` of the OGD post and of
    scikit-learn's ``SGDRegressor(loss="squared_error")``.
    """

    def value(self, p, y):
        return 0.5 * (p - y) ** 2

    def derivative(self, p, y):
        return p - y

    def derivative_bound(self, p_max, y):
        return p_max + jnp.abs(y)


class Absolute(Loss, name="absolute"):
    """``|p - y|``; derivative ``sign(p - y)`` (0 at ``p = y``)."""

    def value(self, p, y):
        return jnp.abs(p - y)

    def derivative(self, p, y):
        return jnp.sign(p - y)

    def derivative_bound(self, p_max, y):
        return jnp.ones_like(y)


class EpsilonInsensitive(Loss, name="epsilon_insensitive"):
    """``max(0, |p - y| - epsilon)``; derivative ``sign(p - y)`` outside the tube, 0 inside.

    The regression loss of Passive-Aggressive (Crammer et al. 2006, section 5) and of SVR.
    """

    epsilon: float = hyper(0.1, ge=0)

    def value(self, p, y):
        return jnp.maximum(0.0, jnp.abs(p - y) - self.epsilon)

    def derivative(self, p, y):
        return jnp.where(jnp.abs(p - y) > self.epsilon, jnp.sign(p - y), 0.0)

    def derivative_bound(self, p_max, y):
        return jnp.ones_like(y)


class Hinge(Loss, name="hinge"):
    """``max(0, 1 - y p)``; derivative ``-y`` where ``y p < 1``, else 0 (0 at the kink)."""

    targets = "sign"

    def value(self, p, y):
        return jnp.maximum(0.0, 1.0 - y * p)

    def derivative(self, p, y):
        return jnp.where(y * p < 1.0, -y, 0.0)

    def derivative_bound(self, p_max, y):
        return jnp.abs(y)


class PerceptronLoss(Loss, name="perceptron"):
    """``max(0, -y p)``; derivative ``-y`` where ``y p <= 0`` (the Perceptron's update at 0)."""

    targets = "sign"

    def value(self, p, y):
        return jnp.maximum(0.0, -y * p)

    def derivative(self, p, y):
        return jnp.where(y * p <= 0.0, -y, 0.0)

    def derivative_bound(self, p_max, y):
        return jnp.abs(y)


class SquaredHinge(Loss, name="squared_hinge"):
    """``max(0, 1 - y p)^2``; derivative ``-2 y max(0, 1 - y p)`` (smooth)."""

    targets = "sign"

    def value(self, p, y):
        return jnp.maximum(0.0, 1.0 - y * p) ** 2

    def derivative(self, p, y):
        return -2.0 * y * jnp.maximum(0.0, 1.0 - y * p)

    def derivative_bound(self, p_max, y):
        return 2.0 * jnp.abs(y) * jnp.maximum(0.0, 1.0 + jnp.abs(y) * p_max)


class Logistic(Loss, name="logistic"):
    """``log(1 + exp(-y p))``; derivative ``-y sigmoid(-y p)``, both computed stably."""

    targets = "sign"

    def value(self, p, y):
        return jax.nn.softplus(-y * p)

    def derivative(self, p, y):
        return -y * jax.nn.sigmoid(-y * p)

    def derivative_bound(self, p_max, y):
        # |y| sigmoid(-y p) is largest at p = -sign(y) p_max; |y| (its bound over all p) was 5% above
        # it at p_max = 3 (a test now asks every declared bound to be reached).
        return jnp.abs(y) * jax.nn.sigmoid(jnp.abs(y) * p_max)


def _rival(scores, y):
    """The highest-scoring class other than ``y``."""
    return jnp.argmax(jnp.where(jnp.arange(scores.shape[-1]) == y, -jnp.inf, scores))


def _toward_rival(scores, y):
    """``(s_y - s_r, e_r - e_y)``: the margin over the best rival r, and the derivative of
    ``s_r - s_y`` with respect to the scores."""
    r = _rival(scores, y)
    k = jnp.arange(scores.shape[-1])
    return scores[y] - scores[r], (k == r) * 1.0 - (k == y)


class MulticlassPerceptronLoss(Loss, name="multiclass_perceptron"):
    """``max(0, s_r - s_y)`` of scores ``s`` (K,) and class ``y``, r the best rival class;
    derivative ``e_r - e_y`` where ``s_r >= s_y`` (a mistake, ties included), else 0."""

    targets = "class"

    def value(self, p, y):
        return jnp.maximum(0.0, p[_rival(p, y)] - p[y])

    def derivative(self, p, y):
        margin, direction = _toward_rival(p, y)
        return jnp.where(margin <= 0.0, direction, 0.0)

    def derivative_bound(self, p_max, y):
        return jnp.sqrt(2.0) * jnp.ones_like(p_max)


class MulticlassHinge(Loss, name="multiclass_hinge"):
    """``max(0, 1 - (s_y - s_r))`` (Crammer and Singer 2001), r the best rival class;
    derivative ``e_r - e_y`` where the margin is below 1, else 0."""

    targets = "class"

    def value(self, p, y):
        return jnp.maximum(0.0, 1.0 - (p[y] - p[_rival(p, y)]))

    def derivative(self, p, y):
        margin, direction = _toward_rival(p, y)
        return jnp.where(margin < 1.0, direction, 0.0)

    def derivative_bound(self, p_max, y):
        return jnp.sqrt(2.0) * jnp.ones_like(p_max)


class Linear(Loss, name="linear"):
    """``p``, whatever ``y``: the linear loss ``<g_t, w>`` of online linear optimization with the
    example ``x_t = g_t`` (for experts, the vector of the experts' losses); derivative 1."""

    def value(self, p, y):
        return p + 0.0 * y

    def derivative(self, p, y):
        return jnp.ones_like(p + 0.0 * y)

    def derivative_bound(self, p_max, y):
        return jnp.ones_like(p_max + 0.0 * y)


class FunctionLoss(Loss, name="function", static=("fn", "fn_derivative")):
    """A loss given as a function ``fn(p, y)``, convex in p; its derivative is ``fn_derivative``
    if given, else ``jax.grad`` of ``fn``, and its derivative bound is taken at ``p = +-p_max``
    (``Loss.derivative_bound``). Built in code, not from a config file::

        huber = FunctionLoss(lambda p, y: optax.huber_loss(p, y, delta=1.0))
    """

    from_files = False
    fn: Callable = None
    fn_derivative: Callable | None = None

    def value(self, p, y):
        return self.fn(p, y)

    def derivative(self, p, y):
        if self.fn_derivative is None:
            return super().derivative(p, y)
        return self.fn_derivative(p, y)


class Weighted(Loss):
    """``weight * loss(p, y)``: the loss of an example that counts ``weight`` times (scikit-learn's
    ``sample_weight`` times its ``class_weight``); derivative ``weight * loss'(p, y)``. Not
    registered: the runner makes one per round for a weighted run (``Learner.weighted_update``),
    from the round's weight, which may be traced."""

    loss: Loss = None
    weight: float = 1.0

    @property
    def targets(self):
        return self.loss.targets

    def value(self, p, y):
        return self.weight * self.loss.value(p, y)

    def derivative(self, p, y):
        return self.weight * self.loss.derivative(p, y)

    def derivative_bound(self, p_max, y):
        return jnp.abs(self.weight) * self.loss.derivative_bound(p_max, y)
