"""``ocolearn study``: its numbers equal direct runs and river's, tuning never sees the rows
reported on, reruns are bit for bit, bad files fail in one line; the offline comparators against
scipy and scikit-learn (the significance tests: tests/test_significance.py)."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import in_process

from ocolearn import data as tables
from ocolearn import study as studies
from ocolearn.pipeline import targets, with_pipeline
from ocolearn.run import round_order, run

ROOT = Path(__file__).resolve().parents[1]


def small(**evaluate):
    return {
        "name": "small",
        "evaluate": {"orders": 3, "tune": 0.3, "test": 0.2, **evaluate},
        "datasets": [
            {"kind": "bundled", "source": "iris"},
            {"kind": "hyperplane", "rows": 300, "features": 4, "drift": 0.01, "noise": 0.05, "seed": 3},
        ],
        "learners": {
            "perceptron": {"kind": "perceptron"},
            "pa": {"kind": "passive_aggressive", "tune": {"C": {"geomspace": [0.01, 10.0, 4]}}},
        },
    }


def direct(study, results, dataset, name, order):
    """The learner as the study chose it, run by ``ocolearn.run`` over the same order of the
    same rows: (trace on the rows reported on, learner, inner learner, the data and rows)."""
    spec = next(d for d in study.datasets if d.name == dataset)
    data = studies.read_dataset(spec)
    n = len(data.draw(0).y)
    _, report, held = studies.split_rows(n, study.evaluate, spec.stream, "test")
    inner, steps, prefix = studies.fitted(study.learners[name], data, study.evaluate, "test")
    tuned = results["datasets"][dataset]["learners"][name].get("tuned", {})
    if tuned:
        inner = inner.replace(**{k: jnp.float32(v) for k, v in tuned.items()})
    learner = with_pipeline(inner, steps)
    examples = data.draw(order)
    y = targets(inner, examples)
    seed = None if spec.stream else order
    result = run(learner, np.asarray(examples.X)[report], y[report], seed)
    return result, learner, examples, y, report, held


@pytest.mark.slow
def test_progressive_and_held_out_numbers_equal_direct_runs(tmp_path):
    study = studies.from_dict(small())
    results = studies.run_study(study, tmp_path)
    for dataset in ("iris", "hyperplane"):
        for name in ("perceptron", "pa"):
            numbers = results["datasets"][dataset]["learners"][name]
            for order in range(3):
                result, learner, examples, y, report, held = direct(study, results, dataset, name, order)
                X = np.asarray(examples.X)
                seed = None if dataset == "hyperplane" else order
                summed = run(learner, X[report], y[report], seed, trace=False).trace
                assert numbers["progressive"][order] == int(summed.mistakes) / len(report)
                loss = np.mean(np.asarray(result.trace.loss, np.float64))
                np.testing.assert_allclose(numbers["loss"][order], loss, rtol=1e-6)
                scores = np.asarray(jax.vmap(learner.predict, (None, 0))(result.state, X[held]))
                wrong = scores.argmax(axis=1) != y[held] if scores.ndim == 2 else scores * y[held] <= 0
                assert numbers["held_out"][order] == np.mean(wrong)


def test_the_tuned_value_is_the_best_on_the_tuning_rows(tmp_path):
    study = studies.from_dict(small())
    results = studies.run_study(study, tmp_path)
    spec = study.datasets[0]
    data = studies.read_dataset(spec)
    tune, _, _ = studies.split_rows(len(data.draw(0).y), study.evaluate, spec.stream, "test")
    inner, steps, _ = studies.fitted(study.learners["pa"], data, study.evaluate, "test")
    y = targets(inner, data.draw(0))
    X = np.asarray(data.draw(0).X)
    scores = []
    for C in np.geomspace(0.01, 10.0, 4):
        one = with_pipeline(inner.replace(C=jnp.float32(C)), steps)
        scores.append(np.mean([int(run(one, X[tune], y[tune], s, trace=False).trace.mistakes) for s in range(3)]))
    numbers = results["datasets"]["iris"]["learners"]["pa"]
    assert numbers["tuned"]["C"] == pytest.approx(np.geomspace(0.01, 10.0, 4)[int(np.argmin(scores))])
    assert numbers["tuning_score"] == pytest.approx(min(scores) / len(tune))


def _iris_csv(path, flip=()):
    table = tables.load_iris()
    features = [c for c, v in table.items() if c != "Species" and v.dtype.kind in "fi"]
    species = table["Species"].copy()
    for i in flip:  # a wrong label on a tuning row
        species[i] = "setosa" if species[i] != "setosa" else "virginica"
    table = {**table, "Species": species}
    path.write_text(tables.table_csv(table, [*features, "Species"]))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("tune_by, chunk_rows", [("split", 0), ("prefix", 7), ("split", 11)])
def test_tuning_rows_never_reach_the_reported_numbers(tmp_path, monkeypatch, tune_by, chunk_rows):
    raw = small(tune_by=tune_by, tune_seed=4)
    dataset = {"kind": "file", "source": "", "format": "csv", "target": "Species", "name": "iris"}
    raw["datasets"] = [{**dataset, "chunk_rows": chunk_rows}]
    raw["learners"]["pa"]["tune"] = {"C": [0.5]}  # one value: the choice cannot move
    spec = studies.from_dict({**raw, "datasets": [{**raw["datasets"][0], "source": "x"}]}).evaluate
    tune, report, _ = studies.split_rows(150, spec, False, "test")
    assert len(tune) == 45 and not set(tune) & set(report)

    def leaderboard(csv, out):
        raw["datasets"][0]["source"] = str(csv)
        results = studies.run_study(studies.from_dict(copy.deepcopy(raw)), tmp_path / out)
        return {n: v["progressive"] + v["held_out"] for n, v in results["datasets"]["iris"]["learners"].items()}

    clean = leaderboard(_iris_csv(tmp_path / "clean.csv"), "clean")
    assert leaderboard(_iris_csv(tmp_path / "spoiled.csv", flip=tune), "spoiled") == clean
    # A broken split that reports on the tuning rows too is caught by the same comparison.
    original = studies.split_rows

    def leaky(n, spec, stream, where):
        tune, report, held = original(n, spec, stream, where)
        return tune, np.union1d(tune, report), held

    monkeypatch.setattr(studies, "split_rows", leaky)
    assert leaderboard(tmp_path / "spoiled.csv", "leaky") != leaderboard(tmp_path / "clean.csv", "leaky_clean")


def _iris_svmlight(path):
    """Petal.Width from the other measurements, as an svmlight file (a regression target)."""
    table = tables.load_iris()
    columns = ["Sepal.Length", "Sepal.Width", "Petal.Length"]
    lines = [
        f"{w:g} " + " ".join(f"{j + 1}:{table[c][i]:g}" for j, c in enumerate(columns))
        for i, w in enumerate(table["Petal.Width"])
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _ragged_svmlight(path):
    """Iris' species from its measurements, and on every 50th row nine more features: chunks
    read without a first pass (dimension and labels given) are 8 or 16 entries wide."""
    table = tables.load_iris()
    columns = ["Sepal.Length", "Sepal.Width", "Petal.Length", "Petal.Width"]
    classes = {name: k + 1 for k, name in enumerate(sorted(set(table["Species"])))}
    lines = []
    for i, species in enumerate(table["Species"]):
        entries = [f"{j + 1}:{table[c][i]:g}" for j, c in enumerate(columns)]
        entries += [f"{j}:0.1" for j in range(5, 14)] if i % 50 == 17 else []
        lines.append(f"{classes[species]} " + " ".join(entries))
    path.write_text("\n".join(lines) + "\n")
    return path


def _numbers(results):
    """Every number of a study but the wall times."""
    return {
        d: {n: {k: v for k, v in numbers.items() if k != "wall_s"} for n, numbers in entry["learners"].items()}
        for d, entry in results["datasets"].items()
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "orders, chunk_rows",
    [(1, 7), (3, 1000)],  # tiny chunks: the stored order; one chunk: the shuffles too (seed s for chunk 0)
)
def test_a_file_read_in_chunks_gives_the_numbers_of_the_file_in_memory(tmp_path, orders, chunk_rows):
    evaluate = {"orders": orders, "order": "stored", "tune": 0.3, "test": 0.2, "regret": "none"}
    classify = {
        "perceptron": {"kind": "perceptron"},
        "pa": {"kind": "passive_aggressive", "tune": {"C": {"geomspace": [0.01, 10.0, 4]}}},
    }
    regress = {
        "ogd": {"kind": "ogd", "loss": "squared", "tune": {"schedule.eta": {"geomspace": [0.01, 1.0, 4]}}},
        "cocob": {"kind": "cocob", "loss": "squared"},
    }
    files = {
        "species": ({"source": str(_iris_csv(tmp_path / "iris.csv")), "format": "csv", "target": "Species"}, classify),
        "width": ({"source": str(_iris_svmlight(tmp_path / "w.svm")), "task": "regression"}, regress),
        "ragged": (
            {"source": str(_ragged_svmlight(tmp_path / "r.svm")), "dim": 14, "labels": ["1", "2", "3"]},
            classify,
        ),
    }
    for name, (dataset, learners) in files.items():
        raw = {"name": name, "evaluate": evaluate, "learners": learners}
        numbers = []
        for rows in (0, chunk_rows):
            raw["datasets"] = [{"kind": "file", "name": name, "chunk_rows": rows, **dataset}]
            numbers.append(_numbers(studies.run_study(studies.from_dict(copy.deepcopy(raw)), tmp_path / f"{rows}")))
        assert numbers[0] == numbers[1]
        assert len(numbers[0][name]) == 2 and all(len(v["held_out"]) == orders for v in numbers[0][name].values())
    over = "over 1 order;" if orders == 1 else f"over {orders} orders;"  # (it said "over 1 orders")
    assert over in (tmp_path / "0" / "leaderboard.md").read_text()
    if orders > 1:  # a shuffle of a file read in chunks shuffles within blocks: not the whole file's shuffle
        raw["datasets"][0]["chunk_rows"] = 7
        chunked = _numbers(studies.run_study(studies.from_dict(copy.deepcopy(raw)), tmp_path / "shuffled"))[name]
        # (the untuned learner's stored order is the same; a tuned value is chosen over all orders)
        assert chunked["perceptron"]["progressive"][0] == numbers[0][name]["perceptron"]["progressive"][0]
        assert any(chunked[n]["progressive"][1:] != numbers[0][name][n]["progressive"][1:] for n in chunked)


@pytest.mark.slow
def test_the_iris_study_is_the_posts_protocol_run_directly(tmp_path):
    """configs/study_iris.toml (the former experiments/iris_adaptive.py and parameter_free.py): its
    progressive squared error of order 0 is ``ocolearn.run``'s over the stored order of the post's
    data (``[data]`` of configs/iris_coin.toml), order k that of the shuffle by seed k - 1, to
    float32 rounding."""
    from ocolearn import L2Ball, Squared
    from ocolearn.config import load
    from ocolearn.experiment import load_data
    from ocolearn.regret import gradient_bound

    study = studies.load(ROOT / "configs" / "study_iris.toml", ["evaluate.orders=3"])
    results = studies.run_study(study, tmp_path)
    X, y = load_data(load(ROOT / "configs" / "iris_coin.toml"))
    for name, entry in study.learners.items():
        numbers = results["datasets"]["iris"]["learners"][name]["progressive"]
        for order, seed in enumerate([None, 0, 1]):
            trace = run(entry.learner, np.float32(X), np.float32(y), seed).trace
            errors = (np.asarray(trace.prediction, np.float64) - np.asarray(trace.target, np.float64)) ** 2
            # (vmapped over the orders, XLA adds in another order, and the L2 ball's factor takes
            # its batched form: float32 rounding)
            assert numbers[order] == pytest.approx(np.mean(errors), rel=1e-6), (name, order)
    # MetaGrad's G bounds the data's gradients on its ball
    assert study.learners["metagrad"].learner.lipschitz >= gradient_bound(Squared(), L2Ball(1.0), X, y) * (1 - 1e-3)


def test_progressive_squared_error_equals_river(tmp_path):
    pytest.importorskip("river")
    from river import compose, evaluate, linear_model, metrics, optim, preprocessing

    lr = 0.01
    raw = {
        "name": "river",
        # river's StandardScaler rule exactly (the default clips the predictions of far rows), an intercept
        "evaluate": {"orders": 2, "tune": 0.0, "scale": "river"},
        "datasets": [{"kind": "sklearn", "source": "diabetes"}],
        # OGD on 1/2 (p - y)^2 with step 2 lr is river's SGD(lr) on (p - y)^2, and its weight
        # of the constant feature river's intercept with intercept_lr = lr.
        "learners": {"ogd": {"kind": "ogd", "loss": "squared", "schedule": {"kind": "constant", "eta": 2 * lr}}},
    }
    study = studies.from_dict(raw)
    results = studies.run_study(study, tmp_path)
    data = studies.read_dataset(study.datasets[0])
    X, y = np.asarray(data.draw(0).X, np.float64), np.asarray(data.draw(0).y, np.float64)
    for order in range(2):
        rows = np.asarray(round_order(len(y), 1, jax.random.key(order)))
        stream = [({f"x{j}": float(v) for j, v in enumerate(X[i])}, float(y[i])) for i in rows]
        model = compose.Pipeline(
            preprocessing.StandardScaler(),
            linear_model.LinearRegression(optimizer=optim.SGD(lr), intercept_lr=lr, l2=0.0),
        )
        mse = evaluate.progressive_val_score(stream, model, metrics.MSE()).get()
        ours = results["datasets"]["diabetes"]["learners"]["ogd"]["progressive"][order]
        assert ours == pytest.approx(mse, rel=1e-5)


def _without_times(folder: Path):
    results = json.loads((folder / "results.json").read_text())
    for entry in results["datasets"].values():
        for numbers in entry["learners"].values():
            numbers.pop("wall_s")
    board = [line.split(",") for line in (folder / "leaderboard.csv").read_text().splitlines()]
    column = board[0].index("wall_s")
    return results, [row[:column] + row[column + 1 :] for row in board]


def test_a_rerun_gives_the_same_numbers_bit_for_bit(tmp_path):
    raw = small()
    # A third data set for the comparison over data sets (cd.png, significance.json), of the second's
    # shapes: the programs compiled for it serve it (breast_cancer's 30 features were 100 of its own).
    raw["datasets"].append({**raw["datasets"][1], "seed": 4, "name": "hyperplane_4"})
    study = studies.from_dict(raw)
    studies.run_study(study, tmp_path / "a")
    studies.run_study(study, tmp_path / "b")
    assert _without_times(tmp_path / "a") == _without_times(tmp_path / "b")
    for name in ("leaderboard.md", "cd.png", "progressive_iris.png", "config.toml", "significance.json"):
        assert (tmp_path / "a" / name).exists()
    # config.toml reruns the same study
    again = studies.load(tmp_path / "a" / "config.toml")
    assert again.to_config() == study.to_config()


def cli(*args):
    """``(exit status, stderr)`` of ``ocolearn ARGS`` in this process (``process_cli``: in a process
    of its own, where all that the process prints is on stderr)."""
    done = in_process(*args)
    return done.returncode, done.stderr


def process_cli(*args):
    done = subprocess.run([sys.executable, "-m", "ocolearn.cli", *args], capture_output=True, text=True, env=_env())
    return done.returncode, done.stderr


def _env():
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}


IRIS = 'kind = "bundled"\nsource = "iris"'
FILE = 'kind = "file"\nsource = "x.csv"\nformat = "csv"\ntarget = "y"\n'
BASE = """name = "bad"
[evaluate]
orders = 2
[[datasets]]
kind = "bundled"
source = "iris"
[learners.pa]
kind = "passive_aggressive"
[learners.pa.tune]
C = [0.1, 1.0]
"""


@pytest.mark.parametrize(
    "change, expected",
    [
        (('source = "iris"', 'source = "irris"'), "'datasets[0].source' = 'irris' is not a bundled data set"),
        (('kind = "passive_aggressive"', 'kind = "pasive_aggressive"'), "did you mean 'passive_aggressive'"),
        (("orders = 2", "orderz = 2"), "unknown key 'evaluate.orderz'"),
        (('kind = "passive_aggressive"\n', 'kind = "passive_aggressive"\nCC = 1\n'), "unknown key 'learners.pa.CC'"),
        (("C = [0.1, 1.0]", "D = [0.1, 1.0]"), "unknown key 'learners.pa.tune.D'"),
        (("C = [0.1, 1.0]", "C = []"), "'learners.pa.tune.C' must be a non-empty list of numbers"),
        (("C = [0.1, 1.0]", "C = [0.1, -1.0]"), "'learners.pa.tune.C': learner.C must be > 0, got -1 (at index 1)"),
        (('kind = "passive_aggressive"', 'kind = "perceptron"'), "'perceptron' is parameter-free; it takes no grid"),
        (("orders = 2", "orders = 2\ntune = 0.0"), "'learners.pa.tune' needs rows to tune on"),
        (("orders = 2", "orders = 2\ntune = 0.5\ntest = 0.5"), "must leave rows to report on"),
        (('kind = "bundled"', 'kind = "bundle"'), "'datasets[0].kind' must be one of bundled"),
        (('source = "iris"', 'source = "iris"\nname = "a/b"'), "'datasets[0].name' = 'a/b': a name of letters"),
        (('name = "bad"', 'name = "../../escape"'), "'name' = '../../escape': a name of letters"),
        (("[learners.pa]\n", '[learners."p|a"]\n'), "'learners': the learner 'p|a': a name of letters"),
        (("[learners.pa]\n", '[learners."p\\na"]\n'), "'learners': the learner 'p\\na': a name of letters"),
        (("orders = 2", 'orders = 2\norder = "random"'), "'evaluate.order' must be shuffle or stored, got 'random'"),
        (('source = "iris"', 'source = "iris"\nchunk_rows = 10'), "unknown key 'datasets[0].chunk_rows'"),
        (('source = "iris"', 'source = "iris"\ncolumns = "Sepal.Width"'), "'datasets[0].columns'"),
        (
            ('source = "iris"', 'source = "iris"\ncolumns = ["Sepal.Widht"]'),
            "'datasets[0].columns': iris has no column 'Sepal.Widht'",
        ),
        (('source = "iris"', 'source = "iris"\nbatch_scale = "yes"'), "'datasets[0].batch_scale'"),
        ((IRIS, FILE + "batch_scale = true"), "unknown key 'datasets[0].batch_scale'"),
        (
            (IRIS, FILE.replace('target = "y"\n', "")),
            "'datasets[0]' of format csv needs 'target', the column of labels",
        ),
        ((IRIS, FILE + "chunk_rows = -1"), "'datasets[0].chunk_rows' must be >= 1 (0: read it all at once), got -1"),
        ((IRIS, FILE.replace("csv", "text") + "chunk_rows = 5"), "'datasets[0].chunk_rows': a folder of text"),
        (
            ("orders = 2", f'orders = 2\nregret = "hinge"\n[[datasets]]\n{FILE}chunk_rows = 5'),
            "'evaluate.regret' = 'hinge': the offline comparator needs the rows in memory, and datasets[0].chunk_rows",
        ),
    ],
)
def test_bad_study_files_fail_in_one_line(tmp_path, change, expected):
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace(*change))
    status, err = cli("study", str(path), "--out", str(tmp_path / "out"))
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("ocolearn: error: ") and str(path) in err
    assert expected in err, err


def test_a_tuning_split_that_leaves_no_rows_is_one_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace("orders = 2", "orders = 2\ntune = 0.001"))
    status, err = process_cli("study", str(path), "--out", str(tmp_path / "out"))
    assert status == 2 and err.count("\n") == 1, err
    assert "data set 'iris': evaluate.tune = 0.001 of its 150 rows leaves no rows to tune on" in err, err


def test_run_refuses_a_study_file_and_says_what_to_run(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(BASE)
    status, err = cli("run", str(path))
    assert status == 2 and "ocolearn study" in err, err


def test_shipped_studies_load_and_meet_the_issue_sizes():
    study = studies.load(ROOT / "configs" / "study_classifiers.toml")
    assert len(study.learners) >= 8 and len(study.datasets) >= 5 and study.evaluate.orders >= 8
    tuned = [e for e in study.learners.values() if e.tune]
    assert tuned and all(math.prod(len(v) for v in studies.grid_axes(e.tune).values()) >= 16 for e in tuned)
    studies.load(ROOT / "configs" / "study_regressors.toml")


# ------------------------------------------------------------------------------- comparators


def _data(n=200, d=4, classes=0, seed=0):
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.standard_normal((n, d)), np.ones((n, 1))])
    u = rng.standard_normal((classes or 1, d + 1))
    noisy = X @ u.T + rng.standard_normal((n, classes or 1)) * 1.5
    y = noisy.argmax(axis=1) if classes else np.sign(noisy[:, 0])
    return X, y


def test_logistic_comparator_equals_scikit_learn():
    linear = pytest.importorskip("sklearn.linear_model")
    from ocolearn.losses import Logistic
    from ocolearn.regret import best_fixed_convex

    X, y = _data()
    solved = best_fixed_convex(Logistic(), X, y, tol=1e-8)
    fit = linear.LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10000).fit(X, y)
    theirs = np.sum(np.logaddexp(0.0, -y * (X @ fit.coef_[0])))
    assert solved.total == pytest.approx(theirs, rel=1e-7)
    assert solved.total <= theirs + 1e-7 and solved.gradient_norm <= 1e-8


@pytest.mark.parametrize("classes", [0, 3])
def test_hinge_comparator_is_within_its_stated_gap_of_the_linear_program(classes):
    optimize = pytest.importorskip("scipy.optimize")
    from ocolearn.losses import Hinge, MulticlassHinge
    from ocolearn.regret import best_fixed_convex

    X, y = _data(classes=classes)
    n, d = X.shape
    K = classes or 1
    # min sum xi  s.t.  xi_t >= 0, xi_t >= 1 - y_t u.x_t (binary) or 1 + (u_r - u_y).x_t, r != y_t
    rows, rhs = [], []
    for t in range(n):
        for r in range(classes) if classes else [None]:
            if r == y[t]:
                continue
            a = np.zeros(K * d + n)
            if classes:
                a[r * d : (r + 1) * d] += X[t]
                a[y[t] * d : (y[t] + 1) * d] -= X[t]
            else:
                a[:d] = -y[t] * X[t]
            a[K * d + t] = -1.0
            rows.append(a)
            rhs.append(-1.0)
    cost = np.r_[np.zeros(K * d), np.ones(n)]
    bounds = [(None, None)] * (K * d) + [(0, None)] * n
    lp = optimize.linprog(cost, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=bounds, method="highs")
    solved = best_fixed_convex(MulticlassHinge() if classes else Hinge(), X, y, classes)
    assert lp.fun - 1e-6 <= solved.total <= lp.fun + solved.smoothing_gap + 1e-6
    assert solved.smoothing_gap == pytest.approx(n * 1e-4 * math.log(classes or 2))


def test_a_separable_stream_has_a_comparator_of_zero_hinge_loss():
    from ocolearn.losses import Hinge
    from ocolearn.regret import best_fixed_convex

    spec = studies.DatasetSpec("hyperplane", name="h", rows=400, features=3, drift=0.0)
    data = studies.synthetic(spec, 0)
    X = np.hstack([np.asarray(data.X, np.float64), np.ones((400, 1))])
    y = np.where(np.asarray(data.y) == 1, 1.0, -1.0)
    assert best_fixed_convex(Hinge(), X, y).total < 1e-3  # drift 0, noise 0: a fixed hyperplane separates it
    drifting = studies.synthetic(spec.__class__("hyperplane", name="h", rows=400, features=3, drift=0.02), 0)
    y2 = np.where(np.asarray(drifting.y) == 1, 1.0, -1.0)
    assert best_fixed_convex(Hinge(), X, y2).total > 10.0  # a half turn: no fixed hyperplane fits


@pytest.mark.slow
def test_a_tracked_study_reads_back_from_the_local_mlflow_store(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    from ocolearn import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    path = tmp_path / "s.toml"
    path.write_text(BASE)
    assert cli.main(["study", str(path), "--out", "out", "--track", "mlflow", "--quiet"]) == 0
    client = MlflowClient((tmp_path / "mlruns").as_uri())
    (run,) = client.search_runs([client.get_experiment_by_name("bad").experiment_id])
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    progressive = results["datasets"]["iris"]["learners"]["pa"]["progressive"]
    assert run.data.metrics["iris.pa.progressive_mean"] == pytest.approx(np.mean(progressive), rel=1e-12)
    assert run.data.params["learners.pa.kind"] == "passive_aggressive"
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"leaderboard.csv", "leaderboard.md", "results.json", "progressive_iris.png"} <= artifacts


def test_a_data_set_too_large_for_the_dense_comparator_says_how_to_go_on(tmp_path):
    path = tmp_path / "big.svm"
    path.write_text("1 1:1\n-1 2:1\n" * 35000)  # 70,000 rows x 2^10 hashed features
    study = tmp_path / "big.toml"
    study.write_text(
        'name = "big"\n[[datasets]]\nkind = "file"\nsource = "' + str(path) + '"\nbits = 10\n'
        '[learners.perceptron]\nkind = "perceptron"\n'
    )
    status, err = cli("study", str(study), "--out", str(tmp_path / "out"))
    assert status == 2 and err.count("\n") == 1, err
    assert "data set 'big': 56000 rows x 1024 features is too large" in err and "evaluate.regret = 'none'" in err


@pytest.mark.parametrize(
    "dataset, learner, message",
    [
        (
            'format = "csv"\ntarget = "y"\nlabels = ["x", "q"]',
            "",
            "data set 'd': d.csv, line 3: label 'z' is not one of datasets[1].labels ['x', 'q']",
        ),
        (
            'format = "csv"\ntarget = "y"\ntask = "regression"',
            "",
            "data set 'd': d.csv: datasets[1].task = 'regression' needs numeric targets; label 'x' is not a number",
        ),
        (
            'format = "csv"\ntarget = "y"\nchunk_rows = 2\nlabels = ["x", "q"]',
            "",
            "data set 'd': d.csv, line 3: label 'z' is not one of datasets[1].labels ['x', 'q']",
        ),
        (
            'format = "csv"\ntarget = "y"',
            "classes = 3",
            "learners.pa on 'hyperplane': 2 labels, but the learner has learners.pa.classes = 3",
        ),
    ],
)
def test_a_data_set_found_wrong_while_training_names_the_study_s_own_key(
    tmp_path, monkeypatch, dataset, learner, message
):
    monkeypatch.chdir(tmp_path)
    Path("d.csv").write_text("a,b,y\n1,2,x\n2,1,z\n3,1,x\n1,3,z\n2,2,x\n")
    Path("s.toml").write_text(
        'name = "s"\n[evaluate]\norders = 2\ntune = 0.0\nregret = "none"\n'
        '[[datasets]]\nkind = "hyperplane"\nrows = 20\nfeatures = 2\n'  # datasets[0] runs first, and is right
        f'[[datasets]]\nkind = "file"\nsource = "d.csv"\n{dataset}\n'
        f'[learners.pa]\nkind = "passive_aggressive"\n{learner}\n'
    )
    status, err = cli("study", "s.toml", "--out", "out", "--quiet")
    assert (status, err) == (2, f"ocolearn: error: s.toml: {message}\n")


def test_flh_on_a_multiclass_data_set_runs_one_vs_rest_and_its_rounds_name_the_study_s_key(tmp_path, monkeypatch):
    # Before: FLH's classes (its experts', not a field) kept it from one-vs-rest, and fit_learner's
    # replace(classes=3) raised a TypeError; a rounds error named 'learner.base.levels', no file.
    from ocolearn.learners.one_vs_rest import OneVsRest

    study = studies.from_dict(
        {"name": "f", "datasets": [{"kind": "bundled", "source": "iris"}], "learners": {"f": {"kind": "flh"}}}
    )
    data = studies.read_dataset(study.datasets[0])
    inner, _, prefix = studies.fitted(study.learners["f"], data, study.evaluate, "test")
    assert isinstance(inner, OneVsRest) and inner.base.name == "flh" and (inner.classes, prefix) == (3, "base.")
    monkeypatch.chdir(tmp_path)
    Path("s.toml").write_text(
        BASE.replace('kind = "passive_aggressive"', 'kind = "flh"\nlevels = 3').split("[learners.pa.tune]")[0]
    )
    status, err = cli("study", "s.toml", "--out", "out", "--quiet")
    where = "s.toml: learners.pa on 'iris': learners.pa.levels = 3"
    assert (status, err) == (
        2,
        f"ocolearn: error: {where} lets flh run 6 rounds, and this run goes to round 120; raise learners.pa.levels\n",
    )


@pytest.mark.parametrize(
    "evaluate, dataset, key, value",
    [
        ("tune_seed = -1", "", "evaluate.tune_seed", -1),  # (before: run, unused by a stream's prefix)
        ("test_seed = 4294967296", "", "evaluate.test_seed", 4294967296),
        ("", "seed = -1", "datasets[0].seed", -1),  # (before: NumPy's "expected non-negative integer" traceback)
        ("", "seed = 4294967296", "datasets[0].seed", 4294967296),
    ],
)
def test_a_study_s_seeds_are_seeds_as_a_config_s_are(tmp_path, monkeypatch, evaluate, dataset, key, value):
    monkeypatch.chdir(tmp_path)
    Path("s.toml").write_text(
        f'name = "s"\n[evaluate]\norders = 2\ntest = 0.2\n{evaluate}\n[[datasets]]\nkind = "hyperplane"\nrows = 50\n'
        f'{dataset}\n[learners.pa]\nkind = "passive_aggressive"\n'
    )
    status, err = cli("study", "s.toml", "--out", "out", "--quiet")
    assert (status, err) == (2, f"ocolearn: error: s.toml: '{key}' must be a seed in 0..4294967295, got {value}\n")


def test_set_reaches_a_data_set_by_the_key_the_messages_name(tmp_path):
    # Before: "--set: 'datasets[1].seed=5': 'datasets[1].seed' is not a key", though the study's
    # messages name its data sets' keys so ('unknown key 'datasets[0].chunk_rows'').
    path = tmp_path / "s.toml"
    path.write_text(BASE + '[[datasets]]\nkind = "hyperplane"\nrows = 100\nseed = 3\n')
    study = studies.load(path, ["datasets[1].seed=5", "datasets[0].source=wine", "evaluate.tune_seed=2"])
    assert [d.seed for d in study.datasets] == [0, 5] and study.datasets[0].source == "wine"
    assert studies.load(path).datasets[1].seed == 3 and study.evaluate.tune_seed == 2
    for given, expected in (
        ("datasets[2].seed=5", "--set datasets[2].seed=5: 'datasets[2]' is not in the file ('datasets' has 2)"),
        ("evaluate[0].orders=3", "--set evaluate[0].orders=3: 'evaluate[0]' is not a table"),
        (
            "datasets[1]=5",
            "--set: 'datasets[1]=5': 'datasets[1]' is a table; set one of its keys (datasets[1].KEY=VALUE)",
        ),
        ("datasets[1].seed=-1", "'datasets[1].seed' must be"),
    ):
        status, err = cli("study", str(path), "--set", given, "--out", str(tmp_path / "out"))
        assert status == 2 and err.count("\n") == 1 and err.startswith("ocolearn: error: "), err
        assert expected in err, err


def test_a_study_holds_one_data_set_s_compiled_programs_at_a_time(tmp_path, monkeypatch):
    """The programs compiled for a data set's shapes are dropped before the next data set:
    each data set starts with none of the previous one's (the sweep's jit cache is empty)."""
    from ocolearn import sweep

    held = []
    evaluate = studies.evaluate_learner

    def counted(study, entry, data, *rest):
        if entry is next(iter(study.learners.values())):  # (each data set's first learner)
            held.append(sweep._sweep_chunk._cache_size())
        return evaluate(study, entry, data, *rest)

    monkeypatch.setattr(studies, "evaluate_learner", counted)
    studies.run_study(studies.from_dict(small()), tmp_path)
    assert len(held) == 2 and held[1] == 0
