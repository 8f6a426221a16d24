"""Runs over files larger than memory: chunks, parsing threads, progress, checkpoints.

``run_stream(learner, source, ...)`` reads the file in chunks of ``chunk_rows`` rows
(``ocolearn.data.stream``: parsed on threads, the next chunk made while the current one
runs, each read by the learner in place), and carries the learner state and the running
sums from chunk to chunk through the one runner (``ocolearn.run.run`` with ``state=`` and
``summary=``), so the weights and sums equal those of one run over the whole array, bit for
bit. Memory stays that of a few chunks.

Passes re-read the file. ``seed`` shuffles the rows within each chunk (a bounded buffer),
with the permutation drawn from (seed, pass, chunk), so a resumed run draws the same ones.

A checkpoint (``checkpoint=PATH``, every ``checkpoint_every`` rows at the next chunk end; 0:
at the end of every chunk, so a checkpoint asked for is always written)
holds the learner state, the running sums, the position in the stream (pass, row, byte
offset, line) and what the run was (learner, file, chunking, seed), written atomically;
``resume=True`` continues from it, to the same result as a run that was never interrupted.

``holdout=K`` learns nothing from rows K, 2K, ... of each pass and scores them with the
weights after their chunk (VW's ``--holdout_period``); the result keeps the progressive loss
and the held-out sums of each pass. The progress line is ``ocolearn.progress.Progress``.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import NamedTuple

import jax
import numpy as np

from ocolearn.checks import check_finite, check_rounds
from ocolearn.data import DataError
from ocolearn.data.stream import Position, Source, chunks, prefetched
from ocolearn.features import row
from ocolearn.io import atomic_write
from ocolearn.progress import Progress
from ocolearn.run import Summary, _zero_summary, held_out, run


class StreamResult(NamedTuple):
    state: object  # the learner's state after the last row
    summary: Summary  # sums over every round of every pass
    rounds: int  # rounds run, over all passes
    mistakes_per_pass: list[int]
    skipped: int  # malformed lines skipped in a pass (skip_bad)
    loss_per_pass: list = []  # the summed progressive loss of each pass
    holdout_per_pass: list = []  # [summed loss, mistakes, rows] of the held-out rows after each pass
    first_pass: dict = {}  # the first pass's sums: rows, squared_error, mistakes, log_loss (run.Summary's)


FIRST_PASS = ("squared_error", "mistakes", "log_loss")  # the sums StreamResult.first_pass keeps


def _fingerprint(learner, source: Source, chunk_rows, passes, seed, holdout=0) -> str:
    return json.dumps(
        {
            "learner": learner.to_config(),
            "source": [str(Path(source.path).resolve()), source.format, source.dim, list(source.labels)],
            "options": [source.zero_based, source.bits, source.skip_bad, chunk_rows, passes, seed, holdout]
            + ([list(source.interactions), source.constant] if source.format == "vw" else []),
            "file": file_identity(source.path),
        },
        sort_keys=True,
        default=str,
    )


IDENTITY_BLOCK = 1 << 16  # bytes hashed at each end of a data file


def file_identity(path) -> dict:
    """What says a data file is the one a checkpoint was made from: its size, its modification
    time and a SHA-256 of its first and last ``IDENTITY_BLOCK`` bytes (as stored: a compressed
    file's own bytes); for a folder of text, the same of each file in it, hashed together. A
    resumed run reads on from a byte offset: another file there would be read from the middle."""
    path = Path(path)
    if path.is_dir():
        digest = hashlib.sha256()
        files = sorted(f for f in path.rglob("*") if f.is_file())
        for f in files:
            digest.update(json.dumps([str(f.relative_to(path)), file_identity(f)], sort_keys=True).encode())
        return {"files": len(files), "contents": digest.hexdigest()}
    try:
        stat = path.stat()
        with path.open("rb") as f:
            digest = hashlib.sha256(f.read(IDENTITY_BLOCK))
            f.seek(max(stat.st_size - IDENTITY_BLOCK, 0))
            digest.update(f.read(IDENTITY_BLOCK))
    except OSError:
        return {}
    return {"size": stat.st_size, "modified": stat.st_mtime_ns, "contents": digest.hexdigest()}


def _what_differs(path, ours: str, theirs: str) -> str:
    """The error for a checkpoint of another run, naming what differs from this one."""
    try:
        ours, theirs = json.loads(ours), json.loads(theirs)
    except ValueError:
        return f"{path}: not a checkpoint of this run"
    now, then = ours.get("file", {}), theirs.get("file", {})
    same_run = all(ours[k] == theirs.get(k) for k in ("learner", "source", "options"))
    if same_run and now != then:
        if then.get("size") != now.get("size"):
            change = f"{then.get('size')} bytes then, {now.get('size')} now"
        elif then.get("files") != now.get("files"):
            change = f"{then.get('files')} files then, {now.get('files')} now"
        else:
            change = "its contents" if then.get("contents") != now.get("contents") else "its modification time"
        return (
            f"{path}: the data {ours['source'][0]} changed since this checkpoint was written ({change}); "
            "start again without --resume"
        )
    shown = lambda value: "none" if value is None else value  # noqa: E731 (no --seed: none)
    differ = [f"{o} {shown(then)} then, {shown(now)} now" for o, now, then in _options(ours, theirs) if now != then]
    if ours.get("learner") != theirs.get("learner"):
        differ.insert(0, "another learner (--learner, --set)")
    if ours.get("source") != theirs.get("source"):
        differ.insert(0, "other data (file, --format, --dim or --labels)")
    return f"{path}: a checkpoint of another run: {'; '.join(differ) or 'other data'}; start again without --resume"


OPTIONS = ("--zero-based", "--bits", "--skip-bad", "--chunk-rows", "--passes", "--seed", "--holdout")  # _fingerprint's


def _options(ours: dict, theirs: dict):
    """``(option, this run's value, the checkpoint's)`` of each option a fingerprint holds."""
    now, then = ours.get("options") or [], theirs.get("options") or []
    return [(o, a, b) for o, a, b in zip(OPTIONS, now, then, strict=False)]


def save_checkpoint(path, fingerprint, state, summary, where: dict):
    """Everything a run needs to go on, atomically (``.npz``): the state's leaves, the sums,
    and ``where`` (pass, position, rounds, mistakes per pass, skipped lines)."""
    leaves = {f"state_{i}": np.asarray(leaf) for i, leaf in enumerate(jax.tree.leaves(state))}
    sums = {f"sum_{k}": np.asarray(v) for k, v in summary._asdict().items()}
    buffer = io.BytesIO()
    np.savez(buffer, fingerprint=fingerprint, where=json.dumps(where), **leaves, **sums)
    atomic_write(path, buffer.getvalue())


def load_checkpoint(path, fingerprint, template):
    """``(state, summary, where)`` from a checkpoint of this very run (else an error)."""
    try:
        with np.load(path) as f:
            if str(f["fingerprint"]) != fingerprint:
                raise DataError(_what_differs(path, fingerprint, str(f["fingerprint"])))
            leaves = [f[f"state_{i}"] for i in range(len(jax.tree.leaves(template)))]
            if [a.shape for a in leaves] != [np.shape(a) for a in jax.tree.leaves(template)]:
                what = "a checkpoint of another version of this learner's state; start without --resume"
                raise DataError(f"{path}: {what}")
            summary = Summary(*(jax.numpy.asarray(f[f"sum_{k}"]) for k in Summary._fields))
            where = json.loads(str(f["where"]))
    except DataError:
        raise
    except (OSError, KeyError, ValueError, EOFError, RecursionError, zipfile.BadZipFile):  # (NumPy's words: pickles)
        raise DataError(f"{path}: not an ocolearn checkpoint (unreadable, cut short, or another file)") from None
    state = jax.tree.unflatten(jax.tree.structure(template), [jax.numpy.asarray(a) for a in leaves])
    return state, summary, where


COUNTS = ("pass", "offset", "line", "row", "rounds", "skipped")  # a checkpoint's progress record: whole numbers


def check_progress(path, where, passes: int, data) -> None:
    """A checkpoint's progress record (``where``) as ``run_stream`` writes it, else a ``DataError``
    naming the checkpoint and the entry: a table whose counts are whole numbers >= 0, a pass
    before ``passes``, one entry per pass so far in ``mistakes`` (whole numbers), ``losses``
    (numbers) and ``holdout`` (``[loss, mistakes, rows]``), the first pass's sums (``first_pass``,
    once that pass is over: a table of numbers), and a byte offset within the data
    file ``data`` (a compressed file's offset counts its decompressed bytes: not checked)."""
    from ocolearn.data import OPENERS

    def bad(why):
        return DataError(f"{path}: not a checkpoint ocolearn can resume from: {why}; start again without --resume")

    def whole(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if not isinstance(where, dict):
        raise bad(f"its progress record is a {type(where).__name__}, not a table")
    for key in (*COUNTS, "mistakes", "losses", "holdout"):
        if key not in where:
            raise bad(f"its progress record has no {key!r}")
    for key in COUNTS:
        if not whole(where[key]):
            raise bad(f"its progress record's {key!r} is {where[key]!r}, not a whole number >= 0")
    if where["pass"] >= passes:
        raise bad(f"its progress record's pass {where['pass'] + 1} is past --passes {passes}")
    lists = {"mistakes": whole, "losses": lambda v: isinstance(v, int | float) and not isinstance(v, bool)}
    lists["holdout"] = lambda v: (
        isinstance(v, list) and len(v) == 3 and lists["losses"](v[0]) and all(map(whole, v[1:]))
    )
    for key, ok in lists.items():
        value = where[key]
        if not (isinstance(value, list) and len(value) == where["pass"] + 1 and all(map(ok, value))):
            raise bad(f"its progress record's {key!r} is {str(value)[:80]}, not one entry per pass so far")
    first = where.get("first_pass", {})
    if not (isinstance(first, dict) and all(isinstance(first.get(k, 0), int | float) for k in ("rows", *FIRST_PASS))):
        raise bad(f"its progress record's 'first_pass' is {str(first)[:80]}, not the first pass's sums")
    path_ = Path(data)
    if path_.is_file() and path_.suffix not in OPENERS and where["offset"] > path_.stat().st_size:
        raise bad(f"its byte offset {where['offset']} is past the end of {data} ({path_.stat().st_size} bytes)")


def _shuffled(X, y, weights, seed, pass_, index):
    order = np.random.default_rng([seed, pass_, index]).permutation(len(y))
    return row(X, order), y[order], None if weights is None else weights[order]


def _split(X, y, weights, first_row, holdout):
    """``((X, y, weights) to learn from, (X, y) held out)``: with ``holdout`` K, rows K, 2K, 3K,
    ... of the file (counted from 1, the same rows in every pass) are held out."""
    held = (np.arange(first_row, first_row + len(y)) + 1) % holdout == 0 if holdout else np.zeros(len(y), bool)
    if not held.any():
        return (X, y, weights), None
    keep, out = np.flatnonzero(~held), np.flatnonzero(held)
    return (row(X, keep), y[keep], None if weights is None else weights[keep]), (row(X, out), y[out])


def _takes_weights(learner, state, X, y, where: str) -> None:
    """Refuse rows with importance weights (a VW file's) for a learner that takes no weight
    (``Learner.weighted_update``), naming ``where`` they begin, before the run traces it."""
    try:
        x = jax.tree.map(jax.numpy.asarray, row(X, 0))
        jax.eval_shape(lambda s: learner.weighted_update(s, (x, y[0]), np.float32(1)), state)
    except ValueError as e:
        raise DataError(f"{where}: importance weights other than 1 (VW's), but {e}") from None


def run_stream(
    learner,
    source: Source,
    *,
    targets=lambda y: y,
    passes=1,
    chunk_rows=65536,
    seed=None,
    checkpoint=None,
    checkpoint_every=0,
    resume=False,
    stop_early=False,
    progress: Progress | None = None,
    holdout=0,
) -> StreamResult:
    """Run ``learner`` over the file of ``source`` for ``passes`` passes, chunk by chunk (see
    the module docstring); ``stop_early`` stops after a pass without mistakes. ``targets``
    maps class indices to the learner's targets (+-1 for a binary learner). ``holdout`` K > 1
    learns nothing from rows K, 2K, ... and scores each chunk's held-out rows with the weights
    after that chunk (``ocolearn.run.held_out``), summed per pass."""
    progress = progress or Progress(quiet=True)
    # (what a checkpoint is checked against: the data's identity hashes its files, so only with one)
    fingerprint = None if checkpoint is None else _fingerprint(learner, source, chunk_rows, passes, seed, holdout)
    state, summary = learner.init(source.dim), _zero_summary()
    where = {"pass": 0, "offset": 0, "line": 1, "row": 0, "rounds": 0, "mistakes": [], "skipped": 0}
    where |= {"losses": [], "holdout": []}
    if resume:
        if checkpoint is None or not Path(checkpoint).exists():
            raise DataError(f"{checkpoint}: no checkpoint to resume from")
        state, summary, where = load_checkpoint(checkpoint, fingerprint, state)
        check_progress(checkpoint, where, passes, source.path)
    mistakes, rounds, skipped, since = where["mistakes"], where["rounds"], where["skipped"], 0
    losses, held = where["losses"], where["holdout"]
    p = where["pass"]
    first = where.get("first_pass", {})
    progress.begin(rounds, float(summary.loss))
    for p in range(where["pass"], passes):
        start = Position(where["offset"], where["line"], where["row"]) if p == where["pass"] else Position()
        if len(mistakes) <= p:
            mistakes.append(0)
            losses.append(0.0)
            held.append([0.0, 0, 0])
        base, base_loss = int(summary.mistakes) - mistakes[p], float(summary.loss) - losses[p]
        index, position = start.row // chunk_rows, start
        last_held = held[p - 1][0] / max(held[p - 1][2], 1) if holdout and p else None
        for chunk in prefetched(chunks(source, start, chunk_rows)):
            skipped += chunk.skipped if p == 0 else 0  # the same lines again in later passes
            (X, y, weights), out = _split(chunk.X, chunk.y, chunk.weights, position.row, holdout)
            if len(y):
                X, y, weights = (X, y, weights) if seed is None else _shuffled(X, y, weights, seed, p, index)
                if weights is not None:
                    _takes_weights(
                        learner, state, X, targets(y), f"{source.path}, the rows from line {chunk.first_line}"
                    )
                result = run(learner, X, targets(y), state=state, trace=False, summary=summary, weights=weights)
                state, summary = result.state, result.trace
                check_finite(result, f"{source.path}, lines {chunk.first_line}-{chunk.end.line - 1} (pass {p + 1})")
                rounds += len(y)
            if out is not None:
                sums = held_out(learner, state, out[0], targets(out[1]))
                held[p] = [held[p][0] + float(sums.loss), held[p][1] + int(sums.mistakes), held[p][2] + len(out[1])]
            since += len(chunk.y)
            index, position = index + 1, chunk.end
            mistakes[p], losses[p] = int(summary.mistakes) - base, float(summary.loss) - base_loss
            if checkpoint is not None and since >= max(checkpoint_every, 1):  # (0: every chunk)
                at = {"pass": p, **position._asdict(), "rounds": rounds, "mistakes": mistakes, "skipped": skipped}
                at |= {"first_pass": first} if first else {}
                save_checkpoint(checkpoint, fingerprint, state, summary, {**at, "losses": losses, "holdout": held})
                since = 0
            progress.show(rounds, float(summary.loss), f"pass {p + 1}/{passes}", holdout=last_held)
        if position.row == 0:
            raise DataError(f"{source.path}: no examples (every line is blank, a comment or skipped)")
        if p == 0:  # (the sums so far are the first pass's)
            first = {"rows": rounds, **{k: float(getattr(summary, k)) for k in FIRST_PASS}}
        if holdout and not held[p][2]:  # (its loss and error rate would read 0 over no rows)
            raise DataError(
                f"--holdout {holdout}: {source.path} has {position.row} rows, so none is held out; "
                f"give K <= {position.row}"
            )
        # The whole run's rounds, once a pass has counted the file's rows (each pass runs the same):
        check_rounds(learner, None, rounds // (p + 1), passes)  # else it ran for days before a chunk's check
        if stop_early and mistakes[p] == 0:
            break
    last_held = held[p][0] / max(held[p][2], 1) if holdout else None
    progress.show(rounds, float(summary.loss), f"pass {min(p + 1, passes)}/{passes}", final=True, holdout=last_held)
    return StreamResult(state, summary, rounds, mistakes, skipped, losses, held if holdout else [], first)
