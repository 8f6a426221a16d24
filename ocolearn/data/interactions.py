"""Feature interactions (VW's ``-q ab``, ``--interactions``) of a CSV file's columns: a reading
rule of the one data path, recorded in the model, so ``train``, ``test`` and ``predict`` read the
same crossed rows (a VW file's are hashed as VW's: ``ocolearn.data.vw``).

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
                    f"{option} {shown(spec)}: no feature column {shown(missing)}; columns: {shown_names(names)}"
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


def with_crosses(source, parsers):
    """A CSV source's ``(fast, exact)`` parsers with each block's rows crossed by the source's
    interactions (``crossed``); the parsers as they are for any other source."""
    if source.format != "csv" or not source.interactions:
        return parsers
    from ocolearn.data.csvfile import csv_columns

    _, features, header = csv_columns(source.path, source.target, source.columns, source.labelled)
    pairs = csv_pairs(source.interactions, [header[j] for j in features])
    return tuple((lambda parse: lambda data, first_line: crossed(parse(data, first_line), pairs))(p) for p in parsers)
