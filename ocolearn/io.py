"""Atomic file output: a reader sees the old file or the new one, never half of one; and a
folder of outputs (``atomic_folder``) is likewise the old one or the new one, never a mix.

Temporary files and folders are siblings of their target named
``.NAME.ocolearn.PID.NONCE.CHECK.tmp``: PID the writing process, NONCE eight random hexadecimal
digits and CHECK the first eight of the SHA-256 of ``NAME.PID.NONCE`` (``_sibling``), a mark no
file of the user's carries by chance. A process killed by SIGKILL leaves its temporary behind;
the next write into that folder removes the ones it can prove are ocolearn's (the mark checks,
owned by this user, a file or a folder, not a link) and whose process is gone (``clean_stale``).
A file whose name merely looks alike (``.notes.backup01.tmp``) is never touched. Errors name
the user's path, never the hidden temporary one.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import re
import secrets
import shutil
from pathlib import Path

from ocolearn.interrupts import held

_TEMPORARY = re.compile(
    r"^\.(?P<name>.+)\.ocolearn\.(?P<pid>\d+)\.(?P<nonce>[0-9a-f]{8})\.(?P<check>[0-9a-f]{8})\.tmp$"
)


def atomic_write(path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder, fsync, rename."""
    return atomic_lines(path, [data])


