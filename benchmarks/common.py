"""Shared helpers of the benchmarks: alternating timed repeats, the records they write, synthetic
data and VW files.

A benchmark writes one record, ``OUT/NAME_DEVICE.json`` (``OUT`` = ``--out``, by default
``benchmarks/records/``, committed): the command, the date, the machine (processor, cores,
memory, load average before and after), the versions of Python, the libraries and ocolearn's
commit, and for each implementation its example count and the wall time of EVERY repeat.
Repeats alternate between the implementations (A B C, A B C, ...) so that a slow spell of a
shared machine hits all of them alike; tables report medians and the range over repeats
(``benchmarks/tables.py``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "benchmarks" / "records"
SCRATCH = ROOT / "benchmarks" / "scratch"  # generated data files and VW caches, ignored by git
sys.path.insert(0, str(ROOT))  # the checkout's ocolearn, also when run as a script

from ocolearn.io import write_json  # noqa: E402

PACKAGES = ("jax", "jaxlib", "numpy", "scikit-learn", "river", "vowpalwabbit", "numba", "scipy")


def options(doc: str) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark takes: ``--repeats``, ``--out``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats of each implementation (default 5)")
    parser.add_argument("--out", type=Path, default=RECORDS, help="folder of the record (default benchmarks/records)")
    return parser


def use_device(device: str) -> str:
    """Select JAX's platform (``cpu`` or ``gpu``) before anything runs; returns the backend in use."""
    import jax

    jax.config.update("jax_platforms", "cuda" if device == "gpu" else device)
    try:
        backend = jax.default_backend()
    except (RuntimeError, AssertionError) as e:  # no such platform (JAX asserts when none is left)
        reason = (str(e).splitlines() or [type(e).__name__])[0]
        raise SystemExit(f"benchmarks: error: --device {device}: JAX cannot start it ({reason})") from None
    if backend != device:
        raise SystemExit(f"benchmarks: error: asked for --device {device}, JAX runs on {backend}")
    return backend


def alternate(
    runs: dict, repeats: int, warmup: bool = True, after_round=None, back_to_back: bool = False
) -> dict[str, list[float]]:
    """Wall seconds of each ``runs[name]()`` over ``repeats`` rounds, alternating the names each round,
    after one untimed round (imports, first allocations) if ``warmup``; ``after_round(times)``, if
    given, sees the times so far after each round (to save a record that a kill cannot lose).
    ``back_to_back``: each timed call right after an untimed call of the same run, so that none is
    timed in the wake of another (bench_ogd.py's first row, right after river's Python loop, took 44
    to 52 ms where the same program in second place took 36 to 40).

    A callable may return a float: its own measurement of the seconds (a subprocess that times
    itself), used instead of the wall time of the call.
    """
    if warmup:
        for fn in runs.values():
            fn()
    times = {name: [] for name in runs}
    for i in range(repeats):
        for name, fn in runs.items():
            if back_to_back:
                fn()
            start = time.perf_counter()
            measured = fn()
            seconds = time.perf_counter() - start
            times[name].append(float(measured) if isinstance(measured, float) else seconds)
            print(f"  repeat {i + 1}/{repeats} {name}: {times[name][-1]:.3f} s", flush=True)
        if after_round:
            after_round(times)
    return times


def result(name: str, examples: int, seconds: list[float], **extra) -> dict:
    """One implementation's entry of a record: every repeat's seconds; the median rate for reading."""
    rate = examples / statistics.median(seconds)
    return {"name": name, "examples": int(examples), "seconds": seconds, "median_examples_per_s": rate, **extra}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _commit() -> str:
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "HEAD") or os.environ.get("OCOLEARN_COMMIT", "unknown")  # a copy without .git
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "ocolearn")
    return commit + (" (ocolearn/ modified)" if dirty else "")


def machine(load_before) -> dict:
    """The machine a record was measured on, with the load average before and after the run."""
    import jax

    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "os": platform.platform(),
        "jax_backend": jax.default_backend(),
        "jax_devices": [str(d.device_kind) for d in jax.devices()],
        "load_average_before": list(load_before),
        "load_average_after": list(os.getloadavg()),
    }


