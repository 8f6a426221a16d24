"""The scikit-learn estimators: scikit-learn's own checks, partial_fit as one longer run, a grid
search over a learner's field, sparse input, and the model file of ``ocolearn train``."""

import contextlib
import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

import jax
import numpy as np
import pytest

from ocolearn import (
    MIRA,
    OGD,
    AdaGrad,
    Constant,
    EpsilonInsensitive,
    FTRLProximal,
    Hinge,
    InvSqrt,
    Logistic,
    OneVsRest,
    PassiveAggressive,
    Pegasos,
    Perceptron,
    Sparse,
    Squared,
    modelfile,
    run,
)
from ocolearn import pipeline as model_file
from ocolearn.cli import main as cli_main
from ocolearn.config import ConfigError
from ocolearn.data import DataError
from ocolearn.pipeline import with_intercept_field, with_pipeline
from ocolearn.preprocess import Intercept

sklearn = pytest.importorskip("sklearn")
scipy_sparse = pytest.importorskip("scipy.sparse")

from sklearn.datasets import dump_svmlight_file  # noqa: E402
from sklearn.linear_model import Perceptron as SkPerceptron  # noqa: E402
from sklearn.linear_model import SGDClassifier, SGDRegressor  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

from ocolearn.estimators import OnlineClassifier, OnlineRegressor, csr_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def blobs(n=400, d=5, classes=2, seed=0):
    """Labels from the argmax of random linear scores, features on a grid of 1/8 (exact sums)."""
    rng = np.random.default_rng(seed)
    X = (rng.integers(-16, 17, size=(n, d)) / 8).astype(np.float32)
    scores = X @ rng.normal(size=(d, classes))
    y = np.argmax(scores, axis=1) if classes > 2 else (scores[:, 0] > scores[:, 1]).astype(int)
    return X, np.asarray(["cat", "dog", "emu", "fox"])[y]


RAW = {"fit_intercept": False, "scale": "none"}  # the learner on the raw rows, as ocolearn.run runs it


