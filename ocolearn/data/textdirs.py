"""Folders of raw text (the Pegasos write-up's bag of words): one folder per label, one
document per file. ``tokens`` lowercases and splits a document into words; each feature is a
word's count in the document, the word indexed by a vocabulary or hashed like a MIRA feature.
The streamed reader's blocks are batches of documents, in an order shuffled once by the
source's ``order_seed`` (folders come sorted by label); a row's "line" is its document number.

Unlabelled input (``predict``) may also be a flat folder of documents, or one file or a tuple
of files; ``document_names`` gives the name ``predict`` writes before each document's output.
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from pathlib import Path

import numpy as np

from ocolearn.data import DataError, compiled, not_standard_input, regular_file
from ocolearn.data.sparse_text import (
    DEFAULT_BITS,
    Block,
    Reader,
    SparseData,
    _pad,
    class_indices,
    feature_hash,
    not_a_class,
)

DOCUMENTS_PER_BLOCK = 1024


_WORD = re.compile(r"\w+(?:'\w+)*")


def tokens(text: str) -> list[str]:
    """The words of ``text``, lowercased: runs of letters and digits, with inner apostrophes."""
    return _WORD.findall(text.lower())


def words_of(path: Path, data: bytes | None = None) -> Counter:
    """The word counts of a document (its bytes ``data``, read if not given): UTF-8 text (a
    byte-order mark left out), as every reader reads; a document that is not is an error naming
    it and its line (replacing its bytes would drop or change its words unseen; scikit-learn's
    vectorizers refuse it too)."""
    data = path.read_bytes() if data is None else data
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = 1 + data[: e.start].count(b"\n")
        raise DataError(
            f"{path}, line {line}: not UTF-8 text (convert it to UTF-8: iconv -f ITS_ENCODING -t utf-8)"
        ) from None
    return Counter(tokens(text))


@compiled.njit(inline="always")
def _word_byte(b):
    """Whether the ASCII byte ``b`` is a word's (``\\w``: a letter, a digit or ``_``)."""
    return 48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122 or b == 95


