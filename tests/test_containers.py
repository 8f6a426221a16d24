"""Any container, one model (issue 38.2): NumPy, ``scipy.sparse`` CSR and CSC, pandas and polars
DataFrames give the estimators, ``ocolearn.run`` and ``pipeline.train`` the same rows, so the
same model and the same predictions; a DataFrame's columns are read by ``containers.table_of``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")
scipy_sparse = pytest.importorskip("scipy.sparse")
pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from ocolearn import OGD, InvSqrt, run, run_passes  # noqa: E402
from ocolearn.data.containers import dense_enough, rows_of, table_of  # noqa: E402
from ocolearn.data.sparse_text import SparseData  # noqa: E402
from ocolearn.estimators import OnlineClassifier, OnlineRegressor  # noqa: E402
from ocolearn.features import Sparse  # noqa: E402
from ocolearn.modelfile import scores  # noqa: E402
from ocolearn.pipeline import train  # noqa: E402
from ocolearn.sweep import stack, sweep  # noqa: E402

CONTAINERS = {
    "numpy": np.asarray,
    "csr": scipy_sparse.csr_matrix,
    "csc": scipy_sparse.csc_matrix,
    "pandas": lambda X: pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]),
    "polars": lambda X: pl.DataFrame(X, schema=[f"x{j}" for j in range(X.shape[1])]),
}


def split(load):
    X, y = load(return_X_y=True)
    return train_test_split(X, y, test_size=0.25, random_state=0)


@pytest.mark.parametrize(
    "load, make",
    [
        (load_breast_cancer, lambda: OnlineClassifier("ogd")),  # CSR: weights not finite before
        (load_breast_cancer, OnlineClassifier),  # CSR: 15% of the test rows predicted otherwise before
        (load_wine, OnlineClassifier),
        (load_diabetes, OnlineRegressor),
    ],
)
def test_the_same_rows_give_the_same_model_and_predictions_in_any_container(load, make):
    a, b, ya, yb = split(load)
    dense = make().fit(a, ya)
    for name, container in CONTAINERS.items():
        fitted = make().fit(container(a), ya)
        np.testing.assert_array_equal(fitted.coef_, dense.coef_, err_msg=name)
        np.testing.assert_array_equal(fitted.intercept_, dense.intercept_, err_msg=name)
        np.testing.assert_array_equal(fitted.predict(container(b)), dense.predict(b), err_msg=name)
    # and the model is a model: better than the majority class, or the mean
    if make is OnlineRegressor:
        assert np.mean((dense.predict(b) - yb) ** 2) < np.mean((np.mean(ya) - yb) ** 2)
    else:
        majority = np.mean(yb == np.bincount(ya).argmax())
        assert dense.score(b, yb) > majority + 0.2


def test_a_sparse_matrix_is_read_dense_where_its_rows_are_narrow_or_full():
    narrow = scipy_sparse.random(50, 256, density=0.01, random_state=0, format="csr")
    wide = scipy_sparse.random(50, 1000, density=0.01, random_state=0, format="csr")
    full = scipy_sparse.csr_matrix(np.ones((3, 1000)))
    assert dense_enough(narrow) and dense_enough(full) and not dense_enough(wide)
    assert dense_enough(np.zeros((2, 10_000)))  # dense rows stay dense
    rows = rows_of(wide)
    assert isinstance(rows, Sparse) and rows.dim == 1000
    np.testing.assert_array_equal(rows.todense(), wide.toarray().astype(np.float32))
    np.testing.assert_array_equal(rows_of(narrow.tocsc()), narrow.toarray().astype(np.float32))


def test_partial_fit_takes_rows_of_the_kind_its_first_call_took():
    a, _, ya, _ = split(load_breast_cancer)
    whole = OnlineClassifier().partial_fit(a[:200], ya[:200], classes=[0, 1]).partial_fit(a[200:], ya[200:])
    # the same rows, the second batch as a CSR matrix: standardized as the dense rows were
    mixed = OnlineClassifier().partial_fit(a[:200], ya[:200], classes=[0, 1])
    mixed.partial_fit(scipy_sparse.csr_matrix(a[200:]), ya[200:])
    np.testing.assert_array_equal(mixed.coef_, whole.coef_)


def test_run_and_train_take_any_container():
    a, b, ya, _ = split(load_breast_cancer)
    a, b = a.astype(np.float32), b.astype(np.float32)
    y = np.where(ya == 1, 1.0, -1.0).astype(np.float32)
    state = run(OGD(), a, y).state
    for container in CONTAINERS.values():
        np.testing.assert_array_equal(run(OGD(), container(a), y).state.w, state.w)
    model = train(OGD(), SparseData(a, ya, ["0", "1"]))
    for container in CONTAINERS.values():
        other = train(OGD(), SparseData(container(a), ya, ["0", "1"]))
        np.testing.assert_array_equal(other.w, model.w)
        np.testing.assert_array_equal(scores(other, rows_of(container(b))), scores(model, b))


def test_run_passes_and_sweep_take_any_container():
    a, _, ya, _ = split(load_breast_cancer)
    a, y = a[:100].astype(np.float32), np.where(ya[:100] == 1, 1.0, -1.0).astype(np.float32)
    learners = stack([OGD(), OGD(schedule=InvSqrt(0.5))])
    passes, swept = run_passes(OGD(), a, y, passes=2).state.w, sweep(learners, a, y).state.w
    for container in CONTAINERS.values():
        np.testing.assert_array_equal(run_passes(OGD(), container(a), y, passes=2).state.w, passes)
        np.testing.assert_array_equal(sweep(learners, container(a), y).state.w, swept)


def test_table_of_reads_each_kind_of_column():
    frame = pd.DataFrame(
        {
            "x": [1.5, None, 3.0],
            "n": pd.Series([1, None, 3], dtype="Int64"),
            "b": [True, False, True],
            "s": ["red", None, "blue"],
            "c": pd.Categorical(["u", "v", None]),
            "t": pd.Series(["p", None, "q"], dtype="string"),
        }
    )
    table = table_of(frame)
    assert list(table) == ["x", "n", "b", "s", "c", "t"]
    np.testing.assert_array_equal(table["x"], [1.5, np.nan, 3.0])
    np.testing.assert_array_equal(table["n"], [1.0, np.nan, 3.0])
    np.testing.assert_array_equal(table["b"], [1.0, 0.0, 1.0])
    assert table["s"].tolist() == ["red", None, "blue"] and table["c"].tolist() == ["u", "v", None]
    assert table["t"].tolist() == ["p", None, "q"]
    polars = table_of(
        pl.DataFrame(
            {
                "x": [1.5, None, 3.0],
                "n": [1, None, 3],
                "b": [True, False, True],
                "s": ["red", None, "blue"],
                "c": pl.Series(["u", "v", None], dtype=pl.Categorical),
                "t": ["p", None, "q"],
            }
        )
    )
    assert list(polars) == list(table)
    for name in table:
        np.testing.assert_array_equal(polars[name], table[name], err_msg=name)


def test_a_frames_column_names_are_checked_as_scikit_learns_are():
    a, b, ya, _ = split(load_wine)
    names = [f"x{j}" for j in range(a.shape[1])]
    fitted = OnlineClassifier().fit(pd.DataFrame(a, columns=names), ya)
    assert fitted.feature_names_in_.tolist() == names
    np.testing.assert_array_equal(
        fitted.predict(pl.DataFrame(b, schema=names)), OnlineClassifier().fit(a, ya).predict(b)
    )
    with pytest.raises(ValueError, match="feature names"):
        fitted.predict(pd.DataFrame(b, columns=names[::-1]))


def test_a_frames_categorical_column_is_one_hot_as_a_csv_files_is():
    a, b, ya, _ = split(load_breast_cancer)
    names = ["a", "b", "c", "d"]
    colors = np.where(a[:, 0] > np.median(a[:, 0]), "red", "blue")
    frame = pd.DataFrame(a[:, 1:5], columns=names).assign(color=pd.Categorical(colors))
    fitted = OnlineClassifier().fit(frame, ya)
    one_hot = np.column_stack([a[:, 1:5], colors == "blue", colors == "red"])  # (the categories sorted)
    expected = OnlineClassifier().fit(one_hot, ya)
    np.testing.assert_array_equal(fitted.coef_, expected.coef_)
    test = pl.DataFrame(b[:, 1:5], schema=names).with_columns(color=pl.lit("green"))  # unseen: all zeros
    np.testing.assert_array_equal(
        fitted.predict(test), expected.predict(np.column_stack([b[:, 1:5], np.zeros((len(b), 2))]))
    )
    with pytest.raises(ValueError, match="column 'a' holds text or missing values; the model was fitted on numbers"):
        OnlineClassifier().fit(a[:, 1:5], ya).predict(pd.DataFrame(b[:, 1:5], columns=names).astype(object))


def test_a_frame_with_missing_cells_trains_as_the_same_csv_file_does(tmp_path):
    from ocolearn.pipeline import TrainOptions, train_file

    a, _, ya, _ = split(load_breast_cancer)
    X = a[:200, :4].copy()
    X[::7, 1] = np.nan  # a missing cell in column x1 every 7th row
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2", "x3"])
    fitted = OnlineClassifier("perceptron").fit(frame, ya[:200])
    frame.assign(y=ya[:200]).to_csv(tmp_path / "d.csv", index=False, na_rep="NA")
    model = train_file("perceptron", [], tmp_path / "d.csv", TrainOptions(fmt="csv", target="y"))
    assert model.settings["pipeline"][0]["kind"] == "impute"
    np.testing.assert_array_equal(fitted.model_.w, model.w)
    np.testing.assert_array_equal(fitted.model_.offset, model.offset)


def test_train_on_an_svmlight_file_of_raw_dense_rows_learns(tmp_path):
    """``--scale auto`` normalizes sparse rows: OGD on breast_cancer's raw rows as an svmlight
    file scored 0.371 held out without scaling (the majority class: 0.629)."""
    from sklearn.datasets import dump_svmlight_file

    from ocolearn.pipeline import TrainOptions, evaluate, train_file

    a, b, ya, yb = split(load_breast_cancer)
    dump_svmlight_file(a, ya, str(tmp_path / "train.svm"))
    dump_svmlight_file(b, yb, str(tmp_path / "test.svm"))
    model = train_file("ogd", [], tmp_path / "train.svm", TrainOptions(zero_based=True))
    assert [step["kind"] for step in model.settings["pipeline"]] == ["normalize", "intercept"]
    majority = np.mean(yb == np.bincount(ya).argmax())
    assert 1 - evaluate(model, tmp_path / "test.svm")["error_rate"] > majority + 0.2


def test_a_model_fitted_on_a_dataframe_reads_a_csv_file_of_its_columns(tmp_path, capsys):
    """An estimator fitted on a DataFrame with a text column and missing cells saves the model
    file of a CSV file of those columns (their table: the categories, the imputation), so
    ``ocolearn predict`` on the frame written as CSV prints the estimator's predictions, and the
    estimator loaded back predicts the frame bit for bit."""
    pandas = pytest.importorskip("pandas")
    from ocolearn.cli import main
    from ocolearn.estimators import OnlineRegressor

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(300), rng.standard_normal(300)
    color = rng.choice(["red", "green", "blue"], 300)
    y = 2 * a - b + (color == "red")
    frame = pandas.DataFrame({"a": a, "color": color, "b": b})
    frame.loc[::7, "a"] = np.nan
    fitted = OnlineRegressor(max_iter=3, random_state=0).fit(frame, y)
    fitted.save(tmp_path / "m.npz")
    frame.to_csv(tmp_path / "x.csv", index=False)
    assert main(["predict", str(tmp_path / "m.npz"), str(tmp_path / "x.csv")]) == 0
    printed = np.array(capsys.readouterr().out.split(), float)
    np.testing.assert_allclose(printed, fitted.predict(frame), rtol=1e-8, atol=1e-8)
    loaded = OnlineRegressor.load(tmp_path / "m.npz")
    assert list(loaded.feature_names_in_) == ["a", "color", "b"]
    assert (loaded.predict(frame) == fitted.predict(frame)).all()