def atomic_lines(path, pieces) -> Path:
    """Write the pieces (str or bytes, produced one by one: constant memory) to ``path``
    through a temporary file in the same folder (created if missing), fsync, rename. The file
    gets the permissions a new file of the user gets (0o666 less the umask).
    An ``OSError`` (a full disk, a read-only folder, ``path`` a folder) names ``path``."""
    path = Path(path)
    with _naming(path):
        target = _target(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        clean_stale(target.parent)
        tmp = _sibling(target)  # (named before it is made: see atomic_folder)
        try:
            with open(tmp, "xb") as f:
                for piece in pieces:
                    f.write(piece.encode() if isinstance(piece, str) else piece)
                f.flush()
                os.fsync(f.fileno())
            with held(output=_visible(target)):  # (nothing written after a signal, no signal cuts a rename)
                os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return path


def _visible(path: Path) -> bool:
    """Whether ``path`` is an output of its own, not a file of a folder being written (one in a
    temporary folder of ``atomic_folder``)."""
    return not any(_TEMPORARY.match(folder.name) for folder in path.parents)


def _target(path: Path, folder: bool = False) -> Path:
    """Where a write to ``path`` renames its file: the file a symbolic link points to (the link
    stays, as a shell's ``>`` keeps it; the rename would put a plain file in the link's place:
    ``/dev/stdout`` is one), refused if it is a device, a pipe or a socket (``/dev/null``), into
    which the user meant to write and which the rename would replace (as root, in ``/dev``), or,
    for a file (not ``folder``), if it is a folder."""
    import errno

    if path.is_dir() and not folder:
        raise IsADirectoryError(errno.EISDIR, "is a folder; give a file name")
    if path.exists() and not path.is_file() and not path.is_dir():  # (stat: through every link)
        raise OSError(
            errno.EINVAL,
            "is a device, a pipe or a socket, not a file; outputs are files written whole "
            "(predict and test print to the standard output without --out)",
            str(path),
        )
    return resolved(path) if path.is_symlink() else path


def resolved(path) -> Path:
    """``Path(path).resolve()``, with a loop of symbolic links an ``OSError`` naming ``path``
    (Python before 3.13 raises a ``RuntimeError`` for it, which no door turns into its one line)."""
    import errno

    try:
        return Path(path).resolve()
    except RuntimeError:
        raise OSError(errno.ELOOP, "is a loop of symbolic links", str(path)) from None


def _prefix(path: Path) -> str:
    return f".{path.name}.ocolearn.{os.getpid()}."


def _check(name: str, pid: str, nonce: str) -> str:
    """The CHECK of a temporary's name (the module's docstring)."""
    return hashlib.sha256(f"{name}.{pid}.{nonce}".encode()).hexdigest()[:8]


@contextlib.contextmanager
def _naming(path: Path):
    """An ``OSError`` raised inside names ``path`` (the user's), not a temporary file or nothing;
    a file or folder of the path that could not be made in a folder that exists says so."""
    try:
        yield
    except OSError as e:
        folder = _refusing(path, e)
        if folder is not None:
            raise OSError(
                e.errno, f"cannot be written there: {folder} takes no new files or folders", str(path)
            ) from None
        if e.filename is not None and Path(e.filename) == path:
            raise
        raise OSError(e.errno, e.strerror or str(e), str(path)) from None


def _refusing(path: Path, e: OSError) -> Path | None:
    """The folder that refused to make a file or folder on the way to ``path``, or None. Making
    an entry in a folder that exists fails with "No such file or directory" (ENOENT) only where
    the file system makes none (``/proc``, ``/sys``): a missing folder is made first."""
    import errno

    if e.errno != errno.ENOENT or e.filename is None or e.filename2 is not None:  # (a rename has two names)
        return None
    made = Path(e.filename)  # the path, a folder of it, or its temporary sibling
    ours = made in (path, *path.parents) or (made.parent == path.parent and made.name.startswith(_prefix(path)))
    return made.parent if ours and made.parent.is_dir() else None


def writable(path, folder: bool = False) -> None:
    """Check, before any work, that ``path`` can be written (as a file, or as a folder of
    outputs): it is not a folder (not a file), and a temporary file can be made next to it
    (the folder exists or can be made, is writable, has room for a file). Else an ``OSError``
    naming ``path``."""
    import errno

    path = Path(path)
    with _naming(path):
        if path.exists() and folder and not path.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "is a file; give a folder name")
        target = _target(path, folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = _sibling(target)
        try:
            open(tmp, "xb").close()
        finally:
            tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_folder(path, command: str):
    """Yield a temporary sibling folder to write the outputs of ``command`` (one of
    ``OUTPUTS``) into; on success it becomes ``path`` (an old folder there is moved aside first
    and removed after), on failure or interruption it is removed and an old ``path`` is left as
    it was. A reader sees the old folder or the new one, never a mix (between the two renames,
    briefly, no folder). What may stand at ``path`` first: ``_replaceable``."""
    path = Path(path)
    _replaceable(path, command)  # (first: nothing is made beside a path that is refused, / included)
    writable(path, folder=True)
    with _naming(path):
        clean_stale(path.parent)
        _no_other_writer(path)
    # Both names are bound before anything is made or moved, so that a signal's exception (the
    # CLI's SIGTERM handler raises one) that lands just after a creation or a rename, between two
    # Python steps, still finds what to undo.
    tmp, old = _sibling(path), _sibling(path)
    try:
        with _naming(path):
            os.mkdir(tmp)  # (mode 0o777 less the umask: the permissions of a new folder of the user's)
        yield tmp
        with _naming(path), held():  # (as atomic_lines; and the old folder is removed whole)
            if path.exists():
                os.replace(path, old)
            os.replace(tmp, path)  # (another writer's folder made meanwhile: ENOTEMPTY, an error naming path)
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        if old.exists() and not path.exists():
            os.replace(old, path)  # interrupted between the two renames: the old folder goes back
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _no_other_writer(path: Path) -> None:
    """Refuse ``path`` while another live process writes it (a temporary folder of ours for it,
    ``_ours``): two commands into one folder would each replace the other's."""
    import errno

    for entry in os.scandir(path.parent):
        pid = _ours(entry)
        if pid is not None and pid != os.getpid() and entry.name.startswith(f".{path.name}.ocolearn.") and _alive(pid):
            raise OSError(errno.EBUSY, f"another ocolearn (process {pid}) is writing it; wait for it", str(path))


def _sibling(path: Path) -> Path:
    """A new name ``.NAME.ocolearn.PID.NONCE.CHECK.tmp`` beside ``path`` (the module's
    docstring; another of this process's temporaries has its NONCE with chance 2^-32)."""
    nonce = secrets.token_hex(4)
    return path.parent / f"{_prefix(path)}{nonce}.{_check(path.name, str(os.getpid()), nonce)}.tmp"


def _ours(entry: os.DirEntry) -> int | None:
    """The PID of the process that made ``entry`` if it is provably a temporary of ocolearn's
    (its name carries the mark and its check, it is this user's, a plain file or a folder and
    not a link), else None."""
    match = _TEMPORARY.match(entry.name)
    if match is None or match["check"] != _check(match["name"], match["pid"], match["nonce"]):
        return None
    try:
        if entry.is_symlink() or entry.stat(follow_symlinks=False).st_uid != os.getuid():
            return None
        if not (entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False)):
            return None
    except OSError:
        return None
    return int(match["pid"])


