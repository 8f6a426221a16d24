"""Data: the bundled iris, CSV tables, R-style scaling, and design matrices.

A table is a dict ``{column name: numpy array}``; numeric columns are float64, others str.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import math
import os
import stat
import unicodedata
import zlib
from importlib import resources
from pathlib import Path

import numpy as np

from ocolearn.names import number as _number

IRIS_COLUMNS = ("Sepal.Length", "Sepal.Width", "Petal.Length", "Petal.Width")


class DataError(ValueError):
    """Bad input data; the message names the file, line and column."""


class OtherFormat(DataError):
    """Bad input data that looks like another format's, ``fmt`` (``why``, if the problem does not
    say it: "a line with commas"): the message ends by saying to give that format, as a door that
    chooses the format can; one that reads as a model was trained (predict, test) says what is
    true there instead."""

    NAMES = {
        "svmlight": "an svmlight file",
        "csv": "a CSV file",
        "mira": "a MIRA-format file",
        "text": "a folder of documents",
        "vw": "a VW-format file",
    }

    def __init__(self, problem: str, why: str, fmt: str):
        self.problem, self.why, self.fmt = problem, why, fmt
        super().__init__(self.told(f"give the format {fmt}"))

    def told(self, advice: str) -> str:
        """The message with ``advice`` for the case that the data are of the other format."""
        why = f"{self.why}: " if self.why else ""
        return f"{self.problem} ({why}if this is {self.NAMES[self.fmt]}, {advice})"


def numbered(tokens) -> bool:
    """Whether ``tokens`` (a line's, split at spaces) are all svmlight's ``index:value`` (or
    ``qid:N``): a line of them is svmlight's, wherever another format reads it."""

    def entry(token):
        index, sep, value = token.partition(":")
        return sep and (index == "qid" or index.isascii() and index.isdigit()) and _number(value) is not None

    return bool(tokens) and all(map(entry, tokens))


SHOWN = 60  # characters of a bad token an error message echoes


def shown(text, limit: int = SHOWN) -> str:
    """``repr(text)``, cut to about ``limit`` characters: an error echoes a bad token readably
    (a 100 MB token must not make a 100 MB line)."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def shown_names(names, count: int = 12) -> str:
    """Column names for a message, each cut (``shown``), at most ``count`` of them."""
    names = list(names)
    listed = ", ".join(n if len(n) <= SHOWN and n.isprintable() else shown(n) for n in names[:count])
    return listed + (f", ... ({len(names)} in all)" if len(names) > count else "")


# A target cell that holds no value: empty, or a missing-value marker (R's NA, pandas' read_csv's
# default markers, UCI's ?), never a class of its own nor a label of regression.
MISSING = frozenset(
    {"", "?", "NA", "N/A", "n/a", "#N/A", "#N/A N/A", "#NA", "<NA>", "NaN", "nan", "-NaN", "-nan", "NULL", "null"}
    | {"None", "-1.#IND", "1.#IND", "-1.#QNAN", "1.#QNAN"}
)


def check_target(cell: str, where: str, column: str) -> None:
    """Refuse a missing target ``cell`` (``MISSING``), naming ``where`` (file and line) and the column."""
    if cell in MISSING:
        what = "is empty" if not cell else f"holds {cell!r}, a missing value"
        raise DataError(f"{where}: the target column {column!r} {what}")


def check_labels(labels, lines, place) -> None:
    """Refuse a class label holding a control character (a tab, a line break) or a line or
    paragraph separator, naming ``place(line)`` of its first row (``lines``: each label's):
    ``predict`` prints one label a line (a text model's after a tab), which it would break apart."""
    labels = np.asarray(labels)
    for name in np.unique(labels).tolist():
        bad = next((c for c in name if unicodedata.category(c) in ("Cc", "Zl", "Zp")), None)
        if bad is not None:
            where = place(int(lines[np.argmax(labels == name)]))  # (a text document's path holds the label)
            raise DataError(
                f"{where if where.isprintable() else repr(where)}: the label {shown(name)} holds the control "
                f"character {bad!r}; a label is printed one a line, so it holds no tab, line break or other "
                "control character"
            )


def header_names(fields, source) -> list[str]:
    """A CSV header's column names (the fields as the CSV parser split them, stripped): the one
    rule for every CSV reader. A repeated name is an error: a column chosen by name must be one; a
    header of numbers alone, not all whole, is a row of data, and a column without a name is R's row
    names, both errors."""
    names = [f.strip() for f in fields]
    # A file without a header would lose its first row; whole numbers may name columns (years, indices).
    if all(_number(name) is not None for name in names) and not all(name.isdigit() for name in names):
        raise DataError(
            f"{source}, line 1: the header is only numbers ({shown_names(names, 4)}), a row of data; "
            "a CSV file's first line names its columns"
        )
    if "" in names:  # (R's write.csv and pandas' to_csv name their column of row names "": no feature)
        at = names.index("")
        hint = "R's and pandas' row names? write.csv(row.names = FALSE), to_csv(index=False)" if not at else "a comma?"
        raise DataError(f"{source}, line 1: column {at + 1} has no name ({hint})")
    seen = set()
    for name in names:
        if name in seen:
            raise DataError(f"{source}, line 1: the column name {shown(name)} is repeated in the header")
        seen.add(name)
    return names


OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
# The first bytes of each (a bzip2 stream: BZh, the block size, then a block's or the end's magic).
BZIP2 = tuple(b"BZh" + bytes([size]) + block for size in b"123456789" for block in (b"1AY&SY", b"\x17rE8P\x90"))
MAGIC = {".gz": (b"\x1f\x8b",), ".bz2": BZIP2, ".xz": (b"\xfd7zXZ\x00",)}
COMPRESSION = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}


def open_binary(path):
    """The file opened for reading bytes, decompressed by its suffix (.gz, .bz2, .xz). A
    compressed file that is cut short or corrupt is an error naming it (``_Decompressed``)."""
    path = Path(path)
    not_standard_input(path)
    regular_file(path)
    try:
        opened = OPENERS.get(path.suffix, open)(path, "rb")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except IsADirectoryError:  # (the system's words, "Is a directory", say nothing of the text format)
        raise OtherFormat(f"{path}: a folder, not a data file", "", "text") from None
    if not opened.seekable():
        opened.close()
        raise DataError(f"{path}: {PIPE}")
    if path.suffix in OPENERS:
        return _Decompressed(opened, path)
    start = opened.read(10)
    opened.seek(0)
    for suffix, magic in MAGIC.items():
        if start.startswith(magic):  # (read as text, it would be "not UTF-8 text" at line 1)
            opened.close()
            raise DataError(f"{path}: looks {COMPRESSION[suffix]}-compressed: name it with {suffix}")
    return opened


SPECIAL = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def regular_file(path, what: str = "data file") -> None:
    """Refuse ``path`` before it is opened unless it is a regular file or a folder (through
    links; a missing path and a folder are each opener's to name): a named pipe would block the
    opening until a writer came, a device (``/dev/zero``) never ends, a link loop or a path
    that cannot be read is the system's words naming the path."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as e:  # (ELOOP: "Too many levels of symbolic links", EACCES)
        raise DataError(f"{path}: {e.strerror or e}") from None
    kind = SPECIAL.get(stat.S_IFMT(mode))
    if kind == SPECIAL[stat.S_IFIFO] and what == "data file":
        raise DataError(f"{path}: {PIPE}")
    if kind:
        raise DataError(f"{path}: {kind}, not a {what}; ocolearn reads regular files only")


BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark, which editors on Windows (and Excel) write first


def skip_bom(f) -> int:
    """Position ``f`` (opened by ``open_binary``, at its start) after a UTF-8 byte-order mark,
    if it starts with one, and return that offset (3, or 0): the one place where every reader
    leaves it out, so it is never part of a label, a class name or a column name."""
    start = len(BOM) if f.read(len(BOM)) == BOM else 0
    f.seek(start)
    return start


# Every command seeks in a data file: train reads it more than once (a first pass finds its
# width, labels and task) and resumes from offsets, and each command peeks at its first bytes.
def not_standard_input(path) -> None:
    """Refuse ``-``, the commands' usual name for the standard input (a file here named ``-``
    would be ``./-``): it is read once, from its start."""
    if str(path) == "-":
        raise DataError(f"-: the standard input, but {SEEKABLE}; save it to a file first")


SEEKABLE = "ocolearn needs a data file it can seek in (it reads files more than once and resumes from offsets)"
PIPE = f"a pipe, but {SEEKABLE}; save the pipe to a file first"


class _Decompressed:
    """A decompressing file whose read errors (``EOFError`` for a file cut short, ``zlib.error``,
    ``lzma.LZMAError`` and the ``OSError`` of a bad header or stream, which name no file) are a
    ``DataError`` naming the file."""

    def __init__(self, f, path: Path):
        self._f, self._path = f, path

    def _checked(self, method, *args):
        try:
            return method(*args)
        except EOFError:
            raise DataError(f"{self._path}: the {self._path.suffix} file is cut short (incomplete)") from None
        except (OSError, ValueError, zlib.error, lzma.LZMAError) as e:  # (gzip.BadGzipFile is an OSError)
            reason = str(e).split(" (b'", 1)[0]  # (gzip echoes the first bytes it found)
            raise DataError(f"{self._path}: not a valid {self._path.suffix} file ({reason})") from None

    def read(self, *args):
        return self._checked(self._f.read, *args)

    def readinto(self, buffer):
        return self._checked(self._f.readinto, buffer)

    def readline(self, *args):
        return self._checked(self._f.readline, *args)

    def seek(self, *args):
        return self._checked(self._f.seek, *args)

    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def parse_csv(lines, source: str) -> dict[str, np.ndarray]:
    """A table from CSV lines with a header (split by ``ocolearn.data.csvfile.csv_rows``, the
    one CSV parser). Columns whose every value is a number are numeric.

    NaN, infinite values, ragged rows and empty files are errors naming ``source`` and the line.
    """
    from ocolearn.data.csvfile import csv_rows

    lines = iter(lines)
    header = next(csv.reader([next(lines, "")]), None)
    if not header:
        raise DataError(f"{source}: empty file; expected a header line of column names")
    header = header_names(header, source)
    rows = csv_rows(lines, source, header, 2)
    if not rows:
        raise DataError(f"{source}: no data rows after the header")
    table = {}
    for j, name in enumerate(header):
        values = [_number(r[j]) for _, r in rows]
        if any(v is None for v in values):
            table[name] = np.array([r[j] for _, r in rows])
            continue
        for (line, r), v in zip(rows, values, strict=True):
            if not math.isfinite(v):
                raise DataError(f"{source}, line {line}, column {name!r}: {shown(r[j])} is not a finite number")
        table[name] = np.array(values, dtype=np.float64)
    return table


def read_csv(path) -> dict[str, np.ndarray]:
    """A table from a CSV file with a header line (see ``parse_csv``)."""
    path = Path(path)
    regular_file(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:  # (a byte-order mark is not part of a name)
            return parse_csv(f, str(path))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file; expected a CSV file with a header line") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None


def load_iris() -> dict[str, np.ndarray]:
    """Fisher's iris as R's ``datasets::iris`` (also scikit-learn's copy), rows in stored order.

    Columns Sepal.Length, Sepal.Width, Petal.Length, Petal.Width (cm) and Species. Not UCI's
    ``iris.data``, whose rows 35 and 38 differ from Fisher's table.
    """
    text = resources.files("ocolearn.data").joinpath("iris.csv").read_text()
    return parse_csv(text.splitlines(), "iris.csv (bundled)")


def load_wine() -> dict[str, np.ndarray]:
    """The UCI wine recognition data (Forina et al.; Aeberhard, Coomans and de Vel 1992;
    CC BY 4.0, doi:10.24432/C5PC7J), as scikit-learn bundles it: 178 wines, 13 chemical
    measurements, and the ``Cultivar`` (cultivar_1, cultivar_2, cultivar_3)."""
    text = resources.files("ocolearn.data").joinpath("wine.csv").read_text()
    return parse_csv(text.splitlines(), "wine.csv (bundled)")


BUNDLED = {"iris": load_iris, "wine": load_wine}


def table_csv(table, columns=None) -> str:
    """A table as CSV text with a header line (numbers written to round-trip), the ``columns``
    in order (default: all)."""
    columns = list(columns or table)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    cells = [[repr(float(v)) if table[c].dtype.kind in "fi" else str(v) for v in table[c]] for c in columns]
    writer.writerows(zip(*cells, strict=True))
    return out.getvalue()


def table_svmlight(table, target: str, features) -> str:
    """A table as svmlight text: the ``target`` column as the label (class names as their
    number 1..K in sorted order, named in a first comment line), the ``features`` as indices
    1..d (zeros left out)."""
    column = table[target]
    numeric = column.dtype.kind in "fi"
    names = sorted(set(column.tolist())) if not numeric else []
    lines = [f"# labels: {' '.join(f'{k + 1}={n}' for k, n in enumerate(names))}\n"] if names else []
    for i in range(len(column)):
        label = repr(float(column[i])) if numeric else str(names.index(column[i]) + 1)
        entries = " ".join(f"{j + 1}:{float(table[f][i])!r}" for j, f in enumerate(features) if table[f][i] != 0)
        lines.append(f"{label} {entries}".rstrip() + "\n")
    return "".join(lines)


def load_table(source: str) -> dict[str, np.ndarray]:
    """A bundled table by name (``"iris"``, ``"wine"``), else a path to a CSV file."""
    return BUNDLED[source]() if source in BUNDLED else read_csv(source)


def _columns(table, names, source, what="column"):
    missing = [n for n in names if n not in table]
    if missing:
        raise DataError(f"{source}: unknown {what} {missing[0]!r}; columns: {', '.join(table)}")
    text = [n for n in names if table[n].dtype.kind not in "fi"]
    if text:
        raise DataError(f"{source}: {what} {text[0]!r} is not numeric")
    return names


def scale(table, columns=None, source="table"):
    """R's ``scale()``: centre each column and divide by its sample standard deviation (n - 1).

    ``columns`` defaults to every numeric column; a constant column is an error.
    """
    if columns is None:
        columns = [n for n, v in table.items() if v.dtype.kind in "fi"]
    out = dict(table)
    for name in _columns(table, list(columns), source):
        v = table[name]
        sd = v.std(ddof=1)
        if not sd > 0:
            raise DataError(f"{source}: column {name!r} is constant and cannot be scaled")
        out[name] = (v - v.mean()) / sd
    return out


def feature_matrix(table, features, intercept=False, source="table"):
    """The named numeric columns in order as a float64 matrix (and a column of ones last if
    ``intercept``)."""
    _columns(table, list(features), source, "feature")
    columns = [table[n] for n in features]
    if intercept:
        columns.append(np.ones_like(columns[0]))
    return np.stack(columns, axis=1).astype(np.float64)


def design(table, features, target, intercept=False, source="table"):
    """``(X, y)`` in float64: ``feature_matrix`` and the target column; R's
    ``lm(target ~ features - 1)`` design."""
    _columns(table, [target], source, "target")
    return feature_matrix(table, features, intercept, source), table[target].astype(np.float64)
