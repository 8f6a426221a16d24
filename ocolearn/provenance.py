"""What produced an output: versions, device, commit, command line and time.

``record()`` gathers it as a JSON-ready dict; ``write(folder)`` writes it as ``provenance.json``
into a run's or a sweep's output folder (``ocolearn.experiment``), and ``ocolearn train`` keeps
it in the model file's settings. The fields:

- ``ocolearn``, ``jax``, ``jaxlib``, ``numpy``, ``python``: versions;
- ``device``: JAX's default backend, the kind of its first device and the number of devices;
- ``git``: for the ocolearn source tree and for the working directory (where each is a git
  checkout, else null): ``commit`` and ``dirty`` (tracked files changed since it; untracked
  files such as outputs do not count);
- ``command``: the command line (``sys.argv`` unless given), ``cwd`` and ``time`` (UTC, ISO 8601).
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

from ocolearn.io import write_json

FILE = "provenance.json"


def git_state(folder) -> dict | None:
    """``{"root", "commit", "dirty"}`` of the git checkout holding ``folder``, or None (no git,
    not a checkout)."""

    def git(*args):
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10)
        return done.stdout.strip() if done.returncode == 0 else None

    try:
        root, commit = git("rev-parse", "--show-toplevel"), git("rev-parse", "HEAD")
        if root is None or commit is None:
            return None
        changes = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return {"root": root, "commit": commit, "dirty": bool(changes)}


def record(argv=None) -> dict:
    """The provenance of an output made now by the command ``argv`` (default ``sys.argv``)."""
    import jax
    import jaxlib
    import numpy as np

    import ocolearn

    devices = jax.devices()
    return {
        "ocolearn": ocolearn.__version__,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "device": {"backend": jax.default_backend(), "kind": devices[0].device_kind, "count": len(devices)},
        "git": {
            "ocolearn": git_state(Path(ocolearn.__file__).parent),
            "working_directory": git_state(Path.cwd()),
        },
        "command": list(sys.argv if argv is None else argv),
        "cwd": os.getcwd(),
        "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def write(folder, argv=None) -> dict:
    """Write ``record(argv)`` as ``folder/provenance.json`` (atomically); returns it."""
    provenance = record(argv)
    write_json(Path(folder) / FILE, provenance)
    return provenance
