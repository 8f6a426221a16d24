"""Feedback as Vowpal Wabbit gives it: the progress line (redrawn and cleared on a terminal,
plain lines elsewhere), ``--holdout K`` against a NumPy transcription of its definition, and
the closing report of ``ocolearn train``."""

import io
import itertools

import numpy as np
import pytest
from test_streaming import svmlight_text, whole, write

from ocolearn import PassiveAggressive, run
from ocolearn.cli import main
from ocolearn.data.stream import Source
from ocolearn.features import row
from ocolearn.modelfile import load
from ocolearn.pipeline import target_map
from ocolearn.progress import CLEAR, Progress
from ocolearn.streaming import run_stream


def screen(text):
    """The lines a terminal shows for ``text``: ``\\r`` goes back to the line's start, ``ESC [K``
    erases to its end, other characters overwrite what is under the cursor."""
    lines, line, col, i = [], [], 0, 0
    while i < len(text):
        if text.startswith("\x1b[K", i):
            del line[col:]
            i += 3
            continue
        c = text[i]
        if c == "\r":
            col = 0
        elif c == "\n":
            lines.append("".join(line))
            line, col = [], 0
        else:
            line[col : col + 1] = [c]
            col += 1
        i += 1
    return [*lines, "".join(line)]


class Terminal(io.StringIO):
    def isatty(self):
        return True


def clock(*times):
    return iter(times).__next__


def redraw(out):
    progress = Progress(out=out, clock=clock(0.0, 1.0, 2.0, 2.1, 3.0))
    progress.show(1000, 407.696, "pass 1/1")  # progressive loss 0.407696
    progress.show(2000, 815.38, "pass 1/1")  # 0.40769: one character shorter
    progress.show(2500, 1000.0, "pass 1/1")  # 0.1 s later: not redrawn
    return progress


def test_a_terminal_line_is_redrawn_in_place_and_cleared():
    out = Terminal()
    redraw(out)
    last = "pass 1/1  rows 2,000  1,000 rows/s  loss since last 0.407684  progressive learner loss 0.40769"
    assert out.getvalue().count("\r") == 2 and out.getvalue().endswith(last + CLEAR)
    assert screen(out.getvalue()) == [last]


def test_a_line_wider_than_the_terminal_is_cut_so_that_it_never_wraps():
    out = Terminal()
    progress = Progress(out=out, clock=clock(0.0, 1.0))
    progress.columns = 40
    progress.show(1000, 407.696, "pass 1/1")
    assert out.getvalue() == "\rpass 1/1  rows 1,000  1,000 rows/s  los" + CLEAR  # 39 characters


def test_without_the_clear_a_shorter_redraw_would_leave_stale_digits(monkeypatch):
    monkeypatch.setattr("ocolearn.progress.CLEAR", "")  # the line as it was drawn before
    out = Terminal()
    redraw(out)
    assert screen(out.getvalue())[-1].endswith("progressive learner loss 0.407696")  # "0.40769" + a stale "6"


def test_plain_lines_every_few_seconds_with_the_loss_since_the_last_line():
    out = io.StringIO()
    progress = Progress(out=out, every=5.0, clock=clock(0.0, 1.0, 5.0, 7.0, 10.0, 10.5))
    for rows, loss in [(100, 50.0), (500, 150.0), (700, 170.0), (1000, 200.0)]:
        progress.show(rows, loss, "pass 1/2", holdout=0.25)
    progress.show(1000, 200.0, "pass 2/2", final=True)
    assert out.getvalue().splitlines() == [
        "pass 1/2  rows 500  100 rows/s  loss since last 0.3  progressive learner loss 0.3  held-out 0.25",
        "pass 1/2  rows 1,000  100 rows/s  loss since last 0.1  progressive learner loss 0.2  held-out 0.25",
        "pass 2/2  rows 1,000  95 rows/s  loss since last -  progressive learner loss 0.2",
    ]
    assert progress.seconds == 10.5
    quiet = io.StringIO()
    Progress(quiet=True, out=quiet).show(5, 1.0, "pass 1/1", final=True)
    assert quiet.getvalue() == ""


