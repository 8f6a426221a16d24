"""The doors' one orchestration layer: every door (train/predict/test, run/sweep, the
estimators, studies) reads data, maps labels, builds the pipeline and scores through these
functions. ``train_file(name, overrides, path, TrainOptions(...))`` is ``ocolearn train``:
the CLI's options as one value (``TrainOptions.of_args``), read downward into a ``Source``,
the learner behind its steps, and the streamed runner (``ocolearn.streaming.run_stream``).

The learner the doors run, preprocessing parts in front of a learner as one learner, is
``ocolearn.learners.pipeline.Pipeline``; its names are importable from here as before.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import jax
import numpy as np

from ocolearn import metrics, sizes
from ocolearn.config import ConfigError, _build_part, apply_overrides
from ocolearn.data import DataError
from ocolearn.data.containers import rows_of
from ocolearn.data.sparse_text import DEFAULT_BITS, SparseData
from ocolearn.data.stream import Source, chunks, prefetched, reader_of, scan
from ocolearn.data.task import declaring, infer, of_listed
from ocolearn.data.textdirs import document_names
from ocolearn.features import Sparse
from ocolearn.learners import Learner
from ocolearn.learners.pipeline import (  # noqa: F401  (their home before ocolearn.learners.pipeline)
    Pipeline,
    PipelineState,
    raw_linear,
    steps_of,
    with_intercept_field,
    with_pipeline,
)
from ocolearn.modelfile import Model, classes_of, scores
from ocolearn.names import format_of
from ocolearn.parts import fields_of
from ocolearn.preprocess import Impute, Preprocess, default_steps
from ocolearn.run import run_passes

REGRESSION_LOSSES = ("squared", "absolute", "epsilon_insensitive")


def regression_learners(keys: tuple[str, str] | None = None) -> str:
    """The learners that learn a real-valued target with their defaults (a regression loss, no
    classes), read from the registry, and those that do with a setting (worded for ``keys``,
    see ``check_learner``)."""
    names = []
    for name, cls in sorted(Learner.registry.items()):
        try:
            learner = cls() if getattr(cls, "from_files", True) else None
        except (ConfigError, TypeError):  # (optax needs its learning rate)
            learner = None
        if learner is not None and not getattr(learner, "classes", 0) and loss_name(learner) in REGRESSION_LOSSES:
            names.append(name)
    pa = f"passive_aggressive with {_setting(keys, 'loss', 'epsilon_insensitive')}" if keys else None
    return ", ".join([*names, "optax", pa or "passive_aggressive --set loss=epsilon_insensitive"])


def _setting(keys: tuple[str, str] | None, key: str, value: str) -> str:
    """A learner's setting as its door writes it: train's ``--set key=value``, or a config's
    ``learner.key = 'value'`` (``keys``: see ``check_learner``)."""
    return f"--set {key}={value}" if keys is None else f"{keys[0]}{key} = {value!r}"


def _task(keys: tuple[str, str] | None, *tasks: str) -> str:
    """Declaring the task, as the door does (``ocolearn.data.task.declaring``)."""
    return declaring("--task" if keys is None else keys[1], *tasks)


def source_of(path, fmt="svmlight", *, bits=None, dim=None, labels=None, zero_based=False, target="", **options):
    """The ``Source`` of a data file: hashing ``bits`` (default 18 for MIRA features and words;
    svmlight indices only if given) fix ``dim`` to ``2**bits``."""
    if fmt in ("mira", "text", "vw"):
        bits = bits or DEFAULT_BITS
    path = path if isinstance(path, tuple) else str(path)  # (a tuple: text documents, for predict)
    source = Source(path, fmt, dim or 0, tuple(labels or ()), bool(zero_based), bits, target=target, **options)
    return source._replace(dim=1 << bits) if bits is not None else source


def prepare(source: Source, task: str = "", key: str = "--task") -> tuple[Source, str, object]:
    """The source with its labels, dimension and task filled in, and the ``Scan`` of the first
    pass that found them (None when nothing was to be found: a known dimension with given
    labels, a classification task, or with a declared regression task). ``key`` declared the
    task (``ocolearn.data.task.infer``), and errors name the labels and dimension it lists by
    the door's keys (``--labels``, ``data.dim``); listed labels are the classes (``of_listed``)."""
    source = source._replace(task_key=key)
    if source.format == "csv" and source.table is None:  # (the columns' kinds and categories: the first pass's)
        from ocolearn.data.csvfile import survey

        source = source._replace(table=survey(source))
    if source.labels:
        task = of_listed(source.labels, task, key, source.path)
    if source.dim and not reader_of(source).dense and (source.labels or task == "regression"):
        return source._replace(task=task), task, None
    found = scan(source)
    task = task if source.labels else infer(found.labels, task, source.path, key)
    labels = () if task == "regression" else tuple(source.labels or found.labels.names)
    source = source._replace(labels=labels, dim=source.dim or found.dim, width=found.width, task=task)
    if found.dim < 1:  # (labels alone: a model of no features; hashed formats' dimension is 2^bits, found or not)
        alone = "every document is without words" if source.format == "text" else "every line is a label alone"
        raise DataError(f"{source.path}: no features in any row ({alone}); nothing to learn from")
    return source, task, found


