"""Rows in any container: NumPy arrays, ``scipy.sparse`` matrices (CSR, CSC, ...), pandas and
polars DataFrames, read as one set of rows whatever holds them.

- ``table_of(frame)``: a DataFrame's columns as ``{name: array}``: float64 for numeric (and
  boolean) columns, a missing cell NaN; an object array of ``str`` for any other column
  (object, string, categorical), a missing cell None. The one place a DataFrame is read.
- ``matrix_of(frame)``: the float64 ``(n, d)`` matrix of a table of numbers (``table_of``); a
  table with a text, categorical or missing cell goes through ``tabular_rows``, a CSV file's
  rule (categories one-hot, missing values indicated).
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


def matrix_of(frame, spec=None, fit=True):
    """``(X, spec)``: the float64 ``(n, d)`` matrix of a DataFrame's columns where every cell is a
    number (``spec`` None), or else what the tabular parts make of them (``tabular_rows``:
    ``spec`` the ``Table`` it fitted, or the one given, to apply at prediction); ``fit`` False
    (prediction without a ``Table``) refuses a column of text or missing values."""
    table = table_of(frame)
    if spec is None:
        other = next((name for name, a in table.items() if a.dtype != np.float64 or np.isnan(a).any()), None)
        if other is None:
            return (np.column_stack(list(table.values())) if table else np.zeros((len(frame), 0))), None
        if not fit:
            raise ValueError(f"column {other!r} holds text or missing values; the model was fitted on numbers alone")
    return tabular_rows(table, spec)


def tabular_rows(table: dict[str, np.ndarray], spec=None):
    """``(X, spec)``: the float64 rows of a table with text, categorical or missing cells, by the
    tabular parts' rule (``ocolearn.data.csvfile``, a CSV file's: ``table_of`` learns the
    ``Table`` from the columns where ``spec`` is None, ``table_rows`` lays them out: numeric
    columns, a missing-value indicator for those with a missing cell, the categories one-hot, a
    category unseen in training all zeros). The missing numeric cells are 0 here;
    ``pipeline.table_steps(spec)`` imputes them online, as the estimators do."""
    from ocolearn.data.csvfile import table_of as layout_of
    from ocolearn.data.csvfile import table_rows as laid_out

    spec = layout_of(table, source="the DataFrame") if spec is None else spec
    return laid_out(spec, table), spec


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
