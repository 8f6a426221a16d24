"""Provenance of runs, sweeps and trainings, and tracking them in a local MLflow store."""

import csv
import json
import subprocess
from pathlib import Path

import jax
import numpy as np
import pytest

import ocolearn
from ocolearn import cli, modelfile, provenance

CONFIGS = Path(__file__).parent.parent / "configs"

SWEEP = """
name = "tiny_sweep"
[data]
source = "iris"
features = ["Sepal.Width", "Sepal.Length", "Petal.Length"]
target = "Petal.Width"
batch_scale = true
[pipeline]
intercept = false
scale = "none"
[learner]
kind = "ogd"
schedule = { kind = "inv_sqrt", eta = 0.045 }
projection = { kind = "l2_ball", radius = 0.3 }
[sweep]
seeds = 2
[sweep.values]
"learner.schedule.eta" = [0.01, 0.1]
"learner.projection.radius" = [0.3, 1.0, 3.0]
"""


def git(folder, *args):
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_git_state_names_the_commit_and_whether_tracked_files_changed(tmp_path):
    assert provenance.git_state(tmp_path) is None  # not a checkout
    git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one")
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    state = provenance.git_state(tmp_path)
    assert state["commit"] == git(tmp_path, "rev-parse", "HEAD") and len(state["commit"]) == 40
    assert state["dirty"] is False
    (tmp_path / "outputs.json").write_text("{}")  # untracked outputs do not count
    assert provenance.git_state(tmp_path)["dirty"] is False
    (tmp_path / "a.txt").write_text("two")
    assert provenance.git_state(tmp_path)["dirty"] is True


def test_record_names_versions_device_command_and_time():
    record = provenance.record(["ocolearn", "run", "x.toml"])
    assert record["ocolearn"] == ocolearn.__version__ and record["jax"] == jax.__version__
    assert record["numpy"] == np.__version__ and record["jaxlib"]
    assert record["device"]["backend"] == jax.default_backend() and record["device"]["count"] == len(jax.devices())
    assert record["command"] == ["ocolearn", "run", "x.toml"]
    assert record["time"].endswith("+00:00")
    source = provenance.git_state(Path(ocolearn.__file__).parent)
    assert record["git"]["ocolearn"] == source  # None outside a checkout


def _sweep_config(tmp_path):
    path = tmp_path / "tiny_sweep.toml"
    path.write_text(SWEEP)
    return path


def test_run_sweep_and_train_outputs_say_what_produced_them(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["run", str(CONFIGS / "iris_ridge_magic.toml"), "--out", "r"]
    monkeypatch.setattr("sys.argv", ["ocolearn", *argv])
    assert cli.main(argv) == 0
    record = json.loads((tmp_path / "r" / "provenance.json").read_text())
    assert record["command"] == ["ocolearn", *argv] and record["cwd"] == str(tmp_path)
    assert cli.main(["sweep", str(_sweep_config(tmp_path)), "--out", "s"]) == 0
    assert json.loads((tmp_path / "s" / "provenance.json").read_text())["jax"] == jax.__version__
    data = tmp_path / "d.svm"
    data.write_text("1 1:1 2:0.5\n-1 1:-1 3:2\n1 2:1\n")
    assert cli.main(["train", "--learner", "perceptron", str(data), "--model", "m.npz", "--quiet"]) == 0
    assert modelfile.load(tmp_path / "m.npz").settings["provenance"]["numpy"] == np.__version__


def _read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_tracked_run_and_sweep_read_back_from_the_local_mlflow_store(tmp_path, monkeypatch, capsys):
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert cli.main(["run", str(CONFIGS / "iris_ridge_magic.toml"), "--out", "r", "--track", "mlflow"]) == 0
    assert cli.main(["sweep", str(_sweep_config(tmp_path)), "--out", "s", "--track", "mlflow"]) == 0
    client = MlflowClient((tmp_path / "mlruns").as_uri())

    (run,) = client.search_runs([client.get_experiment_by_name("iris_ridge_magic").experiment_id])
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert run.data.params["learner.schedule.eta"] == "0.045" and run.data.params["learner.kind"] == "ogd"
    assert run.data.metrics["average_loss"] == pytest.approx(metrics["average_loss"], rel=1e-12)
    assert run.data.metrics["regret"] == pytest.approx(metrics["regret"], rel=1e-12)
    trace = _read_csv(tmp_path / "r" / "trace.csv")
    history = sorted(client.get_metric_history(run.info.run_id, "loss"), key=lambda m: m.step)
    assert [m.step for m in history] == list(range(1, len(trace) + 1))  # one point per round
    np.testing.assert_allclose([m.value for m in history], [float(r["loss"]) for r in trace], rtol=1e-6)
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"regret.png", "normalized_loss.png", "metrics.json", "provenance.json", "config.toml"} <= artifacts

    runs = client.search_runs([client.get_experiment_by_name("tiny_sweep").experiment_id])
    (parent,) = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    table = _read_csv(tmp_path / "s" / "sweep.csv")
    assert len(table) == 2 * 3 * 2 and len(children) == 2 * 3  # a run per configuration, over 2 seeds
    for child in children:
        eta, radius = child.data.params["learner.schedule.eta"], child.data.params["learner.projection.radius"]
        rows = [
            r
            for r in table
            if (float(r["learner.schedule.eta"]), float(r["learner.projection.radius"])) == (float(eta), float(radius))
        ]
        losses = [float(r["average_loss"]) for r in rows]
        assert len(rows) == 2
        assert child.data.metrics["average_loss"] == pytest.approx(np.mean(losses), rel=1e-8)
        assert child.data.metrics["average_loss_std"] == pytest.approx(np.std(losses), rel=1e-6, abs=1e-12)
        assert "seed" not in child.data.params
    best = json.loads((tmp_path / "s" / "best.json").read_text())
    assert parent.data.metrics["mean_score"] == pytest.approx(best["mean_score"], rel=1e-12)
    assert {"sweep.png", "sweep.csv"} <= {a.path for a in client.list_artifacts(parent.info.run_id)}