# The learner a door trains when none is named, by task: chosen by measurement on six data sets
# (benchmarks/default_learner.py; docs/choosing-a-learner.md), each within 2 points of accuracy or
# 10% of MSE of river's StandardScaler() | LogisticRegression() / LinearRegression(), held out and
# progressively. Classifiers: AdaGrad on the logistic loss (probabilities; per-coordinate rates,
# which never diverge on the logistic loss's bounded gradients); more than two classes one-vs-rest
# over it. Regression: OGD on the squared loss at river's constant rate (0.02 on (p - y)^2 / 2 is
# river's SGD(0.01) on (p - y)^2), which moves the intercept to targets in the hundreds within a
# pass where a decaying or per-coordinate rate lags (AdaGrad: diabetes MSE 27,000 against 3,445).
DEFAULT_LEARNERS = {
    "binary": ("adagrad", ("loss=logistic",)),
    "multiclass": ("one_vs_rest", ("base.kind=adagrad", "base.loss=logistic")),
    "regression": ("ogd", ("schedule.kind=constant", "schedule.eta=0.02")),
}


def default_learner(task: str) -> tuple[str, tuple[str, ...]]:
    """``(name, overrides)`` of the learner trained when none is named (``DEFAULT_LEARNERS``):
    ``task`` regression, multiclass, else binary."""
    return DEFAULT_LEARNERS.get(task, DEFAULT_LEARNERS["binary"])


def named_or_default(name, overrides, num_labels: int, task: str) -> tuple[Learner, str]:
    """``(learner, default)``: the learner named (``build_learner``), or without a name the
    task's default learner with ``overrides`` set after its own settings (replacing those of the
    same keys); ``default`` is how train
    names the default (``"adagrad --set loss=logistic"``), "" for a learner named. An error of a
    setting given to the default names the default."""
    if name:
        return build_learner(name, overrides, num_labels, task), ""
    kind = next((o for o in overrides if o.replace(" ", "").startswith("kind=")), None)
    if kind is not None:
        raise ConfigError(f"--set {kind}: name the learner with --learner, not --set kind", "kind")
    chosen, settings = default_learner(task)
    default = " ".join([chosen, *(f"--set {v}" for v in settings)])
    given = {o.split("=", 1)[0].strip() for o in overrides}
    kept = tuple(v for v in settings if v.split("=", 1)[0] not in given)  # (--set schedule.eta=0.01 replaces 0.02)
    try:
        return build_learner(chosen, (*kept, *overrides), num_labels, task), default
    except ConfigError as e:
        raise ConfigError(
            f"{e} (no --learner: the default learner for {task or 'this'} data is {default})", e.key
        ) from None


def build_learner(name: str, overrides=(), num_labels: int = 2, task: str = "") -> Learner:
    """A learner from its registered name and ``key=value`` overrides of its fields; a learner
    with ``classes`` gets the data's number of labels for a multiclass task."""
    table = apply_overrides({"kind": name}, overrides, example="schedule.eta=0.1")  # (train's keys: the learner's)
    if table["kind"] != name:  # (it would train another learner than the one named, and reported)
        raise ConfigError(
            f"--set kind={table['kind']}: the learner is --learner {name}; give --learner {table['kind']}"
        )
    cls = Learner.registry.get(name)
    multiclass = task == "multiclass" or (not task and num_labels > 2)
    if cls is not None and "classes" in fields_of(cls) and "classes" not in table and multiclass:
        table["classes"] = num_labels
    return _build_part(Learner, table, "learner", "--learner/--set")


def loss_name(learner) -> str:
    return getattr(getattr(learner, "loss", None), "name", "")


def check_learner(learner: Learner, task: str, labels=(), where="the data", keys=None) -> None:
    """The learner can learn the task: regression needs a regression loss, more than two
    classes a multiclass learner; otherwise an error saying what to do, worded for the door:
    ``keys`` None for train's options, else a file's ``(prefix of the learner's keys, the
    task's key)``, ``("learner.", "data.task")`` for a config."""
    name = learner.name
    if task == "regression":
        if getattr(learner, "classes", 0) or loss_name(learner) not in REGRESSION_LOSSES:
            fix = f" ({_setting(keys, 'loss', 'epsilon_insensitive')})" if name == "passive_aggressive" else ""
            raise DataError(
                f"{where}: the target is real-valued (a regression task), but {name!r} with loss "
                f"{loss_name(learner) or 'of its own'} is a classifier{fix}; train a regression learner "
                f"({regression_learners(keys)}), or declare the classes with {_task(keys, 'binary', 'multiclass')}"
            )
    elif task == "multiclass" and not getattr(learner, "classes", 0):
        numbers = all(_is_integer(label) for label in labels)
        quantity = f"; if the labels are quantities to predict, declare {_task(keys, 'regression')}" if numbers else ""
        wrap = (
            f"--learner one_vs_rest --set base.kind={name}"
            if keys is None
            else f"{_setting(keys, 'kind', 'one_vs_rest')} with {_setting(keys, 'base.kind', name)}"
        )
        raise DataError(
            f"{where}: {len(labels)} labels (a multiclass task), but {name!r} is a binary learner; "
            f"use {wrap}, or a multiclass learner (perceptron, passive_aggressive, mira, cw, arow, scw){quantity}"
        )
    elif task == "binary" and getattr(learner, "classes", 0) not in (0, 2):
        raise DataError(f"{where}: 2 labels, but the learner has {_setting(keys, 'classes', learner.classes)}")
    elif task == "multiclass" and learner.classes != len(labels):  # (else: "y row 1: class 2 is not one of 0..1")
        raise DataError(
            f"{where}: {len(labels)} labels, but the learner has {_setting(keys, 'classes', learner.classes)} "
            "(leave classes out: it is set from the data)"
        )


