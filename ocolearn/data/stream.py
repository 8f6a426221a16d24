"""The one data path: a ``Source`` read in chunks of rows, with constant memory, whatever
its format.

    Source(path or arrays, format, options)      what to read, resolved once
      -> the format's Reader: blocks() and parsers()   one module per format (READERS)
      -> blocks of padded rows + targets           on PARSERS threads (``_rows``)
      -> chunks: the rows copied once, aligned     read in place by JAX (``chunks``)
      -> run / sweep / train / predict / test      none of them knows the format

Text is read 2 MB at a time (``BLOCK_BYTES``) into fresh arrays; the parsing threads parse
each block (compiled code, off the GIL), pad its rows and find their targets, and drop the
block; a chunk copies its rows from them into 64-byte aligned arrays, which JAX's CPU backend
uses without a copy. ``prefetched`` makes the next chunk while one is in use. Memory held: the
chunk in use, the next one, and the blocks of rows not yet in a chunk.

``chunks(source, start, chunk_rows)`` yields ``Chunk``s of exactly ``chunk_rows`` rows (the
last one may be shorter): padded ``Sparse`` features (dense rows for CSV and NumPy arrays),
targets (class indices, or numbers for a regression task, or zeros for unlabelled input),
and the ``Position`` just after the chunk's last row, from which a resumed run reads on.
``scan(source)`` is the first pass that finds labels, dimension and padded width. Files are
opened with ``ocolearn.data.open_binary`` (``.gz``, ``.bz2`` and ``.xz`` are decompressed).
With ``skip_bad`` a malformed line is skipped and counted instead of being an error.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import NamedTuple

import numpy as np

from ocolearn.data import DataError, arrays, check_labels, csvfile, mira, shown, svmlight, textdirs, vw
from ocolearn.data.interactions import with_crosses
from ocolearn.data.sparse_text import (
    FLOAT32_MAX,
    Block,
    class_lookup,
    classes_named,
    entry_error,
    label_names,
    not_a_class,
    pad,
)
from ocolearn.data.task import MAX_LABELS, Labels, _is_number
from ocolearn.features import Sparse
from ocolearn.names import key_of


class Position(NamedTuple):
    """Where a stream stands: the next row to read, as a byte offset into the (decompressed)
    file and the line number there, and how many rows were read before it."""

    offset: int = 0
    line: int = 1
    row: int = 0


class Source(NamedTuple):
    """A file of examples and how to read it: the one description every command reads through."""

    path: str  # (or ``ocolearn.data.arrays.Arrays``, for the formats "dense" and "csr")
    format: str = "svmlight"  # or "mira", "csv" (dense: every column but the target), "text" (folders), "vw"
    dim: int = 0  # the number of features (2**bits when hashing)
    labels: tuple = ()  # the class names, in class order
    zero_based: bool = False  # svmlight indices start at 0
    bits: int | None = None  # hash indices (svmlight) or names (mira, text, vw) into 2**bits buckets
    skip_bad: bool = False
    width: int | None = None  # entries per padded row (None: per chunk, a multiple of 8)
    target: str = ""  # csv: the label column
    task: str = ""  # "regression": targets are the labels as numbers; else class indices
    labelled: bool = True  # False: labels are optional and ignored (prediction input)
    drop_unseen: bool = False  # leave out features beyond ``dim`` (prediction input) instead of failing
    columns: tuple = ()  # csv: the feature columns, in order (default: every column but the target)
    order_seed: int | None = None  # text: the documents are read in an order shuffled by this seed
    task_key: str = ""  # at train time, the door's key of the task (--task, data.task): errors name its
    # keys of listed labels and dim (``ocolearn.names.key_of``); "": they are a model's
    ignore: tuple = ()  # csv: columns left out of the features (--ignore)
    kinds: tuple = ()  # csv: ((column, "numeric" or "categorical"), ...) declared (--numeric, --categorical)
    table: object = None  # csv: the ``ocolearn.data.csvfile.Table`` the first pass found (or a model's)
    interactions: tuple = ()  # vw, csv, svmlight: namespaces, columns or indices crossed (``data.interactions``)
    constant: bool = True  # vw: each row holds VW's constant feature


class Chunk(NamedTuple):
    X: Sparse
    y: np.ndarray  # int32 class indices into the source's labels
    end: Position  # just after the last row
    skipped: int  # malformed lines skipped in it
    first_line: int  # the file's line of its first row (a CSV file's first row is on line 2)
    weights: np.ndarray | None = None  # float32 importance weights of the rows (VW), or None: once each
    tags: np.ndarray | None = None  # str tags of the rows (VW), or None


READERS = {
    reader.name: reader
    for reader in (svmlight.READER, mira.READER, csvfile.READER, textdirs.READER, vw.READER, arrays.DENSE, arrays.CSR)
}


def reader_of(source: Source):
    """The format's reader (see ``ocolearn.data.sparse_text.Reader``)."""
    reader = READERS.get(source.format)
    if reader is None:
        raise DataError(f"{source.path}: unknown format {source.format!r}; expected one of {', '.join(READERS)}")
    return reader


