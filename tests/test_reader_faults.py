"""Issue 41's data-file findings (the fault trial), each pinned by the input that exposed it:
every test here failed (or hung) on the code before its fix. A failure a user can provoke is one
line ``ocolearn: error: ...`` naming the file and line, with exit status 2."""

import os
import threading

import numpy as np
import pytest
from test_cli import call, one_line_error

from ocolearn.data import DataError, csvfile, sparse_text
from ocolearn.data.stream import Source, scan
from ocolearn.modelfile import load
from ocolearn.pipeline import in_memory, read_data


def train(capsys, data, model, *options):
    return call(capsys, "train", "--learner", "perceptron", data, "--model", model, "--quiet", *options)


def csv_train(capsys, data, model, *options):
    return train(capsys, data, model, "--format", "csv", "--target", "y", *options)


def at_once(function, *args):
    """``function(*args)`` on a thread: an input that blocks (a named pipe no one writes) must be
    refused, not waited on; a hang fails here (the thread is left blocked) rather than hanging
    the suite. Its result, or the exception it raised."""
    result = []

    def run():
        try:
            result.append(function(*args))
        except Exception as e:  # (handed to the test)
            result.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert result, f"{function.__name__}{args} still runs: it waits on its input"
    return result[0]


def refused_at_once(capsys, *args):
    """``call`` on a thread (``at_once``)."""
    return at_once(call, capsys, *args)


# Silently wrong ---------------------------------------------------------------------------------


@pytest.mark.parametrize("marker", ["?", "None", "NA", ""])
def test_a_missing_value_marker_as_a_csv_target_is_an_error_naming_the_line_or_a_skipped_row(tmp_path, capsys, marker):
    # Before: ? and None (UCI's and pandas' markers) became a third class, status 0.
    data = tmp_path / "d.csv"
    data.write_text(f"a,b,y\n1,2,p\n3,4,{marker}\n1,5,q\n0,1,p\n")
    one_line_error(*csv_train(capsys, data, tmp_path / "m.npz")[::2], "d.csv, line 3", "the target column 'y'")
    assert not (tmp_path / "m.npz").exists()
    status, _, err = csv_train(capsys, data, tmp_path / "m.npz", "--skip-bad")
    assert status == 0 and "skipped 1" in err, err
    assert load(tmp_path / "m.npz").labels == ["p", "q"]


def test_a_label_with_a_tab_or_a_line_break_is_refused_where_it_is_read(tmp_path, capsys):
    # Before: predict printed the label raw: "p<TAB>q" as two fields, a text folder "a<LF>b" as two lines.
    data = tmp_path / "d.csv"
    data.write_text('a,y\n1,"p\tq"\n2,r\n3,r\n')
    one_line_error(*csv_train(capsys, data, tmp_path / "m.npz")[::2], "d.csv, line 2", "'p\\tq'", "control character")
    folders = tmp_path / "txt"
    for label in ("a\nb", "c"):
        (folders / label).mkdir(parents=True)
        (folders / label / "doc.txt").write_text(f"words of {label}\n")
    err = call(capsys, "train", "--learner", "perceptron", "--format", "text", folders, "--model", tmp_path / "t.npz")[
        2
    ]
    one_line_error(2, err, str(folders / "a\nb" / "doc.txt").replace("\n", "\\n")[-10:], "'a\\nb'", "line break")
    assert not (tmp_path / "t.npz").exists()


