"""XLA:CPU options that ocolearn puts in place before JAX starts: one-kernel scans, faster compiles.

**One kernel per scan.** By default XLA:CPU compiles a while loop into a single kernel only when
its body touches less than 1 kB; above that it dispatches every fused operation of every round
separately, and a projected OGD pass at d = 100 runs 8.5x slower (the README's OGD table, row
"ocolearn, XLA default loops").
Raising ``xla_cpu_small_while_loop_byte_threshold`` lifts that limit. The limit counts the bytes of
every operation in the body, its branches included: at d = 10 the L2 ball's branches (the re-sum of
its carried norm every 16 rounds, the step that stays inside) take the body of a projected OGD pass
past 1 kB, so without the option that pass runs 19x slower (the OGD table's d = 10 column), where a
threshold of 1.5 kB already gives the one-kernel speed (2026-12-02, 200,000 rows: 157 ms without
the option, 8.8 ms at 1,500 bytes, 8.2 ms with the option).

**Faster compiles.** XLA:CPU's MLIR fusion emitters (``xla_cpu_use_fusion_emitters``, on by
default) set up an MLIR context, its dialects loaded, for every fusion they compile (``perf``
shows it, 2026-12-01). Turned off, XLA emits the same fusions through its LLVM IR emitters: an
element-wise operation compiles in 31 ms instead of 55, a run's program 15 to 45 % sooner, the
test suite takes 619 s of CPU instead of 746; the benchmarks' loops run as fast, and the gather +
one scatter floor of ``bench_sparse_steps.py`` 17x faster (0.039 s instead of 0.67). XLA stops
the process on a flag it does not know, so the option is added only for the jaxlib versions
known to have it (``EMITTERS_KNOWN``, jaxlib's ``version.py`` read without importing it);
outside them XLA compiles as it does by default.

XLA reads both when JAX creates its CPU backend, so they must be in ``XLA_FLAGS`` before the
first computation. ``import ocolearn`` calls ``enable_fast_cpu_loops()``: it adds them to
``XLA_FLAGS`` (a value set there already wins) unless the backend already exists (then it warns)
or the environment sets ``OCOLEARN_FAST_CPU_LOOPS=0``. Neither changes anything on GPU, and
results are identical. A script that starts JAX before importing ocolearn can instead set, in the
shell::

    export XLA_FLAGS="--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=1000000000
                      --xla_cpu_use_fusion_emitters=false"

(one line, the two flags separated by a space).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import warnings
from pathlib import Path

OPTION = "xla_cpu_small_while_loop_byte_threshold"
THRESHOLD = 1_000_000_000
_EXTRA = "--xla_backend_extra_options="
EMITTERS = "xla_cpu_use_fusion_emitters"
EMITTERS_OFF = f"--{EMITTERS}=false"
# jaxlib (major, minor) versions whose XLA has the flag, oldest and newest: 0.7.0 (pyproject's
# oldest; its libjax_common.so names it) to 0.10.2 (this suite's, 2026-12-01).
EMITTERS_KNOWN = ((0, 7), (0, 10))


def _backend_started() -> bool:
    if "jax" not in sys.modules:  # no backend without JAX; and asking would import it
        return False
    try:
        from jax._src import xla_bridge
    except ImportError:  # pragma: no cover - JAX moved its internals; assume too late
        return True
    return xla_bridge.backends_are_initialized()


def with_fast_loops(flags: str, threshold: int = THRESHOLD) -> str:
    """``flags`` (an ``XLA_FLAGS`` value) with the option added to its backend extra options."""
    if OPTION in flags:
        return flags
    setting = f"{OPTION}={threshold}"
    match = re.search(re.escape(_EXTRA) + r"(\S*)", flags)
    if match is None:
        return f"{flags} {_EXTRA}{setting}".strip()
    merged = f"{_EXTRA}{match.group(1)},{setting}" if match.group(1) else _EXTRA + setting
    return flags[: match.start()] + merged + flags[match.end() :]


def jaxlib_version() -> tuple[int, int] | None:
    """jaxlib's (major, minor) version, read from its ``version.py`` without importing it (an
    import that ``ocolearn --help`` would wait for), or None if it cannot be read."""
    try:
        folder = importlib.util.find_spec("jaxlib").submodule_search_locations[0]
        text = Path(folder, "version.py").read_text()
    except (ImportError, AttributeError, TypeError, IndexError, OSError):
        return None
    match = re.search(r'^_version\s*=\s*"(\d+)\.(\d+)', text, re.MULTILINE)
    return (int(match[1]), int(match[2])) if match else None


def with_fast_compiles(flags: str, version: tuple[int, int] | None) -> str:
    """``flags`` (an ``XLA_FLAGS`` value) with the fusion emitters off, where jaxlib ``version``
    is among ``EMITTERS_KNOWN`` and ``flags`` do not set them already."""
    if EMITTERS in flags or version is None or not EMITTERS_KNOWN[0] <= version <= EMITTERS_KNOWN[1]:
        return flags
    return f"{flags} {EMITTERS_OFF}".strip()


def enable_fast_cpu_loops(threshold: int = THRESHOLD) -> bool:
    """Put both options into ``XLA_FLAGS``; True if the one-kernel loops are (or already were) in
    force."""
    flags = os.environ.get("XLA_FLAGS", "")
    wanted = with_fast_compiles(with_fast_loops(flags, threshold), jaxlib_version())
    if wanted == flags:
        return True
    if os.environ.get("OCOLEARN_FAST_CPU_LOOPS", "1") == "0":
        return OPTION in flags
    if _backend_started():
        if OPTION not in flags:
            warnings.warn(
                "JAX's backend started before ocolearn was imported, so scans run without "
                f"{OPTION} and are several times slower on CPU; import ocolearn first or set "
                f'XLA_FLAGS="{_EXTRA}{OPTION}={threshold}"',
                stacklevel=3,
            )
        return OPTION in flags
    os.environ["XLA_FLAGS"] = wanted
    return True
