import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from conftest import in_process

from ocolearn import (
    COCOB,
    OGD,
    AdaGrad,
    Constant,
    Hinge,
    InvSqrt,
    L2Ball,
    PassiveAggressive,
    Sparse,
    Winnow,
    ridge,
    run,
)
from ocolearn.config import ConfigError, load
from ocolearn.shuffle import seed_orders
from ocolearn.sweep import _sweep_chunk, product, stack, stack_values, sweep

ROOT = Path(__file__).resolve().parent.parent


def data(n=30, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    return X, (X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)).astype(np.float32)


GRID = product({"schedule.eta": [0.01, 0.1, 0.5], "projection.radius": [0.5, 2.0]})
# 18 configurations: a whole sweep runs 32 at once (two sweep.LANES), against chunks of 16
WIDE_GRID = product({"schedule.eta": [0.01, 0.1, 0.5], "projection.radius": [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]})


def test_product_order_and_stacking():
    assert list(GRID["schedule.eta"]) == [0.01, 0.01, 0.1, 0.1, 0.5, 0.5]
    assert list(GRID["projection.radius"]) == [0.5, 2.0] * 3
    learners = stack_values(ridge(InvSqrt(1.0), 1.0), GRID)
    assert learners.schedule.eta.shape == (6,)
    with pytest.raises(KeyError, match="not a number of this learner; its numbers: schedule.eta"):
        stack_values(ridge(InvSqrt(1.0), 1.0), {"schedule.rate": [1.0]})
    with pytest.raises(ValueError, match="one structure"):
        stack([ridge(InvSqrt(1.0), 1.0), ridge(Constant(1.0), 1.0)])


