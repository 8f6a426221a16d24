"""The command line as a user meets it: regression and classification from any format through
train / predict / test, and every failure a user can provoke as one line ``ocolearn: error: ...``
with exit status 2. Commands run in-process (``main([...])``) to stay fast."""

import gc
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

from ocolearn.cli import main
from ocolearn.modelfile import load


def call(capsys, *args):
    """``(status, stdout, stderr)`` of ``ocolearn ARGS``; usage errors exit through SystemExit."""
    try:
        status = main([str(a) for a in args])
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(status, err, *words):
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1 and lines[0].startswith("ocolearn: error: "), err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def regression_data(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 3)
    y = np.round(X @ np.array([1.0, -2.0, 0.5, 0.0][:d]) + 0.3 * rng.normal(size=n), 4)
    return X, y


def write_csv(path, X, y=None, names=None):
    names = names or [f"x{j}" for j in range(X.shape[1])]
    header = ",".join(names + ([] if y is None else ["target"]))
    rows = [
        ",".join(f"{v:g}" for v in x) + ("" if y is None else f",{t:g}")
        for x, t in zip(X, y if y is not None else X, strict=True)
    ]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def write_svmlight(path, X, y=None):
    path.write_text(
        "".join(
            ("" if y is None else f"{t:g} ") + " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(x) if v) + "\n"
            for x, t in zip(X, y if y is not None else X, strict=True)
        )
    )
    return path


def pa_regression(X, y, C, epsilon):
    """PA-I regression (Crammer et al. 2006, Figure 1 and section 5) in float64, one pass."""
    w = np.zeros(X.shape[1])
    for x, t in zip(X, y, strict=True):
        loss = max(0.0, abs(w @ x - t) - epsilon)
        if x @ x > 0:
            w += np.sign(t - w @ x) * min(C, loss / (x @ x)) * x
    return w


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_pa_regression_from_csv_and_svmlight_equals_scikit_learn(tmp_path, capsys):
    from sklearn.linear_model import PassiveAggressiveRegressor

    X, y = regression_data()
    reference = PassiveAggressiveRegressor(
        C=0.5, epsilon=0.1, fit_intercept=False, shuffle=False, max_iter=1, tol=None
    ).fit(X, y)
    np.testing.assert_allclose(reference.coef_, pa_regression(X, y, 0.5, 0.1), rtol=1e-10)
    learner = ["--learner", "passive_aggressive", "--set", "loss.kind=epsilon_insensitive", "--set", "C=0.5"]
    learner += ["--no-intercept", "--scale", "none"]  # scikit-learn's rule without its intercept
    for name, path, extra in (
        ("csv", write_csv(tmp_path / "r.csv", X, y), ["--format", "csv", "--target", "target"]),
        ("svm", write_svmlight(tmp_path / "r.svm", X, y), []),
    ):
        status, _, err = call(capsys, "train", *learner, path, *extra, "--model", tmp_path / f"{name}.npz", "--quiet")
        assert status == 0, err
        model = load(tmp_path / f"{name}.npz")
        assert model.task == "regression" and model.labels == []
        np.testing.assert_allclose(model.w, reference.coef_, rtol=2e-5, atol=2e-6)
        status, out, _ = call(capsys, "predict", tmp_path / f"{name}.npz", path)
        predicted = np.array(out.split(), float)
        np.testing.assert_allclose(predicted, X @ model.w.astype(np.float64), rtol=1e-5, atol=1e-5)
        status, out, _ = call(capsys, "test", tmp_path / f"{name}.npz", path)
        metrics = dict(line.split() for line in out.splitlines())
        assert float(metrics["mse"]) == pytest.approx(np.mean((predicted - y) ** 2), rel=1e-5)
        assert float(metrics["mae"]) == pytest.approx(np.mean(np.abs(predicted - y)), rel=1e-5)
        assert int(metrics["rows"]) == len(y)


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("ogd", ["schedule.eta=0.05"]),
        ("adagrad", []),
        ("nag", []),
        ("ons", []),
        ("coin_betting", []),
        ("optax", ["transformation=adam", "hyperparams.learning_rate=0.05"]),
    ],
)
def test_every_regression_learner_trains_from_the_command_line(tmp_path, capsys, name, overrides):
    X, y = regression_data()
    path = write_svmlight(tmp_path / "r.svm", X, y)
    sets = [a for o in overrides for a in ("--set", o)]
    model = tmp_path / "m.npz"  # (ogd's eta is one for features of unit scale, unscaled)
    status, _, err = call(
        capsys, "train", "--learner", name, *sets, path, "--model", model, "--passes", 3, "--scale", "none"
    )
    assert status == 0, err
    status, out, _ = call(capsys, "test", tmp_path / "m.npz", path)
    mse = float(dict(line.split() for line in out.splitlines())["mse"])
    assert mse < 0.5 * np.var(y)  # it learned: well below predicting the mean


