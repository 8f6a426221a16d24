"""Vowpal Wabbit's text format, read as VW reads it::

    label [importance] ['tag]|namespace[:scale] feature[:value] ... |namespace ...

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
a line without ``|``) is an error naming the file and line. ``vw_lines`` is the exact parser,
line by line; ``vw_block`` the compiled one (numba), which gives the same rows and leaves a
block it does not take (an error, a name that is not ASCII, a number beyond the exact fast
path of ``svmlight._number``) to ``vw_lines``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ocolearn.data import DataError, compiled, shown
from ocolearn.data.sparse_text import DEFAULT_BITS, FLOAT32_MAX, Block, Reader, _decode, _value, byte_blocks
from ocolearn.data.svmlight import _number

CONSTANT = 11650396  # VW's constant feature's hash (constant.h)
FNV_PRIME = 16777619  # VW's interactions multiply the first feature's hash by it (interactions_predict.h)
MASK32 = 0xFFFFFFFF


def murmurhash3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3's x86 32-bit hash of ``data`` with ``seed``, unsigned (VW's ``uniform_hash``)."""
    return int(_murmur(np.frombuffer(data, np.uint8), 0, len(data), seed & MASK32))


@lru_cache(maxsize=1 << 16)
def hashstring(name: str, seed: int) -> int:
    """VW's hash of a feature or namespace name (``hash.h``'s ``hashstring``): a name of decimal
    digits alone is its number plus ``seed`` (mod 2^32), any other name MurmurHash3 of its UTF-8
    bytes with ``seed``."""
    data = name.encode()
    return int(_hashstring(np.frombuffer(data, np.uint8), 0, len(data), seed & MASK32))


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
        entries = sorted(row.items())  # (by index: the compiled parser's order)
        indices += [index for index, _ in entries]
        values += [value for _, value in entries]
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


# --- the compiled parser: the same rows as ``vw_lines``, or a status sending the block to it -----


@compiled.njit(inline="always")
def _blank(c):
    return c == 32 or c == 9 or c == 13


@compiled.njit(inline="always")
def _murmur(buf, a, b, seed):
    """``murmurhash3_32(bytes(buf[a:b]), seed)``."""
    h = np.int64(seed) & MASK32
    n = a + (b - a) // 4 * 4
    for i in range(a, n, 4):
        k = np.int64(buf[i]) | (np.int64(buf[i + 1]) << 8) | (np.int64(buf[i + 2]) << 16) | (np.int64(buf[i + 3]) << 24)
        k = (k * 0xCC9E2D51) & MASK32
        k = ((k << 15) | (k >> 17)) & MASK32
        h ^= (k * 0x1B873593) & MASK32
        h = ((h << 13) | (h >> 19)) & MASK32
        h = (h * 5 + 0xE6546B64) & MASK32
    if b > n:
        k = np.int64(0)
        for i in range(b - 1, n - 1, -1):
            k = (k << 8) | np.int64(buf[i])
        k = (k * 0xCC9E2D51) & MASK32
        k = ((k << 15) | (k >> 17)) & MASK32
        h ^= (k * 0x1B873593) & MASK32
    h ^= b - a
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK32
    return h ^ (h >> 16)


@compiled.njit(inline="always")
def _hashstring(buf, a, b, seed):
    """``hashstring(bytes(buf[a:b]).decode(), seed)``."""
    value = np.int64(0)
    for i in range(a, b):
        d = np.int64(buf[i]) - 48
        if d < 0 or d > 9:
            return _murmur(buf, a, b, seed)
        value = (value * 10 + d) & MASK32
    return (value + seed) & MASK32


@compiled.njit(inline="always")
def _fast_value(buf, a, b, pow10):
    """The number ``buf[a:b]`` (the whole token) in float32's range, and whether it is one the
    fast path reads (else the exact parser decides)."""
    value, i, ok, hard = _number(buf, a, pow10)
    return value, ok and not hard and i == b and abs(value) <= FLOAT32_MAX


