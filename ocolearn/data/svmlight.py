"""svmlight/libsvm files: ``label [qid:N] index:value ...  [# comment]``, and their reader.

Indices are 1-based unless ``zero_based`` (``read_svmlight``'s ``"auto"``: zero-based if any
index is 0, as scikit-learn decides); ``qid`` is ignored; blank and comment-only lines are
skipped; a line's indices ascend, as libsvm and scikit-learn require: an index repeated in a line
(``repeated_feature``) or below the one before it is an error. ``svmlight_lines`` is
the exact line-by-line parser (it names the file and line of every malformed line); the compiled
one is the fast path.

``parse_block(data, first_line, source, slow)`` turns the bytes of whole lines into a
``Block``: labels, CSR-style rows of (index, value) in file order, and each row's line number.
The loop over bytes is compiled by numba (a plain Python loop per token parses 20 to 30 MB/s;
this one several hundred). Numbers are parsed exactly: a value with at most 18 significant
digits and a decimal exponent within +-22 is ``M * 10^E`` in one correctly rounded float64
operation (Clinger's fast path, as ``strtod`` does), so the result equals Python's
``float()``; other tokens (``1e300``, 25 digits, ``nan``) are converted by ``float()`` itself.
A line may start with a feature (no label: its label is NaN, for prediction input). A block
with a line that is not ``[label] [qid:N] index:value ... [# comment]``, a number that is not
finite in float32, or an index not above the one before it goes to ``slow`` (the exact per-line
parser), which raises the error naming the file and line (and the index).
"""

from __future__ import annotations

import threading

import numpy as np

from ocolearn.data import DataError, shown
from ocolearn.data.compiled import njit
from ocolearn.data.sparse_text import (
    FLOAT32_MAX,
    Block,
    Reader,
    SparseData,
    _rows_by_line,
    _value,
    byte_blocks,
    read_bytes,
    repeated_feature,
    sparse_rows,
)

POW10 = 10.0 ** np.arange(23)


@njit(inline="always")
def _ends_token(buf, i):
    """Whether a token may end at ``buf[i]``: the end, a blank, a newline or a comment."""
    return i >= buf.size or buf[i] == 32 or buf[i] == 9 or buf[i] == 13 or buf[i] == 10 or buf[i] == 35


@njit(inline="always")
def _number(buf, i, pow10):
    """Parse ``[+-]digits[.digits][(e|E)[+-]digits]`` from ``buf[i]`` up to the end of the
    token: (value, next position, ok, hard); ``hard`` when of the right form but beyond the
    fast path (the caller converts those with ``float()``)."""
    size = buf.size
    negative = False
    if i < size and (buf[i] == 45 or buf[i] == 43):
        negative = buf[i] == 45
        i += 1
    mantissa, significant, frac, start = 0, 0, 0, i
    while i < size:
        d = np.int64(buf[i]) - 48
        if d < 0 or d > 9:
            break
        if significant or d:
            significant += 1
            mantissa = mantissa * 10 + d
        i += 1
    digits = i - start
    if i < size and buf[i] == 46:
        i += 1
        start = i
        while i < size:
            d = np.int64(buf[i]) - 48
            if d < 0 or d > 9:
                break
            frac += 1
            if significant or d:
                significant += 1
                mantissa = mantissa * 10 + d
            i += 1
        digits += i - start
    if digits == 0:
        return 0.0, i, False, False
    exponent = 0
    if i < size and (buf[i] == 101 or buf[i] == 69):
        i += 1
        exp_negative = False
        if i < size and (buf[i] == 45 or buf[i] == 43):
            exp_negative = buf[i] == 45
            i += 1
        start = i
        while i < size and 48 <= buf[i] <= 57:
            if exponent < 100000:
                exponent = exponent * 10 + (buf[i] - 48)
            i += 1
        if i == start:
            return 0.0, i, False, False
        if exp_negative:
            exponent = -exponent
    if not _ends_token(buf, i):
        return 0.0, i, False, False
    e = exponent - frac
    if significant > 18 or mantissa >= 9007199254740992 or e > 22 or e < -22:
        return 0.0, i, True, True  # (past 18 digits the mantissa has wrapped: float() decides)
    value = mantissa * pow10[e] if e >= 0 else mantissa / pow10[-e]
    return (-value if negative else value), i, True, False