def test_a_real_valued_target_is_never_thousands_of_classes(tmp_path, capsys):
    X, y = regression_data(n=300)
    path = write_csv(tmp_path / "r.csv", X, y)
    for learner, words in (
        ("passive_aggressive", ["real-valued", "loss=epsilon_insensitive"]),
        ("pegasos", ["regression learner"]),
    ):
        args = ["train", "--learner", learner, path, "--format", "csv", "--target", "target"]
        one_line_error(*call(capsys, *args, "--model", tmp_path / "m.npz")[::2], *words)
    assert not (tmp_path / "m.npz").exists()


def test_predict_without_labels_and_with_unseen_features(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(150, 5)), 3)
    labels = np.where(X @ [1.0, -1.0, 2.0, 0.0, 0.5] > 0, 1, -1)
    train = write_svmlight(tmp_path / "train.svm", X, labels)
    assert call(capsys, "train", "--learner", "perceptron", train, "--model", tmp_path / "m.npz", "--passes", 3)[0] == 0
    expected = call(capsys, "predict", tmp_path / "m.npz", train)[1].split()
    no_labels = write_svmlight(tmp_path / "none.svm", X)
    assert call(capsys, "predict", tmp_path / "m.npz", no_labels)[1].split() == expected
    placeholder = write_svmlight(tmp_path / "zero.svm", X, np.zeros(len(X)))
    assert call(capsys, "predict", tmp_path / "m.npz", placeholder)[1].split() == expected
    unseen = tmp_path / "unseen.svm"  # feature 9 is beyond the model's 5: another data set, refused as by test
    unseen.write_text("".join(line.rstrip() + " 9:4.5\n" for line in no_labels.read_text().splitlines()))
    for command in ("predict", "test"):
        status, _, err = call(capsys, command, tmp_path / "m.npz", unseen)
        assert status == 2 and "unseen.svm, line 1" in err and "9" in err, err
    model = load(tmp_path / "m.npz")
    status, out, _ = call(capsys, "predict", tmp_path / "m.npz", train, "--scores")
    expected_scores = X @ model.w.astype(np.float64) - model.offset  # the offset: minus the intercept
    np.testing.assert_allclose(np.array(out.split(), float), expected_scores, rtol=1e-5, atol=1e-5)
    assert model.offset != 0 and model.settings["pipeline"] == [
        {"kind": "normalize"},
        {"kind": "intercept", "value": 1.0},
    ]
    # Testing needs labels: a line without one names its line.
    one_line_error(*call(capsys, "test", tmp_path / "m.npz", no_labels)[::2], "none.svm, line 1", "no label")
    # A CSV file without the target column.
    csv_train = write_csv(tmp_path / "t.csv", X, labels)
    status, _, err = call(
        capsys,
        "train",
        "--learner",
        "perceptron",
        csv_train,
        "--format",
        "csv",
        "--target",
        "target",
        "--model",
        tmp_path / "c.npz",
        "--passes",
        3,
    )
    assert status == 0, err
    with_target = call(capsys, "predict", tmp_path / "c.npz", csv_train)[1].split()
    assert call(capsys, "predict", tmp_path / "c.npz", write_csv(tmp_path / "x.csv", X))[1].split() == with_target
    # --out writes atomically, with the user's normal permissions.
    status, out, _ = call(capsys, "predict", tmp_path / "m.npz", no_labels, "--out", tmp_path / "sub" / "p.txt")
    assert status == 0 and out == "" and (tmp_path / "sub" / "p.txt").read_text().split() == expected
    mode = stat.S_IMODE(os.stat(tmp_path / "sub" / "p.txt").st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_multiclass_test_prints_error_rate_and_confusion(tmp_path, capsys):
    rng = np.random.default_rng(2)
    X = np.round(rng.normal(size=(240, 4)), 3)
    y = np.argmax(X @ rng.normal(size=(4, 3)), axis=1) + 1
    path = write_svmlight(tmp_path / "m.svm", X, y)
    status, _, err = call(capsys, "train", "--learner", "perceptron", path, "--model", tmp_path / "m.npz")
    assert status == 0, err
    predicted = np.array(call(capsys, "predict", tmp_path / "m.npz", path)[1].split(), int)
    out = call(capsys, "test", tmp_path / "m.npz", path)[1].splitlines()
    assert float(out[0].split()[1]) == pytest.approx(np.mean(predicted != y), abs=1e-6)
    start = next(i for i, line in enumerate(out) if line.startswith("confusion")) + 1
    confusion = np.array([line.split()[1:] for line in out[start:]], int)
    expected = np.zeros((3, 3), int)
    np.add.at(expected, (y - 1, predicted - 1), 1)
    np.testing.assert_array_equal(confusion, expected)


def test_normalized_scales_each_class_to_unit_norm(tmp_path, capsys):
    rng = np.random.default_rng(4)
    X = np.round(rng.normal(size=(120, 4)), 3)
    path = write_svmlight(tmp_path / "m.svm", X, np.argmax(X[:, :3], axis=1))
    for extra in ([], ["--normalized"]):
        status, _, err = call(
            capsys,
            "train",
            "--learner",
            "mira",
            path,
            "--average",
            *extra,
            "--model",
            tmp_path / f"m{len(extra)}.npz",
            "--zero-based",
        )
        assert status == 0, err
    plain, unit = load(tmp_path / "m0.npz"), load(tmp_path / "m1.npz")
    np.testing.assert_allclose(unit.w, plain.w / np.linalg.norm(plain.w, axis=1, keepdims=True), rtol=1e-6)
    assert unit.settings["normalized"] and not plain.settings["normalized"]


def test_model_made_in_python_reads_files(tmp_path):
    from ocolearn import Perceptron
    from ocolearn.data.sparse_text import SparseData
    from ocolearn.features import Sparse
    from ocolearn.pipeline import evaluate, predictions, train

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.5], [0.2, 1.0]])
    y = np.array([1, 0, 1, 0], np.int32)
    sparse = Sparse(np.array([[0, 1]] * 4, np.int32), X.astype(np.float32), 2)
    model = train(Perceptron(), SparseData(sparse, y, ["a", "b"]), passes=3)
    path = tmp_path / "d.svm"
    path.write_text("b 1:1 2:0\na 1:0 2:1\n".replace("b", "1").replace("a", "0"))
    model = model._replace(labels=["0", "1"])
    assert "".join(predictions(model, path)) == "1\n0\n"
    assert evaluate(model, path)["error_rate"] == 0.0