@compiled.njit(inline="always")
def _named(buf, p, end, pow10):
    """The ``name[:value]`` at ``p`` (a namespace with its scale, or a feature with its value):
    ``(end of the name, end of the token, the value (1 without one), whether the fast path reads
    it)``; the name ends at a blank, a bar or a colon, the token at a blank or a bar."""
    q = p
    while q < end and not _blank(buf[q]) and buf[q] != 124 and buf[q] != 58:
        q += 1
    if q == end or buf[q] != 58:
        return q, q, 1.0, True
    stop = q + 1
    while stop < end and not _blank(buf[stop]) and buf[stop] != 124:
        stop += 1
    value, ok = _fast_value(buf, q + 1, stop, pow10)
    return q, stop, value, ok


@compiled.njit()
def _parse(buf, mask, constant, first, second, pow10, out, scratch):
    """The rows of ``buf`` into ``out`` (labels, weights, tag starts and ends, line numbers,
    indptr, indices, values): ``(rows, status)``, status 0, or 1 for a line the fast path leaves
    to the exact parser (an error, a number beyond its fast path, a byte other than ASCII, a
    control character Python's ``split`` takes for a blank), 2 for more entries than ``out``
    holds."""
    labels, weights, tag_a, tag_b, lines, indptr, indices, values = out
    letters, hashes, fvalues = scratch
    size, i, line, n, nnz = buf.size, 0, 0, 0, 0
    starts, stops = np.zeros(3, np.int64), np.zeros(3, np.int64)
    for j in range(size):
        c = buf[j]
        if c >= 128 or c == 11 or c == 12 or 28 <= c <= 31:
            return 0, 1
    while i < size:
        end = i
        while end < size and buf[end] != 10:
            end += 1
        a = i
        while a < end and _blank(buf[a]):
            a += 1
        if a == end:  # a blank line
            i, line = end + 1, line + 1
            continue
        bar = a
        while bar < end and buf[bar] != 124:
            bar += 1
        if bar == end:
            return 0, 1
        # The label part: up to 3 tokens, the last one a tag if it starts with ' or touches the bar.
        k, p = 0, a
        while p < bar:
            while p < bar and _blank(buf[p]):
                p += 1
            if p == bar:
                break
            if k == 3:
                return 0, 1
            starts[k] = p
            while p < bar and not _blank(buf[p]):
                p += 1
            stops[k] = p
            k += 1
        tag_a[n], tag_b[n] = -1, -1
        if k and (buf[starts[k - 1]] == 39 or not _blank(buf[bar - 1])):
            k -= 1
            tag_a[n], tag_b[n] = starts[k] + (buf[starts[k]] == 39), stops[k]
        if k > 2:
            return 0, 1
        labels[n], weights[n] = np.nan, 1.0
        if k:
            labels[n], ok = _fast_value(buf, starts[0], stops[0], pow10)
            if not ok:
                return 0, 1
        if k == 2:
            weights[n], ok = _fast_value(buf, starts[1], stops[1], pow10)
            if not ok or not weights[n] >= 0:
                return 0, 1
        # The namespaces and their features.
        row, features, p = nnz, 0, bar
        while p < end:  # (at a bar)
            p += 1
            letter, seed, scale = np.uint8(32), np.int64(0), 1.0
            if p < end and not _blank(buf[p]) and buf[p] != 124:
                q, stop, scale, ok = _named(buf, p, end, pow10)
                if q == p or not ok:
                    return 0, 1  # (a scale without a name, or one the fast path does not read)
                letter, seed = buf[p], _hashstring(buf, p, q, 0)
                p = stop
            while True:
                while p < end and _blank(buf[p]):
                    p += 1
                if p >= end or buf[p] == 124:
                    break
                q, stop, value, ok = _named(buf, p, end, pow10)
                if q == p or not ok:
                    return 0, 1  # (no name, or a value the fast path does not read)
                value = scale * value
                if value != 0:
                    if nnz >= indices.size or features >= hashes.size:
                        return 0, 2
                    h = _hashstring(buf, p, q, seed)
                    letters[features], hashes[features], fvalues[features] = letter, h, value
                    features += 1
                    indices[nnz], values[nnz] = h & mask, value
                    nnz += 1
                p = stop
                if p < end and buf[p] == 124:
                    break
        for pair in range(first.size):
            for f in range(features):
                if letters[f] != first[pair]:
                    continue
                for g in range(f if first[pair] == second[pair] else 0, features):
                    if letters[g] != second[pair]:
                        continue
                    if nnz >= indices.size:
                        return 0, 2
                    indices[nnz] = ((hashes[f] * FNV_PRIME) ^ hashes[g]) & mask
                    values[nnz] = fvalues[f] * fvalues[g]
                    nnz += 1
        if constant >= 0:
            if nnz >= indices.size:
                return 0, 2
            indices[nnz], values[nnz] = constant, 1.0
            nnz += 1
        # By index, an index's values summed in the order they came (as the exact parser's dict).
        order = np.argsort(indices[row:nnz], kind="mergesort")
        sorted_indices, sorted_values = indices[row:nnz][order], values[row:nnz][order]
        w = row - 1
        for e in range(sorted_indices.size):
            if w >= row and indices[w] == sorted_indices[e]:
                values[w] += sorted_values[e]
            else:
                w += 1
                indices[w], values[w] = sorted_indices[e], sorted_values[e]
        nnz = w + 1
        lines[n] = line
        n += 1
        indptr[n] = nnz
        i, line = end + 1, line + 1
    return n, 0


