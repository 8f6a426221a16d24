"""Sparse text formats: svmlight/libsvm, the MIRA write-up's format with hashed feature names.

Both give a ``SparseData``: padded ``Sparse`` features (repeated features of a line merged by
summing their values, padding with value 0), the labels, and where the labels are names the
sorted list of names (labels are then int32 indices into it). Every malformed line is an
error that names the file, the line number and the expected form.

svmlight/libsvm: ``label [qid:N] index:value ...  [# comment]``; indices are 1-based unless
``zero_based`` (``"auto"``: zero-based if any index is 0, as scikit-learn decides); ``qid``
is ignored; blank and comment-only lines are skipped.

MIRA format (the Clojure MIRA write-up): ``label feature[:value] ...``; a feature without
``:value`` has value 1; feature names are strings hashed into ``2**bits`` buckets with
``feature_hash`` (32-bit FNV-1a of the UTF-8 name, modulo the number of buckets: stable across
runs, machines and Python versions).

Raw text (the Pegasos write-up's bag of words): one folder per label, one document per
file; ``tokens`` lowercases and splits a document into words, and each feature is a word's
count in the document, the word indexed by a vocabulary or hashed like a MIRA feature.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ocolearn.data import DataError, open_binary
from ocolearn.data.svmlight import FLOAT32_MAX, Block, pad, parse_block
from ocolearn.features import Sparse

DEFAULT_BITS = 18  # hashed features: 2**18 buckets unless told otherwise
FORMATS = ("svmlight", "mira", "csv", "text")
DOCUMENTS_PER_BLOCK = 1024


class SparseData(NamedTuple):
    X: Sparse  # (n, k) padded features
    y: np.ndarray  # float32 targets, or int32 class indices into ``labels``
    labels: list[str] | None = None  # class names for named labels
    lines: np.ndarray | None = None  # the file's line number of each row, for error messages


def feature_hash(name: str, bits: int) -> int:
    """32-bit FNV-1a of ``name`` (UTF-8) modulo ``2**bits``."""
    h = 0x811C9DC5
    for byte in name.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h % (1 << bits)


def _value(text: str, where: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise DataError(f"{where}: {text!r} is not a number") from None
    if not abs(v) <= FLOAT32_MAX:
        raise DataError(f"{where}: {text!r} is not a finite number in float32 (at most {FLOAT32_MAX:.4g})")
    return v


def _pad(rows: list[dict[int, float]], dim: int) -> Sparse:
    k = max(1, max((len(r) for r in rows), default=0))
    idx = np.zeros((len(rows), k), np.int32)
    val = np.zeros((len(rows), k), np.float32)
    for i, r in enumerate(rows):
        idx[i, : len(r)] = list(r)
        val[i, : len(r)] = list(r.values())
    return Sparse(idx, val, dim)


def _decode(data: bytes, first_line: int, path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + data[: e.start].count(b"\n")
        raise DataError(f"{path}, line {line}: not UTF-8 text") from None


def _rows_by_line(data: bytes, first_line: int, path, row_of, label_dtype) -> Block:
    """A block from text line by line: ``row_of(tokens, where)`` gives each line's features
    as ``{index: value}`` (repeats merged by summing); comments and blank lines are skipped."""
    text = _decode(data, first_line, path)
    labels, indptr, indices, values, numbers = [], [0], [], [], []
    for number, line in enumerate(text.split("\n"), first_line):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}, line {number}"
        label, *tokens = line.split()
        if label_dtype is not np.float64:
            labels.append(label)
        elif ":" in label:  # svmlight: the line starts with a feature, it has no label
            labels.append(np.nan)
            tokens = [label, *tokens]
        else:
            labels.append(_value(label, f"{where}, label"))
        row = row_of(tokens, where)
        numbers.append(number)
        indices += list(row)
        values += list(row.values())
        indptr.append(len(indices))
    as_array = np.asarray
    return Block(
        as_array(labels, label_dtype),
        as_array(indptr, np.int64),
        as_array(indices, np.int64),
        as_array(values, np.float64),
        as_array(numbers, np.int64),
    )


def svmlight_lines(data: bytes, first_line: int, path) -> Block:
    """The exact, line-by-line svmlight parser (see ``ocolearn.data.svmlight``): the same rows
    as the compiled one, repeated indices of a row merged by summing, or the error naming
    the file, the line and the expected form."""

    def row_of(tokens, where):
        row: dict[int, float] = {}
        for token in tokens:
            name, sep, value = token.partition(":")
            if name == "qid":
                continue
            if not sep or not name.isdigit():
                raise DataError(f"{where}: {token!r} is not of the form index:value (index a non-negative integer)")
            row[int(name)] = row.get(int(name), 0.0) + _value(value, f"{where}, feature {name}")
        return row

    return _rows_by_line(data, first_line, path, row_of, np.float64)


def csv_header(path) -> list[str]:
    """A CSV file's column names (its first line)."""
    with open_binary(path) as f:
        line = f.readline().decode("utf-8", "replace").strip()
    if not line:
        raise DataError(f"{path}: empty file; expected a header line of column names")
    return [name.strip() for name in line.split(",")]


