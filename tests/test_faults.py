"""Issue 41's fault trial and issue 42's sizes: crafted files, extreme numbers and settings that
run in float64 but not in float32 are one line ``ocolearn: error: ...`` (exit 2) naming the
file or the option, before anything is allocated or run; never a traceback, a hang or a
silently wrong result. Commands run in-process (``main([...])``)."""

import json

import numpy as np
import pytest
from test_cli import call, one_line_error
from test_inputs import labelled_svmlight


def train(capsys, data, model, *options, learner="perceptron"):
    return call(capsys, "train", "--learner", learner, data, "--model", model, "--quiet", *options)


# Checkpoints ------------------------------------------------------------------------------------


@pytest.fixture
def checkpointed(tmp_path, capsys):
    """``(data, checkpoint, its arrays, its progress record, the options)`` of a 2-pass run of
    150 rows in chunks of 50, whose checkpoint stands at the end of the last pass."""
    data, ckpt = labelled_svmlight(tmp_path / "d.svm", n=150), tmp_path / "c.npz"
    options = ["--chunk-rows", 50, "--checkpoint", ckpt, "--passes", 2]
    assert train(capsys, data, tmp_path / "m.npz", *options)[0] == 0
    with np.load(ckpt) as f:
        arrays = dict(f)
    return data, ckpt, arrays, json.loads(str(arrays["where"])), options


def test_a_truncated_checkpoint_is_one_line(tmp_path, capsys, checkpointed):
    # Before: zipfile.BadZipFile's traceback.
    data, ckpt, _, _, options = checkpointed
    ckpt.write_bytes(ckpt.read_bytes()[:300])
    one_line_error(*train(capsys, data, tmp_path / "m.npz", *options, "--resume")[::2], "c.npz", "cut short")


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda w: {**w, "pass": "1"}, ["'pass' is '1'"]),  # before: TypeError
        (lambda w: {k: v for k, v in w.items() if k != "rounds"}, ["no 'rounds'"]),  # before: KeyError
        (lambda w: {**w, "mistakes": [3, "a"]}, ["'mistakes'"]),  # before: ValueError of the progress line
        (lambda w: [1, 2], ["is a list"]),  # before: TypeError
        (lambda w: {**w, "pass": 5}, ["pass 6", "--passes 2"]),
        (lambda w: {**w, "offset": 10**6}, ["byte offset 1000000", "d.svm"]),  # before: exit 0, pass 2 read nothing
    ],
)
def test_a_crafted_progress_record_is_refused_naming_the_checkpoint(tmp_path, capsys, checkpointed, change, words):
    data, ckpt, arrays, where, options = checkpointed
    np.savez(ckpt, **{**arrays, "where": json.dumps(change(where))})
    err = train(capsys, data, tmp_path / "m.npz", *options, "--resume")[::2]
    one_line_error(*err, "c.npz", "start again without --resume", *words)


def test_the_untouched_checkpoint_still_resumes(tmp_path, capsys, checkpointed):
    data, ckpt, arrays, where, options = checkpointed
    status, _, err = train(capsys, data, tmp_path / "m.npz", *options, "--resume")
    assert status == 0, err


# Numbers too large to count, nesting too deep to read --------------------------------------------


def test_a_count_option_beyond_int32_is_a_usage_error(tmp_path, capsys):
    # Before: --holdout 10^30 raised OverflowError (a C long) while training.
    data = labelled_svmlight(tmp_path / "d.svm", n=50)
    for option in ("--holdout", "--passes", "--chunk-rows", "--checkpoint-every"):
        err = train(capsys, data, tmp_path / "m.npz", option, 10**30)[::2]
        one_line_error(*err, option, "more than 2147483647")


def test_nesting_too_deep_to_read_is_one_line_naming_the_file_or_option(tmp_path, capsys):
    # Before: RecursionError's traceback from tomllib or json.
    deep = tmp_path / "deep.toml"
    deep.write_text("name = 'x'\na = " + "[" * 100_000 + "]" * 100_000 + "\n")
    one_line_error(*call(capsys, "run", deep)[::2], "deep.toml", "nested too deep")
    study = tmp_path / "study.toml"
    study.write_text("name = 's'\n[evaluate]\nx = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n")
    one_line_error(*call(capsys, "study", study)[::2], "study.toml", "nested too deep")
    data = labelled_svmlight(tmp_path / "d.svm", n=50)
    brackets = "C=" + "[" * 30_000 + "]" * 30_000
    err = train(capsys, data, tmp_path / "m.npz", "--set", brackets, learner="passive_aggressive")[::2]
    one_line_error(*err, "--set", "nested too deep")
    model = tmp_path / "deep.npz"
    settings = "[" * 100_000 + "]" * 100_000
    np.savez(model, w=np.zeros(4), labels=np.array([], str), settings=settings, offset=np.zeros(()))
    one_line_error(*call(capsys, "predict", model, data)[::2], "deep.npz", "nested too deep")