def test_one_number_written_two_ways_is_refused_in_svmlight_and_mira_as_in_csv(tmp_path, capsys, monkeypatch):
    # Before: svmlight read 1, 1.0, 01 and +1 as one class (status 0) where CSV refused the pair.
    csv, svm, mira = tmp_path / "d.csv", tmp_path / "d.svm", tmp_path / "d.mira"
    for a, b in (("1", "1.0"), ("+1", "1"), ("01", "1")):
        labels = [a, "-1", b, "-1"]
        csv.write_text("x,y\n" + "".join(f"{i},{v}\n" for i, v in enumerate(labels)))
        svm.write_text("".join(f"{v} {i + 1}:1\n" for i, v in enumerate(labels)))
        mira.write_text("".join(f"{v} w{i}\n" for i, v in enumerate(labels)))
        said = f"the labels {a!r} and {b!r} are one number written two ways"
        errors = [
            one_line_error(*csv_train(capsys, csv, tmp_path / "m.npz")[::2], said),
            one_line_error(*train(capsys, svm, tmp_path / "m.npz")[::2], said),
            one_line_error(*train(capsys, mira, tmp_path / "m.npz", "--format", "mira")[::2], said),
        ]
        assert len({e.replace(f.name, "FILE") for e, f in zip(errors, (csv, svm, mira), strict=True)}) == 1, errors
    # Spellings in different blocks of the file (blocks of a few bytes), and a regression target, whose
    # labels are values (1 and 1.0 one value), as in CSV.
    monkeypatch.setattr(sparse_text, "BLOCK_BYTES", 8)
    svm.write_text("1 1:1\n-1 2:1\n" * 3 + "1.0 1:2\n")
    with pytest.raises(DataError, match="'1' and '1.0' are one number written two ways"):
        read_data(svm)
    assert scan(Source(str(svm))).labels.spellings == ("-1", "1", "1.0")
    regression = ("--learner", "ogd", "--task", "regression")
    assert call(capsys, "train", svm, "--model", tmp_path / "m.npz", "--quiet", *regression)[0] == 0
    svm.write_bytes(b"\xef\xbb\xbf# c\n\n  +1 1:1\r\n-1 2:1 # x\r\n+1\t1:2\r\n")  # (the label's bytes alone)
    assert scan(Source(str(svm))).labels.spellings == ("+1", "-1")
    svm.write_text("+1 1:1\n-1 2:1\n" * 3)  # (one spelling each: the classes are named as before, by value)
    assert train(capsys, svm, tmp_path / "m.npz")[0] == 0 and load(tmp_path / "m.npz").labels == ["-1", "1"]


# Hangs and memory ---------------------------------------------------------------------------------


class Compared(str):
    """A column name that counts the comparisons made with it."""

    count = 0

    def __eq__(self, other):
        Compared.count += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_a_csv_file_of_many_columns_finds_each_column_by_one_look_up(tmp_path):
    # Before: a model's columns were each looked up in the list of the header's names, twice: a
    # comparison per pair, quadratic (100,000 columns x 20 rows: 529 s; 20,000 columns: 18 s).
    d = 1000
    data = tmp_path / "d.csv"
    data.write_text("y," + ",".join(f"c{j}" for j in range(d)) + "\n1," + ",".join(["0"] * d) + "\n")
    Compared.count = 0
    target, features, _ = csvfile.csv_columns(data, "y", [Compared(f"c{j}") for j in reversed(range(d))])
    assert target == 0 and features == list(range(d, 0, -1))
    assert Compared.count <= 3 * d  # (before: d * d)
    # A wide file read as the model's columns (predict's and test's reading): the numbers where written.
    rng = np.random.default_rng(0)
    n, d = 20, 20000
    X = rng.integers(-9, 10, (n, d))
    rows = (",".join(map(str, row)) + f",{'pq'[i % 2]}" for i, row in enumerate(X))
    data.write_text(",".join(f"c{j}" for j in range(d)) + ",y\n" + "\n".join(rows) + "\n")
    columns = tuple(f"c{j}" for j in range(d))
    read = in_memory(Source(str(data), "csv", d, ("p", "q"), target="y", columns=columns))
    np.testing.assert_array_equal(read.X, X)
    np.testing.assert_array_equal(read.y, np.arange(n) % 2)


def test_a_named_pipe_or_a_device_as_a_data_or_model_file_is_refused_before_it_is_opened(tmp_path, capsys):
    # Before: opening a named pipe waited for a writer forever (data or model); /dev/zero was read on
    # without end (463 MB at 5 s, 950 MB at 30 s).
    data, fifo = tmp_path / "d.svm", tmp_path / "pipe"
    data.write_text("1 1:1 2:3\n-1 1:2 2:1\n")
    os.mkfifo(fifo)
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    one_line_error(
        *refused_at_once(capsys, "train", "--learner", "perceptron", fifo, "--model", tmp_path / "x.npz")[::2],
        f"{fifo}: a pipe",
    )
    one_line_error(*refused_at_once(capsys, "predict", tmp_path / "m.npz", fifo)[::2], f"{fifo}: a pipe")
    one_line_error(
        *refused_at_once(capsys, "predict", fifo, data)[::2], f"{fifo}: a named pipe (FIFO), not a model file"
    )
    one_line_error(*refused_at_once(capsys, "test", fifo, data)[::2], f"{fifo}: a named pipe (FIFO), not a model file")
    device = tmp_path / "zero"
    device.symlink_to("/dev/zero")  # (a link: the device is what it points to)
    say = f"{device}: a character device, not a data file"
    one_line_error(
        *refused_at_once(capsys, "train", "--learner", "perceptron", device, "--model", tmp_path / "x.npz")[::2], say
    )
    one_line_error(*refused_at_once(capsys, "predict", tmp_path / "m.npz", device)[::2], say)


