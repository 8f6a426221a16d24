"""Rows in any container: NumPy arrays, ``scipy.sparse`` matrices (CSR, CSC, ...), pandas and
polars DataFrames, read as one set of rows whatever holds them.

- ``table_of(frame)``: a DataFrame's columns as ``{name: array}``: float64 for numeric (and
  boolean) columns, a missing cell NaN; an object array of ``str`` for any other column
  (object, string, categorical), a missing cell None. The one place a DataFrame is read.
- ``matrix_of(frame)``: the float64 ``(n, d)`` matrix of a table of numbers (``table_of``); a
  table with a text, categorical or missing cell goes through ``tabular_rows``, the hook of the
  tabular parts.
- ``rows_of(X)``: rows as the runner takes them (``ocolearn.run``, ``pipeline.train`` and the
  estimators call it).
- ``dense_enough(X)``: whether a sparse matrix is read as dense rows: where a dense row is
  small (``d <= NARROW`` features) or no larger than its padded sparse row (an index and a
  value per entry, as wide as the widest row: ``d <= 2 * widest``). The same rows then reach
  the learner as the same dense rows, and so give the same preprocessing and model, as a NumPy
  array or a DataFrame; only a wide matrix of few entries a row (text, hashed features) keeps
  sparse rows.

Nothing here imports pandas, polars or SciPy: a container is recognised by its type's module
(``pandas``, ``polars``) or by ``tocsr``.
"""

from __future__ import annotations

import numpy as np

NARROW = 256  # features: a sparse matrix this narrow is read as dense rows (at most 1 KiB of float32 a row)


def is_frame(X) -> bool:
    """Whether ``X`` is a pandas or polars DataFrame."""
    return type(X).__module__.partition(".")[0] in ("pandas", "polars") and hasattr(X, "columns")


def table_of(frame) -> dict[str, np.ndarray]:
    """A pandas or polars DataFrame as ``{column name: array}``, in column order: float64 for a
    numeric or boolean column (a missing cell NaN), an object array of ``str`` for any other
    (a missing cell None)."""
    if type(frame).__module__.startswith("polars"):
        import polars as pl

        columns = {str(name): frame.get_column(name) for name in frame.columns}
        numeric = lambda s: s.dtype.is_numeric() or s.dtype == pl.Boolean  # noqa: E731
        as_numbers = lambda s: s.cast(pl.Float64).fill_null(np.nan).to_numpy()  # noqa: E731
        as_text = lambda s: s.cast(pl.String).to_list()  # noqa: E731
    else:
        import pandas as pd

        columns = {str(name): frame.iloc[:, j] for j, name in enumerate(frame.columns)}
        numeric = lambda s: pd.api.types.is_numeric_dtype(s.dtype)  # noqa: E731  (booleans included)
        as_numbers = lambda s: s.to_numpy(np.float64, na_value=np.nan)  # noqa: E731
        as_text = lambda s: [None if pd.isna(v) else v for v in s.astype(object)]  # noqa: E731
    table = {}
    for name, column in columns.items():
        if numeric(column):
            table[name] = np.asarray(as_numbers(column), np.float64)
        else:
            table[name] = np.array([None if v is None else str(v) for v in as_text(column)], dtype=object)
    return table


def matrix_of(frame, spec=None):
    """``(X, spec)``: the float64 ``(n, d)`` matrix of a DataFrame's columns where every cell is a
    number (``spec`` None), or else what the tabular hook makes of them (``tabular_rows``:
    ``spec`` the encoding it fitted, or the one given, to apply at prediction)."""
    table = table_of(frame)
    if spec is None and all(a.dtype == np.float64 and not np.isnan(a).any() for a in table.values()):
        n = len(frame)
        return (np.column_stack(list(table.values())) if table else np.zeros((n, 0))), None
    return tabular_rows(table, spec)


# ---- HOOK (the lead connects it at the merge) -------------------------------------------------
def tabular_rows(table: dict[str, np.ndarray], spec=None):
    """HOOK for the tabular parts (issue 38.1, ``ocolearn/data/csvfile.py``): ``(X, spec)``, the
    float64 rows of a table with text, categorical or missing cells, ``spec`` the column
    encoding (categories, imputation) fitted on it when ``spec`` is None, else applied as given.
    Until it is connected, such a table is an error naming its first such column."""
    for name, column in table.items():
        if column.dtype == object or np.isnan(column).any():
            kind = "missing values" if column.dtype != object else "text or categories"
            raise ValueError(
                f"column {name!r} holds {kind}: encode it first (e.g. scikit-learn's OneHotEncoder or SimpleImputer)"
            )
    raise ValueError("a column spec was fitted on a table with text, categories or missing values; this one has none")


# -------------------------------------------------------------------------------------------------


def csr_rows(X):
    """The rows of a ``scipy.sparse`` matrix as padded ``Sparse`` rows (width: the longest row),
    read as the data path reads in-memory arrays (``ocolearn.data.arrays``; O(nnz), repeated
    entries summed, values checked against float32's range)."""
    from ocolearn.data.arrays import Arrays, rows
    from ocolearn.data.sparse_text import sparse_rows

    data = Arrays(X)
    return sparse_rows(rows(data, 0, data.X.shape[0]), data.X.shape[1], data, shift=0)


def rows_of(X, dense=None):
    """Rows in any container as the runner takes them: a DataFrame as the float32 matrix of its
    numbers (``matrix_of``), a sparse matrix as its dense float32 rows where ``dense`` (by default
    ``dense_enough(X)``) or else padded ``Sparse`` rows; anything else (NumPy or JAX arrays,
    ``Sparse`` rows) as it is."""
    if is_frame(X):
        return np.asarray(matrix_of(X)[0], np.float32)
    if not hasattr(X, "tocsr"):
        return X
    if not (dense_enough(X) if dense is None else dense):
        return csr_rows(X)
    return np.ascontiguousarray(X.toarray(), np.float32)  # (C order: a CSC matrix's scores sum as a CSR's)


def dense_enough(X) -> bool:
    """Whether rows held in ``X`` are read dense: a NumPy array or DataFrame always, a sparse
    matrix where it is at most ``NARROW`` features wide or its dense rows are no larger than its
    padded sparse ones (module docstring)."""
    if not hasattr(X, "tocsr"):
        return True
    X = X.tocsr()
    widest = int(np.diff(X.indptr).max()) if X.shape[0] else 0
    return X.shape[1] <= max(NARROW, 2 * widest)