def test_failures_are_one_line_errors(tmp_path, capsys):
    X, y = regression_data(n=50)
    data = write_svmlight(tmp_path / "d.svm", X, np.where(y > 0, 1, -1))
    model = tmp_path / "m.npz"
    train = ["train", "--learner", "perceptron"]
    folder = ["--format", "svmlight", "--model", model]  # (without --format a folder is read as text)
    one_line_error(*call(capsys, *train, tmp_path, *folder)[::2], str(tmp_path), "a folder")
    one_line_error(*call(capsys, *train, data, "--model", model, "--chunk-rows", 0)[::2], "--chunk-rows")
    one_line_error(*call(capsys, *train, data, "--model", model, "--passes", 0)[::2], "--passes")
    one_line_error(*call(capsys, *train, data, "--model", model, "--bits", 40)[::2], "--bits")
    one_line_error(*call(capsys, "train", "--learner", "ogd", data, "--model", model, "--average")[::2], "--average")
    assert call(capsys, *train, data, "--model", model)[0] == 0
    truncated = tmp_path / "cut.npz"
    truncated.write_bytes(model.read_bytes()[:200])
    one_line_error(*call(capsys, "predict", truncated, data)[::2], "cut.npz", "not an ocolearn model file")
    one_line_error(*call(capsys, "test", tmp_path / "nothing.npz", data)[::2], "nothing.npz")
    huge = tmp_path / "huge.svm"
    huge.write_text("1 1:0.5\n-1 1:1e300\n")
    one_line_error(*call(capsys, *train, huge, "--model", model)[::2], "huge.svm, line 2", "float32")
    one_line_error(
        *call(capsys, "train", "--learner", "one_vs_rest", "--set", "base.kind=mira", data, "--model", model)[::2],
        "--learner",
    )


