"""Folders of raw text (the Pegasos write-up's bag of words): one folder per label, one
document per file. ``tokens`` lowercases and splits a document into words; each feature is a
word's count in the document, the word indexed by a vocabulary or hashed like a MIRA feature.
The streamed reader's blocks are batches of documents, in an order shuffled once by the
source's ``order_seed`` (folders come sorted by label); a row's "line" is its document number.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np

from ocolearn.data import DataError
from ocolearn.data.sparse_text import (
    DEFAULT_BITS,
    Block,
    Reader,
    SparseData,
    _pad,
    class_indices,
    feature_hash,
)

DOCUMENTS_PER_BLOCK = 1024


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


READER = Reader(
    "text",
    lambda source, start: text_blocks(source.path, source.order_seed, start.offset),
    lambda source: (lambda d, f: text_rows(d, f, source.bits or DEFAULT_BITS),) * 2,
    after=lambda data, first_line, offset, lines: lines,
    unit="document",
)
