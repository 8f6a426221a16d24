"""The compiled CSV fast path (``ocolearn.data.csvfast``) reads the rows the Python path reads,
to the bit, and leaves every other block to it (the same rows, or the same error)."""

from __future__ import annotations

import numpy as np
import pytest

from ocolearn.data import DataError, compiled, csvfile
from ocolearn.data.csvfast import numeric_block, plain_block


@pytest.fixture(autouse=True)
def compiled_however_small(monkeypatch):
    """The compiled parser on blocks of every size (``compiled.worth``: small ones go to the exact
    parser in use, which would make these comparisons of the exact parser with itself)."""
    monkeypatch.setattr(compiled, "SMALL", -1)


FLOAT32_MAX = float(np.finfo(np.float32).max)


def spelling(rng) -> str:
    """A number in one of the spellings Python's ``float()`` reads (and the Python path with it)."""
    x = float(rng.standard_normal() * 10.0 ** rng.integers(-30, 30))
    digits = "".join(rng.choice(list("0123456789"), rng.integers(1, 24)))
    more = "".join(rng.choice(list("0123456789"), rng.integers(0, 24)))
    sign = str(rng.choice(["", "+", "-"]))
    exponent = str(rng.choice(["", f"e{rng.integers(-330, 15)}", f"E+{rng.integers(0, 20)}", f"e-0{rng.integers(9)}"]))
    choices = [
        repr(x),  # (shortest round trip: 17 digits, beyond Clinger's 2^53)
        f"{x:.{rng.integers(0, 25)}e}",
        f"{x:.{rng.integers(0, 20)}f}",
        f"{x:g}",
        str(rng.integers(-(10**6), 10**6)),
        f"{sign}{digits}.{more}{exponent}",
        f"{sign}.{digits}{exponent}",
        f"{sign}{digits}.{exponent}",
        repr(float(np.float32(rng.standard_normal()))),
        str(rng.choice(["0", "-0", "+0", "-0.0", ".5", "5.", "+.5", "-5.", "00012", "9007199254740993", "1e-320"])),
        str(rng.choice(["3.4028234663852886e+38", "3.4028235e38", "2.2250738585072014e-308", "4.9e-324", "1e-400"])),
    ]
    return choices[rng.integers(len(choices))]


def python_path(monkeypatch, *args):
    """``csv_lines`` without the fast path: the rows, or the error, as before it."""
    with monkeypatch.context() as m:
        m.setattr(csvfile, "plain_block", lambda *a: None)
        return read(*args)


def read(data, first_line, target, features, header):
    try:
        table = csvfile.Table(tuple(header[j] for j in features))  # (numbers alone, as a first pass finds them)
        return csvfile.csv_lines(data, first_line, "d.csv", target, features, header, table)
    except DataError as e:
        return str(e)


