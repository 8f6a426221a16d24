import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ocolearn import OGDState, ridge, run
from ocolearn.parallel import parallel_sgd

LEARNER = ridge(0.05, 5.0)


def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(42, 3)).astype(np.float32)  # 42 = 4 shards of 10, 2 rows left out
    return X, (X @ [1.0, -2.0, 0.5]).astype(np.float32)


def test_one_shot_averaging_equals_separate_runs_averaged():
    X, y = data()
    state = parallel_sgd(LEARNER, X, y, 4, passes=2)
    alone = [run(LEARNER, X[i * 10 : (i + 1) * 10], y[i * 10 : (i + 1) * 10], passes=2).state for i in range(4)]
    np.testing.assert_allclose(state.w, np.mean([s.w for s in alone], axis=0), rtol=1e-6)
    assert int(state.t) == 21


def test_iterative_averaging_equals_its_definition():
    X, y = data()
    k, passes = 3, 2
    got = parallel_sgd(LEARNER, X, y, 4, average_every=k, passes=passes)
    order = np.tile(np.arange(10), passes)
    state = LEARNER.init(3)
    for start in range(0, len(order), k):
        rows = order[start : start + k]
        ends = [
            run(LEARNER, X[i * 10 : (i + 1) * 10][rows], y[i * 10 : (i + 1) * 10][rows], state=state).state
            for i in range(4)
        ]
        w = jnp.mean(jnp.stack([e.w for e in ends]), axis=0)
        state = LEARNER.mix(OGDState(ends[0].t, w, ends[0].sqnorm))
    np.testing.assert_allclose(got.w, state.w, rtol=1e-5, atol=1e-7)
    assert int(got.t) == int(state.t) == 21
    # Averaging after every round of one shard is plain OGD on that shard.
    one = parallel_sgd(LEARNER, X[:10], y[:10], 1, average_every=1)
    np.testing.assert_allclose(one.w, run(LEARNER, X[:10], y[:10]).state.w, rtol=1e-6)


def test_shuffled_shards_are_reproducible():
    X, y = data()
    a = parallel_sgd(LEARNER, X, y, 2, seed=3, passes=2)
    b = parallel_sgd(LEARNER, X, y, 2, seed=3, passes=2)
    c = parallel_sgd(LEARNER, X, y, 2, passes=2)
    np.testing.assert_array_equal(a.w, b.w)
    assert not np.array_equal(a.w, c.w)


def test_shards_orders_drawn_on_the_host_are_those_drawn_in_the_program(monkeypatch):
    # fold_in(fold_in(key, shard), pass) on the host (ocolearn/shuffle.py) or inside the program:
    # the same orders, the same averaged weights bit for bit
    import ocolearn.parallel

    X, y = data()
    host = parallel_sgd(LEARNER, X, y, 2, seed=3, passes=2, average_every=7)
    monkeypatch.setattr(ocolearn.parallel, "host_key", lambda key: None)
    inside = parallel_sgd(LEARNER, X, y, 2, seed=3, passes=2, average_every=7)
    for a, b in zip(jax.tree.leaves(host), jax.tree.leaves(inside), strict=True):
        np.testing.assert_array_equal(a, b)


FOUR_DEVICES = """
import json, numpy as np, jax
from ocolearn import ridge
from ocolearn.parallel import parallel_sgd
rng = np.random.default_rng(0)
X = rng.normal(size=(42, 3)).astype(np.float32); y = (X @ [1.0, -2.0, 0.5]).astype(np.float32)
out = {k: np.asarray(parallel_sgd(ridge(0.05, 5.0), X, y, 8, average_every=k, passes=2).w).tolist() for k in (0, 3)}
print(json.dumps({"devices": len(jax.devices()), **{str(k): v for k, v in out.items()}}))
"""


@pytest.mark.slow
def test_four_devices_give_the_one_device_numbers():
    outputs = []
    for count in (4, 1):
        env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={count}"}
        done = subprocess.run([sys.executable, "-c", FOUR_DEVICES], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert [o.pop("devices") for o in outputs] == [4, 1]
    np.testing.assert_allclose(outputs[0]["0"], outputs[1]["0"], rtol=1e-6)
    np.testing.assert_allclose(outputs[0]["3"], outputs[1]["3"], rtol=1e-6)


def test_a_bad_row_is_an_error_not_nan_weights():
    import pytest

    from ocolearn.data import DataError

    X, y = data()
    X[7, 1] = np.nan
    with pytest.raises(DataError, match="^X row 7: nan is not a finite number$"):
        parallel_sgd(LEARNER, X, y, 2)
