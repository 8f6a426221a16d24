"""Studies: many learners on many data sets over many orders, tuned and compared, from one file.

    ocolearn study configs/study_classifiers.toml --out runs/study_classifiers

A study file names its data sets (``[[datasets]]``), its learners (``[learners.NAME]``, each a
learner table as in ``[learner]``, with an optional grid ``[learners.NAME.tune]`` in the sweep
syntax, keys relative to the learner: ``C = { geomspace = [0.001, 10, 16] }``) and the protocol
(``[evaluate]``, ``EvaluateSpec``). For each data set, the rows are split once, in the stored
order, into

    tuning rows (a prefix, or a random split)  |  rows reported on  (| held-out rows)

and each learner runs in two compiled programs (``ocolearn.sweep.sweep``): its grid x orders on
the tuning rows, scored by the progressive error (classifiers) or squared error (regression)
averaged over the orders, then the chosen value x orders on the rows reported on, traced. No
reported number has seen a tuning row. Order s is the rows shuffled by seed s, as
``ocolearn.run(learner, X, y, seed=s)`` shuffles them (``evaluate.order = "stored"``: order 0
is the stored order, order s the shuffle by seed s - 1); a synthetic stream with drift keeps its
order (a shuffle would erase the drift): its order s is the stream drawn from ``seed + s``. A
file with ``chunk_rows`` is read in chunks (``run_grid``): the same numbers in the stored order,
shuffles within blocks of ``chunk_rows`` rows, no regret.

A learner with a binary rule on a multiclass data set runs one-vs-rest (``OneVsRest``);
parameter-free learners (``PARAMETER_FREE``) take no grid.

Outputs (each written atomically, and the folder as a unit, ``ocolearn.io.atomic_folder``):
``leaderboard.csv`` and ``leaderboard.md`` (learner x data set: mean and sample standard
deviation over orders of the progressive error or squared error, the learner's own loss, the
held-out error, the regret; the tuned values; wall time; the best per data set marked),
``results.json`` (every number, per order too), ``progressive_DATASET.png`` (the running average
of the progressive error or squared error against rounds, mean over orders with a band from the
lowest to the highest order), ``significance.json`` and ``cd.png`` (average ranks over data
sets, the Friedman test and Nemenyi's critical difference; on each data set, Wilcoxon's
signed-rank test of the best learner against each other, paired by order;
``ocolearn.significance``), ``config.toml`` (the resolved study) and
``provenance.json``. The same file and seeds give the same numbers bit for
bit; only the wall times differ.

Regret is measured in one loss for every learner (``evaluate.regret``: by default the hinge for
classifiers, multiclass hinge on more than two classes, and half the squared error for
regression), against the best fixed affine predictor in hindsight over the rows reported on
(``u . x + b``, whatever the learner's own features): exact for the squared loss
(``regret.least_squares``), otherwise an offline convex solve to a stated tolerance
(``regret.best_fixed_convex``).
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path
from typing import Any, NamedTuple

import jax
import numpy as np

from ocolearn.config import (
    DataSpec,
    _build_part,
    _build_spec,
    _check_keys,
    _read_toml,
    apply_overrides,
    check_grid,
    check_grid_ranges,
    check_listed,
    check_seed,
    grid_axes,
)
from ocolearn.data import DataError
from ocolearn.data.sparse_text import SparseData
from ocolearn.features import Sparse, num_features, row
from ocolearn.io import writes_folder
from ocolearn.learners import Learner
from ocolearn.names import FORMAT_KEYS, MAX_SEED, SCALES, formats_reading, unread_setting
from ocolearn.parts import ConfigError
from ocolearn.sizes import estimate, refuse

PARAMETER_FREE = ("perceptron", "cocob", "coin_betting", "dog", "mechanic")  # nothing to tune: a grid is an error
BUNDLED = {"iris": "Species", "wine": "Cultivar"}  # the bundled tables and their label columns
SKLEARN = {  # scikit-learn's bundled sets and their tasks
    "breast_cancer": "binary",
    "digits": "multiclass",
    "wine": "multiclass",
    "iris": "multiclass",
    "diabetes": "regression",
}
SYNTHETIC = ("hyperplane", "switches")
KEYS = {  # the keys of a [[datasets]] table, by kind
    "bundled": ("target", "columns", "batch_scale"),
    "sklearn": (),
    "river": (),
    "file": ("format", "target", "bits", "dim", "zero_based", "labels", "chunk_rows"),
    "hyperplane": ("rows", "features", "drift", "noise", "seed"),
    "switches": ("rows", "features", "concepts", "every", "noise", "seed"),
}
TOP = ("name", "description", "datasets", "learners", "evaluate")  # a study file's top-level keys
REGRET_LOSSES = ("", "none", "hinge", "logistic", "squared")
ORDERS = ("shuffle", "stored")
CHUNK_SEEDS = 1 << 16  # block j of a file read in chunks shuffles with seed s + j * CHUNK_SEEDS


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
    """A ``[[datasets]]`` table. ``kind``: ``bundled`` (``source`` iris or wine, ``target``
    its label column), ``sklearn`` (``source`` one of ``SKLEARN``), ``river`` (``source`` the
    name of one of river's bundled data sets, e.g. Phishing, ImageSegments, TrumpApproval),
    ``file`` (``source`` a path read as ``ocolearn train`` reads it: ``format``, ``target``,
    ``bits``, ...), or a synthetic binary stream of ``rows`` examples uniform in
    ``[-1, 1]^features``, labelled by the sign of ``w_t . x_t`` with a fraction ``noise``
    flipped: ``hyperplane`` (``w_t`` turns by ``drift`` radians a round in a random plane; a
    rotating hyperplane, Hulten et al. 2001) or ``switches`` (``w_t`` jumps to the next of
    ``concepts`` random unit vectors every ``every`` rounds). ``name`` labels it in the outputs
    and names its figure (default: ``source``, a file's name without its suffix, or the kind);
    ``task`` is declared or inferred. A bundled table may name its feature ``columns`` (default:
    every numeric column but the target, in the table's order) and ``batch_scale`` them and the
    target as R's ``scale()`` does (the whole table's mean and deviation: it sees every row
    before the first round; the OGD post's preparation of iris). ``chunk_rows`` N > 0 reads a
    file N rows at a time instead of all at once (``ocolearn.data.stream.chunks``, as
    ``ocolearn train`` does), for files larger than memory: see ``run_grid``."""

    kind: str
    source: str = ""
    name: str = ""
    task: str = ""
    target: str = ""
    format: str = "svmlight"
    bits: int | None = None
    dim: int | None = None
    zero_based: bool = False
    labels: list[str] = dataclasses.field(default_factory=list)
    rows: int = 2000
    features: int = 10
    drift: float = 0.001
    concepts: int = 4
    every: int = 500
    noise: float = 0.0
    seed: int = 0
    columns: list[str] = dataclasses.field(default_factory=list)
    batch_scale: bool = False
    chunk_rows: int = 0

    @property
    def stream(self) -> bool:
        """A synthetic stream keeps its order (a drift in time)."""
        return self.kind in SYNTHETIC


@dataclasses.dataclass(frozen=True)
class EvaluateSpec:
    """``[evaluate]``: ``orders`` (seeds 0..orders-1); ``progressive`` (report the first pass's
    error or squared error, predict then learn); ``test`` a fraction of the rows after the
    tuning rows held out (chosen by ``test_seed``) for the error of the final weights;
    ``tune`` the fraction of rows the grids are tuned on, ``tune_by`` ``prefix`` (the first
    rows in the stored order; the default for a stream) or ``split`` (rows chosen by
    ``tune_seed``; the default otherwise: the bundled tables are sorted by class); ``regret`` the loss
    regret is measured in (``hinge``, ``logistic``, ``squared``, ``none``; default by task)
    and ``tolerance`` the gradient norm its offline solver stops at; ``intercept`` and ``scale``
    (``auto``: standardize dense rows online, normalize sparse ones; ``standardize``,
    ``normalize``, ``none``) the pipeline every learner runs behind (``ocolearn.learners.pipeline``);
    ``order``: ``shuffle`` (order s is the rows shuffled by seed s) or ``stored`` (order 0 is
    the data's own order, and orders 1, 2, ... the shuffles by seeds 0, 1, ...)."""

    orders: int = 8
    order: str = "shuffle"
    progressive: bool = True
    test: float = 0.0
    test_seed: int = 0
    tune: float = 0.2
    tune_by: str = ""
    tune_seed: int = 0
    regret: str = ""
    tolerance: float = 1e-6
    intercept: bool = True
    scale: str = "auto"


@dataclasses.dataclass(frozen=True)
class StudyLearner:
    learner: Learner
    tune: dict = dataclasses.field(default_factory=dict)  # learner key -> values or range table


@dataclasses.dataclass(frozen=True)
class Study:
    name: str
    datasets: tuple
    learners: dict  # name -> StudyLearner
    evaluate: EvaluateSpec = EvaluateSpec()
    description: str = ""
    source: str = "<study>"

    def to_config(self) -> dict[str, Any]:
        """The resolved study as a TOML-ready dict: it reruns the study exactly."""
        datasets = []
        for spec in self.datasets:
            keep = ("kind", "source", "name", "task", *KEYS[spec.kind])
            datasets.append({k: v for k, v in dataclasses.asdict(spec).items() if k in keep and v not in (None, "")})
        learners = {}
        for name, entry in self.learners.items():
            learners[name] = entry.learner.to_config()
            if entry.tune:
                learners[name]["tune"] = entry.tune
        table = {"name": self.name, "description": self.description}
        return {**table, "evaluate": dataclasses.asdict(self.evaluate), "datasets": datasets, "learners": learners}


def from_dict(raw: dict, source: str = "<study>") -> Study:
    """Validate a raw study dict (as read from TOML) into a ``Study``; every error is one
    ``ConfigError`` naming the file and the key."""
    from ocolearn.sweep import leaf_paths

    _check_keys(raw, TOP, "", source)
    for key in ("name", "datasets", "learners"):
        if key not in raw:
            raise ConfigError(f"{source}: missing key '{key}'")
    for key in ("name", "description"):
        if key in raw and not isinstance(raw[key], str):
            raise ConfigError(f"{source}: '{key}' must be a string, got {raw[key]!r}")
    check_name(raw["name"], "'name' =", source)  # (the default output folder is runs/NAME)
    evaluate = _build_spec(EvaluateSpec, raw.get("evaluate", {}), "evaluate", source)
    _check_evaluate(evaluate, source)
    tables = raw["datasets"]
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(f"{source}: 'datasets' must be one or more [[datasets]] tables")
    datasets = tuple(_dataset(t, f"datasets[{i}]", source) for i, t in enumerate(tables))
    for i, d in enumerate(datasets):
        if d.chunk_rows == 1 and evaluate.orders > 1:  # (a shuffle within blocks of one row is the stored order)
            raise ConfigError(
                f"{source}: 'datasets[{i}].chunk_rows' = 1 shuffles {d.name!r} within blocks of one row, so each of "
                f"its {evaluate.orders} orders would be the stored order; set chunk_rows > 1 or evaluate.orders = 1"
            )
        if d.chunk_rows and evaluate.regret not in ("", "none"):
            raise ConfigError(
                f"{source}: 'evaluate.regret' = {evaluate.regret!r}: the offline comparator needs the rows in memory, "
                f"and datasets[{i}].chunk_rows reads {d.name!r} in chunks; set evaluate.regret = 'none'"
            )
    names = [d.name for d in datasets]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ConfigError(f"{source}: two data sets are named {twice!r}; give one a 'name'")
    if not isinstance(raw["learners"], dict) or not raw["learners"]:
        raise ConfigError(f"{source}: 'learners' must be one or more [learners.NAME] tables")
    learners = {}
    for name, table in raw["learners"].items():
        where = f"learners.{name}"
        check_name(name, "'learners': the learner", source)
        if not isinstance(table, dict):
            raise ConfigError(f"{source}: '{where}' must be a learner table with 'kind'")
        tune = table.get("tune", {})
        learner = _build_part(Learner, {k: v for k, v in table.items() if k != "tune"}, where, source)
        if not isinstance(tune, dict):
            raise ConfigError(f"{source}: '{where}.tune' must be a table of learner keys and their values")
        if tune and learner.name in PARAMETER_FREE:
            raise ConfigError(f"{source}: '{where}.tune': {learner.name!r} is parameter-free; it takes no grid")
        check_grid(tune, leaf_paths(learner), f"{where}.tune.", source)
        check_grid_ranges(learner, tune, f"{where}.tune.", source)
        if tune and not evaluate.tune:
            raise ConfigError(f"{source}: '{where}.tune' needs rows to tune on: set 'evaluate.tune' > 0")
        learners[name] = StudyLearner(learner, tune)
    return Study(raw["name"], datasets, learners, evaluate, raw.get("description", ""), source)


def _check_evaluate(spec: EvaluateSpec, source: str) -> None:
    def bad(key, what):
        return ConfigError(f"{source}: 'evaluate.{key}' must be {what}, got {getattr(spec, key)!r}")

    if not 1 <= spec.orders <= MAX_SEED + 1:  # (order s is shuffled by seed s)
        raise bad("orders", f"an integer in 1..{MAX_SEED + 1}, one order a seed")
    for key in ("test_seed", "tune_seed"):
        check_seed(getattr(spec, key), f"evaluate.{key}", source)
    for key in ("test", "tune"):
        if not 0.0 <= getattr(spec, key) < 1.0:
            raise bad(key, "a fraction in [0, 1)")
    if spec.tune + spec.test >= 1.0:
        raise ConfigError(f"{source}: 'evaluate.tune' + 'evaluate.test' must leave rows to report on (< 1)")
    if spec.tune_by not in ("", "prefix", "split"):
        raise bad("tune_by", "prefix or split")
    if spec.order not in ORDERS:
        raise bad("order", "shuffle or stored")
    if spec.regret not in REGRET_LOSSES:
        raise bad("regret", "one of " + ", ".join(REGRET_LOSSES[1:]))
    if spec.scale not in SCALES:
        raise bad("scale", ", ".join(SCALES))
    if not spec.tolerance > 0:
        raise bad("tolerance", "> 0")
    if not spec.progressive and not spec.test:
        raise ConfigError(f"{source}: '[evaluate]' reports nothing: set 'progressive = true' or 'test' > 0")


def _dataset(table: dict, where: str, source: str) -> DatasetSpec:
    kind = table.get("kind")
    if kind not in KEYS:
        raise ConfigError(f"{source}: '{where}.kind' must be one of {', '.join(KEYS)}, got {kind!r}")
    _check_keys(table, ["kind", "source", "name", "task", *KEYS[kind]], f"{where}.", source)
    spec = _build_spec(DatasetSpec, table, where, source)
    check_seed(spec.seed, f"{where}.seed", source)  # (order s of a stream is drawn from seed + s: NumPy's, any >= 0)
    if spec.task not in ("", "regression", "binary", "multiclass"):
        raise ConfigError(f"{source}: '{where}.task' must be regression, binary or multiclass, got {spec.task!r}")
    known = {"bundled": BUNDLED, "sklearn": SKLEARN}.get(kind)
    if known is not None and spec.source not in known:
        raise ConfigError(
            f"{source}: '{where}.source' = {spec.source!r} is not a {kind} data set; known: {', '.join(known)}"
        )
    if kind == "bundled" and spec.columns:
        from ocolearn.data import load_table

        table = load_table(spec.source)
        unknown = [c for c in spec.columns if c not in table]
        if unknown:
            raise ConfigError(
                f"{source}: '{where}.columns': {spec.source} has no column {unknown[0]!r}; columns: {', '.join(table)}"
            )
    check_listed(spec.labels, spec.task, f"{where}.", source)
    if kind in ("river", "file") and not spec.source:
        raise ConfigError(f"{source}: '{where}' of kind {kind!r} needs 'source'")
    if kind == "file" and spec.format not in ("svmlight", "mira", "csv", "text"):
        raise ConfigError(f"{source}: '{where}.format' must be svmlight, mira, csv or text, got {spec.format!r}")
    if spec.chunk_rows < 0:
        raise ConfigError(
            f"{source}: '{where}.chunk_rows' must be >= 1 (0: read it all at once), got {spec.chunk_rows}"
        )
    if spec.chunk_rows and spec.format == "text":
        raise ConfigError(f"{source}: '{where}.chunk_rows': a folder of text is read in memory; remove chunk_rows")
    key = kind == "file" and unread_setting(spec.format, {k: getattr(spec, k) for k in KEYS[kind] if k in FORMAT_KEYS})
    if key:  # (as train's options and a config's [data] keys: a setting its format does not read would do nothing)
        raise ConfigError(f"{source}: '{where}.{key}' applies to format {formats_reading(key)}, not to {spec.format!r}")
    if kind == "file" and spec.format == "csv" and not spec.target:  # (the reader's own message names --target)
        raise ConfigError(f"{source}: '{where}' of format csv needs 'target', the column of labels or values")
    if spec.stream:
        if spec.rows < 2 or spec.features < 1 or spec.concepts < 1 or spec.every < 1 or not 0 <= spec.noise < 0.5:
            raise ConfigError(
                f"{source}: '{where}': rows >= 2, features >= 1, concepts >= 1, every >= 1, noise in [0, 0.5)"
            )
        if kind in SYNTHETIC and spec.task not in ("", "binary"):
            raise ConfigError(f"{source}: '{where}.task': a {kind} stream is binary")
        try:  # (drawn whole: x_t and w_t in float64, ``synthetic``)
            what = f"a {kind} stream of {spec.rows:,} rows x {spec.features:,} features"
            refuse(estimate(spec.rows, spec.features, itemsize=16), f"{where}.rows", what)
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}", e.key) from None
    name = spec.name or (Path(spec.source).stem if kind == "file" else spec.source) or kind
    check_name(name, f"'{where}.name' =", source)
    return dataclasses.replace(spec, name=name)


def check_name(name: str, what: str, source: str) -> None:
    """The one rule of a study's names (its own, its data sets', its learners'), which name
    files and folders and are written into CSV and Markdown tables: letters, digits, '_', '.'
    and '-', not only dots. A name that could leave its folder (``../x``), end a table's cell
    (``|``, a newline) or a CSV field (``,``) is refused, naming it (``what``: its key)."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or not name.strip("."):
        raise ConfigError(
            f"{source}: {what} {name!r}: a name of letters, digits, '_', '.' or '-', not only dots "
            "(it names files and table rows)"
        )


def load(path, overrides=()) -> Study:
    """Read, override (``key=value``, as ``--set``) and validate a study file."""
    path = Path(path)
    raw = _read_toml(path)
    source = str(path) + (f" (with --set {', '.join(overrides)})" if overrides else "")
    return from_dict(apply_overrides(raw, overrides, example="evaluate.orders=4"), source)


# ---------------------------------------------------------------------------------------- data


class Dataset(NamedTuple):
    spec: DatasetSpec
    task: str
    labels: list | None
    draw: Any  # draw s -> SparseData in memory; the same data for every s unless the data set is a stream
    rows: int
    dense: bool
    source: Any = None  # a file read in chunks (``DatasetSpec.chunk_rows``): its ``Source``; draw is None
    steps: tuple = ()  # the parts in front of the default ones: a CSV file's imputation (``pipeline.csv_steps``)


def blocks(data: Dataset, rows, draw: int = 0):
    """The rows ``rows`` (indices in the stored order, ascending) of draw ``draw``, as
    ``SparseData``: all at once, or for a file read in chunks in blocks of ``chunk_rows`` of
    them (the last one shorter), gathered from the chunks as they are read (the next one
    parsed meanwhile), so that every block but the last has one shape: one compiled program."""
    if data.source is None:
        examples = data.draw(draw)
        yield SparseData(row(examples.X, rows), examples.y[rows], data.labels)
        return
    from ocolearn.data.stream import chunks, prefetched

    first, pending, size = 0, [], data.spec.chunk_rows
    for chunk in prefetched(chunks(data.source, None, size)):
        r = rows[(rows >= first) & (rows < first + len(chunk.y))] - first
        first += len(chunk.y)
        if len(r):
            pending.append((row(chunk.X, r), chunk.y[r]))
        while sum(len(y) for _, y in pending) >= size or (first == data.rows and pending):
            X, y = _joined(pending)
            pending = [(row(X, np.arange(size, len(y))), y[size:])] if len(y) > size else []
            yield SparseData(row(X, np.arange(min(size, len(y)))), y[:size], data.labels)


def _joined(parts):
    """Feature batches (of one width: ``read_dataset`` fixes the source's) and targets, one
    after the other."""
    X = [x for x, _ in parts]
    y = np.concatenate([t for _, t in parts])
    if not isinstance(X[0], Sparse):
        return np.concatenate(X), y
    return Sparse(np.concatenate([x.idx for x in X]), np.concatenate([x.val for x in X]), X[0].dim), y


def _from_arrays(X, y, task: str, key: str = "task") -> SparseData:
    """In-memory arrays through the one reading path (``arrays_source``), the task declared
    (by the study's ``key``) or inferred there."""
    from ocolearn.data.arrays import arrays_source
    from ocolearn.pipeline import in_memory, prepare

    source, _, _ = prepare(arrays_source(np.asarray(X, np.float64), y), task, key)
    return in_memory(source)


def _sklearn(spec: DatasetSpec, key: str) -> SparseData:
    try:
        from sklearn import datasets
    except ImportError:
        raise DataError(f"{spec.name}: scikit-learn is not installed (pip install scikit-learn)") from None
    X, y = getattr(datasets, f"load_{spec.source}")(return_X_y=True)
    task = spec.task or SKLEARN[spec.source]
    return _from_arrays(X, y if task == "regression" else y.astype(str), task, key)


def _river(spec: DatasetSpec, key: str) -> SparseData:
    try:
        from river import datasets
    except ImportError:
        raise DataError(f"{spec.name}: river is not installed (pip install river)") from None
    maker = getattr(datasets, spec.source, None)
    found = maker() if isinstance(maker, type) else None
    if found is None or type(found).__mro__[1].__name__ != "FileDataset":
        bundled = [
            n for n in dir(datasets) if isinstance(getattr(datasets, n), type) and _is_file(getattr(datasets, n))
        ]
        raise DataError(
            f"{spec.name}: {spec.source!r} is not one of river's bundled data sets; bundled: {', '.join(bundled)}"
        )
    rows = list(found)
    names = list(dict.fromkeys(k for x, _ in rows for k in x))
    X = np.array([[float(x.get(k) or 0.0) for k in names] for x, _ in rows])
    task = spec.task or {"Binary classification": "binary", "Regression": "regression"}.get(found.task, "multiclass")
    y = np.array([float(t) if task == "regression" else str(t) for _, t in rows])
    return _from_arrays(X, y, task, key)


def _is_file(cls) -> bool:
    return any(base.__name__ == "FileDataset" for base in cls.__mro__[1:2])


def synthetic(spec: DatasetSpec, seed: int) -> SparseData:
    """A drawn synthetic stream (``DatasetSpec``): x_t uniform in [-1, 1]^d, y_t = sign(w_t . x_t)
    with a fraction ``noise`` flipped."""
    rng = np.random.default_rng(seed)
    n, d = spec.rows, spec.features
    X = rng.uniform(-1.0, 1.0, (n, d))
    t = np.arange(n)
    if spec.kind == "hyperplane":
        a, b = np.linalg.qr(rng.standard_normal((d, 2)))[0].T if d > 1 else (np.ones(1), np.zeros(1))
        W = np.cos(spec.drift * t)[:, None] * a + np.sin(spec.drift * t)[:, None] * b
    else:
        concepts = rng.standard_normal((spec.concepts, d))
        concepts /= np.linalg.norm(concepts, axis=1, keepdims=True)
        W = concepts[(t // spec.every) % spec.concepts]
    y = np.where(np.sum(W * X, axis=1) >= 0, 1, -1)
    y = np.where(rng.uniform(size=n) < spec.noise, -y, y)
    # (before: "<arrays 2 x 10>: task = 'binary' needs exactly two labels", no key of its own)
    if n and np.all(y == y[0]):
        raise DataError(
            f"rows = {n}: every row drawn (seed {seed}) has the label {y[0]:+d}; a binary stream needs both"
        )
    return _from_arrays(X, np.array(["-1", "1"])[(y > 0).astype(int)], "binary")


def read_dataset(spec: DatasetSpec, key: str = "task") -> Dataset:
    """The data set in memory (features, targets, labels), through the one reading path; ``key``
    is the study's key of its task (``datasets[i].task``): errors name its keys by it
    (``datasets[i].labels``, ``datasets[i].dim``, ``ocolearn.names.key_of``)."""
    from ocolearn.experiment import read_examples

    if spec.stream:
        first = synthetic(spec, spec.seed)
        draw = lambda s: first if s == 0 else synthetic(spec, spec.seed + s)  # noqa: E731
        return Dataset(spec, "binary", first.labels, draw, spec.rows, True)
    if spec.chunk_rows:
        from ocolearn.data.stream import chunks, reader_of
        from ocolearn.pipeline import prepare, source_of

        options = dict(bits=spec.bits, dim=spec.dim, labels=spec.labels or None, zero_based=spec.zero_based)
        source, task, _ = prepare(source_of(spec.source, spec.format, target=spec.target, **options), spec.task, key)
        # The split needs the count; one width for every chunk, the width of the file in memory
        # (a padded row's sum runs over its width: the same width, the same sum, bit for bit).
        rows, width = 0, 0
        for chunk in chunks(source, None, spec.chunk_rows):
            rows, width = rows + len(chunk.y), max(width, getattr(chunk.X, "idx", np.zeros((0, 0))).shape[1])
        if not rows:
            raise DataError(f"{spec.source}: no examples")
        source = source._replace(width=source.width or width or None)
        labels = None if task == "regression" else list(source.labels)
        return Dataset(spec, task_of(labels), labels, None, rows, reader_of(source).dense, source, _steps(spec))
    if spec.kind == "sklearn":
        data = _sklearn(spec, key)
    elif spec.kind == "river":
        data = _river(spec, key)
    elif spec.kind == "bundled":
        from ocolearn import data as tables

        target = spec.target or BUNDLED[spec.source]
        table = tables.load_table(spec.source)
        features = spec.columns or [c for c, v in table.items() if c != target and v.dtype.kind in "fi"]
        data = read_examples(DataSpec(spec.source, "table", features, target, spec.batch_scale, task=spec.task), key)
    else:
        options = dict(bits=spec.bits, dim=spec.dim, task=spec.task, zero_based=spec.zero_based, labels=spec.labels)
        data = read_examples(DataSpec(spec.source, spec.format, target=spec.target, **options), key)
    dense = not isinstance(data.X, Sparse)
    return Dataset(spec, task_of(data.labels), data.labels, lambda s: data, len(data.y), dense, None, _steps(spec))


def _steps(spec: DatasetSpec) -> tuple:
    """A data set's parts in front of the default ones: a CSV file's imputation, as ``train`` has it."""
    if spec.kind != "file" or spec.format != "csv":
        return ()
    from ocolearn.pipeline import csv_steps

    return csv_steps(spec.source, spec.target)


def task_of(labels) -> str:
    return "regression" if labels is None else "binary" if len(labels) == 2 else "multiclass"


def split_rows(n: int, spec: EvaluateSpec, stream: bool, where: str):
    """``(tuning rows, rows reported on, held-out rows)``: index arrays in the stored order."""
    rows = np.arange(n)
    k = int(round(spec.tune * n))
    if (spec.tune_by or ("prefix" if stream else "split")) == "prefix":
        tune = rows[:k]
    else:
        tune = np.sort(np.random.default_rng(spec.tune_seed).permutation(n)[:k])
    rest = np.setdiff1d(rows, tune)
    held = np.sort(np.random.default_rng(spec.test_seed).permutation(rest)[: int(round(spec.test * len(rest)))])
    report = np.setdiff1d(rest, held)
    for key, chosen, what in (("tune", tune, "to tune on"), ("test", held, "held out"), ("", report, "to report on")):
        if len(chosen) == 0 and (not key or getattr(spec, key)):
            setting = f"evaluate.{key} = {getattr(spec, key)}" if key else "evaluate.tune and evaluate.test"
            raise DataError(f"{where}: {setting} of its {n} rows leaves no rows {what}")
    return tune, report, held


# ------------------------------------------------------------------------------------ learners


def fitted(entry: StudyLearner, data: Dataset, spec: EvaluateSpec, where: str, keys=("learners.", "task")):
    """``(inner, steps, prefix)``: the learner for the data set's task (``classes`` set from the
    data, a binary rule wrapped one-vs-rest on more than two classes; it picks the targets),
    the pipeline's parts it runs behind (``ocolearn.pipeline.TrainOptions.steps`` for
    ``evaluate.intercept`` and ``evaluate.scale``), and where its tuned keys sit in it."""
    from ocolearn.experiment import fit_learner, takes_classes
    from ocolearn.learners.one_vs_rest import OneVsRest
    from ocolearn.pipeline import TrainOptions

    inner, prefix = entry.learner, ""
    if data.task == "multiclass" and not takes_classes(inner):
        inner, prefix = OneVsRest(base=inner, classes=len(data.labels)), "base."
    inner = fit_learner(inner, SparseData(None, None, data.labels), where, keys)
    try:
        steps = TrainOptions(intercept=spec.intercept, scale=spec.scale).steps(data.dense)
    except ConfigError as e:
        raise ConfigError(f"{where}: evaluate.{e}") from None
    return inner, (*data.steps, *steps), prefix


def grid(entry: StudyLearner, inner, steps, prefix: str):
    """The grid's learners, stacked behind the pipeline (one learner when untuned), and its
    columns of values."""
    from ocolearn.learners.pipeline import with_pipeline
    from ocolearn.sweep import product, stack, stack_values

    if not entry.tune:
        return with_pipeline(stack([inner]), steps, stacked=1), {}
    columns = product(grid_axes(entry.tune))
    stacked = stack_values(inner, {prefix + k: v for k, v in columns.items()})
    return with_pipeline(stacked, steps, stacked=len(next(iter(columns.values())))), columns


def order_groups(data: Dataset, spec: EvaluateSpec) -> list:
    """``(draw, seeds)`` per sweep, whose orders concatenated are orders 0..S-1: a stream's order
    s is its draw s in its own order (seeds None); otherwise seeds 0..S-1 shuffle (``order =
    "shuffle"``), or the stored order comes first and seeds 0..S-2 shuffle (``"stored"``)."""
    if data.spec.stream:
        return [(s, None) for s in range(spec.orders)]
    if spec.order == "shuffle":
        return [(0, list(range(spec.orders)))]
    return [(0, None)] + ([(0, list(range(spec.orders - 1)))] if spec.orders > 1 else [])


def run_grid(learners, inner, data: Dataset, rows, spec: EvaluateSpec, trace: bool):
    """The stacked learners over the orders (``order_groups``) of ``rows`` (indices in the stored
    order): a ``Result`` with axes (C, S, ...); ``inner`` (the learner inside the pipeline)
    picks the targets. A file read in chunks runs chunk by chunk, the states and sums carried
    from one to the next (``sweep``'s ``carry``): its stored order gives the numbers of the
    file in memory, bit for bit, and a shuffle shuffles the rows within each block (``blocks``:
    a buffer of ``chunk_rows`` rows, as ``ocolearn train --seed`` shuffles within a chunk),
    block j by seed s + j * 2^16.
    What is kept is the trace (a few numbers per row and order), never the rows."""
    from ocolearn.pipeline import targets
    from ocolearn.run import Result
    from ocolearn.sweep import sweep

    outs = []
    for draw, seeds in order_groups(data, spec):
        result = None
        for j, block in enumerate(blocks(data, rows, draw)):
            chunk_seeds = None if seeds is None else [s + j * CHUNK_SEEDS for s in seeds]
            if result is None:
                carry = fresh(learners, num_features(block.X), len(seeds or [None]), trace)
            else:
                carry = (result.state, None if trace else result.trace)
            out = sweep(learners, block.X, targets(inner, block), chunk_seeds, trace=trace, carry=carry)
            if trace and result is not None:
                out = Result(
                    out.state, jax.tree.map(lambda a, b: np.concatenate([a, b], axis=2), result.trace, out.trace)
                )
            result = out
        outs.append(result)
    return jax.tree.map(lambda *a: np.concatenate(a, axis=1), *outs)


def fresh(learners, dim: int, orders: int, trace: bool):
    """``sweep``'s ``carry`` for a start: every configuration's initial state (and zero sums),
    an axis per configuration and per order. A state made inside the sweep instead keeps the
    parts that depend on no configuration (the pipeline's running means) without those axes,
    which XLA computes in another order, and a file read in chunks would not give the numbers
    of the file in memory bit for bit."""
    from ocolearn.run import _zero_summary

    if jax.tree.leaves(learners):
        state = jax.vmap(lambda learner: learner.init(dim))(learners)
    else:  # a learner without numbers (the Perceptron): one configuration
        state = jax.tree.map(lambda a: a[None], learners.init(dim))
    configs = jax.tree.leaves(state)[0].shape[0] if jax.tree.leaves(state) else 1
    summary = None if trace else jax.tree.map(lambda a: np.full(configs, a), _zero_summary())
    return jax.tree.map(lambda a: np.repeat(np.asarray(a)[:, None], orders, axis=1), (state, summary))


def held_out_errors(data: Dataset, inner, learner, states, held, spec: EvaluateSpec) -> list[float]:
    """Per order, the mean error (or squared error, ``per_round``) of the final weights (``states``,
    axes (S, ...)) on the held-out rows, learning nothing from them; a file read in chunks is
    read once more, every order scored on each chunk."""
    from ocolearn.pipeline import targets

    groups = order_groups(data, spec)
    draws = [draw for draw, seeds in groups for _ in (seeds or [None])]  # order s -> its draw
    errors = [[] for _ in draws]
    for draw in dict.fromkeys(draws):
        for block in blocks(data, held, draw):
            X, y = block.X, targets(inner, block)
            for s in (s for s, d in enumerate(draws) if d == draw):
                state = jax.tree.map(lambda a, s=s: a[s], states)
                prediction = jax.vmap(learner.predict, (None, 0))(state, X)  # (row i of X: every leaf's row i)
                errors[s].append(per_round(data.task, prediction, y))
    return [float(np.concatenate(e).mean()) for e in errors]


def per_round(task: str, prediction, target):
    """The error (a mistake, 0 or 1, as ``run.is_mistake`` counts it: a wrong sign or argmax,
    or a prediction that is not finite) or the squared error of each recorded prediction, in
    float64 (NumPy: nothing to compile)."""
    prediction, target = np.asarray(prediction, np.float64), np.asarray(target)
    if task == "regression":
        return (prediction - target) ** 2
    if prediction.ndim == target.ndim:
        wrong = ~(np.isfinite(prediction) & (prediction * target > 0))
    else:
        wrong = ~np.all(np.isfinite(prediction), axis=-1) | (np.argmax(prediction, axis=-1) != target)
    return wrong.astype(np.float64)


def regret_loss(study: Study, task: str, classes: int):
    """The loss regret is measured in for a task (None: no regret)."""
    from ocolearn.losses import Hinge, Logistic, MulticlassHinge, Squared

    name = study.evaluate.regret or ("squared" if task == "regression" else "hinge")
    if name == "none":
        return None
    if (name == "squared") != (task == "regression"):
        raise ConfigError(f"{study.source}: 'evaluate.regret' = {name!r} does not fit a {task} data set")
    if classes:
        if name == "logistic":
            raise ConfigError(f"{study.source}: 'evaluate.regret' = 'logistic' is binary; use 'hinge' on >2 classes")
        return MulticlassHinge()
    return {"squared": Squared(), "hinge": Hinge(), "logistic": Logistic()}[name]


# ----------------------------------------------------------------------------------- the study


@writes_folder("study")  # (the folder is written as a unit: the old one or the new one, never a mix)
def run_study(study: Study, out_dir, progress=None) -> dict:
    """Run every learner on every data set and write the outputs (module docstring) into
    ``out_dir``; returns the results (as ``results.json``)."""
    from ocolearn import provenance

    out = Path(out_dir)
    provenance.write(out)
    say = progress or (lambda text: None)
    results = {"name": study.name, "evaluate": dataclasses.asdict(study.evaluate), "datasets": {}}
    results["learners"] = study.to_config()["learners"]  # the settings and grids, with the numbers
    curves = {}
    for i, spec in enumerate(study.datasets):
        try:
            data = read_dataset(spec, f"datasets[{i}].task")
        except DataError as e:
            raise DataError(f"{study.source}: data set {spec.name!r}: {e}") from None
        n = data.rows
        tune, report, held = split_rows(n, study.evaluate, spec.stream, f"{study.source}: data set {spec.name!r}")
        entry = {"task": data.task, "rows": n, "tuning_rows": len(tune), "report_rows": len(report)}
        entry.update(held_out_rows=len(held), classes=len(data.labels or ()), learners={})
        comparators = _comparators(study, data, report)
        entry["regret_loss"] = comparators["loss"]
        entry["comparator"] = {k: v for k, v in comparators.items() if k not in ("regret_loss", "loss")}
        curves[spec.name] = {}
        for name, learner_entry in study.learners.items():
            say(f"{spec.name}: {name}")
            started = time.perf_counter()
            numbers, curve = evaluate_learner(study, learner_entry, data, (tune, report, held), comparators, name)
            numbers["wall_s"] = time.perf_counter() - started
            entry["learners"][name] = numbers
            curves[spec.name][name] = curve
        results["datasets"][spec.name] = entry
        del data, comparators  # (one data set held at a time, and its compiled programs:
        jax.clear_caches()  # each data set's shapes make programs of their own, of no use to the next)
    from ocolearn.significance import compare, paired

    key = "progressive" if study.evaluate.progressive else "held_out"
    for entry in results["datasets"].values():
        entry["paired"] = paired({name: numbers[key] for name, numbers in entry["learners"].items()})
    results["significance"] = compare(_scores(results), list(study.learners))
    write_outputs(study, results, curves, out)
    return results


def evaluate_learner(study: Study, entry: StudyLearner, data: Dataset, split, comparators, name: str):
    """One learner on one data set: tuned on the tuning rows, reported on the others."""
    from ocolearn.regret import loss_values

    tune_rows, report, held = split
    spec = study.evaluate
    keys = (f"learners.{name}.", f"datasets[{study.datasets.index(data.spec)}].task")
    where = f"{study.source}: learners.{name} on {data.spec.name!r}"
    inner, steps, prefix = fitted(entry, data, spec, where, keys)
    learners, columns = grid(entry, inner, steps, prefix)

    def runs(learners, rows, trace):
        try:
            return run_grid(learners, inner, data, rows, spec, trace)
        except ConfigError as e:  # (checks.check_rounds: a part's setting, keyed from the pipeline's learner)
            if e.key == "seeds":  # (sizes.refuse: the orders a sweep runs)
                raise ConfigError(f"{where}: {e.named('evaluate.orders')}", "evaluate.orders") from None
            if not (e.key or "").startswith("learner."):
                raise
            key = keys[0] + e.key.removeprefix("learner.").removeprefix(prefix)  # learners.NAME.levels
            raise ConfigError(f"{where}: {e.named(key)}", key) from None

    numbers: dict[str, Any] = {"learner": inner.name}
    chosen = 0
    if columns:
        result = runs(learners, tune_rows, trace=False)
        total = result.trace.squared_error if data.task == "regression" else result.trace.mistakes
        score = np.asarray(total, np.float64).mean(axis=1) / len(tune_rows)
        finite = np.isfinite(score)
        chosen = int(np.argmin(np.where(finite, score, np.inf))) if finite.any() else 0
        numbers["tuned"] = {k: float(v[chosen]) for k, v in columns.items()}
        numbers["tuning_score"] = float(score[chosen])
        numbers["grid_size"] = len(score)
    one = jax.tree.map(lambda a: a[chosen : chosen + 1], learners)
    result = runs(one, report, trace=True)
    trace = jax.tree.map(lambda a: a[0], result.trace)  # (S, T, ...)
    errors = per_round(data.task, trace.prediction, trace.target)
    numbers["progressive"] = errors.mean(axis=1).tolist()
    numbers["loss"] = np.asarray(trace.loss, np.float64).mean(axis=1).tolist()
    if comparators["loss"] != "none":
        loss = comparators["regret_loss"]
        charged = loss_values(loss, trace.prediction, trace.target).sum(axis=1)
        numbers["regret"] = (charged - np.asarray(comparators["totals"])).tolist()
    if len(held):
        states = jax.tree.map(lambda a: a[0], result.state)
        numbers["held_out"] = held_out_errors(data, inner, jax.tree.map(lambda a: a[0], one), states, held, spec)
    return numbers, np.cumsum(errors, axis=1) / np.arange(1, errors.shape[1] + 1)


def _comparators(study: Study, data: Dataset, report) -> dict:
    """The regret loss and, per order, the comparator's total loss over the rows reported on:
    the best fixed affine predictor in hindsight (exact for the squared loss; otherwise
    ``regret.best_fixed_convex`` with its tolerance and what it reached)."""
    from ocolearn.experiment import _dense
    from ocolearn.pipeline import target_map
    from ocolearn.regret import best_fixed_convex, least_squares, round_losses

    classes = len(data.labels) if data.task == "multiclass" else 0
    loss = None if data.source is not None else regret_loss(study, data.task, classes)  # (chunks: from_dict)
    if loss is None:
        return {"loss": "none"}
    draws = [data.draw(s) for s in range(study.evaluate.orders)] if data.spec.stream else [data.draw(0)]
    totals, reached = [], []
    for examples in draws:
        try:
            X = np.asarray(_dense(row(examples.X, report), data.spec.name), np.float64)
        except DataError:  # its message names 'ocolearn run'; here the way out is to measure no regret
            shape = f"{len(report)} rows x {num_features(examples.X)} features"
            raise DataError(
                f"{study.source}: data set {data.spec.name!r}: {shape} is too large for the dense offline "
                "comparator of the regret; set evaluate.regret = 'none'"
            ) from None
        # The best affine predictor of x is the best of standardized x: the same minimum, better conditioned.
        sd = X.std(axis=0)
        X = np.hstack([(X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0), np.ones((len(X), 1))])
        y = np.asarray(target_map(data.task, data.labels)(examples.y))[report]  # -1/+1, classes or numbers
        if loss.name == "squared":
            u = least_squares(X, y)
            totals.append(float(round_losses(loss, u, X, y, np.arange(len(y))).sum()))
        else:
            solved = best_fixed_convex(loss, X, y, classes, tol=study.evaluate.tolerance)
            totals.append(solved.total)
            reached.append(solved)
    out = {
        "loss": loss.name,
        "regret_loss": loss,
        "totals": totals * (1 if data.spec.stream else study.evaluate.orders),
    }
    if loss.name == "squared":
        out["solver"] = "exact: least squares (numpy lstsq), float64"
    else:
        out["solver"] = "L-BFGS (optax) in float64 on the total loss, stopped at gradient norm <= tolerance" + (
            ", on the hinge smoothed by mu log-sum-exp, mu down to 1e-4" if "hinge" in loss.name else ""
        )
        out["tolerance"] = study.evaluate.tolerance
        out["gradient_norm"] = max(s.gradient_norm for s in reached)
        out["smoothing_gap"] = max(s.smoothing_gap for s in reached)
    return out


def _scores(results: dict) -> dict:
    """``{data set: {learner: mean primary score}}``: the progressive score, or the held-out
    one where progressive validation is off."""
    key = "progressive" if results["evaluate"]["progressive"] else "held_out"
    return {  # (float64: a diverged score, NaN, reads null from results.json: NaN again)
        d: {name: float(np.mean(np.asarray(n[key], np.float64))) for name, n in entry["learners"].items()}
        for d, entry in results["datasets"].items()
    }


# ------------------------------------------------------------------------------------- outputs


def _mean_sd(values) -> tuple[float, float]:
    values = np.asarray(values, np.float64)
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


def _tuned_text(numbers: dict) -> str:
    return " ".join(f"{k}={v:.3g}" for k, v in numbers.get("tuned", {}).items())


LEADERBOARD = (
    "dataset",
    "learner",
    "task",
    "orders",
    "progressive_mean",
    "progressive_sd",
    "loss_mean",
    "loss_sd",
    "held_out_mean",
    "held_out_sd",
    "regret_mean",
    "regret_sd",
    "tuned",
    "tuning_score",
    "wall_s",
    "best",
)


def leaderboard_rows(results: dict) -> list[dict]:
    """A row per data set and learner (``LEADERBOARD`` columns); the best of each data set has
    ``best`` = 1 (lowest mean primary score, ties: the first)."""
    rows = []
    scores = _scores(results)
    for d, entry in results["datasets"].items():
        best = min(scores[d], key=lambda name: np.nan_to_num(scores[d][name], nan=np.inf))
        for name, numbers in entry["learners"].items():
            r = {"dataset": d, "learner": name, "task": entry["task"], "orders": len(numbers["progressive"])}
            for key in ("progressive", "loss", "held_out", "regret"):
                r[f"{key}_mean"], r[f"{key}_sd"] = _mean_sd(numbers[key]) if key in numbers else ("", "")
            r["tuned"] = _tuned_text(numbers)
            r["tuning_score"] = numbers.get("tuning_score", "")
            r["wall_s"] = numbers["wall_s"]
            r["best"] = int(name == best)
            rows.append(r)
    return rows


def leaderboard_csv(rows: list[dict]) -> str:
    """The rows as CSV, floats written to round-trip (``repr``)."""

    def cell(v):
        return repr(float(v)) if isinstance(v, float) else str(v)

    lines = [",".join(LEADERBOARD)] + [",".join(cell(r[c]) for c in LEADERBOARD) for r in rows]
    return "\n".join(lines) + "\n"


def leaderboard_markdown(results: dict) -> str:
    """The leaderboard as Markdown tables (learners x data sets), the best of each data set in
    bold, with the tuned values, the regret, the wall times and the significance test."""
    from ocolearn.significance import not_different

    rows = leaderboard_rows(results)
    datasets = list(results["datasets"])
    learners = list(dict.fromkeys(r["learner"] for r in rows))
    cell = {(r["dataset"], r["learner"]): r for r in rows}
    key = "progressive" if results["evaluate"]["progressive"] else "held_out"
    tasks = {e["task"] for e in results["datasets"].values()}
    what = "squared error" if tasks == {"regression"} else "error" if "regression" not in tasks else "error / sq. error"
    ranks = results["significance"].get("average_ranks", {})
    orders = results["evaluate"]["orders"]
    text = []

    def table(title, metric, digits, show_best=False, extra=None):
        header = "| learner | " + " | ".join(datasets) + (" | average rank |" if extra else " |")
        lines = [title, "", header, "|---|" + "---:|" * (len(datasets) + bool(extra))]
        for name in learners:
            cells = []
            for d in datasets:
                r = cell[(d, name)]
                if r[f"{metric}_mean"] == "":
                    cells.append("")
                    continue
                value = f"{r[f'{metric}_mean']:.{digits}f} ± {r[f'{metric}_sd']:.{digits}f}"
                if show_best and r["best"]:
                    value = f"**{value}**"
                if show_best and r["tuned"]:
                    value += f" ({r['tuned']})"
                cells.append(value)
            rank = f" {ranks[name]:.2f} |" if extra and name in ranks else " |" if extra else ""
            lines.append(f"| {name} | " + " | ".join(cells) + " |" + rank)
        text.extend(lines + [""])

    first = "Progressive" if key == "progressive" else "Held-out"
    table(
        f"{first} {what} (mean ± sd over {orders} order{'s' if orders != 1 else ''}; best per data set in bold; "
        "tuned value in brackets)",
        key,
        4,
        show_best=True,
        extra=True,
    )
    if key == "progressive" and any(r["held_out_mean"] != "" for r in rows):
        table(f"Held-out {what} of the final weights", "held_out", 4)
    if any(r["regret_mean"] != "" for r in rows):
        losses = ", ".join(sorted({e["regret_loss"] for e in results["datasets"].values()}))
        table(
            f"Regret against the best fixed affine function of the data set's features in hindsight, unconstrained "
            f"({losses} loss; not `ocolearn run`'s regret, which is against the learner's own feasible set "
            "on the rows as its pipeline fed them)",
            "regret",
            1,
        )
    times = ["| learner | " + " | ".join(datasets) + " |", "|---|" + "---:|" * len(datasets)]
    for name in learners:
        times.append(f"| {name} | " + " | ".join(f"{cell[(d, name)]['wall_s']:.1f}" for d in datasets) + " |")
    text.extend(["Wall time (seconds: tuning, compiling and running all orders)", "", *times, ""])
    lines = [
        "| data set | best | learners within p >= 0.05 of it (Wilcoxon signed-rank over orders) |",
        "|---|---|---|",
    ]
    diverged = []
    for d, entry in results["datasets"].items():
        close = [f"{n} ({p:.2g})" for n, p in not_different(entry["paired"]).items()]
        lines.append(f"| {d} | {entry['paired']['best']} | {', '.join(close) or 'none'} |")
        diverged += [f"{n} on {d} ({k} of {orders} orders)" for n, k in entry["paired"]["diverged"].items()]
    if diverged:  # (significance.paired: a diverged order is worse than any finite score)
        lines += ["", "Diverged (a score not finite; never counted as within p >= 0.05): " + ", ".join(diverged)]
    text.extend(["Paired over orders, on each data set", "", *lines, ""])
    text.append(results["significance"]["text"])
    return "\n".join(text) + "\n"


def tracked_metrics(results: dict) -> dict:
    """What ``--track`` logs as metrics: ``DATASET.LEARNER.progressive_mean`` (and the other
    means and standard deviations of the leaderboard), the average ranks and the Friedman test."""
    metrics: dict[str, Any] = {}
    for r in leaderboard_rows(results):
        numbers = {k: v for k, v in r.items() if k.endswith(("_mean", "_sd")) and v != ""}
        metrics.setdefault(r["dataset"], {})[r["learner"]] = {**numbers, "wall_s": r["wall_s"]}
    significance = results["significance"]
    if "average_ranks" in significance:
        metrics["average_rank"] = significance["average_ranks"]
        metrics["friedman"] = significance["friedman"]
    return metrics


def write_outputs(study: Study, results: dict, curves: dict, out: Path) -> None:
    import tomli_w

    from ocolearn import plots
    from ocolearn.io import atomic_write, write_json

    rows = leaderboard_rows(results)
    atomic_write(out / "leaderboard.csv", leaderboard_csv(rows))
    atomic_write(out / "leaderboard.md", leaderboard_markdown(results))
    atomic_write(out / "config.toml", tomli_w.dumps(study.to_config()))
    write_json(out / "results.json", results)
    write_json(out / "significance.json", results["significance"])
    for d, by_learner in curves.items():
        entry = results["datasets"][d]
        label = "squared error" if entry["task"] == "regression" else "error rate"
        plots.study_figure(by_learner, f"{d}: progressive {label}", label, out / f"progressive_{d}.png")
    if results["significance"].get("critical_difference") is not None:
        plots.cd_diagram(results["significance"], out / "cd.png")