MARKER = "provenance.json"  # every output folder holds one (``ocolearn.provenance.FILE``)
OUTPUTS = {
    "run": "metrics.json",
    "sweep": "sweep.csv",
    "study": "leaderboard.csv",
}  # the file that tells each one's folder


def _replaceable(path: Path, command: str) -> None:
    """What ``command`` may replace at ``path``: nothing, an empty folder, or a previous output
    folder of the same command (it holds ``MARKER`` and ``OUTPUTS[command]``, and no other
    command's file); not a symbolic link (the link would be replaced, its folder kept), nor the
    current folder or one that holds it: a mistyped ``--out`` must not remove a folder of the
    user's."""
    import errno

    if path.is_symlink():
        raise OSError(errno.EEXIST, "is a symbolic link; give the folder itself, or a new folder", str(path))
    if not path.is_dir():
        return
    here = Path.cwd().resolve()
    if path.resolve() in (here, *here.parents):
        raise OSError(errno.EBUSY, "is the current folder or holds it; give a folder for the outputs", str(path))
    if not any(path.iterdir()):
        return
    kinds = [c for c, file in OUTPUTS.items() if (path / file).is_file()]
    if not (path / MARKER).is_file() or not kinds:
        raise OSError(
            errno.EEXIST, f"is not an output folder (no {MARKER}); give a new folder, or empty this one", str(path)
        )
    if kinds != [command]:
        raise OSError(
            errno.EEXIST,
            f"is the output folder of 'ocolearn {kinds[0]}', not of {command}; give a new folder",
            str(path),
        )


def writes_folder(command: str):
    """A decorator: ``function(first, out_dir, ...)`` writing the outputs of ``command`` into
    ``out_dir`` as a unit (``atomic_folder``)."""

    def decorator(function):
        @functools.wraps(function)
        def wrapper(first, out_dir, *args, **kwargs):
            with atomic_folder(out_dir, command) as tmp:
                return function(first, tmp, *args, **kwargs)

        return wrapper

    return decorator


def clean_stale(folder) -> list[Path]:
    """Remove the temporary files and folders in ``folder`` that are provably ocolearn's
    (``_ours``) and whose process is gone (a writer killed by SIGKILL leaves them); returns
    what was removed. A temporary of a live process, this one's included, is left alone, and
    so is every file whose name only looks like one (an older ocolearn's temporaries, named
    without the mark, included: they cannot be told from a user's)."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        pid = _ours(entry)
        if pid is None or _alive(pid):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:  # (another process removed it first, or it is not ours to remove)
            continue
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process (alive), or not a PID
        return True
    return True


def write_json(path, obj) -> Path:
    """``obj`` as indented JSON (``json_text``), atomically."""
    return atomic_write(path, json_text(obj) + "\n")


def json_text(obj, indent: int | None = 2) -> str:
    """``obj`` as strict JSON, indented by ``indent``. JSON has no NaN or infinity (RFC 8259;
    Python's ``json`` writes ``NaN`` and ``Infinity``, which jq, JavaScript's ``JSON.parse`` and
    most other readers refuse): a float that is not finite is written ``null``, as JavaScript's
    ``JSON.stringify`` does. What a null stands for is said where the number is defined
    (``metrics.json``'s definitions: an unbounded set's diameter, for one). ``allow_nan=False``
    guards the rule."""
    return json.dumps(_finite(obj), indent=indent, allow_nan=False)


def _finite(obj):
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {key: _finite(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(value) for value in obj]
    return obj
