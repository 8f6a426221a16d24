"""Start-up: ``--help``, ``--version`` and usage errors answer without importing JAX (nor
NumPy or numba), and ``import ocolearn`` imports JAX only when a public name is used, with
XLA's CPU option already in place. Each case runs in a fresh interpreter."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("jax", "numpy", "numba")

PROBE = """
import sys
from ocolearn import cli
try:
    code = cli.main(sys.argv[1:])
except SystemExit as e:
    code = e.code
print("LOADED", *sorted(m for m in {heavy!r} if m in sys.modules))
sys.exit(code)
"""


def _probe(*argv):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = PROBE.format(heavy=HEAVY)
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.parametrize(
    "argv, status, says",
    [
        (["--help"], 0, "usage: ocolearn"),
        (["train", "--help"], 0, "--holdout"),
        (["--version"], 0, "ocolearn 0.1.0"),
        (["train", "--passes", "two", "x.svm", "--learner", "pa", "--model", "m.npz"], 2, "'two' is not a whole"),
        (["train", "x.svm", "--learner", "pa"], 2, "the following arguments are required: --model"),
        (["train", "--format", "xml", "x", "--learner", "pa", "--model", "m"], 2, "invalid choice: 'xml'"),
        (["fit"], 2, "invalid choice: 'fit'"),
        (
            ["train", "--holdout", "1", "x", "--learner", "pa", "--model", "m"],
            2,
            "--holdout: 1 is not a whole number >= 2, or 0 for none",
        ),
    ],
)
def test_help_version_and_usage_errors_import_no_jax(argv, status, says):
    done = _probe(*argv)
    assert done.returncode == status, done.stderr
    assert says in done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "LOADED"  # none of jax, numpy, numba
    if status == 2:
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("ocolearn: error: ")


def test_a_command_does_import_jax_so_the_probe_can_tell():
    done = _probe("test", "no-such-model.npz", "no-such-data")
    assert done.returncode == 2 and done.stderr == "ocolearn: error: no-such-model.npz: no such model file\n"
    assert "jax" in done.stdout.split()


def test_import_ocolearn_is_lazy_and_sets_the_xla_option_first():
    code = (
        "import os, sys, ocolearn\n"
        "assert 'jax' not in sys.modules\n"
        "assert 'xla_cpu_small_while_loop_byte_threshold' in os.environ['XLA_FLAGS']\n"
        "import ocolearn.streaming\n"  # binds the submodule ocolearn.run: the public name stays the function
        "from ocolearn import OGD, run\n"
        "assert callable(run) and run.__module__ == 'ocolearn.run' and ocolearn.run is run\n"
        "assert 'jax' in sys.modules and OGD.__name__ == 'OGD'\n"
        "assert set(ocolearn.__all__) <= set(dir(ocolearn))\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.stdout == "ok\n", done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("form", ["csv", "text"])
def test_train_on_a_small_file_loads_no_numba(tmp_path, form):
    """numba's start (0.7 to 0.8 s of CPU: ``ocolearn.data.compiled``) is not paid by a command
    whose data is too small for compiled loops to pay: a small CSV file or folder of text is read
    and padded by Python and NumPy."""
    if form == "csv":
        data = tmp_path / "d.csv"
        data.write_text("a,b,label\n" + "".join(f"{i % 7},{i % 3}.5,{i % 2}\n" for i in range(200)))
        options = ["--target", "label"]
    else:
        data = tmp_path / "reviews"
        for label in ("pos", "neg"):
            (data / label).mkdir(parents=True)
            for i in range(20):
                (data / label / f"{i}.txt").write_text(f"a {label} review, number {i}")
        options = []
    args = ["train", "--learner", "ogd", data, "--format", form, *options, "--passes", "2", "--model", tmp_path / "m"]
    done = _probe(*args)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip().splitlines()[-1].split()
    assert "jax" in loaded and "numba" not in loaded
