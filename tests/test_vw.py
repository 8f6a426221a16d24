"""Vowpal Wabbit's text format (``ocolearn.data.vw``): VW's hashing, labels, importance weights,
tags and interactions, checked against ``vowpalwabbit`` itself where it imports: the same
feature indices, and with VW's ``--sgd --power_t 0 -l L`` (plain SGD at a constant rate) the
same weights and progressive loss as ``ogd`` with ``schedule.kind=constant``."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocolearn.data import DataError, compiled
from ocolearn.data.interactions import csv_pairs
from ocolearn.data.vw import CONSTANT, check_interactions, hashstring, murmurhash3_32, vw_block, vw_lines
from ocolearn.pipeline import TrainOptions, train_file
from tests.test_cli import call, one_line_error


@pytest.fixture(autouse=True)
def compiled_however_small(monkeypatch):
    """The compiled parser on blocks of every size (``compiled.worth``: small ones go to the exact
    parser in use, which would make these comparisons of the exact parser with itself)."""
    monkeypatch.setattr(compiled, "SMALL", -1)


BITS = 18
MASK = (1 << BITS) - 1


def rows(text, interactions=(), constant=True, bits=BITS):
    return vw_lines(text.encode(), 1, "f.vw", bits, interactions, constant)


def entries(block, r):
    """Row ``r`` of a block as ``{index: value}``."""
    a, b = block.indptr[r], block.indptr[r + 1]
    return dict(zip(block.indices[a:b].tolist(), block.values[a:b].tolist(), strict=True))


@pytest.mark.parametrize(
    "key, seed, expected",
    [  # MurmurHash3 x86_32's published test vectors (scikit-learn's murmurhash3_32 gives the same)
        ("", 0, 0),
        ("", 1, 0x514E28B7),
        ("a", 0x9747B28C, 0x7FA09EA6),
        ("abc", 0x9747B28C, 0xC84A62DD),
        ("aaaa", 0x9747B28C, 0x5A97808A),
        ("Hello, world!", 1234, 0xFAF6CDB3),
        ("The quick brown fox jumps over the lazy dog", 0x9747B28C, 0x2FA826CD),
    ],
)
def test_murmurhash3_gives_the_published_vectors(key, seed, expected):
    assert murmurhash3_32(key.encode(), seed) == expected


def test_a_line_read_as_vw_hashes_it():
    block = rows("3 2 'row1|a x:2 y 13 |b:0.5 z:4 | w\n")
    a, b = hashstring("a", 0), hashstring("b", 0)
    assert block.labels.tolist() == [3.0] and block.weights.tolist() == [2.0] and block.tags.tolist() == ["row1"]
    assert entries(block, 0) == {
        hashstring("x", a) & MASK: 2.0,
        hashstring("y", a) & MASK: 1.0,
        (13 + a) & MASK: 1.0,  # a name of digits is its number plus the namespace's hash
        hashstring("z", b) & MASK: 2.0,  # the namespace's scale times the value
        hashstring("w", 0) & MASK: 1.0,  # the default namespace: seed 0
        CONSTANT & MASK: 1.0,
    }


def test_labels_tags_and_importance_as_vw_reads_them():
    block = rows("1|a x\n-1 row9|a x\n'only |a x\n |a x\n0.5 0 |a x\n2 |a x:0\n")
    assert np.isnan(block.labels[[0, 2, 3]]).all() and block.labels[[1, 4, 5]].tolist() == [-1.0, 0.5, 2.0]
    assert block.tags.tolist() == ["1", "row9", "only", "", "", ""]  # (a token touching '|' is VW's tag)
    assert block.weights.tolist() == [1, 1, 1, 1, 0, 1]
    assert entries(rows("2 |a x:0", constant=False), 0) == {}  # (a value 0 is left out, as VW does)


def test_interactions_cross_pairs_and_self_pairs_as_vw():
    block = rows("1 |a x:2 y |b z:3\n", interactions=("ab", "aa"), constant=False)
    a, b = hashstring("a", 0), hashstring("b", 0)
    x, y, z = hashstring("x", a), hashstring("y", a), hashstring("z", b)

    def cross(h1, h2):
        return ((h1 * 16777619) ^ h2) & MASK

    expected = {x & MASK: 2.0, y & MASK: 1.0, z & MASK: 3.0, cross(x, z): 6.0, cross(y, z): 3.0}
    expected |= {cross(x, x): 4.0, cross(x, y): 2.0, cross(y, y): 1.0}  # (aa: i <= j, VW's combinations)
    assert entries(block, 0) == expected


@pytest.mark.parametrize(
    "line, words",
    [
        ("x |a f", ["line 2, label", "'x' is not a number"]),
        ("1 -2 |a f", ["line 2, importance", "negative"]),
        ("1 w |a f", ["line 2, importance", "'w' is not a number"]),
        ("1 |a f:z", ["line 2, feature 'f'", "'z' is not a number"]),
        ("1 |a:q f", ["line 2, namespace 'a'"]),
        ("1 2 3 |a f", ["line 2", "3 fields", "initial prediction"]),
        ("1 a:2", ["line 2", "no '|'"]),
    ],
)
def test_a_malformed_line_names_the_file_and_line(line, words):
    with pytest.raises(DataError) as e:
        rows(f"1 |a f\n{line}\n")
    assert str(e.value).startswith("f.vw, line 2") and "\n" not in str(e.value)
    for word in words:
        assert word in str(e.value)


def test_interactions_are_checked():
    assert check_interactions(["ab", "aa"]) == ("ab", "aa")
    for bad, words in [("abc", "two namespaces"), ("a", "two namespaces")]:
        with pytest.raises(DataError, match=words):
            check_interactions([bad])
    with pytest.raises(DataError, match="the same features as ab"):
        check_interactions(["ab", "ba"])


def test_train_and_predict_from_the_command_line(tmp_path, capsys):
    data, model = tmp_path / "d.vw", tmp_path / "m.npz"
    data.write_text("1 'a|s x:1\n-1 'b|s y:1\n1 2 |s x:1 y:0.5\n-1 |s y:2\n")
    ogd = ["--learner", "ogd", "--set", "loss.kind=logistic", "--set", "schedule.kind=constant"]
    status, _, err = call(capsys, "train", *ogd, data, "--format", "vw", "--model", model, "-q", "ss")
    assert status == 0, err
    status, out, _ = call(capsys, "predict", model, data)
    lines = [line.split() for line in out.splitlines()]  # (VW's -p: the prediction, then the row's tag)
    assert [line[1:] for line in lines] == [["a"], ["b"], [], []] and {line[0] for line in lines} <= {"1", "-1"}


def test_train_refuses_bad_vw_input_in_one_line(tmp_path, capsys):
    data, model = tmp_path / "d.vw", tmp_path / "m.npz"
    ogd = ["--learner", "ogd", "--set", "loss.kind=logistic", "--set", "schedule.kind=constant"]
    data.write_text("1 |s x\nz |s x\n")
    one_line_error(*call(capsys, "train", *ogd, data, "--format", "vw", "--model", model)[::2], "d.vw, line 2")
    data.write_text("1 |s x\n'tag |s x\n")
    one_line_error(
        *call(capsys, "train", *ogd, data, "--format", "vw", "--model", model)[::2], "line 2", "without a label"
    )
    data.write_text("1 2 |s x\n-1 |s y\n")
    status, _, err = call(capsys, "train", "--learner", "arow", data, "--format", "vw", "--model", model)
    one_line_error(status, err, "d.vw, the rows from line 1: importance weights", "arow takes no per-example weight")
    status, _, err = call(capsys, "train", *ogd, data, "--format", "mira", "--model", model, "--interactions", "ab")
    one_line_error(status, err, "--interactions applies to --format vw or csv or svmlight, not to mira")


# --- against vowpalwabbit itself -------------------------------------------------------------


def regression_file(path, n=1500, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=5)
    with open(path, "w") as f:
        for i in range(n):
            x = rng.normal(size=5)
            y = x @ u + 0.1 * rng.normal()
            f.write(
                f"{y:.6g} |num f0:{x[0]:.6g} 7:{x[1]:.6g} |cat c{i % 5} f2:{x[2]:.6g} | g:{x[3]:.6g} h:{x[4]:.6g}\n"
            )


def binary_file(path, n=1500, seed=1, importance=False):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=4)
    with open(path, "w") as f:
        for i in range(n):
            x = rng.normal(size=4)
            y = 1 if x @ u + 0.5 * rng.normal() > 0 else -1
            weight = f" {rng.choice([0.5, 1.0, 2.0])}" if importance else ""
            f.write(f"{y}{weight} 'r{i}|a p:{x[0]:.6g} q:{x[1]:.6g} |b s:{x[2]:.6g} t:{x[3]:.6g}\n")


def vw_run(path, options):
    """VW's average progressive loss and its weights (2**BITS of them) after one pass."""
    pyvw = pytest.importorskip("vowpalwabbit")
    vw = pyvw.Workspace(f"-d {path} -b {BITS} --sgd --power_t 0 --quiet {options}")
    vw.run_parser()
    loss = vw.get_sum_loss() / vw.get_weighted_examples()
    weights = np.array([vw.get_weight(i) for i in range(1 << BITS)])
    vw.finish()
    return loss, weights