def _is_integer(label: str) -> bool:
    try:
        return float(label).is_integer()
    except ValueError:
        return False


def has_average(learner) -> bool:
    """Whether the learner keeps averaged weights (``averaged(state)``), also inside one-vs-rest."""
    learner = steps_of(learner)[1]
    base = getattr(learner, "base", None)
    return hasattr(learner, "averaged") and (base is None or has_average(base))


def check_step(learner: Learner, dim: int, dense=False, where="--learner/--set", option="--bits/--dim") -> None:
    """Trace one step of the learner on an abstract example of the data's shape, before any
    data is read: a hyperparameter outside its set (a variant, an optax name) fails here with
    one message, and a state too large for this machine's memory (``--bits``, ``--dim``) is
    refused before it is allocated. The learner's own ``check()``, where it has one, runs first."""
    inner = steps_of(learner)[1]
    name, base = inner.name, getattr(inner, "base", None)
    if base is not None and getattr(base, "classes", 0):
        raise ConfigError(
            f"{where}: {name}'s base must be a binary learner; {base.name!r} is multiclass "
            f"(use --learner {base.name} itself)"
        )
    check = getattr(learner, "check", None)
    try:
        if check is not None:
            check()
        y = jax.ShapeDtypeStruct((), np.int32 if getattr(learner, "classes", 0) else np.float32)
        state = jax.eval_shape(lambda: learner.init(dim))
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise ConfigError(f"{where}: {name}: {_first_line(e)}") from None
    size = sum(leaf.size * leaf.dtype.itemsize for leaf in jax.tree.leaves(state))
    need, memory = sizes.estimate(state=size).bytes, sizes.memory()
    if need > memory:
        classes = getattr(inner, "classes", 0)
        over = f"{classes:,} classes (--set classes) x {dim:,} features" if classes > 2 else f"{dim:,} features"
        raise ConfigError(
            f"{option}: {name} over {over} keeps {size / 2**30:.1f} GiB of state and needs about "
            f"4 times that while it learns ({need / 2**30:.1f} GiB), more than this machine's "
            f"{memory / 2**30:.1f} GiB of memory; use fewer {'classes or ' if classes > 2 else ''}features"
        )

    def step(state, idx, val, y):
        return learner.update(state, (val if dense else Sparse(idx, val, dim), y))

    width = dim if dense else 8
    try:
        jax.eval_shape(
            step, state, jax.ShapeDtypeStruct((width,), np.int32), jax.ShapeDtypeStruct((width,), np.float32), y
        )
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise ConfigError(f"{where}: {name}: {_first_line(e)}") from None


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def target_map(learner_or_task, labels):
    """Class indices (or numbers) -> the learner's targets: numbers for regression, class
    indices for a multiclass learner, -1/+1 for a binary one (which needs exactly two labels)."""
    if learner_or_task == "regression":
        return lambda y: np.asarray(y, np.float32)
    if getattr(learner_or_task, "classes", 0) or learner_or_task == "multiclass":  # (Pipeline.classes: its learner's)
        return lambda y: y
    if len(labels) != 2:
        raise DataError(f"a binary learner needs exactly two labels, the data has {len(labels)}: {list(labels)}")
    return lambda y: np.where(y == 1, 1.0, -1.0).astype(np.float32)


def targets(learner: Learner, data: SparseData):
    """Targets of in-memory data for the learner: class indices or -1/+1, numbers when the
    data has no label names (regression)."""
    return target_map("regression" if data.labels is None else learner, data.labels)(data.y)


