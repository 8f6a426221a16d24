import numpy as np
import pytest

from ocolearn.data import DataError, design, load_iris, read_csv, scale


def csv_file(tmp_path, text):
    path = tmp_path / "d.csv"
    path.write_text(text)
    return path


def test_reads_numeric_and_text_columns(tmp_path):
    table = read_csv(csv_file(tmp_path, "a,b,c\n1,2,x\n3,4.5,y\n\n"))
    np.testing.assert_array_equal(table["b"], [2.0, 4.5])
    assert table["b"].dtype == np.float64 and list(table["c"]) == ["x", "y"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "empty file"),
        ("a,b\n", "no data rows"),
        ("a,b\n1,2\n3\n", "line 3: 1 field, expected 2 (a, b)"),
        ("a,b\n1,2\n3,nan\n", "line 3, column 'b': 'nan' is not a finite number"),
        ("a,b\n1,inf\n", "line 2, column 'b': 'inf' is not a finite number"),
        ("a,a\n1,2\n", "the column name 'a' is repeated"),
    ],
)
def test_bad_files_name_file_and_line(tmp_path, text, expected):
    with pytest.raises(DataError) as info:
        read_csv(csv_file(tmp_path, text))
    assert expected in str(info.value) and "d.csv" in str(info.value)


def test_missing_file():
    with pytest.raises(DataError, match="no such file"):
        read_csv("/nonexistent/x.csv")


def test_design_checks_columns():
    iris = load_iris()
    with pytest.raises(DataError, match="unknown feature 'Sepal.Widht'; columns: Sepal.Length"):
        design(iris, ["Sepal.Widht"], "Petal.Width")
    with pytest.raises(DataError, match="target 'Species' is not numeric"):
        design(iris, ["Sepal.Width"], "Species")
    X, y = design(iris, ["Sepal.Width", "Petal.Length"], "Petal.Width", intercept=True)
    assert X.shape == (150, 3) and np.all(X[:, 2] == 1.0) and X[0, 0] == 3.5 and y[0] == 0.2


def test_scale_rejects_constant_columns():
    with pytest.raises(DataError, match="constant"):
        scale({"a": np.ones(3)})
