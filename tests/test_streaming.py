"""Streams: chunked runs equal whole ones, resumed runs equal uninterrupted ones (SIGKILL
included), compressed files, progress, and what every reader does with hard input."""

import bz2
import gzip
import io
import lzma
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import Stop, stopping_progress
from hypothesis import given, settings
from hypothesis import strategies as st

from ocolearn import MIRA, AdaGrad, Hinge, PassiveAggressive, Pegasos, Perceptron, run
from ocolearn.data import DataError
from ocolearn.data.sparse_text import sparse_rows
from ocolearn.data.stream import Source, chunks, scan
from ocolearn.data.svmlight import parse_svmlight, read_svmlight, svmlight_lines
from ocolearn.modelfile import load
from ocolearn.pipeline import TrainOptions, target_map, train_file
from ocolearn.streaming import Progress, run_stream


def svmlight_text(n=600, d=40, seed=0, labels=("-1", "1"), nnz=(1, 12)):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(len(labels), d))
    lines = []
    for i in range(n):
        k = rng.integers(*nnz)
        idx = np.sort(rng.choice(d, size=k, replace=False))
        val = np.round(rng.normal(size=k), 4)
        label = labels[int(np.argmax(w[:, idx] @ val))]
        comment = "  # a comment" if i % 97 == 0 else ""
        lines.append(f"{label} " + " ".join(f"{a + 1}:{b:g}" for a, b in zip(idx, val, strict=True)) + comment)
        if i % 53 == 0:
            lines.append("")  # blank lines are skipped
    return "\n".join(lines) + "\n"


def write(tmp_path, text, name="data.svm"):
    path = tmp_path / name
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix, open)
    with opener(path, "wb") as f:
        f.write(text.encode())
    return path


def whole(path, width, dim=40, zero_based=False):
    """The file as one padded array with the stream's width, and its class indices."""
    block = parse_svmlight(open(path, "rb").read(), 1, path)
    X = sparse_rows(block, dim, path, shift=0 if zero_based else 1, width=width)
    names = [f"{v:g}" for v in block.labels]
    labels = sorted(set(names), key=float)
    return X, np.array([labels.index(n) for n in names], np.int32), labels


LEARNERS = [Pegasos(0.01), PassiveAggressive(0.5), AdaGrad(0.2, loss=Hinge()), Perceptron()]


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda lrn: lrn.name)
@pytest.mark.parametrize("chunk_rows", [1, 64, 250, 5000])
def test_chunked_run_equals_the_whole_array_bit_for_bit(tmp_path, learner, chunk_rows):
    path = write(tmp_path, svmlight_text())
    found = scan(Source(str(path)))
    labels, dim, width = found.labels.names, found.dim, found.width
    assert dim == 40 and labels == ["-1", "1"] and found.labels.numeric and not found.sorted_labels
    X, y, _ = whole(path, width)
    targets = target_map(learner, labels)
    expected = run(learner, X, targets(y), passes=3, trace=False)
    source = Source(str(path), dim=40, labels=tuple(labels), width=width)
    got = run_stream(learner, source, targets=targets, passes=3, chunk_rows=chunk_rows)
    np.testing.assert_array_equal(learner.weights(got.state), learner.weights(expected.state))
    for a, b in zip(got.summary, expected.trace, strict=True):
        assert np.asarray(a) == np.asarray(b)  # the sums too, bit for bit
    assert got.rounds == 3 * 600 and sum(got.mistakes_per_pass) == int(expected.trace.mistakes)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_compressed_files_read_as_the_plain_one(tmp_path, suffix):
    text = svmlight_text(n=300, labels=("a", "b", "c")[:0] or ("-1", "1"))
    plain, packed = write(tmp_path, text), write(tmp_path, text, "data.svm" + suffix)
    for a, b in zip(read_svmlight(plain), read_svmlight(packed), strict=True):
        np.testing.assert_array_equal(np.asarray(getattr(a, "idx", a)), np.asarray(getattr(b, "idx", b)))
    source = Source(str(plain), dim=40, labels=("-1", "1"))
    one = run_stream(Pegasos(0.1), source, targets=target_map(Pegasos(), ("-1", "1")), chunk_rows=77)
    two = run_stream(
        Pegasos(0.1), source._replace(path=str(packed)), targets=target_map(Pegasos(), ("-1", "1")), chunk_rows=77
    )
    np.testing.assert_array_equal(Pegasos().weights(one.state), Pegasos().weights(two.state))


