"""The scikit-learn estimators: scikit-learn's own checks, partial_fit as one longer run, a grid
search over a learner's field, sparse input, and the model file of ``ocolearn train``."""

import warnings

import jax
import numpy as np
import pytest

from ocolearn import OGD, Constant, InvSqrt, OneVsRest, Pegasos, Perceptron, Sparse, Squared, run
from ocolearn import model as model_file

sklearn = pytest.importorskip("sklearn")
scipy_sparse = pytest.importorskip("scipy.sparse")

from sklearn.linear_model import Perceptron as SkPerceptron  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

from ocolearn.estimators import OnlineClassifier, OnlineRegressor, csr_rows  # noqa: E402


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
        OnlineRegressor(),
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
    n, d = 900, 64
    cols = np.argsort(rng.random((n, d)), axis=1)[:, :5]  # 5 distinct features per row
    csr = scipy_sparse.csr_matrix((rng.normal(size=5 * n), cols.ravel(), np.arange(0, 5 * n + 1, 5)), shape=(n, d))
    y = np.where(rng.normal(size=n) + csr @ rng.normal(size=d) > 0, 1, -1)
    whole = OnlineRegressor("ogd", fit_intercept=False).fit(csr, y)
    pieces = OnlineRegressor("ogd", fit_intercept=False).partial_fit(csr[:400], y[:400]).partial_fit(csr[400:], y[400:])
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
    assert params["learner__schedule__eta"] == InvSqrt().eta and isinstance(params["learner__loss"], Squared)
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
    assert model_file.predict(model_file.load(tmp_path / "m.npz"), rows) == estimator.predict(X).tolist()
    with pytest.raises(ValueError, match="holds weights, not the learner's state"):
        loaded.partial_fit(X, y)


def test_a_model_trained_by_the_cli_predicts_here(tmp_path):
    X, y = blobs(n=300)
    data = model_file.SparseData(csr_rows(scipy_sparse.csr_matrix(X)), (y == "dog").astype(np.int64), ["cat", "dog"])
    model_file.save(model_file.train(Pegasos(0.01), data, passes=2), tmp_path / "cli.npz")
    loaded = OnlineClassifier.load(tmp_path / "cli.npz")
    assert loaded.learner == Pegasos(0.01)
    np.testing.assert_array_equal(
        loaded.predict(X), OnlineClassifier(Pegasos(0.01), max_iter=2, **RAW).fit(X, y).predict(X)
    )