def leaves_equal(a, b):
    return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize(
    "estimator",
    [
        OnlineClassifier(),
        OnlineClassifier("pegasos", max_iter=2, random_state=0),
        OnlineClassifier(Perceptron(), average=True, max_iter=3),
        OnlineClassifier(OGD(Logistic()), max_iter=2),  # with predict_proba
        OnlineRegressor(),
        OnlineRegressor("adagrad", scale="normalize", fit_intercept=False),
    ],
    ids=repr,
)
def test_scikit_learn_estimator_checks(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SkipTest warnings for pandas and the array API
        check_estimator(estimator, expected_failed_checks=estimator.expected_failed_checks)


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("learner", ["pegasos", "perceptron", "passive_aggressive"])
def test_partial_fit_equals_one_longer_run_bit_for_bit(learner, classes):
    X, y = blobs(n=2600, classes=classes)  # Pegasos folds its scale every 1024 rounds
    labels = np.unique(y)
    whole = OnlineClassifier(learner).fit(X, y)
    pieces = OnlineClassifier(learner)
    for part in np.split(np.arange(len(y)), [700, 1500, 1501]):
        pieces.partial_fit(X[part], y[part], classes=labels)
    # The weights the states stand for (Pegasos may hold them as scale * W folded by another
    # power of two, as its folds fall per run), the round and every score agree exactly:
    np.testing.assert_array_equal(pieces.model_.w, whole.model_.w)
    assert int(pieces.state_.t) == int(whole.state_.t) == len(y) + 1
    np.testing.assert_array_equal(pieces.decision_function(X), whole.decision_function(X))
    # A partial_fit that forgot its state (restarting each call) is told apart:
    last = OnlineClassifier(learner).partial_fit(X[1501:], y[1501:], classes=labels)
    assert not np.array_equal(last.model_.w, whole.model_.w)


def test_partial_fit_on_sparse_rows_of_one_width_equals_one_longer_run():
    rng = np.random.default_rng(1)
    n, d = 900, 512  # (wider than containers.NARROW: sparse rows)
    cols = np.argsort(rng.random((n, d)), axis=1)[:, :5]  # 5 distinct features per row
    csr = scipy_sparse.csr_matrix((rng.normal(size=5 * n), cols.ravel(), np.arange(0, 5 * n + 1, 5)), shape=(n, d))
    y = np.where(rng.normal(size=n) + csr @ rng.normal(size=d) > 0, 1, -1)
    whole = OnlineRegressor("ogd", fit_intercept=False, scale="none").fit(csr, y)
    pieces = OnlineRegressor("ogd", fit_intercept=False, scale="none")
    pieces.partial_fit(csr[:400], y[:400]).partial_fit(csr[400:], y[400:])
    assert leaves_equal(pieces.state_, whole.state_)
    expected = run(OGD(), Sparse(*_padded(csr), d), y.astype(np.float32)).state
    assert leaves_equal(whole.state_, expected)


def _padded(csr):
    rows = csr_rows(csr)
    return rows.idx, rows.val


def test_csr_rows_sum_repeated_entries_and_take_64_bit_indices():
    coo = scipy_sparse.coo_matrix(([1.0, 2.0, 4.0, -3.0], ([0, 0, 2, 0], [3, 1, 0, 3])), shape=(3, 5))
    csr = coo.tocsr(copy=False)
    csr.indices, csr.indptr = csr.indices.astype(np.int64), csr.indptr.astype(np.int64)
    rows = csr_rows(coo)
    assert rows.idx.shape == (3, 2) and rows.idx.dtype == np.int32 and rows.dim == 5
    np.testing.assert_array_equal(rows.todense(), coo.toarray().astype(np.float32))
    np.testing.assert_array_equal(csr_rows(csr).todense(), coo.toarray().astype(np.float32))


def one_epoch(model, X, y, **fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch does not "converge"
        return model.fit(X.astype(np.float64), y, **fit)


def test_perceptron_coef_and_intercept_equal_scikit_learn_on_dense_and_sparse_input():
    X, y = blobs()
    # Dense rows: the intercept is the weight of a constant feature 1, as in scikit-learn's dense SGD.
    sk = one_epoch(SkPerceptron(shuffle=False, max_iter=1, tol=None), X, y)
    estimator = OnlineClassifier("perceptron", scale="none").fit(X, y)
    assert estimator.coef_.shape == (1, 5) and estimator.intercept_.shape == (1,) and estimator.n_features_in_ == 5
    np.testing.assert_array_equal(estimator.coef_, sk.coef_.astype(np.float32))
    np.testing.assert_array_equal(estimator.intercept_, sk.intercept_.astype(np.float32))
    np.testing.assert_array_equal(estimator.predict(X), sk.predict(X))
    np.testing.assert_allclose(estimator.decision_function(X), sk.decision_function(X), rtol=1e-6)
    # scikit-learn moves a sparse model's intercept by 0.01 of its steps (SPARSE_INTERCEPT_DECAY), so
    # the sparse rows are compared without one:
    sk = one_epoch(SkPerceptron(fit_intercept=False, shuffle=False, max_iter=1, tol=None), X, y)
    for data in (X, scipy_sparse.csr_matrix(X)):
        estimator = OnlineClassifier("perceptron", **RAW).fit(data, y)
        np.testing.assert_array_equal(estimator.model_.w, sk.coef_.ravel().astype(np.float32))
        np.testing.assert_array_equal(estimator.intercept_, [0.0])
        np.testing.assert_array_equal(estimator.predict(data), sk.predict(X))


def test_grid_search_over_a_learners_field():
    X, y = blobs(n=300)
    lams = [1e-3, 1e-1, 10.0]
    search = GridSearchCV(OnlineClassifier("pegasos", max_iter=2, **RAW), {"learner__lam": lams}, cv=3).fit(X, y)
    assert search.cv_results_["param_learner__lam"].tolist() == lams
    best = search.best_params_["learner__lam"]
    assert search.best_estimator_.learner == Pegasos(best)
    # The refitted model is exactly a run of Pegasos(best) over all rows, labels -1/+1:
    targets = np.where(y == "dog", 1.0, -1.0).astype(np.float32)
    state = run(Pegasos(best), X, targets, passes=2, trace=False).state
    np.testing.assert_array_equal(search.best_estimator_.model_.w, np.asarray(Pegasos(best).weights(state)))
    scores = search.cv_results_["mean_test_score"]
    assert scores.max() > 0.8 and len(set(np.round(scores, 6))) > 1  # the field changed the model


def test_nested_params_of_a_learners_parts():
    estimator = OnlineRegressor("ogd")
    params = estimator.get_params()
    assert params["learner__schedule__eta"] == OGD().schedule.eta and isinstance(params["learner__loss"], Squared)
    estimator.set_params(learner__schedule__eta=0.25, max_iter=3)
    assert estimator.learner == OGD(schedule=InvSqrt(0.25)) and estimator.max_iter == 3
    with pytest.raises(ValueError, match="no field 'rate'"):
        estimator.set_params(learner__rate=1.0)


def test_multiclass_runs_k_class_learners_or_one_vs_rest():
    X, y = blobs(n=600, classes=3)
    assert OnlineClassifier("perceptron", **RAW).fit(X, y).learner_ == Perceptron(classes=3)
    ovr = OnlineClassifier("pegasos", max_iter=3, **RAW).fit(X, y)
    assert ovr.learner_ == OneVsRest(Pegasos(), classes=3)
    labels = np.searchsorted(np.unique(y), y).astype(np.int32)
    w = OneVsRest(Pegasos(), classes=3).weights(run(OneVsRest(Pegasos(), classes=3), X, labels, passes=3).state)
    np.testing.assert_allclose(ovr.decision_function(X), X @ np.asarray(w, np.float64).T, rtol=1e-5, atol=1e-5)
    assert ovr.score(X, y) > 0.5  # better than a guess among three


def test_regressor_predicts_w_dot_x_of_the_run():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    y = (X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.01 * rng.normal(size=300)).astype(np.float32)
    estimator = OnlineRegressor(OGD(schedule=InvSqrt(0.3)), max_iter=4, random_state=1, **RAW).fit(X, y)
    w = run(OGD(schedule=InvSqrt(0.3)), X, y, seed=1, passes=4).state.w
    np.testing.assert_allclose(estimator.predict(X), X.astype(np.float64) @ np.asarray(w, np.float64), rtol=1e-6)
    assert estimator.score(X, y) > 0.99


def test_weights_that_diverge_are_an_error_not_a_model():
    X = np.array([[1.0, 2.0], [3.0, -1.0], [-2.0, 5.0]] * 50)
    estimator = OnlineRegressor(OGD(schedule=Constant(1e3)))
    with pytest.raises(ValueError, match="OGD's weights are not finite after training"):
        estimator.fit(X, X @ np.array([1.0, 2.0]))
    assert not hasattr(estimator, "model_")


def test_save_and_load_the_model_file_of_ocolearn_train(tmp_path):
    X, y = blobs(n=500, classes=3)
    estimator = OnlineClassifier("perceptron", average=True, max_iter=2).fit(X, y)
    estimator.save(tmp_path / "m.npz")
    loaded = OnlineClassifier.load(tmp_path / "m.npz")
    assert loaded.learner == Perceptron() and loaded.average and loaded.max_iter == 2
    np.testing.assert_array_equal(loaded.predict(X), estimator.predict(X))
    # The CLI's own reader predicts the same labels from the file:
    rows = csr_rows(scipy_sparse.csr_matrix(X))
    assert modelfile.predict(modelfile.load(tmp_path / "m.npz"), rows) == estimator.predict(X).tolist()
    with pytest.raises(ValueError, match="holds weights, not the learner's state"):
        loaded.partial_fit(X, y)


def test_a_model_trained_by_the_cli_predicts_here(tmp_path):
    X, y = blobs(n=300)
    data = model_file.SparseData(csr_rows(scipy_sparse.csr_matrix(X)), (y == "dog").astype(np.int64), ["cat", "dog"])
    modelfile.save(model_file.train(Pegasos(0.01), data, passes=2), tmp_path / "cli.npz")
    loaded = OnlineClassifier.load(tmp_path / "cli.npz")
    assert loaded.learner == Pegasos(0.01) and loaded.fit_intercept and loaded.scale == "normalize"
    # train's default pipeline for sparse rows (an intercept, normalize) is the estimator's with
    # scale="normalize" (a matrix this narrow is read as the dense rows it holds, which auto standardizes):
    estimator = OnlineClassifier(Pegasos(0.01), scale="normalize", max_iter=2).fit(scipy_sparse.csr_matrix(X), y)
    np.testing.assert_array_equal(loaded.coef_, estimator.coef_)
    np.testing.assert_array_equal(loaded.predict(X), estimator.predict(X))


# -- per-example weights ---------------------------------------------------------------------


def weights_and_rows(n=300, d=4, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    return X, rng.integers(0, 4, size=n).astype(np.float64)  # integer weights, zeros among them


SK_SGD = dict(penalty=None, shuffle=False, max_iter=1, tol=None)


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (OGD(Hinge(), Constant(0.1)), dict(loss="hinge", learning_rate="constant", eta0=0.1)),
        (OGD(Logistic(), Constant(0.1)), dict(loss="log_loss", learning_rate="constant", eta0=0.1)),
        (PassiveAggressive(0.5, 1), dict(loss="hinge", learning_rate="pa1", eta0=0.5, fit_intercept=False)),
        (PassiveAggressive(0.5, 2), dict(loss="hinge", learning_rate="pa2", eta0=0.5, fit_intercept=False)),
        (Perceptron(), dict(loss="perceptron", learning_rate="constant", eta0=1.0)),
    ],
    ids=["ogd-hinge", "ogd-logistic", "pa1", "pa2", "perceptron"],
)
def test_sample_and_class_weights_scale_each_step_as_scikit_learns_sgd(ours, theirs):
    # scikit-learn's PA leaves the intercept's constant 1 out of ||x||^2, ocolearn's PA on (x, 1)
    # counts it: the two agree without an intercept.
    X, sw = weights_and_rows()
    y = np.where(X @ [1.0, -1.0, 0.5, 0.2] + 0.3 > 0, "yes", "no")
    options = dict(scale="none", fit_intercept=theirs.get("fit_intercept", True))
    for class_weight in (None, {"no": 0.5, "yes": 3.0}, "balanced"):
        sk = one_epoch(SGDClassifier(class_weight=class_weight, **theirs, **SK_SGD), X, y, sample_weight=sw)
        est = OnlineClassifier(ours, class_weight=class_weight, **options).fit(X, y, sample_weight=sw)
        # float32 sums against scikit-learn's float64 ones (PA-I's weights grow to 1e4 here):
        np.testing.assert_allclose(est.coef_, sk.coef_, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(est.intercept_, sk.intercept_, rtol=1e-4, atol=1e-5)
    # The weights changed the model (a test that ignored them would fail here):
    plain = OnlineClassifier(ours, **options).fit(X, y)
    assert np.abs(plain.coef_ - est.coef_).max() > 1e-2


def test_one_vs_rest_class_weight_is_scikit_learns_positive_only_weight():
    X, sw = weights_and_rows(n=400)
    y = np.argmax(X[:, :3] + [0.2, 0.0, -0.2], axis=1)
    class_weight = {0: 2.0, 1: 0.5, 2: 1.5}
    theirs = dict(loss="hinge", learning_rate="constant", eta0=0.1)
    sk = one_epoch(SGDClassifier(class_weight=class_weight, **theirs, **SK_SGD), X, y, sample_weight=sw)
    est = OnlineClassifier(OGD(Hinge(), Constant(0.1)), scale="none", class_weight=class_weight)
    est.fit(X, y, sample_weight=sw)
    assert est.learner_.learner == with_intercept_field(OneVsRest(OGD(Hinge(), Constant(0.1)), classes=3))
    np.testing.assert_allclose(est.coef_, sk.coef_, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(est.intercept_, sk.intercept_, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rate", ["pa1", "pa2"])
def test_sample_weight_in_regression_is_scikit_learns(rate):
    X, sw = weights_and_rows()
    y = X @ [1.0, -2.0, 0.5, 0.0] + 3.0
    cases = [
        (OGD(Squared(), Constant(0.01)), dict(loss="squared_error", learning_rate="constant", eta0=0.01)),
        (
            PassiveAggressive(0.5, int(rate[-1]), EpsilonInsensitive(0.1)),
            dict(loss="epsilon_insensitive", epsilon=0.1, learning_rate=rate, eta0=0.5, fit_intercept=False),
        ),
    ]
    for ours, theirs in cases:
        sk = one_epoch(SGDRegressor(**theirs, **SK_SGD), X, y, sample_weight=sw)
        options = dict(scale="none", fit_intercept=theirs.get("fit_intercept", True))
        est = OnlineRegressor(ours, **options).fit(X, y, sample_weight=sw)
        assert est.coef_.shape == (4,) and est.intercept_.shape == (1,)
        np.testing.assert_allclose(est.coef_, sk.coef_, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(est.intercept_, sk.intercept_, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(est.predict(X), sk.predict(X), rtol=1e-5, atol=1e-4)


def test_pegasos_weight_scales_the_hinge_step_not_the_shrinkage():
    X, sw = weights_and_rows(n=200)
    y = np.where(X[:, 0] - X[:, 1] > 0, 1.0, -1.0)
    lam, w = 0.1, np.zeros(4)
    for t, (x, label, s) in enumerate(zip(X.astype(np.float64), y, sw, strict=True), start=1):
        eta = 1.0 / (lam * t)
        hit = label * (w @ x) < 1.0
        w = (1.0 - eta * lam) * w + (eta * s * label * x if hit else 0.0)
    state = run(Pegasos(lam), X, y.astype(np.float32), weights=sw, trace=False).state
    np.testing.assert_allclose(Pegasos(lam).weights(state), w, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "learner",
    [OGD(), AdaGrad(), Pegasos(), Perceptron(), PassiveAggressive(), OneVsRest(Pegasos(), classes=3), FTRLProximal()],
    ids=lambda learner: learner.name,
)
def test_weights_of_one_are_the_unweighted_run_bit_for_bit(learner):
    X, _ = weights_and_rows(n=1500)  # Pegasos tidies every 1024 rounds
    classes = getattr(learner, "classes", 0)
    y = np.argmax(X[:, :3], axis=1).astype(np.int32) if classes else np.sign(X[:, 0]).astype(np.float32)
    # Behind the intercept (standardized rows feed XLA programs that may contract a product with
    # a sum differently with and without the weight's multiplication: 1e-8 apart for FTRL).
    learner = with_pipeline(learner, (Intercept(),))
    plain = run(learner, X, y, seed=1, passes=2, trace=False)
    ones = run(learner, X, y, seed=1, passes=2, trace=False, weights=np.ones(len(y)))
    assert leaves_equal(plain, ones)
    twos = run(learner, X, y, seed=1, passes=2, trace=False, weights=np.full(len(y), 2.0))
    assert not leaves_equal(plain.state, twos.state)


def test_weights_are_checked_and_learners_without_a_weighted_step_say_so():
    X, _ = weights_and_rows(n=10)
    y = np.sign(X[:, 0]).astype(np.float32)
    with pytest.raises(DataError, match=r"weights\[3\] is -1; weights are finite numbers >= 0"):
        run(OGD(), X, y, weights=[1, 1, 1, -1, 1, 1, 1, 1, 1, 1])
    with pytest.raises(DataError, match=r"one number per row \(10\), got shape \(9,\)"):
        run(OGD(), X, y, weights=np.ones(9))
    with pytest.raises(ValueError, match="mira takes no per-example weight"):
        run(MIRA(), X, (y > 0).astype(np.int32), weights=np.ones(10))
    with pytest.raises(ValueError, match="Sample weights must contain at least one non-zero number"):
        OnlineClassifier().fit(X, y, sample_weight=np.zeros(10))
    with pytest.raises(ValueError, match="class_weight='balanced' needs all the labels at once"):
        OnlineClassifier(class_weight="balanced").partial_fit(X, y, classes=[-1.0, 1.0])


# -- probabilities, parameters, passes -----------------------------------------------------


def test_predict_proba_is_scikit_learns_for_the_logistic_loss_only():
    X, y = blobs(n=400, classes=3)
    theirs = dict(loss="log_loss", learning_rate="constant", eta0=0.05)
    for labels in (y, np.where(y == "cat", "cat", "dog")):  # three classes, then two
        sk = one_epoch(SGDClassifier(**theirs, **SK_SGD), X, labels)
        est = OnlineClassifier(OGD(Logistic(), Constant(0.05)), scale="none").fit(X, labels)
        np.testing.assert_allclose(est.predict_proba(X), sk.predict_proba(X), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(est.predict_log_proba(X), sk.predict_log_proba(X), rtol=1e-4, atol=1e-5)
        assert np.array_equal(est.classes_[np.argmax(est.predict_proba(X), axis=1)], est.predict(X))
    hinge = OnlineClassifier("pegasos").fit(X, y)
    assert not hasattr(hinge, "predict_proba") and not hasattr(OnlineClassifier("perceptron"), "predict_log_proba")
    with pytest.raises(AttributeError, match="has no attribute 'predict_proba'") as caught:
        hinge.predict_proba(X)
    assert "probabilities need the logistic loss (learner__loss='logistic')" in str(caught.value.__cause__)


def test_set_params_takes_a_part_by_name_or_table():
    estimator = OnlineClassifier("ogd").set_params(learner__loss="logistic")
    assert estimator.learner == OGD(Logistic()) and hasattr(estimator, "predict_proba")
    estimator.set_params(learner__schedule={"kind": "constant", "eta": 0.5})
    assert estimator.learner == OGD(Logistic(), Constant(0.5))
    with pytest.raises(ConfigError, match="'loss.kind' = 'logistc' is not a known loss \\(did you mean 'logistic'"):
        estimator.set_params(learner__loss="logistc")
    X, y = blobs(n=200)
    search = GridSearchCV(OnlineClassifier("ogd"), {"learner__loss": ["hinge", "logistic"]}, cv=2).fit(X, y)
    assert search.cv_results_["param_learner__loss"].tolist() == ["hinge", "logistic"]


def test_warm_start_continues_the_run_and_its_shuffles():
    X, y = blobs(n=500)
    whole = OnlineClassifier("pegasos", max_iter=4, random_state=2).fit(X, y)
    warm = OnlineClassifier("pegasos", max_iter=2, random_state=2, warm_start=True).fit(X, y).fit(X, y)
    np.testing.assert_array_equal(warm.coef_, whole.coef_)
    assert warm.n_iter_ == 2 and int(warm.state_.t) == int(whole.state_.t) == 4 * len(y) + 1
    cold = OnlineClassifier("pegasos", max_iter=2, random_state=2).fit(X, y)
    np.testing.assert_array_equal(
        cold.fit(X, y).coef_, OnlineClassifier("pegasos", max_iter=2, random_state=2).fit(X, y).coef_
    )
    assert not np.array_equal(cold.coef_, whole.coef_)


def test_verbose_prints_each_pass_with_the_runs_sums(capsys):
    X, y = blobs(n=300)
    OnlineClassifier("perceptron", max_iter=2, random_state=0, verbose=1, **RAW).fit(X, y)
    targets = np.where(y == "dog", 1.0, -1.0).astype(np.float32)
    sums = [run(Perceptron(), X, targets, 0, passes=2, trace=True).trace.loss[k * 300 : (k + 1) * 300] for k in (0, 1)]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].startswith("-- Pass 2: 300 rounds, average loss")
    for line, losses in zip(lines, sums, strict=True):
        assert f"average loss {float(np.sum(losses)) / 300:.6g}" in line


def test_a_fit_of_many_passes_in_one_program_equals_the_fit_of_one_call_per_pass():
    """Without verbose a fit runs all its passes in one program; verbose makes a call per pass
    (to print each pass's line): the same model, bit for bit."""
    X, y = blobs(n=300)
    for name in ("pegasos", "perceptron"):
        quiet = OnlineClassifier(name, max_iter=4, random_state=3).fit(X, y)
        with contextlib.redirect_stdout(io.StringIO()):
            loud = OnlineClassifier(name, max_iter=4, random_state=3, verbose=1).fit(X, y)
        np.testing.assert_array_equal(quiet.coef_, loud.coef_)
        np.testing.assert_array_equal(quiet.intercept_, loud.intercept_)


def test_import_without_scikit_learn_says_what_to_install():
    block = "import sys; sys.modules['sklearn'] = None; import ocolearn.estimators"
    done = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, env=_env())
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "ImportError: ocolearn.estimators needs scikit-learn and SciPy: pip install 'ocolearn[sklearn]'"
    )


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def test_a_model_saved_here_reads_identically_through_the_cli(tmp_path, capsys):
    rng = np.random.default_rng(4)
    X = (rng.normal(size=(300, 6)) * [1, 10, 100, 0.1, 1, 5]).astype(np.float32)
    y = np.argmax(X[:, :3] * [1.0, 0.1, 0.01], axis=1) + 1  # labels 1, 2, 3
    for estimator in (OnlineClassifier("pegasos", max_iter=2), OnlineClassifier(OGD(Logistic()), average=False)):
        labels = y if estimator.learner == "pegasos" else np.where(y == 1, 1, 2)
        estimator.fit(X[:200], labels[:200])
        estimator.save(tmp_path / "m.npz")
        dump_svmlight_file(X[200:].astype(np.float64), labels[200:], str(tmp_path / "test.svm"), zero_based=True)
        capsys.readouterr()
        assert cli_main(["predict", str(tmp_path / "m.npz"), str(tmp_path / "test.svm")]) == 0
        assert capsys.readouterr().out.split() == [str(c) for c in estimator.predict(X[200:])]
        assert cli_main(["test", str(tmp_path / "m.npz"), str(tmp_path / "test.svm")]) == 0
        error = 1.0 - estimator.score(X[200:], labels[200:])
        assert f"{error:.4f}" in capsys.readouterr().out


def test_diabetes_regression_is_within_ten_percent_of_sgd_regressor():
    """Issue 18's target: scikit-learn's diabetes data (bundled), its usual split, a few passes."""
    from sklearn.datasets import load_diabetes
    from sklearn.metrics import mean_squared_error
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_diabetes(return_X_y=True, scaled=False)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    sgd = make_pipeline(StandardScaler(), SGDRegressor(random_state=0)).fit(X_train, y_train)
    reference = mean_squared_error(y_test, sgd.predict(X_test))
    for model in (
        OnlineRegressor(),
        OnlineRegressor(max_iter=5, random_state=0),
        make_pipeline(StandardScaler(), OnlineRegressor(max_iter=5, random_state=0)),
    ):
        mse = mean_squared_error(y_test, model.fit(X_train, y_train).predict(X_test))
        assert mse < 1.1 * reference, (mse, reference)
    # Without the intercept the same learner is far off (the 27,149 of `train` without one):
    raw = OnlineRegressor(max_iter=5, random_state=0, fit_intercept=False).fit(X_train, y_train)
    assert mean_squared_error(y_test, raw.predict(X_test)) > 4 * reference