def versions() -> dict:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["ocolearn"] = _commit()
    return out


class Record:
    """Collects a benchmark's results; ``save`` writes them with the machine and versions, atomically."""

    def __init__(self, name: str, out: Path, repeats: int, **params):
        self.name, self.out = name, Path(out)
        self.load = os.getloadavg()
        self.data = {
            "benchmark": name,
            "command": "python " + " ".join([os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "repeats": repeats,
            "params": params,
        }

    def save(self, **results) -> Path:
        import jax

        self.data.update(machine=machine(self.load), versions=versions(), **results)
        path = self.out / f"{self.name}_{jax.default_backend()}.json"
        write_json(path, self.data)
        print(f"wrote {path}")
        return path


def ocolearn_pass(learner, X, y, trace=False):
    """``(compile seconds, one pass)``: the pass is ``run(learner, X, y)`` as users call it, on
    arrays put on the device once, its checks included (the targets before the run, the rows in
    its loop; ``ocolearn.checks``), as scikit-learn's ``fit`` is timed with its input validation.
    The compile is timed on ``jit(run)``: the same rounds in one program, whose fresh state is
    built inside it (``run`` builds it before its own program)."""
    import jax

    from ocolearn import run

    Xj, yj = jax.device_put(X), jax.device_put(y)
    start = time.perf_counter()
    jax.jit(lambda lrn, X, y: run(lrn, X, y, trace=trace)).lower(learner, Xj, yj).compile()
    compile_s = time.perf_counter() - start

    def once(X=Xj, y=yj):
        return jax.block_until_ready(run(learner, X, y, trace=trace))

    once()  # compiles run's own program; the first call allocates
    return compile_s, once


def regression_data(n, d, seed=0):
    """float32 ``X ~ N(0, 1/d)`` (rows of norm about 1) and ``y = X w* + noise``."""
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d), dtype=np.float32) / np.sqrt(d)).astype(np.float32)
    w = rng.standard_normal(d).astype(np.float32)
    y = (X @ w + 0.1 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)
    return X, y


def sklearn_sgd_epoch(X64, y64, eta):
    """One epoch of scikit-learn's ``SGDRegressor`` with eta0 / t^0.5, no penalty, no intercept,
    no shuffling: the same update as OGD without a projection. Timed through ``fit`` as users
    call it, so its input validation counts."""
    import warnings

    from sklearn.linear_model import SGDRegressor

    model = SGDRegressor(
        loss="squared_error",
        penalty=None,
        learning_rate="invscaling",
        eta0=eta,
        power_t=0.5,
        max_iter=1,
        tol=None,
        shuffle=False,
        fit_intercept=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch does not "converge"
        return model.fit(X64, y64)


def vw_cache(X, y, name):
    """A VW cache file of dense rows ``y | 0:x0 1:x1 ...`` (made once, reused)."""

    def write(text):
        fmt = "%.7g |f " + " ".join(f"{j}:%.7g" for j in range(X.shape[1]))
        np.savetxt(text, np.column_stack([y, X]), fmt=fmt)

    return vw_cache_of(write, name)


def vw_cache_of(write, name):
    """A VW cache file made (once) from the text file that ``write(path)`` writes."""
    import vowpalwabbit

    SCRATCH.mkdir(parents=True, exist_ok=True)
    text, cache = SCRATCH / f"{name}.vw", SCRATCH / f"{name}.vw.cache"
    if not cache.exists():
        write(text)
        ws = vowpalwabbit.Workspace(f"-d {text} --cache_file {cache} --noconstant --quiet")
        ws.run_parser()
        ws.finish()
        text.unlink()
    return cache


def vw_from_cache(cache, args):
    """A callable: VW learning one pass from its binary cache with ``args`` (the cache is read
    from disk, parsed already: loading is counted, parsing text is not)."""
    import vowpalwabbit

    def once():
        ws = vowpalwabbit.Workspace(f"--cache_file {cache} --noconstant --quiet {args}")
        ws.run_parser()
        ws.finish()

    return once
