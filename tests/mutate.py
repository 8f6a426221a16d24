"""Mutation testing of ocolearn's JAX code: mutmut's mutants, each run against the tests that reach it.

``mutmut run`` forks a worker per mutant and runs the tests it saw call the mutated function. Under
JAX that selection misses tests: a test whose program an earlier test compiled never calls the
function again, and a worker forked from a process that holds JAX's threads can deadlock. This driver
takes mutmut's mutants (in ``mutants/``) and works in one process:

1. It runs the named test files once in mutmut's ``stats`` mode with JAX's caches cleared before
   every test, so each test traces afresh, and records which tests reach each mutated function.
2. For each mutant it sets ``MUTANT_UNDER_TEST``, clears JAX's caches (not with ``--outside-jax``,
   for modules JAX never traces) and runs the tests that reach its function, the quickest first,
   with ``pytest -x``. A mutant is *killed* when a test fails, *timeout* when its tests
   take longer than ``--timeout`` seconds (the worker is then restarted), *survived* when every test
   passes, and *not reached* when no test calls its function.

From the repository root (the first call writes ``mutants/`` as ``mutmut run`` would, from the files
``[tool.mutmut]`` in ``pyproject.toml`` names)::

    python tests/mutate.py ocolearn.projections=tests/test_projections.py,tests/test_ball_edges.py

``MODULE:FUNCTION,...=TESTS`` keeps a module's mutants of the named functions only
(``ocolearn.pipeline:model_of=...``). Results are JSON lines ``[mutant, status, seconds]`` in
``--out`` (``mutants/results.jsonl``); a second call resumes and prints the counts. Tests that start
another process reach a mutant there unseen: the count of reached mutants covers this process's calls
only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

MUTANTS = Path("mutants")
PYTEST = ["-q", "-p", "no:cacheprovider", "-p", "no:xdist"]


def generate() -> None:
    """Write ``mutants/`` as ``mutmut run`` does before it runs anything: mutmut 3.8's own steps
    (a copy of the sources and tests, each file of ``[tool.mutmut] only_mutate`` mutated)."""
    from mutmut.__main__ import create_mutants, store_lines_covered_by_tests
    from mutmut.mutation.trampoline import set_mutant_under_test
    from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths

    set_mutant_under_test("mutant_generation")
    MUTANTS.mkdir(exist_ok=True)
    copy_src_dir()
    copy_also_copy_files()
    setup_source_paths()
    store_lines_covered_by_tests()
    create_mutants(os.cpu_count() or 1)


def mutant_names(module: str, functions: list[str] | None) -> list[str]:
    """Every mutant mutmut wrote for ``module`` (``ocolearn.projections``), in source order."""
    text = (MUTANTS / (module.replace(".", "/") + ".py")).read_text()
    chosen = []
    for name in dict.fromkeys(re.findall(r"'(x\w+?__mutmut_\d+)'", text)):
        function = function_of(name).split("ǁ")[-1].removeprefix("x_")
        if functions is None or function in functions:
            chosen.append(f"{module}.{name}")
    return chosen


def function_of(mutant: str) -> str:
    """``ocolearn.projections.x_head__mutmut_3`` -> ``ocolearn.projections.x_head``."""
    return mutant.partition("__mutmut_")[0]


def reach(tests: list[str]) -> dict[str, list[str]]:
    """Run ``tests`` once, each after clearing JAX's caches: the test ids that reach each mutated function."""
    import jax
    import pytest
    from mutmut.mutation import trampoline

    reached: dict[str, list[str]] = {}
    seconds: dict[str, float] = {}
    current = [""]

    def hit(function: str, caller=None) -> None:
        ids = reached.setdefault(function, [])
        if current[0] not in ids:
            ids.append(current[0])

    class Fresh:
        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(self, item):
            current[0] = item.nodeid
            jax.clear_caches()

        def pytest_runtest_logreport(self, report):
            seconds[report.nodeid] = seconds.get(report.nodeid, 0.0) + report.duration

    trampoline.record_trampoline_hit = hit
    os.environ["MUTANT_UNDER_TEST"] = "stats"
    pytest.main([*PYTEST, *tests], plugins=[Fresh()])
    # The quickest tests first: with -x the first failure ends a mutant's run.
    return {function: sorted(ids, key=lambda i: seconds.get(i, 0.0)) for function, ids in reached.items()}