def test_indices_are_vws(tmp_path):
    """Every weight VW keeps sits at an index ocolearn's reader gives (features, crosses, constant)."""
    path = tmp_path / "d.vw"
    path.write_text("1 |a x:2 y 13 |bee z | w\n-1 |c 7:3 abc |bee z:2 q\n0.5 |123 4294967301 -5 été |a 0\n")
    _, weights = vw_run(path, "-l 0.1 -q ab -q cc")
    block = vw_lines(path.read_bytes(), 1, path, BITS, ("ab", "cc"))
    assert set(np.flatnonzero(weights).tolist()) == set(block.indices.tolist())


def test_squared_loss_is_vws_sgd(tmp_path):
    """VW's squared loss is (p - y)^2, ogd's 1/2 (p - y)^2: ogd at eta = 2 l steps as VW's -l l.
    Without VW's clipping of predictions to the labels' range the weights agree to float32 and
    the losses to 1e-5; with it (VW's default), the progressive loss within 1%."""
    path = tmp_path / "reg.vw"
    regression_file(path)
    model = train_file(
        "ogd",
        ["schedule.kind=constant", "schedule.eta=0.02"],
        path,
        TrainOptions(fmt="vw", task="regression", scale="none"),
    )
    ours = 2 * model.settings["average_loss"]
    loss, weights = vw_run(path, "-l 0.01 --min_prediction -1e6 --max_prediction 1e6")
    assert np.abs(model.w - weights).max() < 1e-5 * np.abs(weights).max()
    assert ours == pytest.approx(loss, rel=1e-5)
    clipped, _ = vw_run(path, "-l 0.01")
    assert ours == pytest.approx(clipped, rel=0.01)


