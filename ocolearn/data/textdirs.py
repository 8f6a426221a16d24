"""Folders of raw text (the Pegasos write-up's bag of words): one folder per label, one
document per file. ``tokens`` lowercases and splits a document into words; each feature is a
word's count in the document, the word indexed by a vocabulary or hashed like a MIRA feature.
The streamed reader's blocks are batches of documents, in an order shuffled once by the
source's ``order_seed`` (folders come sorted by label); a row's "line" is its document number.

Unlabelled input (``predict``) may also be a flat folder of documents, or one file or a tuple
of files; ``document_names`` gives the name ``predict`` writes before each document's output.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np

from ocolearn.data import DataError, not_standard_input, regular_file
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


def words_of(path: Path) -> Counter:
    """The word counts of a document: UTF-8 text (a byte-order mark left out), as every reader
    reads; a document that is not is an error naming it and its line (replacing its bytes
    would drop or change its words unseen; scikit-learn's vectorizers refuse it too)."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = 1 + data[: e.start].count(b"\n")
        raise DataError(
            f"{path}, line {line}: not UTF-8 text (convert it to UTF-8: iconv -f ITS_ENCODING -t utf-8)"
        ) from None
    return Counter(tokens(text))


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


def text_blocks(root, seed=None, start=0, labelled=True):
    """Blocks of documents for the streaming reader: ``(documents, first document number,
    index of the first)``, from document ``start`` of ``text_documents(root, seed, labelled)``."""
    files = text_documents(root, seed, labelled)
    for a in range(start, len(files), DOCUMENTS_PER_BLOCK):
        yield files[a : a + DOCUMENTS_PER_BLOCK], a + 1, a


def text_rows(documents, first: int, bits: int) -> Block:
    """A block of documents as rows of hashed word counts, labelled by their folders; a
    row's "line" is the document's number in the reading order."""
    rows = [_hashed(words_of(f), bits) for _, f in documents]
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
