import tomllib
from pathlib import Path

import pytest

from ocolearn import OGD, InvSqrt, L2Ball, Squared
from ocolearn.config import ConfigError, apply_overrides, from_dict, load, load_study, parse_override

ROOT = Path(__file__).resolve().parent.parent
BASE = """
name = "t"
[data]
features = ["Sepal.Width"]
target = "Petal.Width"
[learner]
kind = "ogd"
loss = "squared"
schedule = { kind = "inv_sqrt", eta = 0.5 }
projection = { kind = "l2_ball", radius = 2 }
"""


def write(tmp_path, text):
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


def error(tmp_path, text, overrides=()):
    with pytest.raises(ConfigError) as info:
        load(write(tmp_path, text), overrides)
    return str(info.value)


def test_builds_parts_with_numbers_as_floats(tmp_path):
    experiment = load(write(tmp_path, BASE))
    assert experiment.learner == OGD(Squared(), InvSqrt(0.5), L2Ball(2.0))
    assert isinstance(experiment.learner.projection.radius, float)
    assert experiment.run.passes == 1 and experiment.run.shuffle_seed is None


def test_every_shipped_config_loads():
    configs = sorted((ROOT / "configs").glob("*.toml"))
    assert configs
    for path in configs:
        if "datasets" in tomllib.loads(path.read_text()):  # read by `ocolearn study`
            from ocolearn.study import load as load_study_file

            assert load_study_file(path).learners
            with pytest.raises(ConfigError, match="a study file"):
                load(path)
        elif "study" in tomllib.loads(path.read_text()):  # read by its experiments/ script
            study, learners = load_study(path)
            assert study and learners
            with pytest.raises(ConfigError, match="a study file"):
                load(path)
        else:
            load(path)


def test_unknown_key_names_file_key_and_valid_keys(tmp_path):
    message = error(tmp_path, BASE.replace("eta = 0.5", "etaa = 0.5"))
    assert "exp.toml" in message and "learner.schedule.etaa" in message
    assert "valid keys: kind, eta" in message and "did you mean 'eta'" in message
    message = error(tmp_path, BASE + "[run]\npases = 2\n")
    assert "'run.pases'" in message and "passes" in message
    assert "'colour'" in error(tmp_path, 'colour = "red"\n' + BASE)


def test_wrong_types_and_kinds(tmp_path):
    assert "'learner.schedule.eta' must be a number, got 'fast'" in error(tmp_path, BASE.replace("0.5", '"fast"'))
    assert "must be an integer" in error(tmp_path, BASE + "[run]\npasses = 1.5\n")
    assert "must be an integer" in error(tmp_path, BASE + "[run]\npasses = true\n")
    message = error(tmp_path, BASE.replace('"l2_ball"', '"l2ball"'))
    assert "not a known projection" in message and "did you mean 'l2_ball'" in message
    assert "must be a number, got nan" in error(tmp_path, BASE.replace("0.5", "nan"))
    assert "missing key 'learner'" in error(tmp_path, 'name = "x"\n')
    assert "not valid TOML" in error(tmp_path, "name = \n")


def test_set_overrides_any_key(tmp_path):
    path = write(tmp_path, BASE)
    experiment = load(path, ["learner.schedule.eta=0.25", "run.passes=3", "learner.projection=identity"])
    assert experiment.learner.schedule.eta == 0.25 and experiment.run.passes == 3
    assert experiment.learner.projection.name == "identity"
    experiment = load(path, ["learner.loss.kind=epsilon_insensitive", "learner.loss.epsilon=0.2"])
    assert experiment.learner.loss.epsilon == 0.2
    message = error(tmp_path, BASE, ["learner.schedule.rate=1"])
    assert "--set" in message and "learner.schedule.rate" in message
    with pytest.raises(ConfigError, match="key=value"):
        parse_override("learner.schedule.eta")


def test_override_values_are_toml_or_strings():
    assert parse_override("a.b=0.1") == (["a", "b"], 0.1)
    assert parse_override("a=[1, 2]") == (["a"], [1, 2])
    assert parse_override("data.source=my file.csv") == (["data", "source"], "my file.csv")
    assert apply_overrides({"a": {"b": 1}}, ["a.c=2"]) == {"a": {"b": 1, "c": 2}}


def test_resolved_config_round_trips():
    import tomllib

    import tomli_w

    experiment = load(ROOT / "configs/iris_ridge_magic.toml")
    again = from_dict(tomllib.loads(tomli_w.dumps(experiment.to_config())), "resolved")
    assert again.learner == experiment.learner and again.data == experiment.data and again.run == experiment.run


def test_classifiers_from_config(tmp_path):
    from ocolearn import EpsilonInsensitive, PassiveAggressive

    text = BASE.replace(
        'kind = "ogd"\nloss = "squared"', 'kind = "passive_aggressive"\nC = 0.5\nvariant = 2\nloss = "squared"'
    )
    text = text.split("schedule")[0].replace(
        'loss = "squared"', 'loss = { kind = "epsilon_insensitive", epsilon = 0.2 }'
    )
    assert load(write(tmp_path, text)).learner == PassiveAggressive(0.5, 2, EpsilonInsensitive(0.2))
    assert "'learner.variant' must be an integer" in error(tmp_path, text.replace("variant = 2", "variant = 1.5"))


def test_data_format_and_test_fraction_are_checked(tmp_path):
    message = error(tmp_path, BASE.replace("[data]\n", '[data]\nformat = "svm"\n'))
    assert "'data.format' must be one of table, svmlight, mira, csv, text, got 'svm'" in message
    assert "'data.test' must be a fraction in [0, 1)" in error(
        tmp_path, BASE.replace("[data]\n", "[data]\ntest = 1.5\n")
    )
    assert "'data.bits' must be an integer or absent" in error(
        tmp_path, BASE.replace("[data]\n", "[data]\nbits = 2.5\n")
    )
