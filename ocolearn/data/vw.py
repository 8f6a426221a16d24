"""Vowpal Wabbit's text format, read as VW reads it::

    label [importance [initial]] ['tag]|namespace[:scale] feature[:value] ... |namespace ...

- **The label part** (before the first ``|``): a number (regression, binary -1/1, or a class
  1..k of ``--oaa``), then an importance weight (a number >= 0; default 1), which is the row's
  sample weight in training. No label: an unlabelled row (predicted, not learned). A third number,
  VW's initial prediction, is refused (not supported). The tag is the last token when it starts
  with ``'`` (the quote left out) or touches the ``|`` (``1 2 'row7|a x``, ``1 row7|a x``): VW's
  rule. ``predict`` writes ``prediction tag`` for a row with a tag, as VW's ``-p`` does.
- **Namespaces**: ``|name`` right after the bar names one (its hash seeds its features'), with
  ``:scale`` multiplying its values; ``| `` with a space is the default namespace (seed 0).
  Interactions (``-q ab``) name namespaces by their first letter, as VW's do.
- **Features**: ``name`` (value 1) or ``name:value``; a value of 0 is left out, as VW does; a
  name given twice in a line adds up, as VW's weights make it.
- **Hashing**, VW's ``--hash strings`` (its default), so that indices equal VW's with ``-b
  bits``: a namespace's seed is ``hashstring(name, 0)``; a feature's index is
  ``hashstring(name, seed) mod 2**bits``, where ``hashstring`` of a name of decimal digits
  alone is its number plus the seed, and otherwise MurmurHash3 (x86, 32 bits) of its UTF-8
  bytes with the seed. Each row also holds VW's constant feature, index ``11650396 mod
  2**bits`` (``--no-intercept`` leaves it out, as VW's ``--noconstant``). An interaction of
  namespaces a and b adds, for each feature i of a and j of b (i <= j within one namespace,
  VW's default combinations), index ``(h_i * 16777619) xor h_j mod 2**bits`` with value
  ``v_i v_j``.

A malformed line (a label, importance or value that is not a number, a negative importance,
a line without ``|``) is an error naming the file and line.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ocolearn.data import DataError, shown
from ocolearn.data.sparse_text import DEFAULT_BITS, Block, Reader, _decode, _value, byte_blocks

CONSTANT = 11650396  # VW's constant feature's hash (constant.h)
FNV_PRIME = 16777619  # VW's interactions multiply the first feature's hash by it (interactions_predict.h)
MASK32 = 0xFFFFFFFF


def murmurhash3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3's x86 32-bit hash of ``data`` with ``seed``, unsigned (VW's ``uniform_hash``)."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & MASK32
    n = len(data) // 4 * 4
    for i in range(0, n, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * c1) & MASK32
        k = ((k << 15) | (k >> 17)) & MASK32
        h ^= (k * c2) & MASK32
        h = ((h << 13) | (h >> 19)) & MASK32
        h = (h * 5 + 0xE6546B64) & MASK32
    tail = data[n:]
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * c1) & MASK32
        k = ((k << 15) | (k >> 17)) & MASK32
        h ^= (k * c2) & MASK32
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK32
    return h ^ (h >> 16)


@lru_cache(maxsize=1 << 16)
def hashstring(name: str, seed: int) -> int:
    """VW's hash of a feature or namespace name (``hash.h``'s ``hashstring``): a name of decimal
    digits alone is its number plus ``seed`` (mod 2^32), any other name MurmurHash3 of its UTF-8
    bytes with ``seed``."""
    if name.isascii() and name.isdigit():
        return (int(name) + seed) & MASK32
    return murmurhash3_32(name.encode(), seed)


def check_interactions(pairs, option: str = "--interactions") -> tuple[str, ...]:
    """``pairs`` of namespaces (``ab``: namespaces whose names start with a and b), checked: two
    characters each, none repeated (``ab`` and ``ba`` cross the same features); errors name ``option``."""
    seen: dict[frozenset, str] = {}
    for pair in pairs:
        if len(pair) != 2 or not pair.isprintable() or " " in pair:
            raise DataError(f"{option} {shown(pair)}: an interaction is two namespaces' first letters, as VW's -q ab")
        if frozenset(pair) in seen:
            raise DataError(f"{option} {pair}: the same features as {seen[frozenset(pair)]} (give each pair once)")
        seen[frozenset(pair)] = pair
    return tuple(pairs)


def label_part(text: str, where: str) -> tuple[float, float, str]:
    """``(label, importance, tag)`` of a line's text before its first ``|`` (label NaN: none)."""
    tokens = text.split()
    tag = ""
    if tokens and (tokens[-1].startswith("'") or not text[-1:].isspace()):
        tag = tokens.pop().removeprefix("'")
    if len(tokens) > 2:
        raise DataError(
            f"{where}: {len(tokens)} fields before the first '|', where VW's simple label is label [importance] "
            "['tag] (an initial prediction, a third number, is not supported)"
        )
    label = _value(tokens[0], f"{where}, label") if tokens else np.nan
    importance = _value(tokens[1], f"{where}, importance") if len(tokens) > 1 else 1.0
    if not importance >= 0:
        raise DataError(f"{where}, importance: {shown(tokens[1])} is negative; an importance weight is >= 0")
    return label, importance, tag