def test_a_line_longer_than_the_bound_is_refused_naming_it_not_held_whole(tmp_path, capsys, monkeypatch):
    # Before: a line was read whole however long: a 200 MB file without a line break peaked at 2.25 GB.
    monkeypatch.setattr(sparse_text, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(sparse_text, "BLOCK_BYTES", 64)
    data = tmp_path / "d.svm"
    long = "1 " + " ".join(f"{j}:1" for j in range(1, 400)) + "\n"
    assert len(long) > 1000
    data.write_text("1 1:1\n-1 2:1\n" + long + "-1 1:3\n")
    one_line_error(*train(capsys, data, tmp_path / "m.npz")[::2], f"{data}, line 3: more than 1,000 bytes")
    data.write_text("1 1:1\n" + long.strip())  # (the last line, without its line break)
    one_line_error(*train(capsys, data, tmp_path / "m.npz")[::2], f"{data}, line 2: more than 1,000 bytes")
    data.write_text(long)  # (a line within the bound is read)
    monkeypatch.setattr(sparse_text, "MAX_LINE_BYTES", len(long))
    assert read_data(data, task="regression").X.idx.shape == (1, 400)
    csv = tmp_path / "d.csv"
    csv.write_text(",".join(f"c{j}" for j in range(300)) + ",y\n")
    monkeypatch.setattr(sparse_text, "MAX_LINE_BYTES", 1000)
    one_line_error(*csv_train(capsys, csv, tmp_path / "m.npz")[::2], f"{csv}, line 1: more than 1,000 bytes")


# Tracebacks ---------------------------------------------------------------------------------------


def test_a_data_file_that_is_a_link_loop_is_one_line(tmp_path, capsys):
    # Before: RuntimeError: Symlink loop (cli._same_file resolving the path), a traceback.
    a, b = tmp_path / "a.svm", tmp_path / "b.svm"
    a.symlink_to(b)
    b.symlink_to(a)
    say = f"{a}: Too many levels of symbolic links"
    one_line_error(*train(capsys, a, tmp_path / "m.npz")[::2], say)
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n")
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    one_line_error(*call(capsys, "predict", tmp_path / "m.npz", a, "--out", tmp_path / "p.txt")[::2], say)
    one_line_error(*call(capsys, "predict", a, data)[::2], say)


# Errors that named neither file nor key -----------------------------------------------------------


def test_classes_set_against_the_data_name_the_file_and_the_option(tmp_path, capsys):
    # Before: "y row 2: class 2 is not one of 0..1 (classes = 2)", naming neither.
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n2 2:1\n3 1:2\n1 2:2\n")
    for classes in (2, 4):
        err = train(capsys, data, tmp_path / "m.npz", "--set", f"classes={classes}")[2]
        one_line_error(2, err, f"{data}: 3 labels, but the learner has --set classes={classes}")
    assert train(capsys, data, tmp_path / "m.npz", "--set", "classes=3")[0] == 0


def test_a_synthetic_stream_of_one_label_names_its_key_not_an_array(tmp_path):
    # Before: "<arrays 2 x 10>: task = 'binary' needs exactly two labels, the data has 1": a key the
    # study file does not hold, and arrays it never named.
    from ocolearn.study import DatasetSpec, read_dataset

    spec = DatasetSpec("hyperplane", rows=2, features=10, noise=0.0, seed=1)
    with pytest.raises(DataError, match=r"^rows = 2: every row drawn \(seed 1\) has the label -1; a binary stream"):
        read_dataset(spec, "datasets[0].task")


def test_a_table_that_is_a_named_pipe_is_refused_unopened(tmp_path):
    # Before: read_csv (export's and a config's tables) waited on the pipe for a writer.
    from ocolearn.data import read_csv

    fifo = tmp_path / "t.csv"
    os.mkfifo(fifo)
    error = at_once(read_csv, fifo)
    assert isinstance(error, DataError) and str(error).startswith(f"{fifo}: a pipe"), error
