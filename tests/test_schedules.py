import jax.numpy as jnp
import numpy as np
import optax
import pytest

from ocolearn.schedules import Constant, InverseTime, InvSqrt, Optax, Schedule, as_schedule

T = jnp.arange(1, 6, dtype=jnp.int32)


def test_closed_forms_on_t_1_to_5():
    np.testing.assert_allclose(Constant(0.3)(T), [0.3] * 5, rtol=1e-7)
    np.testing.assert_allclose(InvSqrt(0.045)(T), 0.045 / np.sqrt([1, 2, 3, 4, 5]), rtol=1e-6)
    np.testing.assert_allclose(InverseTime(0.5)(T), 1 / (0.5 * np.array([1, 2, 3, 4, 5])), rtol=1e-6)


def test_optax_schedules_start_at_step_zero():
    schedule = optax.linear_schedule(1.0, 0.0, transition_steps=4)
    np.testing.assert_allclose(as_schedule(schedule)(T), [1.0, 0.75, 0.5, 0.25, 0.0], atol=1e-7)
    assert isinstance(as_schedule(schedule), Optax)


def test_as_schedule():
    assert as_schedule(0.1) == Constant(0.1)
    s = InvSqrt(2.0)
    assert as_schedule(s) is s


@pytest.mark.parametrize("cls", [c for c in Schedule.registry.values() if c is not Optax])
def test_rates_are_float32(cls):
    assert cls()(jnp.int32(3)).dtype == jnp.float32
