"""Issue 19's input, command-line and output defects, each pinned by the input that exposed it:
every test here failed on the code before its fix. A failure a user can provoke is one line
``ocolearn: error: ...`` naming the file, line, key or option, with exit status 2."""

import os

import numpy as np
import pytest
from test_cli import call, one_line_error

from ocolearn.data import DataError, parse_csv, read_csv
from ocolearn.data.svmlight import read_svmlight
from ocolearn.modelfile import load


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


def test_a_csv_file_read_as_svmlight_suggests_the_csv_format(tmp_path, capsys):
    # Before: "d.txt, line 1, label: 'a,b,y' is not a number", with no word of --format csv. (A .csv
    # file is read as CSV without --format.)
    data = tmp_path / "d.txt"
    data.write_text("a,b,y\n1,2,3\n2,3,5\n")
    one_line_error(*train(capsys, data, tmp_path / "m.npz")[::2], "d.txt, line 1, label", "give the format csv")
    (tmp_path / "d.svm").write_text("1 1:2\n2 1:2,5\n")  # (a comma in an svmlight line: the same hint)
    one_line_error(*train(capsys, tmp_path / "d.svm", tmp_path / "m.npz")[::2], "d.svm, line 2, feature 1", "CSV")
    (tmp_path / "d.svm").write_text("1 1:2\n2 1:x\n")
    assert "CSV" not in train(capsys, tmp_path / "d.svm", tmp_path / "m.npz")[2]


def test_a_csv_model_tested_on_another_format_says_so_without_echoing_the_line(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("a,b,y\n1,2,p\n3,4,q\n1,5,p\n0,1,q\n")
    assert train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[0] == 0
    other = tmp_path / "o.svm"
    other.write_text("1 1:0.5 2:" + "7" * 5000 + "\n")
    line = one_line_error(
        *call(capsys, "test", tmp_path / "m.npz", other)[::2], "o.svm, line 1", "not a CSV header", "--format svmlight"
    )
    assert len(line) < 600  # (the line is 5,000 characters)


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
    assert len(line) < 400  # (the path, the token cut to 60 characters, and a hint at another format)


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
    assert status == 0 and "skipped 1 malformed line\n" in err


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

    text = "".join(f"1 1:0.5 2:{i}\n-1 2:0.{i} 3:1\n" for i in range(300)).encode()
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
        ('name = "x"\n' + IRIS + '[learner]\nkind = "ogd"\n[run]\npasses = 0\n', ["c.toml", "'run.passes' must be in"]),
        (
            'name = "x"\n[data]\nsource = "no_such.csv"\nformat = "csv"\ntarget = "y"\n[learner]\nkind = "ogd"\n',
            ["c.toml", "'data.source' = 'no_such.csv': no such file", "current folder"],
        ),
        ('name = "x"\n' + IRIS + 'test = 0.999\n[learner]\nkind = "ogd"\n', ["c.toml", "'data.test'", "none is left"]),
        (
            'name = "x"\n' + IRIS + '[learner]\nkind = "optax"\ntransformation = "tree_map_params"\n',
            ["c.toml", "learner.transformation", "not an optimizer"],
        ),
        ('name = "x"\n' + IRIS + '[learner]\nkind = "optax"\n', ["c.toml", "learner.hyperparams.learning_rate"]),
        (
            'name = "x"\n' + IRIS + '[learner]\nkind = "optax"\nhyperparams = {learning_rate = "abc"}\n',
            ["c.toml", "'learner.hyperparams.learning_rate' must be a finite number, got 'abc'"],
        ),
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


# Checkpoints, outputs and signals ----------------------------------------------------------------


def labelled_svmlight(path, n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 4)), 3)
    y = np.where(X @ np.array([1.0, -2.0, 0.5, 0.0]) > 0, 1, -1)
    rows = [f"{t} " + " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(x)) + "\n" for x, t in zip(X, y, strict=True)]
    path.write_text("".join(rows))
    return path


def test_resume_after_the_data_file_changed_is_refused_naming_what_changed(tmp_path, capsys):
    # Before: a shorter file at the same path resumed with exit 0 and "0 rows learned".
    data, ckpt = labelled_svmlight(tmp_path / "d.svm"), tmp_path / "c.npz"
    options = ["--chunk-rows", 100, "--checkpoint", ckpt, "--checkpoint-every", 100]
    assert train(capsys, data, tmp_path / "m.npz", *options)[0] == 0 and ckpt.exists()
    assert train(capsys, data, tmp_path / "m.npz", *options, "--resume")[0] == 0  # the same file: it may resume
    whole = data.read_bytes()
    labelled_svmlight(data, n=200)
    err = train(capsys, data, tmp_path / "m.npz", *options, "--resume")[2]
    one_line_error(2, err, "c.npz", "the data", "d.svm changed", "bytes then")
    changed = bytearray(whole)  # the same size, one digit of the last row changed
    changed[-2] = ord("7") if changed[-2] != ord("7") else ord("8")
    data.write_bytes(bytes(changed))
    one_line_error(*train(capsys, data, tmp_path / "m.npz", *options, "--resume")[::2], "d.svm changed", "contents")


def test_resume_without_a_checkpoint_and_junk_checkpoints_or_models_say_what_is_wrong(tmp_path, capsys):
    data = labelled_svmlight(tmp_path / "d.svm")
    one_line_error(*train(capsys, data, tmp_path / "m.npz", "--resume")[::2], "--resume needs --checkpoint")
    junk = tmp_path / "junk.npz"
    np.savez(junk, fingerprint=np.array([{"a": 1}], dtype=object), w=np.array([None], dtype=object))
    args = ["--checkpoint", junk, "--checkpoint-every", 100, "--resume"]
    line = one_line_error(
        *train(capsys, data, tmp_path / "m.npz", *args)[::2], "junk.npz", "not an ocolearn checkpoint"
    )
    assert "pickle" not in line and "unsafely" not in line
    line = one_line_error(*call(capsys, "predict", junk, data)[::2], "junk.npz", "not an ocolearn model")
    assert "pickle" not in line and "unsafely" not in line


def no_training(monkeypatch):
    import ocolearn.pipeline

    def trained(*args, **kw):
        raise AssertionError("the output was checked only after training")

    monkeypatch.setattr(ocolearn.pipeline, "train_file", trained)


def test_an_output_that_cannot_be_written_is_named_before_training(tmp_path, capsys, monkeypatch):
    import errno

    import ocolearn.io

    data = labelled_svmlight(tmp_path / "d.svm")
    no_training(monkeypatch)
    one_line_error(*train(capsys, data, tmp_path)[::2], f"{tmp_path}: is a folder")

    def refused(file, *args, **kw):  # a read-only folder, or no inode left: the temporary file is refused
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(file))

    monkeypatch.setattr(ocolearn.io, "open", refused, raising=False)  # (io's temporaries are made by open)
    line = one_line_error(*train(capsys, data, tmp_path / "out" / "m.npz")[::2], "Read-only file system")
    assert f"{tmp_path / 'out' / 'm.npz'}: " in line and ".tmp" not in line
    line = one_line_error(*call(capsys, "predict", tmp_path / "m.npz", data, "--out", tmp_path / "p.txt")[::2])
    assert f"{tmp_path / 'p.txt'}: Read-only" in line
    monkeypatch.delattr(ocolearn.io, "open")


def test_a_full_disk_names_the_file_that_could_not_be_written(tmp_path, capsys, monkeypatch):
    import errno

    import ocolearn.io

    data = labelled_svmlight(tmp_path / "d.svm")

    def full(fd):  # the kernel's error names no file
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(ocolearn.io.os, "fsync", full)
    line = one_line_error(*train(capsys, data, tmp_path / "m.npz")[::2], "No space left on device")
    assert line.startswith(f"ocolearn: error: {tmp_path / 'm.npz'}: ")
    assert [p.name for p in tmp_path.iterdir()] == ["d.svm"]


def dead_pid():
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_temporary_files_of_killed_writers_are_removed_on_the_next_write_to_their_folder(tmp_path, capsys):
    # Before: 12 of 12 predicts killed by SIGKILL left .NAME.XXXX.tmp files that no run removed.
    # (Files of the user's named alike are left: tests/test_outputs.py.)
    from test_outputs import ours

    data = labelled_svmlight(tmp_path / "d.svm")
    dead, live = dead_pid(), os.getppid()
    stale = [ours(tmp_path, "m.npz", dead), ours(tmp_path, "p.txt", dead)]
    kept = [ours(tmp_path, "m.npz", live), tmp_path / ".p.txt.0a1b2c3d.tmp", tmp_path / ".notes.tmp"]
    ours(tmp_path, "run", dead).mkdir()  # a folder of a killed run
    for path in stale + kept:
        path.write_text("partial")
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == sorted(p.name for p in kept)


def ctrl_c():
    raise KeyboardInterrupt


def stop_at_the_third_chunk(monkeypatch, stop):
    """``stop()`` as ``train`` is about to learn its third chunk."""
    import ocolearn.streaming

    real, calls = ocolearn.streaming.run, []

    def stopped(*args, **kw):
        calls.append(1)
        if len(calls) == 3:
            stop()
        return real(*args, **kw)

    monkeypatch.setattr(ocolearn.streaming, "run", stopped)


def test_sigterm_cleans_up_and_exits_143_as_ctrl_c_does(tmp_path, capsys, monkeypatch):
    # Before: no handler: no message, the temporary files left behind.
    import signal

    import ocolearn.streaming

    data = labelled_svmlight(tmp_path / "d.svm")
    stop_at_the_third_chunk(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGTERM))
    ckpt = tmp_path / "c.npz"
    options = ["--chunk-rows", 100, "--checkpoint", ckpt, "--checkpoint-every", 100]
    status, _, err = train(capsys, data, tmp_path / "m.npz", *options)
    assert (
        status == 143 and err.strip() == f"ocolearn: terminated; the last checkpoint is {ckpt} (continue with --resume)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.npz", "d.svm"]
    assert signal.getsignal(signal.SIGTERM) is not ocolearn.interrupts._on_signal  # (put back as it was)


RIDGE = (
    'name = "r"\n'
    + IRIS
    + 'batch_scale = true\n[learner]\nkind = "ogd"\nschedule = { kind = "inv_sqrt", eta = 0.045 }\n'
)


def test_a_run_folder_is_written_as_a_unit(tmp_path, capsys, monkeypatch):
    # Before: a kill or a full disk in the middle left a mix of the old run's files and the new one's.
    import ocolearn.plots

    out = tmp_path / "out"
    assert run_config(capsys, tmp_path, RIDGE)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"metrics.json", "trace.csv", "config.toml", "provenance.json", "model.npz"} <= set(before)

    def killed(*args, **kw):  # after metrics, trace and model were written into the folder
        raise KeyboardInterrupt

    monkeypatch.setattr(ocolearn.plots, "run_figures", killed)
    status, _, err = run_config(capsys, tmp_path, RIDGE.replace("0.045", "0.01"))
    assert status == 130 and "interrupted" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the old run, whole
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    monkeypatch.undo()
    assert run_config(capsys, tmp_path, RIDGE.replace("0.045", "0.01"))[0] == 0
    assert "0.01" in (out / "config.toml").read_text() and set(before) == {p.name for p in out.iterdir()}