def test_learner_errors_come_before_any_data_is_read(tmp_path, capsys, monkeypatch):
    import ocolearn.pipeline

    def no_reading(*args, **kw):
        raise AssertionError("the data was read")

    monkeypatch.setattr(ocolearn.pipeline, "scan", no_reading)
    monkeypatch.setattr(ocolearn.pipeline, "prepare", no_reading)
    data = tmp_path / "d.svm"
    for learner, sets, word in (
        ("passive_aggressive", ["variant=7"], "variant"),
        ("optax", ["transformation=adamm"], "adamm"),
        ("pegasos", ["lamm=1"], "lamm"),
    ):
        args = ["train", "--learner", learner, *[a for s in sets for a in ("--set", s)], data, "--model", "m.npz"]
        one_line_error(*call(capsys, *args)[::2], word)


def test_non_finite_weights_stop_the_run(tmp_path, capsys):
    X, y = regression_data(n=50)
    data = write_svmlight(tmp_path / "d.svm", X * 1e15, y)
    status, _, err = call(
        capsys,
        "train",
        "--learner",
        "ogd",
        "--set",
        "schedule.eta=10",
        data,
        "--model",
        tmp_path / "m.npz",
        "--scale",
        "none",
    )
    one_line_error(status, err, "d.svm, lines", "NaN or infinite", " round ", "--scale normalize")
    assert not (tmp_path / "m.npz").exists()


