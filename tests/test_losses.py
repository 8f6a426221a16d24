import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ocolearn.losses import (
    Absolute,
    EpsilonInsensitive,
    FunctionLoss,
    Hinge,
    Linear,
    Logistic,
    Loss,
    MulticlassHinge,
    MulticlassPerceptronLoss,
    PerceptronLoss,
    Squared,
    SquaredHinge,
)

REGRESSION = [Squared(), Absolute(), EpsilonInsensitive(0.25), Linear(), FunctionLoss(lambda p, y: jnp.cosh(p - y))]
CLASSIFICATION = [Hinge(), SquaredHinge(), Logistic(), PerceptronLoss()]
finite = st.floats(-50, 50, allow_nan=False, width=32)


def kinks(loss, y):
    """Points where the loss is not differentiable (its derivative there is a convention)."""
    if isinstance(loss, Absolute):
        return [y]
    if isinstance(loss, EpsilonInsensitive):
        return [y - loss.epsilon, y + loss.epsilon]
    if isinstance(loss, Hinge):
        return [1.0 / y]
    if isinstance(loss, PerceptronLoss):
        return [0.0]
    return []


def test_every_registered_loss_is_tested():
    multiclass = {"multiclass_hinge", "multiclass_perceptron"}  # tests/test_multiclass.py
    tested = {type(loss) for loss in REGRESSION + CLASSIFICATION}
    assert tested == {cls for name, cls in Loss.registry.items() if name not in multiclass}