def test_a_sweep_folder_is_written_as_a_unit_and_never_replaces_a_folder_of_the_users(tmp_path, capsys, monkeypatch):
    import ocolearn.plots

    sweep = RIDGE + '[sweep]\n[sweep.values]\n"learner.schedule.eta" = [0.01, 0.02]\n'
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    one_line_error(*run_config(capsys, tmp_path, sweep, "sweep")[::2], f"{out}: is not an output folder")
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    (out / "notes.txt").unlink()
    assert run_config(capsys, tmp_path, sweep, "sweep")[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(*args, **kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ocolearn.plots, "sweep_figure", full)
    one_line_error(*run_config(capsys, tmp_path, sweep.replace("0.01, 0.02", "0.03, 0.04"), "sweep")[::2], "No space")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_config_name_with_a_path_is_refused(tmp_path, capsys, monkeypatch):
    # Before: name = "../../../x" without --out wrote outside runs/.
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "c.toml"
    for name in ("../../../x", "a/b", "..", ""):
        config.write_text(RIDGE.replace('name = "r"', f"name = {name!r}"))
        one_line_error(*call(capsys, "run", config)[::2], "c.toml", "'name' must be a plain name")
    assert [p.name for p in tmp_path.iterdir()] == ["c.toml"]


# Messages and leftovers --------------------------------------------------------------------------


def test_repeated_or_empty_labels_are_usage_errors(tmp_path, capsys):
    data = labelled_svmlight(tmp_path / "d.svm")
    one_line_error(*train(capsys, data, tmp_path / "m.npz", "--labels=1,1,2,3")[::2], "--labels", "'1' is repeated")
    one_line_error(*train(capsys, data, tmp_path / "m.npz", "--labels=-1,,1")[::2], "--labels", "empty")
    assert train(capsys, data, tmp_path / "m.npz", "--labels=-1,1")[0] == 0


def test_the_memory_message_tells_state_working_memory_and_the_machine_apart(tmp_path, capsys, monkeypatch):
    # Before: "needs 8.0 GiB of state, more than this machine's memory allows (8 GiB)".
    import ocolearn.sizes

    monkeypatch.setattr(ocolearn.sizes, "MEMORY", 8 * 2**30)
    data = labelled_svmlight(tmp_path / "d.svm")
    line = one_line_error(*train(capsys, data, tmp_path / "m.npz", "--bits", 30)[::2], "--bits")
    # (the weights and, for sparse rows' default scale normalize, a scale per feature)
    assert "12.0 GiB of state" in line and "(48.0 GiB)" in line and "machine's 8.0 GiB" in line


def test_setting_a_parts_kind_drops_the_old_kinds_fields(tmp_path, capsys):
    # Before: --set learner.projection.kind=identity on an L2 ball: "unknown key 'learner.projection.radius'".
    from ocolearn.config import load
    from ocolearn.parts import ConfigError
    from ocolearn.projections import Identity

    config = tmp_path / "c.toml"
    config.write_text(RIDGE + 'projection = { kind = "l2_ball", radius = 0.3 }\n')
    assert load(config, ["learner.projection.kind=identity"]).learner.projection == Identity()
    ball = load(config, ["learner.projection.radius=2", "learner.projection.kind=l2_ball"]).learner.projection
    assert ball.radius == 2.0
    with pytest.raises(ConfigError, match="'learner.projection.kind' is set twice; give it once"):
        load(config, ["learner.projection.kind=identity", "learner.projection.kind=l2_ball"])
    assert call(capsys, "run", config, "--set", "learner.projection.kind=identity", "--out", tmp_path / "o")[0] == 0


def test_a_resumed_runs_report_counts_the_rows_as_its_progress_line_does(tmp_path, capsys, monkeypatch):
    # Before: the progress line said "rows 400", the report "200 rows learned", with no word of the resume.
    data, ckpt = labelled_svmlight(tmp_path / "d.svm"), tmp_path / "c.npz"
    stop_at_the_third_chunk(monkeypatch, ctrl_c)
    args = ["train", "--learner", "perceptron", data, "--model", tmp_path / "m.npz", "--chunk-rows", 100]
    args += ["--checkpoint", ckpt, "--checkpoint-every", 100]
    assert call(capsys, *args)[0] == 130
    monkeypatch.undo()
    status, _, err = call(capsys, *args, "--resume")
    progress = [line for line in err.splitlines() if line.startswith("pass 1/1")][-1]
    assert status == 0 and "rows 400 " in progress
    assert "200 rows learned after resuming at 200 (400 in all)" in err


def test_a_sweeps_diverged_configurations_are_noted(tmp_path, capsys):
    import json

    sweep = RIDGE + '[sweep]\n[sweep.values]\n"learner.schedule.eta" = [0.01, 1e30]\n'
    status, out, err = run_config(capsys, tmp_path, sweep, "sweep")
    assert status == 0 and "warning: 1 of 2 configurations diverged" in err
    best = json.loads((tmp_path / "out" / "best.json").read_text())
    assert best["values"] == {"learner.schedule.eta": 0.01} and best["diverged"].startswith("1 of 2")
    everything = sweep.replace("0.01, 1e30", "1e30, 1e31")
    one_line_error(*run_config(capsys, tmp_path, everything, "sweep")[::2], "c.toml", "every one of the 2")


def test_a_runs_figure_names_its_learner(tmp_path, capsys, monkeypatch):
    # Before: an AdaGrad run's legend said "OGD".
    import ocolearn.plots

    legends = []
    real = ocolearn.plots.save

    def save(fig, path):
        legends.extend(text.get_text() for ax in fig.axes for text in ax.get_legend().get_texts())
        real(fig, path)

    monkeypatch.setattr(ocolearn.plots, "save", save)
    config = RIDGE.replace('kind = "ogd"\nschedule = { kind = "inv_sqrt", eta = 0.045 }', 'kind = "adagrad"')
    assert run_config(capsys, tmp_path, config)[0] == 0
    assert "adagrad" in legends and "OGD" not in legends


def test_warnings_come_after_a_result_and_never_before_an_error(tmp_path, capsys, monkeypatch):
    # Before: NumPy's RuntimeWarning lines came before otherwise clean one-line errors.
    import warnings

    import ocolearn.pipeline

    data = labelled_svmlight(tmp_path / "d.svm")
    real = ocolearn.pipeline.train_file

    def warned(*args, **kw):
        warnings.warn("overflow encountered in multiply", RuntimeWarning, stacklevel=1)
        warnings.warn("overflow encountered in multiply", RuntimeWarning, stacklevel=1)
        return real(*args, **kw)

    monkeypatch.setattr(ocolearn.pipeline, "train_file", warned)
    status, _, err = train(capsys, data, tmp_path / "m.npz")
    assert status == 0 and err.splitlines()[-1] == "ocolearn: warning: RuntimeWarning: overflow encountered in multiply"
    assert err.count("overflow") == 1
    one_line_error(
        *train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "x")[::2], "not a CSV header"
    )


def test_the_polarity_example_says_where_its_data_must_be(tmp_path, capsys, monkeypatch):
    # Before: in a fresh clone, a traceback ending "../shared/...: no documents".
    import runpy
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "experiments" / "polarity_pegasos.py"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(script), "--out", str(tmp_path / "out")])
    with pytest.raises(SystemExit) as exit:
        runpy.run_path(str(script), run_name="__main__")
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 2 and len(lines) == 1
    assert lines[0].startswith("polarity_pegasos: error: ../shared/") and "--set data.source=PATH" in lines[0]


@pytest.mark.slow
def test_sigterm_during_a_sweep_ends_it_at_once_without_leftovers(tmp_path):
    # Before: the signal waited for the compiled chunk (here hours of rounds) and then for the exit.
    # (Also found here: a signal during matplotlib's import, after the output folder was opened,
    # became "ImportError: initialization failed" and status 1; the plots are imported first now.)
    import subprocess
    import sys
    import time
    from pathlib import Path

    data = labelled_svmlight(tmp_path / "d.svm", n=2000)
    config = tmp_path / "s.toml"
    config.write_text(
        f'name = "s"\n[data]\nsource = "{data}"\nformat = "svmlight"\n[learner]\nkind = "pegasos"\n'
        '[run]\npasses = 1000000\n[sweep]\n[sweep.values]\n"learner.lam" = [0.001, 0.01, 0.1, 1.0]\n'
    )
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "OCOLEARN_CACHE": "0"}
    command = [sys.executable, "-m", "ocolearn.cli", "sweep", str(config), "--out", str(tmp_path / "out")]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    while not any(p.name.startswith(".out.") for p in tmp_path.iterdir()):  # its handlers are in place
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.1)
    process.terminate()
    try:
        _, err = process.communicate(timeout=300)  # (a safety net: uninterrupted, the sweep runs for hours)
    finally:
        process.kill()  # (a failure leaves no sweep computing through the rest of the suite)
    assert process.returncode == 143 and err.strip() == "ocolearn: terminated; outputs were left as they were"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.svm", "s.toml"]


def test_a_config_whose_state_or_sweep_exceeds_memory_is_refused_naming_its_key(tmp_path, capsys):
    # Found by the fuzz test: dim = 99999999999 gave JAX's RESOURCE_EXHAUSTED traceback, and
    # sweep.seeds = 9999999999 NumPy's MemoryError.
    data = labelled_svmlight(tmp_path / "d.svm")
    source = f'name = "h"\n[data]\nsource = "{data}"\nformat = "svmlight"\n'
    big = source + 'dim = 99999999999\n[learner]\nkind = "perceptron"\n'
    one_line_error(*run_config(capsys, tmp_path, big)[::2], "c.toml", "'data.dim'", "GiB of state")
    seeds = source + '[learner]\nkind = "pegasos"\n[sweep]\nseeds = 9999999999\n[sweep.values]\n"learner.lam" = [0.1]\n'
    one_line_error(*run_config(capsys, tmp_path, seeds, "sweep")[::2], "c.toml", "9999999999 seeds", "runs, more than")
    ranged = seeds.replace("seeds = 9999999999\n", "").replace("[0.1]", "{ linspace = [0.1, 1, 9999999999] }")
    one_line_error(*run_config(capsys, tmp_path, ranged, "sweep")[::2], "c.toml", "(learner.lam)", "runs, more than")


def test_a_pipe_is_refused_naming_it_since_a_data_file_is_read_twice(tmp_path, capsys):
    """A named pipe (as ``/dev/stdin`` is under ``cat data |``) cannot be read a second time: the
    error names it and says what to do, rather than an unnamed "not seekable"; a file works. The
    words are true for predict too (which reads the file once, but seeks in it). It is refused
    before it is opened: opening it waits for a writer (``tests/test_reader_faults.py``)."""
    data, fifo = tmp_path / "a.svm", tmp_path / "pipe"
    data.write_text("1 1:1 2:3\n-1 1:2 2:1\n")
    os.mkfifo(fifo)
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    commands = [
        ["train", "--learner", "perceptron", fifo, "--model", tmp_path / "m.npz"],
        ["predict", tmp_path / "m.npz", fifo],
    ]
    for command in commands:  # (no writer: the pipe is refused unopened, as it would be with one)
        status, _, err = call(capsys, *command)
        one_line_error(
            status,
            err,
            f"{fifo}: a pipe, but ocolearn needs a data file it can seek in",
            "save the pipe to a file first",
        )
    status, _, err = train(capsys, data, tmp_path / "m.npz")
    assert status == 0, err


# The newcomer's trial (issue 19c) ------------------------------------------------------------------


def test_predict_or_test_with_a_format_other_than_the_models_is_refused_naming_both(tmp_path, capsys):
    # Before: an IndexError traceback (svmlight model read as text or mira), or exit 0 and garbage
    # (a csv model's data read as mira scored its header line too).
    data = labelled_svmlight(tmp_path / "d.svm")
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    for command in ("predict", "test"):
        for fmt in ("text", "mira", "csv"):
            one_line_error(
                *call(capsys, command, tmp_path / "m.npz", data, "--format", fmt)[::2],
                f"--format {fmt}: the model {tmp_path / 'm.npz'} was trained on svmlight data",
            )
    status, out, _ = call(capsys, "predict", tmp_path / "m.npz", data, "--format", "svmlight")  # its own: fine
    assert status == 0 and len(out.splitlines()) == 400


def test_an_output_that_is_an_input_is_refused_before_anything_is_written(tmp_path, capsys):
    # Before: train --model DATA and --checkpoint DATA, and predict --out DATA, overwrote the data.
    data = labelled_svmlight(tmp_path / "d.svm")
    before = data.read_bytes()
    one_line_error(*train(capsys, data, data)[::2], f"--model {data}: is the input file {data}")
    alias = tmp_path / "." / "d.svm"
    one_line_error(
        *train(capsys, data, tmp_path / "m.npz", "--checkpoint", alias, "--checkpoint-every", 100)[::2],
        f"--checkpoint {alias}: is the input file {data}",
    )
    assert not (tmp_path / "m.npz").exists()
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    for victim in (data, tmp_path / "m.npz"):
        one_line_error(
            *call(capsys, "predict", tmp_path / "m.npz", data, "--out", victim)[::2], f"--out {victim}: is the input"
        )
    assert data.read_bytes() == before
    load(tmp_path / "m.npz")


def regression_csv(path, n=60):
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(n, 2)), 3)
    y = np.round(X @ np.array([1.0, -2.0]) + 0.1 * rng.normal(size=n), 3)
    path.write_text("a,b,y\n" + "".join(f"{a},{b},{t}\n" for (a, b), t in zip(X, y, strict=True)))
    return path


@pytest.mark.parametrize("option", ["--normalized", "--stop-early"])
def test_class_only_options_on_a_regression_task_are_refused_naming_them(tmp_path, capsys, option):
    # Before: --normalized scaled the regression weights to unit norm (mse 6.06 for 1.30), and
    # --stop-early was silently ignored.
    data = regression_csv(tmp_path / "r.csv")
    args = ["train", "--learner", "ogd", data, "--model", tmp_path / "m.npz", "--format", "csv", "--target", "y"]
    one_line_error(*call(capsys, *args, option, "--quiet")[::2], f"{option}: {data} is a regression task")
    assert not (tmp_path / "m.npz").exists()
    assert call(capsys, *args, "--quiet")[0] == 0


