"""Atomic file output: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def atomic_write(path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder, fsync, rename."""
    return atomic_lines(path, [data])


def atomic_lines(path, pieces) -> Path:
    """Write the pieces (str or bytes, produced one by one: constant memory) to ``path``
    through a temporary file in the same folder (created if missing), fsync, rename. The file
    gets the permissions a new file of the user gets (the umask), not the temporary file's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            for piece in pieces:
                f.write(piece.encode() if isinstance(piece, str) else piece)
            f.flush()
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path, obj) -> Path:
    """``obj`` as indented JSON, atomically."""
    return atomic_write(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")
