"""The fixed start-up cost of each ``ocolearn`` command: wall time of the whole process on
inputs so small that the work itself is nothing (iris, 150 rows), median of ``--repeats`` runs
after one unmeasured run (which fills JAX's persistent compilation cache, as any earlier use
of the same command would).

    python benchmarks/bench_startup.py [--repeats 5] [--out benchmarks/records]

The commands run in turn in each repeat (so load falls on all alike); the record is
``OUT/startup_cpu.json`` and ``benchmarks/tables.py`` writes docs/benchmarks.md's table from it.

``--help``, ``--version`` and usage errors import no NumPy or JAX (``ocolearn.cli``); every
other command pays for importing JAX and for loading its compiled programs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from common import Record, alternate, options

ROOT = Path(__file__).resolve().parents[1]


def commands(tmp: Path) -> dict[str, list[str]]:
    data, model = tmp / "iris.svm", tmp / "iris.npz"
    return {
        "python -c pass (the interpreter alone)": ["-c", "pass"],
        "ocolearn --help": ["--help"],
        "ocolearn --version": ["--version"],
        "ocolearn train --help": ["train", "--help"],
        "ocolearn train --passes two (a usage error)": ["train", "--passes", "two"],
        "python -c 'import jax' (for scale)": ["-c", "import jax"],
        "ocolearn export iris": ["export", "iris", "--target", "Species", "--format", "svmlight", "--out", data],
        "ocolearn train (150 rows)": ["train", "--learner", "perceptron", data, "--model", model, "--quiet"],
        "ocolearn predict (150 rows)": ["predict", model, data, "--out", tmp / "p.txt"],
        "ocolearn test (150 rows)": ["test", model, data],
        "ocolearn run configs/iris_ridge_magic.toml": [
            "run",
            ROOT / "configs/iris_ridge_magic.toml",
            "--out",
            tmp / "r",
        ],
        "ocolearn sweep configs/iris_sweep.toml": ["sweep", ROOT / "configs/iris_sweep.toml", "--out", tmp / "s"],
    }


def seconds(args) -> float:
    """Wall seconds of one whole process (returned, so ``alternate`` records it)."""
    argv = [sys.executable, *map(str, args)] if args[0] == "-c" else [sys.executable, "-m", "ocolearn.cli", *args]
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    args = options(__doc__).parse_args()
    record = Record("startup", args.out, args.repeats)
    with tempfile.TemporaryDirectory() as folder:
        runs = {name: partial(seconds, argv) for name, argv in commands(Path(folder)).items()}
        times = alternate(runs, args.repeats)  # after one unmeasured round, which fills the cache
    for name, t in times.items():
        print(f"{name:48s} {statistics.median(t):6.2f} s  (min {min(t):.2f}, max {max(t):.2f})")
    record.save(results=[{"name": name, "seconds": t} for name, t in times.items()])


if __name__ == "__main__":
    main()