def test_data_without_any_feature_is_a_data_error_naming_the_file(tmp_path, capsys):
    # Before: a CSV of the target alone trained a model of dim 0 that nothing could read, and
    # svmlight lines of labels alone blamed --learner/--set with JAX's "empty axis" message.
    only = tmp_path / "only.csv"
    only.write_text("y\n1.5\n2.5\n0.5\n")
    args = ["--format", "csv", "--target", "y", "--quiet"]
    err = call(capsys, "train", "--learner", "ogd", only, "--model", tmp_path / "m.npz", *args)[2]
    one_line_error(2, err, f"{only}: no feature columns besides the target 'y'; columns: y")
    labels = tmp_path / "labels.svm"
    labels.write_text("1\n-1\n1\n")
    for options in ([], ["--zero-based"], ["--dim", "4"]):  # (before: --dim 4 trained a model of nothing)
        one_line_error(*train(capsys, labels, tmp_path / "m.npz", *options)[::2], f"{labels}: no features in any row")
    # Before: MIRA lines of labels alone, and documents without words, trained (status 0): their
    # dimension is 2^bits, whatever the file holds.
    mira = tmp_path / "labels.mira"
    mira.write_text("sport\npolitics\nsport\n")
    (tmp_path / "docs" / "a").mkdir(parents=True)
    (tmp_path / "docs" / "b").mkdir()
    (tmp_path / "docs" / "a" / "1.txt").write_text("  ")
    (tmp_path / "docs" / "b" / "2.txt").write_text(". , ;\n")
    for data, fmt, alone in (
        (mira, "mira", "every line is a label alone"),
        (tmp_path / "docs", "text", "every document is without words"),
    ):
        status, _, err = train(capsys, data, tmp_path / "m.npz", "--format", fmt)
        one_line_error(status, err, f"{data}: no features in any row ({alone}); nothing to learn from")
    assert not (tmp_path / "m.npz").exists()
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize(
    "fmt, text, options",
    [
        ("svmlight", "1 1:1 2:2\n-1 1:3\n1 2:1\n-1 1:2 2:-1\n", []),
        ("mira", "a x y\nb z\na x\nb z:2 y\n", ["--learner", "mira"]),
        ("csv", "p,q,y\n1,2,a\n4,5,b\n6,7,a\n1,0,b\n", ["--target", "y"]),
    ],
)
def test_a_byte_order_mark_is_left_out_by_every_reader(tmp_path, capsys, fmt, text, options):
    # Before: svmlight refused '\ufeff1' as a label, and the MIRA reader made '\ufeffa' a class of its own.
    plain, marked = tmp_path / "plain.txt", tmp_path / "marked.txt"
    plain.write_text(text)
    marked.write_bytes(b"\xef\xbb\xbf" + text.encode())
    for data in (plain, marked):
        status, _, err = train(capsys, data, tmp_path / f"{data.stem}.npz", "--format", fmt, *options)
        assert status == 0, err
    a, b = load(tmp_path / "plain.npz"), load(tmp_path / "marked.npz")
    assert a.labels == b.labels == sorted(set(a.labels)) and len(a.labels) == 2
    np.testing.assert_array_equal(a.w, b.w)
    outputs = [call(capsys, "predict", tmp_path / "plain.npz", data)[1] for data in (plain, marked)]
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == 4


def test_documents_in_subfolders_of_a_label_folder_are_read_as_that_label(tmp_path, capsys):
    # Before: pos/nested/x.txt was left out silently (train, test and predict read 2 documents, not 3).
    from ocolearn.data.textdirs import text_documents

    for path, words in [("neg/a.txt", "dull boring"), ("pos/b.txt", "great fun"), ("pos/more/deep/c.txt", "great")]:
        (tmp_path / "docs" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / path).write_text(words)
    assert [(label, f.name) for label, f in text_documents(tmp_path / "docs")] == [
        ("neg", "a.txt"),
        ("pos", "b.txt"),
        ("pos", "c.txt"),
    ]
    assert train(capsys, tmp_path / "docs", tmp_path / "m.npz", "--format", "text")[0] == 0
    status, out, _ = call(capsys, "predict", tmp_path / "m.npz", tmp_path / "docs")
    assert status == 0 and [line.split("\t")[0] for line in out.splitlines()] == [
        "neg/a.txt",
        "pos/b.txt",
        "pos/more/deep/c.txt",
    ]
    assert call(capsys, "test", tmp_path / "m.npz", tmp_path / "docs")[1].splitlines()[-1] == "rows 3"


def test_a_checkpoint_asked_for_without_checkpoint_every_is_written_at_each_chunk_end(tmp_path, capsys):
    # Before: --checkpoint PATH alone (or --checkpoint-every 0) never wrote a checkpoint, and said nothing.
    import ocolearn.streaming

    data, ckpt = labelled_svmlight(tmp_path / "d.svm"), tmp_path / "c.npz"
    saved = []
    real = ocolearn.streaming.save_checkpoint
    ocolearn.streaming.save_checkpoint = lambda *a: saved.append(a[-1]["row"]) or real(*a)
    try:
        for every in ([], ["--checkpoint-every", 0]):
            saved.clear()
            args = ["--chunk-rows", 150, "--checkpoint", ckpt, *every]
            assert train(capsys, data, tmp_path / "m.npz", *args)[0] == 0
            assert saved == [150, 300, 400] and ckpt.exists()
    finally:
        ocolearn.streaming.save_checkpoint = real
    assert train(capsys, data, tmp_path / "m.npz", *args, "--resume")[0] == 0


def test_the_sorted_labels_warning_comes_after_a_result_and_never_before_an_error(tmp_path, capsys):
    # Before: the warning was printed at once, so a run that then diverged failed in two lines.
    data = tmp_path / "sorted.svm"
    data.write_text("".join(sorted(labelled_svmlight(tmp_path / "d.svm").read_text().splitlines(keepends=True))))
    args = ["train", "--learner", "ogd", "--set", "schedule.eta=1e38", data, "--model", tmp_path / "m.npz", "--quiet"]
    one_line_error(*call(capsys, *args)[::2], f"{data}, lines 1-400 (pass 1): the run diverged")
    status, _, err = train(capsys, data, tmp_path / "m.npz")
    assert status == 0 and err.splitlines()[-1].startswith(f"ocolearn: warning: {data}: the labels come sorted")
    assert err.count("ocolearn: warning:") == 1, err


def test_predict_reads_any_placeholder_label_of_an_svmlight_line_and_train_and_test_do_not(tmp_path, capsys):
    # Before: predict refused '?' ("is not a number"), though the README promises any placeholder works.
    data = labelled_svmlight(tmp_path / "d.svm")
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    numbered = tmp_path / "numbered.svm"
    numbered.write_text("1 1:1 3:2\n-1 1:-1\n1 1:2 3:1\n")
    placeholders = tmp_path / "placeholders.svm"
    placeholders.write_text("? 1:1 3:2\nfoo 1:-1\n1:2 3:1\n")
    expected = call(capsys, "predict", tmp_path / "m.npz", numbered)[1]
    status, out, err = call(capsys, "predict", tmp_path / "m.npz", placeholders, "--scores")
    assert status == 0 and out == call(capsys, "predict", tmp_path / "m.npz", numbered, "--scores")[1], err
    assert call(capsys, "predict", tmp_path / "m.npz", placeholders)[1] == expected and len(expected.split()) == 3
    for command in (["test", tmp_path / "m.npz", placeholders], ["train", "--learner", "perceptron", placeholders]):
        args = [*command, "--model", tmp_path / "p.npz"] if command[0] == "train" else command
        one_line_error(*call(capsys, *args)[::2], f"{placeholders}, line 1, label: '?' is not a number")
    # Before: a CSV file given to an svmlight model's predict was rows of placeholders with no
    # features, each predicted as an empty row, status 0.
    csv = tmp_path / "d.csv"
    csv.write_text("x1,x2,x3\n1,0,2\n")
    one_line_error(
        *call(capsys, "predict", tmp_path / "m.npz", csv)[::2],
        f"{csv}, line 1, label: 'x1,x2,x3' is not a number (a line with commas: if this is a CSV file, the model ",
    )


def test_predict_and_test_hint_at_a_model_of_the_format_whose_file_they_were_given(tmp_path, capsys):
    # Before: "... (a line with commas: if this is a CSV file, give the format csv)" (or "a name:
    # ... give the format mira"), and with --format csv: "the model m.npz was trained on svmlight data".
    data = labelled_svmlight(tmp_path / "d.svm")
    csv, bare, mira = tmp_path / "d.csv", tmp_path / "bare.csv", tmp_path / "d.mira"
    csv.write_text("x1,x2,x3,x4,y\n1,0,2,0,1\n")
    bare.write_text("1,0,2,0,1\n")
    mira.write_text("pos good fun\n")
    for model, options in (("dense.npz", []), ("hashed.npz", ["--bits", 4])):
        assert train(capsys, data, tmp_path / model, *options)[0] == 0
        trained = f"the model {tmp_path / model} was trained on svmlight data and reads its data as svmlight"
        for command in ("predict", "test"):
            for file, label in ((csv, "'x1,x2,x3,x4,y'"), (bare, "'1,0,2,0,1'")):
                line = one_line_error(*call(capsys, command, tmp_path / model, file)[::2])
                assert line == (
                    f"ocolearn: error: {file}, line 1, label: {label} is not a number (a line with commas: if this "
                    f"is a CSV file, {trained}: give it svmlight data, or train a model with --format csv)"
                )
            one_line_error(*call(capsys, command, tmp_path / model, csv, "--format", "csv")[::2], trained)
        line = one_line_error(*call(capsys, "test", tmp_path / model, mira)[::2])
        assert line == (
            f"ocolearn: error: {mira}, line 1, label: 'pos' is not a number (a name as the label: if this is a "
            "MIRA-format file, "
            f"{trained}: give it svmlight data, or train a model with --format mira)"
        )
    # train chooses the format: there the hint is to give it.
    one_line_error(
        *train(capsys, mira, tmp_path / "m.npz")[::2],
        "(a name as the label: if this is a MIRA-format file, give the format mira)",
    )


def test_predict_and_test_refuse_data_of_another_format_than_the_models_naming_both(tmp_path, capsys):
    # Every pair of (the model's format, the data's). Before: a MIRA model predicted a CSV file (a
    # label per line, the header's too) and an svmlight file (its indices read as names), exit 0;
    # tested, it blamed the label ("label 'x1,x2,y' is not one of the model's labels"); a CSV model
    # said "not a CSV header" of an svmlight or MIRA file, and an svmlight one of a MIRA file read
    # by predict "'good' is not of the form index:value", naming no format; a folder was for
    # "train ... with --format text", which predict and test refuse.
    from test_cli import text_corpus

    files = {
        "svmlight": labelled_svmlight(tmp_path / "d.svm", n=40),
        "csv": tmp_path / "d.csv",
        "bare csv": tmp_path / "bare.csv",
        "mira": tmp_path / "d.mira",
        "text": text_corpus(tmp_path / "docs", n=5),
    }
    files["csv"].write_text("x1,x2,y\n1,0,pos\n0,2,neg\n")
    files["bare csv"].write_text("1,0,pos\n0,2,neg\n")
    files["mira"].write_text("pos good fun\nneg dull:2 boring\n")
    refused = []
    for own in ("svmlight", "mira", "csv", "text"):
        model = tmp_path / f"{own}.npz"
        target = ["--target", "y"] if own == "csv" else []
        assert train(capsys, files[own], model, "--format", own, *target)[0] == 0
        for fmt, data in files.items():
            if fmt.endswith(own):
                continue
            for command in ("predict", "test"):
                status, out, err = call(capsys, command, model, data)
                if own == "text":  # a file is a document (predict reads document files); test needs label folders
                    if command == "predict":
                        assert status == 0 and out.startswith(f"{data}\t") and out.count("\n") == 1, err
                    else:
                        one_line_error(status, err, f"{data}: documents without labels")
                    continue
                line = one_line_error(status, err, str(data) + (": a folder" if fmt == "text" else ", line 1"))
                assert line.endswith(
                    f"the model {model} was trained on {own} data and reads its data as {own}: give it {own} data, "
                    f"or train a model with --format {fmt.split()[-1]})"
                ), line
                refused.append((own, fmt, command))
    assert len(refused) == 2 * (4 + 4 + 3)


