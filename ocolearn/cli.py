"""The ``ocolearn`` command.

    ocolearn run CONFIG [--out DIR] [--set key=value ...]
    ocolearn sweep CONFIG [--out DIR] [--set key=value ...] [--chunk-size C]
    ocolearn study CONFIG [--out DIR] [--set key=value ...]

    ocolearn train [--learner NAME] [--set key=value ...] DATA --model MODEL [--format F] [--target COLUMN]
                   [--task T] [--passes N] [--stop-early] [--average] [--normalized] [--chunk-rows R]
                   [--checkpoint PATH [--checkpoint-every N]] [--resume] [--holdout K] [--quiet] [--skip-bad]
                   [--columns A,B] [--ignore A,B] [--categorical A,B] [--numeric A,B]   (csv's columns)
    ocolearn predict MODEL DATA... [--scores] [--out FILE] [--skip-bad]   (a label or value a line; text: NAME<TAB>...)
    ocolearn test MODEL DATA [--skip-bad]   (error rate, and confusion counts; or MSE and MAE)
    ocolearn export iris|wine --target COLUMN [--format csv|svmlight] --out FILE

Every command reads data through one path (``ocolearn.data.stream``): svmlight, MIRA format,
CSV, folders of text and Vowpal Wabbit's format (``-q``/``--interactions``: crossed namespaces,
CSV columns or svmlight indices), in chunks with constant memory. The task (regression, binary,
multiclass) is ``--task`` or inferred from the labels (``ocolearn.data.task``).

``run`` writes the run's metrics, trace, resolved config and figures into DIR (default
``runs/NAME``) and prints the metrics; ``sweep`` runs the config's ``[sweep]`` as one compiled
program and writes its table, best configuration and figures; ``study`` runs many learners on
many data sets over many orders, each tuned on rows it is not scored on, and writes a
leaderboard, figures, regret and a significance test (``ocolearn.study``). Every error a user can cause is
one line ``ocolearn: error: ...`` naming the file, line, key or option, with exit status 2;
Ctrl-C prints one line (with the last checkpoint) and exits with status 130, SIGTERM the same
with 143; outputs are written atomically and checked writable before the work
(``ocolearn.io``). ``train`` shows
a progress line and closes with a short report (``ocolearn.progress``). ``--help``,
``--version`` and usage errors answer before NumPy or JAX is imported.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import gc
import os
import signal
import sys
import warnings
from pathlib import Path

import ocolearn  # first: sets XLA's CPU flags before JAX starts (and imports no JAX itself)
from ocolearn import interrupts
from ocolearn.names import (
    FORMATS,
    MAX_SEED,
    SCALES,
    TASKS,
    format_of,
    formats_reading,
    label_list_problem,
    unread_setting,
)

# Nothing here imports NumPy or JAX before the arguments are parsed: ``--help``, ``--version``
# and usage errors answer at once; each command imports what it needs.

TRACKED_CURVES = ("loss", "squared_error", "cumulative_average_loss", "regret", "regret_bound")  # --track
CONFIG_OPTIONS = {"--seed": "run.shuffle_seed", "--passes": "run.passes", "--seeds": "sweep.seeds"}  # as run's keys
STUDY_OPTIONS = {  # as a study's keys (its orders are shuffles by seeds 0, 1, ...: no one seed to set)
    "--seed": "a study's keys; --set evaluate.tune_seed=N or evaluate.test_seed=N, the seeds choosing the tuning "
    "and test rows, or datasets[I].seed=N, a synthetic data set's; its orders are shuffled by seeds 0, 1, ...",
    "--seeds": "a study's key; --set evaluate.orders=N, the number of orders (shuffles by seeds 0, 1, ...)",
}
TRACKED_TRAINING = ("mistakes_per_pass", "average_loss", "rounds", "skipped_lines")  # --track


@contextlib.contextmanager
def _in_file(source: str):
    """A config's run: an error of the runner's round checks (``checks.check_rounds``) names the
    setting (``passes``, a part's ``learner.levels``) but not the file; it names both, and
    ``passes`` and a sweep's ``seeds`` as the config's keys, ``run.passes`` and ``sweep.seeds``."""
    from ocolearn.config import ConfigError

    try:
        yield
    except ConfigError as e:
        if not e.key or str(e).startswith(source):
            raise
        e = e.at({"passes": "run", "seeds": "sweep"}[e.key]) if e.key in ("passes", "seeds") else e
        raise ConfigError(f"{source}: {e}", e.key) from None


def _run(args) -> int:
    from ocolearn import tracking
    from ocolearn.config import check_data_path, load
    from ocolearn.io import json_text

    experiment = load(args.config, args.set)
    check_data_path(experiment)
    out = _output_folder(args, f"runs/{experiment.name}", _inputs(args, experiment))
    from ocolearn.experiment import run_experiment

    tracker = tracking.start(args.track, experiment.name, "run")
    with _in_file(experiment.source):
        metrics, curves = run_experiment(experiment, out)
    series = {k: v for k, v in curves.items() if k in TRACKED_CURVES}
    tracker.log(params=experiment.to_config(), metrics=metrics, series=series, folder=out)
    shown = {k: v for k, v in metrics.items() if k != "definitions" and not k.endswith("_w")}
    print(json_text(shown))
    print(f"wrote {out}/", file=sys.stderr)
    return 0


def _sweep(args) -> int:
    from ocolearn import tracking
    from ocolearn.config import ConfigError, check_data_path, load
    from ocolearn.io import json_text

    experiment = load(args.config, args.set)
    check_data_path(experiment)
    if experiment.sweep is None:
        raise ConfigError(f"{experiment.source}: no [sweep] table to sweep")
    out = _output_folder(args, f"runs/{experiment.name}_sweep", _inputs(args, experiment))
    from ocolearn.experiment import run_sweep

    tracker = tracking.start(args.track, experiment.name, "sweep")
    with _in_file(experiment.source):
        table, best = run_sweep(experiment, out, chunk_size=args.chunk_size)
    per_seed = {k: v for k, v in table.items() if k != "seed"}
    tracker.log(
        params=experiment.to_config(), metrics=best, table=per_seed, table_params=list(best["values"]), folder=out
    )
    print(json_text(best))
    if "diverged" in best:
        print(f"ocolearn: warning: {best['diverged']}", file=sys.stderr)
    print(f"wrote {out}/", file=sys.stderr)
    return 0


def _study(args) -> int:
    from ocolearn import tracking
    from ocolearn.study import load, run_study, tracked_metrics

    study = load(args.config, args.set)
    files = [spec.source for spec in study.datasets if spec.kind == "file"]
    out = _output_folder(args, f"runs/{study.name}", [args.config, *files])
    tracker = tracking.start(args.track, study.name, "study")
    results = run_study(study, out, progress=None if args.quiet else lambda text: print(text, file=sys.stderr))
    tracker.log(params=study.to_config(), metrics=tracked_metrics(results), folder=out)
    print((Path(out) / "leaderboard.md").read_text())
    print(f"wrote {out}/", file=sys.stderr)
    return 0


def _inputs(args, experiment) -> list:
    """The files a config's run or sweep reads: the config, and its data unless a bundled table."""
    from ocolearn.data import BUNDLED

    spec = experiment.data
    return [args.config] + ([] if spec.format == "table" and spec.source in BUNDLED else [spec.source])


def _output_folder(args, default: str, inputs) -> str:
    """The output folder of ``run``, ``sweep`` or ``study`` (``--out``, else ``default``): no
    input may be it, hold it, or lie in it (``_not_an_input``). What may already stand there is
    ``ocolearn.io.atomic_folder``'s rule."""
    out = args.out or default
    _not_an_input("--out" if args.out else "the output folder", out, inputs, folder=True)
    return out


def _train(args) -> int:
    from ocolearn import modelfile, provenance, tracking
    from ocolearn import pipeline as models
    from ocolearn.data import DataError
    from ocolearn.io import writable
    from ocolearn.progress import Progress, report

    tracker = tracking.start(args.track, "train", args.learner or "default")
    args.format = args.format or format_of(args.data)
    progress = Progress(quiet=args.quiet)
    if args.checkpoint_every and not args.checkpoint:
        raise DataError("--checkpoint-every needs --checkpoint PATH")
    if args.resume and not args.checkpoint:
        raise DataError("--resume needs --checkpoint PATH, the checkpoint to continue from")
    # (an option the format does not read would do nothing)
    reading = ("target", "bits", "dim", "zero_based", "order_seed", "columns", "ignore", "categorical", "numeric")
    reading += ("interactions",)
    key = unread_setting(args.format, {key: getattr(args, key) for key in reading})
    if key:
        raise DataError(f"--{key.replace('_', '-')} applies to --format {formats_reading(key)}, not to {args.format}")
    documents = args.format == "text"  # (a folder given as another format's data is an error of its own)
    _not_an_input("--model", args.model, [args.data], documents)
    if args.checkpoint:
        _not_an_input("--checkpoint", args.checkpoint, [args.data], documents)
        if _same_file(args.checkpoint, args.model):  # (a checkpoint written there replaces the last model)
            raise DataError(
                f"--checkpoint {args.checkpoint}: is the --model file; give the checkpoint a file of its own"
            )
    writable(args.model)  # (before training: not a folder, room in a writable folder)
    if args.checkpoint:
        writable(args.checkpoint)
    trained = models.train_file(
        args.learner,
        args.set,
        args.data,
        models.TrainOptions.of_args(args),
        progress=progress,
        warn=lambda text: warnings.warn(text, Notice, stacklevel=2),  # (shown after the result, see _main)
    )
    trained = trained._replace(settings={**trained.settings, "provenance": provenance.record()})
    modelfile.save(trained, args.model)
    options = {k: v for k, v in vars(args).items() if k != "func"}
    metrics = {k: v for k, v in trained.settings.items() if k in TRACKED_TRAINING}
    tracker.log(params={**options, "learner": trained.settings["learner"]}, metrics=metrics, files=[args.model])
    name = args.learner or trained.settings["learner"]["kind"]
    print(*report(name, trained.settings, progress), f"wrote {args.model}", sep="\n", file=sys.stderr)
    return 0


def _predict(args) -> int:
    from ocolearn import pipeline as models
    from ocolearn.data import DataError
    from ocolearn.io import atomic_lines, writable

    if args.out:
        _not_an_input("--out", args.out, [args.model, *args.data])
        writable(args.out)
    trained = _model(args)
    data = args.data[0] if len(args.data) == 1 else tuple(args.data)
    if isinstance(data, tuple) and trained.settings.get("format") != "text":
        raise DataError(f"{args.data[1]}: several DATA files are read only by a text model (documents); give one file")
    with _as_trained(args, trained):
        lines = models.predictions(
            trained,
            data,
            raw=args.scores,
            proba=args.proba,
            chunk_rows=args.chunk_rows,
            fmt=args.format,
            skip_bad=args.skip_bad,
        )
        if args.out:
            atomic_lines(args.out, lines)
        else:
            sys.stdout.writelines(lines)
    return 0


def _test(args) -> int:
    from ocolearn import pipeline as models
    from ocolearn.metrics import formatted

    trained = _model(args)
    with _as_trained(args, trained):
        metrics = models.evaluate(
            trained, args.data, chunk_rows=args.chunk_rows, fmt=args.format, skip_bad=args.skip_bad
        )
    for key, value in metrics.items():
        if key == "auc" and value != value:  # NaN: the AUC ranks rows of one class against another's
            warnings.warn(f"{args.data}: auc left out: its rows hold labels of one class only", Notice, stacklevel=2)
        elif key == "confusion":
            print("confusion (rows: true label, columns: predicted)", " ".join(trained.labels))
            for label, counts in zip(trained.labels, value, strict=True):
                print(label, " ".join(map(str, counts)))
        else:
            print(key, formatted(value) if isinstance(value, float) else value)
    return 0


def _same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name one file (through links too), or would; not where a
    path cannot be resolved (a link loop: reading or writing it names it)."""
    from ocolearn.io import resolved

    try:
        return os.path.samefile(a, b)
    except OSError:  # (one does not exist yet)
        try:
            return resolved(a) == resolved(b)
        except OSError:
            return False


def _not_an_input(option: str, path, inputs, documents: bool = True, folder: bool = False) -> None:
    """An output that is also an input would be overwritten by what is made from it, and with
    ``documents`` one in an input folder (text documents) would overwrite a document or be read
    as one; an output ``folder`` (replaced as a whole) that holds an input would remove it:
    refused before anything is read or written."""
    from ocolearn.data import DataError
    from ocolearn.io import resolved

    for given in inputs:
        if _same_file(path, given):
            raise DataError(f"{option} {path}: is the input file {given}; writing it would overwrite the input")
        if documents and Path(given).is_dir() and resolved(path).is_relative_to(resolved(given)):
            raise DataError(
                f"{option} {path}: is in the input folder {given}, whose files are documents; write it elsewhere"
            )
        if folder and resolved(given).is_relative_to(resolved(path)):
            raise DataError(
                f"{option} {path}: holds the input {given}, and the output folder is replaced as a whole; "
                "write it elsewhere"
            )


def _model(args):
    """The model of ``predict`` and ``test``: its data are read as it was trained, so a
    ``--format`` other than its own would score features of another space (garbage, or an
    index beyond its weights): refused, naming the model, its format and the option."""
    from ocolearn import modelfile
    from ocolearn.data import DataError

    trained = modelfile.load(args.model)
    if args.format and args.format != _format(trained):
        raise DataError(
            f"--format {args.format}: {_trained_on(args, trained)} (leave out --format, or train a model on "
            f"{args.format} data)"
        )
    return trained


def _format(trained) -> str:
    return trained.settings.get("format", "svmlight")


def _trained_on(args, trained) -> str:
    own = _format(trained)
    return f"the model {args.model} was trained on {own} data and reads its data as {own}"


@contextlib.contextmanager
def _as_trained(args, trained):
    """Reading data for the model of ``predict`` or ``test``: a file that looks like another
    format's is for a model trained on that format (``--format`` of another is refused, ``_model``)."""
    from ocolearn.data import DataError, OtherFormat

    try:
        yield
    except OtherFormat as e:
        advice = (
            f"{_trained_on(args, trained)}: give it {_format(trained)} data, or train a model with --format {e.fmt}"
        )
        raise DataError(e.told(advice)) from None


def _export(args) -> int:
    import numpy as np

    from ocolearn import data as datasets
    from ocolearn.data import DataError
    from ocolearn.io import atomic_write

    table = datasets.BUNDLED[args.table]()
    if args.target not in table:
        raise DataError(f"--target: {args.table} has no column {args.target!r}; columns: {', '.join(table)}")
    features = [c for c, v in table.items() if c != args.target and v.dtype.kind in "fi"]
    if args.order_seed is not None:  # the bundled tables are sorted by class: an online learner must not see that
        order = np.random.default_rng(args.order_seed).permutation(len(table[args.target]))
        table = {name: column[order] for name, column in table.items()}
    if args.format == "svmlight":
        text = datasets.table_svmlight(table, args.target, features)
    else:
        text = datasets.table_csv(table, [*features, args.target])
    atomic_write(args.out, text)
    print(f"wrote {args.out}: {len(table[args.target])} rows, features {', '.join(features)}", file=sys.stderr)
    return 0


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line ``ocolearn: error: ...``, exit status 2."""

    def parse_args(self, args=None, namespace=None):
        self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_args(args, namespace)

    def error(self, message):
        unknown = [w for w in getattr(self, "given", ()) if w.startswith("-") and w not in self._option_string_actions]
        if message.endswith("required: command") and unknown:  # (``ocolearn --verison``: the option is the error)
            message = f"unrecognized arguments: {' '.join(unknown)}"
        if message.startswith("unrecognized arguments: "):  # (a misspelt option: name the one meant)
            message += "".join(self._hint(word.split("=", 1)[0]) for word in message.split(": ", 1)[1].split())[:1000]
        self.exit(2, f"ocolearn: error: {message}\n")

    def _hint(self, word: str) -> str:
        """For an option ``word`` the command does not take: the one of its own options that it is
        a misspelling of (``--pases``: ``--passes``), else the commands that take it (``--model``
        given to test, which reads the model as its first argument)."""
        if not word.startswith("--"):
            return ""
        commands = next((a.choices for a in self._actions if isinstance(a, argparse._SubParsersAction)), {})
        takes = {name: {o for a in c._actions for o in a.option_strings} for name, c in commands.items()}
        command = next((w for w in getattr(self, "given", ()) if w in commands), None)
        own = {o for a in self._actions for o in a.option_strings} | takes.get(command, set())
        if command in ("run", "sweep") and word in CONFIG_OPTIONS:
            return f" ({word}: a config's key; --set {CONFIG_OPTIONS[word]}=N)"
        if command == "study" and word in STUDY_OPTIONS:
            return f" ({word}: {STUDY_OPTIONS[word]})"
        close = difflib.get_close_matches(word, sorted(own), n=1, cutoff=0.7)
        if close:
            return f" ({word}: did you mean {close[0]}?)"
        others = [name for name, options in takes.items() if word in options]
        return f" ({word} is an option of {', '.join(others)}, not of {command})" if command and others else ""


MAX_COUNT = 2**31 - 1  # a count an option gives (rows, passes, features): at most checks.MAX_ROUNDS


def _at_least(low: int, high: int | None = None, off: int | None = None):
    """A whole number from ``low`` to ``high`` (no bound if None), or ``off``, the value meaning none."""
    bounds = f">= {low}" if high is None else f"from {low} to {high}"
    wanted = f"a whole number {bounds}" + ("" if off is None else f", or {off} for none")

    def number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value != off and (value < low or (high is not None and value > high)):
            raise argparse.ArgumentTypeError(f"{value} is not {wanted}")
        if high is None and value > MAX_COUNT:  # (NumPy and JAX count in int64 and int32: an OverflowError)
            raise argparse.ArgumentTypeError(
                f"{value} is more than {MAX_COUNT}, the most a count may be (rows, rounds and features count in int32)"
            )
        return value

    return number


def _labels(text: str) -> list[str]:
    """``--labels a,b,c``: two or more names, by the rule of every list of labels
    (``ocolearn.names.label_list_problem``)."""
    names = [name.strip() for name in text.split(",")]
    problem = label_list_problem(names)
    if problem:
        raise argparse.ArgumentTypeError(problem + (", comma-separated" if len(names) == 1 else ""))
    return names


def _data_options(p, train=True) -> None:
    """The options that say how to read a data file: the same for every command."""
    p.add_argument("--format", choices=FORMATS, default=None, help=FORMAT_HELP)
    p.add_argument("--chunk-rows", type=_at_least(1), default=65536, help="rows per chunk (memory is a few chunks)")
    if not train:
        skipped = "predict: an empty line for each, so the output stays one line per row"
        p.add_argument("--skip-bad", action="store_true", help=f"skip and count malformed lines ({skipped})")
        return
    p.add_argument("--target", default="", help="csv: the column of labels (or of numbers, for regression)")
    p.add_argument("--task", choices=TASKS, default="", help="default: inferred from the labels")
    p.add_argument(
        "--bits",
        type=_at_least(1, 30),
        help="hash MIRA features and words (default 18), or svmlight indices, into 2^bits buckets",
    )
    p.add_argument("--dim", type=_at_least(1), help="svmlight: the number of features (default: found by a first pass)")
    p.add_argument(
        "--labels", type=_labels, help="the labels, comma-separated, in class order (default: found by a first pass)"
    )
    p.add_argument("--zero-based", action="store_true", help="svmlight indices start at 0 (default 1)")
    p.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip and count malformed lines (csv: also a missing target or a --numeric cell that is not a number)",
    )
    _column_options(p)


def _names(text: str) -> list[str]:
    """Comma-separated column names (``--columns a,b``)."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of column names")
    return names


