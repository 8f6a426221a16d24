"""What a piece of work needs, estimated from its sizes before anything is allocated or run.

``estimate`` is the one estimate of every door (``sweep``'s memory budget and chunks, a study's
orders and synthetic data, ``train``'s learner state, a model file's weights): ``rows`` x
``features`` numbers of data, ``grid`` configurations x ``orders`` orders each keeping a state
(four times, for the step's temporaries) and a trace or sums, and the time of their rounds at
``ROUND_SECONDS`` a round. ``refuse`` turns a need this machine cannot meet into one
``ConfigError`` naming the key, and warns, at once, of a run that will take long.
"""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

from ocolearn.parts import ConfigError

MEMORY: int | None = None  # bytes a run may use; None: this machine's physical memory (tests set a small number)
# Seconds of one round of one configuration and order as a sweep runs them (vmapped, a
# configuration padded to 16 lanes, its seeds' orders drawn on the host, then the best traced):
# ``ocolearn sweep`` of OGD on iris with one value, sweep.seeds = 2,000 against 250, 252.6 s against
# 48.2 s of wall time for 1,750 x 16 x 150 x 2 more rounds (the shared 2-core machine, load about 7,
# 2026-12-02). A sweep of many configurations runs faster a round (iris_sweep.toml's 1,024 x 8
# seeds: 13.4 s, estimated 30 s): the estimate errs long.
ROUND_SECONDS = 2.4e-5
MAX_SECONDS = 7 * 86400  # work estimated longer than a week is refused
WARN_SECONDS = 3600  # and longer than an hour warned of before it starts
TRACE_BYTES = 16  # a traced round's numbers (loss, squared error, mistakes, ...)


class Need(NamedTuple):
    bytes: int
    seconds: float


def memory() -> int:
    """Bytes of memory this process may use (``MEMORY`` where set): the machine's physical
    memory, or less where the process is limited (``ulimit -v``, a cgroup's ``memory.max``)."""
    import resource

    if MEMORY:
        return MEMORY
    limits = [os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")]
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    limits += [soft] if soft != resource.RLIM_INFINITY else []
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limits.append(int(f.read()))
    except (OSError, ValueError):  # (no cgroup v2 file, or "max")
        pass
    return min(limits)


def estimate(rows=0, features=0, *, orders=1, grid=1, passes=1, state=0, trace=False, itemsize=8) -> Need:
    """The memory and time of ``grid`` configurations x ``orders`` orders over ``rows`` rows
    (``passes`` times) of ``features`` numbers of ``itemsize`` bytes: the rows, and for each
    run its ``state`` bytes four times and a ``trace`` of every round (else its sums); the
    time, every run's rounds at ``ROUND_SECONDS``. Python ints: no overflow however large."""
    runs, rounds = int(grid) * int(orders), int(rows) * int(passes)
    per_run = 4 * int(state) + (TRACE_BYTES * rounds if trace else TRACE_BYTES) if state or trace else 0
    return Need(int(rows) * int(features) * int(itemsize) + runs * per_run, runs * rounds * ROUND_SECONDS)


def gib(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB"


def duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.0f} seconds"


def refuse(need: Need, key: str, what: str, limit: int | None = None) -> None:
    """A ``ConfigError`` naming ``key`` (the template ``{key}``: the setting that sizes the work)
    where ``what`` (the work, in words) needs more memory than ``limit`` (default ``memory()``)
    or more time than ``MAX_SECONDS``; a warning on stderr, at once, where longer than
    ``WARN_SECONDS``."""
    limit = memory() if limit is None else limit
    if need.bytes > limit:
        raise ConfigError.keyed(
            f"{{key}}: {what} needs about {gib(need.bytes)} of memory, more than the {gib(limit)} it may use here",
            key,
        )
    if need.seconds > MAX_SECONDS:
        raise ConfigError.keyed(
            f"{{key}}: {what} would take about {duration(need.seconds)} (at {ROUND_SECONDS:g} s a round, as "
            f"measured), more than the {duration(MAX_SECONDS)} a run may take here",
            key,
        )
    if need.seconds > WARN_SECONDS:
        print(f"ocolearn: warning: {key}: {what} will take about {duration(need.seconds)}", file=sys.stderr)