def test_messages_name_the_option_the_file_and_line_or_what_differs(tmp_path, capsys, monkeypatch):
    # Before: "the data has 1" (it was --labels), "--bits/--dim: ..." for an index in the file,
    # "its options differ" (which?), "its learner differ", and "File exists" for a file in the way.
    import ocolearn.sizes

    data = labelled_svmlight(tmp_path / "d.svm")
    one_line_error(
        *train(capsys, data, tmp_path / "m.npz", "--labels=1")[::2], "argument --labels: '1' names one label"
    )
    big = tmp_path / "big.svm"
    big.write_text("1 1:1\n-1 2147483648:2\n")
    monkeypatch.setattr(ocolearn.sizes, "MEMORY", 8 * 2**30)  # (an 8 GiB machine)
    line = one_line_error(*train(capsys, big, tmp_path / "m.npz")[::2], f"{big}, line 2: feature index 2147483648: ")
    assert "2,147,483,648 features keeps 24.0 GiB of state" in line
    one_line_error(*train(capsys, big, tmp_path / "m.npz", "--dim", 2**31)[::2], "argument --dim: 2147483648 is more")
    monkeypatch.undo()
    ckpt = tmp_path / "c.npz"
    assert train(capsys, data, tmp_path / "m.npz", "--checkpoint", ckpt, "--passes", 2)[0] == 0
    err = train(capsys, data, tmp_path / "m.npz", "--checkpoint", ckpt, "--passes", 3, "--seed", 4, "--resume")[2]
    one_line_error(2, err, f"{ckpt}: a checkpoint of another run: --passes 2 then, 3 now; --seed none then, 4 now;")
    args = ["train", "--learner", "pegasos", data, "--model", tmp_path / "m.npz", "--checkpoint", ckpt, "--passes", 2]
    one_line_error(*call(capsys, *args, "--resume", "--quiet")[::2], "another learner (--learner, --set)")
    one_line_error(
        *train(capsys, data, data / "m.npz")[::2],
        f"{data / 'm.npz'}: {data} is a file, not a folder (a file is in the way",
    )


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_a_compressed_file_without_its_suffix_says_so(tmp_path, capsys, suffix):
    # Before: "not UTF-8 text" at line 1.
    plain = labelled_svmlight(tmp_path / "d.svm")
    hidden = tmp_path / "data"
    hidden.write_bytes(compressed(tmp_path, suffix))
    name = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}[suffix]
    one_line_error(
        *train(capsys, hidden, tmp_path / "m.npz")[::2], f"{hidden}: looks {name}-compressed: name it with {suffix}"
    )
    assert train(capsys, plain, tmp_path / "m.npz")[0] == 0


def test_huge_metrics_and_long_per_pass_lists_are_printed_readably(tmp_path, capsys):
    # Before: "mse 199450000000000...000.000000" (78 digits), and 200 numbers on each per-pass line.
    from ocolearn.metrics import formatted as _metric

    assert [_metric(v) for v in (1.9945e77, 0.5, 0.0, 3e-9, 123456.5, 1234567.0)] == [
        "1.9945e+77",
        "0.500000",
        "0.000000",
        "3e-09",
        "123456.500000",
        "1.23457e+06",
    ]
    data = regression_csv(tmp_path / "r.csv")
    args = ["--format", "csv", "--target", "y", "--quiet"]
    assert call(capsys, "train", "--learner", "ogd", data, "--model", tmp_path / "m.npz", *args)[0] == 0
    huge = tmp_path / "huge.csv"
    huge.write_text("a,b,y\n1e38,1,1\n1,2,3\n")
    status, out, _ = call(capsys, "test", tmp_path / "m.npz", huge)
    assert status == 0 and len(out.splitlines()[0]) < 20 and "e+" in out.splitlines()[0], out
    status, _, err = train(capsys, labelled_svmlight(tmp_path / "d.svm", n=20), tmp_path / "p.npz", "--passes", 30)
    mistakes = next(line for line in err.splitlines() if line.startswith("mistakes per pass: "))
    assert status == 0 and len(mistakes.split()) == 3 + 5 + 4 + 5 and "... (20 more) ..." in mistakes
    losses = next(line for line in err.splitlines() if line.startswith("progressive learner loss ("))
    losses = losses.split(" per pass: ")[1]
    assert "... (20 more) ..." in losses and len(losses.split()) == 5 + 4 + 5 + 4


def test_two_integer_targets_read_as_classes_by_a_regression_loss_are_noted(tmp_path, capsys):
    """Two whole numbers are two classes by the task rule; a learner with a regression loss (ogd)
    then learned 10 and 20 as -1 and +1 without a word. A warning after the result says so and
    how to declare a regression; -1/+1 labels and a declared task give none."""
    data = tmp_path / "two.csv"
    data.write_text("a,y\n1,10\n2,20\n3,20\n1.5,10\n2.5,20\n")
    options = ("--format", "csv", "--target", "y", "--quiet")
    status, _, err = call(capsys, "train", "--learner", "ogd", data, "--model", tmp_path / "m.npz", *options)
    assert status == 0 and err.strip().splitlines()[-1] == (
        f"ocolearn: warning: {data}: the targets 10 and 20 were read as two classes, which 'ogd' learns as -1 "
        "and +1; if they are quantities to predict, declare --task regression"
    )
    declared = ("--task", "regression")
    status, _, err = call(capsys, "train", "--learner", "ogd", data, "--model", tmp_path / "r.npz", *options, *declared)
    assert status == 0 and "warning" not in err
    signs = tmp_path / "signs.svm"
    signs.write_text("1 1:1\n-1 1:-1\n")
    status, _, err = call(capsys, "train", "--learner", "ogd", signs, "--model", tmp_path / "s.npz", "--quiet")
    assert status == 0 and "warning" not in err


@pytest.mark.parametrize("cell", ["NA", "", "null"])
def test_a_missing_target_marker_is_an_error_naming_its_line_not_a_class(tmp_path, capsys, cell):
    """R's write.csv writes a missing value as NA, pandas as an empty cell; before, the CSV
    reader made 'NA' a class of its own (labels 0, 1, 2, 'NA') with status 0, and a config's
    table a class '' or 'NA'. Now each names its line; --skip-bad skips it."""
    data = tmp_path / "d.csv"
    data.write_text(f"a,y\n1,1\n2,{cell}\n3,0\n4,2\n5,1\n")
    what = "is empty" if not cell else f"holds {cell!r}, a missing value"
    one_line_error(*train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[::2], "line 3", what)
    assert train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y", "--skip-bad")[0] == 0
    assert load(tmp_path / "m.npz").labels == ["0", "1", "2"]
    config = tmp_path / "c.toml"
    config.write_text(
        f"name = 'c'\n[data]\nsource = '{data}'\nfeatures = ['a']\ntarget = 'y'\n[learner]\nkind = 'mira'\n"
    )
    status, _, err = call(capsys, "run", config, "--out", tmp_path / "run")
    one_line_error(status, err, "d.csv, line 3", what)
    assert not (tmp_path / "run").exists()


def test_a_folder_among_the_documents_given_to_predict_is_named_as_a_folder(tmp_path, capsys):
    # Before: "txt/pos: no such file or folder" for a folder that exists.
    for label, words in (("pos", "good great"), ("neg", "bad awful")):
        (tmp_path / "txt" / label).mkdir(parents=True)
        (tmp_path / "txt" / label / f"{label}.txt").write_text(words)
    assert train(capsys, tmp_path / "txt", tmp_path / "m.npz", "--format", "text")[0] == 0
    status, _, err = call(
        capsys, "predict", tmp_path / "m.npz", tmp_path / "txt" / "neg" / "neg.txt", tmp_path / "txt" / "pos"
    )
    one_line_error(status, err, f"{tmp_path / 'txt' / 'pos'}: a folder among 2 paths", "give a folder alone")


def test_a_csv_file_without_a_header_is_refused_not_read_without_its_first_row(tmp_path, capsys):
    # Before: a file of rows alone trained with status 0 on its rows after the first, which had
    # become the column names (--target naming one of its numbers).
    data = tmp_path / "d.csv"
    data.write_text("5.1,3.5,0.2\n4.9,3.0,0.2\n6.3,2.5,1.9\n")
    err = call(capsys, "train", "--learner", "ogd", data, "--model", tmp_path / "m.npz", "--format", "csv",
               "--target", "0.2")[2]  # fmt: skip
    one_line_error(2, err, "d.csv, line 1: the header is only numbers (5.1, 3.5, 0.2)", "first line names its columns")
    with pytest.raises(DataError, match="line 1: the header is only numbers"):
        parse_csv(data.read_text().splitlines(), "d.csv")
    data.write_text("x,2019,2020\n1,2,3\n2,3,5\n")  # whole numbers may name columns
    assert list(read_csv(data)) == ["x", "2019", "2020"]


def test_an_svmlight_line_without_a_label_is_named_by_its_line_in_train_and_test(tmp_path, capsys):
    # Before: train said "nl.svm: a line without a label" (no line), test "line 3: no label is not
    # one of the model's labels ['-1', '1']".
    data, unlabelled = tmp_path / "d.svm", tmp_path / "nl.svm"
    data.write_text("1 1:2\n-1 2:1\n1 1:1 2:0.5\n")
    unlabelled.write_text("1 1:2\n-1 2:1\n2:1\n")
    one_line_error(*train(capsys, unlabelled, tmp_path / "m.npz")[::2], "nl.svm, line 3: a line without a label")
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    err = call(capsys, "test", tmp_path / "m.npz", unlabelled)[2]
    one_line_error(2, err, "nl.svm, line 3: no label, where one of the model's labels ['-1', '1'] is needed")
    assert call(capsys, "predict", tmp_path / "m.npz", unlabelled)[0] == 0


@pytest.mark.parametrize(
    "fmt, option",
    [("csv", ["--bits", "10"]), ("csv", ["--dim", "4"]), ("csv", ["--zero-based"]), ("svmlight", ["--target", "y"])],
)
def test_a_reading_option_the_format_does_not_read_is_refused_naming_it(tmp_path, capsys, fmt, option):
    # Before: each was ignored, status 0 (--target y on an svmlight file, --bits on a CSV file).
    data = tmp_path / f"d.{fmt}"
    data.write_text("a,b,y\n1,2,p\n3,4,q\n1,5,p\n" if fmt == "csv" else "1 1:2\n-1 2:1\n")
    target = ["--target", "y"] if fmt == "csv" else []
    err = train(capsys, data, tmp_path / "m.npz", "--format", fmt, *target, *option)[2]
    one_line_error(2, err, f"{option[0]} applies to --format", f"not to {fmt}")
    assert not (tmp_path / "m.npz").exists()


def test_hidden_files_and_folders_of_a_text_folder_are_neither_labels_nor_documents(tmp_path, capsys):
    # Before: Jupyter's .ipynb_checkpoints became a third class and macOS's .DS_Store a document
    # of 'pos', with status 0.
    for label, words in (("pos", "good great"), ("neg", "bad awful")):
        (tmp_path / "txt" / label).mkdir(parents=True)
        (tmp_path / "txt" / label / f"{label}.txt").write_text(words)
    (tmp_path / "txt" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "txt" / ".ipynb_checkpoints" / "pos-checkpoint.txt").write_text("good")
    (tmp_path / "txt" / "pos" / ".DS_Store").write_bytes(b"\x00\x01Bud1")
    assert train(capsys, tmp_path / "txt", tmp_path / "m.npz", "--format", "text")[0] == 0
    assert load(tmp_path / "m.npz").labels == ["neg", "pos"]
    status, out, _ = call(capsys, "predict", tmp_path / "m.npz", tmp_path / "txt")
    assert status == 0 and [line.split("\t")[0] for line in out.splitlines()] == ["neg/neg.txt", "pos/pos.txt"]
    status, out, _ = call(capsys, "predict", tmp_path / "m.npz", tmp_path / "txt" / "pos")
    assert status == 0 and [line.split("\t")[0] for line in out.splitlines()] == ["pos.txt"]


def test_one_number_written_two_ways_is_not_two_classes(tmp_path, capsys):
    # Before: a CSV target 1.0, 1, 0, 0.0 trained a four-class model ('0', '0.0', '1', '1.0') with
    # status 0, and 01, 1 two classes; svmlight labels, numbers, were one class each.
    data = tmp_path / "d.csv"
    for column, a, b in (("1.0,1,0,0.0", "0", "0.0"), ("01,1,0,0", "01", "1")):
        data.write_text("a,y\n" + "".join(f"{i},{v}\n" for i, v in enumerate(column.split(","))))
        err = train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[2]
        one_line_error(2, err, f"d.csv: the labels {a!r} and {b!r} are one number written two ways")
    regression = ("--format", "csv", "--target", "y", "--task", "regression")  # (values: 1.0 is 1)
    assert call(capsys, "train", "--learner", "ogd", data, "--model", tmp_path / "m.npz", *regression)[0] == 0


