"""Issue 19's input, command-line and output defects, each pinned by the input that exposed it:
every test here failed on the code before its fix. A failure a user can provoke is one line
``ocolearn: error: ...`` naming the file, line, key or option, with exit status 2."""

import numpy as np
import pytest
from test_cli import call, one_line_error

from ocolearn.data import DataError, parse_csv, read_csv
from ocolearn.model import load


def train(capsys, data, model, *options):
    return call(capsys, "train", "--learner", "perceptron", data, "--model", model, "--quiet", *options)


# Silently wrong ---------------------------------------------------------------------------------


def test_a_csv_header_with_a_repeated_name_is_refused_by_the_one_rule_of_every_csv_reader(tmp_path, capsys):
    # Before: train exited 0 and read the first ``a`` column twice (``header.index``).
    data = tmp_path / "d.csv"
    data.write_text("a,a,y\n1,2,p\n3,4,q\n1,5,p\n")
    one_line_error(*train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[::2], "d.csv, line 1")
    with pytest.raises(DataError, match="line 1: the column name 'a' is repeated"):
        read_csv(data)
    assert not (tmp_path / "m.npz").exists()


def test_an_empty_target_cell_is_an_error_naming_its_line_not_a_class(tmp_path, capsys):
    # Before: the empty cell was a third class ''.
    data = tmp_path / "d.csv"
    data.write_text("a,b,y\n1,2,p\n3,4,\n1,5,q\n")
    err = train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[2]
    one_line_error(2, err, "d.csv, line 3", "'y'", "empty")
    # With --skip-bad the line is skipped and counted; prediction input needs no label at all.
    assert train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y", "--skip-bad")[0] == 0
    assert load(tmp_path / "m.npz").labels == ["p", "q"]
    status, out, _ = call(capsys, "predict", tmp_path / "m.npz", data)
    assert status == 0 and len(out.split()) == 3


# Messages ----------------------------------------------------------------------------------------


def test_a_quoted_header_and_a_byte_order_mark_are_read_by_the_csv_parser_of_the_rows(tmp_path, capsys):
    # R's write.csv quotes the names; Excel's "CSV UTF-8" starts with a byte-order mark. Before:
    # "a CSV file needs no column 'y'; columns: \ufeff"a", "b", "y"".
    plain, quoted = tmp_path / "plain.csv", tmp_path / "quoted.csv"
    plain.write_text("a,b,y\n1,2,p\n3,4,q\n1,5,p\n0,1,q\n")
    quoted.write_bytes(b'\xef\xbb\xbf"a","b","y"\n1,2,p\n3,4,q\n1,5,p\n0,1,q\n')
    for data in (plain, quoted):
        assert train(capsys, data, tmp_path / f"{data.stem}.npz", "--format", "csv", "--target", "y")[0] == 0
    a, b = load(tmp_path / "plain.npz"), load(tmp_path / "quoted.npz")
    assert a.settings["columns"] == b.settings["columns"] == ["a", "b"]
    np.testing.assert_array_equal(a.w, b.w)
    assert list(read_csv(quoted)) == ["a", "b", "y"]
    err = train(capsys, plain, tmp_path / "m.npz", "--format", "csv", "--target", "z")[2]
    one_line_error(2, err, "plain.csv", "has no column 'z'", "columns: a, b, y")