def test_logistic_loss_importance_and_an_interaction_are_vws_sgd(tmp_path):
    """VW's logistic step is ogd's with eta = l; importance weights scale the step as VW's do
    (the same weights), and a progressive loss of rows counted once is VW's within 1%."""
    path = tmp_path / "bin.vw"
    binary_file(path)
    settings = ["loss.kind=logistic", "schedule.kind=constant", "schedule.eta=0.1"]
    model = train_file("ogd", settings, path, TrainOptions(fmt="vw", interactions=["ab"], scale="none"))
    loss, weights = vw_run(path, "-l 0.1 --loss_function logistic -q ab")
    assert model.labels == ["-1", "1"]
    assert np.abs(model.w - weights).max() < 1e-5 * np.abs(weights).max()
    assert model.settings["average_loss"] == pytest.approx(loss, rel=0.01)
    binary_file(path, importance=True)
    model = train_file("ogd", settings, path, TrainOptions(fmt="vw", interactions=["ab"], scale="none"))
    _, weights = vw_run(path, "-l 0.1 --loss_function logistic -q ab")
    assert np.abs(model.w - weights).max() < 1e-5 * np.abs(weights).max()


def test_a_vw_file_read_as_another_format_says_to_give_vw(tmp_path, capsys):
    data = tmp_path / "d.vw"
    data.write_text("1 'r1|a x:2 y\n-1 |a y\n")
    for fmt in ("svmlight", "mira"):
        status, _, err = call(capsys, "train", "--learner", "ogd", data, "--format", fmt, "--model", tmp_path / "m.npz")
        one_line_error(status, err, "d.vw, line 1", "if this is a VW-format file, give the format vw")