def test_a_csv_column_without_a_name_is_refused_not_read_as_a_feature(tmp_path, capsys):
    # Before: R's write.csv (and pandas' to_csv) row names, a column named "", became a feature,
    # the row number, with status 0; a trailing comma's empty column failed on its first value.
    data = tmp_path / "d.csv"
    data.write_bytes(b'"","a","b","y"\n"1",1,2,"p"\n"2",3,4,"q"\n"3",1,5,"p"\n')
    err = train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[2]
    one_line_error(2, err, "d.csv, line 1: column 1 has no name", "write.csv(row.names = FALSE)", "index=False")
    with pytest.raises(DataError, match="line 1: column 1 has no name"):
        read_csv(data)
    data.write_text("a,b,y,\n1,2,p,\n3,4,q,\n")
    one_line_error(*train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[::2], "column 4 has no")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize(
    "fmt, key", [("csv", "bits = 4"), ("csv", "zero_based = true"), ("svmlight", "target = 'y'"), ("csv", "dim = 3")]
)
def test_a_data_key_the_format_does_not_read_is_refused_naming_it(tmp_path, capsys, fmt, key):
    # Before: [data] bits or zero_based of a CSV file, or a target of an svmlight file, were ignored, status 0.
    data = tmp_path / f"d.{fmt}"
    data.write_text("a,b,y\n1,2,1.5\n3,4,2.5\n1,5,0.5\n" if fmt == "csv" else "1 1:2\n-1 2:1\n")
    target = "target = 'y'\n" if fmt == "csv" else ""
    config = tmp_path / "c.toml"
    config.write_text(
        f"name = 'c'\n[data]\nformat = '{fmt}'\nsource = '{data}'\n{target}{key}\n[learner]\nkind = 'ogd'\n"
    )
    status, _, err = call(capsys, "run", config, "--out", tmp_path / "run")
    one_line_error(status, err, f"c.toml: 'data.{key.split()[0]}' applies to 'data.format'", f"not to '{fmt}'")
    assert not (tmp_path / "run").exists()


def test_a_configs_task_and_divergence_messages_name_what_a_config_can_set(tmp_path, capsys):
    # Before: a config's perceptron on a real-valued target was told "--task binary|multiclass", an
    # option a config does not have, and every diverged run "a larger lam", a Perceptron included.
    data = tmp_path / "r.csv"
    data.write_text("a,y\n1,0.5\n2,1.7\n3,2.2\n")
    config = f'name = "r"\n[data]\nsource = "{data}"\nformat = "csv"\ntarget = "y"\n[learner]\nkind = "perceptron"\n'
    one_line_error(*run_config(capsys, tmp_path, config)[::2], "c.toml", "data.task = 'binary' or 'multiclass'")
    from ocolearn.checks import NonFiniteError, check_finite
    from ocolearn.learners import Perceptron
    from ocolearn.run import run

    huge = np.full((2, 1), 3e38, np.float32)
    with pytest.raises(NonFiniteError, match="or a larger lam where the learner has one$"):
        check_finite(run(Perceptron(), huge, np.ones(2, np.float32)))


def test_a_diverged_csv_run_names_the_lines_of_its_rows_not_the_header(tmp_path, capsys):
    # Before: "r.csv, lines 1-6": line 1 is the header; the rows are lines 2 to 6.
    data = tmp_path / "r.csv"
    data.write_text("a,y\n1,1\n1e30,2\n3,3\n4,4\n5,5\n")
    options = ("--format", "csv", "--target", "y", "--scale", "none", "--task", "regression", "--quiet")
    err = call(capsys, "train", "--learner", "ogd", data, "--model", tmp_path / "m.npz", *options)[2]
    one_line_error(2, err, "r.csv, lines 2-6 (pass 1): the run diverged")
    chunked = call(
        capsys, "train", "--learner", "ogd", data, "--model", tmp_path / "m.npz", *options, "--chunk-rows", 2
    )
    one_line_error(*chunked[::2], "r.csv, lines 2-3 (pass 1): the run diverged")


def test_a_feature_repeated_in_a_line_is_refused_naming_file_line_and_feature(tmp_path, capsys):
    # Before: ``1 3:1 3:2`` was read as feature 3 = 3 (summed) with status 0, in train, test and
    # predict; a MIRA line ``spam buy buy`` as buy = 2. libsvm and scikit-learn refuse the first.
    good, repeated = tmp_path / "d.svm", tmp_path / "r.svm"
    good.write_text("1 1:2 3:1\n-1 2:1\n1 1:1 3:1\n")
    repeated.write_text("1 1:2 3:1\n-1 2:1\n1 1:1 3:1 3:2\n")
    say = ("r.svm, line 3: feature index 3 is repeated", "libsvm and scikit-learn")
    one_line_error(*train(capsys, repeated, tmp_path / "m.npz")[::2], *say)
    assert train(capsys, good, tmp_path / "m.npz")[0] == 0
    for command in ("test", "predict"):
        one_line_error(*call(capsys, command, tmp_path / "m.npz", repeated)[::2], *say)
    skipped = train(capsys, repeated, tmp_path / "m.npz", "--skip-bad")  # (a malformed line like any other)
    assert skipped[0] == 0 and load(tmp_path / "m.npz").settings["skipped_lines"] == 1
    repeated.write_text("1 03:1 3:2\n")  # (one index written two ways)
    with pytest.raises(DataError, match="r.svm, line 1: feature index 3 is repeated"):
        read_svmlight(repeated)
    mira = tmp_path / "d.mira"
    mira.write_text("spam buy:1 now\nham hi buy\nspam buy buy now\n")
    err = call(capsys, "train", "--learner", "mira", "--format", "mira", mira, "--model", tmp_path / "m.npz")[2]
    one_line_error(2, err, "d.mira, line 3: feature 'buy' is repeated", "'buy:2'")


def strict_json(text: str):
    """``text`` parsed as strict JSON: ``NaN``, ``Infinity`` and ``-Infinity`` refused, as jq and
    JavaScript's ``JSON.parse`` refuse them."""
    import json

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_outputs_are_strict_json_an_unbounded_diameter_null_as_its_definition_says(tmp_path, capsys):
    # Before: metrics.json (and run's printed metrics) held "diameter": Infinity and
    # "gradient_bound": Infinity for an unbounded set, which strict JSON readers refuse.
    from pathlib import Path

    from ocolearn.io import write_json
    from ocolearn.study import leaderboard_markdown

    config = tmp_path / "c.toml"
    ball = 'projection = { kind = "l2_ball", radius = 20.0 }'
    text = (Path(__file__).parent.parent / "configs" / "iris_ridge_noball.toml").read_text()
    config.write_text(text.replace(ball, 'projection = { kind = "identity" }'))
    status, out, _ = call(capsys, "run", config, "--out", tmp_path / "run")
    metrics = strict_json((tmp_path / "run" / "metrics.json").read_text())
    assert status == 0 and metrics["diameter"] is None and metrics["gradient_bound"] is None
    assert "null: the set is unbounded" in metrics["definitions"]["diameter"]
    assert strict_json(out)["diameter"] is None and metrics["regret"] == pytest.approx(strict_json(out)["regret"])
    write_json(tmp_path / "x.json", {"a": [float("nan"), 1.5, float("-inf")], "b": {"c": np.float64("inf")}})
    assert strict_json((tmp_path / "x.json").read_text()) == {"a": [None, 1.5, None], "b": {"c": None}}
    # A study's diverged score, NaN, reads back null from results.json: its leaderboard still reads it.
    record = strict_json(
        (Path(__file__).parent.parent / "experiments" / "records" / "study_regressors.json").read_text()
    )
    record["datasets"]["diabetes"]["learners"]["nag"]["progressive"][0] = None
    assert "| nag | nan ± nan" in leaderboard_markdown(record)


@pytest.mark.parametrize("fmt", ["svmlight", "csv", "mira"])
def test_an_order_seed_for_a_file_of_rows_is_refused_by_train_and_by_a_config(tmp_path, capsys, fmt):
    # Before: --order-seed 3 (or [data] order_seed = 3) on a file of rows was ignored with status
    # 0: only a text folder's documents are shuffled once; a file's rows stream in its order.
    data = tmp_path / f"d.{fmt}"
    data.write_text({"svmlight": "1 1:2\n-1 2:1\n", "csv": "a,y\n1,p\n2,q\n", "mira": "p a\nq b\n"}[fmt])
    target = ["--target", "y"] if fmt == "csv" else []
    for seed in ("3", "0"):  # (0 too: for a text folder it is a shuffle)
        err = train(capsys, data, tmp_path / "m.npz", "--format", fmt, *target, "--order-seed", seed)[2]
        one_line_error(2, err, "--order-seed applies to --format text", f"not to {fmt}")
    assert not (tmp_path / "m.npz").exists()
    table = f"name = 'c'\n[data]\nformat = '{fmt}'\nsource = '{data}'\n" + ("target = 'y'\n" if target else "")
    config = tmp_path / "c.toml"
    config.write_text(f"{table}order_seed = 3\n[learner]\nkind = 'perceptron'\n")
    status, _, err = call(capsys, "run", config, "--out", tmp_path / "run")
    one_line_error(status, err, "c.toml: 'data.order_seed' applies to 'data.format' text", f"not to '{fmt}'")
    config.write_text(f"{table}[learner]\nkind = 'perceptron'\n")  # its resolved config.toml runs again
    assert call(capsys, "run", config, "--out", tmp_path / "run")[0] == 0
    assert "\norder_seed =" not in (tmp_path / "run" / "config.toml").read_text()
    assert call(capsys, "run", tmp_path / "run" / "config.toml", "--out", tmp_path / "again")[0] == 0


def test_numeric_labels_match_the_models_classes_by_value_not_by_spelling(tmp_path, capsys):
    # Before: a model trained on the labels 1.0 and 0.0 refused a test file of 1 and 0 ("label '0'
    # is not one of the model's labels ['0.0', '1.0']"); scikit-learn compares numeric labels by value.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2)).round(3)
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    for name, labels in (("f.csv", [f"{c}.0" for c in y]), ("i.csv", [str(c) for c in y]), ("t.csv", ["2", *y[1:]])):
        rows = [f"{a},{b},{label}\n" for (a, b), label in zip(X, labels, strict=True)]
        (tmp_path / name).write_text("a,b,y\n" + "".join(rows))
    assert train(capsys, tmp_path / "f.csv", tmp_path / "m.npz", "--format", "csv", "--target", "y")[0] == 0
    for command in ("test", "predict"):
        floats, whole = (call(capsys, command, tmp_path / "m.npz", tmp_path / f) for f in ("f.csv", "i.csv"))
        assert floats[0] == whole[0] == 0 and floats[1] == whole[1] and floats[1]
    one_line_error(*call(capsys, "test", tmp_path / "m.npz", tmp_path / "t.csv")[::2], "t.csv, line 2: label '2'")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="a /proc file system (Linux)")
def test_an_output_in_a_folder_that_makes_no_files_says_it_cannot_be_written_there(tmp_path, capsys):
    # Before: "/proc/x/m.npz: No such file or directory", as if a folder were missing (a missing
    # folder is made); /proc makes no new files or folders.
    data = tmp_path / "d.svm"
    data.write_text("1 1:2\n-1 2:1\n")
    say = "cannot be written there: /proc takes no new files or folders"
    one_line_error(*train(capsys, data, "/proc/x/m.npz")[::2], "/proc/x/m.npz: " + say)
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    one_line_error(
        *call(capsys, "predict", tmp_path / "m.npz", data, "--out", "/proc/p.txt")[::2], "/proc/p.txt: " + say
    )
    one_line_error(*call(capsys, "export", "iris", "--target", "Species", "--out", "/proc/x/i.csv")[::2], say)


def test_a_configs_learner_hints_name_its_keys_not_trains_options(tmp_path, capsys):
    # Before: a config's passive_aggressive on a real-valued target was told "--set
    # loss=epsilon_insensitive" and "--task binary|multiclass (data.task in a config)", and a binary
    # learner on three classes "--learner one_vs_rest --set base.kind=pegasos": options of train.
    real, three = tmp_path / "r.csv", tmp_path / "m.csv"
    real.write_text("a,y\n1,0.5\n2,1.7\n3,2.2\n")
    three.write_text("a,y\n1,a\n2,b\n3,c\n")
    cases = (
        (real, "passive_aggressive", "(learner.loss = 'epsilon_insensitive')", "learner.loss = 'epsilon_insensitive'"),
        (
            three,
            "pegasos",
            "use learner.kind = 'one_vs_rest' with learner.base.kind = 'pegasos'",
            "learner.base.kind = 'pegasos'",
        ),
    )
    for data, kind, hint, fix in cases:
        config = f'name = "r"\nlearner.kind = "{kind}"\n[data]\nsource = "{data}"\nformat = "csv"\ntarget = "y"\n'
        line = one_line_error(*run_config(capsys, tmp_path, config)[::2], "c.toml", hint)
        assert " --" not in line
        if kind == "pegasos":
            config = config.replace('"pegasos"', '"one_vs_rest"')
        assert run_config(capsys, tmp_path, fix + "\n" + config)[0] == 0  # what the message says to write runs
    err = train(capsys, real, tmp_path / "m.npz", "--format", "csv", "--target", "y")[2]
    one_line_error(2, err, "passive_aggressive --set loss=epsilon_insensitive", "--task binary|multiclass")