def _parse(source: Source, parsers, data: bytes, first_line: int) -> tuple[Block, int]:
    """The block's rows, and how many malformed lines were skipped."""
    fast, exact = parsers
    try:
        return fast(data, first_line), 0
    except DataError:
        if not source.skip_bad:
            raise
    good, skipped = [], 0
    for number, line in enumerate(bytes(data).split(b"\n"), first_line):
        try:
            good.append(exact(line, number))
        except DataError:
            skipped += 1
            if not source.labelled:  # (prediction input: the row kept, unread, so each line still gets one)
                good.append(unread_row(source, number))
    return concat(good), skipped


def unread_row(source: Source, line: int) -> Block:
    """A row that stands for the skipped line ``line`` of prediction input: every value NaN, so
    its score is NaN and ``predict`` writes an empty line for it, keeping the output aligned
    with the input's rows."""
    dense = reader_of(source).dense
    label = np.array([""]) if source.format != "svmlight" else np.full(1, np.nan)
    entries = np.arange(source.dim if dense else 1, dtype=np.int64) + _shift(source)
    values = np.full(len(entries), np.nan)
    return Block(label, np.array([0, len(entries)], np.int64), entries, values, np.array([line], np.int64))


PARSERS = 2  # blocks parsed at once, on threads (the compiled parser releases the GIL)


def _owned(block: Block, *_) -> Block:
    return Block(*(None if a is None else np.array(a) for a in block))


def _parsed(source: Source, start: Position, then=_owned):
    """``(data, first line, offset, (then(block, data, first line, offset), skipped))`` of each
    block in order, parsed ``PARSERS`` at a time ahead of the reader, ``then`` on the parsing
    thread (by default a copy of the block: the parser's arrays may be its scratch, see
    ``Reader.parsers``); memory stays a few blocks."""
    reader = reader_of(source)
    parsers = with_crosses(source, reader.parsers(source))

    def work(data, first_line, offset):
        block, skipped = _parse(source, parsers, data, first_line)
        return then(block, data, first_line, offset), skipped

    with ThreadPoolExecutor(PARSERS) as pool:
        ahead: deque = deque()
        for data, first_line, offset in reader.blocks(source, start):
            ahead.append((data, first_line, offset, pool.submit(work, data, first_line, offset)))
            if len(ahead) > PARSERS:
                data, first_line, offset, parsed = ahead.popleft()
                yield data, first_line, offset, parsed.result()
        while ahead:
            data, first_line, offset, parsed = ahead.popleft()
            yield data, first_line, offset, parsed.result()


def concat(blocks: list[Block]) -> Block:
    """The rows of several blocks, in order."""
    if not blocks:
        return Block(np.zeros(0), np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64))
    counts = np.concatenate([np.diff(b.indptr) for b in blocks])

    def extra(field, fill, dtype):  # (weights, tags: where any block has them, the others' defaults)
        parts = [getattr(b, field) for b in blocks]
        if all(p is None for p in parts):
            return None
        filled = [np.full(len(b.labels), fill, dtype) if p is None else p for b, p in zip(blocks, parts, strict=True)]
        return np.concatenate(filled)

    return Block(
        np.concatenate([b.labels for b in blocks]),
        np.r_[0, np.cumsum(counts)].astype(np.int64),
        np.concatenate([b.indices for b in blocks]),
        np.concatenate([b.values for b in blocks]),
        np.concatenate([b.lines for b in blocks]),
        extra("weights", 1.0, np.float64),
        extra("tags", "", str),
    )


