"""Model files and ``ocolearn train / predict / test`` on svmlight and MIRA-format files."""

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import in_process as cli

from ocolearn import run
from ocolearn.data import DataError
from ocolearn.data.sparse_text import feature_hash
from ocolearn.features import Sparse
from ocolearn.modelfile import Model, load, predict, save
from ocolearn.pipeline import build_learner, data_for, error_rate, read_data, train, with_pipeline
from ocolearn.preprocess import default_steps


def svmlight_file(tmp_path, labels, n=120, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 3)
    scores = X @ rng.normal(size=(d, len(labels)))
    y = np.asarray(labels)[np.argmax(scores, axis=1)]
    path = tmp_path / "train.svm"
    path.write_text(
        "".join(
            f"{label} " + " ".join(f"{j + 1}:{v}" for j, v in enumerate(x)) + "\n"
            for label, x in zip(y, X, strict=True)
        )
    )
    return path


@pytest.mark.parametrize(
    "name, overrides, labels",
    [
        ("perceptron", [], ["-1", "1"]),
        ("passive_aggressive", ["C=0.5"], ["-1", "1"]),
        ("pegasos", ["lam=0.01"], ["-1", "1"]),
        ("winnow", ["balanced=true"], ["-1", "1"]),
        ("perceptron", [], ["1", "2", "3"]),
        ("mira", [], ["1", "2", "3"]),
    ],
)
def test_model_predictions_are_the_learners(tmp_path, name, overrides, labels):
    data = read_data(svmlight_file(tmp_path, [int(v) for v in labels]), "svmlight")
    assert data.labels == labels
    learner = build_learner(name, overrides, len(labels))
    model = train(learner, data, passes=3, settings={"format": "svmlight", "bits": 18})
    save(model, tmp_path / "m.npz")
    loaded = load(tmp_path / "m.npz")
    assert loaded.w.shape == ((len(labels), 8) if len(labels) > 2 else (8,))
    assert loaded.labels == labels and loaded.settings["learner"]["kind"] == name
    # The model predicts what the learner's own state predicts.
    targets = data.y if len(labels) > 2 else np.where(data.y == 1, 1.0, -1.0)
    learner = with_pipeline(learner, default_steps(dense=False))  # what ``train`` ran: an intercept
    state = run(learner, data.X, targets, passes=3, trace=False).state
    import jax

    own = np.asarray(jax.vmap(lambda x: learner.predict(state, x))(data.X))
    expected = [labels[k] for k in np.argmax(own, axis=1)] if own.ndim == 2 else [labels[int(v > 0)] for v in own]
    assert predict(loaded, data.X) == expected
    assert error_rate(loaded, data_for(loaded, tmp_path / "train.svm")) == pytest.approx(
        np.mean([p != labels[y] for p, y in zip(expected, data.y, strict=True)])
    )


def process_cli(*args):
    """``ocolearn ARGS`` as a user runs it: a process of its own, all it prints on its stdout and stderr."""
    return subprocess.run([sys.executable, "-m", "ocolearn.cli", *map(str, args)], capture_output=True, text=True)