def iris_config(path, more: str, features="['Sepal.Width']"):
    """A config of OGD on iris's Petal.Width from ``features``, with ``more`` TOML after ``[learner]``'s kind."""
    path.write_text(
        f"name = 'x'\n[data]\ntarget = 'Petal.Width'\nfeatures = {features}\n[learner]\nkind = 'ogd'\n{more}"
    )
    return path


# Numbers that are valid in float64 and not in float32 --------------------------------------------


@pytest.mark.parametrize(
    "learner, setting",
    [("passive_aggressive", "C=1e-45"), ("passive_aggressive", "C=1e-50"), ("ogd", "schedule.eta=1e-300")],
)
def test_a_setting_that_is_zero_in_float32_is_refused(tmp_path, capsys, learner, setting):
    # Before: PA with C = 1e-45 made 150 mistakes of 150, w = 0, exit 0 (XLA's CPU flushes float32's
    # subnormals to 0, and 1e-50 rounds to 0).
    data = labelled_svmlight(tmp_path / "d.svm", n=50)
    err = train(capsys, data, tmp_path / "m.npz", "--set", setting, learner=learner)[::2]
    one_line_error(*err, f"learner.{setting.split('=')[0]} must be > 0, got 0 in float32")


def test_a_config_rate_that_is_zero_in_float32_is_refused(tmp_path, capsys):
    # Before: eta = 1e-320 ran with w = 0 and reported regret_within_bound: true.
    config = iris_config(tmp_path / "eta.toml", "schedule = { kind = 'inv_sqrt', eta = 1e-320 }\n")
    err = call(capsys, "run", config, "--out", tmp_path / "o")[::2]
    one_line_error(*err, "eta.toml", "learner.schedule.eta must be > 0, got 0 in float32")


def test_a_grid_value_that_is_zero_in_float32_is_refused(tmp_path, capsys):
    config = iris_config(tmp_path / "sweep.toml", "[sweep.values]\n'learner.schedule.eta' = [0.1, 1e-45]\n")
    err = call(capsys, "sweep", config, "--out", tmp_path / "o")[::2]
    one_line_error(*err, "sweep.toml", "sweep.values.learner.schedule.eta", "at index 1", "float32")


# Sizes estimated before anything is allocated (ocolearn.sizes) -----------------------------------


@pytest.fixture
def small_machine(monkeypatch):
    """A machine of 1 GiB (``sizes.MEMORY``): the estimates refuse at sizes a test can name."""
    import ocolearn.sizes

    monkeypatch.setattr(ocolearn.sizes, "MEMORY", 1 << 30)


def test_a_model_whose_weights_would_not_fit_is_refused_from_its_header(tmp_path, capsys, small_machine):
    # Before: np.load allocated what the header claimed (2e9 float64: ArrayMemoryError under a limit).
    import io
    import zipfile

    model = tmp_path / "big.npz"
    settings = json.dumps({"task": "regression", "dim": 3})
    np.savez(model, w=np.zeros(3), labels=np.array([], str), settings=settings, offset=np.zeros(()))
    with zipfile.ZipFile(model) as z:
        parts = {name: z.read(name) for name in z.namelist()}
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (2 * 10**9,)})
    parts["w.npy"] = header.getvalue() + bytes(24)
    with zipfile.ZipFile(model, "w") as z:
        for name, content in parts.items():
            z.writestr(name, content)
    data = labelled_svmlight(tmp_path / "d.svm", n=20)
    one_line_error(*call(capsys, "predict", model, data)[::2], "big.npz", "(2000000000,)", "14.9 GiB", "1.0 GiB")


STUDY = """name = "s"
[evaluate]
orders = 2
tune = 0.0
regret = "none"
[[datasets]]
kind = "hyperplane"
rows = 100
features = 3
[learners.p]
kind = "perceptron"
"""


@pytest.mark.parametrize(
    "setting, words",
    [
        ("datasets[0].rows=1000000000000", ["datasets[0].rows", "1,000,000,000,000 rows x 3 features", "44,703.5 GiB"]),
        ("datasets[0].features=1000000000", ["datasets[0].rows", "100 rows x 1,000,000,000 features"]),
        ("evaluate.orders=100000000000000000000", ["evaluate.orders", "1..4294967296"]),  # before: OverflowError
    ],
)
def test_a_study_too_large_for_the_machine_is_refused_before_it_starts(tmp_path, capsys, small_machine, setting, words):
    # Before: ArrayMemoryError for 72.8 TiB (10^12 rows) or 74.5 GiB (10^9 features), or an OverflowError.
    study = tmp_path / "s.toml"
    study.write_text(STUDY)
    one_line_error(*call(capsys, "study", study, "--set", setting, "--out", tmp_path / "o")[::2], "s.toml", *words)


