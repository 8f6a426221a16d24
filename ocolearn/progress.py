"""What a training run over a file shows while it goes and when it ends, as Vowpal Wabbit does.

While it runs, one line: the pass, the rows learned so far, rows per second, the mean loss
since the last line and the cumulative progressive loss, both the learner's own loss (each
row's loss is charged before the row is learned, so it estimates the loss on unseen rows:
Blum, Kalai & Langford, COLT 1999),
and, once a pass has ended, the loss on the held-out rows (``--holdout K``, VW's
``--holdout_period``). On a terminal the line is redrawn in place every 0.2 s: a carriage
return, the text, then "erase to the end of the line" (``ESC [K``), so a shorter line leaves
no stale characters of a longer one; it is cut to the terminal's width, since a line that
wrapped could not be redrawn. Elsewhere (a log file, a pipe) a plain line is written
every ``every`` seconds. ``report`` turns a trained model's settings into the closing lines.
"""

from __future__ import annotations

import os
import sys
import time

from ocolearn.metrics import formatted

CLEAR = "\x1b[K"  # ANSI: erase from the cursor to the end of the line


class Progress:
    """The progress line of a run (see the module docstring); nothing when ``quiet``."""

    def __init__(self, quiet=False, out=None, every=5.0, clock=time.perf_counter):
        self.out = out or sys.stderr
        self.quiet, self.every, self.clock = quiet, every, clock
        self.tty = getattr(self.out, "isatty", lambda: False)()
        self.columns = _columns(self.out) if self.tty else 0  # 0: unknown, nothing cut
        self.begin()

    def begin(self, rows=0, loss=0.0):
        """Start the clock as the first pass starts (or a resumed run, ``rows`` learned before
        with summed loss ``loss``, goes on)."""
        self.start = self.last = self.end = self.clock()
        self.rows, self.loss = rows, loss  # at the last line shown
        self.first = self.latest = rows

    @property
    def seconds(self) -> float:
        """From ``begin`` to the last call of ``show``."""
        return self.end - self.start

    @property
    def learned(self) -> int:
        """Rows learned from ``begin`` to the last call of ``show``."""
        return self.latest - self.first

    def show(self, rows, loss, where, final=False, holdout=None):
        """``rows`` learned so far with ``loss`` their summed progressive loss, ``where`` the
        pass (``"pass 2/3"``), ``holdout`` the mean held-out loss of the last finished pass."""
        now = self.end = self.clock()
        self.latest = rows
        if self.quiet or (not final and now - self.last < (0.2 if self.tty else self.every)):
            return
        new = rows - self.rows
        since = f"{(loss - self.loss) / new:.6g}" if new else "-"
        text = (
            f"{where}  rows {rows:,}  {self.learned / max(now - self.start, 1e-9):,.0f} rows/s  "
            f"loss since last {since}  progressive learner loss {loss / max(rows, 1):.6g}"
        )
        if holdout is not None:
            text += f"  held-out {holdout:.6g}"
        self.last, self.rows, self.loss = now, rows, loss
        if self.tty:
            text = text[: self.columns - 1] if self.columns else text
            print("\r" + text + CLEAR, end="\n" if final else "", file=self.out, flush=True)
        else:
            print(text, file=self.out, flush=True)


def _columns(out) -> int:
    try:
        return os.get_terminal_size(out.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 0


SHOWN_PASSES = 5  # a per-pass list longer than twice this shows its first and last passes


def _numbers(values, form=".6g") -> str:
    """The values, a line's worth: the first and last ``SHOWN_PASSES`` around ``...`` (with the
    number of passes left out) when there are more than twice that (``--passes 200``)."""
    texts = [f"{v:{form}}" for v in values]
    if len(texts) > 2 * SHOWN_PASSES:
        left = len(texts) - 2 * SHOWN_PASSES
        texts = [*texts[:SHOWN_PASSES], f"... ({left} more) ...", *texts[-SHOWN_PASSES:]]
    return " ".join(texts)


LOSSES = {"squared": "squared/2, (p - y)^2 / 2"}  # a learner's loss where its name does not say its formula


def learner_loss(settings: dict) -> str:
    """The learner's own loss, named as ``report`` prints it."""
    name = settings.get("learner_loss") or "of the learner"
    return LOSSES.get(name, name)


def report(name: str, settings: dict, progress: Progress) -> list[str]:
    """The closing lines of a training run, from the model's ``settings`` (see
    ``ocolearn.pipeline.train_file``): passes, rows, time and speed, the learner's own
    progressive loss of each pass (what it minimizes, not comparable across learners), the
    default learner's settings where none was named, the first pass's progressive figures under
    the names ``test`` prints (``progressive mse``, ``progressive accuracy``, ``progressive
    log_loss``: each row predicted before it was learned), the held-out loss (and error rate) of
    each pass, mistakes, skipped lines. Time and
    speed are those of ``progress``: of this process, should the run have been resumed."""
    losses, rounds = settings["loss_per_pass"], settings["rounds"]
    passes = len(losses)
    rows = rounds // max(passes, 1)
    held = settings.get("holdout", 0)
    kept = f" ({settings['holdout_rows']:,} more held out)" if held else ""
    # (a resumed run: the progress line counts every row since the start, as the checkpoint does)
    resumed = f" after resuming at {progress.first:,} ({progress.latest:,} in all)" if progress.first else ""
    lines = [
        f"trained {name} ({settings['task']}): {passes} pass{'es' * (passes != 1)} over {rows:,} rows{kept}, "
        f"{progress.learned:,} rows learned{resumed} in {progress.seconds:.2f} s, "
        f"{progress.learned / max(progress.seconds, 1e-9):,.0f} rows/s",
        f"progressive learner loss ({learner_loss(settings)}) per pass: {_numbers(losses)}; "
        f"over the run {settings['average_loss']:.6g}",
    ]
    if settings.get("default_learner"):
        lines.insert(1, f"learner: {settings['default_learner']} (the default; docs/choosing-a-learner.md)")
    for key, value in settings.get("progressive", {}).items():  # (the first pass's, as test names them)
        lines.append(f"progressive {key} {formatted(value)}")
    if held:
        lines.append(
            f"held-out learner loss per pass (rows {held}, {2 * held}, ...): "
            f"{_numbers(settings['holdout_loss_per_pass'])}"
        )
    if settings["task"] != "regression":
        if held:
            lines.append(f"held-out error rate per pass: {_numbers(settings['holdout_error_per_pass'], '.4f')}")
        lines.append(f"mistakes per pass: {_numbers(settings['mistakes_per_pass'], 'd')}")
    if settings.get("skipped_lines"):
        skipped = settings["skipped_lines"]
        lines.append(f"skipped {skipped} malformed line{'s' * (skipped != 1)}")
    return lines