@pytest.mark.parametrize("loss", REGRESSION + CLASSIFICATION, ids=lambda loss: loss.name)
@given(p=finite, y=finite, label=st.sampled_from([-1.0, 1.0]))
def test_derivative_is_jax_grad_of_value(loss, p, y, label):
    y = label if loss in CLASSIFICATION else y
    assume(all(abs(p - k) > 1e-3 for k in kinks(loss, y)))
    expected = jax.grad(loss.value)(jnp.float32(p), jnp.float32(y))
    np.testing.assert_allclose(loss.derivative(jnp.float32(p), jnp.float32(y)), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss", REGRESSION + CLASSIFICATION, ids=lambda loss: loss.name)
def test_derivative_bound_holds_on_the_interval(loss):
    for y in (-1.0, 1.0, 2.5):
        p_max = 3.0
        p = np.linspace(-p_max, p_max, 2001, dtype=np.float32)
        bound = float(loss.derivative_bound(p_max, jnp.float32(y)))
        assert np.max(np.abs(loss.derivative(p, np.float32(y)))) <= bound * (1 + 1e-6)


def test_closed_forms():
    assert Squared().value(3.0, 1.0) == 2.0 and Squared().derivative(3.0, 1.0) == 2.0
    assert Absolute().value(-1.0, 1.0) == 2.0 and Absolute().derivative(-1.0, 1.0) == -1.0
    assert EpsilonInsensitive(0.5).value(2.0, 1.0) == 0.5
    assert EpsilonInsensitive(0.5).derivative(1.2, 1.0) == 0.0
    assert Hinge().value(0.5, 1.0) == 0.5 and Hinge().derivative(0.5, -1.0) == 1.0
    assert SquaredHinge().value(-1.0, 1.0) == 4.0 and SquaredHinge().derivative(-1.0, 1.0) == -4.0
    np.testing.assert_allclose(Logistic().value(0.0, 1.0), np.log(2.0), rtol=1e-6)
    np.testing.assert_allclose(Logistic().derivative(0.0, 1.0), -0.5)


def test_kink_conventions_are_subgradients():
    # At a kink the derivative must lie between the left and right derivatives.
    kinks = [
        (Absolute(), 1.0, 1.0),
        (Hinge(), 1.0, 1.0),
        (EpsilonInsensitive(0.5), 1.5, 1.0),
        (PerceptronLoss(), 0.0, 1.0),
    ]
    for loss, p, y in kinks:
        d = float(loss.derivative(jnp.float32(p), jnp.float32(y)))
        left = float(loss.derivative(jnp.float32(p - 1e-3), jnp.float32(y)))
        right = float(loss.derivative(jnp.float32(p + 1e-3), jnp.float32(y)))
        assert min(left, right) <= d <= max(left, right)


def test_logistic_is_stable_for_large_margins():
    assert np.isfinite(Logistic().value(1e4, -1.0)) and float(Logistic().value(1e4, -1.0)) == pytest.approx(1e4)
    assert float(Logistic().derivative(1e4, -1.0)) == 1.0
    assert float(Logistic().value(1e4, 1.0)) == 0.0


@pytest.mark.parametrize(
    "loss", REGRESSION + CLASSIFICATION + [MulticlassHinge(), MulticlassPerceptronLoss()], ids=lambda loss: loss.name
)
def test_derived_derivative_equals_the_closed_form(loss):
    # Loss.derivative is jax.grad of the value: what a loss written as one function gets.
    rng = np.random.default_rng(0)
    if loss.name.startswith("multiclass"):
        S, Y = rng.normal(size=(50, 4)).astype(np.float32), rng.integers(0, 4, 50)
        top = np.sort(S, axis=1)
        margin = S[np.arange(50), Y] - np.where(np.eye(4, dtype=bool)[Y], -np.inf, S).max(axis=1)
        keep = (top[:, -1] - top[:, -2] > 1e-3) & (np.abs(np.abs(margin) - 1) > 1e-3) & (np.abs(margin) > 1e-3)
        derived = jax.vmap(lambda s, y: Loss.derivative(loss, s, y))(S, Y)
        np.testing.assert_allclose(derived[keep], jax.vmap(loss.derivative)(S, Y)[keep], atol=1e-6)
        return
    y = rng.choice([-1.0, 1.0], 200) if loss in CLASSIFICATION else rng.normal(size=200)
    p = rng.normal(0, 3, 200)
    keep = [all(abs(pi - k) > 1e-3 for k in kinks(loss, yi)) for pi, yi in zip(p, y, strict=True)]
    p, y = jnp.float32(p[keep]), jnp.float32(y[keep])
    np.testing.assert_allclose(Loss.derivative(loss, p, y), loss.derivative(p, y), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss", REGRESSION + CLASSIFICATION, ids=lambda loss: loss.name)
def test_derived_derivative_bound_is_the_supremum(loss):
    # Loss.derivative_bound: |loss'| at p = +-p_max, the supremum over |p| <= p_max for a convex
    # loss; never above the closed form, and reached on a fine grid.
    p = np.linspace(-3.0, 3.0, 6001, dtype=np.float32)
    for y in (-1.0, 1.0, 2.5):
        derived = float(Loss.derivative_bound(loss, 3.0, jnp.float32(y)))
        assert derived <= float(loss.derivative_bound(3.0, jnp.float32(y))) * (1 + 1e-6)
        np.testing.assert_allclose(derived, np.max(np.abs(loss.derivative(p, np.float32(y)))), rtol=1e-5)
    assert np.isinf(Loss.derivative_bound(loss, np.inf, 1.0)) or loss.derivative_bound(np.inf, 1.0) <= 1


def test_a_loss_is_one_function():
    quartic = FunctionLoss(lambda p, y: (p - y) ** 4)
    assert float(quartic.derivative(2.0, 1.0)) == 4.0
    np.testing.assert_allclose(quartic.derivative(jnp.array([0.0, 3.0]), jnp.array([1.0, 1.0])), [-4.0, 32.0])
    assert float(quartic.derivative_bound(2.0, 1.0)) == 108.0  # |4 (-2 - 1)^3|
    assert float(FunctionLoss(lambda p, y: p, lambda p, y: 7.0 + 0 * p).derivative(1.0, 0.0)) == 7.0


def test_the_derived_bound_gives_the_regret_bound_its_G():
    from ocolearn.projections import L2Ball
    from ocolearn.regret import gradient_bound

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    squared = FunctionLoss(lambda p, y: 0.5 * (p - y) ** 2)
    assert gradient_bound(squared, L2Ball(2.0), X, y) == pytest.approx(gradient_bound(Squared(), L2Ball(2.0), X, y))


# Values and derivatives at the kinks and on each side of them, written out by hand: a threshold
# moved (``< 1`` to ``<= 1`` or ``< 2``, ``<= 0`` to ``< 0``) or a floor changed (``max(1, .)``)
# changes one of these numbers (mutation testing found such mutants surviving the gradient checks).
KINKS = [
    # loss, prediction p, target y, value, derivative
    (Hinge(), 0.5, 1.0, 0.5, -1.0),
    (Hinge(), 1.0, 1.0, 0.0, 0.0),  # at the kink: 0, as the docstring says
    (Hinge(), 1.5, 1.0, 0.0, 0.0),
    (Hinge(), -1.5, -1.0, 0.0, 0.0),
    (Hinge(), -0.5, -1.0, 0.5, 1.0),
    (PerceptronLoss(), 0.5, 1.0, 0.0, 0.0),
    (PerceptronLoss(), 0.0, 1.0, 0.0, -1.0),  # a score of 0 is a mistake: the Perceptron's update
    (PerceptronLoss(), -2.0, 1.0, 2.0, -1.0),
    (PerceptronLoss(), 2.0, -1.0, 2.0, 1.0),
    (EpsilonInsensitive(), 0.5, 0.0, 0.4, 1.0),  # the default tube is 0.1 wide
    (EpsilonInsensitive(), 0.1, 0.0, 0.0, 0.0),  # on the tube's edge: inside
    (EpsilonInsensitive(), -0.5, 0.0, 0.4, -1.0),
    (EpsilonInsensitive(0.5), 0.25, 0.0, 0.0, 0.0),
]


@pytest.mark.parametrize("loss, p, y, value, derivative", KINKS, ids=lambda v: getattr(v, "name", None))
def test_values_and_derivatives_at_the_kinks_and_beside_them(loss, p, y, value, derivative):
    assert float(loss.value(jnp.float32(p), jnp.float32(y))) == pytest.approx(value, abs=1e-7)
    assert float(loss.derivative(jnp.float32(p), jnp.float32(y))) == derivative


def test_each_loss_is_registered_under_its_config_name_with_its_targets():
    names = {
        "squared": (Squared, "real"),
        "absolute": (Absolute, "real"),
        "epsilon_insensitive": (EpsilonInsensitive, "real"),
        "hinge": (Hinge, "sign"),
        "squared_hinge": (SquaredHinge, "sign"),
        "perceptron": (PerceptronLoss, "sign"),
        "logistic": (Logistic, "sign"),
    }
    for name, (cls, targets) in names.items():
        assert Loss.registry[name] is cls and cls.targets == targets, name


# Mutation testing (mutmut 3 on losses.py against this file) left these alive; each test below
# kills some: a declared bound made looser, a weight divided, a tie broken the other way, a dtype
# dropped.


@pytest.mark.parametrize("loss", REGRESSION + CLASSIFICATION, ids=lambda loss: loss.name)
def test_each_declared_derivative_bound_is_reached(loss):
    # The bound is the supremum over |p| <= p_max, not just above it (a factor 3 for 2 still holds).
    p = np.linspace(-3.0, 3.0, 6001, dtype=np.float32)
    for y in (-1.0, 1.0, 2.5):
        reached = np.max(np.abs(loss.derivative(p, np.float32(y))))
        np.testing.assert_allclose(float(loss.derivative_bound(3.0, jnp.float32(y))), reached, rtol=1e-5)


def test_a_weighted_loss_is_its_loss_times_the_weight():
    from ocolearn.losses import Weighted

    loss = Weighted(Squared(), -2.5)  # a negative weight keeps its sign where a bound takes |weight|
    assert float(loss.value(3.0, 1.0)) == -5.0 and float(loss.derivative(3.0, 1.0)) == -5.0
    assert float(loss.derivative_bound(2.0, 1.0)) == 7.5  # 2.5 (2 + |1|)
    assert loss.targets == "real" and Weighted(Hinge(), 2.0).targets == "sign"


def test_the_linear_loss_is_the_prediction_whatever_the_target():
    for y in (0.0, 5.0):
        assert float(Linear().value(2.0, y)) == 2.0 and float(Linear().derivative(2.0, y)) == 1.0
        assert float(Linear().derivative_bound(4.0, y)) == 1.0


def test_a_given_derivative_reads_the_target():
    loss = FunctionLoss(lambda p, y: 0.5 * (p - y) ** 2, lambda p, y: p - y)
    assert float(loss.derivative(3.0, 1.0)) == 2.0


def test_derived_derivatives_take_whole_numbers_and_keep_float64():
    # Whole numbers are promoted to floats for jax.grad; float64 stays float64 (regret.in_float64
    # computes bounds in it).
    quartic = FunctionLoss(lambda p, y: (p - y) ** 4)
    assert float(Loss.derivative(quartic, 3, 1)) == 32.0
    assert float(Loss.derivative_bound(quartic, 2, 1)) == 108.0
    with jax.enable_x64(True):
        p, y = np.float64(1 / 3), np.float64(0.1)
        derivative, bound = Loss.derivative(Squared(), p, y), Loss.derivative_bound(Squared(), p, y)
        assert derivative.dtype == bound.dtype == np.float64
        assert float(derivative) == p - y and float(bound) == p + y


# Multiclass losses of scores p (K,) and a class y: the rival is the best other class.
MULTICLASS = [
    # loss, scores, class, value, derivative
    (MulticlassPerceptronLoss(), [1.0, 3.0, 2.0], 0, 2.0, [-1.0, 1.0, 0.0]),  # the rival is the top class
    (MulticlassPerceptronLoss(), [3.0, 1.0, 2.0], 0, 0.0, [0.0, 0.0, 0.0]),  # right by 1: no update
    (MulticlassPerceptronLoss(), [2.0, 1.0, 2.0], 0, 0.0, [-1.0, 0.0, 1.0]),  # a tie is a mistake
    (MulticlassHinge(), [3.0, 1.0, 2.0], 0, 0.0, [0.0, 0.0, 0.0]),  # margin 1: on the hinge's kink, 0
    (MulticlassHinge(), [2.5, 1.0, 2.0], 0, 0.5, [-1.0, 0.0, 1.0]),  # margin 0.5
    (MulticlassHinge(), [1.0, 3.0, 2.0], 2, 2.0, [0.0, 1.0, -1.0]),
]


@pytest.mark.parametrize("loss, p, y, value, derivative", MULTICLASS, ids=lambda v: getattr(v, "name", None))
def test_multiclass_values_and_derivatives_by_hand(loss, p, y, value, derivative):
    p = jnp.array(p, jnp.float32)
    assert float(loss.value(p, y)) == value
    np.testing.assert_array_equal(loss.derivative(p, y), derivative)
    assert float(loss.derivative_bound(jnp.float32(5.0), y)) == np.float32(np.sqrt(2.0))  # ||e_r - e_y||