def test_a_study_of_a_million_orders_is_refused_naming_the_key(tmp_path, capsys, small_machine):
    # Before: it started work that could not end (10^6 orders), without a word.
    study = tmp_path / "s.toml"
    study.write_text(
        STUDY.replace(
            'kind = "hyperplane"\nrows = 100\nfeatures = 3', 'kind = "bundled"\nsource = "iris"\ntarget = "Species"'
        )
    )
    err = call(capsys, "study", study, "--set", "evaluate.orders=1000000", "--quiet", "--out", tmp_path / "o")[::2]
    one_line_error(*err, "s.toml", "evaluate.orders", "1000000 seeds", "of memory")


def iris_sweep(path, seeds):
    """A sweep of one OGD rate over ``seeds`` orders of iris (150 rows, one feature)."""
    return iris_config(path, f"[sweep]\nseeds = {seeds}\n[sweep.values]\n'learner.schedule.eta' = [0.1]\n")


def test_a_sweep_of_a_million_seeds_is_refused_naming_the_key(tmp_path, capsys, small_machine):
    config = iris_sweep(tmp_path / "sweep.toml", seeds=1_000_000)
    err = call(capsys, "sweep", config, "--out", tmp_path / "o")[::2]
    one_line_error(*err, "sweep.toml", "sweep.seeds", "1000000 seeds", "of memory")


def test_a_file_read_in_chunks_of_one_row_has_one_order(tmp_path, capsys):
    # Before: "over 2 orders" with a deviation of exactly 0: every order was the stored one.
    data = labelled_svmlight(tmp_path / "d.svm", n=50)
    study = tmp_path / "s.toml"
    study.write_text(
        STUDY.replace(
            'kind = "hyperplane"\nrows = 100\nfeatures = 3', f'kind = "file"\nsource = "{data}"\nchunk_rows = 1'
        )
    )
    err = call(capsys, "study", study, "--out", tmp_path / "o")[::2]
    one_line_error(*err, "s.toml", "datasets[0].chunk_rows", "each of its 2 orders would be the stored order")


def test_a_sweep_too_long_for_a_week_is_refused_and_one_over_an_hour_is_warned_of(tmp_path, capsys, monkeypatch):
    import ocolearn.sizes

    config = iris_sweep(tmp_path / "sweep.toml", seeds=1000)
    # 16 lanes x 1,000 seeds x 150 rounds = 2.4e6 rounds: a second a round is 27.8 days
    monkeypatch.setattr(ocolearn.sizes, "ROUND_SECONDS", 1.0)
    err = call(capsys, "sweep", config, "--out", tmp_path / "o")[::2]
    one_line_error(*err, "sweep.toml", "sweep.seeds", "about 27.8 days", "more than the 7.0 days")
    monkeypatch.setattr(ocolearn.sizes, "MAX_SECONDS", 10**7)
    monkeypatch.setattr(ocolearn.sizes, "WARN_SECONDS", 10**6)
    import ocolearn.sweep

    def warned_then_stopped(*args, **kw):
        ocolearn.sizes.refuse(*args, **kw)
        raise KeyboardInterrupt  # (the warning comes before the work: none need run)

    monkeypatch.setattr(ocolearn.sweep, "refuse", warned_then_stopped)
    status, _, err = call(capsys, "sweep", config, "--out", tmp_path / "o")
    assert status == 130 and "ocolearn: warning: seeds: a sweep of 16 configurations x 1000 seeds" in err
    assert "will take about 27.8 days" in err


def test_a_learner_state_too_large_names_its_classes(tmp_path, capsys, small_machine):
    # Before: the message named only the features (and the trial met JAX's RESOURCE_EXHAUSTED for 4 TB).
    data = tmp_path / "d.mira"
    data.write_text("".join(f"{'ab'[i % 2]} f{i % 7} g{i % 3}\n" for i in range(40)))
    err = train(capsys, data, tmp_path / "m.npz", "--format", "mira", "--set", "classes=1000000", learner="mira")
    one_line_error(*err[::2], "1,000,000 classes (--set classes) x 262,144 features", "1.0 GiB of memory")


def test_a_run_whose_trace_would_not_fit_is_refused_naming_run_passes(tmp_path, capsys, small_machine):
    # 150 rows x 10^6 passes traced: 1.5e8 rounds of 16 bytes and 3 features in float64, 5.6 GiB.
    three = "['Sepal.Width', 'Sepal.Length', 'Petal.Length']"
    config = iris_config(tmp_path / "run.toml", "[run]\npasses = 1000000\n", three)
    err = call(capsys, "run", config, "--out", tmp_path / "o")[::2]
    one_line_error(*err, "run.toml", "run.passes", "150,000,000 rounds over 3 features", "5.6 GiB")


def test_the_memory_a_process_may_use_counts_its_ulimit(monkeypatch):
    import resource

    import ocolearn.sizes
    from ocolearn.sizes import memory

    machine = memory()
    monkeypatch.setattr(resource, "getrlimit", lambda which: (machine // 4, resource.RLIM_INFINITY))
    assert memory() == machine // 4
    monkeypatch.setattr(ocolearn.sizes, "MEMORY", 12345)
    assert memory() == 12345