def test_sweep_equals_separate_runs():
    X, y = data()
    template = ridge(InvSqrt(1.0), 1.0)
    out = sweep(stack_values(template, GRID), X, y, seeds=3, passes=2)
    for c in range(6):
        learner = template.replace(
            schedule=InvSqrt(GRID["schedule.eta"][c]), projection=L2Ball(GRID["projection.radius"][c])
        )
        for s in range(3):
            alone = run(learner, X, y, seed=s, passes=2)
            np.testing.assert_allclose(out.state.w[c, s], alone.state.w, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(out.trace.loss[c, s], alone.trace.loss.sum(), rtol=1e-4)
            error = np.asarray(alone.trace.prediction - alone.trace.target, np.float64)
            np.testing.assert_allclose(out.trace.squared_error[c, s], np.sum(error**2), rtol=1e-4)


@pytest.mark.parametrize(
    "learner, values",
    [(PassiveAggressive(), {"C": [0.1, 1.0, 10.0]}), (AdaGrad(loss=Hinge()), {"eta": [0.1, 1.0, 10.0]}),
     (COCOB(loss=Hinge()), {"alpha": [10.0, 100.0, 1000.0]}), (Winnow(), {"promotion": [1.5, 2.0, 3.0]})],
    ids=["add_scaled", "add_to_rows", "put", "multiply_scaled"],
)  # fmt: skip
def test_a_sweep_over_sparse_rows_writes_in_loops_and_gives_each_seeds_run(learner, values):
    # A sweep traces its sparse writes as loops of one write (features.rolled_writes): with seeds each
    # seed plays the rows in its own order and, under the vmap over seeds, every write is a scatter
    # (benchmarks/bench_sparse_sweep.py). A single run keeps them written out.
    rng = np.random.default_rng(3)
    n, d, k = 60, 20, 6
    idx = np.sort(np.argsort(rng.random((n, d)), axis=1)[:, :k], axis=1).astype(np.int32)
    val = (rng.random((n, k)) < 0.5).astype(np.float32) if isinstance(learner, Winnow) else rng.normal(size=(n, k))
    X, y = Sparse(idx, val.astype(np.float32), d), np.where(rng.random(n) < 0.5, 1.0, -1.0).astype(np.float32)
    learners = stack_values(learner, values)
    out = sweep(learners, X, y, seeds=[4, 7], passes=2)
    for c in range(3):
        for s, seed in enumerate([4, 7]):
            alone = run(learner.replace(**{name: column[c] for name, column in values.items()}), X, y, seed, passes=2)
            np.testing.assert_allclose(out.state.w[c, s], alone.state.w, rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(out.trace.loss[c, s], alone.trace.loss.sum(), rtol=1e-6)

    def loops(seeds):  # the while loops of the sweep's program: the rounds' (one), and the writes' own
        orders = None if seeds is None else seed_orders(seeds, n, 1)
        options = dict(passes=1, predict_after_update=False, trace=False)
        return _sweep_chunk.lower(learners, None, orders, X, y, None, **options).as_text().count("stablehlo.while")

    assert loops([4, 7]) > 1 and loops(None) > 1


def test_chunks_and_traces_give_the_same_numbers():
    from ocolearn.sweep import LANES

    X, y = data()
    # The whole sweep in one program of 32; in chunks of 16 (a full and a padded one); chunks of 1,
    # rounded up to 16; one configuration swept alone, in a program of 16.
    learners = stack_values(OGD(Hinge(), InvSqrt(1.0), L2Ball(1.0)), WIDE_GRID)
    assert LANES == 16 and len(WIDE_GRID["schedule.eta"]) == 18
    y = np.sign(y)
    whole = sweep(learners, X, y, seeds=2)
    for size in (16, 1):
        chunked = sweep(learners, X, y, seeds=2, chunk_size=size)
        for a, b in zip(jax.tree.leaves(whole), jax.tree.leaves(chunked), strict=True):
            np.testing.assert_array_equal(a, b)
    alone = sweep(jax.tree.map(lambda a: a[2:3], learners), X, y, seeds=2)
    for a, b in zip(jax.tree.leaves(whole), jax.tree.leaves(alone), strict=True):
        np.testing.assert_array_equal(a[2:3], b)
    traced = sweep(learners, X, y, seeds=2, trace=True)
    np.testing.assert_allclose(traced.trace.loss.sum(axis=-1), whole.trace.loss, rtol=1e-5)
    mistakes = (traced.trace.prediction * traced.trace.target <= 0).sum(axis=-1)
    np.testing.assert_array_equal(mistakes, whole.trace.mistakes)


def test_memory_budget_picks_the_chunks():
    from ocolearn.sweep import chunk_for

    X, y = data(n=50)
    learners = stack_values(ridge(InvSqrt(1.0), 1.0), WIDE_GRID)  # (whole: 32 at once; the budget's 2: 16)
    data_bytes = X.nbytes + y.nbytes
    # 3 seeds of (room for the state: w, t and ||w||^2 as two floats; a trace of 50 rounds)
    per_config = 3 * (4 * (4 * 4 + 4 + 2 * 4) + 16 * 50)
    assert chunk_for(learners, X, y, 3, 1, True, data_bytes + 2 * per_config) == 2
    whole = sweep(learners, X, y, seeds=3, trace=True)
    small = sweep(learners, X, y, seeds=3, trace=True, memory=data_bytes + 2 * per_config)
    for a, b in zip(jax.tree.leaves(whole), jax.tree.leaves(small), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_second_sweep_with_other_values_compiles_nothing():
    X, y = data()
    template = ridge(InvSqrt(1.0), 1.0)
    sweep(stack_values(template, GRID), X, y, seeds=2)
    events = []
    listen = lambda event, *_, **__: events.append(event)  # noqa: E731
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        other = product({"schedule.eta": [3.0, 0.2, 0.7], "projection.radius": [9.0, 0.1]})
        out = sweep(stack_values(template, other), X, y, seeds=[5, 6])
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)  # (only ours: others' listeners stay)
    # Nothing is traced again, let alone compiled.
    assert [e for e in events if e.startswith("/jax/core/compile/")] == []
    assert np.isfinite(out.trace.loss).all()


SHARDED = """
import json, numpy as np, jax
from ocolearn import ridge, InvSqrt
from ocolearn.sweep import product, stack_values, sweep
assert len(jax.devices()) == 4
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)).astype(np.float32); y = (X @ [1.0, -2.0, 0.5]).astype(np.float32)
grid = product({"schedule.eta": np.geomspace(0.01, 1, 5), "projection.radius": [0.5, 1.0, 4.0]})
learners = stack_values(ridge(InvSqrt(1.0), 1.0), grid)
a = sweep(learners, X, y, seeds=3, shard=True)
b = sweep(learners, X, y, seeds=3, shard=False)
print(json.dumps({"max_diff": max(float(np.abs(u - v).max()) for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b))),
                  "sharded_over": len(jax.devices())}))
"""


@pytest.mark.slow
def test_sharded_over_four_cpu_devices_equals_unsharded():
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    done = subprocess.run([sys.executable, "-c", SHARDED], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"max_diff": 0.0, "sharded_over": 4}


def test_sweep_config_errors(tmp_path):
    base = (ROOT / "configs/iris_sweep.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(base.replace('"learner.schedule.eta"', '"learner.schedule.etta"'))
    with pytest.raises(ConfigError, match="unknown key 'sweep.values.learner.schedule.etta'.*did you mean"):
        load(bad)
    bad.write_text(base.replace("geomspace = [0.001, 10.0, 32]", "range = [1, 2, 3]"))
    with pytest.raises(ConfigError, match="linspace | logspace | geomspace"):
        load(bad)
    bad.write_text(base.replace("seeds = 8", "seed = 8"))
    with pytest.raises(ConfigError, match="'sweep.seed'.*did you mean 'seeds'"):
        load(bad)
    bad.write_text(base.replace("{ geomspace = [0.01, 100.0, 32] }", "[1.0, -1.0]"))
    with pytest.raises(
        ConfigError, match=r"bad.toml: 'sweep.values.learner.projection.radius': .*got -1 \(at index 1\)"
    ):
        load(bad)
    bad.write_text(base.replace('"learner.projection.radius"', '"learner.projection.kind"'))
    with pytest.raises(ConfigError, match=r"'sweep.values.learner.projection.kind': .* chooses the program"):
        load(bad)
    # --set on a swept key was silently replaced by the sweep's values
    with pytest.raises(ConfigError, match=r"--set learner.schedule.eta=0.1: .* sweeps 'learner.schedule.eta'"):
        load(ROOT / "configs/iris_sweep.toml", ["learner.schedule.eta=0.1"])


def test_cli_sweep_writes_table_best_and_figures(tmp_path):
    done = in_process(
        *["sweep", ROOT / "configs/iris_sweep.toml", "--out", tmp_path, "--set", "sweep.seeds=2"],
        *["--set", "sweep.validation=0.2", "--set", "sweep.values.learner.schedule.eta=[0.01, 0.1, 1.0]"],
        *["--set", "sweep.values.learner.projection.radius=[0.3, 1.0]"],
    )
    assert done.returncode == 0, done.stderr
    assert {"sweep.csv", "best.json", "best.toml", "sweep.png", "best_regret.png"} <= {
        p.name for p in tmp_path.iterdir()
    }
    table = np.genfromtxt(tmp_path / "sweep.csv", delimiter=",", names=True)
    assert len(table) == 3 * 2 * 2 and set(table["seed"]) == {0, 1}
    best = json.loads((tmp_path / "best.json").read_text())
    means = table["validation_loss"].reshape(6, 2).mean(axis=1)
    assert best["score"] == "validation_loss" and best["mean_score"] == pytest.approx(means.min(), rel=1e-9)
    # The best configuration's resolved experiment reproduces its first seed's run.
    chosen = load(tmp_path / "best.toml")
    assert chosen.learner.schedule.eta == best["values"]["learner.schedule.eta"] and chosen.sweep is None
    assert np.all(np.isfinite(table["regret"]))


TWO_PROCESSES = """
import sys, json
process, port = int(sys.argv[1]), sys.argv[2]
import ocolearn, jax
if process >= 0:
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=process)
import numpy as np
from ocolearn import ridge, InvSqrt
from ocolearn.sweep import product, stack_values, sweep
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)).astype(np.float32); y = (X @ [1.0, -2.0, 0.5]).astype(np.float32)
grid = product({"schedule.eta": np.geomspace(0.01, 1, 5), "projection.radius": [0.5, 1.0, 4.0]})
out = sweep(stack_values(ridge(InvSqrt(1.0), 1.0), grid), X, y, seeds=2)
print(json.dumps({"devices": len(jax.devices()), "w": np.asarray(out.state.w).tolist(),
                  "loss": np.asarray(out.trace.loss).tolist()}))
"""


@pytest.mark.slow
def test_two_processes_on_localhost_give_the_single_process_numbers():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-c", TWO_PROCESSES]
    workers = [
        subprocess.Popen([*command, str(i), str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in (0, 1)
    ]
    single = subprocess.run([*command, "-1", "0"], capture_output=True, text=True)
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    alone = json.loads(single.stdout.strip().splitlines()[-1])
    assert [r["devices"] for r in results] == [2, 2] and alone["devices"] == 1
    for r in results:
        assert r["w"] == alone["w"] and r["loss"] == alone["loss"]


def test_a_sweep_behind_online_scaling_has_each_orders_regret_as_run_reports_it(tmp_path):
    """Behind parts with running statistics (online standardizing) the rows a learner is fed
    depend on the order, so the comparator is solved per order: each (configuration, seed) row
    of sweep.csv has the regret ``ocolearn run`` reports for that configuration and shuffle seed
    (it was NaN for every configuration)."""
    from ocolearn.experiment import apply_values, run_regression, run_sweep

    config = tmp_path / "c.toml"
    text = (ROOT / "configs/iris_sweep.toml").read_text()
    text = text.replace('scale = "none"', 'scale = "standardize"').replace("intercept = false", "intercept = true")
    head = text.split("[sweep]")[0]
    config.write_text(head + '[sweep]\nseeds = 2\n[sweep.values]\n"learner.schedule.eta" = [0.01, 0.1]\n')
    experiment = load(config)
    run_sweep(experiment, tmp_path / "out")
    table = np.genfromtxt(tmp_path / "out" / "sweep.csv", delimiter=",", names=True)
    assert len(table) == 4 and np.all(np.isfinite(table["regret"]))
    for row in table:
        one = apply_values(experiment, {"learner.schedule.eta": float(row["learnerscheduleeta"])})
        one = dataclasses.replace(one, run=dataclasses.replace(one.run, shuffle_seed=int(row["seed"])))
        metrics = run_regression(one)[0]
        summed = row["learner_loss"] * metrics["T"]  # (the sweep sums its losses in float32: ~T u of the sum)
        assert row["regret"] == pytest.approx(metrics["regret"], abs=2e-5 * summed)
        assert abs(row["regret"] - metrics["regret"]) < 1e-2 * abs(metrics["regret"])
    # Beside the comparators of the fed rows, the batch fit of an affine model of the raw rows
    # (scikit-learn's LinearRegression, the same least squares).
    from sklearn.linear_model import LinearRegression

    from ocolearn.experiment import load_data

    X, y = load_data(experiment)
    fit = LinearRegression().fit(X, y)
    assert metrics["comparator_offline_loss"] == pytest.approx(np.mean((fit.predict(X) - y) ** 2), rel=1e-9)


def test_a_sweep_carried_over_two_parts_is_the_sweep_over_all_rows():
    """``carry`` continues a sweep where it stopped: its sums, states and trace over rows 0..9 then
    10..36 are those of one sweep over 0..36, bit for bit (a study's file read in chunks)."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((37, 3)).astype(np.float32), rng.standard_normal(37).astype(np.float32)
    learners = stack_values(ridge(InvSqrt(1.0), 1.0), product({"schedule.eta": [0.01, 0.1, 1.0]}))
    whole = sweep(learners, X, y)
    first = sweep(learners, X[:10], y[:10])
    rest = sweep(learners, X[10:], y[10:], carry=(first.state, first.trace))
    for a, b in zip(jax.tree.leaves(rest), jax.tree.leaves(whole), strict=True):
        np.testing.assert_array_equal(a, b)
    fresh = sweep(learners, X[10:], y[10:])  # without the carry: another run
    assert not np.array_equal(fresh.trace.loss, whole.trace.loss)
    traced = [sweep(learners, X[:10], y[:10], trace=True)]
    traced.append(sweep(learners, X[10:], y[10:], trace=True, carry=(traced[0].state, None)))
    losses = np.concatenate([t.trace.loss for t in traced], axis=2)
    np.testing.assert_array_equal(losses, sweep(learners, X, y, trace=True).trace.loss)


@pytest.mark.parametrize("scale", ["none", "standardize"])
def test_each_seeds_regret_curve_is_the_runs(tmp_path, scale):
    """The best configurations' regret curves (best_regret.png) pair each round's loss with the
    comparator's loss on the row of that round, for every seed: each curve is the one ``run``
    traces for that configuration and shuffle seed, round by round (rows fed in the stored order
    are read through the trace's row indices; behind online scaling, in the seed's own order)."""
    from ocolearn.experiment import _sweep_regression, apply_values, load_examples, run_regression

    config = tmp_path / "c.toml"
    text = (ROOT / "configs/iris_sweep.toml").read_text().replace('scale = "none"', f'scale = "{scale}"')
    text = text.replace("predict_after_update = true", "predict_after_update = false")
    config.write_text(
        text.split("[sweep]")[0] + '[sweep]\nseeds = 3\n[sweep.values]\n"learner.schedule.eta" = [0.01, 0.1]\n'
    )
    experiment = load(config)
    _, _, _, bands, _ = _sweep_regression(experiment, load_examples(experiment), None)
    for c, (_, curves) in zip([0, 1], bands(np.array([0, 1])), strict=True):
        for s, curve in enumerate(curves):
            one = apply_values(experiment, {"learner.schedule.eta": [0.01, 0.1][c]})
            one = dataclasses.replace(one, run=dataclasses.replace(one.run, shuffle_seed=s))
            np.testing.assert_allclose(curve, run_regression(one)[1]["regret"], rtol=1e-4, atol=1e-4)