def train(
    learner: Learner,
    data: SparseData,
    *,
    passes=1,
    seed=None,
    averaged=False,
    stop_early=False,
    settings=None,
    steps=None,
):
    """Run ``learner`` behind the preprocessing ``steps`` (default: ``default_steps`` for the
    data, an intercept and online scaling of dense rows) over in-memory data for up to
    ``passes`` passes (``stop_early``: until a pass without mistakes); see ``model_of``. The
    model reads files as svmlight unless ``settings`` name another format."""
    data = data._replace(X=rows_of(data.X))  # (a sparse matrix or a DataFrame: containers.rows_of)
    dense = not isinstance(data.X, Sparse)
    learner = with_pipeline(learner, default_steps(dense) if steps is None else steps)
    result = run_passes(learner, data.X, targets(learner, data), seed, passes=passes, stop_early=stop_early)
    task = "regression" if data.labels is None else ("multiclass" if getattr(learner, "classes", 0) > 2 else "binary")
    base = {"format": "csv" if dense else "svmlight", "task": task, "zero_based": False}
    settings = {**base, **(settings or {}), "mistakes_per_pass": result.mistakes}
    dim = data.X.shape[1] if dense else data.X.dim
    return model_of(learner, result.state, list(data.labels or []), dim, averaged, settings)


def model_of(learner: Learner, state, labels, dim: int, averaged=False, settings=None, normalize=False) -> Model:
    """The model file of a trained state: the pipeline folded into one linear model of the raw
    features in float64 (``raw_linear``: final or averaged weights, the steps' final statistics,
    the learner's own constant in ``offset``), the learner and the steps as config tables, the
    steps' statistics. ``normalize`` scales each class's weights (and offset) to unit L2
    norm, as the MIRA write-up does before predicting."""
    steps, inner = steps_of(learner)
    inner_state = state.inner if steps else state
    w, offset = raw_linear(learner, state, inner.averaged(inner_state) if averaged else None)
    if normalize:
        norms = np.sqrt(np.sum(np.square(w), axis=-1))
        norms = np.where(norms > 0, norms, 1.0)
        w, offset = w / norms[..., None], offset / norms
    statistics = [jax.tree.map(lambda a: np.asarray(a).tolist(), s) for s in (state.steps if steps else ())]
    settings = {**(settings or {}), "learner": inner.to_config(), "averaged": averaged, "dim": dim}
    settings |= {"pipeline": [s.to_config() for s in steps], "pipeline_state": statistics, "normalized": normalize}
    return Model(w, list(labels), settings, offset)  # (float64: raw_linear)


@dataclass(frozen=True)
class TrainOptions:
    """``train``'s options as one value (``train_file``): the CLI builds it from its parsed
    arguments in one call (``of_args``); its defaults are ``ocolearn train``'s. Frozen: one
    value passed down, never changed on the way.

    Reading the file (``source_of``, ``ocolearn.data``): ``fmt``; ``bits`` and ``dim`` (hashed
    or found by a first pass); ``labels`` in class order (found when None); ``zero_based``
    svmlight indices; ``skip_bad`` (skip and count malformed lines); ``chunk_rows``; a CSV
    file's ``target`` column and feature ``columns`` (default all but the target and
    ``ignore``), ``categorical`` and ``numeric`` ones (as declared, else the first pass's
    rule); ``interactions`` (crossed namespaces, columns or indices); a text folder's
    ``order_seed``; ``task`` (binary, multiclass, regression; "" inferred from the labels).

    The steps in front of the learner (``default_steps``): ``intercept`` (a constant
    feature, left out of regularizers) and ``scale`` (online scaling: auto, standardize,
    normalize, none, river).

    The run (``ocolearn.streaming.run_stream``): ``passes``, ``seed`` (the shuffle of each
    chunk's rows, each pass; None keeps the file's order), ``stop_early`` (after a pass
    without mistakes), ``holdout`` K (rows K, 2K, ... held out and scored after each pass),
    and the ``checkpoint`` file, written every ``checkpoint_every`` rows and at the end, that
    ``resume`` continues from.

    The model (``model_of``): the ``averaged`` weights, and with ``normalize`` each class's weights
    scaled to unit norm."""

    fmt: str = "svmlight"
    bits: int | None = None
    dim: int | None = None
    labels: tuple[str, ...] | None = None
    zero_based: bool = False
    skip_bad: bool = False
    chunk_rows: int = 65536
    target: str = ""
    columns: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    numeric: tuple[str, ...] = ()
    interactions: tuple[str, ...] = ()
    order_seed: int = 0
    task: str = ""
    intercept: bool = True
    scale: str = "auto"
    passes: int = 1
    seed: int | None = None
    stop_early: bool = False
    holdout: int = 0
    checkpoint: str | None = None
    checkpoint_every: int = 0
    resume: bool = False
    averaged: bool = False
    normalize: bool = False

    def __post_init__(self):
        """Lists of names (the command line's) kept as tuples: the value stays unchangeable."""
        for key in ("labels", "columns", "ignore", "categorical", "numeric", "interactions"):
            if isinstance(getattr(self, key), list):
                object.__setattr__(self, key, tuple(getattr(self, key)))

    def steps(self, dense: bool) -> tuple[Preprocess, ...]:
        """The parts in front of the learner for rows like these (``dense`` or sparse):
        ``default_steps`` of ``intercept`` and ``scale`` (a VW file's rows hold VW's constant
        feature instead of the intercept step). Every door takes its steps here: ``train``
        (``train_file``), the estimators (``fit_intercept``, ``scale``), ``run`` and ``sweep``
        (``[pipeline]``) and studies (``[evaluate]``), each from the options its settings make."""
        return default_steps(dense, self.intercept and self.fmt != "vw", self.scale)

    @classmethod
    def of_args(cls, args) -> TrainOptions:
        """The options of ``ocolearn train``'s parsed arguments (``cli.parser``): the fields of
        the same names, and ``--format``, ``--no-intercept``, ``--average``, ``--normalized``
        and ``--order-seed`` (default 0) as their fields."""
        renamed = dict(fmt=args.format or format_of(args.data), intercept=not args.no_intercept, averaged=args.average)
        renamed |= dict(normalize=args.normalized, order_seed=0 if args.order_seed is None else args.order_seed)
        return cls(**{key: getattr(args, key) for key in cls.__dataclass_fields__ if key not in renamed}, **renamed)