# --- interactions of a CSV file's columns ----------------------------------------------------


def test_csv_interactions_name_columns_or_first_letters():
    names = ["a1", "a2", "b1", "c"]
    assert csv_pairs(["a1,c"], names) == [(0, 3)]
    assert csv_pairs(["ab"], names) == [(0, 2), (1, 2)]
    assert csv_pairs(["aa"], names) == [(0, 0), (0, 1), (1, 1)]  # (within a letter each pair once, as VW's -q aa)
    for spec, words in [
        ("a1,z", "no numeric feature column 'z'"),
        ("az", "starts with 'z'"),
        ("abc", "two columns A,B"),
    ]:
        with pytest.raises(DataError, match=words):
            csv_pairs([spec], names)
    with pytest.raises(DataError, match="b1 x a1 is crossed twice"):
        csv_pairs(["ab", "b1,a1"], names)


def test_a_csv_interaction_is_the_product_column_at_every_door(tmp_path, capsys):
    """Training with ``--interactions x1,x2`` gives the model of the file with the column x1*x2
    written out (the same weights), and predict reads the crosses as train did."""
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(60, 3)), 3)
    y = np.round(X[:, 0] * X[:, 1] - X[:, 2], 4)
    plain, written = tmp_path / "plain.csv", tmp_path / "written.csv"
    products = (X[:, 0] * X[:, 1]).tolist()  # (float64, as the reader multiplies)
    rows = [f"{t!r},{a!r},{b!r},{c!r}" for t, (a, b, c) in zip(y.tolist(), X.tolist(), strict=True)]
    plain.write_text("y,x1,x2,z\n" + "".join(f"{r}\n" for r in rows))
    written.write_text("y,x1,x2,z,x1x2\n" + "".join(f"{r},{p!r}\n" for r, p in zip(rows, products, strict=True)))
    crossed = train_file(
        "ogd", [], plain, TrainOptions(fmt="csv", target="y", task="regression", interactions=["x1,x2"])
    )
    explicit = train_file("ogd", [], written, TrainOptions(fmt="csv", target="y", task="regression"))
    assert crossed.settings["dim"] == 4 and crossed.settings["interactions"] == ["x1,x2"]
    np.testing.assert_array_equal(crossed.w, explicit.w)
    args = ["--learner", "ogd", "--format", "csv", "--target", "y", "--task", "regression"]
    assert call(capsys, "train", *args, plain, "--model", tmp_path / "c.npz", "-q", "x1,x2")[0] == 0
    assert call(capsys, "train", *args, written, "--model", tmp_path / "e.npz")[0] == 0
    assert (
        call(capsys, "predict", tmp_path / "c.npz", plain)[1] == call(capsys, "predict", tmp_path / "e.npz", written)[1]
    )


def test_importance_weights_are_not_dropped_in_memory(tmp_path):
    from ocolearn.pipeline import read_data

    data = tmp_path / "d.vw"
    data.write_text("1 |a x\n-1 |a y\n")
    assert read_data(data, "vw").X.dim == 1 << BITS
    data.write_text("1 2 |a x\n-1 |a y\n")
    with pytest.raises(DataError, match="d.vw: importance weights other than 1"):
        read_data(data, "vw")