def test_svmlight_indices_out_of_order_are_refused_naming_file_line_and_index(tmp_path, capsys):
    # Before: ``1 3:1 2:5`` was read as given, with status 0; libsvm refuses it ("Wrong input
    # format") and scikit-learn's load_svmlight_file too ("should be sorted and unique").
    data = tmp_path / "d.svm"
    data.write_text("1 1:2 3:1\n-1 2:1\n1 3:1 2:5\n")
    say = ("d.svm, line 3: feature index 2 comes after 3", "ascend", "sort them")
    one_line_error(*train(capsys, data, tmp_path / "m.npz")[::2], *say)
    with pytest.raises(DataError, match="d.svm, line 3: feature index 2 comes after 3"):
        read_svmlight(data)
    assert not (tmp_path / "m.npz").exists()
    data.write_text("1 1:2 3:1\n-1 2:1\n1 2:5 3:1\n")  # (sorted: read)
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    bad = tmp_path / "b.svm"
    bad.write_text("1 1:2\n1 qid:4 7:1 5:2 # a comment 1:1\n-1 2:1\n")  # (after a qid, with a comment)
    for command in ("test", "predict"):
        one_line_error(
            *call(capsys, command, tmp_path / "m.npz", bad)[::2], "b.svm, line 2: feature index 5 comes after 7"
        )
    skipped = train(capsys, bad, tmp_path / "m.npz", "--skip-bad")  # (a malformed line like any other)
    assert skipped[0] == 0 and load(tmp_path / "m.npz").settings["skipped_lines"] == 1


def test_a_class_list_with_one_number_written_two_ways_is_refused_naming_the_option(tmp_path, capsys):
    # Before: --labels=0,0.0,1 said "a binary learner needs exactly two labels, the data has 3",
    # naming no option; with --task multiclass, or as a config's data.labels, it trained three
    # classes with status 0, one no row reaches: classes match numbers by value, '0' and '0.0' are one.
    data = tmp_path / "d.svm"
    data.write_text("1 1:2\n0 2:1\n1 1:1\n")
    err = train(capsys, data, tmp_path / "m.npz", "--labels=0,0.0,1")[2]
    one_line_error(2, err, "--labels", "'0' and '0.0' are one number written two ways")
    assert train(capsys, data, tmp_path / "m.npz", "--labels=0,1")[0] == 0
    table = f"name = 'c'\n[learner]\nkind = 'perceptron'\n[data]\nformat = 'svmlight'\nsource = '{data}'\n"
    for labels, words in (('["-1", "-1.0", "1"]', "'-1' and '-1.0' are one number"), ('["1"]', "names one label")):
        err = run_config(capsys, tmp_path, table + f"labels = {labels}\n")[2]
        one_line_error(2, err, "c.toml: 'data.labels'", words)
    assert run_config(capsys, tmp_path, table + 'labels = ["0", "1"]\n')[0] == 0


def test_a_configs_declared_task_is_named_as_its_key_not_as_trains_option(tmp_path, capsys):
    # Before: "n.csv: --task binary needs exactly two labels": a config has no --task.
    names = tmp_path / "n.csv"
    names.write_text("a,y\n1,p\n2,q\n3,r\n")
    config = f"name = 'c'\n[learner]\nkind = 'ogd'\n[data]\nsource = '{names}'\ntarget = 'y'\n"
    cases = (("csv", "binary", "needs exactly two labels"), ("csv", "regression", "needs numeric targets"))
    for fmt, task, words in (*cases, ("table", "regression", "needs numeric targets")):
        columns = "features = ['a']\n" if fmt == "table" else ""
        text = config + f"format = '{fmt}'\ntask = '{task}'\n{columns}"
        line = one_line_error(*run_config(capsys, tmp_path, text)[::2], f"n.csv: data.task = '{task}' {words}")
        assert "--task" not in line
    for _, task, words in cases:  # (train's option, as before)
        err = train(capsys, names, tmp_path / "m.npz", "--format", "csv", "--target", "y", "--task", task)[2]
        one_line_error(2, err, f"n.csv: --task {task} {words}")
    study = tmp_path / "s.toml"  # (a study's data set declares it as its key ``datasets[0].task``)
    text = (
        f"name = 's'\n[[datasets]]\nkind = 'file'\nsource = '{names}'\nformat = 'csv'\ntarget = 'y'\ntask = 'binary'\n"
    )
    study.write_text(text + "[learners.p]\nkind = 'perceptron'\n")
    err = call(capsys, "study", study, "--out", tmp_path / "st")[2]
    one_line_error(2, err, "s.toml: data set 'n': ", "n.csv: datasets[0].task = 'binary' needs exactly two labels")


def test_a_folder_given_as_a_data_file_says_it_is_a_folder_and_names_the_text_format(tmp_path, capsys):
    # Before: "ocolearn: error: docs: Is a directory", the system's words, in train, test and predict.
    (tmp_path / "docs" / "pos").mkdir(parents=True)
    data = tmp_path / "d.svm"
    data.write_text("1 1:2\n-1 2:1\n")
    say = ("docs: a folder, not a data file (if this is a folder of documents, ",)
    for fmt in ("svmlight", "csv", "mira"):
        target = ("--target", "y") if fmt == "csv" else ()
        err = train(capsys, tmp_path / "docs", tmp_path / "m.npz", "--format", fmt, *target)[2]
        one_line_error(2, err, *say, "give the format text)")
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    for command in ("test", "predict"):  # (their format is the model's: see the test of every pair below)
        one_line_error(*call(capsys, command, tmp_path / "m.npz", tmp_path / "docs")[::2], *say, "--format text)")


@pytest.mark.parametrize("cell", ["inf", "-inf", "1e39"])
def test_a_regression_target_beyond_float32_names_its_value_not_a_missing_label(tmp_path, capsys, cell):
    # Before: "r.csv, line 3: no label, or one that is not a finite float32 number", for a
    # target that is there; a target of 1e39 overflows float32 as a feature does.
    data = tmp_path / "r.csv"
    data.write_text(f"a,y\n1,0.5\n2,{cell}\n3,2.5\n")
    options = ("--format", "csv", "--target", "y", "--task", "regression", "--quiet")
    err = call(capsys, "train", "--learner", "ogd", data, "--model", tmp_path / "m.npz", *options)[2]
    one_line_error(2, err, f"r.csv, line 3: target '{cell}' is not a finite number in float32 (at most 3.403e+38)")


def test_a_configs_list_keys_are_named_as_lists_of_strings(tmp_path, capsys):
    # Before: "'data.features' must be a list of a string", "true or false or a list of a string".
    base = 'name = "x"\n' + IRIS + '[learner]\nkind = "ogd"\n'
    cases = (
        (
            base.replace('features = ["Sepal.Width", "Petal.Length"]', 'features = "Sepal.Width"'),
            "must be a list of strings, got 'Sepal.Width'",
        ),
        (
            base.replace("[learner]", 'batch_scale = "yes"\n[learner]'),
            "must be true or false, or a list of strings, got 'yes'",
        ),
    )
    for text, words in cases:
        one_line_error(*run_config(capsys, tmp_path, text)[::2], "c.toml: 'data.", words)


def test_listed_labels_are_the_classes_and_must_agree_with_the_declared_task(tmp_path, capsys):
    # Before: --labels with --task regression (or with real-valued targets, inferred regression)
    # was ignored with status 0; --labels=-1,1,2 --task binary said "a binary learner needs exactly
    # two labels, the data has 3", naming no option; a label outside --labels was the first one in
    # sorted order ('3.3', line 5), not the first in the file (line 3).
    data, real = tmp_path / "d.svm", tmp_path / "r.csv"
    data.write_text("1 1:2\n-1 2:1\n1 1:1\n")
    real.write_text("a,y\n1,3.5\n2,4.1\n3,4.4\n4,3.3\n")
    err = train(capsys, data, tmp_path / "m.npz", "--labels=-1,1,2", "--task", "binary")[2]
    one_line_error(2, err, "d.svm: --task binary needs exactly two labels; --labels lists 3")
    options = ("--labels=-1,1", "--task", "regression", "--quiet")
    err = call(capsys, "train", "--learner", "ogd", data, "--model", tmp_path / "m.npz", *options)[2]
    one_line_error(2, err, "d.svm: --labels lists classes, but --task regression has none")
    options = ("--format", "csv", "--target", "y", "--labels=3.5,4.1", "--quiet")
    err = call(capsys, "train", "--learner", "ogd", real, "--model", tmp_path / "m.npz", *options)[2]
    one_line_error(2, err, "r.csv, line 4: label '4.4' is not one of --labels ['3.5', '4.1']")
    assert not (tmp_path / "m.npz").exists()
    table = f"name = 'c'\n[learner]\nkind = 'ogd'\n[data]\nformat = 'svmlight'\nsource = '{data}'\n"
    err = run_config(capsys, tmp_path, table + "labels = ['-1', '1']\ntask = 'regression'\n")[2]
    one_line_error(2, err, "c.toml: data.labels lists classes, but data.task = 'regression' has none")


def test_a_misspelt_option_or_a_part_key_one_level_up_names_the_one_meant(tmp_path, capsys):
    # Before: "unrecognized arguments: --pases 3", and "--set eta=1" to OGD "unknown key
    # 'learner.eta'; valid keys: kind, loss, schedule, projection, intercept", no hint of either.
    data = tmp_path / "d.svm"
    data.write_text("1 1:2\n-1 2:1\n")
    err = train(capsys, data, tmp_path / "m.npz", "--pases=3", "--sede", "2")[2]
    one_line_error(2, err, "unrecognized arguments: --pases=3 --sede 2", "(--pases: did you mean --passes?)", "--seed?")
    assert "did you mean" not in train(capsys, data, tmp_path / "m.npz", "--zzzzzz")[2]
    # (before the command: was "the following arguments are required: command")
    one_line_error(
        *call(capsys, "--verison")[::2], "unrecognized arguments: --verison (--verison: did you mean --version?)"
    )
    # An option of another command is not a misspelling of itself (was "(--model: did you mean
    # --model?)": the hint read every command's options); test reads the model as its first argument.
    err = call(capsys, "test", data, "--model", tmp_path / "m.npz")[2]
    one_line_error(2, err, "unrecognized arguments: --model (--model is an option of train, not of test)")
    err = call(capsys, "train", "--learner", "ogd", "--set", "eta=1", data, "--model", tmp_path / "m.npz")[2]
    one_line_error(2, err, "--set: unknown key 'learner.eta' (did you mean 'schedule.eta'?)")
    assert (
        call(capsys, "train", "--learner", "ogd", "--set", "schedule.eta=1", data, "--model", tmp_path / "m.npz")[0]
        == 0
    )
    config = f"name = 'c'\n[learner]\nkind = 'ogd'\neta = 0.1\n[data]\nformat = 'svmlight'\nsource = '{data}'\n"
    one_line_error(
        *run_config(capsys, tmp_path, config)[::2], "c.toml: unknown key 'learner.eta' (did you mean 'schedule.eta'?)"
    )


def test_a_document_that_is_not_utf8_is_an_error_naming_it_not_read_with_words_replaced(tmp_path, capsys):
    # Before: a Latin-1 document's "café" was read as "caf" (its byte replaced by U+FFFD, no
    # word) with status 0, where every other reader says "not UTF-8 text".
    for label, text in (("pos", "un bon café\n".encode("latin-1")), ("neg", b"awful film\n")):
        (tmp_path / "docs" / label).mkdir(parents=True)
        (tmp_path / "docs" / label / "a.txt").write_bytes(b"fine words\n" + text)
    say = "a.txt, line 2: not UTF-8 text"
    err = train(capsys, tmp_path / "docs", tmp_path / "m.npz", "--format", "text")[2]
    one_line_error(2, err, str(tmp_path / "docs" / "pos" / "a.txt"), say)
    (tmp_path / "docs" / "pos" / "a.txt").write_text("fine words\nun bon café\n")  # (UTF-8: read)
    assert train(capsys, tmp_path / "docs", tmp_path / "m.npz", "--format", "text")[0] == 0
    (tmp_path / "d.txt").write_bytes("café\n".encode("latin-1"))
    one_line_error(*call(capsys, "predict", tmp_path / "m.npz", tmp_path / "d.txt")[::2], "d.txt, line 1: not UTF-8")