def test_tracked_training_logs_the_learner_mistakes_per_pass_and_the_model(tmp_path, monkeypatch, capsys):
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    (tmp_path / "d.svm").write_text("1 1:1 2:0.5\n-1 1:-1 3:2\n1 2:1\n-1 1:2 3:-1\n")
    argv = ["train", "--learner", "perceptron", "d.svm", "--model", "m.npz", "--passes", "3", "--quiet"]
    assert cli.main([*argv, "--track", "mlflow"]) == 0
    client = MlflowClient((tmp_path / "mlruns").as_uri())
    (run,) = client.search_runs([client.get_experiment_by_name("train").experiment_id])
    settings = modelfile.load(tmp_path / "m.npz").settings
    assert run.data.params["learner.kind"] == "perceptron" and run.data.params["passes"] == "3"
    history = sorted(client.get_metric_history(run.info.run_id, "mistakes_per_pass"), key=lambda m: m.step)
    assert [(m.step, m.value) for m in history] == list(enumerate(map(float, settings["mistakes_per_pass"]), 1))
    assert "m.npz" in {a.path for a in client.list_artifacts(run.info.run_id)}


def test_tracking_without_mlflow_is_one_line_error(monkeypatch, capsys, tmp_path):
    import builtins

    real_import = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name.startswith("mlflow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    assert cli.main(["run", str(CONFIGS / "iris_ridge_magic.toml"), "--out", "r", "--track", "mlflow"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "ocolearn: error: --track mlflow needs MLflow: pip install 'ocolearn[mlflow]'"
    )
    assert not (tmp_path / "r").exists()  # it failed before the run


def test_a_tracking_server_that_does_not_answer_is_a_one_line_error_before_the_work(tmp_path, monkeypatch, capsys):
    """MLflow retries a server that does not answer for minutes, and ocolearn logged after the
    work: ``--track mlflow`` with an unreachable MLFLOW_TRACKING_URI hung. It asks the server once
    before the work and fails at once, naming the server and the variable; no output is written."""
    pytest.importorskip("mlflow")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9/")  # the discard port: nothing listens
    status = cli.main(["run", str(CONFIGS / "iris_ridge_magic.toml"), "--out", "r", "--track", "mlflow"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    assert err[0].startswith(
        "ocolearn: error: --track mlflow: the MLflow server http://127.0.0.1:9/ (MLFLOW_TRACKING_URI)"
    )
    assert not (tmp_path / "r").exists()
