import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocolearn.data import DataError
from ocolearn.data.mira import read_mira
from ocolearn.data.sparse_text import feature_hash
from ocolearn.data.svmlight import read_svmlight
from ocolearn.data.textdirs import read_text_folders, tokens


def write(tmp_path, text, name="d.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("zero_based", [False, True])
def test_svmlight_equals_scikit_learn(tmp_path, zero_based):
    datasets = pytest.importorskip("sklearn.datasets")
    rng = np.random.default_rng(0)
    dense = np.where(rng.random((40, 30)) < 0.2, rng.normal(size=(40, 30)), 0.0).astype(np.float32)
    dense[:, -1] = 1.0  # the last feature is always present, so the dimension is known
    y = rng.integers(0, 2, 40) * 2.0 - 1
    path = tmp_path / "d.svm"
    datasets.dump_svmlight_file(dense, y, str(path), zero_based=zero_based)
    data = read_svmlight(path, zero_based=zero_based)
    X_ref, y_ref = datasets.load_svmlight_file(str(path), zero_based=zero_based, dtype=np.float32)
    np.testing.assert_array_equal(data.X.todense(), X_ref.toarray())
    np.testing.assert_array_equal(data.y, y_ref)
    assert data.X.dim == 30 and data.labels is None


def test_svmlight_details(tmp_path):
    text = "# a comment line\n1 qid:3 1:0.75 4:2  # trailing comment\n\n-1 2:1e-3\n"
    data = read_svmlight(write(tmp_path, text))
    np.testing.assert_allclose(data.X.todense(), [[0.75, 0, 0, 2], [0, 1e-3, 0, 0]])  # 1-based
    assert list(data.y) == [1.0, -1.0]
    assert read_svmlight(write(tmp_path, "1 0:1 3:2\n")).X.dim == 4  # auto: an index 0 means 0-based
    assert read_svmlight(write(tmp_path, "1 1:1\n"), dim=10).X.dim == 10


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 1:0.5\n-1 3:x\n", "line 2, feature 3: 'x' is not a number"),
        ("1 1:0.5\nfoo 2:1\n", "line 2, label: 'foo' is not a number"),
        ("sport w1 w2\n", "line 1, label: 'sport' is not a number (a name as the label: if this is a MIRA-format file"),
        ("? 1:1\n", "line 1, label: '?' is not a number"),
        ("1 1-0.5\n", "line 1: '1-0.5' is not of the form index:value"),
        ("1 a:0.5\n", "line 1: 'a:0.5' is not of the form index:value (index a non-negative integer) (a feature named"),
        (
            "1 good fun\n",
            "'good' is not of the form index:value (index a non-negative integer) (a feature named by a word: if",
        ),
        ("1 2:nan\n", "line 1, feature 2: 'nan' is not a finite number"),
        ("1 2:inf\n", "is not a finite number"),
        ("# only a comment\n\n", "no examples"),
        ("", "no examples"),
    ],
)
def test_svmlight_errors_name_file_and_line(tmp_path, text, message):
    with pytest.raises(DataError) as info:
        read_svmlight(write(tmp_path, text))
    assert message in str(info.value) and "d.txt" in str(info.value)


def test_svmlight_hints_at_mira_only_for_a_word(tmp_path):
    # A bad number or a lone index is no hint: "1 good fun" said only "'good' is not of the form
    # index:value" where "sport good fun" named the MIRA format.
    for text in ("1 3:1 5\n", "1 3:1 4:x\n"):
        with pytest.raises(DataError) as info:
            read_svmlight(write(tmp_path, text))
        assert "MIRA" not in str(info.value)


def test_svmlight_index_beyond_the_model(tmp_path):
    with pytest.raises(DataError, match="line 2: feature index 12 is beyond the model's 5 features"):
        read_svmlight(write(tmp_path, "1 1:1\n1 12:1\n"), dim=5)
    with pytest.raises(DataError, match="index 0 in a file read as 1-based"):
        read_svmlight(write(tmp_path, "1 0:1\n"), zero_based=False)


def test_feature_hash_is_fnv1a():
    # FNV-1a 32-bit test vectors: "" -> 0x811c9dc5, "a" -> 0xe40c292c, "foobar" -> 0xbf9cf968.
    assert feature_hash("", 32) == 0x811C9DC5
    assert feature_hash("a", 32) == 0xE40C292C
    assert feature_hash("foobar", 32) == 0xBF9CF968
    assert feature_hash("foobar", 18) == 0xBF9CF968 % (1 << 18)


def test_mira_format(tmp_path):
    data = read_mira(write(tmp_path, "pos good:2 bad:2\nneg bad\n"), bits=8)
    assert data.labels == ["neg", "pos"] and list(data.y) == [1, 0]
    dense = data.X.todense()
    assert dense[0, feature_hash("good", 8)] == 2.0 and dense[0, feature_hash("bad", 8)] == 2.0
    assert dense.shape == (2, 256) and dense[1].sum() == 1.0
    with pytest.raises(DataError, match="line 1: label 'pos' is not one of the model's labels"):
        read_mira(write(tmp_path, "pos good\n"), labels=["a", "b"])
    with pytest.raises(DataError, match="line 1, feature 'bad': 'x' is not a number"):
        read_mira(write(tmp_path, "pos bad:x\n"))


