"""Outputs: temporary files carry a mark no file of the user's carries, and the clean-up removes
only those it can prove ocolearn made; every command that writes a folder (``run``, ``sweep``,
``study``) writes it as a unit (``ocolearn.io.atomic_folder``), refuses what it must not
replace, and no output is or holds an input."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import in_process
from test_cli import one_line_error
from test_inputs import dead_pid

from ocolearn import io

ROOT = Path(__file__).resolve().parents[1]

TINY = """name = "tiny"
[evaluate]
orders = 2
tune = 0.0
regret = "none"
[[datasets]]
kind = "hyperplane"
rows = 60
features = 3
[learners.perceptron]
kind = "perceptron"
[learners.pa]
kind = "passive_aggressive"
"""


def call(*args):
    """``(exit status, stderr)`` of ``ocolearn ARGS`` run in this process."""
    done = in_process(*args)
    return done.returncode, done.stderr


def ours(folder: Path, name: str, pid: int, nonce: str = "0a1b2c3d") -> Path:
    """The name of ocolearn's temporary for ``folder/name`` made by process ``pid``."""
    return folder / f".{name}.ocolearn.{pid}.{nonce}.{io._check(name, str(pid), nonce)}.tmp"


def hashes(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def look_alikes(folder: Path, dead: int) -> dict:
    """Files of a user's whose names look like temporaries (the issue's, and older ocolearn
    names), made two hours old: ``{path: content}`` (a folder's: its file's)."""
    old = time.time() - 2 * 3600
    files = {
        folder / ".notes.backup01.tmp": "my notes",
        folder / ".x.20240101.tmp": "x",
        folder / f".m.npz.{dead}.abcd_123.tmp": "older ocolearn's name",
        folder / f".m.npz.ocolearn.{dead}.0a1b2c3d.00000000.tmp": "the mark without its check",
    }
    for path, text in files.items():
        path.write_text(text)
        os.utime(path, (old, old))
    project = folder / f".project.{dead}.snapshot.tmp"
    project.mkdir()
    (project / "work.txt").write_text("a week of work")
    files[project / "work.txt"] = "a week of work"
    target = folder / "linked.txt"
    target.write_text("reached through a link")
    ours(folder, "m.npz", dead, "feedbeef").symlink_to(target)  # a link carrying the mark: not removed
    files[target] = "reached through a link"
    return files


def untouched(files: dict) -> None:
    for path, text in files.items():
        assert path.read_text() == text, path


def test_clean_up_removes_only_what_it_can_prove_it_made(tmp_path):
    # Before: .notes.backup01.tmp (two hours old), .x.20240101.tmp and the folder
    # .project.PID.snapshot.tmp (a dead PID) were removed, the folder with rmtree.
    dead, live = dead_pid(), os.getppid()
    kept = look_alikes(tmp_path, dead)
    stale_file, stale_folder, living = (
        ours(tmp_path, "m.npz", dead),
        ours(tmp_path, "o", dead),
        ours(tmp_path, "p", live),
    )
    stale_file.write_text("partial")
    stale_folder.mkdir()
    (stale_folder / "provenance.json").write_text("{}")
    living.write_text("being written")
    removed = io.clean_stale(tmp_path)
    assert sorted(removed) == sorted([stale_file, stale_folder])
    untouched(kept)
    assert living.read_text() == "being written"
    assert ours(tmp_path, "m.npz", dead, "feedbeef").is_symlink()


def test_the_writers_leave_look_alikes_beside_their_outputs(tmp_path):
    dead = dead_pid()
    kept = look_alikes(tmp_path, dead)
    io.atomic_write(tmp_path / "m.npz", b"model")
    with io.atomic_folder(tmp_path / "o", "run") as folder:
        (folder / "provenance.json").write_text("{}")
    io.writable(tmp_path / "p.txt")
    untouched(kept)
    assert (tmp_path / "m.npz").read_bytes() == b"model" and (tmp_path / "o" / "provenance.json").exists()


@pytest.mark.slow
def test_cli_outputs_leave_look_alikes_beside_them(tmp_path, monkeypatch):
    # export --out, train --model and --checkpoint, predict --out, study --out: each cleans its folder.
    monkeypatch.chdir(tmp_path)
    kept = look_alikes(tmp_path, dead_pid())
    assert call("export", "iris", "--target", "Species", "--format", "svmlight", "--out", "d.svm")[0] == 0
    untouched(kept)
    status, err = call("train", "--learner", "perceptron", "d.svm", "--model", "m.npz", "--checkpoint", "c.npz")
    assert status == 0, err
    untouched(kept)
    assert call("predict", "m.npz", "d.svm", "--out", "p.txt")[0] == 0
    untouched(kept)
    assert len((tmp_path / "p.txt").read_text().splitlines()) == 150
    assert (
        call("study", study_file(tmp_path), "--out", "o", "--quiet")[0] == 0
    )  # (run and sweep: the same atomic_folder)
    untouched(kept)
    assert (tmp_path / "o" / "leaderboard.csv").exists()


def study_file(folder: Path, text: str = TINY, name: str = "s.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


def test_study_out_the_current_folder_is_refused(tmp_path, monkeypatch):
    # Before: the user's config.toml and results.json were overwritten, exit status 0.
    s = study_file(tmp_path / "studies")
    work = tmp_path / "work"
    work.mkdir()
    for name in ("config.toml", "results.json"):
        (work / name).write_text(f"the user's {name}")
    monkeypatch.chdir(work)
    one_line_error(*call("study", s, "--out", ".", "--quiet"), ".: is the current folder or holds it")
    with pytest.raises(OSError, match="is the current folder or holds it"):  # (study --out / wrote seven files there)
        with io.atomic_folder("/", "study"):
            pass
    assert hashes(work) == {n: hashlib.sha256(f"the user's {n}".encode()).hexdigest() for n in sorted(hashes(work))}


def test_study_out_the_folder_of_its_own_file_is_refused(tmp_path):
    # Before: p/config.toml (with the user's comments) was overwritten by the resolved config.
    s = study_file(tmp_path / "p", "# my comments\n" + TINY, "config.toml")
    one_line_error(*call("study", s, "--out", tmp_path / "p", "--quiet"), f"holds the input {s}")
    assert s.read_text().startswith("# my comments")
    # and a study file given as --out, or an output folder inside a text data folder
    one_line_error(*call("study", s, "--out", s, "--quiet"), "is the input file")
    (tmp_path / "t" / "a").mkdir(parents=True)
    (tmp_path / "t" / "b").mkdir()
    text = TINY.replace(
        'kind = "hyperplane"\nrows = 60\nfeatures = 3', f'kind = "file"\nformat = "text"\nsource = "{tmp_path / "t"}"'
    )
    s = study_file(tmp_path / "q", text)
    one_line_error(*call("study", s, "--out", tmp_path / "t" / "a" / "out", "--quiet"), "is in the input folder")
    assert not (tmp_path / "t" / "a" / "out").exists()


def test_a_folder_that_is_not_a_study_s_is_refused(tmp_path, monkeypatch):
    # Before: written into (notes.txt beside a study's files), and a link at --out followed.
    s = study_file(tmp_path)
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("notes")
    one_line_error(*call("study", s, "--out", user, "--quiet"), f"{user}: is not an output folder")
    assert hashes(user) == {"notes.txt": hashlib.sha256(b"notes").hexdigest()}
    link = tmp_path / "link"
    link.symlink_to(user)
    one_line_error(*call("study", s, "--out", link, "--quiet"), f"{link}: is a symbolic link")
    run = tmp_path / "a_run"  # an output folder of another command
    run.mkdir()
    for name in ("provenance.json", "metrics.json"):
        (run / name).write_text("{}")
    one_line_error(*call("study", s, "--out", run, "--quiet"), "is the output folder of 'ocolearn run', not of study")
    # another ocolearn writing the folder (its temporary sibling, of a live process)
    ours(tmp_path, "o", os.getppid()).mkdir()
    one_line_error(*call("study", s, "--out", tmp_path / "o", "--quiet"), f"process {os.getppid()}) is writing it")
    assert sorted(p.name for p in user.iterdir()) == ["notes.txt"] and not (tmp_path / "o").exists()


@pytest.mark.slow
def test_a_killed_or_failed_study_leaves_no_folder_or_the_previous_one_whole(tmp_path, monkeypatch):
    # Before: o/ held only provenance.json; a rerun into a complete study's folder changed it.
    from ocolearn import study as studies

    study = studies.from_dict(__import__("tomllib").loads(TINY))
    real, calls = studies.evaluate_learner, []

    def killed(*args, **kwargs):  # the second learner never finishes
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(studies, "evaluate_learner", killed)
    with pytest.raises(KeyboardInterrupt):
        studies.run_study(study, tmp_path / "o")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    monkeypatch.setattr(studies, "evaluate_learner", real)
    studies.run_study(study, tmp_path / "o")
    before = hashes(tmp_path / "o")
    assert {"leaderboard.csv", "results.json", "provenance.json", "config.toml"} <= set(before)
    calls.clear()
    monkeypatch.setattr(studies, "evaluate_learner", killed)
    with pytest.raises(KeyboardInterrupt):
        studies.run_study(study, tmp_path / "o")
    assert hashes(tmp_path / "o") == before and sorted(p.name for p in tmp_path.iterdir()) == ["o"]
    monkeypatch.setattr(studies, "evaluate_learner", real)
    studies.run_study(study, tmp_path / "o")  # a previous study's folder: replaced as a unit
    assert set(hashes(tmp_path / "o")) == set(before)


def _killed_at_work(args, folder: Path, name: str):
    """Start ``ocolearn ARGS`` and SIGKILL it once it has written a file for ``folder/name``
    (into its temporary folder, or, as before, into the folder itself): its work has begun."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.time()
    process = subprocess.Popen([sys.executable, "-m", "ocolearn.cli", *map(str, args)], env=env)
    deadline = started + 300

    def begun():
        written = [*folder.glob(f".{name}.ocolearn.*.tmp/*"), *(folder / name).glob("*")]
        return any(p.stat().st_mtime >= started for p in written if p.exists())

    while process.poll() is None and time.time() < deadline and not begun():
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "it ended before its work began"


@pytest.mark.slow
def test_a_study_killed_by_sigkill_leaves_no_folder_or_the_previous_one_bit_for_bit(tmp_path):
    s = study_file(tmp_path)
    _killed_at_work(["study", s, "--out", tmp_path / "o", "--quiet"], tmp_path, "o")
    assert not (tmp_path / "o").exists()
    assert call("study", s, "--out", tmp_path / "o", "--quiet")[0] == 0  # (the killed one's temporary removed)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "s.toml"]
    before = hashes(tmp_path / "o")
    _killed_at_work(["study", s, "--out", tmp_path / "o", "--quiet"], tmp_path, "o")
    assert hashes(tmp_path / "o") == before


def test_checkpoint_the_model_file_is_refused(tmp_path, monkeypatch):
    # Before: killed mid-run, the previous model was gone (the file held a checkpoint).
    monkeypatch.chdir(tmp_path)
    assert call("export", "iris", "--target", "Species", "--format", "svmlight", "--out", "d.svm")[0] == 0
    Path("m.npz").write_bytes(b"the previous model")
    Path("link.npz").symlink_to("m.npz")
    for checkpoint in ("m.npz", "link.npz", "./m.npz"):
        status, err = call("train", "--learner", "perceptron", "d.svm", "--model", "m.npz", "--checkpoint", checkpoint)
        one_line_error(status, err, f"--checkpoint {checkpoint}: is the --model file")
    assert Path("m.npz").read_bytes() == b"the previous model"


def test_an_output_that_is_a_loop_of_links_is_one_line(tmp_path, monkeypatch):
    # Before: a traceback (RuntimeError: Symlink loop, from io._target's and cli._not_an_input's resolve).
    monkeypatch.chdir(tmp_path)
    assert call("export", "iris", "--target", "Species", "--format", "svmlight", "--out", "d.svm")[0] == 0
    Path("loop").symlink_to("loop")
    for option in ("--model", "--checkpoint"):
        args = {"--model": "m.npz", "--checkpoint": "c.npz"} | {option: "loop"}
        status, err = call("train", "--learner", "perceptron", "d.svm", *[a for kv in args.items() for a in kv])
        one_line_error(status, err, "loop: is a loop of symbolic links")
    run = ["run", ROOT / "configs/iris_ridge_magic.toml", "--out", "loop"]
    one_line_error(*call(*run), "loop: is a loop of symbolic links")  # (the folder's input check)
    one_line_error(*call("study", study_file(tmp_path / "st"), "--out", "loop"), "loop: is a loop of symbolic links")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.svm", "loop", "st"]


@pytest.mark.slow
@pytest.mark.parametrize("uri", ["foo://x", "sqlite:///{}/ro/db.sqlite"])
def test_a_tracking_store_that_cannot_be_used_is_one_line_before_the_work(tmp_path, monkeypatch, uri):
    # Before: a traceback (UnsupportedModelRegistryStoreURIException).
    pytest.importorskip("mlflow")
    (tmp_path / "ro").mkdir(mode=0o555)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri.format(tmp_path))
    s = study_file(tmp_path)
    status, err = call("study", s, "--out", tmp_path / "o", "--track", "mlflow", "--quiet")
    one_line_error(
        status, err, f"--track mlflow: the MLflow store {uri.format(tmp_path)} (MLFLOW_TRACKING_URI) cannot be used"
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_a_store_that_fails_after_the_work_is_one_error_saying_the_outputs_are_written():
    # Before: MLflow's exception as a traceback, after the outputs were written.
    pytest.importorskip("mlflow")
    from ocolearn.tracking import Tracker, TrackingError

    class Full:
        def get_experiment_by_name(self, name):
            raise OSError(28, "No space left on device")

    with pytest.raises(TrackingError, match="the MLflow store x .* outputs are written: .*No space left on device"):
        Tracker(Full(), "e", "r", "the MLflow store x").log(params={}, metrics={"m": 1.0})
