"""Feature interactions (VW's ``-q ab``, ``--interactions``) of a CSV file's columns or an
svmlight file's indices: a reading rule of the one data path, recorded in the model, so
``train``, ``test`` and ``predict`` read the same crossed rows (a VW file's namespaces are
crossed and hashed as VW's: ``ocolearn.data.vw``). svmlight: ``I,J`` crosses the features of
indices I and J (as written), hashed into the ``--bits`` buckets (``crossed_sparse``).

A CSV interaction is ``A,B`` (two feature columns by name: their product) or two letters ``ab``
(as VW names namespaces by first letter: every feature column whose name starts with ``a``
times every one starting with ``b``; within one letter each pair once, a column with itself
too, as VW's default combinations). The products are appended after the feature columns, in
the order of the interactions given, then of the columns; the pipeline's scaling then
standardizes them as any column.
"""

from __future__ import annotations

import numpy as np

from ocolearn.data import DataError, shown, shown_names
from ocolearn.data.sparse_text import Block
from ocolearn.data.vw import FNV_PRIME

OPTION = "--interactions"


def csv_pairs(interactions, names, option: str = OPTION) -> list[tuple[int, int]]:
    """The column positions ``(i, j)`` among the feature columns ``names`` that each product
    multiplies (see the module docstring); a name not among them, a letter that starts none,
    or a pair given twice is an error naming ``option``."""
    position = {name: k for k, name in enumerate(names)}
    pairs: list[tuple[int, int]] = []
    for spec in interactions:
        if "," in spec:
            left, right = (part.strip() for part in spec.split(",", 1))
            missing = next((n for n in (left, right) if n not in position), None)
            if missing is not None:
                raise DataError(
                    f"{option} {shown(spec)}: no numeric feature column {shown(missing)} (products are of numbers); "
                    f"numeric columns: {shown_names(names)}"
                )
            found = [(position[left], position[right])]
        elif len(spec) == 2:
            ks = [[k for k, name in enumerate(names) if name.startswith(letter)] for letter in spec]
            empty = next((letter for letter, k in zip(spec, ks, strict=True) if not k), None)
            if empty is not None:
                raise DataError(
                    f"{option} {spec}: no feature column's name starts with {empty!r}; columns: {shown_names(names)}"
                )
            left, right = ks
            found = [(i, j) for i in left for j in right if spec[0] != spec[1] or i <= j]
        else:
            raise DataError(
                f"{option} {shown(spec)}: give two columns A,B by name, or two first letters (ab) as VW's -q ab"
            )
        for i, j in found:
            if (i, j) in pairs or (j, i) in pairs:
                raise DataError(f"{option} {shown(spec)}: {names[i]} x {names[j]} is crossed twice")
            pairs.append((i, j))
    return pairs


def crossed(block: Block, pairs) -> Block:
    """A block of dense rows (each row its d columns in order, as the CSV reader gives them)
    with the products of the column ``pairs`` appended as columns d, d + 1, ..."""
    n = len(block.lines)
    if not pairs or not n:
        return block
    values = np.asarray(block.values).reshape(n, -1)
    i, j = np.asarray(pairs).T
    values = np.concatenate([values, values[:, i] * values[:, j]], axis=1)
    width = values.shape[1]
    return block._replace(
        indptr=np.arange(n + 1, dtype=np.int64) * width,
        indices=np.tile(np.arange(width, dtype=np.int64), n),
        values=values.reshape(-1),
    )


def svmlight_pairs(interactions, bits, option: str = OPTION) -> list[tuple[int, int]]:
    """The index pairs ``I,J`` (as written in the file) that each crossed feature multiplies: an
    svmlight file has no names, so a pair names two indices, and the crossed features are
    hashed (``--bits``), as VW's are."""
    if bits is None:
        raise DataError(f"{option}: svmlight's crossed features are hashed as VW's; give --bits too")
    pairs = []
    for spec in interactions:
        parts = [part.strip() for part in spec.split(",")]
        if len(parts) != 2 or not all(part.isascii() and part.isdigit() for part in parts):
            raise DataError(f"{option} {shown(spec)}: svmlight features have no names; give two indices I,J")
        pair = (int(parts[0]), int(parts[1]))
        if pair in pairs or pair[::-1] in pairs:
            raise DataError(f"{option} {shown(spec)}: the pair is crossed twice")
        pairs.append(pair)
    return pairs


def crossed_sparse(block: Block, pairs, bits: int, shift: int) -> Block:
    """A block of sparse rows with, for each index pair ``(i, j)`` (as written) both in a row,
    the entry ``v_i v_j`` at ``(i * 16777619 xor j) mod 2**bits`` (VW's rule for crossed
    hashes), written so that the reader's shift by ``shift`` and fold into ``2**bits`` buckets
    lands it there; appended after each row's entries, in the order of the pairs."""
    n = len(block.lines)
    if not pairs or not n:
        return block
    counts = np.diff(block.indptr)
    row = np.repeat(np.arange(n), counts)
    rows, indices, values = [row], [block.indices], [block.values]
    for i, j in pairs:
        at_i, at_j = np.flatnonzero(block.indices == i), np.flatnonzero(block.indices == j)
        both, a, b = np.intersect1d(row[at_i], row[at_j], assume_unique=True, return_indices=True)
        rows.append(both)
        indices.append(np.full(both.size, ((i * FNV_PRIME) ^ j) % (1 << bits) + shift, np.int64))
        values.append(block.values[at_i[a]] * block.values[at_j[b]])
    order = np.argsort(np.concatenate(rows), kind="stable")
    indices, values = np.concatenate(indices)[order], np.concatenate(values)[order]
    added = np.bincount(np.concatenate(rows[1:]), minlength=n)
    indptr = np.r_[0, np.cumsum(counts + added)].astype(np.int64)
    return block._replace(indptr=indptr, indices=indices, values=values)


def with_crosses(source, parsers):
    """A CSV or svmlight source's ``(fast, exact)`` parsers with each block's rows crossed by
    the source's interactions (``crossed``, ``crossed_sparse``); the parsers as they are for
    any other source (a VW file's reader crosses its namespaces itself)."""
    if source.format not in ("csv", "svmlight") or not source.interactions:
        return parsers
    if source.format == "svmlight":
        pairs, shift = svmlight_pairs(source.interactions, source.bits), 0 if source.zero_based else 1
        cross = lambda block: crossed_sparse(block, pairs, source.bits, shift)  # noqa: E731
    else:
        from ocolearn.data.csvfile import csv_columns

        if source.table is not None:  # (rows laid out by the first pass's table: its numeric columns first)
            names = list(source.table.numeric)
        else:
            _, features, header = csv_columns(source.path, source.target, source.columns, source.labelled)
            names = [header[j] for j in features]
        pairs = csv_pairs(source.interactions, names)
        cross = lambda block: crossed(block, pairs)  # noqa: E731
    return tuple((lambda parse: lambda data, first_line: cross(parse(data, first_line)))(p) for p in parsers)