def train_file(
    name: str | None,
    overrides,
    path,
    options: TrainOptions = TrainOptions(),  # noqa: B008  (frozen: one value, never changed)
    *,
    progress=None,
    warn=None,
) -> Model:
    """Train the named learner on a data file streamed in chunks (``ocolearn.streaming``:
    constant memory, checkpoints, resume), read and run as ``options`` say (``TrainOptions``,
    whose fields the names below are). Without ``labels``, ``dim`` or ``task`` one first
    pass finds them. The learner and its step are checked before that pass. A folder of
    text documents is read in an order shuffled by ``order_seed`` (recorded in the model);
    a file whose labels come sorted gets a warning through ``warn``. ``holdout`` K learns
    nothing from rows K, 2K, ... and records their loss after each pass in the settings.
    The learner runs behind ``default_steps(dense, intercept, scale)``, after the imputation of a
    CSV file's missing cells (``table_steps``). A CSV file's feature ``columns`` (default: all but
    the target and ``ignore``) are numeric or ``categorical`` by the first pass's rule, or as
    declared (``ocolearn.data.csvfile``). A VW file's rows hold VW's constant feature instead of
    the intercept step (unless not ``intercept``), and the ``interactions`` (pairs of namespaces,
    ``ocolearn.data.vw``; of columns or indices for CSV and svmlight). With no ``name`` (None or
    "") the learner is the task's default (``default_learner``), ``overrides`` set after its own
    settings; the settings record it (``default_learner``) and the first pass's progressive
    figures (``progressive_metrics``)."""
    from ocolearn.streaming import run_stream

    # (the default's settings are checked once the task is known: ogd's schedule.eta is not adagrad's)
    o = options
    early = overrides if name or o.task else ()
    learner, default = named_or_default(name, early, len(o.labels or ()) or 2, o.task)
    if o.averaged and not has_average(learner):
        which = f"the default learner ({learner.name})" if default else repr(learner.name)
        raise ConfigError(f"--average: {which} keeps no averaged weights (perceptron, mira, ocp_svm do)")
    reading = dict(skip_bad=o.skip_bad, order_seed=o.order_seed if o.fmt == "text" else None)
    kinds = tuple((n, "categorical") for n in o.categorical) + tuple((n, "numeric") for n in o.numeric)
    reading |= dict(columns=tuple(o.columns), ignore=tuple(o.ignore), kinds=kinds)
    if o.fmt == "vw":  # (VW's constant is a hashed feature of the rows)
        from ocolearn.data.vw import check_interactions

        reading |= dict(interactions=check_interactions(o.interactions), constant=o.intercept)
    elif o.interactions:  # (csv: checked against the columns when the file is read)
        reading |= dict(interactions=tuple(o.interactions))
    source = source_of(
        path, o.fmt, bits=o.bits, dim=o.dim, labels=o.labels, zero_based=o.zero_based, target=o.target, **reading
    )
    dense = reader_of(source).dense
    try:
        steps = o.steps(dense)
    except ConfigError as e:
        raise ConfigError(f"--scale: {e}") from None
    check_step(with_pipeline(learner, steps), source.dim or 8, dense=dense)  # before the data is read
    declared = o.task
    source, task, found = prepare(source, o.task)
    if task == "regression" and o.normalize:  # (it ruins a regression model: mse 6.06 for 1.30 on the trial's file)
        raise ConfigError(f"--normalized: {source.path} is a regression task; --normalized is for classifiers")
    if task == "regression" and o.stop_early:
        raise ConfigError(
            f"--stop-early: {source.path} is a regression task, with no mistakes to stop on "
            "(--holdout K reports a held-out loss after each pass)"
        )
    learner, default = named_or_default(name, overrides, len(source.labels), task)
    name = learner.name
    check_learner(learner, task, source.labels, source.path)
    quantities = all(_is_integer(label) for label in source.labels) and {float(v) for v in source.labels} - {-1, 0, 1}
    if warn and not declared and task == "binary" and quantities and loss_name(learner) in REGRESSION_LOSSES:
        warn(
            f"{source.path}: the targets {' and '.join(source.labels)} were read as two classes, which {name!r} "
            f"learns as -1 and +1; if they are quantities to predict, declare --task regression"
        )
    learner = with_pipeline(learner, (*table_steps(source.table), *steps))
    # (the dimension found in the file: its largest index, whose line the memory message names)
    found_dim = found is not None and not o.dim and source.bits is None and not dense and found.top_line
    where = (
        f"{source.path}, line {found.top_line}: feature index {found.dim - 1 + (not o.zero_based)}" if found_dim else ""
    )
    check_step(learner, source.dim, dense=dense, option=where or "--bits/--dim")
    if found is not None and found.sorted_labels and task != "regression" and o.seed is None and warn:
        warn(
            f"{source.path}: the labels come sorted (each in one run of rows); an online learner sees one class "
            "after the other. Shuffle the file, or pass --seed with --chunk-rows of at least the number of rows"
        )
    try:
        result = run_stream(
            learner,
            source,
            targets=target_map(task if task == "regression" else learner, source.labels),
            passes=o.passes,
            chunk_rows=o.chunk_rows,
            seed=o.seed,
            checkpoint=o.checkpoint,
            checkpoint_every=o.checkpoint_every,
            resume=o.resume,
            stop_early=o.stop_early,
            progress=progress,
            holdout=o.holdout,
        )
    except ConfigError as e:  # (checks.check_rounds: 'passes' or 'learner.levels', as a config's keys)
        raise _as_options(e, source.path) from None
    settings = {
        "format": o.fmt,
        "task": task,
        "bits": source.bits,
        "zero_based": o.zero_based,
        "target": o.target,
        **csv_settings(source),
        "order_seed": source.order_seed,
        **({"interactions": list(source.interactions)} if source.interactions or o.fmt == "vw" else {}),
        **({"constant": source.constant} if o.fmt == "vw" else {}),
        "mistakes_per_pass": result.mistakes_per_pass,
        "skipped_lines": result.skipped,
        "rounds": result.rounds,
        "average_loss": float(result.summary.loss) / max(result.rounds, 1),
        **_pass_means(result, o.holdout),
        "progressive": progressive_metrics(task, result.first_pass, metrics.has_probabilities(learner)),
        "default_learner": default,
        "learner_loss": loss_name(learner),
    }
    return model_of(learner, result.state, source.labels, source.dim, o.averaged, settings, o.normalize)


