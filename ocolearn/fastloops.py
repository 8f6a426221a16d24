"""Let XLA:CPU compile a whole ``lax.scan`` of online updates into one kernel.

By default XLA:CPU compiles a while loop into a single kernel only when its body touches less
than 1 kB; above that it dispatches every fused operation of every round separately, and a
projected OGD pass at d = 100 runs about 6x slower (``benchmarks/README.md``). Raising
``xla_cpu_small_while_loop_byte_threshold`` lifts that limit. XLA reads the option when JAX
creates its CPU backend, so it must be in ``XLA_FLAGS`` before the first computation.

``import ocolearn`` calls ``enable_fast_cpu_loops()``: it adds the option to ``XLA_FLAGS``
unless the backend already exists (then it warns) or the environment sets
``OCOLEARN_FAST_CPU_LOOPS=0``. The option changes nothing on GPU, and results are identical.
A script that starts JAX before importing ocolearn can instead set, in the shell::

    export XLA_FLAGS="--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=1000000000"
"""

from __future__ import annotations

import os
import re
import sys
import warnings

OPTION = "xla_cpu_small_while_loop_byte_threshold"
THRESHOLD = 1_000_000_000
_EXTRA = "--xla_backend_extra_options="


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


def enable_fast_cpu_loops(threshold: int = THRESHOLD) -> bool:
    """Put the one-kernel-loop option into ``XLA_FLAGS``; True if it is (or already was) in force."""
    flags = os.environ.get("XLA_FLAGS", "")
    if OPTION in flags:
        return True
    if os.environ.get("OCOLEARN_FAST_CPU_LOOPS", "1") == "0":
        return False
    if _backend_started():
        warnings.warn(
            "JAX's backend started before ocolearn was imported, so scans run without "
            f"{OPTION} and are several times slower on CPU; import ocolearn first or set "
            f'XLA_FLAGS="{_EXTRA}{OPTION}={threshold}"',
            stacklevel=3,
        )
        return False
    os.environ["XLA_FLAGS"] = with_fast_loops(flags, threshold)
    return True