def test_chunks_carry_positions_to_resume_from(tmp_path):
    path = write(tmp_path, svmlight_text(n=200))
    source = Source(str(path), dim=40, labels=("-1", "1"))
    every = list(chunks(source, chunk_rows=30))
    assert [len(c.y) for c in every] == [30] * 6 + [20]
    later = list(chunks(source, every[2].end, chunk_rows=30))  # start after the third chunk
    for a, b in zip(later, every[3:], strict=True):
        np.testing.assert_array_equal(a.X.idx, b.X.idx)
        np.testing.assert_array_equal(a.y, b.y)
        assert a.end == b.end


def test_resume_from_a_checkpoint_equals_the_uninterrupted_run(tmp_path):
    path = write(tmp_path, svmlight_text(n=500))
    source = Source(str(path), dim=40, labels=("-1", "1"))
    targets = target_map(MIRA(), ("-1", "1")) if False else target_map(Pegasos(), ("-1", "1"))
    options = dict(targets=targets, passes=3, chunk_rows=64, seed=5)
    full = run_stream(Pegasos(0.02), source, **options)

    ckpt = tmp_path / "run.ckpt.npz"
    with pytest.raises(Stop):
        run_stream(
            Pegasos(0.02), source, checkpoint=ckpt, checkpoint_every=100, progress=stopping_progress(13), **options
        )
    resumed = run_stream(Pegasos(0.02), source, checkpoint=ckpt, checkpoint_every=100, resume=True, **options)
    np.testing.assert_array_equal(Pegasos().weights(resumed.state), Pegasos().weights(full.state))
    assert resumed.mistakes_per_pass == full.mistakes_per_pass and resumed.rounds == full.rounds
    for a, b in zip(resumed.summary, full.summary, strict=True):
        assert np.asarray(a) == np.asarray(b)
    with pytest.raises(DataError, match="another run"):
        run_stream(Pegasos(0.5), source, checkpoint=ckpt, resume=True, **options)