def _as_options(e: ConfigError, path) -> ConfigError:
    """A round check's error (``checks.check_rounds``) on the file ``path``, whose rows it counts,
    as train words it: ``passes`` is ``--passes``, and a learner's key is named after
    ``--learner/--set:``, as train's other errors of a learner's setting name it
    (``--learner/--set: learner.levels must be ...``)."""
    if e.key == "passes":
        return ConfigError(f"{path}: {e.named('--passes')}", e.key)
    if (e.key or "").startswith("learner."):
        return ConfigError(f"{path}: --learner/--set: {e}", e.key)
    return e


def progressive_metrics(task: str, sums, probabilities: bool) -> dict:
    """The first pass's progressive figures under the names ``test`` prints (``evaluate``), from
    the runner's sums over the pass (``streaming.StreamResult.first_pass``: each row predicted
    before it was learned): ``mse`` for regression, ``accuracy`` and ``error_rate`` for
    classifiers (a score of exactly 0, the first row's, is a mistake for either label, the
    runner's rule: ``run.is_mistake``), and ``log_loss`` where the scores are probabilities."""
    if not sums:  # (resumed after the first pass from a checkpoint of a version that kept no sums)
        return {}
    rows = max(int(sums["rows"]), 1)
    if task == "regression":
        return {"mse": sums["squared_error"] / rows}
    figures = {"accuracy": 1.0 - sums["mistakes"] / rows, "error_rate": sums["mistakes"] / rows}
    return figures | ({"log_loss": sums["log_loss"] / rows} if probabilities else {})


def _pass_means(result, holdout) -> dict:
    """The mean progressive loss of each pass, and with ``holdout`` the held-out rows of a
    pass and their mean loss and error rate after each pass (``ocolearn.progress.report``)."""
    rows = result.rounds // max(len(result.loss_per_pass), 1)
    means = {"loss_per_pass": [loss / max(rows, 1) for loss in result.loss_per_pass], "holdout": holdout}
    if holdout:
        (_, _, held), *_ = result.holdout_per_pass
        means |= {
            "holdout_rows": held,
            "holdout_loss_per_pass": [loss / max(n, 1) for loss, _, n in result.holdout_per_pass],
            "holdout_error_per_pass": [wrong / max(n, 1) for _, wrong, n in result.holdout_per_pass],
        }
    return means


def table_steps(table) -> tuple[Preprocess, ...]:
    """The imputation of a table's numeric columns (``Impute``: the running mean of each, and
    the missing cells of those with an indicator), where it has any (``ocolearn.data.csvfile.Table``,
    or None), else none: the parts in front of the default ones for rows that
    ``csvfile.table_rows`` made. Every numeric column's mean is kept, so a model imputes a
    missing cell in any of them (``Table.of_settings``)."""
    if table is None or not table.numeric:
        return ()
    columns, indicators = table.imputed()
    return (Impute(columns, indicators),)