def csv_columns(path, target: str, columns=(), labelled=True):
    """``(position of the target column or None, positions of the feature columns, header)`` of a CSV
    file: ``columns`` by name (a model's), else every column but the target. Without
    ``labelled`` the target column may be missing (prediction input)."""
    header = csv_header(path)
    if labelled and target not in header:
        hint = "--target, the column of labels" if not target else f"no column {target!r} for the target"
        raise DataError(f"{path}: a CSV file needs {hint}; columns: {', '.join(header)}")
    t = header.index(target) if target in header else None
    names = list(columns) or [h for j, h in enumerate(header) if j != t]
    missing = [n for n in names if n not in header]
    if missing:
        raise DataError(f"{path}: no column {missing[0]!r} (a feature of the model); columns: {', '.join(header)}")
    return t, [header.index(n) for n in names], header


def csv_lines(data: bytes, first_line: int, path, target, features, header) -> Block:
    """Rows of a CSV file's lines (the header line, line 1, is skipped): the ``target``
    column (a position from ``csv_columns``, or None) as label names, the ``features``
    columns as dense features (indices 0..d-1). A ragged row or a field that is not a finite
    number is an error naming the line and column."""
    import csv

    text = _decode(data, first_line, path)
    labels, rows, numbers = [], [], []
    for number, fields in enumerate(csv.reader(text.split("\n")), first_line):
        if number == 1 or not fields or all(not f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            raise DataError(
                f"{path}, line {number}: {len(fields)} fields, expected {len(header)} ({', '.join(header)})"
            )
        labels.append(fields[target].strip() if target is not None else "")
        rows.append([_value(fields[j], f"{path}, line {number}, column {header[j]!r}") for j in features])
        numbers.append(number)
    d = len(features)
    return Block(
        np.asarray(labels, str),
        np.arange(len(rows) + 1, dtype=np.int64) * d,
        np.tile(np.arange(d, dtype=np.int64), len(rows)),
        np.asarray(rows, np.float64).reshape(-1),
        np.asarray(numbers, np.int64),
    )


def parse_svmlight(data: bytes, first_line: int, path) -> Block:
    """The rows of svmlight text, by the compiled parser (``ocolearn.data.svmlight.parse_block``)."""
    return parse_block(data, first_line, path, lambda d, f: svmlight_lines(d, f, path))


def sparse_rows(block: Block, dim: int, path, *, shift: int = 1, bits: int | None = None, width=None) -> Sparse:
    """A block's rows as padded ``Sparse`` features: indices shifted to 0-based (``shift`` 1
    for 1-based files), folded into ``2**bits`` buckets when hashing, else checked against
    ``dim`` (an index beyond it is an error naming its line). ``width`` pads each row to that
    many entries (default: the longest row)."""
    counts = np.diff(block.indptr)
    k = max(1, int(counts.max(initial=0))) if width is None else width
    idx = np.zeros((counts.size, k), np.int32)
    val = np.zeros((counts.size, k), np.float32)
    fill_rows(block, 0, counts.size, idx, val, dim, path, shift=shift, bits=bits)
    return Sparse(idx, val, dim)


def fill_rows(block: Block, start: int, stop: int, idx, val, dim: int, path, *, shift=1, bits=None, drop=False) -> None:
    """Write rows ``start:stop`` of a block into the zeroed padded arrays ``idx`` and ``val``
    (see ``sparse_rows``); ``drop`` leaves out indices beyond ``dim`` instead of failing."""
    buckets = 0 if bits is None else 1 << bits
    bad = pad(block.indptr[start : stop + 1], block.indices, block.values, shift, buckets, dim, idx, val, drop)
    if bad >= 0:
        line = block.lines[np.searchsorted(block.indptr, bad, side="right") - 1]
        if block.indices[bad] < shift:
            raise DataError(f"{path}, line {line}: index 0 in a file read as 1-based (read it as zero-based)")
        raise DataError(f"{path}, line {line}: feature index {block.indices[bad]} is beyond the model's {dim} features")


def read_bytes(path) -> bytes:
    """A file's bytes, decompressed by its suffix (.gz, .bz2, .xz)."""
    with open_binary(path) as f:
        return f.read()


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


def mira_lines(data: bytes, first_line: int, path, bits: int) -> Block:
    """The rows of MIRA-format text (labels as names, feature names hashed into ``2**bits``
    buckets, repeated buckets of a line merged by summing), or the error naming the line."""

    def row_of(tokens, where):
        row: dict[int, float] = {}
        for token in tokens:
            name, sep, value = token.rpartition(":") if ":" in token else (token, "", "")
            if sep and not name:
                raise DataError(f"{where}: {token!r} is not of the form feature or feature:value")
            index = feature_hash(name, bits)
            row[index] = row.get(index, 0.0) + (_value(value, f"{where}, feature {name!r}") if sep else 1.0)
        return row

    return _rows_by_line(data, first_line, path, row_of, str)


def read_mira(path, *, bits: int = DEFAULT_BITS, labels: list[str] | None = None) -> SparseData:
    """A MIRA-format file: named labels, hashed features (see the module docstring).

    ``labels`` fixes the class names (a label outside them is an error, as at predict time);
    by default they are the sorted names found in the file.
    """
    block = mira_lines(read_bytes(path), 1, path, bits)
    if not block.labels.size:
        raise DataError(f"{path}: no examples (every line is blank or a comment)")
    y, classes = class_indices(path, block.labels.tolist(), block.lines, labels)
    return SparseData(sparse_rows(block, 1 << bits, path, shift=0), y, classes, block.lines)


def label_names(labels) -> np.ndarray:
    """Labels as names: strings as read (MIRA, CSV), numbers as ``%g`` (svmlight)."""
    labels = np.asarray(labels)
    if labels.dtype.kind in "US":
        return labels.astype(str)
    distinct, inverse = np.unique(labels, return_inverse=True)
    return np.array([f"{v:g}" for v in distinct], dtype=str)[inverse] if labels.size else np.zeros(0, str)


def class_indices(path, names, lines, labels=None, order=None):
    """``(int32 class indices, class names)`` for the label ``names`` of the rows read from
    ``path`` at ``lines``. ``labels`` fixes the classes (an unknown label is an error naming
    its line, as at predict time); by default they are the distinct names sorted by ``order``."""
    classes = sorted(set(names), key=order) if labels is None else list(labels)
    position = {c: i for i, c in enumerate(classes)}
    for line, name in zip(lines, names, strict=True):
        if name not in position:
            raise DataError(f"{path}, line {line}: label {name!r} is not one of the model's labels {classes}")
    return np.asarray([position[n] for n in names], np.int32), classes


_WORD = re.compile(r"\w+(?:'\w+)*")


def tokens(text: str) -> list[str]:
    """The words of ``text``, lowercased: runs of letters and digits, with inner apostrophes."""
    return _WORD.findall(text.lower())


def read_text_folders(root, *, vocabulary: dict[str, int] | None = None, bits: int | None = None, labels=None):
    """``(SparseData, vocabulary)``: every file under ``root/LABEL/`` as a bag of word counts,
    rows in sorted (label, file name) order, labels the folder names (sorted, or ``labels``).

    Words are indexed by ``vocabulary`` (words outside it are dropped), by hashing into
    ``2**bits`` buckets when ``bits`` is given, or else by a new vocabulary of every word seen,
    sorted, which is returned (None when hashing).
    """
    root = Path(root)
    files = text_documents(root)
    counts = [Counter(tokens(f.read_text(encoding="utf-8", errors="replace"))) for _, f in files]
    if bits is not None:
        vocabulary, dim = None, 1 << bits
        rows = [_hashed(c, bits) for c in counts]
    else:
        if vocabulary is None:
            vocabulary = {w: i for i, w in enumerate(sorted(set().union(*counts)))}
        dim = len(vocabulary)
        rows = [{vocabulary[w]: float(n) for w, n in c.items() if w in vocabulary} for c in counts]
    names = [label for label, _ in files]
    unknown = sorted(set(names) - set(labels or names))
    if unknown:
        raise DataError(f"{root / unknown[0]}: label {unknown[0]!r} is not one of the model's labels {labels}")
    y, classes = class_indices(root, names, range(len(names)), labels)
    return SparseData(_pad(rows, dim), y, classes, np.arange(1, len(rows) + 1)), vocabulary


def text_documents(root, seed=None) -> list[tuple[str, Path]]:
    """``(label, file)`` of every document under ``root/LABEL/``, sorted by (label, file name),
    then, with a ``seed``, in an order shuffled by it (folders give their labels sorted, which
    an online learner must not see in that order)."""
    root = Path(root)
    folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    files = [(folder.name, f) for folder in folders for f in sorted(folder.iterdir()) if f.is_file()]
    if not files:
        raise DataError(f"{root}: no documents; expected one folder of text files per label")
    if seed is not None:
        files = [files[i] for i in np.random.default_rng(seed).permutation(len(files))]
    return files


def text_blocks(root, seed=None, start=0):
    """Blocks of documents for the streaming reader: ``(documents, first document number,
    index of the first)``, from document ``start`` of ``text_documents(root, seed)``."""
    files = text_documents(root, seed)
    for a in range(start, len(files), DOCUMENTS_PER_BLOCK):
        yield files[a : a + DOCUMENTS_PER_BLOCK], a + 1, a


def text_rows(documents, first: int, bits: int) -> Block:
    """A block of documents as rows of hashed word counts, labelled by their folders; a
    row's "line" is the document's number in the reading order."""
    rows = [_hashed(Counter(tokens(f.read_text(encoding="utf-8", errors="replace"))), bits) for _, f in documents]
    counts = [len(r) for r in rows]
    return Block(
        np.asarray([label for label, _ in documents], str),
        np.r_[0, np.cumsum(counts)].astype(np.int64),
        np.fromiter((i for r in rows for i in r), np.int64, sum(counts)),
        np.fromiter((v for r in rows for v in r.values()), np.float64, sum(counts)),
        np.arange(first, first + len(rows), dtype=np.int64),
    )


def _hashed(counts: Counter, bits: int) -> dict[int, float]:
    row: dict[int, float] = {}
    for word, n in counts.items():
        index = feature_hash(word, bits)
        row[index] = row.get(index, 0.0) + n
    return row