def test_ctrl_c_prints_one_line_with_the_checkpoint_and_exits_130(tmp_path, capsys, monkeypatch):
    import ocolearn.streaming

    X, y = regression_data(n=400)
    data = write_svmlight(tmp_path / "d.svm", X, np.where(y > 0, 1, -1))
    real = ocolearn.streaming.run

    calls = []

    def interrupted(*args, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(ocolearn.streaming, "run", interrupted)
    ckpt = tmp_path / "c.npz"
    status, _, err = call(
        capsys,
        "train",
        "--learner",
        "perceptron",
        data,
        "--model",
        tmp_path / "m.npz",
        "--chunk-rows",
        100,
        "--checkpoint",
        ckpt,
        "--checkpoint-every",
        100,
        "--quiet",
    )
    assert (
        status == 130
        and err.strip() == f"ocolearn: interrupted; the last checkpoint is {ckpt} (continue with --resume)"
    )
    assert not (tmp_path / "m.npz").exists()


def test_a_full_disk_keeps_the_old_model(tmp_path, capsys, monkeypatch):
    import errno

    import ocolearn.io

    X, y = regression_data(n=50)
    data = write_svmlight(tmp_path / "d.svm", X, np.where(y > 0, 1, -1))
    model = tmp_path / "m.npz"
    model.write_bytes(b"old model")

    def full(fd, *args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(model))

    monkeypatch.setattr(ocolearn.io.os, "fsync", full)
    status, _, err = call(capsys, "train", "--learner", "perceptron", data, "--model", model, "--quiet")
    one_line_error(status, err, "m.npz", "No space left")
    assert model.read_bytes() == b"old model" and [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def text_corpus(root, n=60, seed=0):
    """Two labels whose documents use mostly their own words: a corpus a linear model separates."""
    rng = np.random.default_rng(seed)
    words = {"pos": ["great", "superb", "moving", "fine"], "neg": ["dull", "boring", "awful", "weak"]}
    shared = ["film", "plot", "actor", "the", "a", "scene"]
    for label, own in words.items():
        (root / label).mkdir(parents=True)
        for i in range(n):
            doc = list(rng.choice(own, 3)) + list(rng.choice(shared, 5))
            (root / label / f"{i:03d}.txt").write_text(" ".join(doc))
    return root


README_TEXT_COMMAND = [
    "--learner",
    "pegasos",
    "--set",
    "lam=0.1",
    "--scale",
    "normalize",
    "--no-intercept",
    "--passes",
    "10",
]


def test_the_readme_text_command_gives_a_real_model(tmp_path, capsys):
    """The README's settings for text folders (Pegasos, lambda 0.1, VW-style normalize, no
    intercept, 10 passes), scored on documents it never saw."""
    corpus = text_corpus(tmp_path / "reviews")
    unseen = text_corpus(tmp_path / "unseen", n=50, seed=1)
    args = ["train", *README_TEXT_COMMAND, "--format", "text", corpus]
    status, _, err = call(capsys, *args, "--model", tmp_path / "m.npz", "--quiet")
    assert status == 0, err
    assert load(tmp_path / "m.npz").settings["order_seed"] == 0
    rate = float(call(capsys, "test", tmp_path / "m.npz", unseen)[1].split()[1])
    assert rate < 0.1
    # Read in folder order (sorted labels), one pass of the same learner is no better than a constant.
    from ocolearn.pipeline import TrainOptions, evaluate, train_file

    sorted_model = train_file(
        "pegasos", ["lam=0.1"], corpus, TrainOptions(fmt="text", order_seed=None, scale="normalize", intercept=False)
    )
    assert evaluate(sorted_model, unseen)["error_rate"] >= 0.4


def test_a_file_sorted_by_label_is_warned_about(tmp_path, capsys):
    X = np.round(np.random.default_rng(0).normal(size=(100, 3)), 3)
    data = write_svmlight(tmp_path / "s.svm", X, np.repeat([-1, 1], 50))
    status, _, err = call(capsys, "train", "--learner", "perceptron", data, "--model", tmp_path / "m.npz", "--quiet")
    assert status == 0 and "ocolearn: warning: " in err and "sorted" in err


def write_config(path, text):
    path.write_text(text)
    return path


def test_run_on_svmlight_regression_holds_out_test_rows_and_saves_the_model(tmp_path, capsys):
    X, y = regression_data(n=200)
    data = write_svmlight(tmp_path / "r.svm", X, y)
    config = write_config(
        tmp_path / "r.toml",
        f'name = "r"\n[data]\nsource = "{data}"\nformat = "svmlight"\ntest = 0.25\n'
        '[learner]\nkind = "ogd"\nschedule = { kind = "constant", eta = 0.05 }\n[run]\npasses = 2\n'
        '[pipeline]\nscale = "none"\n',
    )
    status, out, err = call(capsys, "run", config, "--out", tmp_path / "out")
    assert status == 0, err
    import json

    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    model = load(tmp_path / "out" / "model.npz")
    assert model.task == "regression" and metrics["T"] == 2 * 150 and metrics["test_rows"] == 50
    from ocolearn.experiment import split_validation

    _, test = split_validation(None, y, 0.25, 0)
    *w, b = metrics["final_w"]  # the learner's weights: the features', then the intercept's (sparse: not scaled)
    np.testing.assert_allclose(model.w, w, rtol=1e-6)
    np.testing.assert_allclose(model.offset, -b, rtol=1e-6)
    assert metrics["test_mse"] == pytest.approx(np.mean((X[test] @ w + b - y[test]) ** 2), rel=1e-4)
    mse = float(call(capsys, "test", tmp_path / "out" / "model.npz", data)[1].split()[1])
    assert mse == pytest.approx(np.mean((X @ w + b - y) ** 2), rel=1e-4)


def test_run_model_of_a_scaled_table_reads_the_raw_columns(tmp_path, capsys):
    from pathlib import Path

    from ocolearn.data import load_iris, scale, table_csv

    config = Path(__file__).parent.parent / "configs/iris_ridge_magic.toml"
    status, _, err = call(capsys, "run", config, "--out", tmp_path / "out")
    assert status == 0, err
    import json

    w = np.asarray(json.loads((tmp_path / "out" / "metrics.json").read_text())["final_w"])
    features = ["Sepal.Width", "Sepal.Length", "Petal.Length"]
    raw = load_iris()
    scaled = scale(raw)
    expected = np.stack([scaled[f] for f in features], 1) @ w * raw["Petal.Width"].std(ddof=1)
    expected += raw["Petal.Width"].mean()  # the target was scaled too: predictions are in cm again
    csv = tmp_path / "iris.csv"
    csv.write_text(table_csv(raw))
    out = call(capsys, "predict", tmp_path / "out" / "model.npz", csv)[1]
    np.testing.assert_allclose(np.array(out.split(), float), expected, rtol=1e-5, atol=1e-5)


def test_run_infers_the_classes(tmp_path, capsys):
    config = write_config(
        tmp_path / "w.toml",
        'name = "w"\n[data]\nsource = "wine"\nfeatures = ["alcohol", "flavanoids", "color_intensity", "proline"]\n'
        'target = "Cultivar"\ntest = 0.3\n[learner]\nkind = "perceptron"\n'
        "[run]\npasses = 5\nshuffle_seed = 0\n",
    )
    status, _, err = call(capsys, "run", config, "--out", tmp_path / "out")
    assert status == 0, err
    model = load(tmp_path / "out" / "model.npz")
    assert model.w.shape == (3, 4) and model.labels == ["cultivar_1", "cultivar_2", "cultivar_3"]


def pegasos_svmlight(tmp_path, n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 6)), 3)
    y = np.where(X @ rng.normal(size=6) + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y, write_svmlight(tmp_path / "c.svm", X, y)


def test_sweep_scores_classifiers_by_held_out_error(tmp_path, capsys):
    from ocolearn import Pegasos
    from ocolearn.experiment import split_validation
    from ocolearn.pipeline import raw_linear, with_pipeline
    from ocolearn.preprocess import Intercept, Normalize
    from ocolearn.run import run_passes

    X, y, data = pegasos_svmlight(tmp_path)
    config = write_config(
        tmp_path / "p.toml",
        f'name = "p"\n[data]\nsource = "{data}"\nformat = "svmlight"\n[learner]\nkind = "pegasos"\n'
        "[run]\npasses = 2\nshuffle_seed = 0\n[sweep]\nvalidation = 0.3\n"
        '[sweep.values]\n"learner.lam" = [0.001, 0.1, 10.0]\n',
    )
    status, out, err = call(capsys, "sweep", config, "--out", tmp_path / "out")
    assert status == 0, err
    import json

    best = json.loads((tmp_path / "out" / "best.json").read_text())
    table = np.genfromtxt(tmp_path / "out" / "sweep.csv", delimiter=",", names=True)
    train, held = split_validation(None, y, 0.3, 0)
    for lam, error in zip(table["learnerlam"], table["validation_error"], strict=True):
        learner = with_pipeline(Pegasos(lam=float(lam)), (Normalize(), Intercept()))  # the default for sparse rows
        state = run_passes(learner, X[train].astype(np.float32), y[train].astype(np.float32), 0, passes=2).state
        w, offset = raw_linear(learner, state)
        assert error == pytest.approx(np.mean((X[held] @ w - offset) * y[held] <= 0), abs=1e-6)
    assert best["score"] == "validation_error" and best["mean_score"] == pytest.approx(min(table["validation_error"]))
    # The hinge as the score, and a regression sweep on the same kind of file.
    status, _, err = call(capsys, "sweep", config, "--set", 'sweep.score="hinge"', "--out", tmp_path / "h")
    assert status == 0 and json.loads((tmp_path / "h" / "best.json").read_text())["score"] == "learner_loss", err


def test_the_pegasos_lambda_curve_config_runs_through_sweep(tmp_path, capsys):
    from pathlib import Path

    corpus = text_corpus(tmp_path / "reviews", n=40)
    config = Path(__file__).parent.parent / "configs/polarity_pegasos.toml"
    sets = [f"data.source={corpus}", "sweep.seeds=2", "run.passes=2", 'sweep.values."learner.lam"=[0.01, 0.5]']
    status, _, err = call(capsys, "sweep", config, *[a for s in sets for a in ("--set", s)], "--out", tmp_path / "o")
    assert status == 0, err
    table = np.genfromtxt(tmp_path / "o" / "sweep.csv", delimiter=",", names=True)
    assert table.shape == (4,) and np.all(table["validation_error"] < 0.2)


def test_arrays_and_sparse_matrices_read_as_the_file(tmp_path):
    import scipy.sparse

    from ocolearn.data.arrays import arrays_source
    from ocolearn.data.stream import Source, chunks
    from ocolearn.pipeline import in_memory, prepare

    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(90, 6)), 3) * (rng.random((90, 6)) < 0.5)
    y = np.where(X @ rng.normal(size=6) > 0, 1, -1)
    path = write_svmlight(tmp_path / "a.svm", X, y)
    from_file = in_memory(prepare(Source(str(path), dim=6))[0])
    for source in (arrays_source(X, y), arrays_source(scipy.sparse.csr_matrix(X), y)):
        source, task, _ = prepare(source)
        assert task == "binary" and source.labels == ("-1", "1")
        data = in_memory(source)
        dense = data.X if isinstance(data.X, np.ndarray) else data.X.todense()
        np.testing.assert_array_equal(dense, from_file.X.todense())
        np.testing.assert_array_equal(data.y, from_file.y)
        assert [len(c.y) for c in chunks(source, chunk_rows=40)] == [40, 40, 10]
    regression = prepare(arrays_source(X, X @ np.arange(6.0) + 0.5))[1]
    assert regression == "regression"
    with pytest.raises(Exception, match=r"<arrays 90 x 6>, row 3"):
        bad = X.copy()
        bad[2, 0] = np.inf
        in_memory(prepare(arrays_source(bad, y))[0])