def test_cli_train_predict_test_on_svmlight_and_mira(tmp_path):
    path = svmlight_file(tmp_path, [-1, 1])
    done = cli(
        "train",
        "--learner",
        "passive_aggressive",
        "--set",
        "C=0.1",
        "--set",
        "variant=2",
        path,
        "--model",
        tmp_path / "pa.npz",
        "--passes",
        2,
    )
    assert done.returncode == 0, done.stderr
    predicted = cli("predict", tmp_path / "pa.npz", path).stdout.split()
    rate = float(cli("test", tmp_path / "pa.npz", path).stdout.split()[1])
    truth = [line.split()[0] for line in path.read_text().splitlines()]
    # (test prints 6 decimals)
    assert len(predicted) == 120 and rate == pytest.approx(np.mean(np.array(predicted) != np.array(truth)), abs=5e-7)
    settings = json.loads(str(np.load(tmp_path / "pa.npz")["settings"]))
    assert settings["learner"] == {
        "kind": "passive_aggressive",
        "C": 0.1,
        "variant": 2,
        "loss": {"kind": "hinge"},
        "classes": 0,
    }
    assert len(settings["mistakes_per_pass"]) == 2

    mira = tmp_path / "train.mira"
    mira.write_text("sport ball goal:2\npolitics vote law\nsport goal:2 team\npolitics law vote:3\n")
    done = cli(
        "train",
        "--learner",
        "mira",
        "--format",
        "mira",
        "--bits",
        10,
        mira,
        "--model",
        tmp_path / "mira.npz",
        "--passes",
        5,
        "--stop-early",
        "--no-intercept",  # the hashed words alone, as the MIRA write-up learns them
    )
    assert done.returncode == 0, done.stderr
    assert "\nmistakes per pass: 1 0\n" in done.stderr  # only the first example; then separated
    assert cli("predict", tmp_path / "mira.npz", mira).stdout.split() == ["sport", "politics", "sport", "politics"]
    model = load(tmp_path / "mira.npz")
    assert model.labels == ["politics", "sport"] and model.w.shape == (2, 1024)
    assert model.settings["mistakes_per_pass"] == [1, 0]
    # The first example is the only mistake (all scores 0: argmax is "politics"): MIRA moves
    # its features, goal:2, towards "sport"; "vote" is never in a mistake.
    goal, vote = feature_hash("goal", 10), feature_hash("vote", 10)
    assert model.w[1, goal] > 0 > model.w[0, goal] and model.w[0, vote] == model.w[1, vote] == 0


@pytest.mark.slow
def test_cli_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5\n-1 2:oops\n")
    done = process_cli("train", "--learner", "perceptron", bad, "--model", tmp_path / "m.npz")
    assert done.returncode == 2 and "bad.svm, line 2, feature 2: 'oops' is not a number" in done.stderr
    assert not (tmp_path / "m.npz").exists()
    done = process_cli("train", "--learner", "perceptrn", bad, "--model", tmp_path / "m.npz")
    assert done.returncode == 2 and "did you mean 'perceptron'" in done.stderr
    path = svmlight_file(tmp_path, [-1, 1])
    # the model the next command reads, trained in this process (the errors are what needs a process)
    assert cli("train", "--learner", "perceptron", path, "--model", tmp_path / "m.npz").returncode == 0
    other = tmp_path / "other.svm"
    other.write_text("1 1:1\n# a comment\n3 1:1\n")
    done = process_cli("test", tmp_path / "m.npz", other)
    assert (
        done.returncode == 2
        and "other.svm, line 3: label '3' is not one of the model's labels ['-1', '1']" in done.stderr
    )
    with pytest.raises(DataError, match="not an ocolearn model file"):
        load(bad)


def test_cli_on_folders_of_text(tmp_path):
    for label, docs in {
        "neg": ["dull , boring film", "boring plot and dull acting"],
        "pos": ["a great film", "great acting , GREAT plot"],
    }.items():
        (tmp_path / "train" / label).mkdir(parents=True)
        for i, doc in enumerate(docs):
            (tmp_path / "train" / label / f"{i}.txt").write_text(doc)
    done = cli(
        "train",
        "--learner",
        "perceptron",
        "--format",
        "text",
        "--bits",
        12,
        tmp_path / "train",
        "--model",
        tmp_path / "p.npz",
        "--passes",
        10,
        "--stop-early",
    )
    assert done.returncode == 0, done.stderr
    predicted = cli("predict", tmp_path / "p.npz", tmp_path / "train").stdout.splitlines()
    assert predicted == ["neg/0.txt\tneg", "neg/1.txt\tneg", "pos/0.txt\tpos", "pos/1.txt\tpos"]
    assert float(cli("test", tmp_path / "p.npz", tmp_path / "train").stdout.split()[1]) == 0.0
    (tmp_path / "train" / "meh").mkdir()
    (tmp_path / "train" / "meh" / "0.txt").write_text("so so")
    done = cli("test", tmp_path / "p.npz", tmp_path / "train")
    assert done.returncode == 2 and "meh" in done.stderr and "not one of the model's labels" in done.stderr