def class_of(source: Source, block: Block, start: int = 0, stop: int | None = None) -> np.ndarray:
    """int32 class indices of the labels of rows ``start:stop``; a label outside the
    source's is an error naming its line (the first such row)."""
    distinct, inverse = np.unique(np.asarray(block.labels[start:stop]), return_inverse=True)
    names = label_names(distinct)  # (distinct labels may share a name: 1 and 1.0000001 are both "1")
    find = class_lookup(source.labels)
    known = {name: find(name) for name in set(names.tolist())}
    unknown = [name for name, k in known.items() if k is None]
    if unknown:
        row_names = names[inverse.reshape(-1)]
        first = int(np.argmax(np.isin(row_names, unknown)))
        name, line = row_names[first], block.lines[start:stop][first]
        where, key = reader_of(source).place(source, line), key_of(source.task_key, "labels")
        if name in ("nan", ""):
            need = "training needs labels" if key else "predict needs none"
            raise DataError(f"{where}: no label, where one of {classes_named(source.labels, key)} is needed ({need})")
        raise not_a_class(where, name, source.labels, key)
    return np.array([known[n] for n in names.tolist()], np.int32)[inverse.reshape(-1)]


def targets_of(source: Source, block: Block, start: int = 0, stop: int | None = None) -> np.ndarray:
    """The targets of rows ``start:stop``: float32 numbers for regression, class indices
    otherwise (``class_of``), zeros for unlabelled input."""
    labels = block.labels[start:stop]
    if not source.labelled:
        return np.zeros(len(labels), np.float32)
    if source.task != "regression":
        return class_of(source, block, start, stop)
    if labels.dtype.kind in "US":  # (names read as numbers by the one rule, ``_is_number``: not NumPy's)
        bad = next((i for i, v in enumerate(labels.tolist()) if not _is_number(v)), None)
        if bad is not None:
            where = reader_of(source).place(source, block.lines[start:stop][bad])
            raise DataError(f"{where}: target {shown(labels[bad])} is not a number")
    values = labels.astype(np.float64)
    bad = ~(np.abs(values) <= FLOAT32_MAX)
    if bad.any():
        first = np.argmax(bad)
        where = f"{source.path}, line {block.lines[start:stop][first]}"
        if np.isnan(values[first]):  # (an svmlight line that starts with its first feature)
            raise DataError(f"{where}: no target, where a regression task needs one (predict needs none)")
        raise DataError(
            f"{where}: target {shown(labels[first])} is not a finite number in float32 (at most {FLOAT32_MAX:.4g})"
        )
    return values.astype(np.float32)


def _shift(source: Source) -> int:
    """What to subtract from written indices: 1 for a 1-based svmlight file, else 0."""
    return 1 if reader_of(source).one_based and not source.zero_based else 0