def test_given_labels_and_dimension_read_the_file_once(tmp_path, capsys, monkeypatch):
    import ocolearn.pipeline

    def no_first_pass(*args, **kw):
        raise AssertionError("a first pass over the file")

    X, y, data = pegasos_svmlight(tmp_path, n=60)
    monkeypatch.setattr(ocolearn.pipeline, "scan", no_first_pass)
    args = ["train", "--learner", "pegasos", data, "--bits", 8, "--labels=-1,1", "--model", tmp_path / "m.npz"]
    status, _, err = call(capsys, *args)
    assert status == 0 and load(tmp_path / "m.npz").task == "binary", err


def test_the_task_can_be_declared(tmp_path, capsys):
    rng = np.random.default_rng(6)
    X = np.round(rng.normal(size=(120, 3)), 3)
    ratings = np.clip(np.round(X @ [1.0, 0.5, -1.0] + 3), 1, 5).astype(int)  # 1..5: classes unless declared
    data = write_svmlight(tmp_path / "r.svm", X, ratings)
    train = ["train", "--learner", "ogd", data, "--model", tmp_path / "m.npz"]
    one_line_error(*call(capsys, *train)[::2], "multiclass", "one_vs_rest")
    assert call(capsys, *train, "--task", "regression")[0] == 0 and load(tmp_path / "m.npz").task == "regression"
    one_line_error(*call(capsys, *train, "--task", "binary")[::2], "--task binary needs exactly two labels")
    # Prediction streams in chunks: any chunk size gives the same lines.
    assert (
        call(capsys, "predict", tmp_path / "m.npz", data, "--chunk-rows", 7)[1]
        == call(capsys, "predict", tmp_path / "m.npz", data)[1]
    )