@compiled.njit()
def _hash_ascii(text, starts, bits):
    """The rows of the ASCII documents ``text[starts[k]:starts[k + 1]]`` as ``tokens`` and
    ``_hashed`` make them, in one pass over the bytes: each word lowercased and hashed (32-bit
    FNV-1a, modulo ``2**bits``: ``feature_hash``), a row's entries in the order of the first word
    of each index, valued by the count of its words. ``(entries per document, indices, values)``."""
    counts = np.zeros(starts.size - 1, np.int64)
    indices = np.empty(text.size // 8 + 16, np.int64)  # (grown as needed: English runs 11 bytes an entry)
    values = np.empty(indices.size, np.float64)
    out = 0
    for d in range(starts.size - 1):
        p, end, n = starts[d], starts[d + 1], 0
        words = np.empty((end - p) // 2 + 1, np.int64)  # the document's words' indices, in order
        while p < end:
            if not _word_byte(text[p]):
                p += 1
                continue
            h = 0x811C9DC5
            while True:  # \w+(?:'\w+)*
                while p < end and _word_byte(text[p]):
                    b = text[p] + 32 if 65 <= text[p] <= 90 else text[p]
                    h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
                    p += 1
                if p + 1 < end and text[p] == 39 and _word_byte(text[p + 1]):
                    h = ((h ^ 39) * 0x01000193) & 0xFFFFFFFF
                    p += 1
                else:
                    break
            words[n] = h % (1 << bits) if bits < 32 else h
            n += 1
        if out + n > indices.size:
            more_indices, more_values = np.empty(2 * (out + n), np.int64), np.empty(2 * (out + n), np.float64)
            more_indices[:out], more_values[:out] = indices[:out], values[:out]
            indices, values = more_indices, more_values
        # Each index once, at its first word (a stable sort keeps equal indices in word order), counted.
        order = np.argsort(words[:n], kind="mergesort")
        firsts = np.empty(n, np.int64)
        found = np.empty(n, np.int64)
        times = np.empty(n, np.float64)
        k = -1
        for j in range(n):
            if j == 0 or words[order[j]] != words[order[j - 1]]:
                k += 1
                firsts[k], found[k], times[k] = order[j], words[order[j]], 0.0
            times[k] += 1.0
        for g in np.argsort(firsts[: k + 1]):
            indices[out], values[out] = found[g], times[g]
            out += 1
        counts[d] = k + 1
    return counts, indices[:out].copy(), values[:out].copy()


def hashed_rows(paths, bits: int):
    """``(entries per document, indices, values)``: the documents ``paths`` as rows of hashed
    word counts (``_hashed(words_of(path), bits)``, row after row). ASCII documents are
    tokenized and hashed in compiled code (``_hash_ascii``) where it pays (``compiled.worth``:
    more text than ``compiled.SMALL`` bytes), the others (UTF-8) word by word."""
    data = [path.read_bytes() for path in paths]
    worth = compiled.worth(sum(len(d) for d in data))
    fast = [worth and d.isascii() for d in data]
    plain = [d for d, f in zip(data, fast, strict=True) if f]
    if plain:
        starts = np.cumsum([0] + [len(d) for d in plain], dtype=np.int64)
        counts, indices, values = _hash_ascii(np.frombuffer(b"".join(plain), np.uint8), starts, bits)
        if len(plain) == len(data):
            return counts, indices, values
        ends = np.cumsum(counts)[:-1]
        plain = zip(np.split(indices, ends), np.split(values, ends), strict=True)
    pieces = [
        next(plain) if f else _as_arrays(_hashed(words_of(path, d), bits))
        for path, d, f in zip(paths, data, fast, strict=True)
    ]
    return (
        np.array([len(i) for i, _ in pieces], np.int64),
        np.concatenate([i for i, _ in pieces]),
        np.concatenate([v for _, v in pieces]),
    )


def _as_arrays(row: dict[int, float]):
    return np.fromiter(row, np.int64, len(row)), np.fromiter(row.values(), np.float64, len(row))


def read_text_folders(root, *, vocabulary: dict[str, int] | None = None, bits: int | None = None, labels=None, key=""):
    """``(SparseData, vocabulary)``: every file under ``root/LABEL/`` as a bag of word counts,
    rows in sorted (label, file name) order, labels the folder names (sorted, or ``labels``, listed
    by ``key``: ``sparse_text.not_a_class``).

    Words are indexed by ``vocabulary`` (words outside it are dropped), by hashing into
    ``2**bits`` buckets when ``bits`` is given, or else by a new vocabulary of every word seen,
    sorted, which is returned (None when hashing).
    """
    root = Path(root)
    files = text_documents(root)
    counts = [words_of(f) for _, f in files]
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
        raise not_a_class(str(root / unknown[0]), unknown[0], labels, key)
    y, classes = class_indices(root, names, range(len(names)), labels, key=key)
    return SparseData(_pad(rows, dim), y, classes, np.arange(1, len(rows) + 1)), vocabulary


def _visible(path: Path, top: Path) -> bool:
    """Whether ``path`` under ``top`` is not hidden: hidden files and folders (a name starting with
    "."), as ``ls`` hides them, are not documents nor labels (.DS_Store, .ipynb_checkpoints, .git)."""
    return not any(part.startswith(".") for part in path.relative_to(top).parts)


def text_documents(root, seed=None, labelled=True) -> list[tuple[str, Path]]:
    """``(label, file)`` of every document under ``root/LABEL/`` (in subfolders of ``LABEL``
    too: the label is the folder under ``root``), sorted by (label, path under the label's folder),
    then, with a ``seed``, in an order shuffled by it (folders give their labels sorted, which
    an online learner must not see in that order).

    With ``labelled``, files beside the label folders (a README) are not documents, and a label
    folder without documents is an error (its class would be missing unseen). Without it
    (prediction input), every file under ``root`` is one, in its subfolders or not (those beside
    the folders labelled ""), sorted by path; ``root`` may also be a file or a tuple of files (in
    the order given, labelled ""). Hidden files and folders (a name starting with ".") are never
    documents. Sorting is by code point (Python's ``sorted``, as ``LC_ALL=C ls``)."""
    paths = [Path(p) for p in root] if isinstance(root, tuple) else [Path(root)]
    where = paths[0] if len(paths) == 1 else "the list of files"
    if len(paths) == 1 and paths[0].is_dir():
        folders = sorted(p for p in paths[0].iterdir() if p.is_dir() and _visible(p, paths[0]))
        # Every file under a label's folder, in its subfolders too (the label is the top folder):
        # a document left out because it sits one folder deeper would be lost silently.
        files = [
            (folder.name, f)
            for folder in folders
            for f in sorted(folder.rglob("*"))
            if f.is_file() and _visible(f, folder)
        ]
        found = {label for label, _ in files}
        empty = [folder for folder in folders if folder.name not in found]
        if labelled and files and empty:  # (its class would be missing from the model unseen)
            raise DataError(f"{empty[0]}: a label's folder without documents; add its documents, or remove it")
        loose = [("", f) for f in sorted(paths[0].iterdir()) if f.is_file() and _visible(f, paths[0])]
        if not folders or not labelled:  # (predict: a document beside the folders was dropped unseen)
            files = sorted(loose + files, key=lambda document: document[1])
    else:
        for path in paths:
            if path.is_dir():  # (its documents are named by their path in it: give it alone)
                raise DataError(f"{path}: a folder among {len(paths)} paths; give a folder alone, or document files")
            not_standard_input(path)
            regular_file(path, "document")
            if not path.is_file():
                raise DataError(f"{path}: no such file or folder")
        files = [("", path) for path in paths]
    if not files:
        raise DataError(
            f"{where}: no documents; expected one folder of text files per label, or (predict) of documents"
        )
    if labelled and not files[0][0]:
        raise DataError(
            f"{where}: documents without labels (no label folders); train and test need one folder of text "
            "files per label (predict also reads a flat folder or a list of files)"
        )
    if seed is not None:
        files = [files[i] for i in np.random.default_rng(seed).permutation(len(files))]
    return files


def document_names(root) -> list[str]:
    """What ``predict`` writes before each document's output, in reading order (that of
    ``text_documents(root, labelled=False)``): its path under the folder ``root`` (``FILE``, or
    ``LABEL/FILE`` in a label's folder), or, for files given one by one, the path
    as given. Bytes of a name that are not UTF-8 are written as ``\\xNN``; a name with a tab or
    a line break would make the output ambiguous, and is an error naming it."""
    folder = None if isinstance(root, tuple) or Path(root).is_file() else Path(root)
    names = []
    for _, f in text_documents(root, labelled=False):
        name = str(f) if folder is None else f.relative_to(folder).as_posix()
        if any(c in name for c in "\t\n\r"):
            raise DataError(
                f"{str(f)!r}: a file name with a tab or a line break cannot name a line of the output; rename it"
            )
        names.append(name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
    return names


# Blocks of documents already read (``text_rows``): a folder is read and tokenized once for all the
# passes over it, up to ``KEPT_BYTES`` of rows (beyond, blocks are read again each pass); those of
# one folder at a time (``text_blocks``), with its list of documents and the names it was made from.
KEPT_BYTES = 256 << 20
_kept: dict = {}
_kept_for = None  # (folder, order seed, labelled) of the blocks kept
_listed: tuple = (None, None)  # (the names under _kept_for's folder, its text_documents)
_kept_lock = threading.Lock()


def text_blocks(root, seed=None, start=0, labelled=True):
    """Blocks of documents for the streaming reader: ``(documents, first document number,
    index of the first)``, from document ``start`` of ``text_documents(root, seed, labelled)``.
    Reading another folder (or order) than the last drops the last one's kept blocks (``text_rows``).
    The folder is listed again only when a name under it has come, gone or changed kind since the
    last listing (``_names``: the same names list the same documents)."""
    global _kept_for, _listed
    if _kept_for != (root, seed, labelled):
        forget()
        _kept_for = (root, seed, labelled)
    names = _names(root) if isinstance(root, str | Path) and Path(root).is_dir() else None
    if names is None or names != _listed[0]:
        _listed = (names, text_documents(root, seed, labelled))
    files = _listed[1]
    for a in range(start, len(files), DOCUMENTS_PER_BLOCK):
        yield files[a : a + DOCUMENTS_PER_BLOCK], a + 1, a


def _names(folder, top=True) -> list:
    """What ``text_documents`` lists a folder from: each name under it, sorted, whether it is a
    folder or a file, and the names under each folder (under the label folders' links too, as
    ``rglob`` walks them from the top, not those deeper)."""
    out = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda entry: entry.name):
            out.append((entry.name, entry.is_dir(), entry.is_file()))
            if out[-1][1] and (top or not entry.is_symlink()):
                out.append(_names(entry.path, False))
    return out


def text_rows(documents, first: int, bits: int) -> Block:
    """A block of documents as rows of hashed word counts (``hashed_rows``), labelled by their
    folders; a row's "line" is the document's number in the reading order. A block is kept
    (``KEPT_BYTES``) under its documents' paths, sizes and modification times: a pass after the
    first reads it from memory, and a document changed since is read again."""
    key = (bits, first, tuple((str(f), s.st_size, s.st_mtime_ns) for _, f in documents for s in [f.stat()]))
    block = _kept.get(key)
    if block is not None:
        return block
    counts, indices, values = hashed_rows([f for _, f in documents], bits)
    block = Block(
        np.asarray([label for label, _ in documents], str),
        np.r_[0, np.cumsum(counts)].astype(np.int64),
        indices,
        values,
        np.arange(first, first + len(documents), dtype=np.int64),
    )
    for array in block[:5]:
        array.flags.writeable = False  # (shared by the passes)
    with _kept_lock:
        if sum(kept_bytes(b) for b in _kept.values()) + kept_bytes(block) <= KEPT_BYTES:
            _kept[key] = block
    return block


def kept_bytes(block: Block) -> int:
    return sum(a.nbytes for a in block[:5])  # (no weights nor tags)


def forget() -> None:
    """Drop the blocks of documents kept in memory (``text_rows``) and the folder's listing."""
    global _listed
    _kept.clear()
    _listed = (None, None)


def _hashed(counts: Counter, bits: int) -> dict[int, float]:
    row: dict[int, float] = {}
    for word, n in counts.items():
        index = feature_hash(word, bits)
        row[index] = row.get(index, 0.0) + n
    return row


def document_at(source, number: int) -> str:
    """The path of the source's document ``number`` (a row's "line"), as error messages name a
    document: a number counts documents in an order the user does not see (shuffled)."""
    return str(text_documents(source.path, source.order_seed, source.labelled)[number - 1][1])


READER = Reader(
    "text",
    lambda source, start: text_blocks(source.path, source.order_seed, start.offset, source.labelled),
    lambda source: (lambda d, f: text_rows(d, f, source.bits or DEFAULT_BITS),) * 2,
    after=lambda data, first_line, offset, lines: lines,
    place=document_at,
)
