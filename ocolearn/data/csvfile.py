"""CSV files: a header line of column names, then one row per line.

``csv_rows`` splits and checks the rows (ragged rows are errors naming the line); it is the one
CSV parser, used by the streamed reader here (``csv_lines``: the target column as labels, the
feature columns as rows of numbers) and by the tables of ``ocolearn.data`` (``parse_csv``).

**Columns.** A ``Table`` says how the feature columns become a row of numbers; ``train``'s first
pass finds it (``survey``) and the model file keeps it, so every door reads a file as the
model was trained. The one rule (``column_kind``): a column is *numeric* when every cell that
is not missing is a number, else *categorical*; ``--numeric`` and ``--categorical`` declare a
column's kind instead. A cell is *missing* when it is one of ``MISSING`` (pandas' ``read_csv``
defaults, exactly as written, and UCI's ``?``): ``''``, ``NA``, ``NaN``, ``nan``, ``null``,
``NULL``, ``None``, ``N/A``, ``#N/A``, ``<NA>``, ... The row of numbers, ``Table.dim`` wide:

- features ``0..n-1``: the numeric columns in file order, a missing cell read as 0;
- then one missing-value indicator (1 where the cell is missing) for each numeric column that
  had a missing cell in the first pass (scikit-learn's ``SimpleImputer(add_indicator=True)``,
  "missing-only"); the ``impute`` part (``ocolearn.preprocess.Impute``) keeps the running mean
  of every numeric column and replaces the 0 by it. A model's table (``Table.of_settings``)
  holds the final ``means``: a missing cell in a column without an indicator (none in the
  first pass, one in a file the model reads) is read as the column's mean, as scikit-learn's
  ``SimpleImputer`` and river's ``StatImputer`` fill any column; in a table without them (a
  first pass's, a model file from before) it is an error naming the file, line and column, or
  skipped with ``--skip-bad``;
- then the categorical columns one-hot: one feature per category found in the first pass
  (sorted); a value not found then, or a missing cell, is all zeros (scikit-learn's
  ``OneHotEncoder(handle_unknown="ignore")``).

A file of numbers alone (``Table.plain``) reads as it always did: one feature per column.
``table_rows`` is the one function that turns columns of cells into these rows, for files and
for in-memory tables (``table_of`` finds the ``Table`` of columns in memory).
"""

from __future__ import annotations

import csv
import math
from typing import NamedTuple

import numpy as np

