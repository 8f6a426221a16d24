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


COMPRESS = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}


def damaged_compressed(lines, data):
    """The lines compressed by a drawn format, then cut at a random offset, a byte flipped,
    junk appended, or left whole; the file's suffix."""
    import importlib

    suffix = data.draw(st.sampled_from(sorted(COMPRESS)))
    blob = importlib.import_module(COMPRESS[suffix]).compress(mutated(lines, data).encode("utf-8", "surrogateescape"))
    how = data.draw(st.sampled_from(["cut", "flip", "append", "whole"]))
    if how == "cut":
        blob = blob[: data.draw(st.integers(0, len(blob) - 1))]
    elif how == "flip":
        at = data.draw(st.integers(0, len(blob) - 1))
        blob = blob[:at] + bytes([blob[at] ^ data.draw(st.integers(1, 255))]) + blob[at + 1 :]
    elif how == "append":
        blob += data.draw(st.binary(min_size=1, max_size=20))
    return blob, suffix


@pytest.mark.slow
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_compressed_files_cut_or_corrupted_never_give_a_traceback(tmp_path_factory, capsys, data):
    folder = tmp_path_factory.mktemp("compressed")
    blob, suffix = damaged_compressed(LINES, data)
    path = folder / f"d.svm{suffix}"
    path.write_bytes(blob)
    learner = data.draw(st.sampled_from(["perceptron", "passive_aggressive", "ogd"]))
    args = ["train", "--learner", learner, path, "--model", folder / "m.npz", "--quiet"]
    args += data.draw(st.sampled_from([[], ["--skip-bad"], ["--chunk-rows", "2"], ["--passes", "2"]]))
    if outcome(capsys, args) == 0:
        blob, suffix = damaged_compressed(LINES, data)
        other = folder / f"o.svm{suffix}"
        other.write_bytes(blob)
        outcome(capsys, ["predict", folder / "m.npz", other])
        outcome(capsys, ["test", folder / "m.npz", other])


HUGE = [-(2**63), -1, 0, 2**31, 2**32, 2**63 - 1, 9999999999]
INTEGER_KEYS = [
    ("run", "passes"),
    ("run", "snapshot_every"),
    ("run", "shuffle_seed"),
    ("data", "test_seed"),
    ("data", "order_seed"),
    ("data", "dim"),
    ("data", "bits"),
    ("sweep", "seeds"),
    ("sweep", "validation_seed"),
    ("sweep", "num"),
]


@pytest.mark.slow
@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_non_utf8_and_huge_integer_configs_never_give_a_traceback(tmp_path_factory, capsys, data):
    folder = tmp_path_factory.mktemp("huge")
    path = folder / "d.svm"
    path.write_text("\n".join(LINES) + "\n")
    tables = {
        "data": data.draw(
            st.sampled_from(
                [
                    {"source": str(path), "format": "svmlight"},
                    {"source": "iris", "features": ["Sepal.Width", "Petal.Length"], "target": "Petal.Width"},
                    {"source": "iris", "features": ["Sepal.Width"], "target": "Species", "test": 0.3},
                ]
            )
        ),
        "learner": {"kind": data.draw(st.sampled_from(["perceptron", "pegasos", "ogd"]))},
        "run": {},
    }
    if tables["learner"]["kind"] == "ogd":
        tables["learner"]["schedule"] = {"kind": "inv_sqrt", "eta": 0.01}
    sweep = data.draw(st.booleans())
    if sweep:
        key = "learner.lam" if tables["learner"]["kind"] == "pegasos" else "learner.schedule.eta"
        if tables["learner"]["kind"] == "perceptron":
            tables["learner"]["kind"] = "pegasos"
            key = "learner.lam"
        tables["sweep"] = {"values": {key: [0.01, 0.1]}}
    for table, name in data.draw(st.lists(st.sampled_from(INTEGER_KEYS), min_size=1, max_size=3)):
        value = data.draw(st.sampled_from(HUGE))
        if table == "sweep" and not sweep:
            continue
        if name == "num":
            key = next(iter(tables["sweep"]["values"]))
            tables["sweep"]["values"][key] = {"linspace": [0.01, 0.1, value]}
        else:
            tables[table][name] = value
    import tomli_w

    text = tomli_w.dumps({"name": "h", **tables}).encode()
    encoding = data.draw(st.sampled_from(["utf-8", "latin-1 byte", "utf-16", "junk"]))
    if encoding == "latin-1 byte":  # a name with a byte that is not UTF-8
        text = text.replace(b'name = "h"', b'name = "h\xe9"')
    elif encoding == "utf-16":
        text = text.decode().encode("utf-16")
    elif encoding == "junk":
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + data.draw(st.binary(min_size=1, max_size=4)) + text[at:]
    config = folder / "c.toml"
    config.write_bytes(text)
    outcome(capsys, ["sweep" if sweep else "run", config, "--out", folder / "out"])
