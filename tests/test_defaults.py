"""The default learner, the learners' defaults against the constant predictor, the clip of online
standardization's early rows, and the progressive metrics under ``test``'s names (issue 38, items
3 and 4): against river, scikit-learn's metrics and float64 closed forms."""

import json
import math
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from conftest import in_process, script_module

from ocolearn.learners import OGD, Learner
from ocolearn.losses import Logistic
from ocolearn.metrics import auc, log_loss, probabilities
from ocolearn.modelfile import load, scores
from ocolearn.pipeline import default_learner, evaluate, with_pipeline
from ocolearn.preprocess import Intercept, Standardize, default_steps
from ocolearn.run import run
from ocolearn.schedules import Constant

ROOT = Path(__file__).resolve().parent.parent


bench = script_module(ROOT / "benchmarks" / "default_learner.py")  # the data sets and river's reference


def record() -> dict:
    """benchmarks/records/default_learner.json: every registered learner's defaults measured."""
    return json.loads(bench.RECORD.read_text())


def write_csv(path, X, y, regression):
    header = ",".join([*(f"x{j}" for j in range(X.shape[1])), "y"])
    lines = [header] + [
        ",".join([*(repr(float(v)) for v in x), repr(float(t)) if regression else str(int(t))])
        for x, t in zip(X, y, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def train_default(tmp_path, name):
    """``ocolearn train --format csv --target y`` with no learner on the data set's 75% (in the
    split's order): ``(model, held-out metrics of ocolearn test's, the split)``."""
    data = bench.split(name)
    X_train, X_test, y_train, y_test, task = data
    regression = task == "regression"
    train = write_csv(tmp_path / f"{name}_train.csv", X_train, y_train, regression)
    test = write_csv(tmp_path / f"{name}_test.csv", X_test, y_test, regression)
    model = tmp_path / f"{name}.npz"
    done = in_process("train", "--format", "csv", "--target", "y", train, "--model", model, "--quiet")
    assert done.returncode == 0, done.stderr
    trained = load(model)
    return trained, evaluate(trained, test), data, done.stderr


def within_rivers_margins(trained, held, data):
    """The issue's margins: 2 points of accuracy, 10% of MSE (ours may be better by any amount)."""
    progressive, river_held = bench.river_reference(*data)
    ours = trained.settings["progressive"]
    if data[-1] == "regression":
        assert ours["mse"] <= 1.1 * progressive and held["mse"] <= 1.1 * river_held, (ours, held, progressive)
    else:
        assert ours["accuracy"] >= progressive - 0.02 and held["accuracy"] >= river_held - 0.02, (ours, held)


def test_default_learner_on_wine_is_within_rivers_margins(tmp_path):
    trained, held, data, err = train_default(tmp_path, "wine")
    name, overrides = default_learner("multiclass")
    assert trained.settings["learner"]["kind"] == name == "one_vs_rest"
    assert trained.settings["learner"]["base"]["loss"] == {"kind": "logistic"}
    assert trained.settings["default_learner"] == " ".join([name, *(f"--set {v}" for v in overrides)])
    assert f"learner: {trained.settings['default_learner']} (the default" in err
    within_rivers_margins(trained, held, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["breast_cancer", "digits", "diabetes", "Phishing", "TrumpApproval"])
def test_default_learner_is_within_rivers_margins(tmp_path, name):
    """Issue 38's first Done-when: held-out and first-pass progressive figures of ``train`` with no
    learner against river's ``StandardScaler() | LogisticRegression()`` (one-vs-rest) or
    ``LinearRegression()`` on the same training order."""
    trained, held, data, _ = train_default(tmp_path, name)
    within_rivers_margins(trained, held, data)


def test_the_estimators_default_is_trains(tmp_path):
    """``OnlineClassifier()`` trains the learner ``train`` does: the same folded weights, and
    probabilities."""
    from ocolearn.estimators import OnlineClassifier, OnlineRegressor

    trained, _, (X_train, _, y_train, _, _), _ = train_default(tmp_path, "wine")
    estimator = OnlineClassifier().fit(X_train, y_train)
    np.testing.assert_allclose(estimator.coef_, trained.w, rtol=1e-5, atol=1e-6)
    p = estimator.predict_proba(X_train)
    np.testing.assert_allclose(p, probabilities(scores(trained, X_train)), rtol=1e-5, atol=1e-7)
    regressor = OnlineRegressor()
    assert regressor.get_params()["learner__schedule__eta"] == 0.02  # the default's settings, tunable


def test_every_registered_learner_beats_the_constant_or_says_why():
    """The record of ``benchmarks/default_learner.py --registry`` holds every registered learner
    (one added later fails here until it is measured), and each whose defaults lose to the
    constant predictor (the majority class, the mean) on a data set says in its docstring why it
    needs tuning."""
    RECORD = record()
    measured = RECORD["learners"]
    for name, cls in Learner.registry.items():
        if not getattr(cls, "from_files", True):
            continue
        assert name in measured, f"{name}: run python benchmarks/default_learner.py --registry"
        figures = measured[name]
        losing = [
            d
            for d, figure in figures.items()
            if figure is not None and not bench.beats(figure, RECORD["constant"][d], RECORD["datasets"][d])
        ]
        untrainable = all(figure is None for figure in figures.values())  # (optax: a rate to set)
        if losing or untrainable:
            assert "defaults need tuning" in " ".join(cls.__doc__.split()), (name, losing)


@pytest.mark.slow
def test_the_record_is_what_the_script_measures():
    RECORD = record()
    for name, dataset in (("adagrad", "diabetes"), ("ogd", "wine"), ("hedge", "Phishing")):
        figure, constant = bench.defaults_against_constant(name, bench.split(dataset))
        assert figure == pytest.approx(RECORD["learners"][name][dataset], rel=1e-4)
        assert constant == pytest.approx(RECORD["constant"][dataset], rel=1e-12)


def test_standardize_clips_predictions_of_far_rows_and_never_the_update():
    """Two rows 1e-3 apart, then a row 10 away: river's rule standardizes it to 10 / 5e-4 = 2e4
    deviations; the clip bounds it at sqrt(2) (two rows seen). The rows learned from are never
    clipped (Samuelson: a row among n lies within sqrt(n - 1) deviations), so the weights are
    river's, bit for bit."""
    X = np.array([[1.0], [1.001], [11.0], [0.5], [3.0]], np.float32)
    y = np.array([1.0, 2.0, 3.0, 0.0, 1.0], np.float32)
    learner = OGD(schedule=Constant(0.1))
    clipped = with_pipeline(learner, (Standardize(), Intercept()))
    river = with_pipeline(learner, (Standardize(clip=0.0), Intercept()))
    a, b = run(clipped, X, y), run(river, X, y)
    assert jnp.array_equal(a.state.inner.w, b.state.inner.w)
    fed = np.asarray(river.fed_rows(X, np.arange(5)))
    assert fed[2, 0] == pytest.approx(10.0 / 5e-4, rel=1e-2)  # river's rule: 2e4 deviations
    fed_clipped = np.asarray(clipped.fed_rows(X, np.arange(5)))
    assert fed_clipped[2, 0] == pytest.approx(math.sqrt(2), rel=1e-6)
    w = np.asarray(b.trace.prediction)  # (predictions of the rows before the far one are the same)
    np.testing.assert_array_equal(np.asarray(a.trace.prediction)[:2], w[:2])


def test_the_clip_ends_trumpapprovals_early_blow_up():
    """river's TrumpApproval in ten shuffled orders, OGD at 0.5 / sqrt(t): river's rule predicted
    rows thousands away early on; with the clip every order's progressive MSE is near the
    held-out one."""
    X, y, _ = bench.load("TrumpApproval")
    X, y = X.astype(np.float32), y.astype(np.float32)
    mse = {}
    for clip in (1.0, 0.0):
        steps = (Standardize(clip=clip), Intercept())
        learner = with_pipeline(bench.learner_for("ogd", ["schedule.eta=0.5"], 0), steps)
        traces = [run(learner, X, y, seed=seed).trace for seed in range(10)]
        mse[clip] = [float(np.mean((np.asarray(t.prediction) - np.asarray(t.target)) ** 2)) for t in traces]
    assert max(mse[1.0]) < 50 < max(mse[0.0])


def test_train_prints_progressive_figures_under_tests_names(tmp_path):
    """``train``'s ``progressive mse`` / ``accuracy`` / ``log_loss`` are the first pass's figures of
    the predictions made before each update (the runner's trace, summed in float64 here), beside
    the learner's own loss, labelled as its; ``test`` prints ``accuracy``, ``log_loss`` and ``auc``
    equal to scikit-learn's on the model's probabilities."""
    from sklearn import metrics as sk

    data = bench.split("breast_cancer")
    X_train, X_test, y_train, y_test, _ = data
    train = write_csv(tmp_path / "train.csv", X_train, y_train, False)
    test = write_csv(tmp_path / "test.csv", X_test, y_test, False)
    model = tmp_path / "m.npz"
    done = in_process("train", "--format", "csv", "--target", "y", train, "--model", model, "--quiet")
    trained = load(model)
    name, overrides = default_learner("binary")
    learner = with_pipeline(
        Learner.registry[name](loss=Logistic()), default_steps(dense=True)
    )  # adagrad --set loss=logistic
    assert overrides == ("loss=logistic",)
    trace = run(learner, X_train.astype(np.float32), np.where(y_train == 1, 1.0, -1.0).astype(np.float32)).trace
    s = np.asarray(trace.prediction, np.float64)
    expected = {"accuracy": sk.accuracy_score(y_train, s > 0), "log_loss": sk.log_loss(y_train, probabilities(s))}
    got = trained.settings["progressive"]
    assert got["accuracy"] == pytest.approx(expected["accuracy"], abs=1e-12)
    assert got["log_loss"] == pytest.approx(expected["log_loss"], rel=1e-4)
    lines = done.stderr.splitlines()
    assert (
        f"progressive accuracy {got['accuracy']:.6f}" in lines
        and f"progressive log_loss {got['log_loss']:.6f}" in lines
    )
    assert any(line.startswith("progressive learner loss (logistic) per pass: ") for line in lines)
    out = in_process("test", model, test).stdout.splitlines()
    held = scores(trained, X_test)
    assert f"accuracy {sk.accuracy_score(y_test, held > 0):.6f}" in out
    assert f"log_loss {sk.log_loss(y_test, probabilities(held)):.6f}" in out
    assert f"auc {sk.roc_auc_score(y_test, held):.6f}" in out


def test_metrics_equal_scikit_learns():
    from sklearn import metrics as sk

    rng = np.random.default_rng(0)
    s, y = rng.normal(size=40) * 3, rng.integers(0, 2, 40)
    S, Y = rng.normal(size=(50, 4)) * 3, rng.integers(0, 4, 50)
    assert log_loss(s, y) == pytest.approx(sk.log_loss(y, probabilities(s)), rel=1e-12)
    assert log_loss(S, Y) == pytest.approx(sk.log_loss(Y, probabilities(S)), rel=1e-12)
    assert auc(s, y) == pytest.approx(sk.roc_auc_score(y, s), rel=1e-12)
    assert auc(S, Y) == pytest.approx(sk.roc_auc_score(Y, probabilities(S), multi_class="ovr"), rel=1e-12)
    assert log_loss(np.array([800.0]), np.array([0])) == pytest.approx(800.0)  # no probability rounded to 0


def test_regression_progressive_mse_and_learner_loss_are_labelled(tmp_path):
    X = np.random.default_rng(1).normal(size=(60, 3))
    y = X @ [1.0, -2.0, 0.5] + 100.0
    data = write_csv(tmp_path / "r.csv", X, y, True)
    done = in_process("train", "--format", "csv", "--target", "y", data, "--model", tmp_path / "r.npz")
    assert done.returncode == 0, done.stderr
    trained = load(tmp_path / "r.npz")
    learner = with_pipeline(OGD(schedule=Constant(0.02)), default_steps(dense=True))
    trace = run(learner, X.astype(np.float32), y.astype(np.float32)).trace
    mse = float(np.mean((np.asarray(trace.prediction, np.float64) - y.astype(np.float32)) ** 2))
    assert trained.settings["progressive"]["mse"] == pytest.approx(mse, rel=1e-5)
    assert f"progressive mse {trained.settings['progressive']['mse']:.6f}" in done.stderr.splitlines()
    assert "progressive learner loss (squared/2, (p - y)^2 / 2) per pass: " in done.stderr


def test_settings_without_a_learner_name_the_default(tmp_path):
    X = np.random.default_rng(2).normal(size=(20, 2))
    data = write_csv(tmp_path / "r.csv", X, X @ [1.0, 2.0] + 50.0, True)
    train = ("train", "--format", "csv", "--target", "y", data, "--model", tmp_path / "m.npz", "--quiet")
    for extra, says in (
        (["--set", "kind=perceptron"], "--set kind=perceptron: name the learner with --learner, not --set kind"),
        (["--set", "eta=3"], "unknown key 'learner.eta'"),
        (["--average"], "--average: the default learner (adagrad) keeps no averaged weights"),
    ):
        done = in_process(*train, *extra)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
        assert done.stderr.startswith("ocolearn: error: ")
    done = in_process(*train, "--set", "eta=3")
    assert "(no --learner: the default learner for regression data is ogd --set schedule.kind=constant" in done.stderr
    assert in_process(*train, "--set", "schedule.eta=0.01").returncode == 0  # a setting of the default
    assert load(tmp_path / "m.npz").settings["learner"]["schedule"] == {"kind": "constant", "eta": 0.01}


def test_scale_river_is_rivers_rule_at_every_door(tmp_path):
    """``--scale river``: standardization without the clip (``clip = 0`` in the model file), read
    back by the estimators as ``scale="river"``; the default clips."""
    from ocolearn.estimators import OnlineClassifier

    X, y = mixed_rows()
    data = write_csv(tmp_path / "c.csv", X, y, False)
    for scale, clip in (("river", 0.0), ("auto", 1.0)):
        model = tmp_path / f"{scale}.npz"
        done = in_process("train", "--format", "csv", "--target", "y", data, "--model", model, "--scale", scale)
        assert done.returncode == 0, done.stderr
        assert load(model).settings["pipeline"][1] == {"kind": "standardize", "clip": clip}  # (after impute)
        assert OnlineClassifier.load(model).scale == ("river" if clip == 0 else "standardize")
    assert default_steps(dense=True, scale="river")[0] == Standardize(clip=0.0)


def mixed_rows(n=40):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 3)) * [1.0, 100.0, 0.01]
    return X, (X[:, 0] > 0).astype(int)