def test_a_csv_header_alone_and_a_sweep_of_a_learner_without_numbers_say_what_is_missing(tmp_path, capsys):
    # Before: "h.csv: no examples (every line is blank, a comment or skipped)", for a CSV file
    # (no comments) of a header alone; a sweep of the Perceptron, which has no numbers, "unknown key
    # 'sweep.values.learner.a'; valid keys: " (an empty list).
    data = tmp_path / "h.csv"
    data.write_text("a,b,y\n")
    err = train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[2]
    one_line_error(2, err, "h.csv: no examples (no rows after the header line)")
    config = 'name = "x"\n' + IRIS + '[learner]\nkind = "perceptron"\n[sweep]\nvalues = { "learner.a" = [1, 2] }\n'
    err = run_config(capsys, tmp_path, config, "sweep")[2]
    one_line_error(2, err, "c.toml: '[sweep]': learner 'perceptron' has no numbers to sweep")


@pytest.mark.parametrize(
    "rows, line",
    [
        ('1,"big\ncat"\n2,dog\n3,"big\ncat"\n', 2),  # a line break in quotes: was the class 'bigcat'
        ('1,cat\n2,dog\n3,"dog\n', 4),  # a quote left open on the last line: was the class 'dog'
        ('1,cat\n2,"dog"s\n3,cat\n', 3),  # text after a closing quote: was the class 'dogs'
    ],
)
def test_a_csv_row_that_is_not_one_line_of_csv_is_refused_naming_its_line(tmp_path, capsys, rows, line):
    # Before: each was read with status 0, the label changed: the rows are cut into lines (and
    # into blocks at line ends), so a quoted line break lost its newline and numbered lines wrongly.
    data = tmp_path / "q.csv"
    data.write_text("a,y\n" + rows)
    err = train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[2]
    one_line_error(2, err, f"q.csv, line {line}: ")
    with pytest.raises(DataError, match=f"q.csv, line {line}: "):
        read_csv(data)
    data.write_text('a,y\n1,"big, black cat"\n2,dog\n')  # (quotes within a line: read)
    assert train(capsys, data, tmp_path / "m.npz", "--format", "csv", "--target", "y")[0] == 0
    assert load(tmp_path / "m.npz").labels == ["big, black cat", "dog"]


def test_an_output_that_is_a_device_or_a_pipe_is_refused_and_a_link_is_written_through(tmp_path, capsys):
    # Before: --model /dev/null (or predict --out /dev/stdout) "wrote /dev/null" with status 0: the
    # atomic write's rename put a plain file in the device's place (as root, /dev/null itself); a
    # link to a file was replaced by a file, the file it points to left as it was.
    data = tmp_path / "d.svm"
    data.write_text("1 1:2\n-1 2:1\n")
    device, fifo, link, real = tmp_path / "null", tmp_path / "fifo", tmp_path / "link.txt", tmp_path / "real.txt"
    device.symlink_to(os.devnull)  # (a link in our folder: a failing fix replaces the link, not the device)
    os.mkfifo(fifo)
    say = "is a device, a pipe or a socket, not a file"
    one_line_error(*train(capsys, data, device)[::2], f"{device}: {say}")
    assert train(capsys, data, tmp_path / "m.npz")[0] == 0
    for out in (device, fifo):
        one_line_error(*call(capsys, "predict", tmp_path / "m.npz", data, "--out", out)[::2], f"{out}: {say}")
    assert device.is_symlink() and fifo.is_fifo() and os.path.exists(os.devnull)
    real.write_text("old\n")
    link.symlink_to(real)
    status, out, _ = call(capsys, "predict", tmp_path / "m.npz", data)
    assert call(capsys, "predict", tmp_path / "m.npz", data, "--out", link)[0] == 0 == status
    assert link.is_symlink() and real.read_text() == out


def test_an_index_0_in_a_one_based_file_names_the_option_that_reads_it(tmp_path, capsys):
    # Before: "index 0 in a file read as 1-based (read it as zero-based)", naming no option.
    data = tmp_path / "z.svm"
    data.write_text("1 0:1 2:1\n-1 1:1\n")
    one_line_error(*train(capsys, data, tmp_path / "m.npz")[::2], "z.svm, line 1: index 0", "--zero-based")
    assert train(capsys, data, tmp_path / "m.npz", "--zero-based")[0] == 0


@pytest.mark.parametrize("fmt", ["svmlight", "text"])
def test_a_dash_for_the_standard_input_says_a_file_is_needed(tmp_path, capsys, fmt):
    # Before: "-: no such file" (and "-: no such file or folder" for a text model), as if a file
    # named - were missing; the standard input cannot be read twice.
    data = tmp_path / "d"
    if fmt == "text":
        for label in ("pos", "neg"):
            (data / label).mkdir(parents=True)
            (data / label / "a.txt").write_text(f"{label} words\n")
    else:
        data.write_text("1 1:2\n-1 2:1\n")
    assert train(capsys, data, tmp_path / "m.npz", "--format", fmt)[0] == 0
    for command in ("predict", "test"):
        err = call(capsys, command, tmp_path / "m.npz", "-")[2]
        one_line_error(2, err, "-: the standard input, but ocolearn needs a data file it can seek in")
    one_line_error(*train(capsys, "-", tmp_path / "m.npz")[::2], "-: the standard input")


def test_at_train_time_a_label_outside_the_listed_ones_names_labels_not_a_model(tmp_path, capsys):
    # Before: "a.svm, line 3: label '3' is not one of the model's labels ['1', '-1']" (and a line
    # without a label "(predict needs none)"), from train and run, where there is no model yet.
    data, unlabelled = tmp_path / "a.svm", tmp_path / "nl.svm"
    data.write_text("1 1:2\n-1 2:1\n3 1:1\n")
    unlabelled.write_text("1 1:2\n2:1\n")
    err = train(capsys, data, tmp_path / "m.npz", "--labels=1,-1")[2]
    one_line_error(2, err, "a.svm, line 3: label '3' is not one of --labels ['1', '-1']")
    err = train(capsys, unlabelled, tmp_path / "m.npz", "--labels=1,-1", "--dim", "3")[2]
    one_line_error(
        2, err, "nl.svm, line 2: no label, where one of --labels ['1', '-1'] is needed (training needs labels)"
    )
    table = f"name = 'c'\n[learner]\nkind = 'perceptron'\n[data]\nformat = 'svmlight'\nsource = '{data}'\n"
    err = run_config(capsys, tmp_path, table + "labels = ['1', '-1']\n")[2]
    one_line_error(2, err, "a.svm, line 3: label '3' is not one of data.labels ['1', '-1']")
    iris = "[data]\nformat = 'table'\nsource = 'iris'\ntarget = 'Species'\nfeatures = ['Sepal.Length']\n"
    err = run_config(
        capsys, tmp_path, "name = 'c'\n[learner]\nkind = 'perceptron'\n" + iris + "labels = ['setosa', 'x']\n"
    )[2]
    one_line_error(2, err, "label 'versicolor' is not one of data.labels ['setosa', 'x']")
    assert not (tmp_path / "m.npz").exists()
    assert train(capsys, data, tmp_path / "m.npz", "--labels=1,-1,3")[0] == 0  # (a model's labels: as before)
    data.write_text("1 1:2\n7 2:1\n")
    err = call(capsys, "test", tmp_path / "m.npz", data)[2]
    one_line_error(2, err, "a.svm, line 2: label '7' is not one of the model's labels ['1', '-1', '3']")


def test_at_train_time_a_feature_beyond_dim_names_the_option_not_a_model(tmp_path, capsys):
    # Before: "b.svm, line 2: feature index 3 is beyond the model's 2 features", with no model yet.
    data = tmp_path / "b.svm"
    data.write_text("1 1:2\n-1 3:1\n")
    one_line_error(
        *train(capsys, data, tmp_path / "m.npz", "--dim", "2")[::2], "b.svm, line 2: ", "2 features of --dim"
    )
    table = f"name = 'c'\n[learner]\nkind = 'perceptron'\n[data]\nformat = 'svmlight'\nsource = '{data}'\n"
    one_line_error(*run_config(capsys, tmp_path, table + "dim = 2\n")[::2], "b.svm, line 2: ", "features of data.dim")
    assert train(capsys, data, tmp_path / "m.npz", "--dim", "3")[0] == 0
    data.write_text("1 1:2\n-1 4:1\n")
    err = call(capsys, "test", tmp_path / "m.npz", data)[2]  # (a model's dimension: as before)
    one_line_error(2, err, "b.svm, line 2: feature index 4 is beyond the model's 3 features")


@pytest.mark.parametrize(
    "labels, words",
    [
        ('["0", "0.0", "1"]', "the labels '0' and '0.0' are one number written two ways"),  # was 3 classes, status 0
        ('["0", "0"]', "the label '0' is repeated"),
        ('["1"]', "'1' names one label; give two or more"),
        ('["", "1"]', "label 1 is empty"),
    ],
)
def test_a_studys_listed_labels_are_checked_by_the_rule_of_every_list_of_labels(tmp_path, capsys, labels, words):
    # Before: ["0", "0.0", "1"] trained three classes with status 0; the others read the file and
    # said "label '1' is not one of the model's labels ['0', '0']" and the like.
    data, study = tmp_path / "s.svm", tmp_path / "s.toml"
    data.write_text("0 1:1\n1 2:1\n" * 5)
    text = f"name = 's'\n[[datasets]]\nkind = 'file'\nsource = '{data}'\nlabels = {labels}\n"
    text += "[learners.p]\nkind = 'perceptron'\n"
    study.write_text(text)
    one_line_error(
        *call(capsys, "study", study, "--out", tmp_path / "st")[::2], "s.toml: 'datasets[0].labels': ", words
    )
    study.write_text(text.replace(f"labels = {labels}", "labels = ['0', '1']\ntask = 'regression'"))
    err = call(capsys, "study", study, "--out", tmp_path / "st")[2]
    one_line_error(2, err, "s.toml: datasets[0].labels lists classes, but datasets[0].task = 'regression' has none")
    assert not (tmp_path / "st").exists()


def test_export_to_a_folder_says_it_is_a_folder_as_every_output_does(tmp_path, capsys):
    # Before: "out: Is a directory", the system's words (train's --model and predict's --out said
    # "is a folder; give a file name"): export wrote through atomic_write, which did not check.
    folder = tmp_path / "out"
    folder.mkdir()
    for fmt in ("csv", "svmlight"):
        err = call(capsys, "export", "iris", "--target", "Species", "--format", fmt, "--out", folder)[2]
        one_line_error(2, err, f"{folder}: is a folder; give a file name")
    assert list(folder.iterdir()) == []
    assert call(capsys, "export", "iris", "--target", "Species", "--out", folder / "iris.csv")[0] == 0


@pytest.mark.parametrize("ends", ["0.0, 10.0", "0.1, 0"])
def test_a_geomspace_from_or_to_zero_is_one_line_naming_its_key_in_a_sweep_and_a_study(tmp_path, capsys, ends):
    # Before: a traceback, numpy's "ValueError: Geometric sequence cannot include zero", status 1.
    grid = f"{{ geomspace = [{ends}, 9] }}"
    config = 'name = "x"\n' + IRIS + '[learner]\nkind = "ogd"\n[sweep]\nseeds = 2\n[sweep.values]\n'
    err = run_config(capsys, tmp_path, config + f'"learner.schedule.eta" = {grid}\n', "sweep")[2]
    one_line_error(2, err, "c.toml: 'sweep.values.learner.schedule.eta': geomspace's start and stop must not be 0")
    study = tmp_path / "s.toml"
    study.write_text(
        f"name = 's'\n[[datasets]]\nkind = 'bundled'\nsource = 'iris'\n[learners.pa]\nkind = 'passive_aggressive'\n"
        f"[learners.pa.tune]\nC = {grid}\n"
    )
    err = call(capsys, "study", study, "--out", tmp_path / "st")[2]
    one_line_error(2, err, "s.toml: ", "C': geomspace's start and stop must not be 0")
    assert not (tmp_path / "out").exists() and not (tmp_path / "st").exists()


def test_train_refuses_set_kind_naming_another_learner_than_learner(tmp_path, capsys):
    # Before: --learner perceptron --set kind=ogd trained OGD (the model's learner: ogd, progressive
    # loss 0.5525, not the Perceptron's 0.5) and reported "trained perceptron (binary)", status 0.
    data = tmp_path / "d.svm"
    data.write_text("+1 1:1\n-1 2:1\n")
    err = train(capsys, data, tmp_path / "m.npz", "--set", "kind=ogd")[2]
    one_line_error(2, err, "--set kind=ogd: the learner is --learner perceptron; give --learner ogd")
    assert not (tmp_path / "m.npz").exists()
    assert train(capsys, data, tmp_path / "m.npz", "--set", "kind=perceptron")[0] == 0  # (the same learner)
    assert load(tmp_path / "m.npz").settings["learner"]["kind"] == "perceptron"