@pytest.mark.slow
def test_sigkill_midway_then_resume_gives_the_uninterrupted_model(tmp_path):
    path = write(tmp_path, svmlight_text(n=20000, d=200, nnz=(5, 30)))
    common = ["--learner", "passive_aggressive", "--labels=-1,1", "--dim", "200", "--passes", "2", "--quiet"]
    common += ["--chunk-rows", "500", "--checkpoint-every", "2000"]
    cli = [sys.executable, "-m", "ocolearn.cli", "train", str(path)]
    done = subprocess.run([*cli, *common, "--model", tmp_path / "full.npz", "--checkpoint", tmp_path / "a.npz"])
    assert done.returncode == 0
    ckpt = tmp_path / "b.npz"
    killed = subprocess.Popen([*cli, *common, "--model", tmp_path / "cut.npz", "--checkpoint", ckpt])
    deadline = time.time() + 120
    while not ckpt.exists() and time.time() < deadline and killed.poll() is None:
        time.sleep(0.002)
    killed.send_signal(signal.SIGKILL)  # at its first checkpoint: about 2,000 of 40,000 rounds
    killed.wait()
    assert killed.returncode == -signal.SIGKILL and not (tmp_path / "cut.npz").exists(), "killed too late"
    again = subprocess.run([*cli, *common, "--model", tmp_path / "cut.npz", "--checkpoint", ckpt, "--resume"])
    assert again.returncode == 0
    full, cut = load(tmp_path / "full.npz"), load(tmp_path / "cut.npz")
    np.testing.assert_array_equal(cut.w, full.w)
    assert cut.settings["mistakes_per_pass"] == full.settings["mistakes_per_pass"]
    # The kill may land inside a checkpoint's write: the temporary file is then left, never
    # a half-written checkpoint (the resume above read a whole one).
    assert all(p.name.startswith(".") for p in tmp_path.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize(
    "name, overrides, labels", [("mira", [], ("1", "2", "3")), ("pegasos", ["project=true"], ("-1", "1")),
                                ("winnow", [], ("-1", "1"))]
)  # fmt: skip
def test_train_file_streams_and_predicts_like_the_in_memory_model(tmp_path, name, overrides, labels):
    from ocolearn.modelfile import predict, scores
    from ocolearn.pipeline import build_learner, read_data, train

    text = svmlight_text(n=400, labels=labels)
    if name == "winnow":  # {0, 1} features, so that w . x can tie with the threshold
        text = re.sub(r":\S+", ":1", re.sub(r"#.*", "", text))
    path = write(tmp_path, text)
    streamed = train_file(name, overrides, path, TrainOptions(passes=4, chunk_rows=50, stop_early=True, dim=40))
    data = read_data(path, "svmlight", dim=40)
    in_memory = train(build_learner(name, overrides, len(labels)), data, passes=4, stop_early=True)
    assert streamed.labels == in_memory.labels == list(labels)
    assert streamed.settings["mistakes_per_pass"] == in_memory.settings["mistakes_per_pass"]
    np.testing.assert_allclose(streamed.w, in_memory.w, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(streamed.offset, in_memory.offset)
    np.testing.assert_allclose(scores(streamed, data.X), scores(in_memory, data.X), rtol=1e-6, atol=1e-6)
    assert predict(streamed, data.X) == predict(in_memory, data.X)
    assert len(streamed.settings["mistakes_per_pass"]) <= 4 and streamed.settings["rounds"] > 0


def test_progress_prints_plain_lines_off_a_terminal_and_nothing_when_quiet():
    out = io.StringIO()
    progress = Progress(out=out, every=0.0)
    progress.show(1000, 250.0, "pass 1/2")
    progress.show(2000, 300.0, "pass 2/2", final=True)
    lines = out.getvalue().splitlines()
    assert (
        len(lines) == 2
        and "rows 2,000" in lines[1]
        and "progressive learner loss 0.15" in lines[1]
        and "\r" not in out.getvalue()
    )
    quiet = io.StringIO()
    Progress(quiet=True, out=quiet).show(5, 1.0, "pass 1/1", final=True)
    assert quiet.getvalue() == ""


# Hard input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 1:0.5\n-1 2:oops\n", "line 2, feature 2: 'oops' is not a number"),
        ("1 1:0.5\n-1 2\n", "line 2: '2' is not of the form index:value"),
        ("1 1:nan\n", "line 1, feature 1: 'nan' is not a finite number"),
        ("inf 1:1\n", "line 1, label: 'inf' is not a finite number"),
        ("1 1:1\n1 -3:1\n", "line 2: '-3:1' is not of the form index:value"),
        ("1 1:1\n\n# only a comment\n1 x:1\n", "line 4"),
        ("1 1:1e400\n", "line 1, feature 1: '1e400' is not a finite number"),
    ],
)
def test_malformed_lines_name_file_line_and_form(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(DataError, match=message) as error:
        read_svmlight(path)
    assert str(path) in str(error.value)
    with pytest.raises(DataError, match=message):
        list(chunks(Source(str(path), dim=10, labels=("-1", "1"))))


def test_skip_bad_counts_the_lines_it_skips(tmp_path):
    path = write(tmp_path, "1 1:1\n-1 2:oops\n1 3:1\n1 1:nan\n-1 2:1\n")
    got = run_stream(
        Perceptron(),
        Source(str(path), dim=5, labels=("-1", "1"), skip_bad=True),
        targets=target_map(Perceptron(), "ab"),
        passes=2,
    )
    assert got.skipped == 2 and got.rounds == 6  # two bad lines, counted once; three rows a pass


def test_empty_truncated_and_out_of_range_input(tmp_path):
    for text in ["", "\n\n", "# nothing\n"]:
        with pytest.raises(DataError, match="no examples"):
            read_svmlight(write(tmp_path, text))
        with pytest.raises(DataError, match="no examples"):
            scan(Source(str(tmp_path / "data.svm")))
    truncated = write(tmp_path, "1 1:1\n-1 2:0.5")  # the last line has no newline: still read
    assert read_svmlight(truncated).y.tolist() == [1.0, -1.0]
    assert sum(len(c.y) for c in chunks(Source(str(truncated), dim=5, labels=("-1", "1")))) == 2
    cut = write(tmp_path, "1 1:1\n-1 2:")  # cut inside a token: an error on its line
    with pytest.raises(DataError, match="line 2"):
        read_svmlight(cut)
    wide = write(tmp_path, "1 1:1\n-1 12:1\n")
    with pytest.raises(DataError, match="line 2: feature index 12 is beyond the model's 5 features"):
        list(chunks(Source(str(wide), dim=5, labels=("-1", "1"))))
    hashed = list(chunks(Source(str(wide), dim=8, labels=("-1", "1"), bits=3)))[0]
    assert hashed.X.idx[1, 0] == 11 % 8  # hashing folds it instead
    with pytest.raises(DataError, match="line 2: label '-1' is not one of the model's labels"):
        list(chunks(Source(str(wide), dim=16, labels=("0", "1"))))


def test_a_label_set_that_does_not_match_the_model(tmp_path):
    model_path = tmp_path / "m.npz"
    from ocolearn.modelfile import save
    from ocolearn.pipeline import data_for

    path = write(tmp_path, svmlight_text(n=100))
    save(train_file("perceptron", [], path), model_path)
    other = write(tmp_path, "1 1:1\n7 2:1\n", "other.svm")
    with pytest.raises(DataError, match="line 2: label '7' is not one of the model's labels"):
        data_for(load(model_path), other)


# Property tests of the parser ------------------------------------------------------------------

number = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.floats(-1e6, 1e6).map(lambda v: f"{v:.6g}"),
    st.floats(-1e6, 1e6).map(lambda v: f"{v:.3e}"),
    st.sampled_from(["0", "-0", "+1", ".5", "5.", "1e5", "1E-5", "00012", "0.000", "123456789012345678901"]),
)
feature = st.tuples(st.integers(0, 10**6), number)
# A line's indices ascend (an error otherwise): most lines have them sorted, so that the rows of
# both parsers are compared, and some as drawn, so that their errors are too.
features = st.tuples(st.lists(feature, max_size=6), st.integers(0, 3)).map(
    lambda t: [f"{i}:{v}" for i, v in (t[0] if t[1] == 0 else sorted(t[0], key=lambda f: f[0]))]
)
line = st.tuples(number, features, st.sampled_from(["", " # note", "\t", " qid:3"])).map(
    lambda t: " ".join([t[0], *t[1]]) + t[2]
)