POW10 = 10.0 ** np.arange(23)


def vw_block(data, first_line: int, path, bits: int, interactions=(), constant=True) -> Block:
    """``vw_lines`` of a block of whole lines, by the compiled parser (``_parse``); a block it
    leaves to the exact parser (an error, say) is ``vw_lines``'s, as is one too small to start numba
    for (``compiled.worth``)."""
    if not compiled.worth(len(data)):
        return vw_lines(data, first_line, path, bits, interactions, constant)
    buf = np.frombuffer(data, np.uint8)
    mask = (1 << bits) - 1
    first = np.array([ord(pair[0]) for pair in interactions], np.uint8)
    second = np.array([ord(pair[1]) for pair in interactions], np.uint8)
    rows, entries = buf.size // 2 + 2, buf.size // 2 + 2
    entries += rows if constant else 0
    while True:
        out = (
            np.empty(rows),
            np.empty(rows),
            np.empty(rows, np.int64),
            np.empty(rows, np.int64),
            np.empty(rows, np.int64),
            np.zeros(rows + 1, np.int64),
            np.empty(entries, np.int64),
            np.empty(entries),
        )
        scratch = (
            np.empty(buf.size // 2 + 2, np.uint8),
            np.empty(buf.size // 2 + 2, np.int64),
            np.empty(buf.size // 2 + 2),
        )
        n, status = _parse(buf, mask, CONSTANT & mask if constant else -1, first, second, POW10, out, scratch)
        if status != 2:
            break
        entries *= 4  # (interactions: more entries than bytes)
    if status:
        return vw_lines(data, first_line, path, bits, interactions, constant)
    labels, weights, tag_a, tag_b, lines, indptr, indices, values = out
    tags = [
        bytes(buf[a:b]).decode() if a >= 0 else "" for a, b in zip(tag_a[:n].tolist(), tag_b[:n].tolist(), strict=True)
    ]
    nnz = indptr[n]
    return Block(
        labels[:n].copy(),
        indptr[: n + 1].copy(),
        indices[:nnz].copy(),
        values[:nnz].copy(),
        lines[:n] + first_line,
        weights[:n].copy(),
        np.asarray(tags, str),
    )


def _parsers(source):
    options = (source.path, source.bits or DEFAULT_BITS, source.interactions, source.constant)
    return (lambda d, f: vw_block(d, f, *options)), (lambda d, f: vw_lines(d, f, *options))


READER = Reader("vw", byte_blocks, _parsers)