def _column_options(p) -> None:
    """csv: which columns are features, and of which kind (``ocolearn.data.csvfile``)."""
    lists = dict(type=_names, default=[], metavar="A,B")
    p.add_argument("--columns", **lists, help="csv: the feature columns to use (default: all but --target, --ignore)")
    p.add_argument("--ignore", **lists, help="csv: columns to leave out of the features")
    kind = "(default: numeric when every cell that is not missing -- empty, NA, NaN, null, None, ?, ... -- is a number)"
    p.add_argument("--categorical", **lists, help=f"csv: read these columns as categories, one-hot {kind}")
    p.add_argument("--numeric", **lists, help="csv: read these columns as numbers (a cell that is not one is an error)")


FORMAT_HELP = (
    "default for train: from DATA, csv for a .csv file, vw for a .vw file, text for a folder, svmlight "
    "otherwise (predict and test read as the model was trained); svmlight; mira; "
    "csv: a header line, the --target column and feature columns; "
    "text: DATA is a folder with one folder of text files per label (bag of words; predict also reads a flat "
    "folder of documents, or document files); "
    "vw: Vowpal Wabbit's text format, hashed as VW hashes it (importance weights, tags, namespaces)"
)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ocolearn", description="Online convex optimization experiments on JAX.")
    p.add_argument("--version", action="version", version=f"ocolearn {ocolearn.__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run an experiment file and write its metrics, trace, model and figures")
    r.add_argument("config", help="experiment file (TOML), e.g. configs/iris_ridge_magic.toml")
    r.add_argument("--out", help="output folder (default: runs/NAME)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    r.set_defaults(func=_run)
    s = sub.add_parser("sweep", help="run a config's [sweep] in one compiled program; write the table and the best")
    s.add_argument("config", help="experiment file (TOML) with a [sweep] table, e.g. configs/iris_sweep.toml")
    s.add_argument("--out", help="output folder (default: runs/NAME_sweep)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    s.add_argument("--chunk-size", type=_at_least(1), help="configurations per compiled chunk (default: by memory)")
    s.set_defaults(func=_sweep)
    st = sub.add_parser("study", help="run learners x data sets x orders, tuned fairly; write a leaderboard")
    st.add_argument("config", help="study file (TOML), e.g. configs/study_classifiers.toml")
    st.add_argument("--out", help="output folder (default: runs/NAME)")
    st.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    st.add_argument("--quiet", action="store_true", help="no progress lines")
    st.set_defaults(func=_study)
    t = sub.add_parser("train", help="train a regression or classification learner on a data file; save the model")
    t.add_argument(
        "--learner",
        help="a learner's name: ogd, adagrad, perceptron, passive_aggressive, mira, pegasos, ... (default, measured "
        "best to start with: adagrad on the logistic loss for classes, one-vs-rest over it for more than two, "
        "ogd on the squared loss at rate 0.02 for numbers; docs/choosing-a-learner.md)",
    )
    t.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a field of the learner")
    t.add_argument("data", help="training data")
    t.add_argument("--model", required=True, help="model file to write (.npz)")
    _data_options(t)
    t.add_argument(
        "--no-intercept", action="store_true", help="no constant feature (default: one, left out of regularizers)"
    )
    t.add_argument(
        "--interactions",
        "-q",
        action="append",
        default=[],
        metavar="AB",
        help="vw: cross the features of namespaces A and B (first letters), hashed as VW's -q AB; csv: the product "
        "of columns A,B by name, or of the columns starting with A and with B; svmlight (with --bits): of the "
        "features of indices A,B, hashed; repeatable",
    )
    t.add_argument(
        "--scale",
        choices=SCALES,
        default="auto",
        help="online scaling of the features: auto (default: standardize dense rows, normalize sparse rows), "
        "standardize (running mean and variance), normalize (running max |x_i|, VW-style), none, river "
        "(standardize by river's StandardScaler rule exactly: no clip of far rows' predictions)",
    )
    t.add_argument("--passes", type=_at_least(1), default=1)
    t.add_argument(
        "--seed", type=_at_least(0, MAX_SEED), help="shuffle the rows of each chunk, each pass, with this seed"
    )
    t.add_argument(
        "--order-seed",
        type=_at_least(0, MAX_SEED),
        help="text: the seed of the one shuffle of the documents (default 0)",
    )
    t.add_argument("--stop-early", action="store_true", help="stop after a pass without mistakes")
    t.add_argument("--average", action="store_true", help="save the averaged weights (perceptron, mira, ocp_svm)")
    t.add_argument("--normalized", action="store_true", help="scale each class's weights to unit norm (MIRA write-up)")
    t.add_argument("--checkpoint", help="checkpoint file (.npz), written atomically")
    every = "checkpoint every N rows (default: at each chunk's end)"
    t.add_argument("--checkpoint-every", type=_at_least(0), default=0, metavar="N", help=every)
    t.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    t.add_argument(
        "--holdout",
        type=_at_least(2, off=0),
        default=0,
        metavar="K",
        help="hold out rows K, 2K, 3K, ... from training and report their loss after each pass (VW's --holdout_period)",
    )
    t.add_argument("--quiet", action="store_true", help="no progress line")
    t.set_defaults(func=_train)
    for command in (r, s, st, t):
        command.add_argument("--track", choices=["mlflow"], help="log to MLflow (MLFLOW_TRACKING_URI, else ./mlruns)")
    q = sub.add_parser("predict", help="print one predicted label (or value) per line; labels in DATA are optional")
    q.add_argument("model")
    q.add_argument(
        "data",
        nargs="+",
        help="a data file; for a text model a folder of documents (flat, or one folder per label) or "
        "document files, written as NAME<TAB>LABEL lines in sorted order (files: as given)",
    )
    shown = q.add_mutually_exclusive_group()
    shown.add_argument("--scores", action="store_true", help="print the raw score(s) of each row")
    shown.add_argument(
        "--proba",
        action="store_true",
        help="print each class's probability, comma-separated, after a header line naming the classes "
        "(models of the logistic loss)",
    )
    q.add_argument("--out", help="write the predictions to this file (atomically) instead of printing them")
    _data_options(q, train=False)
    q.set_defaults(func=_predict)
    e = sub.add_parser(
        "test",
        help="print the error rate (classification; with the logistic loss, log loss and AUC too) "
        "or MSE and MAE (regression)",
    )
    e.add_argument("model")
    e.add_argument("data")
    _data_options(e, train=False)
    e.set_defaults(func=_test)
    x = sub.add_parser(
        "export", help="write a bundled table (iris, wine) as a CSV or svmlight file to try the commands"
    )
    x.add_argument("table", choices=["iris", "wine"])
    x.add_argument("--target", required=True, help="the column of labels or values (iris: Species or Petal.Width)")
    x.add_argument("--format", choices=["csv", "svmlight"], default="csv")
    x.add_argument("--out", required=True, help="the file to write")
    x.add_argument(
        "--order-seed",
        type=_at_least(0, MAX_SEED),
        default=0,
        help="rows in an order shuffled by this seed (default 0)",
    )
    x.set_defaults(func=_export)
    return p


def _compilation_cache() -> None:
    """Keep compiled programs on disk between runs (JAX's persistent cache), so a command run
    again on data of the same shapes starts without compiling. ``OCOLEARN_CACHE`` names the
    folder (default ``~/.cache/ocolearn/xla``); ``OCOLEARN_CACHE=0`` turns it off. Every program
    is kept, however quick its compile: configs/iris_ridge_magic.toml's second run took 1.8 to
    2.1 s against 2.2 to 2.3 s keeping only those over 0.1 s (9 entries, 56 kB, against 1), and the test
    suite, whose processes share one folder, finds 1,274 of its 5,592 compiles there."""
    folder = os.environ.get("OCOLEARN_CACHE", str(Path.home() / ".cache" / "ocolearn" / "xla"))
    if folder == "0":
        return
    import jax

    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


def _few_malloc_arenas() -> None:
    """At most two glibc malloc arenas (``mallopt(M_ARENA_MAX, 2)``), set before JAX starts
    its threads: otherwise each thread that allocates (the parsing threads, the one making
    chunks) gets an arena of its own, and blocks freed there stay with the process (about
    60 MB more peak memory streaming the 2 GB benchmark file, at no measurable speed). Elsewhere
    than glibc, nothing."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt(-8, 2)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


class Notice(UserWarning):
    """A warning of ocolearn's own (labels that come sorted, ...): held, like NumPy's
    warnings, until the command has succeeded (``_main``)."""


def main(argv=None) -> int:
    """The command's exit status. Ctrl-C and SIGTERM, whenever they come (the handlers are ours
    from before the arguments are read to the end: ``ocolearn.interrupts``), end it with one line
    and 130 or 143; so does any other exception raised after one of them (a C extension's import
    failed under it, a computation cut)."""
    previous = interrupts.install()
    try:
        return _stoppable(argv)
    finally:
        interrupts.restore(previous)  # (as it was: main may run inside another program)


def _stoppable(argv) -> int:
    args = None
    try:
        interrupts.arm()
        args = parser().parse_args(argv)
        status = _main(args)
        interrupts.check()  # a signal whose exception was dropped where it landed: nothing was written after it
        interrupts.disarm()
        return status
    except BaseException as e:
        interrupts.disarm()
        if not isinstance(e, KeyboardInterrupt) and interrupts.received() is None:
            raise
        signum = interrupts.received() or (signal.SIGTERM if isinstance(e, interrupts.Terminated) else signal.SIGINT)
        checkpoint = getattr(args, "checkpoint", None)
        where = (
            f"; the last checkpoint is {checkpoint} (continue with --resume)"
            if checkpoint and Path(checkpoint).exists()
            else " after its outputs were written"
            if interrupts.written()
            else "; outputs were left as they were"
        )
        print(f"ocolearn: {'terminated' if signum == signal.SIGTERM else 'interrupted'}{where}", file=sys.stderr)
        return interrupts.STATUS[signum]


def _main(args) -> int:
    _few_malloc_arenas()
    from ocolearn.checks import NonFiniteError
    from ocolearn.config import ConfigError
    from ocolearn.data import DataError

    _compilation_cache()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default", RuntimeWarning)  # (numeric warnings: each once, as lines below)
            warnings.simplefilter("always", Notice)
            status = args.func(args)
        # Warnings (ours, NumPy's RuntimeWarning on overflow, ...) show after a result, one line
        # each; before an error they would only bury its one line, so a failure shows none.
        named = (
            str(w.message).strip() if w.category is Notice else f"{w.category.__name__}: {w.message}" for w in caught
        )
        for text in dict.fromkeys(text.strip() for text in named):
            print(f"ocolearn: warning: {text.splitlines()[0][:300]}", file=sys.stderr)
        return status
    except (ConfigError, DataError, NonFiniteError) as e:
        return _fail(str(e))
    except BrokenPipeError:  # the reader stopped early (| head): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:  # a folder given as a file, a full disk, no permission
        return _fail(_os_error(e))


def _os_error(e: OSError) -> str:
    """The line of an ``OSError``: the path and the system's words, or, where a file stands
    where a folder of the path should be (``File exists``, ``Not a directory``), that file."""
    import errno

    if e.filename and e.errno in (errno.EEXIST, errno.ENOTDIR):
        blocker = next((p for p in Path(e.filename).parents if p.is_file()), None)
        if blocker is not None:
            return f"{e.filename}: {blocker} is a file, not a folder (a file is in the way of the path)"
    return f"{e.filename or ''}{': ' if e.filename else ''}{e.strerror or e}"


def _fail(message: str) -> int:
    interrupts.check()  # (an error after a signal is the signal's doing: the signal's line is printed)
    print(f"ocolearn: error: {message}", file=sys.stderr)
    return 2


def entry() -> None:
    """The ``ocolearn`` command: ``main``'s status is the exit status. The signal handlers are
    ours from here on (``python -m ocolearn`` installs them sooner). After Ctrl-C or SIGTERM (its
    outputs cleaned up, its line printed) the process ends at once (``os._exit``): a normal exit
    would first wait for a compiled computation still running, a sweep's chunk, to end. Once the
    command has ended otherwise, its outputs written, the signals are ignored: Python's exit puts
    the default handlers back, under which a signal in its last moments killed a finished
    command (status -15 to ``subprocess``)."""
    interrupts.install()
    # Python collects its youngest objects every 700 new ones: importing JAX and numba makes
    # hundreds of thousands, kept for good, scanned again at each collection of the older ones
    # (0.15 s of CPU in a text train). Every 10,000 instead; garbage in cycles waits longer.
    gc.set_threshold(10_000, *gc.get_threshold()[1:])
    status = main()
    if status in interrupts.STATUS.values():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
        os._exit(status)
    for signum in interrupts.STATUS:
        signal.signal(signum, signal.SIG_IGN)
    # Python's exit collects garbage over every object left (JAX's and numba's modules: 0.3 s of
    # CPU after a text train), to the same end as the exit: the command's outputs are written and
    # closed by now, so the objects are left out of its collections (``gc.freeze``).
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    entry()