@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([-1, 1]), st.dictionaries(st.integers(1, 50), st.floats(-1e6, 1e6, width=32), max_size=8)
        ),
        min_size=1,
        max_size=20,
    ),
    cut=st.integers(0, 400),
)
def test_svmlight_round_trips_and_truncation_is_safe(tmp_path_factory, rows, cut):
    # Written rows read back exactly (no silent change); a file cut anywhere reads or fails with
    # the documented error, never anything else.
    text = "".join(f"{label} " + " ".join(f"{i}:{v!r}" for i, v in sorted(f.items())) + "\n" for label, f in rows)
    path = tmp_path_factory.mktemp("svm") / "r.svm"
    path.write_text(text)
    data = read_svmlight(path, dim=51, zero_based=False)
    expected = np.zeros((len(rows), 51), np.float32)
    for r, (_, features) in enumerate(rows):
        for i, v in features.items():
            expected[r, i - 1] = v
    np.testing.assert_array_equal(data.X.todense(), expected)
    path.write_text(text[:cut])
    try:
        read_svmlight(path, dim=51, zero_based=False)
    except DataError:
        pass


def test_bag_of_words_counts_each_word(tmp_path):
    (tmp_path / "pos").mkdir()
    (tmp_path / "neg").mkdir()
    (tmp_path / "pos" / "a.txt").write_text("Great film, great ACTING; isn't it?")
    (tmp_path / "neg" / "b.txt").write_text("a dull film")
    assert tokens("Great film, great ACTING; isn't it?") == ["great", "film", "great", "acting", "isn't", "it"]
    data, vocabulary = read_text_folders(tmp_path)
    assert data.labels == ["neg", "pos"] and data.y.tolist() == [0, 1]
    assert sorted(vocabulary) == list(vocabulary) == ["a", "acting", "dull", "film", "great", "isn't", "it"]
    dense = data.X.todense()
    assert dense[1, vocabulary["great"]] == 2 and dense[1, vocabulary["film"]] == 1 and dense[1].sum() == 6
    assert dense[0].sum() == 3
    again, _ = read_text_folders(tmp_path, vocabulary={"film": 0, "great": 1})  # unknown words dropped
    assert again.X.todense().tolist() == [[1, 0], [1, 2]]
    hashed, none = read_text_folders(tmp_path, bits=8)
    assert none is None and hashed.X.dim == 256
    assert hashed.X.todense()[1, feature_hash("great", 8)] >= 2
    with pytest.raises(DataError, match="documents without labels"):
        read_text_folders(tmp_path / "pos")


@pytest.mark.parametrize("shift, buckets, drop", [(0, 0, False), (1, 0, False), (1, 0, True), (0, 7, False)])
def test_pad_in_numpy_writes_what_the_compiled_loop_writes(shift, buckets, drop):
    """``pad``'s two ways (NumPy for small blocks, compiled past them): the same padded rows,
    and the same first entry out of range with every entry before it written."""
    from ocolearn.data.sparse_text import _pad_loop, _pad_small

    rng = np.random.default_rng(1)
    for _ in range(30):
        counts = rng.integers(0, 6, rng.integers(1, 9))
        indptr = np.r_[3, 3 + np.cumsum(counts)].astype(np.int64)  # (rows of a block's middle: indptr[0] > 0)
        indices = rng.integers(0, 12, indptr[-1] + 2).astype(np.int64)  # (0 - 1 < 0 and >= 10: out of range)
        values = rng.normal(size=indptr[-1] + 2)
        got = []
        for way in (_pad_loop, _pad_small):
            idx, val = np.zeros((counts.size, 6), np.int32), np.zeros((counts.size, 6), np.float32)
            got.append((way(indptr, indices, values, shift, buckets, 10, idx, val, drop), idx, val))
        (at, idx, val), (at_np, idx_np, val_np) = got
        assert at == at_np
        np.testing.assert_array_equal(idx, idx_np)
        np.testing.assert_array_equal(val.view(np.int32), val_np.view(np.int32))


def test_compiled_loops_run_where_numba_has_no_folder_to_cache_them(monkeypatch):
    """Where numba finds no writable cache folder (a read-only install, no home), it refuses
    ``cache=True``; ``compiled.njit`` then compiles in the process instead. A compiled function
    calls the compiled functions of its module and those it imported (``vw`` calls ``svmlight``'s),
    whichever is called first."""
    import sys
    import types

    from numba.core.caching import CacheImpl

    from ocolearn.data import compiled

    monkeypatch.setattr(CacheImpl, "_locator_classes", [])
    one, other = types.ModuleType("ocolearn_compiled_one"), types.ModuleType("ocolearn_compiled_other")
    for module in (one, other):
        monkeypatch.setitem(sys.modules, module.__name__, module)
        module.njit = compiled.njit
    exec(
        "@njit()\ndef half(x):\n    return x / 2\n\n@njit(inline='always')\ndef twice(x):\n    return 2 * half(x) * 2",
        vars(one),
    )
    other.twice = one.twice  # (as ``from one import twice``)
    exec("@njit()\ndef f(x):\n    return twice(x) + 1", vars(other))
    lazy = other.f
    assert isinstance(lazy, compiled.Lazy) and lazy(20) == 41 and other.f is lazy.dispatcher
    assert one.half(3) == 1.5 and not isinstance(one.half, compiled.Lazy)
    assert type(lazy.dispatcher._cache).__name__ == "NullCache"  # (compiled, not cached)