def vw_lines(data, first_line: int, path, bits: int, interactions=(), constant=True) -> Block:
    """The rows of VW-format text (see the module docstring): labels (NaN: none), hashed features
    into ``2**bits`` buckets with VW's constant (``constant``) and the ``interactions``, each row's
    importance weight and tag; or the error naming the line."""
    text, mask = _decode(data, first_line, path), (1 << bits) - 1
    labels, indptr, indices, values, numbers, weights, tags = [], [0], [], [], [], [], []
    for number, line in enumerate(text.split("\n"), first_line):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        head, bar, rest = line.partition("|")
        if not bar:
            raise DataError(f"{where}: no '|'; a VW line is label [importance] ['tag]|namespace feature[:value] ...")
        label, importance, tag = label_part(head, where)
        spaces: dict[str, list] = {}  # first letter -> [(hash, value)], for interactions
        row: dict[int, float] = {}
        for part in rest.split("|"):
            name, *features = part.split() if part[:1] and not part[:1].isspace() else ["", *part.split()]
            name, sep, scale = name.partition(":")
            if sep and not name:
                raise DataError(f"{where}: namespace {shown(part.split()[0])} has a scale but no name")
            factor = _value(scale, f"{where}, namespace {shown(name)}'s scale") if sep else 1.0
            seed = hashstring(name, 0) if name else 0
            found = spaces.setdefault(name[:1] or " ", [])
            for token in features:
                feature, sep, value = token.partition(":")
                if not feature:
                    raise DataError(f"{where}: {shown(token)} is not of the form feature or feature:value")
                v = factor * (_value(value, f"{where}, feature {shown(feature)}") if sep else 1.0)
                if v == 0:
                    continue
                h = hashstring(feature, seed)
                found.append((h, v))
                row[h & mask] = row.get(h & mask, 0.0) + v
        for a, b in interactions:
            left, right = spaces.get(a, ()), spaces.get(b, ())
            for i, (h, v) in enumerate(left):
                for h2, v2 in right[i:] if a == b else right:
                    index = ((h * FNV_PRIME) ^ h2) & mask
                    row[index] = row.get(index, 0.0) + v * v2
        if constant:
            row[CONSTANT & mask] = row.get(CONSTANT & mask, 0.0) + 1.0
        labels.append(label)
        weights.append(importance)
        tags.append(tag)
        numbers.append(number)
        indices += list(row)
        values += list(row.values())
        indptr.append(len(indices))
    return Block(
        np.asarray(labels, np.float64),
        np.asarray(indptr, np.int64),
        np.asarray(indices, np.int64),
        np.asarray(values, np.float64),
        np.asarray(numbers, np.int64),
        np.asarray(weights, np.float64),
        np.asarray(tags, str),
    )


def _parsers(source):
    parse = lambda d, f: vw_lines(  # noqa: E731
        d, f, source.path, source.bits or DEFAULT_BITS, source.interactions, source.constant
    )
    return parse, parse


READER = Reader("vw", byte_blocks, _parsers)