def holdout_reference(path, learner, holdout, passes, chunk_rows):
    """``--holdout`` as defined, in NumPy (float64 scoring): rows K, 2K, ... are never learned;
    after each chunk of ``chunk_rows`` rows is learned, its held-out rows are scored by the
    hinge loss and the sign of ``w . x``. Returns the state and ``[loss, mistakes, rows]`` a pass."""
    X, y, labels = whole(path, 16)
    n, t = len(y), target_map(learner, labels)(y)
    dense = np.zeros((n, 40))
    np.add.at(dense, (np.arange(n)[:, None], X.idx), X.val)
    held = (np.arange(n) + 1) % holdout == 0
    state, per_pass = learner.init(40), []
    for _ in range(passes):
        sums = [0.0, 0, 0]
        for a in range(0, n, chunk_rows):
            rows = np.arange(a, min(a + chunk_rows, n))
            keep, out = rows[~held[rows]], rows[held[rows]]
            state = run(learner, row(X, keep), t[keep], state=state, trace=False).state
            margin = t[out] * (dense[out] @ np.asarray(learner.weights(state), np.float64))
            sums = [sums[0] + np.maximum(0, 1 - margin).sum(), sums[1] + int((margin <= 0).sum()), sums[2] + len(out)]
        per_pass.append(sums)
    return state, per_pass


@pytest.mark.parametrize("chunk_rows", [64, 1000])
def test_holdout_learns_nothing_from_every_kth_row_and_scores_it_each_pass(tmp_path, chunk_rows):
    path = write(tmp_path, svmlight_text(n=300))
    learner = PassiveAggressive(0.5)
    source = Source(str(path), dim=40, labels=("-1", "1"), width=16)
    options = dict(targets=target_map(learner, source.labels), passes=3, chunk_rows=chunk_rows)
    got = run_stream(learner, source, holdout=7, **options)
    state, per_pass = holdout_reference(path, learner, 7, 3, chunk_rows)
    np.testing.assert_array_equal(learner.weights(got.state), learner.weights(state))
    assert got.rounds == 3 * (300 - 42) and [rows for *_, rows in got.holdout_per_pass] == [42] * 3
    for (loss, wrong, _), (want_loss, want_wrong, _) in zip(got.holdout_per_pass, per_pass, strict=True):
        assert loss == pytest.approx(want_loss, rel=1e-5) and wrong == want_wrong
    assert sum(got.loss_per_pass) == pytest.approx(float(got.summary.loss), rel=1e-5)
    assert got.loss_per_pass[-1] / 258 < got.loss_per_pass[0] / 258  # it learns
    learned_all = run_stream(learner, source, **options)  # the broken holdout: every row learned
    assert not np.array_equal(learner.weights(learned_all.state), learner.weights(got.state))


def test_a_resumed_run_keeps_the_per_pass_and_held_out_sums(tmp_path):
    path = write(tmp_path, svmlight_text(n=300))
    learner = PassiveAggressive(0.5)
    source = Source(str(path), dim=40, labels=("-1", "1"))
    options = dict(targets=target_map(learner, source.labels), passes=2, chunk_rows=50, holdout=4)
    full = run_stream(learner, source, **options)

    class Stop(Exception):
        pass

    class StopAfter(Progress):
        def show(self, rows, *args, **kw):
            if rows > 300:  # in the second pass
                raise Stop

    ckpt = tmp_path / "run.ckpt.npz"
    with pytest.raises(Stop):
        run_stream(learner, source, checkpoint=ckpt, checkpoint_every=100, progress=StopAfter(), **options)
    progress = Progress(out=io.StringIO())
    options |= dict(checkpoint=ckpt, checkpoint_every=100, resume=True, progress=progress)
    resumed = run_stream(learner, source, **options)
    assert resumed.holdout_per_pass == full.holdout_per_pass and resumed.loss_per_pass == full.loss_per_pass
    # the first pass's sums (train's progressive figures), carried by the checkpoint into the second pass
    assert resumed.first_pass == full.first_pass and full.first_pass["rows"] == 225
    assert full.first_pass["mistakes"] == full.mistakes_per_pass[0]
    assert 0 < progress.learned < resumed.rounds == full.rounds  # the speed is of the rows this run learned