def same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return all(
        (x is None and y is None)  # (a block's weights and tags: VW's)
        or (x.dtype == y.dtype and x.shape == y.shape and (x.view(np.uint8) == y.view(np.uint8)).all())
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("seed", range(4))
def test_numbers_in_every_spelling_parse_to_the_bits_of_the_python_path(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    fast = 0
    for _ in range(60):
        rows = [[spelling(rng) for _ in range(4)] + [str(rng.choice(["a", "b b", "1", "+1.0"]))] for _ in range(3)]
        header = ["c0", "c1", "y", "c2", "c3"]
        lines = [",".join([*r[:2], r[4], *r[2:4]]) for r in rows]
        data = ("c0,c1,y,c2,c3\n" + "\n".join(lines) + "\n").encode()
        for first_line, features in [(1, [0, 1, 3, 4]), (7, [4, 0])]:
            args = (data if first_line == 1 else data.split(b"\n", 1)[1], first_line, 2, features, header)
            expected = python_path(monkeypatch, *args)
            assert same(read(*args), expected), (data, expected)
            plain = all(abs(float(c)) <= FLOAT32_MAX for r in rows for c in r[:4])
            assert (numeric_block(*args[:2], np.array([0, 1, -1, 2, 3]), 4) is not None) == plain
            fast += plain
    assert fast > 60  # (most blocks are plain: the fast path was tried)


BREAKS = ['"', '""', "", " ", "NA", "nan", "inf", "-Infinity", "x", "1 2", "1e", "e5", ".", "+", "1_0", "١", "é", "\t"]
BREAKS += ["\r", "\x00", "\x0b", ",", "1,", "0x10", "1.5.", "--1", "1e+", " 2 ", "\t3\t", "4\r"]
BREAKS += ['"a"b', '" a "', '"a,b"', '"a""b"', ' "a"', '"a" ', '"1.5"', '" 1e5 "', 'a"', '"a\n"', '"', '"2']
HEADERS = ["a,y,b\n", "a,y,b\r\n", '"a",y,b\n', 'a,y,"b\n', "a,y,bé\n", "a,y\x00,b\n", '"a","y","b"\r\n']
HEADERS += ['"a"x,y,b\n', 'a,"y"",b\n', 'a"",y,b\n', ' "a",y,b\n', '"a" ,y,b\n', "a,y,b\r \n", '"a\r\n",y,b\n']


@pytest.mark.parametrize("seed", range(4))
def test_a_block_with_anything_else_gives_the_rows_or_the_error_of_the_python_path(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    for _ in range(80):
        cells = [[spelling(rng) if rng.random() < 0.5 else str(rng.integers(9)) for _ in range(3)] for _ in range(4)]
        cells = [[f'"{c}"' if rng.random() < 0.2 else c for c in row] for row in cells]  # (R's write.csv quotes)
        r, c = rng.integers(4), rng.integers(3)
        cells[r][c] = str(rng.choice(BREAKS)) + (cells[r][c] if rng.random() < 0.3 else "")
        text = "\n".join(",".join(row) for row in cells)
        text = str(rng.choice(HEADERS)) + text + str(rng.choice(["", "\n", "\n\n \n"]))
        if rng.random() < 0.3:
            text = text.replace("\n", "\r\n")
        data = text.encode()
        for target, features in [(1, [0, 2]), (None, [2]), (0, [1, 2])]:
            args = (data, 1, target, features, ["a", "y", "b"])
            expected = python_path(monkeypatch, *args)
            assert same(read(*args), expected), (data, target, expected)


def test_the_fast_path_reads_a_block_of_plain_rows_and_leaves_a_quote_inside_a_cell():
    data = b"x,y\n1.5, a\n\n-2e-3,b\r\n"
    values, labels, lines = numeric_block(data, 1, np.array([0, -1]), 1)
    assert values.ravel().tolist() == [1.5, -0.002] and labels.tolist() == ["a", "b"] and lines.tolist() == [2, 4]
    quoted = numeric_block(b'"x","y"\n"1.5","a"\n', 1, np.array([0, -1]), 1)  # (as R's write.csv writes)
    assert quoted[0].ravel().tolist() == [1.5] and quoted[1].tolist() == ["a"]
    assert numeric_block(b'x,y\n1.5,"a,b"\n', 1, np.array([0, -1]), 1) is None
    assert plain_block(data, 1, 1, [0, 0], 2) is None and plain_block(b"x,y\n1,2\n", 1, 1, [0, 1], 2) is None


def test_random_doubles_written_to_many_digits_read_back_to_the_same_bits():
    # Mostly beyond Clinger's fast path (17 to 25 significant digits, exponents past 10^22): the
    # Eisel-Lemire product, and float() where it cannot decide, as Python's float() reads them.
    rng = np.random.default_rng(0)
    x = rng.integers(0, 0x47EFFFFFE0000000, 4000, dtype=np.uint64).view(np.float64)  # (|x| < float32's max)
    cells = [f"{v:{spelling}}" for v in x.tolist() for spelling in ("", ".18e", ".15e", ".19g", ".25g", ".17f")]
    values, _, _ = numeric_block(("x\n" + "\n".join(cells) + "\n").encode(), 1, np.array([0]), 1)
    expected = np.array([float(c) for c in cells])
    assert (values.ravel().view(np.uint64) == expected.view(np.uint64)).all()


@pytest.mark.slow
def test_train_from_a_csv_file_of_many_blocks_learns_the_model_of_the_python_path_and_names_a_late_bad_cell(
    tmp_path, capsys, monkeypatch
):
    from test_cli import call, one_line_error

    rng = np.random.default_rng(0)
    X, w = rng.standard_normal((12_000, 12)), rng.standard_normal(12)
    rows = [",".join(map(repr, x.tolist())) + f",{'p' if x @ w > 0 else 'q'}\n" for x in X]  # (3 MB: two blocks)
    data = tmp_path / "d.csv"
    data.write_text(",".join(f"x{j}" for j in range(12)) + ",y\n" + "".join(rows))
    args = ["train", "--learner", "perceptron", data, "--format", "csv", "--target", "y", "--quiet", "--model"]
    status, _, err = call(capsys, *args, tmp_path / "fast.npz")
    assert status == 0, err
    with monkeypatch.context() as m:
        m.setattr(csvfile, "plain_block", lambda *a: None)
        assert call(capsys, *args, tmp_path / "python.npz")[0] == 0
    fast, python = np.load(tmp_path / "fast.npz"), np.load(tmp_path / "python.npz")
    differ = [k for k in fast.files if k != "settings" and not (fast[k] == python[k]).all()]  # (settings: the time)
    assert sorted(fast.files) == sorted(python.files) and "w" in fast.files and differ == []
    cells = rows[11_000].split(",")
    cells[3] = "1.5x"  # (a column of numbers in training: the model reads it as numbers)
    rows[11_000] = ",".join(cells)
    data.write_text(",".join(f"x{j}" for j in range(12)) + ",y\n" + "".join(rows))
    status, _, err = call(capsys, "test", tmp_path / "fast.npz", data)
    one_line_error(status, err, "d.csv, line 11002, column 'x3': '1.5x' is not a number")