from ocolearn.data import (
    MISSING,
    DataError,
    OtherFormat,
    _number,
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

# A categorical column may hold at most this many categories (each is a feature of every row,
# which CSV rows hold dense); a column of more (names, identifiers) is an error naming it.
MAX_CATEGORIES = 1000
KINDS = ("numeric", "categorical")


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


def csv_columns(path, target: str, columns=(), labelled=True, ignore=(), option=""):
    """``(position of the target column or None, positions of the feature columns, header)`` of a CSV
    file: ``columns`` by name (a model's, or ``--columns``), else every column but the target
    and those in ``ignore``. Without ``labelled`` the target column may be missing (prediction input).
    ``option`` (``--columns``) gave the ``columns``, as an error names them."""
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
    unknown = next((n for n in ignore if n not in position), None)
    if unknown is not None:
        raise DataError(f"--ignore {unknown}: {path} has no column {shown(unknown)}; columns: {shown_names(header)}")
    names = [n for n in columns or [h for j, h in enumerate(header) if j != t] if n not in ignore]
    if labelled and target in names:
        raise DataError(f"--columns {target}: {shown(target)} is the target, not a feature")
    if not names:  # (a model of no features: nothing could ever read it)
        raise DataError(
            f"{path}: no feature columns besides the target {shown(target)}; columns: {shown_names(header)}"
        )
    missing = next((n for n in names if n not in position), None)
    if missing is not None:
        where = (
            f"{option} {missing}: {path} has no column {shown(missing)}"
            if option
            else f"{path}: no column {shown(missing)} (a feature of the model)"
        )
        raise DataError(f"{where}; columns: {shown_names(header)}")
    return t, [position[n] for n in names], header


class Table(NamedTuple):
    """How feature columns become a row of numbers (see the module docstring): kept in the model file."""

    numeric: tuple = ()  # the numeric columns, in file order: features 0..n-1
    missing: tuple = ()  # those of them with a missing-value indicator, features n..n+k-1 in this order
    categorical: tuple = ()  # ((column, (its categories, sorted)), ...): one-hot features after
    means: tuple = ()  # a model's: the final running mean of each numeric column (its ``impute`` part's), or none

    @property
    def names(self) -> list[str]:
        """The feature columns the table reads: the numeric ones, then the categorical ones."""
        return [*self.numeric, *(name for name, _ in self.categorical)]

    @property
    def dim(self) -> int:
        return len(self.numeric) + len(self.missing) + sum(len(c) for _, c in self.categorical)

    @property
    def plain(self) -> bool:
        """Numbers alone, one feature per column (a block of them may be parsed as numbers directly)."""
        return not self.missing and not self.categorical

    def imputed(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(features of the numeric columns, the indicator feature of each, -1 for none)``:
        ``ocolearn.preprocess.Impute``'s fields."""
        n, at = len(self.numeric), {name: k for k, name in enumerate(self.missing)}
        return tuple(range(n)), tuple(n + at[name] if name in at else -1 for name in self.numeric)

    def settings(self) -> dict:
        """The table as the model file's JSON keeps it."""
        categorical = [[name, list(c)] for name, c in self.categorical]
        return {"numeric": list(self.numeric), "missing": list(self.missing), "categorical": categorical}

    @classmethod
    def of_settings(cls, settings: dict) -> Table:
        """The table of a model file's settings: its ``table``, or for a model from before tables
        its ``columns``, numbers alone; with the ``means`` of its ``impute`` part's final state
        where that part imputes every numeric column (``_means``). A table that is not one, or
        does not make the model's ``dim`` features, is an error (``ocolearn.modelfile.check``
        names the file)."""
        table = settings.get("table")
        if not table:
            return cls(tuple(settings.get("columns") or ()))
        try:
            categorical = tuple((str(name), tuple(map(str, c))) for name, c in table.get("categorical", ()))
            read = cls(
                tuple(map(str, table.get("numeric", ()))), tuple(map(str, table.get("missing", ()))), categorical
            )
        except (AttributeError, TypeError, ValueError):
            raise DataError(f"its table of columns is not one: {shown(table)}") from None
        from ocolearn.data.interactions import csv_pairs  # (the products follow the table's features)

        dim = read.dim + len(csv_pairs(settings.get("interactions") or (), read.numeric))
        if not set(read.missing) <= set(read.numeric) or dim != settings.get("dim"):
            raise DataError(f"its table of columns makes {dim} features, for dim {settings.get('dim')!r}")
        return read._replace(means=_means(settings, read))


def _means(settings: dict, table: Table) -> tuple:
    """The final means of a model's ``impute`` part (its first part) where it imputes every
    numeric column of ``table`` (models from before kept the columns with an indicator only),
    else none; means that are not finite numbers are an error."""
    pipeline, state = settings.get("pipeline") or [], settings.get("pipeline_state") or []
    if not (pipeline and state and pipeline[0].get("kind") == "impute"):
        return ()
    if list(pipeline[0].get("columns", ())) != list(table.imputed()[0]):
        return ()
    try:
        means = tuple(float(v) for v in state[0][1])
    except (IndexError, TypeError, ValueError):
        means = ()
    if len(means) != len(table.numeric) or not all(map(math.isfinite, means)):
        raise DataError(f"its imputation's state is not a mean for each of its {len(table.numeric)} numeric columns")
    return means


def is_missing(cell) -> bool:
    """Whether a cell holds no value: a missing-value marker (``MISSING``), None, a float NaN, or
    a value written as a marker (pandas' ``NA``, ``<NA>``)."""
    if isinstance(cell, str):
        return cell.strip() in MISSING
    return cell is None or (isinstance(cell, float) and math.isnan(cell)) or str(cell) in MISSING


class _Column:
    """What a first pass learns of one column: a missing cell, its first cell that is not a
    number (with its place), its distinct cells (up to one more than ``MAX_CATEGORIES``)."""

    def __init__(self):
        self.missing, self.text, self.values = False, None, set()

    def add(self, cells, places) -> None:
        for i, cell in enumerate(cells):
            if is_missing(cell):
                self.missing = True
                continue
            cell = cell if isinstance(cell, str) else repr(cell)
            if self.text is None and _number(cell) is None:
                self.text = (places(i), cell)
            if len(self.values) <= MAX_CATEGORIES:
                self.values.add(cell)


def column_kind(name: str, column: _Column, declared: dict, source) -> str:
    """The one rule: a column's declared kind (``--numeric``, ``--categorical``), else numeric
    when every cell that is not missing is a number, else categorical. A column declared
    numeric with a cell that is not a number is an error naming the cell's place."""
    kind = declared.get(name) or ("categorical" if column.text else "numeric")
    if kind == "numeric" and column.text:
        where, cell = column.text
        raise DataError(f"{where}, column {name!r}: {shown(cell)} is not a number (--numeric {name})")
    if kind == "categorical" and len(column.values) > MAX_CATEGORIES:
        raise DataError(
            f"{source}: column {name!r} is categorical (a cell that is not a number: {shown(column.text[1])}, "
            f"{column.text[0]}) with more than {MAX_CATEGORIES} distinct values; leave it out with --ignore {name}"
            if column.text
            else f"{source}: column {name!r} (--categorical) has more than {MAX_CATEGORIES} distinct values"
        )
    return kind


def _declared(kinds) -> dict:
    """``{column: kind}`` of the declared ``((column, kind), ...)``; a column declared both
    numeric and categorical is an error."""
    declared = {}
    for name, kind in kinds:
        if declared.get(name, kind) != kind:
            raise DataError(f"--categorical {name} and --numeric {name}: a column is one or the other")
        declared[name] = kind
    return declared


def _table(names, found: dict, declared: dict, source) -> Table:
    """The ``Table`` of the columns ``names`` from what a first pass ``found`` of each (``_Column``)."""
    unknown = next((n for n in declared if n not in names), None)
    if unknown is not None:
        option = f"--{declared[unknown]} {unknown}"
        raise DataError(f"{option}: {source} has no feature column {shown(unknown)}; features: {shown_names(names)}")
    kinds = {name: column_kind(name, found[name], declared, source) for name in names}
    numeric = tuple(n for n in names if kinds[n] == "numeric")
    categorical = tuple((n, tuple(sorted(found[n].values))) for n in names if kinds[n] == "categorical")
    return Table(numeric, tuple(n for n in numeric if found[n].missing), categorical)


def table_of(columns: dict, categorical=(), numeric=(), source="the table") -> Table:
    """The ``Table`` of columns in memory (``{name: array of str, or of numbers with NaN for
    missing}``), by the rule of a CSV file's first pass (``column_kind``)."""
    found = {}
    for name, cells in columns.items():
        found[name] = _Column()
        found[name].add(_cells(cells), lambda i: f"{source}, row {i}")
    kinds = [(n, "categorical") for n in categorical] + [(n, "numeric") for n in numeric]
    return _table(list(columns), found, _declared(kinds), source)


def _cells(values) -> list:
    """A column's cells as a list (str, float, None)."""
    values = np.asarray(values)
    return values.astype(np.float64).tolist() if values.dtype.kind in "biuf" else values.tolist()


def table_rows(table: Table, columns: dict, where=lambda i: f"row {i}") -> np.ndarray:
    """The rows of numbers (``(n, table.dim)`` float64) of columns of cells ``{name: array}``
    (strings as a CSV file holds them, or numbers with NaN for missing), laid out by ``table``
    (see the module docstring); ``where(i)`` names row i in an error (a cell that is not a
    number in a numeric column, a missing cell in a column without an indicator or a mean)."""
    n = len(np.asarray(columns[table.names[0]]))
    out = np.zeros((n, table.dim))
    indicator = {name: len(table.numeric) + k for k, name in enumerate(table.missing)}
    for j, name in enumerate(table.numeric):
        fill = table.means[j] if table.means else None
        for i, cell in enumerate(_cells(columns[name])):
            if name in indicator and is_missing(cell):
                out[i, indicator[name]] = 1.0
            else:
                out[i, j] = _number_cell(cell, f"{where(i)}, column {name!r}", fill)
    at = len(table.numeric) + len(table.missing)
    for name, categories in table.categorical:
        code = {c: k for k, c in enumerate(categories)}
        for i, cell in enumerate(_cells(columns[name])):
            k = code.get(cell if isinstance(cell, str) else repr(cell))
            if k is not None:  # (a category not seen in training, or a missing cell: all zeros)
                out[i, at + k] = 1.0
        at += len(categories)
    if not np.all(np.isfinite(out)):
        i = int(np.argmax(~np.all(np.isfinite(out), axis=1)))
        raise DataError(f"{where(i)}: a value that is not a finite number")
    return out


def _number_cell(cell, where: str, fill=None) -> float:
    """A numeric column's cell (text, or a number) as a number; a missing one is ``fill`` (the
    column's mean in a model's table), else an error (a column with a missing-value indicator
    reads it before, ``table_rows``)."""
    if is_missing(cell):
        if fill is not None:
            return fill
        raise DataError(
            f"{where}: a missing value ({shown(cell)}), but the model saw none in this column in training, "
            "so it has no missing-value indicator for it (--skip-bad skips the row)"
        )
    return _value(cell, where) if isinstance(cell, str) else _value(repr(float(cell)), where)


def survey(source) -> Table:
    """The first pass over a CSV file that finds its ``Table`` (the feature columns: ``columns``
    or all but the target and ``ignore``; their kinds by ``column_kind``, declared by
    ``kinds``); with ``skip_bad`` a row that is malformed or has no target is left out, as
    training will leave it out."""

    t, features, header = csv_columns(source.path, source.target, source.columns, True, source.ignore, "--columns")
    declared = _declared(source.kinds)
    found, passed = _surveyed(source, t, features, header, declared, fast="categorical" not in declared.values())
    if passed and any(column.text for column in found.values()):  # (a categorical column's cells in them too)
        found, _ = _surveyed(source, t, features, header, declared, fast=False)
    return _table([header[j] for j in features], found, declared, source.path)


def _surveyed(source, t, features, header, declared, fast: bool):
    """``({column: _Column}, whether a block was passed over)``: ``fast``, a block of plain
    numbers (``csvfast.plain_block``: no missing cell, no text, every target there) is passed
    over, as it can only say its columns are numbers; its cells are then unread, so a column
    found categorical in another block needs a pass without ``fast`` (its categories)."""
    from ocolearn.data.stream import Position

    found, passed = {header[j]: _Column() for j in features}, False
    for data, first_line, _ in byte_blocks(source, Position()):
        if fast and plain_block(data, first_line, t, features, len(header)) is not None:
            passed = True
            continue
        lines = _decode(data, first_line, source.path).split("\n")
        try:
            rows = _checked(csv_rows(lines, source.path, header, first_line), t, header, source.path, declared)
        except DataError:
            if not source.skip_bad:
                raise
            rows = []
            for number, line in enumerate(lines, first_line):
                try:
                    rows += _checked(csv_rows([line], source.path, header, number), t, header, source.path, declared)
                except DataError:
                    pass
        place = lambda i, rows=rows: f"{source.path}, line {rows[i][0]}"  # noqa: E731
        for j in features:
            found[header[j]].add([fields[j] for _, fields in rows], place)
    return found, passed


def _checked(rows, target, header, path, declared):
    """``rows`` whose target is there (``check_target``) and whose cells of columns declared
    numeric are numbers or missing; else an error naming the first bad one."""
    for number, fields in rows:
        check_target(fields[target], f"{path}, line {number}", header[target])
        for j, name in enumerate(header):
            if declared.get(name) == "numeric" and not is_missing(fields[j]) and _number(fields[j]) is None:
                raise DataError(
                    f"{path}, line {number}, column {name!r}: {shown(fields[j])} is not a number (--numeric {name})"
                )
    return rows


def csv_lines(data: bytes, first_line: int, path, target, features, header, table: Table) -> Block:
    """Rows of a CSV file's lines (the header line, line 1, is skipped): the ``target``
    column (a position from ``csv_columns``, or None) as label names, the ``features``
    columns (``table.names``' positions) as the dense rows ``table_rows`` makes of them. A
    ragged row or a cell that cannot be read is an error naming the line and column. A block of
    plain numbers (``table.plain``) is read by compiled code (``ocolearn.data.csvfast``: the same
    rows); any other block by the loop below."""
    if table.plain and (block := plain_block(data, first_line, target, features, len(header))) is not None:
        return block
    rows = csv_rows(_decode(data, first_line, path).split("\n"), path, header, first_line)
    labels, numbers = [], [number for number, _ in rows]
    for number, fields in rows:
        if target is not None:  # (not a class named '' or 'NA')
            check_target(fields[target], f"{path}, line {number}", header[target])
        labels.append(fields[target] if target is not None else "")
    if table.plain:  # (numbers alone: a cell that is not one is an error naming it)
        where, fills = f"{path}, line {{}}, column {{!r}}", table.means or [None] * len(features)
        values = [
            [_number_cell(fields[j], where.format(n, header[j]), fill) for j, fill in zip(features, fills, strict=True)]
            for n, fields in rows
        ]
        values = np.asarray(values, np.float64).reshape(len(rows), table.dim)
    else:
        columns = {header[j]: [fields[j] for _, fields in rows] for j in features}
        values = (
            table_rows(table, columns, lambda i: f"{path}, line {numbers[i]}") if rows else np.zeros((0, table.dim))
        )
    d = table.dim
    return Block(
        np.asarray(labels, str),
        np.arange(len(rows) + 1, dtype=np.int64) * d,
        np.tile(np.arange(d, dtype=np.int64), len(rows)),
        values.reshape(-1),
        np.asarray(numbers, np.int64),
    )


def _parsers(source):
    table = source.table or Table(tuple(source.columns))
    names = table.names or ()
    target, features, header = csv_columns(source.path, source.target, names, source.labelled, source.ignore)
    if not source.table:  # (a source read without a first pass: every feature column a number)
        table = Table(tuple(header[j] for j in features))
    columns = (target if source.labelled else None, features, header, table)  # (prediction input: labels unread)
    parse = lambda d, f: csv_lines(d, f, source.path, *columns)  # noqa: E731
    return parse, parse


READER = Reader("csv", byte_blocks, _parsers, dense=True)
