"""The compiled fast path of the CSV reader: a block of lines of plain numbers parsed in one pass.

``numeric_block(data, first_line, roles, width)`` reads a block of whole CSV lines (the header,
line 1, skipped) by a numba loop over its bytes, off the GIL: each row's feature cells as float64
(``roles``: each column's feature position, ``TARGET`` or ``UNUSED``) and the target cell as a
byte span. It reads a block only where the CSV reader of ``ocolearn.data.csvfile`` reads the same
rows, and answers None for any block holding something else: a quote but around a whole cell
(``"setosa"``, as R's ``write.csv`` writes) or header field, a byte outside printable ASCII (but a
tab, and a carriage return ending a line), an empty cell, a ragged row, a feature cell that is not
a plain decimal number (``[+-]digits[.digits][(e|E)[+-]digits]``, blanks around it), a number not
finite in float32, a missing-value marker as the target; that block goes to the Python path,
which reads it by its own rules or names the file, line and column of the error.

Numbers are parsed to the float64 that Python's ``float()`` gives (correctly rounded): up to 19
significant digits, by Clinger's fast path (a mantissa below 2^53 and a decimal exponent within
+-22: one exact IEEE operation) or else by the Eisel-Lemire algorithm (a 128-bit product with a
truncated power of five: Lemire, "Number parsing at a gigabyte per second", 2021, as the fast_float
library, Go's strconv and Rust's standard library parse), which is exact unless the product lies
too near a halfway point; those numbers, subnormal results, more than 19 significant digits and
exponents beyond the table are converted by ``float()`` itself (a compiled parser of our own,
checked bit for bit against ``float()``, rather than a new dependency whose grammar and errors
differ from the Python path's: pyarrow, polars).
"""

from __future__ import annotations

import numpy as np

from ocolearn.data import MISSING, compiled
from ocolearn.data.sparse_text import FLOAT32_MAX, Block

TARGET, UNUSED = -1, -2  # ``roles`` of the target column and of a column neither target nor feature
LOW_Q, HIGH_Q = -342, 308  # decimal exponents of the table of powers of five


def _powers_of_five() -> np.ndarray:
    """``(high, low)`` 64-bit words of 5^q normalized to 128 bits, q in LOW_Q..HIGH_Q: truncated
    for q >= 0, rounded up for q < 0 (fast_float's table, generated here by its rule)."""
    table = []
    for q in range(LOW_Q, HIGH_Q + 1):
        if q < 0:
            power5 = 5**-q
            z = power5.bit_length() if power5 & (power5 - 1) else power5.bit_length() - 1  # (1 << z) >= power5
            z = max(z, 0)
            if q >= -27:
                c = (1 << (z + 127)) // power5 + 1
            else:
                c = (1 << (2 * z + 128)) // power5 + 1
                c >>= max(0, c.bit_length() - 128)
        else:
            c = 5**q
            c = c << (128 - c.bit_length()) if c.bit_length() < 128 else c >> (c.bit_length() - 128)
        table.append((c >> 64, c & ((1 << 64) - 1)))
    return np.array(table, np.uint64).reshape(-1)


POW5 = _powers_of_five()
POW10 = 10.0 ** np.arange(23)
_M32 = np.uint64(0xFFFFFFFF)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_U0, _U1, _U32 = np.uint64(0), np.uint64(1), np.uint64(32)


@compiled.njit(inline="always")
def _product(a, b):
    """The 128-bit product of two uint64 as ``(high, low)``."""
    a_lo, a_hi, b_lo, b_hi = a & _M32, a >> _U32, b & _M32, b >> _U32
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (p0 >> _U32) + (p1 & _M32) + (p2 & _M32)
    return p3 + (p1 >> _U32) + (p2 >> _U32) + (mid >> _U32), (p0 & _M32) | (mid << _U32)


@compiled.njit()
def _eisel_lemire(w, q, pow5):
    """The bits of the float64 nearest ``w * 10^q`` (``w`` > 0, up to 19 digits), or 0 where the
    algorithm cannot decide (then ``float()`` does)."""
    if q < LOW_Q or q > HIGH_Q:
        return _U0
    lz = 0
    for step in (32, 16, 8, 4, 2, 1):
        if w < (_U1 << np.uint64(64 - step)):
            w <<= np.uint64(step)
            lz += step
    index = 2 * (q - LOW_Q)
    high, low = _product(w, pow5[index])
    if high & np.uint64(0x1FF) == np.uint64(0x1FF):  # (the low bits may carry: refine by the next word)
        high2, _ = _product(w, pow5[index + 1])
        low += high2
        if high2 > low:
            high += _U1
    if low <= _U1 or low == _ALL:  # (near a halfway point: left to float())
        return _U0
    upper = high >> np.uint64(63)
    mantissa = high >> (upper + np.uint64(9))
    power2 = (((152170 + 65536) * q) >> 16) + 63 + np.int64(upper) - lz + 1023
    if power2 <= 0:  # (subnormal)
        return _U0
    mantissa += mantissa & _U1
    mantissa >>= _U1
    if mantissa >= (np.uint64(2) << np.uint64(52)):
        mantissa = _U1 << np.uint64(52)
        power2 += 1
    mantissa &= ~(_U1 << np.uint64(52))
    if power2 >= 0x7FF:
        return _U0
    return (np.uint64(power2) << np.uint64(52)) | mantissa