@pytest.mark.parametrize("task", ["binary", "regression"])
def test_saved_model_scores_as_the_pipelines_final_statistics_far_from_zero(tmp_path, task):
    """Features near 1e6 and 4e6 with a spread near 1, and one constant in training (a deviation
    of 0: scaled to 0, on rows off that value too): the model file, saved and loaded, gives the
    labels and scores of a float64 evaluation of its pipeline (the learner's weights on rows
    standardized with the final mean and deviation, plus the intercept). Folded in float32, the
    cancellation in ``w . x - w . mean`` was off by 0.2% (binary) and 0.4% (regression) of the
    largest score and flipped 0.5% of the labels. A model file from before (float32 ``w`` and
    ``offset``) still loads and scores with its own numbers."""
    from ocolearn.estimators import OnlineClassifier, OnlineRegressor
    from ocolearn.learners import OGD
    from ocolearn.losses import Logistic
    from ocolearn.modelfile import scores

    rng = np.random.default_rng(7)
    centred = rng.normal(size=(2000, 3)) * [1.0, 2.0, 0.5]
    X = np.c_[centred + [1e6, 4e6, 1e6], np.full(len(centred), 2.5e6)].astype(np.float32)
    signal = centred @ [1.0, -0.5, 2.0] + 0.3 * rng.normal(size=len(X))
    if task == "binary":
        estimator = OnlineClassifier(OGD(loss=Logistic()), random_state=0).fit(X, np.where(signal > 0, "yes", "no"))
    else:
        estimator = OnlineRegressor(random_state=0).fit(X, signal)
    estimator.save(tmp_path / "m.npz")
    loaded = type(estimator).load(tmp_path / "m.npz")
    moments, w = estimator.state_.steps[0], np.asarray(estimator.state_.inner.w, np.float64)
    mean, sd = np.asarray(moments.mean, np.float64), np.asarray(moments.sd, np.float64)
    X[::2, 3] += 64  # (the constant feature off its training value)
    scaled = np.divide(X - mean, sd, out=np.zeros(X.shape), where=sd > 0)
    expected = scaled @ w[:4] + w[4]  # the intercept's feature is 1
    got = loaded.decision_function(X) if task == "binary" else loaded.predict(X)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6 * np.max(np.abs(expected)))
    if task == "binary":
        assert np.array_equal(loaded.predict(X), np.where(expected > 0, "yes", "no"))

    model = load(tmp_path / "m.npz")
    before = model._replace(w=model.w.astype(np.float32), offset=model.offset.astype(np.float32))
    save(before, tmp_path / "old.npz")
    old = load(tmp_path / "old.npz")
    assert old.w.dtype == np.float32 and old.settings == model.settings
    np.testing.assert_array_equal(scores(old, X), X.astype(np.float64) @ before.w.astype(np.float64) - before.offset)


@pytest.mark.parametrize("classes", [0, 3])
def test_scores_of_sparse_rows_are_the_dense_rows_in_float64(classes):
    """``modelfile.scores``: padded sparse rows, gathered a few rows at a time, score as their dense
    rows do, ``w . x - offset`` in float64 (binary (d,) and multiclass (K, d) weights), with weights
    that float32 would round."""
    from ocolearn.features import Sparse
    from ocolearn.modelfile import Model, scores

    rng = np.random.default_rng(0)
    d, n, k = 7, 11, 4  # k stored entries a row, some of them padding (value 0 at index 0)
    w = rng.standard_normal((classes, d) if classes else (d,)) * 1e6 + 1 / 3
    offset = rng.standard_normal((classes,) if classes else ()) + 1e6
    idx = np.stack([rng.choice(d, size=k, replace=False) for _ in range(n)]).astype(np.int32)
    val = rng.standard_normal((n, k)).astype(np.float32)
    val[::3, -1], idx[::3, -1] = 0.0, 0  # padding
    dense = np.zeros((n, d))
    np.add.at(dense, (np.arange(n)[:, None], idx), val.astype(np.float64))
    model = Model(w, [] if not classes else ["a", "b", "c"], {}, offset)
    expected = dense @ w.T
    expected -= offset  # (in place: a freed temporary of the scores' shape could fill an unwritten row)
    for rows in (2, 2048):  # in parts of 2 rows (the last part short) and whole
        got = scores(model, Sparse(idx, val, d), rows=rows)
        assert got.dtype == np.float64 and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-6)
    np.testing.assert_allclose(scores(model, dense), expected, rtol=1e-13, atol=1e-6)


