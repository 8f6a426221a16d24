"""Rows as every reader produces them, and what the readers share.

A reader (one module per format: ``svmlight``, ``mira``, ``csvfile``, ``textdirs``, ``vw``) turns
bytes into ``Block``s: labels as written, CSR-style rows of (index, value) and each row's line
number (and a VW file's importance weights and tags). ``fill_rows`` pads a block's rows into
the ``Sparse`` arrays the learners read; ``SparseData`` is a whole data set in memory. Every
malformed line is an error that names the file, the line number and the expected form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ocolearn.data import DataError, OtherFormat, _number, compiled, numbered, open_binary, shown, skip_bom
from ocolearn.features import Sparse

FLOAT32_MAX = float(np.finfo(np.float32).max)  # a larger number would be infinite in float32
# Text read and parsed at a time: 2 MB holds about 100 MB less than 8 MB did while the parsing
# threads work (measured streaming the 2 GB benchmark file), at the same speed.
BLOCK_BYTES = 2 << 20
# The longest line a reader takes: a longer one (a file without line breaks, ``/dev/zero``
# through a link) is refused by ``line_too_long`` once this much of it is read, not held whole.
MAX_LINE_BYTES = 64 << 20


def line_too_long(path, line: int) -> DataError:
    """The error for line ``line`` of ``path`` running past ``MAX_LINE_BYTES``."""
    return DataError(
        f"{path}, line {line}: more than {MAX_LINE_BYTES:,} bytes without a line break; "
        f"a line of a data file is at most {MAX_LINE_BYTES:,} bytes (is it a data file?)"
    )


def read_line(f, path, line: int = 1) -> bytes:
    """The next line of the open file ``f`` (line ``line`` of ``path``), read no further than
    ``MAX_LINE_BYTES`` (``line_too_long``)."""
    text = f.readline(MAX_LINE_BYTES + 1)
    if len(text) > MAX_LINE_BYTES:
        raise line_too_long(path, line)
    return text


class Block(NamedTuple):
    labels: np.ndarray  # (n,) float64 (or str names, for the MIRA format)
    indptr: np.ndarray  # (n + 1,) int64: row i holds entries indptr[i]:indptr[i + 1]
    indices: np.ndarray  # (nnz,) int64, as written (not shifted to 0-based)
    values: np.ndarray  # (nnz,) float64
    lines: np.ndarray  # (n,) int64: the line number of each row
    weights: np.ndarray | None = None  # (n,) float64 importance weights (VW), or None: each row counts once
    tags: np.ndarray | None = None  # (n,) str tags (VW), which predict writes after each prediction


class Reader(NamedTuple):
    """What the streaming layer (``ocolearn.data.stream``) needs of a format, one per module
    (``svmlight``, ``mira``, ``csvfile``, ``textdirs``):

    - ``blocks(source, start)``: ``(payload, first line, offset)`` from a ``Position``;
    - ``parsers(source)``: ``(fast, exact)`` parsers ``(payload, first line) -> Block``, the
      exact one line by line (to skip bad lines); a block's arrays may be the parsing thread's
      scratch, valid until that thread parses again (``_parsed`` uses them on that thread);
    - ``one_based``: indices as written start at 1 (unless the source is ``zero_based``);
    - ``dense``: rows are dense (every feature in every row); ``place(source, line)``: where a
      row is, as error messages name it (the file and line, or a text document's path);
    - ``after(payload, first line, offset, lines)``: the offset just after each of the rows at
      ``lines`` (increasing), from which a stream read on begins.
    """

    name: str
    blocks: Callable
    parsers: Callable
    one_based: bool = False
    dense: bool = False
    place: Callable = lambda source, line: f"{source.path}, line {line}"
    after: Callable = lambda data, first_line, offset, lines: (
        offset + line_ends(np.frombuffer(data, np.uint8), lines - first_line)
    )


def byte_blocks(source, start, size=None):
    """``(whole lines as a uint8 array, first line number, offset of its start)`` of a file
    from ``start``; the last line may lack its newline (a truncated file). Each block is read
    into a fresh array (no copies of the bytes but the partial line carried to the next one,
    read on in doubling sizes) and its newlines are counted by NumPy. A line
    longer than ``MAX_LINE_BYTES`` is an error naming it (``line_too_long``)."""
    size = size or BLOCK_BYTES
    with open_binary(source.path) as f:
        offset = skip_bom(f) if start.offset == 0 else f.seek(start.offset)
        rest, line = np.zeros(0, np.uint8), start.line
        while True:
            if rest.size > MAX_LINE_BYTES:
                raise line_too_long(source.path, line)
            data = np.empty(rest.size + max(size, rest.size), np.uint8)
            data[: rest.size] = rest
            got = f.readinto(memoryview(data)[rest.size :])
            if not got:
                if bytes(rest).strip():
                    yield rest, line, offset
                return
            data = data[: rest.size + got]
            cut = _after_last_newline(data)
            if cut == 0:
                rest = data
                continue
            yield data[:cut], line, offset
            line += _newlines(data[:cut])
            offset += cut
            rest = data[cut:]


def _after_last_newline(buf) -> int:
    """The offset just after the last newline of ``buf`` (0 if none), looked for in its last
    64 kB first."""
    for start in (max(0, buf.size - 65536), 0):
        found = np.flatnonzero(buf[start:] == 10)
        if found.size:
            return start + int(found[-1]) + 1
    return 0


def _newlines(buf) -> int:
    return int(np.count_nonzero(buf == 10))


def line_ends(buf, ks):
    """The offsets just after lines ``ks`` (0-based) of ``buf``: after their newline, or the end."""
    return np.append(np.flatnonzero(buf == 10) + 1, buf.size)[ks]


def pad(indptr, indices, values, shift, buckets, dim, idx, val, drop) -> int:
    """Write the rows into padded ``idx``/``val`` (zeros beyond each row): indices shifted by
    ``shift`` and folded into ``buckets`` (if > 0) or checked against ``dim`` (``drop``: an
    index beyond it is left out, as a feature the model never saw). Returns -1, or the
    position of the first entry whose index is out of range (the entries before it written).
    Compiled where it pays (``compiled.worth``), else in NumPy (``_pad_small``): the same."""
    way = _pad_loop if compiled.worth(int(indptr[-1] - indptr[0])) else _pad_small
    return way(indptr, indices, values, shift, buckets, dim, idx, val, drop)


@compiled.njit()
def _pad_loop(indptr, indices, values, shift, buckets, dim, idx, val, drop):
    for r in range(indptr.size - 1):
        a = indptr[r]
        for p in range(a, indptr[r + 1]):
            i = indices[p] - shift
            if i < 0:
                return p
            if buckets > 0:
                i = i % buckets
            elif i >= dim:
                if drop:
                    continue
                return p
            idx[r, p - a] = i
            val[r, p - a] = values[p]
    return -1


def _pad_small(indptr, indices, values, shift, buckets, dim, idx, val, drop) -> int:
    """``_pad_loop`` in NumPy."""
    a, b = int(indptr[0]), int(indptr[-1])
    i = indices[a:b] - shift
    bad = (i < 0) | ((i >= dim) & (buckets <= 0) & (not drop))
    first = int(np.argmax(bad)) if bad.any() else b - a
    counts = np.diff(indptr)
    rows = np.repeat(np.arange(counts.size), counts)[:first]
    cols = np.arange(first) - np.repeat(indptr[:-1] - a, counts)[:first]
    i = i[:first] % buckets if buckets > 0 else i[:first]
    keep = i < dim if drop and buckets <= 0 else slice(None)
    idx[rows[keep], cols[keep]] = i[keep]
    val[rows[keep], cols[keep]] = values[a : a + first][keep]
    return -1 if first == b - a else a + first


DEFAULT_BITS = 18  # hashed features: 2**18 buckets unless told otherwise


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
    v = _number(text)
    if v is None:
        raise DataError(f"{where}: {shown(text)} is not a number")
    if not abs(v) <= FLOAT32_MAX:
        raise DataError(f"{where}: {shown(text)} is not a finite number in float32 (at most {FLOAT32_MAX:.4g})")
    return v


def repeated_feature(where: str, feature: str, hint: str) -> DataError:
    """The error for a feature given twice in one line (svmlight, MIRA): summing its values, or
    keeping one of them, would each be a guess (libsvm and scikit-learn refuse it too)."""
    return DataError(f"{where}: {feature} is repeated; a line gives each feature once ({hint})")


def _pad(rows: list[dict[int, float]], dim: int) -> Sparse:
    k = max(1, max((len(r) for r in rows), default=0))
    idx = np.zeros((len(rows), k), np.int32)
    val = np.zeros((len(rows), k), np.float32)
    for i, r in enumerate(rows):
        idx[i, : len(r)] = list(r)
        val[i, : len(r)] = list(r.values())
    return Sparse(idx, val, dim)


def _decode(data, first_line: int, path) -> str:
    data = bytes(data)  # (a block's uint8 array, or bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + data[: e.start].count(b"\n")
        raise DataError(f"{path}, line {line}: not UTF-8 text") from None


def _mira_label(label: str, tokens, where: str) -> str:
    """A MIRA line's ``label``, a name, unless the line is another format's: a CSV line (a label
    with commas and no features, or ending in a comma) or an svmlight one (a number and
    ``index:value`` features, which MIRA would read as features named by numbers)."""
    if "," in label and (not tokens or label.endswith(",")):
        raise OtherFormat(f"{where}, label: {shown(label)} is not a name", "a line with commas", "csv")
    bar = next((token for token in tokens if "|" in token), None) if _number(label) is not None else None
    if bar is not None or label.startswith("|"):  # (VW's namespaces: ``1 |a x``, ``1 'tag|a x``, ``|a x``)
        raise OtherFormat(f"{where}: {shown(bar or label)} holds a bar '|'", "namespaces after bars", "vw")
    if numbered(tokens) and (_number(label) is not None or numbered([label])):
        raise OtherFormat(f"{where}: the features are numbers ({shown(tokens[0])}), not names", "", "svmlight")
    return label


def _word(token: str) -> bool:
    """Whether a token names its feature by a word, as MIRA's ``good`` or ``goal:2`` (not
    svmlight's ``qid:3``)."""
    name = token.partition(":")[0]
    return name[:1].isalpha() and name != "qid"


def _rows_by_line(data: bytes, first_line: int, path, row_of, label_dtype, placeholders=False, comment=None) -> Block:
    """A block from text line by line: ``row_of(tokens, where)`` gives each line's features
    as ``{index: value}`` (or the line's error); comments (from ``#`` on, or where the pattern
    ``comment`` matches) and blank lines are skipped.
    With ``placeholders`` (prediction input, whose labels are ignored) a numeric label that is
    not a number (``?``) is a placeholder, read as no label, unless it has a comma: a CSV row
    read as svmlight would be a placeholder with no features, predicted as an empty row."""
    text = _decode(data, first_line, path)
    labels, indptr, indices, values, numbers = [], [0], [], [], []
    for number, line in enumerate(text.split("\n"), first_line):
        line = (line.split("#", 1)[0] if comment is None else comment.sub("", line, count=1)).strip()
        if not line:
            continue
        where = f"{path}, line {number}"
        label, *tokens = line.split()
        try:
            if label_dtype is not np.float64:  # (MIRA's names)
                labels.append(_mira_label(label, tokens, where))
            elif ":" in label:  # svmlight: the line starts with a feature, it has no label
                labels.append(np.nan)
                tokens = [label, *tokens]
            elif placeholders and _number(label) is None and "," not in label:  # (a CSV line is no placeholder)
                labels.append(np.nan)
            else:
                labels.append(_value(label, f"{where}, label"))
            row = row_of(tokens, where)
        except DataError as e:  # (svmlight is the commands' default format: a hint at the others)
            if label_dtype is np.float64 and "," in line:
                raise OtherFormat(str(e), "a line with commas", "csv") from None
            if label_dtype is np.float64 and "|" in line:
                raise OtherFormat(str(e), "a line with '|'", "vw") from None
            if label_dtype is np.float64 and label[:1].isalpha() and _number(label) is None:
                raise OtherFormat(str(e), "a name as the label", "mira") from None
            if label_dtype is np.float64 and any(_word(token) for token in tokens):  # (1 good fun)
                raise OtherFormat(str(e), "a feature named by a word", "mira") from None
            raise
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
        raise entry_error(block, bad, dim, path, shift)


def entry_error(block: Block, bad: int, dim: int, path, shift: int, key: str = "") -> DataError:
    """The error for the out-of-range entry ``bad`` of a block (``pad``'s answer), naming its line
    and what fixed ``dim``: the option ``key`` at train time (``--dim``, ``data.dim``), else the model."""
    line = block.lines[np.searchsorted(block.indptr, bad, side="right") - 1]
    if block.indices[bad] < shift:  # (the options that read it so: train's, a config's)
        return DataError(
            f"{path}, line {line}: index 0 in a file read as 1-based (a zero-based file: train it with "
            "--zero-based, or data.zero_based = true)"
        )
    space = f"the {dim} features of {key}" if key else f"the model's {dim} features"
    return DataError(f"{path}, line {line}: feature index {block.indices[bad]} is beyond {space}")


def read_bytes(path) -> bytes:
    """A file's bytes, decompressed by its suffix (.gz, .bz2, .xz), without a byte-order mark."""
    with open_binary(path) as f:
        skip_bom(f)
        return f.read()


def label_names(labels) -> np.ndarray:
    """Labels as names: strings as read (MIRA, CSV), numbers as ``%g`` (svmlight)."""
    labels = np.asarray(labels)
    if labels.dtype.kind in "US":
        return labels.astype(str)
    distinct, inverse = np.unique(labels, return_inverse=True)
    return np.array([f"{v:g}" for v in distinct], dtype=str)[inverse] if labels.size else np.zeros(0, str)


def class_indices(path, names, lines, labels=None, order=None, key=""):
    """``(int32 class indices, class names)`` for the label ``names`` of the rows read from
    ``path`` at ``lines``. ``labels`` fixes the classes (an unknown label is an error naming
    its line and ``key``, see ``not_a_class``); by default they are the distinct names sorted by ``order``."""
    classes = sorted(set(names), key=order) if labels is None else list(labels)
    position = class_lookup(classes)
    for line, name in zip(lines, names, strict=True):
        if position(name) is None:
            raise not_a_class(f"{path}, line {line}", name, classes, key)
    return np.asarray([position(n) for n in names], np.int32), classes


def not_a_class(where: str, name: str, classes, key: str = "") -> DataError:
    """The error for a label outside the classes: those a user listed with ``key`` at train time
    (``--labels``, ``data.labels``), else the model's."""
    return DataError(f"{where}: label {shown(name)} is not one of {classes_named(classes, key)}")


def classes_named(classes, key: str = "") -> str:
    """The classes as an error names them: listed with ``key`` at train time, else the model's."""
    listed = key or "the model's labels"
    return f"{listed} {list(classes)}"


def class_lookup(classes):
    """``find(name)``: the index of the label ``name`` among the class names ``classes``, or None.
    A number matches the class of the same value however it is written (``1`` finds the class
    ``1.0``, as numeric labels compare in scikit-learn), so a model trained on ``1.0`` and ``0.0``
    tests a file of ``1`` and ``0``; within one training file the two spellings are refused
    (``ocolearn.data.task``), so no two classes share a value."""
    position = {c: i for i, c in enumerate(classes)}
    by_value: dict[float, int] = {}
    for i, c in enumerate(classes):
        value = _number(str(c))
        if value is not None:
            by_value.setdefault(value, i)

    def find(name):
        found = position.get(name)
        if found is None and (value := _number(str(name))) is not None:
            found = by_value.get(value)
        return found

    return find