@compiled.njit(inline="always")
def _digits(buf, i, w, significant):
    """Read decimal digits from ``buf[i]`` into the mantissa ``w`` (its ``significant`` digits
    counted from the first nonzero one): ``(next position, w, significant, digits read)``."""
    start = i
    while i < buf.size and 48 <= buf[i] <= 57:
        if significant or buf[i] != 48:
            significant += 1
            w = w * np.uint64(10) + np.uint64(buf[i] - 48)
        i += 1
    return i, w, significant, i - start


@compiled.njit(inline="always")
def _decimal(buf, i):
    """Read ``[+-]digits[.digits][(e|E)[+-]digits]`` (Python's ``float()`` spelling of a finite
    number; digits on one side of the point at least) from ``buf[i]``: ``(next position, ok,
    negative, mantissa, its significant digits, decimal exponent)``, the number ``+-mantissa *
    10^exponent`` (the mantissa wraps past 19 digits: ``significant`` tells)."""
    size, negative = buf.size, False
    if i < size and (buf[i] == 45 or buf[i] == 43):
        negative = buf[i] == 45
        i += 1
    i, w, significant, digits = _digits(buf, i, np.uint64(0), 0)
    frac = 0
    if i < size and buf[i] == 46:
        i, w, significant, frac = _digits(buf, i + 1, w, significant)
    exponent = 0
    if i < size and (buf[i] == 101 or buf[i] == 69) and digits + frac:
        i += 1
        exp_negative = i < size and buf[i] == 45
        if i < size and (buf[i] == 45 or buf[i] == 43):
            i += 1
        start = i
        while i < size and 48 <= buf[i] <= 57:
            exponent = min(exponent * 10 + np.int64(buf[i] - 48), 100000)
            i += 1
        if i == start:
            return i, False, negative, w, significant, 0
        exponent = -exponent if exp_negative else exponent
    return i, digits + frac > 0, negative, w, significant, exponent - frac


@compiled.njit(inline="always")
def _blank(c):
    return c == 32 or c == 9


@compiled.njit()
def _after_header(buf):
    """The position after the first line of ``buf`` if each of its fields is a one-line CSV field
    (no quote, or quoted whole without a quote inside), else -1."""
    i, size, first, inside = 0, buf.size, True, False
    while i < size and buf[i] != 10:
        c = buf[i]
        if c == 127 or (c < 32 and c != 9 and not (c == 13 and (i + 1 == size or buf[i + 1] == 10))):
            return -1
        if c == 34:
            if inside:  # (the closing quote: the field ends)
                after = buf[i + 1] if i + 1 < size else 10
                if after != 44 and after != 10 and after != 13:
                    return -1
            elif not first:
                return -1
            inside = not inside
        first = c == 44 and not inside
        i += 1
    return -1 if inside else i + 1