def same(a, b):
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@settings(max_examples=300)
@given(lines=st.lists(line, max_size=8))
def test_the_compiled_parser_equals_the_exact_one(lines):
    data = "\n".join(lines).encode()
    try:
        exact = svmlight_lines(data, 1, "f")
    except DataError as e:
        with pytest.raises(DataError, match=str(e).split(":")[0]):
            parse_svmlight(data, 1, "f")
        return
    same(parse_svmlight(data, 1, "f"), exact)
    for row, text in zip(exact.labels, [t for t in lines if t.split("#")[0].strip()], strict=True):
        assert row == float(text.split()[0])  # no silent change of the data


@settings(max_examples=300)
@given(
    lines=st.lists(line, min_size=1, max_size=5),
    position=st.integers(0, 10**6),
    junk=st.sampled_from([":", " ", "x", "-", ".", "e", "\n", "#", "::", "1:", "nan", "\x00", "\xff"]),
)
def test_mutated_lines_parse_exactly_or_fail_with_a_line_number(lines, position, junk):
    text = "\n".join(lines)
    position %= len(text) + 1
    data = (text[:position] + junk + text[position:]).encode("utf-8", "surrogateescape")
    try:
        exact = svmlight_lines(data, 1, "f")
    except DataError as e:
        assert "f, line " in str(e)
        with pytest.raises(DataError) as fast:
            parse_svmlight(data, 1, "f")
        assert str(fast.value) == str(e)
        return
    same(parse_svmlight(data, 1, "f"), exact)