def csv_steps(path, target: str) -> tuple[Preprocess, ...]:
    """The imputation in front of the rows of the CSV file ``path`` (``table_steps`` of its first
    pass's table, ``csvfile.survey``), as ``train`` puts it there: for ``run``, ``sweep`` and studies."""
    from ocolearn.data.csvfile import survey

    return table_steps(survey(source_of(path, "csv", target=target)))


def csv_settings(source: Source) -> dict:
    """What a model file keeps to read a CSV file as it was trained: its feature ``columns`` and
    their ``table`` (``ocolearn.data.csvfile.Table``; the first pass's ``survey`` where the
    source has none yet); nothing for other formats."""
    if source.format != "csv":
        return {"columns": [], "table": None}
    from ocolearn.data.csvfile import survey

    table = source.table or survey(source)
    return {"columns": table.names, "table": table.settings()}


def model_source(model: Model, path, *, labelled=True, fmt=None, skip_bad=False) -> Source:
    """The ``Source`` of ``path`` read as the model was trained (format, features, labels, a CSV
    file's table of columns): ``labelled=False`` for prediction input, whose labels are optional.
    A feature beyond the model's space is an error for ``predict`` as for ``test`` (a model of
    another data set)."""
    from ocolearn.data.csvfile import Table

    s = model.settings
    table = Table.of_settings(s) if (fmt or s.get("format")) == "csv" and (s.get("table") or s.get("columns")) else None
    return source_of(
        path,
        fmt or s.get("format", "svmlight"),
        bits=s.get("bits"),
        dim=s["dim"],
        labels=model.labels,
        zero_based=s.get("zero_based", False),
        target=s.get("target", ""),
        task=model.task,
        labelled=labelled,
        columns=tuple(s.get("columns") or ()),
        skip_bad=skip_bad,
        table=table,
        interactions=tuple(s.get("interactions") or ()),
        constant=s.get("constant", True),
    )


def batches(model: Model, path, *, labelled=True, chunk_rows=65536, fmt=None, skip_bad=False):
    """``(scores, targets, lines skipped, tags)`` of each chunk of ``path`` (see ``model_source``;
    tags: a VW file's, else None), the next chunk read while this one is scored."""
    source = model_source(model, path, labelled=labelled, fmt=fmt, skip_bad=skip_bad)
    for chunk in prefetched(chunks(source, chunk_rows=chunk_rows)):
        yield scores(model, chunk.X), chunk.y, chunk.skipped, chunk.tags


def check_probabilities(model: Model, option="--proba") -> None:
    """A ``ConfigError`` naming ``option`` unless the model's scores are probabilities: a
    classifier whose learner (or one-vs-rest base) learned the logistic loss
    (``metrics.has_probabilities``)."""
    if model.task == "regression":
        raise ConfigError(f"{option}: a regression model predicts values, not class probabilities")
    if not metrics.has_probabilities(model.settings.get("learner", {})):
        raise ConfigError(
            f"{option}: the model's learner did not learn the logistic loss, so its scores are not probabilities "
            "(train with --set loss=logistic)"
        )


def _csv_line(fields) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(fields)
    return out.getvalue()


def predictions(model: Model, path, *, raw=False, proba=False, chunk_rows=65536, fmt=None, skip_bad=False):
    """The output, one string per chunk of rows, a line per row: the label (or value, for
    regression), or with ``raw`` the score(s), or with ``proba`` each class's probability
    (``probabilities``), comma-separated after a header line of the class names (CSV, the columns of
    scikit-learn's ``predict_proba``); labels in the file are optional and ignored.
    With ``skip_bad`` a malformed row gets an empty line (``unread_row``), so line i of the
    output still answers row i of the input.
    Text documents are read in sorted order (``textdirs.text_documents``), and each line
    starts with the document's name and a tab (``textdirs.document_names``). A VW row's tag
    follows its prediction after a space, as VW's ``-p`` writes it."""
    names = np.asarray(model.labels, str)
    documents = document_names(path) if (fmt or model.settings.get("format")) == "text" else None
    if proba:
        check_probabilities(model)
        yield ("document\t" if documents is not None else "") + _csv_line(model.labels)
    row = total = 0
    for s, _, _, tags in batches(model, path, labelled=False, chunk_rows=chunk_rows, fmt=fmt, skip_bad=skip_bad):
        if proba:
            lines = [",".join(f"{v:.9g}" for v in r) for r in metrics.probabilities(s)]
        elif raw or model.task == "regression":
            lines = [" ".join(f"{v:.9g}" for v in np.atleast_1d(r)) for r in s]
        else:
            lines = names[classes_of(s)].tolist()
        if tags is not None:
            lines = [f"{line} {tag}" if tag else line for line, tag in zip(lines, tags.tolist(), strict=True)]
        if skip_bad:  # (a skipped row's scores are NaN)
            unread = np.all(np.isnan(s.reshape(len(s), -1)), axis=1)
            lines = ["" if skip else line for line, skip in zip(lines, unread.tolist(), strict=True)]
        if documents is not None:
            lines = [f"{name}\t{line}" for name, line in zip(documents[row : row + len(lines)], lines, strict=True)]
            row += len(lines)
        if lines:
            yield "\n".join(lines) + "\n"
        total += len(lines)
    if total == 0:
        raise DataError(f"{path}: no rows to predict (every line is blank, a comment or a header)")