@compiled.njit()
def _scan(buf, skip_header, roles, width, values, bits, spans, lines, hard, pow5, pow10):
    """Fill ``values`` (rows x ``width`` float64, flat; ``bits`` the same memory as uint64), the target
    spans and each row's line (0-based in the block) in one pass. Returns ``(rows, hard cells)``
    (``hard``: start, stop and flat slot of each number left to ``float()``), or rows -1 where
    the block holds anything but plain numbers (see the module docstring)."""
    size, ncols = buf.size, roles.size
    n, nhard, line, i = 0, 0, 0, 0
    if skip_header:  # (line 1, the header, decoded by ``csv_header``: only its quotes may join lines)
        i = _after_header(buf)
        if i < 0:
            return -1, 0
        line += 1
    while i < size:
        start = i
        while i < size and _blank(buf[i]):
            i += 1
        if i >= size or buf[i] == 10 or (buf[i] == 13 and (i + 1 == size or buf[i + 1] == 10)):  # a blank line
            i += 2 if i < size and buf[i] == 13 else 1
            line += 1
            continue
        i = start
        for col in range(ncols):
            quoted = i < size and buf[i] == 34  # (a quote first: ``"text"``; after a blank it is text)
            i += quoted
            while i < size and _blank(buf[i]):
                i += 1
            a = i
            role = roles[col]
            if role >= 0:
                i, ok, negative, w, significant, q = _decimal(buf, i)
                if not ok:
                    return -1, 0
                b = i
                slot = n * width + role
                if significant == 0:
                    bits[slot] = np.uint64(negative) << np.uint64(63)
                elif significant <= 19 and w < np.uint64(9007199254740992) and -22 <= q <= 22:
                    value = np.float64(w) * pow10[q] if q >= 0 else np.float64(w) / pow10[-q]
                    values[slot] = -value if negative else value
                else:
                    found = _eisel_lemire(w, q, pow5) if significant <= 19 else _U0
                    if found == _U0:
                        hard[nhard, 0], hard[nhard, 1], hard[nhard, 2] = a, b, slot
                        nhard += 1
                    else:
                        bits[slot] = found | (np.uint64(negative) << np.uint64(63))
                        if not abs(values[slot]) <= FLOAT32_MAX:  # (Clinger's are below 2^53 * 10^22)
                            return -1, 0
            else:
                while i < size and buf[i] != 44 and buf[i] != 34 and (buf[i] >= 32 or buf[i] == 9):
                    if buf[i] >= 127:
                        return -1, 0
                    i += 1
                b = i
                while b > a and _blank(buf[b - 1]):
                    b -= 1
                if b == a:  # (an empty cell)
                    return -1, 0
                if role == TARGET:
                    spans[n, 0], spans[n, 1] = a, b
            while i < size and _blank(buf[i]):
                i += 1
            if quoted:  # (the closing quote, then the end of the cell: a quote inside goes to Python)
                if i >= size or buf[i] != 34:
                    return -1, 0
                i += 1
            if i < size and buf[i] == 13 and (i + 1 == size or buf[i + 1] == 10):
                i += 1
            last = col == ncols - 1
            if i >= size or buf[i] == 10:
                if not last:  # (too few fields)
                    return -1, 0
            elif buf[i] != 44 or last:  # (not the end of the cell, or too many fields)
                return -1, 0
            i += 1
        lines[n] = line
        n += 1
        line += 1
    return n, nhard


@compiled.njit()
def _label_bytes(buf, spans, n):
    """The target cells' bytes, one row each, padded with zeros to the longest."""
    longest = 1
    for r in range(n):
        longest = max(longest, spans[r, 1] - spans[r, 0])
    out = np.zeros((n, longest), np.uint8)
    for r in range(n):
        for k in range(spans[r, 1] - spans[r, 0]):
            out[r, k] = buf[spans[r, 0] + k]
    return out


def numeric_block(data, first_line: int, roles: np.ndarray, width: int):
    """``(rows x width float64 features, target cells as str or None, line numbers)`` of a block
    of CSV lines (``data``, numbered from ``first_line``), or None where the block is not all
    plain numbers and plain labels (see the module docstring): the Python path reads it then."""
    buf = np.frombuffer(data, np.uint8)
    rows = buf.size // (2 * roles.size) + 1  # (a row: a byte and a comma or line break per column)
    values = np.empty((rows, width))
    spans, lines = np.empty((rows, 2), np.int64), np.empty(rows, np.int64)
    hard = np.empty((rows * width, 3), np.int64)  # (untouched unless used)
    flat = values.reshape(-1)
    n, nhard = _scan(buf, first_line == 1, roles, width, flat, flat.view(np.uint64), spans, lines, hard, POW5, POW10)
    if n < 0:
        return None
    for a, b, slot in hard[:nhard]:
        flat[slot] = float(bytes(buf[a:b]))
        if not abs(flat[slot]) <= FLOAT32_MAX:
            return None
    labels = None
    if (roles == TARGET).any():
        cells = _label_bytes(buf, spans, n)
        labels = cells.view(f"S{cells.shape[1]}").reshape(-1).astype(str)
        if not MISSING.isdisjoint(np.unique(labels).tolist()):
            return None
    return values[:n], labels, lines[:n] + first_line


def plain_block(data, first_line: int, target, features, columns: int) -> Block | None:
    """The ``Block`` that ``ocolearn.data.csvfile.csv_lines`` reads from a block of CSV lines of
    ``columns`` columns (``target``: the position of the labels' column, or None; ``features``:
    those of the feature columns, in order), or None where it is not plain (``numeric_block``) or
    a column has two roles (the Python path reads it twice), or too small a block to start numba
    for (``compiled.worth``)."""
    if len(set(features)) < len(features) or target in features or not compiled.worth(len(data)):
        return None
    roles = np.full(columns, UNUSED, np.int64)
    roles[list(features)] = np.arange(len(features))
    if target is not None:
        roles[target] = TARGET
    read = numeric_block(data, first_line, roles, len(features))
    if read is None:
        return None
    values, labels, lines = read
    n, d = values.shape
    labels = np.zeros(n, "<U1") if labels is None else labels  # (no target: every label "", as the Python path)
    return Block(
        labels,
        np.arange(n + 1, dtype=np.int64) * d,
        np.tile(np.arange(d, dtype=np.int64), n),
        values.reshape(-1),
        lines,
    )