def test_everything_written_is_written_atomically(tmp_path, monkeypatch):
    from ocolearn import io as ocolearn_io

    path = write(tmp_path, svmlight_text(n=50))
    target = tmp_path / "model.npz"
    target.write_bytes(b"previous")
    real = os.replace

    def crash(*args):
        raise KeyboardInterrupt  # dies between writing the temporary file and renaming it

    monkeypatch.setattr(ocolearn_io.os, "replace", crash)
    from ocolearn.modelfile import save

    with pytest.raises(KeyboardInterrupt):
        save(train_file("perceptron", [], path), target)
    monkeypatch.setattr(ocolearn_io.os, "replace", real)
    assert target.read_bytes() == b"previous" and [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_csv_streams_as_dense_rows(tmp_path):
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(300, 4)), 3)
    names = np.where(X @ [1.0, -1.0, 0.5, 0.0] > 0, "yes", "no")
    text = "a,b,label,c,d\n" + "".join(
        f"{r[0]:g},{r[1]:g},{n},{r[2]:g},{r[3]:g}\n" for r, n in zip(X, names, strict=True)
    )
    path = write(tmp_path, text, "data.csv.gz")
    found = scan(Source(str(path), "csv", target="label"))
    labels, dim = found.labels.names, found.dim
    assert labels == ["no", "yes"] and dim == 4
    source = Source(str(path), "csv", dim=4, labels=("no", "yes"), target="label")
    learner = PassiveAggressive(0.5)
    targets = target_map(learner, labels)
    got = run_stream(learner, source, targets=targets, chunk_rows=64, passes=2)
    y = (names == "yes").astype(np.int32)
    expected = run(learner, X.astype(np.float32), targets(y), passes=2, trace=False)
    np.testing.assert_array_equal(got.state.w, expected.state.w)
    model = train_file("perceptron", [], path, TrainOptions(fmt="csv", target="label", chunk_rows=50))
    assert model.w.shape == (4,) and model.settings["target"] == "label"
    ragged = write(tmp_path, "a,label\n1,yes\n2,no,3\n", "ragged.csv")
    with pytest.raises(DataError, match="ragged.csv, line 3: 3 fields, expected 2"):
        list(chunks(Source(str(ragged), "csv", dim=1, labels=("no", "yes"), target="label")))
    # ('nan' is one of pandas' missing values: in a column without a missing-value indicator, an error)
    with pytest.raises(DataError, match=r"line 2, column 'a': a missing value \('nan'\)"):
        list(
            chunks(
                Source(
                    str(write(tmp_path, "a,label\nnan,yes\n", "nan.csv")), "csv", dim=1, labels=("yes",), target="label"
                )
            )
        )
    with pytest.raises(DataError, match="line 2, column 'a': 'inf' is not a finite number"):
        list(chunks(Source(str(write(tmp_path, "a,label\ninf,yes\n", "inf.csv")), "csv", 1, ("yes",), target="label")))


