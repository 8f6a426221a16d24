"""``ocolearn predict --proba``: a header line naming the classes, then each row's class
probabilities, the columns of the estimator's ``predict_proba`` on the same model."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import in_process

pytest.importorskip("sklearn")

from sklearn.datasets import dump_svmlight_file, load_breast_cancer, load_diabetes, load_wine  # noqa: E402

from ocolearn.estimators import OnlineClassifier, OnlineRegressor  # noqa: E402


def saved(tmp_path, estimator, load):
    X, y = load(return_X_y=True)
    estimator.fit(X[::2], y[::2])
    estimator.save(tmp_path / "m.npz")
    dump_svmlight_file(X[1::2], y[1::2], str(tmp_path / "rows.svm"), zero_based=True)
    return estimator, X[1::2]


@pytest.mark.parametrize("load", [load_breast_cancer, load_wine])  # two classes; three, one-vs-rest
def test_predict_proba_writes_the_estimators_probabilities_under_a_header_of_classes(tmp_path, load):
    estimator, rows = saved(tmp_path, OnlineClassifier("ogd").set_params(learner__loss="logistic"), load)
    done = in_process("predict", tmp_path / "m.npz", tmp_path / "rows.svm", "--proba")
    assert done.returncode == 0, done.stderr
    header, *lines = done.stdout.splitlines()
    assert header.split(",") == [str(c) for c in estimator.classes_]
    written = np.array([[float(v) for v in line.split(",")] for line in lines])
    np.testing.assert_allclose(written, estimator.predict_proba(rows), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(written.sum(axis=1), 1.0, rtol=1e-8)
    labels = in_process("predict", tmp_path / "m.npz", tmp_path / "rows.svm").stdout.split()
    assert labels == [header.split(",")[k] for k in written.argmax(axis=1)]


@pytest.mark.parametrize(
    "estimator, load, says",
    [
        (OnlineClassifier("perceptron"), load_breast_cancer, "the model's learner did not learn the logistic loss"),
        (OnlineRegressor(), load_diabetes, "a regression model predicts values"),
    ],
)
def test_predict_proba_of_a_model_without_probabilities_is_an_error_naming_the_option(tmp_path, estimator, load, says):
    saved(tmp_path, estimator, load)
    done = in_process("predict", tmp_path / "m.npz", tmp_path / "rows.svm", "--proba")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"ocolearn: error: --proba: {says}") and done.stderr.count("\n") == 1


@pytest.mark.parametrize("load", [load_breast_cancer, load_wine])
def test_test_reports_log_loss_and_auc_as_scikit_learn_computes_them(tmp_path, load):
    from sklearn.metrics import log_loss, roc_auc_score

    estimator, rows = saved(tmp_path, OnlineClassifier("ogd").set_params(learner__loss="logistic"), load)
    done = in_process("test", tmp_path / "m.npz", tmp_path / "rows.svm")
    assert done.returncode == 0, done.stderr
    printed = dict(line.split(" ", 1) for line in done.stdout.splitlines() if not line.startswith(("confusion", "0 ")))
    y = load(return_X_y=True)[1][1::2]
    p = estimator.predict_proba(rows)
    assert float(printed["log_loss"]) == pytest.approx(log_loss(y, p), rel=1e-5)
    theirs = roc_auc_score(y, p[:, 1]) if p.shape[1] == 2 else roc_auc_score(y, p, multi_class="ovr")
    assert float(printed["auc"]) == pytest.approx(theirs, rel=1e-5)
    # a model whose scores are not probabilities prints neither
    saved(tmp_path, OnlineClassifier("perceptron"), load)
    assert "log_loss" not in in_process("test", tmp_path / "m.npz", tmp_path / "rows.svm").stdout


def test_test_leaves_out_an_auc_it_cannot_define_and_says_why(tmp_path):
    # Rows of one class only: no pair of classes to rank; scikit-learn's roc_auc_score refuses them.
    # Before, `test` printed `auc nan`.
    _, rows = saved(tmp_path, OnlineClassifier("ogd").set_params(learner__loss="logistic"), load_breast_cancer)
    X, y = load_breast_cancer(return_X_y=True)
    dump_svmlight_file(X[y == 1], y[y == 1], str(tmp_path / "ones.svm"), zero_based=True)
    done = in_process("test", tmp_path / "m.npz", tmp_path / "ones.svm")
    assert done.returncode == 0, done.stderr
    printed = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert "auc" not in printed and "nan" not in done.stdout and float(printed["log_loss"]) > 0
    assert (
        f"ocolearn: warning: {tmp_path / 'ones.svm'}: auc left out: its rows hold labels of one class only"
        in done.stderr
    )
