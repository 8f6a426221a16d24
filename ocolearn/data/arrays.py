"""In-memory arrays as a source: NumPy (dense rows) and ``scipy.sparse`` matrices (sparse rows).

``arrays_source(X, y)`` gives a ``Source`` read through the same chunks, scan, task and checks as
a file: a CSR matrix already is a ``Block`` (``indptr``, ``indices``, ``data``), and a dense
array is one with every index in every row. Labels are the values of ``y`` (numbers or names;
none: unlabelled input); a row's "line" is its 1-based row number. scipy is not imported here:
anything with ``tocsr()`` is read as a sparse matrix.

>>> import numpy as np
>>> from ocolearn.data.stream import chunks
>>> source = arrays_source(np.eye(3), np.array([1.0, -1.0, 1.0]), labels=("-1", "1"))
>>> [chunk.y.tolist() for chunk in chunks(source, chunk_rows=2)]
[[1, 0], [1]]
"""

from __future__ import annotations

import numpy as np

from ocolearn.data import DataError
from ocolearn.data.sparse_text import FLOAT32_MAX, Block, Reader

ROWS_PER_BLOCK = 65536


class Arrays:
    """Features ``X`` (dense ``(n, d)`` or a sparse matrix) and labels ``y`` (or None), named
    in messages as ``<arrays n x d>``."""

    def __init__(self, X, y=None):
        self.sparse = hasattr(X, "tocsr")
        self.X = X.tocsr() if self.sparse else np.asarray(X)
        if self.X.ndim != 2:
            raise DataError(f"X must be a 2-d array of rows, got shape {self.X.shape}")
        self.y = None if y is None else np.asarray(y)
        if self.y is not None and self.y.shape != (self.X.shape[0],):
            raise DataError(f"X has {self.X.shape[0]} rows but y has shape {self.y.shape}")

    def __str__(self):
        return f"<arrays {self.X.shape[0]} x {self.X.shape[1]}>"

    __repr__ = __str__


def arrays_source(X, y=None, **options):
    """A ``Source`` of in-memory arrays (``options`` as for any source: labels, task, ...)."""
    from ocolearn.data.stream import Source

    data = Arrays(X, y)
    fmt = "csr" if data.sparse else "dense"
    return Source(data, fmt, dim=data.X.shape[1], labelled=y is not None, **options)


def _blocks(source, start):
    n = source.path.X.shape[0]
    for a in range(start.offset, n, ROWS_PER_BLOCK):
        yield (a, min(a + ROWS_PER_BLOCK, n)), a + 1, a


def rows(data: Arrays, a: int, b: int) -> Block:
    """Rows ``a:b`` as a ``Block``; a value that is not a finite float32 number names its row."""
    if data.sparse:
        part = data.X[a:b]
        part.sum_duplicates()
        indptr, indices, values = part.indptr.astype(np.int64), part.indices.astype(np.int64), part.data
    else:
        part = data.X[a:b]
        n, d = part.shape
        indptr = np.arange(n + 1, dtype=np.int64) * d
        indices, values = np.tile(np.arange(d, dtype=np.int64), n), part.reshape(-1)
    values = np.asarray(values, np.float64)
    bad = ~(np.abs(values) <= FLOAT32_MAX)
    if bad.any():
        row = a + int(np.searchsorted(indptr, np.argmax(bad), side="right"))
        raise DataError(f"{data}, row {row}: a feature value that is not a finite float32 number")
    labels = np.full(b - a, np.nan) if data.y is None else data.y[a:b]
    if labels.dtype.kind not in "US":
        labels = labels.astype(np.float64)
    return Block(labels, indptr, indices, values, np.arange(a + 1, b + 1, dtype=np.int64))


def _parsers(source):
    parse = lambda span, first_line: rows(source.path, *span)  # noqa: E731
    return parse, parse


_after = lambda span, first_line, offset, lines: lines  # noqa: E731
_row = lambda source, line: f"{source.path}, row {line}"  # noqa: E731
DENSE = Reader("dense", _blocks, _parsers, dense=True, place=_row, after=_after)
CSR = Reader("csr", _blocks, _parsers, place=_row, after=_after)