def worker(results: Path) -> None:
    """Read JSON lines ``[mutant, [test ids]]`` from stdin; run each mutant's tests in this one process."""
    import jax
    import pytest

    with results.open("a") as out:
        for line in sys.stdin:
            name, tests = json.loads(line)
            os.environ["MUTANT_UNDER_TEST"] = name
            if not os.environ.get("MUTATE_KEEP_CACHES"):
                jax.clear_caches()
            start = time.perf_counter()
            code = pytest.main(["-x", *PYTEST, *tests])
            seconds = round(time.perf_counter() - start, 2)
            status = {pytest.ExitCode.OK: "survived", pytest.ExitCode.TESTS_FAILED: "killed"}.get(code, f"error {code}")
            out.write(json.dumps([name, status, seconds]) + "\n")
            out.flush()


def finished(results: Path) -> set[str]:
    return {json.loads(line)[0] for line in results.read_text().splitlines()} if results.exists() else set()


def drive(jobs: list[tuple[str, list[str]]], results: Path, timeout: float) -> None:
    """Feed the jobs to a worker; a mutant that passes ``timeout`` is recorded and the worker restarted."""
    env = dict(os.environ, PYTHONPATH=str(MUTANTS.resolve()), HYPOTHESIS_PROFILE="mutation")
    pending = [job for job in jobs if job[0] not in finished(results)]
    queue = results.with_suffix(".queue")
    while pending:
        queue.write_text("".join(json.dumps(job) + "\n" for job in pending))
        with queue.open() as jobs_in:  # a file, not a pipe: the parent must not block on a worker that hangs
            child = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker", str(results)],
                cwd=MUTANTS,
                env=env,
                stdin=jobs_in,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        count, since = len(finished(results)), time.monotonic()
        while child.poll() is None:
            time.sleep(0.5)
            if len(finished(results)) != count:
                count, since = len(finished(results)), time.monotonic()
            elif time.monotonic() - since > timeout:
                child.kill()
                child.wait()
        pending = [job for job in pending if job[0] not in finished(results)]
        if pending:
            with results.open("a") as out:
                out.write(json.dumps([pending.pop(0)[0], "timeout", timeout]) + "\n")
        print(f"{len(jobs) - len(pending)} of {len(jobs)}", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        worker(Path(sys.argv[2]))
        return
    if sys.argv[1:2] == ["--reach"]:
        print(json.dumps(reach(json.loads(sys.argv[2]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="+", help="MODULE[:FUNCTION,...]=TEST_FILE,...")
    parser.add_argument("--out", type=Path, default=MUTANTS / "results.jsonl")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument(
        "--outside-jax",
        action="store_true",
        help="the modules run outside JAX's compiled programs (NumPy): keep JAX's caches between mutants",
    )
    parser.add_argument("--shard", default="0/1", help="I/N: every N-th mutant from the I-th, for N workers at once")
    args = parser.parse_args()
    shard, shards = map(int, args.shard.split("/"))
    if args.outside_jax:
        os.environ["MUTATE_KEEP_CACHES"] = "1"
    if not (MUTANTS / "ocolearn").is_dir():
        generate()
    results = args.out.resolve()
    env = dict(os.environ, PYTHONPATH=str(MUTANTS.resolve()), HYPOTHESIS_PROFILE="mutation")
    jobs, missed = [], []
    for target in args.targets:
        module_part, tests = target.split("=")
        module, _, functions = module_part.partition(":")
        names = mutant_names(module, functions.split(",") if functions else None)
        run = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--reach", json.dumps(tests.split(","))],
            cwd=MUTANTS,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        reached = json.loads(run.stdout.splitlines()[-1])
        for name in names:
            ids = reached.get(function_of(name), [])
            (jobs if ids else missed).append((name, ids))
    with results.open("a") as out:
        for name, _ in missed:
            if name not in finished(results):
                out.write(json.dumps([name, "not reached", 0]) + "\n")
    drive(jobs[shard::shards], results, args.timeout)
    counts: dict[str, dict[str, int]] = {}
    for line in results.read_text().splitlines():
        name, status, _ = json.loads(line)
        by = counts.setdefault(name.rsplit(".", 1)[0], {})
        by[status] = by.get(status, 0) + 1
    for module, by in counts.items():
        reached = sum(n for status, n in by.items() if status != "not reached")
        killed = by.get("killed", 0) + by.get("timeout", 0)
        print(f"{module}: {killed} of {reached} reached mutants killed; {by}")


if __name__ == "__main__":
    main()