@njit()
def _parse(buf, labels, indptr, indices, values, lines, hard, pow10):
    """Fill the outputs in one pass; returns (rows, entries, hard tokens, status, line) with
    status 0 ok, 1 malformed, 2 an index not above the one before it (line relative to the block)."""
    n, nnz, nhard, line, i, size = 0, 0, 0, 0, 0, buf.size
    while i < size:
        while i < size and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13):
            i += 1
        if i >= size:
            break
        if buf[i] == 10 or buf[i] == 35:  # a blank or comment-only line
            while i < size and buf[i] != 10:
                i += 1
            i += 1
            line += 1
            continue
        start = i
        value, i, ok, is_hard = _number(buf, i, pow10)
        if not ok and i < size and buf[i] == 58:  # the line starts with a feature: no label
            value, i, ok, is_hard = np.nan, start, True, False
        if not ok:
            return n, nnz, nhard, 1, line
        labels[n] = value
        if is_hard:
            hard[nhard, 0], hard[nhard, 1], hard[nhard, 2], hard[nhard, 3] = start, i, 0, n
            nhard += 1
        last, increasing = -1, True
        while True:
            while i < size and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13):
                i += 1
            if i >= size or buf[i] == 10 or buf[i] == 35:
                break
            if buf[i] == 113:  # qid:N, ignored
                if i + 4 > size or buf[i + 1] != 105 or buf[i + 2] != 100 or buf[i + 3] != 58:
                    return n, nnz, nhard, 1, line
                i += 4
                while not _ends_token(buf, i):
                    i += 1
                continue
            index, start = 0, i
            while i < size:
                d = np.uint64(buf[i]) - np.uint64(48)  # (wraps around below "0": one comparison)
                if d > 9:
                    break
                index = index * 10 + np.int64(d)
                i += 1
            if i == start or i - start > 15 or i >= size or buf[i] != 58:
                return n, nnz, nhard, 1, line
            i += 1
            start, whole = i, 0
            while i < size and 48 <= buf[i] <= 57 and i - start < 15:  # the common case: digits only
                whole = whole * 10 + (buf[i] - 48)
                i += 1
            if i > start and _ends_token(buf, i):
                value, ok, is_hard = float(whole), True, False  # (exact: below 10^15 < 2^53)
            else:
                value, i, ok, is_hard = _number(buf, start, pow10)
            if not ok:
                return n, nnz, nhard, 1, line
            if is_hard:
                hard[nhard, 0], hard[nhard, 1], hard[nhard, 2], hard[nhard, 3] = start, i, 1, nnz
                nhard += 1
            increasing = increasing and index > last  # (no branch in the loop: checked once a row)
            last = index
            indices[nnz] = index
            values[nnz] = value
            nnz += 1
        if not increasing:  # an index out of order or repeated: the exact parser says which
            return n, nnz, nhard, 2, line
        lines[n] = line
        n += 1
        indptr[n] = nnz
        while i < size and buf[i] != 10:  # a comment to the end of the line
            i += 1
        i += 1
        line += 1
    return n, nnz, nhard, 0, line


_local = threading.local()


def _scratch(rows: int, entries: int):
    """Output arrays for the parser, kept per thread and grown as needed: fresh arrays of
    this size every block cost more in page faults than the parse itself."""
    have = getattr(_local, "arrays", None)
    if have is None or have[0].size < rows or have[2].size < entries:
        rows, entries = max(rows, 2 * (have[0].size if have else 0)), max(entries, 2 * (have[2].size if have else 0))
        have = (
            np.empty(rows),
            np.zeros(rows + 1, np.int64),
            np.empty(entries, np.int64),
            np.empty(entries),
            np.empty(rows, np.int64),
            np.empty((rows + entries, 4), np.int64),  # hard tokens: untouched unless used
        )
        _local.arrays = have
    return have