def test_train_reports_passes_speed_and_held_out_loss(tmp_path, capsys):
    path = write(tmp_path, svmlight_text(n=300))
    model = tmp_path / "m.npz"
    args = ["train", "--learner", "passive_aggressive", path, "--model", model, "--labels=-1,1", "--dim", "40"]
    status = main([str(a) for a in [*args, "--passes", "2", "--holdout", "5", "--chunk-rows", "64"]])
    err = capsys.readouterr().err.splitlines()
    # From the last progress line on: a pass that takes over 5 s (compiling, on a loaded machine
    # with a cold compilation cache) shows a line before it.
    err = err[max(i for i, line in enumerate(err) if line.startswith("pass ")) :]
    s = load(model).settings
    assert status == 0 and s["holdout"] == 5 and s["holdout_rows"] == 60 and len(s["holdout_loss_per_pass"]) == 2
    assert err[0].startswith("pass 2/2  rows 480  ")  # the last progress line
    assert err[1].startswith("trained passive_aggressive (binary): 2 passes over 240 rows (60 more held out), ")
    assert err[1].split(", ")[-1].endswith(" rows/s")
    losses = f"{s['loss_per_pass'][0]:.6g} {s['loss_per_pass'][1]:.6g};"
    assert err[2].startswith(f"progressive learner loss (hinge) per pass: {losses}")
    # the first pass's figures under test's names: each row predicted before it was learned
    assert s["progressive"] == {
        "accuracy": 1 - s["mistakes_per_pass"][0] / 240,
        "error_rate": s["mistakes_per_pass"][0] / 240,
    }
    assert err[3:5] == [f"progressive {k} {v:.6f}" for k, v in s["progressive"].items()]
    held = " ".join(f"{v:.6g}" for v in s["holdout_loss_per_pass"])
    assert err[5] == f"held-out learner loss per pass (rows 5, 10, ...): {held}"
    assert err[6].startswith("held-out error rate per pass: ") and err[7].startswith("mistakes per pass: ")
    assert err[8] == f"wrote {model}"


def test_a_run_redraws_one_terminal_line_per_chunk_and_ends_it(tmp_path):
    path = write(tmp_path, svmlight_text(n=300))
    learner, term = PassiveAggressive(0.5), Terminal()
    source = Source(str(path), dim=40, labels=("-1", "1"))
    progress = Progress(out=term, clock=itertools.count().__next__)  # a second between calls: every chunk drawn
    got = run_stream(
        learner,
        source,
        targets=target_map(learner, source.labels),
        passes=2,
        chunk_rows=100,
        holdout=3,
        progress=progress,
    )
    draws = term.getvalue().split("\r")[1:]
    assert len(draws) == 7 and all(d.endswith(CLEAR) for d in draws[:-1]) and draws[-1].endswith(CLEAR + "\n")
    loss, _, rows = got.holdout_per_pass[-1]
    last = "pass 2/2  rows 400  "
    assert screen(term.getvalue()) == [screen(draws[-1])[0], ""] and draws[-1].startswith(last)
    assert draws[-1].endswith(
        f"progressive learner loss {float(got.summary.loss) / 400:.6g}  held-out {loss / rows:.6g}{CLEAR}\n"
    )
    assert "held-out" not in draws[0] and f"held-out {got.holdout_per_pass[0][0] / 100:.6g}" in draws[3]


def test_a_holdout_period_longer_than_the_file_is_refused(tmp_path, capsys):
    # Before: --holdout 301 over 300 rows held out none and reported a held-out loss of 0 and an
    # error rate of 0.0000 (of no rows), status 0.
    path = write(tmp_path, svmlight_text(n=300))
    model = tmp_path / "m.npz"
    args = ["train", "--learner", "passive_aggressive", path, "--model", model, "--labels=-1,1", "--quiet"]
    assert main([str(a) for a in [*args, "--holdout", "301", "--chunk-rows", "64"]]) == 2
    error = f"ocolearn: error: --holdout 301: {path} has 300 rows, so none is held out; give K <= 300"
    assert capsys.readouterr().err.splitlines() == [error] and not model.exists()
    assert main([str(a) for a in [*args, "--holdout", "300"]]) == 0 and load(model).settings["holdout_rows"] == 1
