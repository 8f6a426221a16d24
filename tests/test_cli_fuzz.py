"""Random options, configs and mutated files fed to the command line: every outcome is a result
(status 0) or one line ``ocolearn: error: ...`` (status 2), never a traceback."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ocolearn.cli import main

LINES = [
    "1 1:0.5 3:1.25",
    "-1 2:-0.75 4:2",
    "1 1:1 2:1 # a comment",
    "-1 3:0.5",
    "1 4:-1.5 5:0.25",
    "-1 1:-2 5:1",
]
JUNK = ["1e300", "nan", "inf", ":", "0:1", "99999999999:1", "a:b", "1:2:3", "\x00", "é", ",", "qid:", "", "-", "1 1:1"]
LEARNERS = ["perceptron", "passive_aggressive", "pegasos", "mira", "ogd", "adagrad", "one_vs_rest", "winnow", "optax"]
SETS = [
    "C=-1",
    "C=0.5",
    "variant=9",
    "lam=0",
    "lam=0.1",
    "schedule.eta=1e30",
    "loss.kind=epsilon_insensitive",
    "loss=hinge",
    "classes=3",
    "unknown=1",
    "C=abc",
    "base.kind=mira",
    "transformation=nope",
    "projection.radius=-1",
]


def mutated(lines, data):
    """The lines with random junk put in, cut short, or left as they are."""
    text = "\n".join(lines) + "\n"
    how = data.draw(st.sampled_from(["keep", "insert", "truncate", "replace"]))
    if how == "insert":
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + data.draw(st.sampled_from(JUNK)) + text[at:]
    elif how == "truncate":
        text = text[: data.draw(st.integers(0, len(text)))]
    elif how == "replace":
        tokens = text.split(" ")
        tokens[data.draw(st.integers(0, len(tokens) - 1))] = data.draw(st.sampled_from(JUNK))
        text = " ".join(tokens)
    return text


def outcome(capsys, args):
    try:
        status = main([str(a) for a in args])
    except SystemExit as e:
        status = e.code
    _, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if line.startswith("ocolearn: error")]
    assert status in (0, 2), (args, err)
    if status == 2:
        assert len(errors) == 1 and errors[0].startswith("ocolearn: error: "), (args, err)
        assert "Traceback" not in err, (args, err)
    return status


@pytest.mark.slow
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_options_and_mutated_files_never_give_a_traceback(tmp_path_factory, capsys, data):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "d.svm"
    path.write_text(mutated(LINES, data), encoding="utf-8", errors="surrogateescape")
    args = ["train", "--learner", data.draw(st.sampled_from(LEARNERS)), path, "--model", folder / "m.npz", "--quiet"]
    for option in data.draw(
        st.lists(st.sampled_from(["set", "passes", "chunk", "bits", "format", "task", "flag"]), max_size=4)
    ):
        if option == "set":
            args += ["--set", data.draw(st.sampled_from(SETS))]
        elif option == "passes":
            args += ["--passes", data.draw(st.integers(-1, 3))]
        elif option == "chunk":
            args += ["--chunk-rows", data.draw(st.sampled_from(["0", "2", "-5", "x", "100"]))]
        elif option == "bits":
            args += ["--bits", data.draw(st.sampled_from(["-1", "0", "4", "12", "31", "40"]))]
        elif option == "format":
            args += ["--format", data.draw(st.sampled_from(["svmlight", "mira", "csv", "text", "xml"]))]
        elif option == "task":
            args += ["--task", data.draw(st.sampled_from(["regression", "binary", "multiclass", "ranking"]))]
        else:
            args.append(data.draw(st.sampled_from(["--average", "--normalized", "--stop-early", "--zero-based"])))
    if outcome(capsys, args) == 0:
        other = folder / "o.svm"
        other.write_text(mutated(LINES, data), encoding="utf-8", errors="surrogateescape")
        for command in ("predict", "test"):
            outcome(
                capsys,
                [command, folder / "m.npz", other, *data.draw(st.sampled_from([[], ["--scores"]]))][:4]
                if command == "predict"
                else [command, folder / "m.npz", other],
            )


@pytest.mark.slow
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_configs_never_give_a_traceback(tmp_path_factory, capsys, data):
    folder = tmp_path_factory.mktemp("config")
    path = folder / "d.svm"
    path.write_text(mutated(LINES, data), encoding="utf-8", errors="surrogateescape")
    data_table = data.draw(
        st.sampled_from(
            [
                f'source = "{path}"\nformat = "svmlight"',
                f'source = "{path}"\nformat = "mira"',
                'source = "iris"\nfeatures = ["Sepal.Width", "Petal.Length"]\ntarget = "Petal.Width"',
                'source = "iris"\nfeatures = ["Sepal.Width"]\ntarget = "Species"\ntest = 0.3',
                'source = "iris"\nfeatures = ["Species"]\ntarget = "Petal.Width"',
                f'source = "{path}"\nformat = "svmlight"\ntask = "multiclass"',
                f'source = "{path}"\nformat = "csv"',
                'source = "nowhere.csv"\nfeatures = ["a"]\ntarget = "b"',
            ]
        )
    )
    learner = data.draw(st.sampled_from(LEARNERS))
    extra = data.draw(st.sampled_from(["", "C = -1.0", "lam = 0.0", "variant = 7", "bogus = 1", "C = 0.5"]))
    run = data.draw(st.sampled_from(["passes = 2", "passes = 0", "shuffle_seed = 1", "passes = 'x'", ""]))
    sweep = data.draw(
        st.sampled_from(
            [
                "",
                '[sweep]\n[sweep.values]\n"learner.C" = [0.1, 1.0]',
                '[sweep]\nscore = "hinge"\n[sweep.values]\n"learner.lam" = [0.1]',
            ]
        )
    )
    config = folder / "c.toml"
    config.write_text(
        f'name = "f"\n[data]\n{data_table}\n[learner]\nkind = "{learner}"\n{extra}\n[run]\n{run}\n{sweep}\n'
    )
    command = "sweep" if sweep and data.draw(st.booleans()) else "run"
    outcome(capsys, [command, config, "--out", folder / "out"])
