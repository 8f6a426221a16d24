import contextlib
import gc
import importlib.util
import io
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import ocolearn  # noqa: F401  (first: sets XLA's CPU flags before JAX starts)
from ocolearn.cli import _compilation_cache

# One persistent compilation cache for the whole run, as the command keeps one: every xdist worker,
# every in-process ``main()`` and every ``ocolearn`` process the tests start (they inherit the
# variable) reads and writes the same folder, so a program is compiled once per run instead of once
# per process (most of the suite's time is XLA compiling), and a second run finds it compiled. The
# folder is the repository's .pytest_cache/xla, not the user's ~/.cache; ``OCOLEARN_CACHE`` set
# beforehand names another (``0``: none).
os.environ.setdefault("OCOLEARN_CACHE", str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "xla"))
_compilation_cache()

# A cold run writes about 50 MB there (3,600 programs), and every change to a compiled function
# writes its programs again under new keys; the old ones are never read again.
CACHE_LIMIT, CACHE_KEEP = 512 << 20, 256 << 20


def prune(folder: Path, limit: int = CACHE_LIMIT, keep: int = CACHE_KEEP) -> int:
    """Once the files in ``folder`` pass ``limit`` bytes, delete the least recently read until
    ``keep`` bytes are left; returns how many were deleted. JAX's own bound
    (``jax_compilation_cache_max_size``) would do it on every write, listing the whole folder
    under a lock each time. Last read is the access time, which a ``relatime`` mount (Linux's
    default) keeps to within a day: a program the suite reads is not deleted."""
    try:
        files = [(f.stat(), f) for f in folder.iterdir() if f.is_file()]
    except OSError:  # no folder yet
        return 0
    total = sum(s.st_size for s, _ in files)
    if total <= limit:
        return 0
    deleted = 0
    for s, f in sorted(files, key=lambda entry: entry[0].st_atime):
        if total <= keep:
            break
        f.unlink(missing_ok=True)
        total -= s.st_size
        deleted += 1
    return deleted


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # once per run: in xdist's controller, before its workers start
        folder = os.environ["OCOLEARN_CACHE"]
        if folder != "0":
            prune(Path(folder))


def pytest_collection_finish(session):
    """Python's cycle collector, run every 700 allocations, walked the modules, the collected
    tests and JAX's caches again and again while JAX traced: 4.5 s of 120 s of CPU in
    test_contract and test_study (2 workers). What is alive now is frozen (never walked
    again) and the collector runs every 20,000 allocations: 1.4 s. Reference counting frees
    everything else as before."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


# Deterministic example generation: the same examples on every run and machine.
settings.register_profile(
    "ocolearn", deadline=None, derandomize=True, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
# Fewer examples for mutation testing (``HYPOTHESIS_PROFILE=mutation``), which reruns tests per mutant.
settings.register_profile("mutation", parent=settings.get_profile("ocolearn"), max_examples=10)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ocolearn"))


@pytest.fixture
def sklearn():
    """scikit-learn's ``linear_model``, or a skip of only the test that asks for it."""
    return pytest.importorskip("sklearn.linear_model")


class Stop(Exception):
    """Raised by ``stopping_progress``: a run interrupted midway, as a kill would."""


def script_module(path: Path):
    """A script of the repository (``benchmarks/``, ``experiments/``: not a package) as a module."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stopping_progress(after: int):
    """A progress line that raises ``Stop`` at its ``after``-th update (a stream's chunk end)."""
    from ocolearn.progress import Progress

    class StopAfter(Progress):
        calls = 0

        def show(self, *args, **kw):
            self.calls += 1
            if self.calls == after:
                raise Stop

    return StopAfter()


def in_process(*args) -> subprocess.CompletedProcess:
    """``ocolearn ARGS`` run in this process, as ``subprocess.run(..., capture_output=True,
    text=True)`` would report it (exit status, stdout, stderr): ``entry`` only exits with
    ``main``'s status, and a Python start with JAX's import is most of a short command's time.
    (``main`` turns on the run's compilation cache above, already on.)"""
    from ocolearn.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out):
        with contextlib.redirect_stderr(err):
            try:
                status = main([str(a) for a in args])
            except SystemExit as e:  # usage errors
                status = e.code
    return subprocess.CompletedProcess(["ocolearn", *map(str, args)], status, out.getvalue(), err.getvalue())