def evaluate(model: Model, path, *, chunk_rows=65536, fmt=None, skip_bad=False) -> dict:
    """Metrics of the model on a labelled file, streamed (``ocolearn.metrics``' formulas): ``mse``
    and ``mae`` for regression; ``error_rate`` and ``accuracy`` for classifiers (a non-finite score
    is a mistake), where the scores are probabilities (a learner on the logistic loss,
    ``metrics.has_probabilities``) ``log_loss`` and ``auc`` (two classes; one-vs-rest macro AUC
    for more), and for more than two classes ``confusion`` (rows: the true class, columns: the
    predicted one); with ``skip_bad`` the malformed lines left out, counted as ``skipped``. The
    AUC ranks every row's scores: they are kept, 8 bytes a row and class."""
    K = max(len(model.labels), 2)
    rows, squared, absolute, wrong, skipped = 0, 0.0, 0.0, 0, 0
    confusion = np.zeros((K, K), np.int64)
    probabilistic = model.task != "regression" and metrics.has_probabilities(model.settings.get("learner", {}))
    kept, log_loss = [], 0.0
    for s, y, bad, _ in batches(model, path, chunk_rows=chunk_rows, fmt=fmt, skip_bad=skip_bad):
        rows, skipped = rows + len(y), skipped + bad
        if not len(y):
            continue
        if model.task == "regression":
            squared += metrics.mse(s, y) * len(y)
            absolute += metrics.mae(s, y) * len(y)
            continue
        guess = classes_of(s)
        finite = np.all(np.isfinite(s.reshape(len(y), -1)), axis=1)
        wrong += int(np.sum((guess != y) | ~finite))
        np.add.at(confusion, (y, guess), 1)
        if probabilistic:
            log_loss += metrics.log_loss(s, y) * len(y)
            kept.append((s, y))
    if rows == 0:
        raise DataError(f"{path}: no examples to test on (every line is blank, a comment or a header)")
    counted = {"skipped": skipped} if skip_bad else {}
    if model.task == "regression":
        return {"mse": squared / rows, "mae": absolute / rows, "rows": rows, **counted}
    result = {"error_rate": wrong / rows, "accuracy": 1.0 - wrong / rows}
    if probabilistic:
        scores_, targets_ = (np.concatenate(parts) for parts in zip(*kept, strict=True))
        result |= {"log_loss": log_loss / rows, "auc": metrics.auc(scores_, targets_)}
    result |= {"rows": rows, **counted}
    if len(model.labels) > 2:
        result["confusion"] = confusion.tolist()
    return result


def read_data(
    path,
    fmt="svmlight",
    *,
    dim=None,
    bits=None,
    labels=None,
    zero_based="auto",
    target="",
    task="",
    order_seed=None,
    task_key="--task",
):
    """A data file in memory, as ``SparseData`` (one chunk of the one reading path): class
    indices and label names, or numbers (labels None) for regression; ``task_key`` declared
    the ``task`` (``prepare``)."""
    if zero_based == "auto":
        zero_based = fmt == "svmlight" and _has_index_zero(path)
    options = dict(bits=bits, dim=dim, labels=labels, zero_based=zero_based, target=target, order_seed=order_seed)
    source, task, _ = prepare(source_of(path, fmt, **options), task, task_key)
    return in_memory(source)


def _has_index_zero(path) -> bool:
    from ocolearn.data.sparse_text import read_bytes
    from ocolearn.data.svmlight import parse_svmlight

    block = parse_svmlight(read_bytes(path), 1, path)
    return bool(block.indices.size and block.indices.min() == 0)


def in_memory(source: Source) -> SparseData:
    (chunk,) = list(chunks(source, chunk_rows=1 << 62)) or [None]
    if chunk is None:
        raise DataError(f"{source.path}: no examples")
    if chunk.weights is not None:  # (``SparseData`` holds none: they would be dropped)
        raise DataError(
            f"{source.path}: importance weights other than 1, which data read into memory do not keep; "
            "train on the file (ocolearn train, pipeline.train_file), which streams them"
        )
    labels = None if source.task == "regression" else list(source.labels)
    return SparseData(chunk.X, chunk.y, labels)


def data_for(model: Model, path) -> SparseData:
    """Read ``path`` in memory with the model's feature settings and label names."""
    return in_memory(model_source(model, path))


def error_rate(model: Model, data: SparseData) -> float:
    """The fraction of rows of in-memory data whose predicted label is not theirs (a non-finite
    score is a mistake)."""
    s = scores(model, data.X)
    wrong = (classes_of(s) != np.asarray(data.y)) | ~np.all(np.isfinite(s.reshape(len(s), -1)), axis=1)
    return float(np.mean(wrong))