def parse_block(data: bytes, first_line: int, source, slow, copy=True) -> Block:
    """The rows of ``data`` (whole lines; the last may lack its newline), numbered from
    ``first_line``; see the module docstring. ``slow(data, first_line)`` is the exact parser.
    ``copy=False`` returns the labels, rows and values as views of this thread's scratch
    arrays, valid until it parses again (the streaming reader pads them at once)."""
    buf = np.frombuffer(data, np.uint8)
    # Bounds without a pass over the bytes: a row takes at least 2 bytes, an entry 4.
    labels, indptr, indices, values, lines, hard = _scratch(len(data) // 2 + 1, len(data) // 4 + 1)
    n, nnz, nhard, status, _ = _parse(buf, labels, indptr, indices, values, lines, hard, POW10)
    if status:
        return slow(data, first_line)
    for start, stop, is_value, slot in hard[:nhard]:
        number = float(bytes(data[start:stop]))
        if not abs(number) <= FLOAT32_MAX:
            return slow(data, first_line)
        (values if is_value else labels)[slot] = number
    own = np.copy if copy else lambda a: a
    return Block(own(labels[:n]), own(indptr[: n + 1]), own(indices[:nnz]), own(values[:nnz]), lines[:n] + first_line)


@njit()
def _written(buf, lines, labels):
    """``(start, stop)`` of the label of the rows that show how a block's labels are written:
    the first row of each value, and the first row written otherwise than its value's first (if
    any). ``lines``: each row's line in ``buf`` (0-based, increasing); ``labels``: their values."""
    n = lines.size
    spans = np.empty((n, 2), np.int64)
    i, line = 0, 0
    for r in range(n):
        while line < lines[r]:  # (to the row's line)
            while buf[i] != 10:
                i += 1
            i += 1
            line += 1
        a = i
        while buf[a] == 32 or buf[a] == 9 or buf[a] == 13:
            a += 1
        b = a
        while not _ends_token(buf, b):
            b += 1
        spans[r, 0], spans[r, 1] = a, b
    first = {labels[0]: 0}  # each label's first row (n >= 1: blocks with rows)
    keep, other = [0], -1
    for r in range(1, n):
        if labels[r] not in first:
            first[labels[r]] = r
            keep.append(r)
        elif other < 0:
            f = first[labels[r]]
            a, b, c, d = spans[r, 0], spans[r, 1], spans[f, 0], spans[f, 1]
            same = b - a == d - c
            for k in range(b - a if same else 0):
                same = same and buf[a + k] == buf[c + k]
            if not same:
                other = r
    if other >= 0:
        keep.append(other)
    return spans[np.array(keep, np.int64)]


def label_spellings(data, first_line: int, block: Block) -> set[str]:
    """How the labels of a block of labelled rows (``data`` its bytes, lines from ``first_line``)
    are written: the first row's of each value, and that of the first row written otherwise
    than its value's first row (if any). Across blocks, these hold two spellings of a number
    wherever the file does, which the task's rule refuses (``ocolearn.data.task``), as for names."""
    buf = np.frombuffer(data, np.uint8)
    spans = _written(buf, block.lines - first_line, block.labels.astype(np.float64))
    return {bytes(buf[a:b]).decode("ascii", "replace") for a, b in spans}


def svmlight_lines(data: bytes, first_line: int, path, labelled=True) -> Block:
    """The exact, line-by-line svmlight parser (see ``ocolearn.data.svmlight``): the same rows
    as the compiled one, or the error naming the file, the line and the expected form (or the
    index repeated or out of order). Without ``labelled`` (prediction input) a label may be any placeholder
    (``?``, a name): it is read as no label."""

    def row_of(tokens, where):
        row: dict[int, float] = {}
        for token in tokens:
            name, sep, value = token.partition(":")
            if name == "qid":
                continue
            if not sep or not (name.isascii() and name.isdigit()):
                raise DataError(
                    f"{where}: {shown(token)} is not of the form index:value (index a non-negative integer)"
                )
            if len(name.lstrip("0")) > 15:  # (the compiled parser's bound; 2^63 would overflow int64)
                raise DataError(f"{where}: feature index {shown(name)} has more than 15 digits")
            index = int(name)
            if index in row:
                raise repeated_feature(where, f"feature index {index}", "as libsvm and scikit-learn require")
            if row and index < (last := next(reversed(row))):
                raise DataError(
                    f"{where}: feature index {index} comes after {last}; a line's indices ascend "
                    "(as libsvm and scikit-learn require: sort them)"
                )
            row[index] = _value(value, f"{where}, feature {name}")
        return row

    return _rows_by_line(data, first_line, path, row_of, np.float64, placeholders=not labelled)


def parse_svmlight(data: bytes, first_line: int, path, copy=True, labelled=True) -> Block:
    """The rows of svmlight text, by the compiled parser (``ocolearn.data.svmlight.parse_block``)."""
    return parse_block(data, first_line, path, lambda d, f: svmlight_lines(d, f, path, labelled), copy)


def read_svmlight(path, *, dim: int | None = None, zero_based="auto", bits: int | None = None) -> SparseData:
    """An svmlight/libsvm file as ``SparseData`` with float32 labels (see the module docstring).

    ``dim`` fixes the number of features (an index beyond it is an error); by default it is
    the largest index + 1. ``bits`` folds indices into ``2**bits`` buckets instead (hashing).
    """
    block = parse_svmlight(read_bytes(path), 1, path)
    if not block.labels.size:
        raise DataError(f"{path}: no examples (every line is blank or a comment)")
    seen_zero = bool(block.indices.size and block.indices.min() == 0)
    if zero_based is False and seen_zero:
        raise DataError(f"{path}: index 0 in a file read as 1-based (pass zero_based=True)")
    shift = 0 if (zero_based is True or (zero_based == "auto" and seen_zero)) else 1
    top = int(block.indices.max(initial=shift - 1)) - shift + 1
    dim = (1 << bits) if bits is not None else (top if dim is None else dim)
    X = sparse_rows(block, dim, path, shift=shift, bits=bits)
    return SparseData(X, block.labels.astype(np.float32), None, block.lines)


READER = Reader(
    "svmlight",
    byte_blocks,
    lambda source: (
        lambda d, f: parse_svmlight(d, f, source.path, copy=False, labelled=source.labelled),  # (``Reader.parsers``)
        lambda d, f: svmlight_lines(d, f, source.path, source.labelled),
    ),
    one_based=True,
)