def _width(block: Block, start: int = 0, stop: int | None = None) -> int:
    """Entries per padded row: the longest row rounded up to a multiple of 8 (few shapes, so
    few compiles, and little padding)."""
    longest = int(np.diff(block.indptr[start : None if stop is None else stop + 1]).max(initial=1))
    return 8 * -(-max(longest, 1) // 8)


class Rows(NamedTuple):
    """A block's rows made ready on its parsing thread (``_rows``), for chunks to be cut from."""

    idx: np.ndarray | None  # (n, w) int32 padded indices (None for dense rows)
    val: np.ndarray  # (n, w) float32 padded values ((n, dim) dense rows)
    counts: np.ndarray  # (n,) entries in each row
    y: np.ndarray | None  # (n,) targets; None: some label is not one (``targets_of`` raises it per chunk)
    labels: np.ndarray  # (n,) as read, and
    lines: np.ndarray  # (n,) line numbers, for errors
    ends: np.ndarray  # (n,) the offset just after each row (``Reader.after``), where a stream reads on
    bad: tuple | None  # (row, DataError) of the first entry out of range, raised by the chunk that takes it
    weights: np.ndarray | None = None  # (n,) importance weights (``Block.weights``)
    tags: np.ndarray | None = None  # (n,) tags (``Block.tags``)


def _rows(source: Source, block: Block, data, first_line: int, offset: int) -> Rows:
    """Pad a block's rows (``fill_rows``: indices shifted, hashed or checked) to the source's
    width, or to the block's longest row, and find their targets, on the parsing thread. An
    error is kept with its row and raised by the chunk that reaches that row, as if the chunk
    had been filled row by row."""
    reader, n, shift = reader_of(source), len(block.labels), _shift(source)
    width = source.dim if reader.dense else source.width or _width(block)
    idx, val = np.zeros((n, width), np.int32), np.zeros((n, width), np.float32)
    buckets = 1 << source.bits if source.bits is not None and reader.one_based else 0  # (the others hash when parsing)
    at = pad(block.indptr, block.indices, block.values, shift, buckets, source.dim, idx, val, source.drop_unseen)
    bad = None
    if at >= 0:
        row = int(np.searchsorted(block.indptr, at, side="right")) - 1
        bad = (row, entry_error(block, at, source.dim, source.path, shift, key_of(source.task_key, "dim")))
    try:
        y = targets_of(source, block)
    except DataError:
        y = None
    ends = reader.after(data, first_line, offset, block.lines)
    counts, labels = np.diff(block.indptr), np.array(block.labels)  # (the block may be the parser's scratch)
    weights, tags = (None if a is None else np.array(a) for a in (block.weights, block.tags))
    return Rows(None if reader.dense else idx, val, counts, y, labels, block.lines, ends, bad, weights, tags)


def _aligned(shape, dtype) -> np.ndarray:
    """An uninitialized array starting on a 64-byte boundary: JAX's CPU backend then reads it
    in place instead of copying it."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.empty(size + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start : start + size].view(dtype).reshape(shape)


def _joined(segments, field: str):
    """The chunk's ``field`` of ``Rows`` (weights as float32, tags), joined from its
    ``(rows, a, b)`` segments; None where the rows have none (or weights that are all 1)."""
    parts = [getattr(rows, field) for rows, _, _ in segments]
    if parts[0] is None:  # (one reader's blocks: all have the field, or none)
        return None
    joined = np.concatenate([part[a:b] for part, (_, a, b) in zip(parts, segments, strict=True)])
    if field == "weights":  # (rows that count once each: the unweighted rounds, the same program as before)
        return None if np.all(joined == 1) else joined.astype(np.float32)
    return joined


def chunks(source: Source, start: Position | None = None, chunk_rows: int = 65536):
    """``Chunk``s of ``chunk_rows`` rows from ``start`` (default: the beginning) to the end.
    The parsing threads pad each block's rows (``_rows``); a chunk copies its rows once from
    them into arrays that the learner reads in place (``_aligned``), as wide as the chunk's
    longest row needs (a multiple of 8) unless ``source.width`` is set."""
    start = start or Position()
    pending: deque = deque()  # (rows, first unused row)
    have, skipped, row, last = 0, 0, start.row, None
    reader = reader_of(source)

    def emit(n, skipped):
        nonlocal row
        segments, taken = [], 0
        while taken < n:
            rows, a = pending[0]
            b = min(len(rows.lines), a + n - taken)
            segments.append((rows, a, b))
            taken += b - a
            if b == len(rows.lines):
                pending.popleft()
            else:
                pending[0] = (rows, b)
        if reader.dense:
            width = source.dim
        else:
            width = source.width or max(
                8 * -(-max(int(rows.counts[a:b].max(initial=1)), 1) // 8) for rows, a, b in segments
            )
        idx, val = _aligned((n, width), np.int32), _aligned((n, width), np.float32)
        y = np.empty(n, np.float32 if source.task == "regression" or not source.labelled else np.int32)
        r = 0
        for rows, a, b in segments:
            if rows.bad is not None and a <= rows.bad[0] < b:
                raise rows.bad[1]
            for into, part in [(val, rows.val)] if reader.dense else [(idx, rows.idx), (val, rows.val)]:
                w = min(width, part.shape[1])  # (a block narrower than the chunk: zeros beyond)
                into[r : r + b - a, :w] = part[a:b, :w]
                into[r : r + b - a, w:] = 0
            labels = Block(rows.labels, None, None, None, rows.lines)
            y[r : r + b - a] = targets_of(source, labels, a, b) if rows.y is None else rows.y[a:b]
            r += b - a
        row += n
        X = val if reader.dense else Sparse(idx, val, source.dim)
        rows, _, b = segments[-1]
        position = Position(int(rows.ends[b - 1]), int(rows.lines[b - 1]) + 1, row)
        first_rows, first = segments[0][:2]
        weights, tags = (_joined(segments, field) for field in ("weights", "tags"))
        return Chunk(X, y, position, skipped, int(first_rows.lines[first]), weights, tags)

    for data, first_line, offset, (rows, bad) in _parsed(source, start, partial(_rows, source)):
        skipped += bad
        last = (data, first_line, offset)
        if not len(rows.lines):
            continue
        pending.append((rows, 0))
        have += len(rows.lines)
        while have >= chunk_rows:
            yield emit(chunk_rows, skipped)
            have -= chunk_rows
            skipped = 0
    if have:
        yield emit(have, skipped)
    elif skipped:  # only skipped lines since the last chunk: an empty chunk at the end reports them
        data, first_line, offset = last
        end = Position(offset + len(data), first_line + bytes(data).count(b"\n"), row)  # (not for text: never skips)
        empty = Sparse(np.zeros((0, 1), np.int32), np.zeros((0, 1), np.float32), source.dim)
        yield Chunk(empty, np.zeros(0, np.int32), end, skipped, end.line)


def prefetched(iterator, ahead=1):
    """The items of ``iterator``, made on a background thread ``ahead`` of the one in use: with
    one, the chunk being learned and the next one being made are all the chunks held (the
    parsing threads are a few blocks further ahead). An error there is raised here; a consumer
    that stops early stops the thread, which closes ``iterator`` (and its parsing threads)."""
    items: queue.SimpleQueue = queue.SimpleQueue()
    slots = threading.Semaphore(ahead - 1)  # (the producer waits on it after each item it puts)
    stop = threading.Event()
    done = object()

    def produce():
        try:
            for item in iterator:
                items.put(item)
                slots.acquire()
                if stop.is_set():
                    break
        except BaseException as e:  # handed to the consumer
            items.put(e)
        finally:
            getattr(iterator, "close", lambda: None)()
        items.put(done)

    threading.Thread(target=produce, daemon=True).start()
    try:
        while (item := items.get()) is not done:
            if isinstance(item, BaseException):
                raise item
            slots.release()
            yield item
    finally:
        stop.set()
        slots.release()


class Scan(NamedTuple):
    """What a first pass over a file found."""

    labels: Labels  # the distinct labels (see ``ocolearn.data.task``)
    dim: int  # the largest index + 1 (0-based)
    width: int  # a padded width that fits every row (a multiple of 8)
    sorted_labels: bool  # each label came in one run of rows (a file sorted by label)
    top_line: int = 0  # the line of the largest index (which makes ``dim``)


def scan(source: Source) -> Scan:
    """One pass over the file (see ``Scan``)."""
    names, top, width, runs, previous, rows, top_line = set(), -1, 1, 0, None, 0, 0
    spellings = set()  # (svmlight's labels as written: numbers, named by %g)
    spelled = source.labelled and source.format == "svmlight"

    def found(block, data, first_line, _):  # (on the parsing thread)
        written = svmlight.label_spellings(data, first_line, block) if spelled and len(block.labels) else set()
        return _owned(block), written

    for _, _, _, ((block, written), _) in _parsed(source, Position(), found):
        if not len(block.labels):
            continue
        if len(names) <= MAX_LABELS:
            names.update(label_names(block.labels).tolist())
        labels = block.labels
        if source.labelled and labels.dtype.kind in "US":  # (names; svmlight's numbers are printed by %g)
            check_labels(labels, block.lines, partial(reader_of(source).place, source))
        if source.labelled and source.format in ("svmlight", "vw") and np.isnan(labels).any():  # (NaN: no label)
            line = int(block.lines[np.flatnonzero(np.isnan(labels))[0]])
            how = "it starts with a feature" if source.format == "svmlight" else "a tag alone, or nothing, before '|'"
            raise DataError(f"{source.path}, line {line}: a line without a label ({how}); training needs labels")
        if len(spellings) <= MAX_LABELS:
            spellings |= written
        runs += int(np.count_nonzero(labels[1:] != labels[:-1])) + (previous is None or labels[0] != previous)
        previous, rows = labels[-1], rows + len(labels)
        if block.indices.size and int(block.indices.max()) > top:
            at = int(np.argmax(block.indices))
            top, top_line = (
                int(block.indices[at]),
                int(block.lines[np.searchsorted(block.indptr, at, side="right") - 1]),
            )
        width = max(width, _width(block))
    if not rows:  # (a CSV file has no comments: its header alone is the common case)
        why = "no rows after the header line" if source.format == "csv" else "every line is blank or a comment"
        raise DataError(f"{source.path}: no examples ({why}{', or skipped' if source.skip_bad else ''})")
    numeric = all(_is_number(n) for n in names)
    integral = numeric and all(float(n).is_integer() for n in names)
    more = len(names) > MAX_LABELS
    found = sorted(names, key=float if numeric else None)[:MAX_LABELS]
    shift = _shift(source)
    return Scan(
        Labels(found, numeric, integral, more, tuple(sorted(spellings))),
        top + 1 - shift,
        width,
        2 <= len(names) == runs < rows,
        top_line,
    )