def test_oaa_labels_are_classes(tmp_path):
    """Labels 1..k, as VW's --oaa reads them, train a multiclass learner."""
    data = tmp_path / "d.vw"
    data.write_text("".join(f"{k} |f c{k} x:{k * 0.5}\n" for k in [1, 2, 3, 3, 2, 1] * 5))
    model = train_file("perceptron", [], data, TrainOptions(fmt="vw"))
    assert model.labels == ["1", "2", "3"] and model.settings["task"] == "multiclass"


def outcome(parse, text, *options):
    try:
        return parse(np.frombuffer(text.encode(), np.uint8), 3, "f.vw", *options)
    except DataError as e:
        return str(e)


def assert_same(text, *options):
    exact, fast = outcome(vw_lines, text, *options), outcome(vw_block, text, *options)
    if isinstance(exact, str) or isinstance(fast, str):
        assert exact == fast
        return
    for name, a, b in zip(exact._fields, exact, fast, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), (name, a, b)


@pytest.mark.parametrize(
    "text",
    [
        "1 2 'tagA|a x:2 y 13 |b z\n-1 'tagB|a x |b w:0.5\n0.5 |c 7:3 abc\n",
        "\n\n |a x\n'only |a x x x:2\n1|a x",
        "1 row|a:2 x y:0 z:-1.5e3 |b:0 q\r\n2 |a x|b y||c z\r\n",
        "1 |a 00012 -5 4294967301 |123 7 |a x:2 x:3\n",
        "1 |a é\n",  # (not ASCII: the exact parser's)
        "1 |a x:1e300\n",  # (errors: the exact parser's message)
        "1 |a x:1#\n",
        "1 2 3 4|a x\n",
    ],
)
def test_the_compiled_parser_gives_the_exact_parsers_rows(text):
    for interactions in [(), ("ab", "aa")]:
        for constant in (True, False):
            assert_same(text, 4, interactions, constant)
            assert_same(text, BITS, interactions, constant)


@given(st.text(alphabet="ab|:' 0123.5-e\t\r\nx", max_size=40), st.integers(1, 20), st.booleans())
def test_the_compiled_parser_on_any_line(text, bits, constant):
    assert_same(text, bits, ("ab", "aa"), constant)


def test_an_svmlight_interaction_is_a_hashed_product_of_two_indices(tmp_path, capsys):
    from ocolearn.data.stream import chunks
    from ocolearn.pipeline import model_source

    data = tmp_path / "d.svm"
    data.write_text("1 1:2 3:4\n-1 1:1 2:5\n1 3:1\n")
    model = train_file("perceptron", [], data, TrainOptions(fmt="svmlight", bits=10, interactions=["1,3"]))
    assert model.settings["interactions"] == ["1,3"]
    X = next(chunks(model_source(model, data))).X
    crossed = ((1 * 16777619) ^ 3) % 1024  # (VW's rule on the indices as written)
    assert X.idx[0, :3].tolist() == [0, 2, crossed] and X.val[0, :3].tolist() == [2.0, 4.0, 8.0]
    assert crossed not in X.idx[1:].ravel().tolist()  # (rows without both features: no cross)
    for spec, words in [("ab", "give two indices I,J"), ("1,3", "give --bits too")]:
        args = ["train", "--learner", "perceptron", data, "--model", tmp_path / "m.npz", "-q", spec]
        one_line_error(*call(capsys, *args, *(["--bits", "10"] if spec == "ab" else []))[::2], "--interactions", words)


def test_skip_bad_skips_and_counts_malformed_vw_lines(tmp_path):
    data = tmp_path / "d.vw"
    data.write_text("1 |a x\nz |a x\n-1 2 |a y\n1 |a x:q\n-1 |a y\n")
    model = train_file("ogd", ["loss.kind=logistic"], data, TrainOptions(fmt="vw", skip_bad=True))
    assert model.settings["skipped_lines"] == 2 and model.settings["rounds"] == 3
