"""The MIRA write-up's format (the Clojure MIRA seed): ``label feature[:value] ...``.

A feature without ``:value`` has value 1; feature names are strings hashed into ``2**bits``
buckets with ``feature_hash`` (32-bit FNV-1a of the UTF-8 name, modulo the number of buckets:
stable across runs, machines and Python versions; two names in one bucket add up, as hashing
does); a name repeated in a line is an error; labels are names. Read line by line; a
malformed line is an error naming the file and line. A comment is a line starting with ``#``,
or the rest of a line from a ``#`` standing alone (``pos good # a comment``): a name may hold
``#`` (``C#``, ``#happy``), which svmlight's comment rule, everything from ``#`` on, would drop.
A line of another format is an error that says so (``OtherFormat``): a CSV row (a label with
commas and no features, or ending in a comma) or an svmlight line (a number, then only
``index:value`` features), whose features MIRA would read as names.
"""

from __future__ import annotations

import re

from ocolearn.data import DataError, shown
from ocolearn.data.sparse_text import (
    DEFAULT_BITS,
    Block,
    Reader,
    SparseData,
    _rows_by_line,
    _value,
    byte_blocks,
    class_indices,
    feature_hash,
    read_bytes,
    repeated_feature,
    sparse_rows,
)

COMMENT = re.compile(r"^\s*#.*|\s#(?=\s|$).*", re.S)


def mira_lines(data: bytes, first_line: int, path, bits: int) -> Block:
    """The rows of MIRA-format text (labels as names, feature names hashed into ``2**bits``
    buckets, the values of names sharing a bucket summed), or the error naming the line."""

    def row_of(tokens, where):
        row: dict[int, float] = {}
        names = set()
        for token in tokens:
            name, sep, value = token.rpartition(":") if ":" in token else (token, "", "")
            if sep and not name:
                raise DataError(f"{where}: {shown(token)} is not of the form feature or feature:value")
            if name in names:
                raise repeated_feature(where, f"feature {shown(name)}", f"a count as its value: {shown(name + ':2')}")
            names.add(name)
            index = feature_hash(name, bits)
            row[index] = row.get(index, 0.0) + (_value(value, f"{where}, feature {shown(name)}") if sep else 1.0)
        return row

    return _rows_by_line(data, first_line, path, row_of, str, comment=COMMENT)


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


READER = Reader(
    "mira", byte_blocks, lambda source: (lambda d, f: mira_lines(d, f, source.path, source.bits or DEFAULT_BITS),) * 2
)