def test_python_dash_m_ocolearn_is_the_ocolearn_command():
    """``python -m ocolearn`` runs the same command as the ``ocolearn`` script (its usage, and a
    usage error's status 2)."""
    ok = subprocess.run([sys.executable, "-m", "ocolearn", "--help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "usage: ocolearn" in ok.stdout, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "ocolearn", "nonsense"], capture_output=True, text=True)
    assert bad.returncode == 2 and "ocolearn: error:" in bad.stderr.splitlines()[-1]


def test_the_regression_learners_named_are_the_registrys_and_pipeline_is_not_offered():
    """The list a classifier's error gives for a real-valued target is read from the registry:
    every learner whose defaults have a regression loss (it missed cocob, dog, flh, ftrl,
    mechanic, metagrad, omd, sketched_ons), no classifier; ``pipeline`` (built by the doors, not
    named) is not among the known learners an unknown name lists."""
    from ocolearn.config import ConfigError
    from ocolearn.pipeline import build_learner, regression_learners

    named = regression_learners().split(", ")
    assert {"ogd", "cocob", "dog", "flh", "ftrl", "mechanic", "metagrad", "omd", "sketched_ons"} <= set(named)
    assert not {"pegasos", "perceptron", "mira", "cw", "pipeline"} & set(named)
    with pytest.raises(ConfigError, match="known: adagrad") as error:
        build_learner("pegasus")
    assert "pipeline" not in str(error.value)


def test_train_options_are_the_command_lines_one_value():
    """``train``'s parsed arguments become one ``TrainOptions`` (``of_args``): the command line's
    defaults are its defaults, and each option sets its own field (every field differs here)."""
    import dataclasses

    import ocolearn.learners.pipeline
    import ocolearn.pipeline
    from ocolearn.cli import parser
    from ocolearn.pipeline import TrainOptions

    assert TrainOptions.of_args(parser().parse_args(["train", "d", "--model", "m"])) == TrainOptions()
    given = ["--format", "csv", "--chunk-rows", "7", "--target", "y", "--task", "binary", "--bits", "12"]
    given += ["--dim", "9", "--labels", "a,b", "--zero-based", "--skip-bad", "--columns", "c,d", "--ignore", "e"]
    given += ["--categorical", "c", "--numeric", "d", "--no-intercept", "-q", "cd", "--scale", "normalize"]
    given += ["--passes", "3", "--seed", "5", "--order-seed", "4", "--stop-early", "--average", "--normalized"]
    given += ["--checkpoint", "k.npz", "--checkpoint-every", "6", "--resume", "--holdout", "8"]
    options = TrainOptions.of_args(parser().parse_args(["train", "d", "--model", "m", *given]))
    assert options == TrainOptions(
        fmt="csv",
        chunk_rows=7,
        target="y",
        task="binary",
        bits=12,
        dim=9,
        labels=("a", "b"),
        zero_based=True,
        skip_bad=True,
        columns=("c", "d"),
        ignore=("e",),
        categorical=("c",),
        numeric=("d",),
        intercept=False,
        interactions=("cd",),
        scale="normalize",
        passes=3,
        seed=5,
        order_seed=4,
        stop_early=True,
        averaged=True,
        normalize=True,
        checkpoint="k.npz",
        checkpoint_every=6,
        resume=True,
        holdout=8,
    )
    unchanged = [f.name for f in dataclasses.fields(TrainOptions) if getattr(options, f.name) == f.default]
    assert unchanged == []
    # The learner's old home still answers (the pipeline is ocolearn.learners.pipeline's).
    assert ocolearn.pipeline.Pipeline is ocolearn.learners.pipeline.Pipeline


def test_a_finished_command_leaves_its_objects_to_the_exit(monkeypatch):
    """``entry`` runs ``main`` collecting the youngest objects every 10,000 (not 700: JAX's and
    numba's imports) and exits with its status after ``gc.freeze``: Python's exit then does not
    collect garbage over JAX's and numba's objects (its outputs are written by then)."""
    from ocolearn import cli

    calls = []
    monkeypatch.setattr(cli.interrupts, "install", lambda: None)
    monkeypatch.setattr(cli.signal, "signal", lambda *args: None)  # (this process keeps its handlers)
    monkeypatch.setattr(cli, "main", lambda: calls.append("main") or 2)
    monkeypatch.setattr(cli.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(cli.gc, "set_threshold", lambda *counts: calls.append(counts))
    with pytest.raises(SystemExit) as exit_:
        cli.entry()
    assert exit_.value.code == 2 and calls == [(10_000, *gc.get_threshold()[1:]), "main", "freeze"]


def test_train_reads_the_format_its_data_is_named_for(tmp_path, capsys):
    # Without --format: a .csv file as CSV, a .vw file as VW's text, a folder as text documents,
    # anything else as svmlight; each model file records the format it read, and --format still wins.
    X, y = regression_data(n=60)
    csv = write_csv(tmp_path / "r.CSV", X, y)
    vw = tmp_path / "r.vw"
    vw.write_text("".join(f"{t} | a:{r[0]} b:{r[1]}\n" for r, t in zip(X, y, strict=True)))
    folder = text_corpus(tmp_path / "docs", n=8)
    svm = write_svmlight(tmp_path / "r.dat", X, y)
    for path, extra, expected in (
        (csv, ["--target", "target"], "csv"),
        (vw, [], "vw"),
        (folder, [], "text"),
        (svm, [], "svmlight"),
    ):
        status, _, err = call(capsys, "train", path, *extra, "--model", tmp_path / "m.npz", "--quiet")
        assert status == 0, err
        assert load(tmp_path / "m.npz").settings["format"] == expected
    status, _, err = call(capsys, "train", csv, "--format", "svmlight", "--model", tmp_path / "m.npz")
    assert status == 2 and "r.CSV" in err
