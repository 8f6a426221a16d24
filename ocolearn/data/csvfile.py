"""CSV files: a header line of column names, then one row per line.

``csv_rows`` splits and checks the rows (ragged rows are errors naming the line); it is the one
CSV parser, used by the streamed reader here (``csv_lines``: the target column as labels, the
feature columns as dense rows) and by the tables of ``ocolearn.data`` (``parse_csv``).
"""

from __future__ import annotations

import csv

import numpy as np

from ocolearn.data import (
    DataError,
    OtherFormat,
    check_target,
    header_names,
    numbered,
    open_binary,
    shown,
    shown_names,
    skip_bom,
)
from ocolearn.data.csvfast import plain_block
from ocolearn.data.sparse_text import Block, Reader, _decode, _value, byte_blocks, read_line


def csv_rows(lines, source, header, first_line: int):
    """``(line number, stripped fields)`` of each non-blank row of ``lines`` (numbered from
    ``first_line``; a line equal to 1 is the header and skipped); a row with another number of
    fields than ``header`` is an error naming its line, and so is a row over more than one line
    (a quoted line break: the streamed reader cuts a file at line ends, and would join them)."""
    rows = []
    reader, before = csv.reader(lines, strict=True), 0  # (lines read before the row)
    runs_on = (
        "a quoted field runs past the end of the line (a line break in quotes, or a quote not closed); "
        "each row of a CSV file is one line"
    )
    while True:
        try:
            fields = next(reader, None)
        except csv.Error as e:  # (strict: a quote still open at the end, text after a closing quote)
            if "end of data" in str(e):
                raise DataError(f"{source}, line {first_line + before}: {runs_on}") from None
            raise DataError(f"{source}, line {first_line + reader.line_num - 1}: not a CSV row ({e})") from None
        if fields is None:
            break
        number, before, spans = first_line + before, reader.line_num, reader.line_num - before
        if spans > 1:
            raise DataError(f"{source}, line {number}: {runs_on}")
        if number == 1 or not fields or all(not f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            raise DataError(
                f"{source}, line {number}: {len(fields)} field{'s' * (len(fields) != 1)}, expected {len(header)} "
                f"({shown_names(header)})"
            )
        rows.append((number, [f.strip() for f in fields]))
    return rows


def csv_header(path) -> list[str]:
    """A CSV file's column names: its first line, split by the CSV parser that splits the rows
    (quoted names, as R's ``write.csv`` writes them, are names), a UTF-8 byte-order mark left
    out; a repeated name is an error (``header_names``)."""
    with open_binary(path) as f:
        skip_bom(f)
        line = read_line(f, path)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{path}, line 1: not UTF-8 text") from None
    fields = next(csv.reader([text.rstrip("\r\n")]), [])
    if not any(f.strip() for f in fields):
        raise DataError(f"{path}: empty file; expected a header line of column names")
    return header_names(fields, path)


def csv_columns(path, target: str, columns=(), labelled=True):
    """``(position of the target column or None, positions of the feature columns, header)`` of a CSV
    file: ``columns`` by name (a model's), else every column but the target. Without
    ``labelled`` the target column may be missing (prediction input)."""
    header = csv_header(path)
    if len(header) == 1 and header[0] not in (target, *columns):  # (another format read as CSV: the line)
        problem = f"{path}, line 1: not a CSV header of column names (no comma): {shown(header[0])}"
        _, *tokens = header[0].split()
        if tokens:  # (svmlight's features, else MIRA's names)
            raise OtherFormat(problem, "", "svmlight" if numbered(tokens) else "mira")
        raise DataError(problem)
    if labelled and target not in header:
        hint = "needs --target, the column of labels" if not target else f"has no column {shown(target)} (the target)"
        raise DataError(f"{path}: the CSV file {hint}; columns: {shown_names(header)}")
    position = {name: j for j, name in enumerate(header)}  # (names are distinct: ``header_names``)
    t = position.get(target)
    names = list(columns) or [h for j, h in enumerate(header) if j != t]
    if not names:  # (a model of no features: nothing could ever read it)
        raise DataError(
            f"{path}: no feature columns besides the target {shown(target)}; columns: {shown_names(header)}"
        )
    missing = next((n for n in names if n not in position), None)
    if missing is not None:
        raise DataError(f"{path}: no column {shown(missing)} (a feature of the model); columns: {shown_names(header)}")
    return t, [position[n] for n in names], header


def csv_lines(data: bytes, first_line: int, path, target, features, header) -> Block:
    """Rows of a CSV file's lines (the header line, line 1, is skipped): the ``target``
    column (a position from ``csv_columns``, or None) as label names, the ``features``
    columns as dense features (indices 0..d-1). A ragged row or a field that is not a finite
    number is an error naming the line and column. A block of plain numbers is read by compiled
    code (``ocolearn.data.csvfast``: the same rows); any other block by the loop below."""
    if (block := plain_block(data, first_line, target, features, len(header))) is not None:
        return block
    labels, rows, numbers = [], [], []
    for number, fields in csv_rows(_decode(data, first_line, path).split("\n"), path, header, first_line):
        if target is not None:  # (not a class named '' or 'NA')
            check_target(fields[target], f"{path}, line {number}", header[target])
        labels.append(fields[target] if target is not None else "")
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


def _parsers(source):
    target, features, header = csv_columns(source.path, source.target, source.columns, source.labelled)  # read once
    columns = (target if source.labelled else None, features, header)  # (prediction input: labels unread)
    parse = lambda d, f: csv_lines(d, f, source.path, *columns)  # noqa: E731
    return parse, parse


READER = Reader("csv", byte_blocks, _parsers, dense=True)