def test_a_csv_model_tested_on_another_format_says_so_without_echoing_the_line(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("a,b,y\n1,2,p\n3,4,q\n1,5,p\n0,1,q\n")
    assert train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[0] == 0
    other = tmp_path / "o.svm"
    other.write_text("1 1:0.5 2:" + "7" * 5000 + "\n")
    line = one_line_error(*call(capsys, "test", tmp_path / "m.npz", other)[::2], "o.svm, line 1", "not a CSV header")
    assert len(line) < 300


@pytest.mark.parametrize(
    "text, words",
    [
        ("1 1:" + "x" * 1_000_000 + "\n-1 2:1\n", ["d.svm, line 1, feature 1", "1,000,000 characters"]),
        ("1 " + "y" * 1_000_000 + "\n-1 2:1\n", ["d.svm, line 1", "not of the form index:value"]),
        ("z" * 1_000_000 + " 1:1\n-1 2:1\n", ["d.svm, line 1, label", "is not a number"]),
    ],
)
def test_an_error_cuts_the_token_it_echoes(tmp_path, capsys, text, words):
    # Before: the whole token, a megabyte here, was the error line.
    data = tmp_path / "d.svm"
    data.write_text(text)
    line = one_line_error(*train(capsys, data, tmp_path / "m.npz")[::2], *words)
    assert len(line) < 300


@pytest.mark.parametrize(
    "entry, words",
    [
        ("1:6_1", ["line 1, feature 1", "'6_1' is not a number"]),  # float() reads 61
        ("1:\uff11", ["line 1, feature 1", "is not a number"]),  # a full-width one: float() reads 1
        ("\uff11:1", ["line 1", "not of the form index:value"]),  # str.isdigit() says yes
        ("1234567890123456789012345:1", ["line 1", "more than 15 digits"]),  # OverflowError before
    ],
)
def test_numbers_and_indices_are_ascii_digits_only(tmp_path, capsys, entry, words):
    data = tmp_path / "d.svm"
    data.write_text(f"1 {entry}\n-1 2:1\n1 2:0.5\n")
    one_line_error(*train(capsys, data, tmp_path / "m.npz")[::2], "d.svm", *words)
    # With --skip-bad the line is skipped (the 25-digit index raised OverflowError here too).
    status, _, err = train(capsys, data, tmp_path / "m.npz", "--skip-bad")
    assert status == 0 and "skipped 1 malformed lines" in err


def test_a_csv_target_read_as_a_number_follows_the_same_rule(tmp_path, capsys):
    data = tmp_path / "r.csv"
    data.write_text("a,y\n1,6_1\n2,3.5\n3,1.25\n")
    status, _, err = call(
        capsys,
        "train",
        "--learner",
        "ogd",
        data,
        "--model",
        tmp_path / "m.npz",
        "--format",
        "csv",
        "--target",
        "y",
        "--task",
        "regression",
    )
    one_line_error(status, err, "r.csv", "'6_1' is not a number")
    assert parse_csv(["a,y", "1,6_1"], "t")["y"].dtype.kind == "U"


# Tracebacks --------------------------------------------------------------------------------------


def compressed(tmp_path, suffix):
    import bz2
    import gzip
    import lzma

    text = "".join(f"1 1:0.5 2:{i}\n-1 3:1 2:0.{i}\n" for i in range(300)).encode()
    return {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[suffix](text)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_a_compressed_file_cut_short_or_corrupt_is_an_error_naming_it(tmp_path, capsys, suffix):
    # Before: EOFError, zlib.error, lzma.LZMAError or OSError tracebacks, or "Not a gzipped file (b'2 ')".
    whole = compressed(tmp_path, suffix)
    cut, bad, plain = (tmp_path / f"{name}.svm{suffix}" for name in ("cut", "bad", "plain"))
    cut.write_bytes(whole[: len(whole) // 2])
    bad.write_bytes(whole[:30] + bytes(range(256)) * 2)
    plain.write_text("2 1:1\n-1 2:1\n")
    one_line_error(*train(capsys, cut, tmp_path / "m.npz")[::2], f"cut.svm{suffix}", "cut short")
    one_line_error(*train(capsys, bad, tmp_path / "m.npz")[::2], f"bad.svm{suffix}", f"not a valid {suffix} file")
    line = one_line_error(*train(capsys, plain, tmp_path / "m.npz")[::2], f"plain.svm{suffix}", "not a valid")
    assert "b'" not in line
    good = tmp_path / f"good.svm{suffix}"
    good.write_bytes(whole)
    assert train(capsys, good, tmp_path / "m.npz")[0] == 0
    for command in ("predict", "test"):
        one_line_error(*call(capsys, command, tmp_path / "m.npz", cut)[::2], f"cut.svm{suffix}", "cut short")


IRIS = '[data]\nsource = "iris"\nfeatures = ["Sepal.Width", "Petal.Length"]\ntarget = "Petal.Width"\n'


def run_config(capsys, tmp_path, text, command="run"):
    config = tmp_path / "c.toml"
    config.write_bytes(text if isinstance(text, bytes) else text.encode())
    return call(capsys, command, config, "--out", tmp_path / "out")


@pytest.mark.parametrize(
    "text, words",
    [
        (b'name = "\xe9t\xe9"\n[learner]\nkind = "ogd"\n', ["c.toml, line 1", "not UTF-8"]),  # UnicodeDecodeError
        ('name = "x"\n' + IRIS + '[learner]\nkind = "ogd"\n[run]\npasses = 9999999999\n', ["c.toml", "'run.passes'"]),
        ('name = "x"\n' + IRIS + 'test = 0.999\n[learner]\nkind = "ogd"\n', ["c.toml", "'data.test'", "none is left"]),
        (
            'name = "x"\n' + IRIS + '[learner]\nkind = "optax"\ntransformation = "tree_map_params"\n',
            ["c.toml", "learner.transformation", "not an optimizer"],
        ),
        ('name = "x"\n' + IRIS + '[learner]\nkind = "optax"\n', ["c.toml", "learner.hyperparams.learning_rate"]),
        ('name = "x"\n' + IRIS + 'test = 0.3\ntest_seed = -1\n[learner]\nkind = "ogd"\n', ["'data.test_seed'"]),
        ('name = "x"\n' + IRIS + '[learner]\nkind = "ogd"\n[run]\nshuffle_seed = 4294967296\n', ["'run.shuffle_seed'"]),
    ],
)
def test_configs_that_gave_a_traceback_are_one_line_errors(tmp_path, capsys, text, words):
    one_line_error(*run_config(capsys, tmp_path, text)[::2], *words)


def test_more_rounds_than_the_int32_counter_holds_is_an_error_naming_passes():
    from ocolearn import OGD, run
    from ocolearn.parts import ConfigError

    X, y = np.ones((150, 2), np.float32), np.ones(150, np.float32)
    with pytest.raises(ConfigError, match="passes: 14316558 passes over 150 rows are 2147483700 rounds"):
        run(OGD(), X, y, passes=14316558)


@pytest.mark.parametrize("option", ["--seed", "--order-seed"])
def test_a_negative_seed_is_a_usage_error(tmp_path, capsys, option):
    # Before: numpy's "expected non-negative integer" traceback (--order-seed with text input).
    root = tmp_path / "docs"
    for label, words in (("pos", "good fine great"), ("neg", "bad awful poor")):
        (root / label).mkdir(parents=True)
        for i in range(3):
            (root / label / f"{i}.txt").write_text(words)
    args = ["train", "--learner", "perceptron", "--format", "text", root, "--model", tmp_path / "m.npz", "--quiet"]
    one_line_error(*call(capsys, *args, option, "-1")[::2], option)
    assert call(capsys, *args, option, "4294967295")[0] == 0
    one_line_error(*call(capsys, *args, option, "4294967296")[::2], option)