def _text_model(statistics, d=1 << 18):
    settings = {"task": "binary", "format": "text", "dim": d, "bits": 18, "pipeline": [{"kind": "normalize"}]}
    return Model(np.zeros(d), ["neg", "pos"], settings | {"pipeline_state": statistics}, np.zeros(()))


def test_a_model_with_2_18_scales_round_trips_bit_for_bit_as_arrays(tmp_path):
    """The pipeline's lists of numbers are stored as arrays of the npz (not a JSON number per
    feature) and load as the same lists, to the bit: floats as floats, integers as integers;
    a list that mixes them stays JSON."""
    rng = np.random.default_rng(0)
    scales = (rng.normal(size=1 << 18) * 10.0 ** rng.integers(-300, 300, 1 << 18)).tolist()
    statistics = [scales, (7.0, [1.5, -0.0, 5e-324], [3, -(2**62)]), {"mixed": [1, 2.5], "n": 4, "empty": []}]
    save(_text_model(statistics), tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as f:
        assert len(str(f["settings"])) < 2000 and f["pipeline_state.0"].dtype == np.float64
        assert f["pipeline_state.0"].tobytes() == np.asarray(scales).tobytes()
        assert f["pipeline_state.2"].dtype == np.int64
    loaded = load(tmp_path / "m.npz").settings["pipeline_state"]
    assert loaded == [scales, [7.0, [1.5, -0.0, 5e-324], [3, -(2**62)]], {"mixed": [1, 2.5], "n": 4, "empty": []}]
    assert np.asarray(loaded[0]).tobytes() == np.asarray(scales).tobytes()
    assert [type(v) for v in loaded[1][2] + loaded[2]["mixed"]] == [int, int, int, float]
    assert np.signbit(loaded[1][1][1])


def test_a_model_file_of_before_with_json_statistics_loads_the_same(tmp_path):
    """A file written before the arrays (its statistics JSON lists) loads as it was written."""
    model = _text_model([[0.5, 2.0] * 8], d=16)
    settings = json.dumps(model.settings)
    np.savez(tmp_path / "old.npz", w=model.w, labels=np.asarray(model.labels), settings=settings, offset=model.offset)
    loaded = load(tmp_path / "old.npz")
    assert loaded.settings == model.settings and loaded.w.tobytes() == model.w.tobytes()
    save(loaded, tmp_path / "new.npz")
    assert load(tmp_path / "new.npz").settings == model.settings


def test_statistics_in_nested_tables_round_trip_and_only_int64_lists_become_arrays(tmp_path):
    # Lists of floats, and of ints that int64 holds, are stored as arrays wherever they sit in the
    # pipeline's state (in lists, in tables in lists, in tables in tables); an int list past int64 and
    # mixed lists stay JSON. Before, 2^63 would have overflowed int64 on the way out.
    state = {
        "scale": [0.5, 0.25, 1e300],
        "steps": [{"count": [3, -(2**63) + 1, 2**63 - 1]}, {"inner": {"mean": [1.5, -2.0]}}],
        "big": [2**63, 1],
        "mixed": [1, 2.5, "x"],
        "empty": [],
    }
    path = tmp_path / "m.npz"
    save(Model(np.zeros(3), [], {"task": "regression", "dim": 3, "pipeline_state": state}), path)
    assert load(path).settings["pipeline_state"] == state
    with np.load(path) as f:
        arrays = {key: f[key] for key in f.files if key.startswith("pipeline_state.")}
        text = str(f["settings"])
        stored = json.loads(text)["pipeline_state"]
    assert "\n" not in text  # compact JSON, one line
    assert sorted((a.dtype.name, a.tolist()) for a in arrays.values()) == sorted(
        [("float64", [0.5, 0.25, 1e300]), ("int64", [3, -(2**63) + 1, 2**63 - 1]), ("float64", [1.5, -2.0])]
    )
    assert stored["big"] == [2**63, 1] and stored["mixed"] == [1, 2.5, "x"] and stored["empty"] == []
    assert list(stored["steps"][1]["inner"]["mean"]) == ["npz"]


def test_a_model_file_that_is_a_device_is_named_so(tmp_path):
    with pytest.raises(DataError, match=r"^/dev/null: a character device, not a model file; ocolearn reads regular"):
        load("/dev/null")


def good_model(task="binary"):
    """A model ``check`` accepts: 3 features, labels and weights as the task has them."""
    labels = {"regression": [], "binary": ["no", "yes"], "multiclass": ["a", "b", "c"]}[task]
    w = np.zeros((3, 3)) if task == "multiclass" else np.zeros(3)
    return Model(w, labels, {"task": task, "dim": 3, "format": "svmlight"}, np.zeros(w.shape[:-1]))


def broken(task="binary", settings=None, **fields):
    model = good_model(task)
    return model._replace(settings={**model.settings, **(settings or {})}, **fields)


@pytest.mark.parametrize(
    "model, why",
    [
        (good_model()._replace(settings=[1]), "settings must be a table, got list"),
        (broken(settings={"task": "ranking"}), "task 'ranking' is not one of regression, binary, multiclass"),
        (broken(settings={"format": "xml"}), "format 'xml' is not one of svmlight, mira, csv, text, vw"),
        (broken(settings={"dim": True}), "dim must be a positive integer, got True"),
        (broken(settings={"dim": "3"}), "dim must be a positive integer, got '3'"),
        (broken(settings={"dim": 0}), "dim must be a positive integer, got 0"),
        (broken(settings={"dim": None}), "dim must be a positive integer, got None"),
        (broken(settings={"bits": True}), "bits must be an integer in 1..30, got True"),
        (broken(settings={"bits": 0}), "bits must be an integer in 1..30, got 0"),
        (broken(settings={"bits": 31}), "bits must be an integer in 1..30, got 31"),
        (broken(settings={"bits": 8.0}), "bits must be an integer in 1..30, got 8.0"),
        (broken(w=np.zeros(3, np.int64)), "w and offset must be arrays of floats"),
        (broken(offset=np.zeros((), np.int64)), "w and offset must be arrays of floats"),
        (broken("regression", w=np.zeros((1, 3))), "a regression model has weights of rank 1, got shape (1, 3)"),
        (broken("multiclass", w=np.zeros(3)), "a multiclass model has weights of rank 2, got shape (3,)"),
        (broken(w=np.zeros((2, 1, 3))), "a binary model has weights of rank 1 or 2, got shape (2, 1, 3)"),
        (broken(w=np.zeros(4)), "w has 4 columns for dim 3"),
        (broken(labels=["a", "b", "c"]), "a binary model names 2 labels, got 3"),
        (broken("multiclass", w=np.zeros((2, 3))), "w has 2 rows for 3 labels"),
        (broken(offset=np.zeros(3)), "offset has shape (3,) for weights of shape (3,)"),
        (broken("multiclass", offset=np.zeros(2)), "offset has shape (2,) for weights of shape (3, 3)"),
        (broken(w=np.array([0.0, np.nan, 1.0])), "its weights are not all finite (the training diverged)"),
        (broken(offset=np.array(np.inf)), "its weights are not all finite (the training diverged)"),
        (broken(settings={"format": "csv", "table": [1, 2]}), "its table of columns is not one: '[1, 2]'"),
        (
            broken(settings={"format": "csv", "table": {"numeric": ["a"]}}),
            "its table of columns makes 1 features, for dim 3",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_check_names_what_makes_a_model_unusable(model, why):
    from ocolearn.modelfile import check

    with pytest.raises(DataError) as caught:
        check(model, "m.npz")
    assert str(caught.value) == f"m.npz: not a usable ocolearn model: {why}"
    with pytest.raises(DataError, match=r"^the model: not a usable"):
        check(model)


@pytest.mark.parametrize(
    "model",
    [
        good_model("regression"),
        good_model("binary"),
        good_model("multiclass"),
        broken(w=np.zeros((2, 3)), offset=np.zeros(2)),  # one-vs-rest's two rows for two labels
        broken("multiclass", offset=np.zeros(())),
        broken(settings={"dim": 1}, w=np.zeros(1)),
        broken(settings={"bits": 1}),
        broken(settings={"bits": 30}),
        broken(settings={"format": "csv"}),
        broken(settings={"format": "csv", "table": {"numeric": ["a", "b", "c"]}}),
        broken(settings={"format": "svmlight", "table": [1, 2]}),  # a table is read only for csv
        good_model()._replace(settings={"dim": 3}),  # no task: binary from its two labels
    ],
)
def test_check_accepts_every_usable_model(model, tmp_path):
    from ocolearn.modelfile import check

    check(model, "m.npz")
    save(model, tmp_path / "m.npz")
    assert load(tmp_path / "m.npz").task == model.task


def test_a_model_without_a_task_takes_it_from_its_labels():
    assert [Model(np.zeros(3), labels, {}).task for labels in ([], ["a", "b"], ["a", "b", "c"])] == [
        "regression",
        "binary",
        "multiclass",
    ]


def test_load_names_the_file_and_what_is_wrong_with_it(tmp_path):
    def says(path, why):
        with pytest.raises(DataError) as caught:
            load(path)
        assert str(caught.value) == f"{path}: {why}"

    npz = "not an ocolearn model file (an .npz with w, labels, settings, offset)"
    says(tmp_path / "missing.npz", "no such model file")
    says(tmp_path, "a folder, not a model file")
    (tmp_path / "text.npz").write_text("w labels settings offset\n")
    says(tmp_path / "text.npz", npz)  # NumPy: "... pickled data when allow_pickle=False": no reason given
    (tmp_path / "pickled.npz").write_bytes(b"\x80\x04K\x01.")
    says(tmp_path / "pickled.npz", npz)
    np.savez(tmp_path / "partial.npz", w=np.zeros(3), labels=np.array([], str))
    says(tmp_path / "partial.npz", f"{npz}: it has no settings, offset")
    np.savez(tmp_path / "objects.npz", w=np.zeros(3), labels=np.array([{}], object), settings="{}", offset=0.0)
    says(tmp_path / "objects.npz", npz)
    deep = "[" * 100_000 + "]" * 100_000
    np.savez(tmp_path / "deep.npz", w=np.zeros(3), labels=np.array([], str), settings=deep, offset=0.0)
    says(tmp_path / "deep.npz", f"{npz}: settings nested too deep to read")
    for settings, kind in (("5", "int"), ('"pipeline_state"', "str"), ('["pipeline_state"]', "list")):
        np.savez(tmp_path / "odd.npz", w=np.zeros(3), labels=np.array([], str), settings=settings, offset=0.0)
        says(tmp_path / "odd.npz", f"not a usable ocolearn model: settings must be a table, got {kind}")


def test_scores_are_float64_whatever_the_stored_precision():
    # Model files before issue 41 hold float32 weights: they score in float64 as they were.
    from ocolearn.modelfile import scores

    rng = np.random.default_rng(2)
    w = rng.normal(size=5).astype(np.float32)
    X = rng.normal(size=(4, 5)).astype(np.float32)
    model = Model(w, [], {"task": "regression", "dim": 5}, np.float32(0.1))
    expected = X.astype(np.float64) @ w.astype(np.float64) - np.float64(np.float32(0.1))
    got = scores(model, X)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)
    idx = np.tile(np.arange(5, dtype=np.int32), (4, 1))
    sparse = scores(model, Sparse(idx, X, 5), rows=3)  # in chunks of 3 rows
    assert sparse.dtype == np.float64
    np.testing.assert_allclose(sparse, expected, rtol=1e-15)
    assert predict(model, X) == got.tolist()  # regression: the values themselves