def test_a_mira_name_holding_a_hash_is_read_and_a_hash_standing_alone_starts_a_comment(tmp_path, capsys):
    # Before: everything from '#' on was a comment, as in svmlight: 'pos #happy love' was the label
    # 'pos' with no features and 'C# java' the feature 'C', silently (status 0).
    from ocolearn.data.mira import read_mira
    from ocolearn.data.sparse_text import feature_hash

    data = tmp_path / "t.mira"
    data.write_text("# a comment line\npos #happy love\nneg sad # a comment\n  # another\npos C# java\r\nneg x\t#\ty\n")
    read = read_mira(data, bits=8)
    assert read.labels == ["neg", "pos"] and list(read.lines) == [2, 3, 5, 6] and list(read.y) == [1, 0, 1, 0]
    rows = read.X.todense()
    names = (["#happy", "love"], ["sad"], ["C#", "java"], ["x"])
    for row, words in zip(rows, names, strict=True):
        expected = np.zeros(256)
        for word in words:
            expected[feature_hash(word, 8)] += 1
        np.testing.assert_array_equal(row, expected)
    assert train(capsys, data, tmp_path / "m.npz", "--format", "mira", "--bits", "8")[0] == 0


@pytest.mark.parametrize(
    "keys, words",
    [
        ("target = 'y'\n", "'datasets[0].target' applies to format csv, not to 'svmlight'"),
        ("format = 'csv'\ntarget = 'y'\nbits = 3\n", "'datasets[0].bits' applies to format svmlight or mira or text"),
        ("format = 'csv'\ntarget = 'y'\ndim = 4\n", "'datasets[0].dim' applies to format svmlight, not to 'csv'"),
        ("format = 'mira'\nzero_based = true\n", "'datasets[0].zero_based' applies to format svmlight, not to 'mira'"),
    ],
)
def test_a_studys_file_reading_setting_its_format_does_not_read_is_refused_as_in_a_config(
    tmp_path, capsys, keys, words
):
    # Before: each ran with status 0, the setting silently ignored (train's options and a config's
    # [data] keys are refused alike).
    study = tmp_path / "s.toml"
    data = tmp_path / "d"  # (refused before it is read)
    study.write_text(
        f"name = 's'\n[[datasets]]\nkind = 'file'\nsource = '{data}'\n{keys}[learners.p]\nkind = 'perceptron'\n"
    )
    one_line_error(*call(capsys, "study", study, "--out", tmp_path / "st")[::2], f"s.toml: {words}")
    assert not (tmp_path / "st").exists()


def test_holdout_0_is_none_as_its_default_and_1_names_what_it_takes(tmp_path, capsys):
    # Before: '--holdout 0', the default's own value, was refused with "0 is not in 2..".
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 1:-1\n1 1:2\n-1 1:-3\n")
    plain = tmp_path / "plain.npz"
    assert train(capsys, data, plain)[0] == 0
    assert train(capsys, data, tmp_path / "zero.npz", "--holdout", "0")[0] == 0
    np.testing.assert_array_equal(np.load(plain)["w"], np.load(tmp_path / "zero.npz")["w"])
    one_line_error(*train(capsys, data, tmp_path / "m.npz", "--holdout", "1")[::2], "1 is not a whole number >= 2")


def test_a_key_set_twice_is_refused_not_overridden_in_silence(tmp_path, capsys):
    # Before: '--set loss=logistic --set loss=hinge' trained the hinge loss with status 0.
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 1:-1\n")
    twice = ("--set", "loss=logistic", "--set", "loss=hinge")
    status, _, err = call(capsys, "train", "--learner", "ogd", *twice, data, "--model", tmp_path / "m.npz")
    one_line_error(status, err, "--set loss=hinge: 'loss' is set twice; give it once")
    assert not (tmp_path / "m.npz").exists()
    once = ("--set", "loss=logistic", "--set", "schedule.eta=0.5")
    assert call(capsys, "train", "--learner", "ogd", *once, data, "--model", tmp_path / "m.npz", "--quiet")[0] == 0


# A newcomer's trial of seeded runs and sweeps ----------------------------------------------------

SWEEP = (
    '[learner]\nkind = "ogd"\nloss = "squared"\n[sweep]\nseeds = 2\n[sweep.values]\n"learner.schedule.eta" = [0.1]\n'
)


@pytest.mark.parametrize(
    "text, command, error",
    [
        # Before: "'sweep.validation' must be in [0, 1) and 'sweep.seeds' >= 0", the value not shown.
        (SWEEP.replace("seeds = 2", "seeds = -1"), "sweep", "'sweep.seeds' must be a number of orders >= 0, got -1"),
        (
            SWEEP.replace("seeds = 2", "validation = 1.0"),
            "sweep",
            "'sweep.validation' must be a fraction in [0, 1), got 1.0",
        ),
        # Before: "passes: 14316558 passes over ...": neither the file nor the config's key.
        (
            '[learner]\nkind = "ogd"\n[run]\npasses = 14316558\n',
            "run",
            "run.passes: 14316558 passes over 150 rows are 2147483700 rounds, more than 2147483647",
        ),
        (
            SWEEP + "[run]\npasses = 14316558\n",
            "sweep",
            "run.passes: 14316558 passes over 150 rows are 2147483700 rounds, more than 2147483647",
        ),
        # Before: "learner.levels = 3 lets flh run 6 rounds, ...", not naming the file.
        (
            '[learner]\nkind = "flh"\nlevels = 3\n',
            "run",
            "learner.levels = 3 lets flh run 6 rounds, and this run goes to round 150; raise learner.levels",
        ),
        # Before: a traceback, "FLH.__init__() got an unexpected keyword argument 'classes'" (FLH's
        # classes is its experts', not a field set from the data); now as train refuses it.
        (
            '[learner]\nkind = "flh"\n',
            "run",
            "3 labels (a multiclass task), but 'flh' is a binary learner; use learner.kind = 'one_vs_rest' with "
            "learner.base.kind = 'flh', or a multiclass learner (perceptron, passive_aggressive, mira, cw, arow, scw)",
        ),
    ],
)
def test_a_configs_seeds_passes_and_rounds_are_refused_naming_the_file_and_key(tmp_path, capsys, text, command, error):
    data = IRIS.replace('"Petal.Width"', '"Species"') if "flh" in text and "levels" not in text else IRIS
    status, _, err = run_config(capsys, tmp_path, 'name = "x"\n' + data + text, command)
    assert (status, err) == (2, f"ocolearn: error: {tmp_path / 'c.toml'}: {error}\n")


def test_an_estimators_seed_beyond_32_bits_and_rounds_beyond_int32_are_refused_naming_the_parameter(capsys):
    # Before: random_state=-1 fitted the very weights of 4294967295, and 2**32 those of 0 (JAX keeps
    # a seed's low 32 bits); max_iter past int32's rounds was "passes: ...", a name the estimator has not.
    pytest.importorskip("sklearn")
    from ocolearn import FLH
    from ocolearn.estimators import OnlineClassifier, OnlineRegressor

    X, y = np.eye(3)[[0, 1, 2, 0, 1, 2]], np.array([0, 1, 0, 1, 0, 1])
    for seed in (-1, 2**32, True):
        with pytest.raises(ValueError) as e:
            OnlineClassifier("pegasos", random_state=seed).fit(X, y)
        assert str(e.value) == (
            "random_state must be None (the rows' own order) or an integer 0..4294967295 (each pass shuffled), "
            f"got {seed}"
        )
    with pytest.raises(ValueError) as e:
        OnlineClassifier("pegasos", max_iter=400_000_000).fit(X, y)
    assert str(e.value) == "max_iter: 400000000 passes over 6 rows are 2400000000 rounds, more than 2147483647"
    # The same rule as every door's (checks.check_rounds) for a state carried from call to call, and
    # for a learner's own limit over the whole fit, before its first pass: a verbose fit runs a call
    # per pass, and FLH's levels = 3 (6 rounds) failed in the second pass after printing the first.
    fitted = OnlineClassifier("pegasos").fit(X, y)
    fitted.state_ = fitted.state_._replace(inner=fitted.state_.inner._replace(t=np.int32(2**31 - 3)))
    with pytest.raises(ValueError) as e:
        fitted.partial_fit(X, y)
    assert str(e.value) == (
        "partial_fit: 1 pass over 6 rows from a state at round 2147483645 run to round 2147483650, more than 2147483647"
    )
    with pytest.raises(ValueError) as e:
        OnlineRegressor(FLH(levels=3), max_iter=2, verbose=1).fit(X, y.astype(float))
    assert (
        str(e.value) == "learner.levels = 3 lets flh run 6 rounds, and this run goes to round 12; raise learner.levels"
    )
    assert capsys.readouterr().out == ""
    top = OnlineClassifier("pegasos", max_iter=3, random_state=4294967295).fit(X, y).coef_
    np.testing.assert_array_equal(top, OnlineClassifier("pegasos", max_iter=3, random_state=4294967295).fit(X, y).coef_)


@pytest.mark.parametrize(
    "command, config, option, key",
    [
        ("run", "iris_ridge_magic.toml", "--seed", "run.shuffle_seed"),  # (before: "did you mean --set?")
        ("run", "iris_ridge_magic.toml", "--passes", "run.passes"),  # (before: "an option of train, not of run")
        ("sweep", "iris_sweep.toml", "--seeds", "sweep.seeds"),  # (before: nothing said)
    ],
)
def test_trains_seed_and_passes_given_to_run_or_sweep_name_the_configs_key(capsys, command, config, option, key):
    status, _, err = call(capsys, command, f"configs/{config}", option, "3")
    assert (status, err) == (
        2,
        f"ocolearn: error: unrecognized arguments: {option} 3 ({option}: a config's key; --set {key}=N)\n",
    )


@pytest.mark.parametrize(
    "option, keys",
    [
        (  # (before: "did you mean --set?", and a study has no key 'seed')
            "--seed",
            "a study's keys; --set evaluate.tune_seed=N or evaluate.test_seed=N, the seeds choosing the tuning and "
            "test rows, or datasets[I].seed=N, a synthetic data set's; its orders are shuffled by seeds 0, 1, ...",
        ),
        ("--seeds", "a study's key; --set evaluate.orders=N, the number of orders (shuffles by seeds 0, 1, ...)"),
    ],
)
def test_seeds_given_to_study_name_the_study_files_keys(capsys, option, keys):
    status, _, err = call(capsys, "study", "configs/study_iris.toml", option, "3")
    assert (status, err) == (2, f"ocolearn: error: unrecognized arguments: {option} 3 ({option}: {keys})\n")


def test_train_refuses_more_passes_than_the_round_counter_holds_once_a_pass_is_read(capsys, tmp_path):
    # A stream's rows are known once its first pass is read: 10^9 passes over 3 rows ran on for
    # days, a run call per pass, before the int32 round counter would have been checked.
    data = tmp_path / "three.svm"
    data.write_text("1 1:1\n-1 1:-1\n1 1:2\n")
    status, _, err = call(
        capsys, "train", "--learner", "perceptron", data, "--model", tmp_path / "m.npz", "--passes", 10**9
    )
    one_line_error(status, err, f"{data}: --passes: 1000000000 passes over 3 rows are 3000000000 rounds, more than")
    assert not (tmp_path / "m.npz").exists()


def test_a_single_numeric_label_says_how_to_declare_a_regression(tmp_path, capsys):
    # Before: a constant whole-number target said only "classification needs two or more".
    data = tmp_path / "c.csv"
    data.write_text("x,y\n1,5\n2,5\n3,5\n")
    args = ["train", "--learner", "ogd", "--format", "csv", "--target", "y", data, "--model", tmp_path / "m.npz"]
    one_line_error(
        *call(capsys, *args, "--quiet")[::2],
        f"{data}: only one label, '5'; classification needs two or more; if it is a quantity to predict, "
        "declare --task regression",
    )
    assert call(capsys, *args, "--quiet", "--task", "regression")[0] == 0
    names = tmp_path / "n.csv"
    names.write_text("x,y\n1,a\n2,a\n")
    status, _, err = call(
        capsys, "train", "--learner", "ogd", "--format", "csv", "--target", "y", names, "--model", tmp_path / "n.npz"
    )
    assert (status, err) == (2, f"ocolearn: error: {names}: only one label, 'a'; classification needs two or more\n")


@pytest.mark.parametrize(
    "command, example",
    [
        (["train", "--learner", "perceptron", "d.svm", "--model", "m.npz"], "schedule.eta=0.1"),
        (["study", "configs/study_iris.toml"], "evaluate.orders=4"),
        (["run", "configs/iris_ridge_magic.toml"], "learner.schedule.eta=0.1"),
    ],
)
def test_a_malformed_set_shows_an_example_of_the_commands_own_keys(capsys, command, example):
    # Before: every door's example was a config's learner.schedule.eta, which train refuses
    # ("unknown key 'learner.learner'") and a study has not.
    status, _, err = call(capsys, *command, "--set", "C")
    assert (status, err) == (2, f"ocolearn: error: --set: 'C' is not of the form key=value (for example {example})\n")