@pytest.mark.parametrize("block_bytes", [7, 100, 1000])
@pytest.mark.parametrize("fixed", [False, True])
def test_chunks_cut_from_many_small_blocks_equal_those_of_one_block(tmp_path, monkeypatch, block_bytes, fixed):
    """Rows padded on the parsing threads block by block and copied into chunks: the same
    arrays (each chunk as wide as its own longest row, or the fixed width), targets and
    positions as from one block, and a run over them equals the in-memory run bit for bit."""
    from ocolearn.data import sparse_text

    path = write(tmp_path, svmlight_text(n=300, nnz=(1, 20)))
    width = scan(Source(str(path))).width if fixed else None
    source = Source(str(path), dim=40, labels=("-1", "1"), width=width)
    one, found = list(chunks(source, chunk_rows=64)), scan(Source(str(path)))
    monkeypatch.setattr(sparse_text, "BLOCK_BYTES", block_bytes)
    many = list(chunks(source, chunk_rows=64))
    assert scan(Source(str(path))) == found  # (the parsers reuse their scratch arrays block after block)
    assert [len(c.y) for c in many] == [64] * 4 + [44]
    for a, b in zip(many, one, strict=True):
        np.testing.assert_array_equal(a.X.idx, b.X.idx)
        np.testing.assert_array_equal(a.X.val, b.X.val)
        np.testing.assert_array_equal(a.y, b.y)
        assert a.end == b.end and a.X.idx.flags.c_contiguous and a.X.val.ctypes.data % 64 == 0
        longest = int((np.asarray(b.X.val) != 0).sum(axis=1).max())
        assert a.X.idx.shape[1] == (width or 8 * -(-longest // 8))  # (no zero values in this file)
    X, y, labels = whole(path, scan(Source(str(path))).width)
    learner = Pegasos(0.01)
    targets = target_map(learner, labels)
    expected = run(learner, X, targets(y), trace=False)
    got = run_stream(learner, source, targets=targets, chunk_rows=64)
    np.testing.assert_array_equal(learner.weights(got.state), learner.weights(expected.state))
    for a, b in zip(got.summary, expected.trace, strict=True):
        assert np.asarray(a) == np.asarray(b)


def test_a_bad_row_fails_the_chunk_that_takes_it_after_the_chunks_before(tmp_path, monkeypatch):
    """Rows are padded ahead, on the parsing threads, but an index out of range or an unknown
    label is raised by the chunk holding its row: the chunks before it are read as before."""
    from ocolearn.data import sparse_text

    monkeypatch.setattr(sparse_text, "BLOCK_BYTES", 500)
    good = svmlight_text(n=200, d=5, nnz=(1, 4)).splitlines()
    good = [line for line in good if line]
    for bad, message in [("1 99:1", "line 151: feature index 99 is beyond"), ("7 1:1", "line 151: label '7' is not")]:
        path = write(tmp_path, "\n".join(good[:150] + [bad] + good[150:]) + "\n")
        taken = []
        with pytest.raises(DataError, match=message):
            for chunk in chunks(Source(str(path), dim=5, labels=("-1", "1")), chunk_rows=30):
                taken.append(len(chunk.y))
        assert taken == [30] * 5  # rows 1-150; line 151 is the first row of the sixth chunk


def test_prefetched_makes_one_item_ahead_and_hands_on_errors():
    from ocolearn.data.stream import prefetched

    made = []

    def items():
        for i in range(5):
            made.append(i)
            yield i
        raise DataError("broken at the end")

    got = []
    with pytest.raises(DataError, match="broken at the end"):
        for item in prefetched(items()):
            time.sleep(0.02)  # time for the producer to run ahead, if it would
            assert len(made) <= item + 2  # the item in use and the next one, no more
            got.append(item)
    assert got == [0, 1, 2, 3, 4]


def test_scores_a_few_rows_at_a_time_equal_those_of_all_rows_at_once():
    """``scores`` works through sparse rows in blocks (for the cache): the same float64 numbers
    as the one einsum over every row, bit for bit."""
    from ocolearn.features import Sparse
    from ocolearn.modelfile import Model, scores

    rng = np.random.default_rng(0)
    X = Sparse(rng.integers(0, 50, (37, 9)).astype(np.int32), rng.normal(size=(37, 9)).astype(np.float32), 50)
    val = np.asarray(X.val, np.float64)
    for w in (rng.normal(size=50).astype(np.float32), rng.normal(size=(4, 50)).astype(np.float32)):
        model = Model(w, [], {}, rng.normal(size=w.shape[:-1]).astype(np.float32))
        w64 = w.astype(np.float64)
        every = (
            np.einsum("nk,nk->n", val, w64[X.idx]) if w.ndim == 1 else np.einsum("nk,cnk->nc", val, w64[:, X.idx])
        ) - model.offset
        for rows in (1, 5, 2048):
            np.testing.assert_array_equal(scores(model, X, rows), every)


def test_parsed_blocks_outlive_the_parsers_scratch(tmp_path, monkeypatch):
    """The compiled parser writes into scratch arrays that its thread reuses for the next block;
    what ``_parsed`` hands out is the reader's own (copied on the parsing thread), so blocks kept
    after later ones were parsed still hold their rows."""
    from ocolearn.data import sparse_text, stream

    path = write(tmp_path, svmlight_text(n=200))
    expected = parse_svmlight(open(path, "rb").read(), 1, path)
    monkeypatch.setattr(sparse_text, "BLOCK_BYTES", 300)
    monkeypatch.setattr(stream, "PARSERS", 1)  # one thread: its next block is parsed before this one is used
    blocks = [block for *_, (block, _) in stream._parsed(Source(str(path)), stream.Position())]
    assert len(blocks) > 20
    for got, want in zip(stream.concat(blocks), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_prefetched_stops_its_thread_when_the_consumer_stops_early():
    from ocolearn.data.stream import prefetched

    closed = threading.Event()

    def endless():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    items = prefetched(endless())
    assert [next(items), next(items)] == [0, 1]
    items.close()
    assert closed.wait(5)  # the producer saw the stop and closed the source (a pass's parsing threads)


def test_a_checkpoint_of_another_state_shape_is_refused(tmp_path):
    # The L2 ball's carried norm was a (2,) vector before it became a scalar: such a checkpoint
    # loaded without complaint and the resumed scan failed in JAX's shape checks.
    import jax.numpy as jnp

    from ocolearn import InvSqrt, ridge
    from ocolearn.run import _zero_summary
    from ocolearn.streaming import load_checkpoint, save_checkpoint

    template = ridge(InvSqrt(0.1), 1.0).init(3)
    path = tmp_path / "run.ckpt.npz"
    save_checkpoint(path, "same run", template._replace(sqnorm=jnp.zeros(2)), _zero_summary(), {})
    with pytest.raises(DataError, match=f"^{re.escape(str(path))}: a checkpoint of another version"):
        load_checkpoint(path, "same run", template)
    save_checkpoint(path, "same run", template, _zero_summary(), {"pass": 1})
    assert load_checkpoint(path, "same run", template)[2] == {"pass": 1}


def test_the_data_is_identified_only_for_a_checkpoint(tmp_path, monkeypatch):
    """``file_identity`` (hashing each file of a folder) is what a checkpoint is checked against:
    a run without one does not pay it, and its result is the same."""
    import ocolearn.streaming as streaming

    path = write(tmp_path, svmlight_text(n=50))
    source = Source(str(path), dim=40, labels=("-1", "1"))
    options = dict(targets=target_map(Pegasos(), ("-1", "1")), passes=2, chunk_rows=16)
    identified = []
    identity = streaming.file_identity
    monkeypatch.setattr(streaming, "file_identity", lambda p: identified.append(p) or identity(p))
    plain = run_stream(Pegasos(0.1), source, **options)
    assert identified == []
    kept = run_stream(Pegasos(0.1), source, checkpoint=tmp_path / "c.npz", **options)
    assert identified == [str(path)]
    np.testing.assert_array_equal(Pegasos().weights(plain.state), Pegasos().weights(kept.state))
