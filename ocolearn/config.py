"""TOML experiment files -> validated, fully resolved experiment specs.

An experiment file has the tables ``[data]``, ``[learner]``, ``[run]`` and optionally
``[pipeline]`` (the intercept and online scaling in front of the learner), ``[sweep]`` and
``[compare.NAME]`` (other learners to run on the same data, for comparison
scripts; see ``configs/``).
``[learner]`` and its nested parts name a registered part with ``kind`` and give its numeric
fields; a nested part may also be just its kind (``loss = "squared"``). Every key is checked:
an unknown key is an error that names the file, the key and the valid keys, and a value of the
wrong type names the expected type. ``--set learner.schedule.eta=0.1`` overrides any key
(the value is read as TOML, or taken as a string if it is not TOML).
"""

import dataclasses
import difflib
import math
import re
import tomllib
import types
import typing
from pathlib import Path
from typing import Any

import numpy as np

from ocolearn.checks import MAX_ROUNDS
from ocolearn.data.task import of_listed
from ocolearn.learners import Learner
from ocolearn.names import FORMAT_KEYS, MAX_SEED, SCALES, is_seed, label_list_problem, unread_setting
from ocolearn.parts import ConfigError, Part, fields_of

FORMATS = ("table", "svmlight", "mira", "csv", "text")
TASKS = ("", "regression", "binary", "multiclass")
SCORES = ("", "average_loss", "learner_loss", "error_rate", "hinge", "validation_loss", "validation_error")


@dataclasses.dataclass(frozen=True)
class DataSpec:
    """``[data]``. ``format = "table"``: ``source`` is a bundled table (``iris``, ``wine``) or a
    CSV file with a header, read as the ``features`` columns (default: every column but the
    target, as ``ocolearn train`` reads a CSV file) and the ``target`` column;
    ``"svmlight"``, ``"mira"`` or ``"csv"`` (every column but ``target`` a feature): a data
    file read as ``ocolearn train`` reads it (``bits``, ``dim``, ``zero_based``, ``labels``);
    ``"text"``: a folder with one folder of documents per label, as word counts (words indexed
    by a vocabulary, or hashed into ``2**bits`` buckets if ``bits`` is set), read in an order
    shuffled once by ``order_seed`` (folders come sorted by label). ``task`` is
    ``regression``, ``binary`` or ``multiclass`` (default: inferred from the target, see
    ``ocolearn.data.task``). ``test`` holds out a fraction of the rows (chosen by
    ``test_seed``) for the test metrics of the final weights. ``batch_scale`` prepares a
    table as R's ``scale()`` does (every numeric column, or the named ones, centred and scaled
    with the whole table's mean and deviation), as the OGD post prepared iris: it sees every
    row before the first round, so a progressive evaluation should use ``[pipeline] scale``."""

    source: str = "iris"
    format: str = "table"
    features: list[str] = dataclasses.field(default_factory=list)
    target: str = ""
    batch_scale: bool | list[str] = False  # columns scaled R-style; true scales every numeric column
    bits: int | None = None  # hash MIRA features (default 18) and words into 2^bits buckets
    test: float = 0.0
    test_seed: int = 0
    task: str = ""
    dim: int | None = None
    zero_based: bool = False
    labels: list[str] = dataclasses.field(default_factory=list)
    order_seed: int | None = 0


@dataclasses.dataclass(frozen=True)
class PipelineSpec:
    """``[pipeline]``: the preprocessing in front of the learner (``ocolearn.preprocess``), as
    ``ocolearn train`` applies it: ``intercept`` (a constant feature, left out of the
    learner's regularizer and projection) and the online ``scale`` (``auto``: standardize
    dense rows, normalize sparse rows; ``standardize``, ``normalize``, ``none``, ``river``: standardize
    by river's rule exactly)."""

    intercept: bool = True
    scale: str = "auto"


@dataclasses.dataclass(frozen=True)
class RunSpec:
    passes: int = 1
    shuffle_seed: int | None = None  # absent: the stored order
    predict_after_update: bool = False
    snapshot_every: int = 0
    stop_early: bool = False  # classifiers: stop after a pass without mistakes


MAX_RUNS = 2**20  # configurations times seeds in one sweep
RANGES = {"linspace": np.linspace, "logspace": np.logspace, "geomspace": np.geomspace}


@dataclasses.dataclass(frozen=True)
class SweepSpec:
    """``[sweep]``: ``values`` maps learner keys (``"learner.schedule.eta"``) to a list of
    numbers or a range ``{linspace|logspace|geomspace = [start, stop, num]}`` (numpy's
    meaning); ``seeds`` shuffled orders (seeds 0..seeds-1; 0: the run's own order);
    ``validation`` a fraction of rows held out (chosen by ``validation_seed``) to score the
    final weights on; ``score`` what picks the best (default: ``validation_loss`` or
    ``average_loss`` for regression, ``validation_error`` or ``error_rate`` for classifiers;
    ``hinge`` or ``learner_loss``: the mean loss the learner was charged)."""

    values: dict = dataclasses.field(default_factory=dict)
    seeds: int = 0
    validation: float = 0.0
    validation_seed: int = 0
    score: str = ""

    def axes(self) -> dict[str, np.ndarray]:
        """The swept values of each key, as arrays."""
        return grid_axes(self.values)


def grid_axes(values: dict) -> dict[str, np.ndarray]:
    """Each key's values, as an array: a list as it is, a range table through numpy."""
    out = {}
    for key, value in values.items():
        if isinstance(value, dict):
            ((kind, (start, stop, num)),) = value.items()
            value = RANGES[kind](start, stop, int(num))
        out[key] = np.asarray(value, np.float64)
    return out


@dataclasses.dataclass(frozen=True)
class Experiment:
    name: str
    learner: Learner
    data: DataSpec = DataSpec()
    pipeline: PipelineSpec = PipelineSpec()
    run: RunSpec = RunSpec()
    sweep: SweepSpec | None = None
    description: str = ""
    source: str = "<config>"  # the file it was read from
    compare: dict = dataclasses.field(default_factory=dict)  # name -> Learner

    def _reads(self, table: str, key: str) -> bool:
        """Whether the resolved config keeps ``table.key``: not a reading setting of another
        format (``data.order_seed``'s default for an svmlight file), which a config may not set."""
        return table != "data" or key not in FORMAT_KEYS or self.data.format in FORMAT_KEYS[key]

    def to_config(self) -> dict[str, Any]:
        """The resolved experiment as a TOML-ready dict (absent keys are left out)."""
        table = {"name": self.name, "description": self.description}
        for key in ("data", "pipeline", "run", "sweep"):
            if getattr(self, key) is not None:
                spec = dataclasses.asdict(getattr(self, key))
                table[key] = {k: v for k, v in spec.items() if v is not None and self._reads(key, k)}
        table["learner"] = self.learner.to_config()
        if self.compare:
            table["compare"] = {name: learner.to_config() for name, learner in self.compare.items()}
        return table


PLURALS = {float: "numbers", int: "integers", str: "strings"}  # a list's items, as messages name them


def _type_name(tp) -> str:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        names = [_type_name(a) for a in typing.get_args(tp)]
        return (", or " if any(" or " in name for name in names) else " or ").join(names)  # (true or false, or ...)
    if typing.get_origin(tp) is list:
        item = typing.get_args(tp)[0]
        return f"a list of {PLURALS.get(item) or _type_name(item)}"
    if isinstance(tp, type) and issubclass(tp, Part):
        return f"a {tp.__name__.lower()} ({', '.join(sorted(tp.registry))})"
    return {
        float: "a number",
        int: "an integer",
        bool: "true or false",
        str: "a string",
        dict: "a table of numbers",
        type(None): "absent",
    }.get(tp, str(tp))


def _fits(value, tp) -> bool:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in typing.get_args(tp))
    if origin is list:
        return isinstance(value, list) and all(_fits(v, typing.get_args(tp)[0]) for v in value)
    if tp is float:
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is dict:
        return isinstance(value, dict) and all(_fits(v, float) for v in value.values())
    return isinstance(value, tp)


def _unknown(key, where, valid, source, deeper=()):
    """The error for an unknown ``key``: the valid key it is closest to, else the key of a part
    inside of that name (``eta`` given to OGD: ``schedule.eta``; ``deeper``: those keys)."""
    close = difflib.get_close_matches(key, valid, n=1) or [k for k in deeper if k.rsplit(".", 1)[-1] == key][:1]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"{source}: unknown key '{where}{key}'{hint}; valid keys: {', '.join(valid)}")


def _check_keys(table: dict, valid, where: str, source: str, deeper=()):
    for key in table:
        if key not in valid:
            raise _unknown(key, where, list(valid), source, deeper)


def _is_part(tp) -> bool:
    return isinstance(tp, type) and issubclass(tp, Part)


def _from_file(tp) -> bool:
    """Fields a file can set: numbers, names, switches, parts, tables of numbers, and unions
    with one of these (``float | None``, the name of an optax transformation)."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return any(a is not type(None) and _from_file(a) for a in typing.get_args(tp))
    return tp in (float, int, str, bool, dict) or _is_part(tp)


def keys_of(cls: type) -> dict[str, Any]:
    """The keys a file may set in a table read into ``cls``, with their types, as the checker reads
    them: a spec's fields (``DataSpec``), or a part's numbers, names, switches, parts and tables of
    numbers (besides ``kind``; other fields keep their defaults). The reference pages list them."""
    hints = typing.get_type_hints(cls)
    return {n: hints[n] for n in fields_of(cls) if _from_file(hints[n])} if _is_part(cls) else hints


def _build_part(family: type, value, where: str, source: str):
    """A part of ``family`` from a table ``{kind = ..., field = ...}`` or a bare kind string."""
    table = {"kind": value} if isinstance(value, str) else value
    if not isinstance(table, dict) or "kind" not in table:
        raise ConfigError(f"{source}: '{where}' must be {_type_name(family)}, given as a kind or a table with 'kind'")
    kind = table["kind"]
    cls = family.registry.get(kind)
    if cls is None:
        named = sorted(k for k, c in family.registry.items() if getattr(c, "from_files", True))  # (not pipeline)
        close = difflib.get_close_matches(str(kind), named, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"{source}: '{where}.kind' = {kind!r} is not a known {family.__name__.lower()}{hint}; "
            f"known: {', '.join(named)}"
        )
    if not getattr(cls, "from_files", True):
        raise ConfigError(f"{source}: '{where}.kind' = {kind!r} takes a Python callable and cannot come from a file")
    hints = keys_of(cls)
    fields = {n: fields_of(cls)[n] for n in hints}
    parts = {n: type(f.default) for n, f in fields.items() if isinstance(f.default, Part)}
    _check_keys(
        table, ["kind", *fields], f"{where}.", source, [f"{n}.{k}" for n, c in parts.items() for k in fields_of(c)]
    )
    kwargs = {}
    for name in fields:
        if name not in table:
            continue
        tp = hints[name]
        if _is_part(tp):
            value, default = table[name], fields[name].default
            if isinstance(value, dict) and "kind" not in value and isinstance(default, Part):
                value = {**default.to_config(), **value}  # a field of the default part (schedule.eta=0.1)
            kwargs[name] = _build_part(tp, value, f"{where}.{name}", source)
        elif _fits(table[name], tp):
            number = tp is float or (_fits(table[name], float) and float in typing.get_args(tp))
            value = {k: float(v) for k, v in table[name].items()} if isinstance(table[name], dict) else table[name]
            kwargs[name] = float(value) if number else value
        elif isinstance(table[name], dict) and dict in (tp, *typing.get_args(tp)):
            key, value = next((k, v) for k, v in table[name].items() if not _fits(v, float))
            raise ConfigError(f"{source}: '{where}.{name}.{key}' must be a finite number, got {value!r}")
        else:
            raise ConfigError(f"{source}: '{where}.{name}' must be {_type_name(tp)}, got {table[name]!r}")
    try:
        part = cls(**kwargs)
        check_in_run_dtype(part)
        return part
    except ConfigError as e:  # a number out of its declared range, named by its key
        e = e.at(where)
        raise ConfigError(f"{source}: {e}", e.key) from None
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{source}: '{where}': {e}") from None


def _build_spec(cls, table, where: str, source: str):
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: '{where}' must be a table")
    hints = keys_of(cls)
    _check_keys(table, list(hints), f"{where}.", source)
    for key, value in table.items():
        if not _fits(value, hints[key]):
            raise ConfigError(f"{source}: '{where}.{key}' must be {_type_name(hints[key])}, got {value!r}")
    return cls(**table)


TOP = ("name", "description", "data", "pipeline", "learner", "run", "sweep", "compare")
MOVED = {
    "data.scale": "'pipeline.scale' (online: each row scaled with the rows before it) or 'data.batch_scale' "
    "(R's scale() over the whole table, as the OGD post prepared iris)",
    "data.intercept": "'pipeline.intercept' (on by default)",
}


def _build_sweep(table, learner, source: str) -> SweepSpec:
    from ocolearn.sweep import leaf_paths

    if not isinstance(table, dict):
        raise ConfigError(f"{source}: 'sweep' must be a table")
    values = table.get("values", {})
    spec = _build_spec(SweepSpec, {**table, "values": {}}, "sweep", source)
    if not isinstance(values, dict) or not values:
        raise ConfigError(f"{source}: '[sweep.values]' must name at least one learner key and its values")
    valid = ["learner." + p for p in leaf_paths(learner)]
    if not valid:  # (else "unknown key ...; valid keys: ", an empty list)
        raise ConfigError(f"{source}: '[sweep]': learner {learner.name!r} has no numbers to sweep; run it with 'run'")
    for key in values:
        if key not in valid and _names_a_field(learner, key.removeprefix("learner.")):
            raise ConfigError(
                f"{source}: 'sweep.values.{key}': {key} chooses the program, not a number in it, so one sweep "
                f"cannot vary it; run one config per value (numbers it can sweep: {', '.join(valid)})"
            )
    check_grid(values, valid, "sweep.values.", source)
    if not 0.0 <= spec.validation < 1.0:
        raise ConfigError(f"{source}: 'sweep.validation' must be a fraction in [0, 1), got {spec.validation}")
    if spec.seeds < 0:
        raise ConfigError(f"{source}: 'sweep.seeds' must be a number of orders >= 0, got {spec.seeds}")
    sizes = {key: next(iter(v.values()))[2] if isinstance(v, dict) else len(v) for key, v in values.items()}
    runs = math.prod(sizes.values()) * max(spec.seeds, 1)
    if runs > MAX_RUNS:  # (each run holds a state: a sweep beyond this would only run out of memory)
        shape = " x ".join(f"{n} ({key})" for key, n in sizes.items()) + (
            f" x {spec.seeds} seeds" if spec.seeds else ""
        )
        raise ConfigError(f"{source}: '[sweep]' asks for {shape} = {runs} runs, more than {MAX_RUNS}")
    check_grid_ranges(learner, values, "sweep.values.", source, prefix="learner.")
    if spec.score not in SCORES:
        raise ConfigError(f"{source}: 'sweep.score' must be one of {', '.join(SCORES[1:])}, got {spec.score!r}")
    if spec.score.startswith("validation") and not spec.validation:
        raise ConfigError(f"{source}: 'sweep.score' = {spec.score!r} needs 'sweep.validation' > 0")
    return dataclasses.replace(spec, values=values)


def _names_a_field(part, dotted: str) -> bool:
    """Whether ``dotted`` (``variant``, ``loss.kind``) names a field of ``part`` or of its parts."""
    for name in dotted.split("."):
        if name == "kind" and isinstance(part, Part):
            return True
        if not isinstance(part, Part) or name not in fields_of(type(part)):
            return False
        part = getattr(part, name)
    return True


def check_grid_ranges(learner, values: dict, where: str, source: str, prefix: str = "") -> None:
    """Each key's values (a grid in the sweep syntax, keys ``prefix`` + a leaf path of
    ``learner``) in their declared range, named by the key and the value's place in its list
    (sweeps and studies checked them only when they ran, naming neither the file nor the key)."""
    from ocolearn.sweep import stack_values

    for key, column in grid_axes(values).items():
        try:
            check_in_run_dtype(stack_values(learner, {key.removeprefix(prefix): np.asarray(column)}), "learner")
        except ConfigError as e:
            raise ConfigError(f"{source}: '{where}{key}': {e}", e.key) from None


TINY = float(np.finfo(np.float32).tiny)  # float32's smallest normal number; XLA's CPU flushes those below to 0
HUGE = float(np.finfo(np.float32).max)


def check_in_run_dtype(part, where: str = "") -> None:
    """``part.check(where)`` on its numbers as a run computes with them: float32, with a number
    below ``TINY`` in size flushed to 0 (``C = 1e-45`` passes ``> 0`` in float64 and ran as
    0). An error names the key and the value given."""
    import jax

    def as_run(leaf):
        value = np.asarray(leaf, np.float32)
        return np.where(np.abs(value) < TINY, np.float32(0), value)

    part.check(where)  # (the values as given: their own message)
    try:
        jax.tree.map(as_run, part).check(where)
    except ConfigError as e:
        raise ConfigError(
            f"{e} in float32, the precision runs compute in (below {TINY:.3g} is 0 there, above {HUGE:.3g} infinite)",
            e.key,
        ) from None


SEEDS = ("data.test_seed", "data.order_seed", "run.shuffle_seed", "sweep.validation_seed")


def _check_seeds(raw: dict, source: str) -> None:
    """Each seed is a whole number in 0..``MAX_SEED`` (see ``ocolearn.names``)."""
    for key in SEEDS:
        table, name = key.split(".")
        check_seed(raw.get(table, {}).get(name) if isinstance(raw.get(table), dict) else None, key, source)


def check_seed(value, key: str, source: str) -> None:
    """An integer seed (of a config, a study) is in 0..``MAX_SEED``, else an error naming ``key``."""
    if isinstance(value, int) and not isinstance(value, bool) and not is_seed(value):
        raise ConfigError(f"{source}: '{key}' must be a seed in 0..{MAX_SEED}, got {value}")


def check_grid(values: dict, valid: list[str], where: str, source: str) -> None:
    """Check a grid in the sweep syntax (``[sweep.values]``, a study's ``[learners.NAME.tune]``):
    every key one of ``valid``, every value a non-empty list of numbers or one range table
    ``{linspace|logspace|geomspace = [start, stop, num]}``."""
    for key, value in values.items():
        if key not in valid:
            raise _unknown(key, where, valid, source)
        if isinstance(value, dict):
            ok = len(value) == 1 and next(iter(value)) in RANGES
            args = next(iter(value.values())) if ok else None
            ok = ok and isinstance(args, list) and len(args) == 3 and all(_fits(a, float) for a in args[:2])
            if not (ok and _fits(args[2], int) and args[2] >= 1):
                raise ConfigError(
                    f"{source}: '{where}{key}' must be a list of numbers or one of "
                    f"{{{' | '.join(RANGES)} = [start, stop, num]}}, got {value!r}"
                )
            if "geomspace" in value and 0 in args[:2]:  # (numpy raises: a geometric sequence never reaches 0)
                raise ConfigError(f"{source}: '{where}{key}': geomspace's start and stop must not be 0, got {value!r}")
        elif not (isinstance(value, list) and value and all(_fits(v, float) for v in value)):
            raise ConfigError(f"{source}: '{where}{key}' must be a non-empty list of numbers, got {value!r}")


def from_dict(raw: dict, source: str = "<config>") -> Experiment:
    """Validate a raw config dict (as read from TOML) into an ``Experiment``."""
    _check_keys(raw, TOP, "", source)
    for key in ("name", "learner"):
        if key not in raw:
            raise ConfigError(f"{source}: missing key '{key}'")
    for key in ("name", "description"):
        if key in raw and not isinstance(raw[key], str):
            raise ConfigError(f"{source}: '{key}' must be a string, got {raw[key]!r}")
    name = raw["name"]
    if not name or name in (".", "..") or any(c in name for c in "/\\\0") or not name.isprintable():
        # (the default output folder is runs/NAME: a name with a path would write outside runs/)
        raise ConfigError(f"{source}: 'name' must be a plain name (no '/', '\\' or '..'), got {name!r}")
    for key, hint in MOVED.items():
        table, name = key.split(".")
        if isinstance(raw.get(table), dict) and name in raw[table]:
            raise ConfigError(f"{source}: '{key}' is now {hint}")
    data = _build_spec(DataSpec, raw.get("data", {}), "data", source)
    pipeline = _build_spec(PipelineSpec, raw.get("pipeline", {}), "pipeline", source)
    if pipeline.scale not in SCALES:
        raise ConfigError(f"{source}: 'pipeline.scale' must be one of {', '.join(SCALES)}, got {pipeline.scale!r}")
    if data.format not in FORMATS:
        raise ConfigError(f"{source}: 'data.format' must be one of {', '.join(FORMATS)}, got {data.format!r}")
    if data.format == "table" and not data.target:
        raise ConfigError(f"{source}: '[data]' needs 'target', the column of labels or values")
    _check_seeds(raw, source)
    if not 0.0 <= data.test < 1.0:
        raise ConfigError(f"{source}: 'data.test' must be a fraction in [0, 1), got {data.test}")
    if data.task not in TASKS:
        raise ConfigError(f"{source}: 'data.task' must be one of {', '.join(TASKS[1:])}, got {data.task!r}")
    written = raw.get("data", {})  # (the keys written: order_seed's default, 0, is a seed)
    key = unread_setting(data.format, {key: getattr(data, key) for key in FORMAT_KEYS if key in written})
    if key:
        formats = " or ".join(FORMAT_KEYS[key])
        raise ConfigError(f"{source}: 'data.{key}' applies to 'data.format' {formats}, not to {data.format!r}")
    if data.format == "csv" and not data.target:
        raise ConfigError(f"{source}: '[data]' of format 'csv' needs 'target', the column of labels or values")
    check_listed(data.labels, data.task, "data.", source)
    if data.bits is not None and not 1 <= data.bits <= 30 or data.dim is not None and data.dim < 1:
        raise ConfigError(f"{source}: 'data.bits' must be in 1..30 and 'data.dim' >= 1")
    learner = _build_part(Learner, raw["learner"], "learner", source)
    compare = raw.get("compare", {})
    if not isinstance(compare, dict):
        raise ConfigError(f"{source}: 'compare' must be a table of learner tables, [compare.NAME]")
    compare = {name: _build_part(Learner, table, f"compare.{name}", source) for name, table in compare.items()}
    run = _build_spec(RunSpec, raw.get("run", {}), "run", source)
    if not 1 <= run.passes <= MAX_ROUNDS:
        raise ConfigError(f"{source}: 'run.passes' must be in 1..{MAX_ROUNDS}, got {run.passes}")
    if run.snapshot_every < 0:
        raise ConfigError(f"{source}: 'run.snapshot_every' must be >= 0, got {run.snapshot_every}")
    return Experiment(
        compare=compare,
        name=raw["name"],
        description=raw.get("description", ""),
        learner=learner,
        data=data,
        pipeline=pipeline,
        run=run,
        sweep=_build_sweep(raw["sweep"], learner, source) if "sweep" in raw else None,
        source=source,
    )


def check_listed(labels: list, task: str, prefix: str, source: str) -> None:
    """Classes a file lists (a config's ``data.labels``, a study's ``datasets[k].labels``, keys
    ``prefix + "labels"``), before any data is read: by the rule of every list of labels
    (``ocolearn.names.label_list_problem``, train's ``--labels`` too), and agreeing with the
    declared task (``ocolearn.data.task.of_listed``)."""
    if not labels:
        return
    problem = label_list_problem(labels)
    if problem:
        raise ConfigError(f"{source}: '{prefix}labels': {problem}")
    of_listed(labels, task, f"{prefix}task", source)


def check_data_path(experiment: Experiment) -> None:
    """An experiment's ``data.source`` that names no bundled table and no file or folder is an
    error naming the config and the key (the reader's own message names only the path). A
    relative path is read from the current folder, as on the command line."""
    from ocolearn.data import BUNDLED

    spec = experiment.data
    if spec.format == "table" and spec.source in BUNDLED or Path(spec.source).exists():
        return
    raise ConfigError(
        f"{experiment.source}: 'data.source' = {spec.source!r}: no such file or folder "
        f"(a relative path is read from the current folder, {Path.cwd()})"
    )


def _key_path(key: str, text: str, source: str, example: str = "learner.schedule.eta=0.1") -> list:
    """A dotted key as TOML reads it (quoted parts may hold dots), with ``[i]`` after a name
    for the i-th table of a list, as a study's messages name them (``datasets[0].seed``: the
    index is an int in the path); under ``sweep.values`` the rest is one learner key, so
    ``sweep.values.learner.schedule.eta`` needs no quotes."""
    try:
        table = tomllib.loads(re.sub(r"\[(\d+)\]", r'."[\1]"', key) + " = 0")
    except tomllib.TOMLDecodeError:
        raise ConfigError(f"{source}: {text!r}: {key!r} is not a key (for example {example.split('=')[0]})") from None
    path: list = []
    while isinstance(table, dict):
        ((name, table),) = table.items()
        path.append(int(name[1:-1]) if re.fullmatch(r"\[\d+\]", name) else name)
    if isinstance(path[-1], int):
        raise ConfigError(f"{source}: {text!r}: {key!r} is a table; set one of its keys ({key}.KEY=VALUE)")
    if path[:2] == ["sweep", "values"] and len(path) > 3:
        path = [*path[:2], ".".join(path[2:])]
    return path


def dotted(path) -> str:
    """A key's path as messages write it: ``learner.schedule.eta``, ``datasets[0].seed``."""
    return "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path)[1:]


def parse_override(text: str, source: str = "--set", example: str = "learner.schedule.eta=0.1") -> tuple[list, Any]:
    """``"a.b=value"`` -> ``(["a", "b"], value)``; the value is TOML, or else a plain string.
    Errors show the door's ``example`` of an override."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"{source}: {text!r} is not of the form key=value (for example {example})")
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value
    except RecursionError:
        raise ConfigError(f"{source}: {text[:60]!r}...: {TOO_DEEP}") from None
    return _key_path(key.strip(), text, source, example), parsed


def apply_overrides(raw: dict, overrides, example: str = "learner.schedule.eta=0.1") -> dict:
    """A copy of ``raw`` with each ``key=value`` override set (tables are created as needed).
    A part's ``kind`` set to another kind drops the old kind's fields that came from the file
    (``projection.kind=identity`` on an L2 ball leaves no ``radius`` behind); fields set by
    ``--set`` are kept. A malformed override's error shows ``example``, a key of the door."""
    import copy

    raw, given = copy.deepcopy(raw), set()
    for text in overrides:
        path, value = parse_override(text, example=example)
        if tuple(path) in given:  # (the last would win in silence)
            raise ConfigError(f"--set {text}: '{dotted(path)}' is set twice; give it once")
        table = raw
        for i, key in enumerate(path[:-1]):
            if isinstance(key, int):  # (the file's i-th table of a list: [[datasets]])
                nxt = table[key] if isinstance(table, list) and key < len(table) else None
            else:
                nxt = table.setdefault(key, {})
            if isinstance(nxt, str):  # a part given by its kind alone
                nxt = table[key] = {"kind": nxt}
            if not isinstance(nxt, dict) and not (isinstance(nxt, list) and isinstance(path[i + 1], int)):
                what = (
                    f"not in the file ('{dotted(path[:i])}' has {len(table)})"
                    if isinstance(table, list)
                    else "not a table"
                )
                raise ConfigError(f"--set {text}: '{dotted(path[: i + 1])}' is {what}")
            table = nxt
        if path[-1] == "kind" and "kind" in table and table["kind"] != value:
            for key in [k for k in table if (*path[:-1], k) not in given]:
                del table[key]
        table[path[-1]] = value
        given.add(tuple(path))
    return raw


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))  # (TOML is UTF-8, whatever the locale)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except UnicodeDecodeError as e:
        line = path.read_bytes()[: e.start].count(b"\n") + 1
        raise ConfigError(f"{path}, line {line}: not UTF-8 text (a TOML file is UTF-8)") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{path}: {TOO_DEEP}") from None


TOO_DEEP = "arrays or tables nested too deep for Python to read"  # (Python's RecursionError)


def load(path, overrides=()) -> Experiment:
    """Read, override and validate an experiment file."""
    path = Path(path)
    raw = _read_toml(path)
    if "datasets" in raw:
        raise ConfigError(f"{path}: a study file ([[datasets]], [learners.NAME]): run 'ocolearn study {path}'")
    if "study" in raw:
        raise ConfigError(f"{path}: a study file ([study], [learners.NAME]): run experiments/{path.stem}.py")
    source = str(path) + (f" (with --set {', '.join(overrides)})" if overrides else "")
    swept = (raw.get("sweep") or {}).get("values") or {}
    for text in overrides:
        key = dotted(parse_override(text)[0])
        if isinstance(swept, dict) and key in swept:  # (the sweep's values would replace it, silently)
            raise ConfigError(
                f"--set {text}: {path} sweeps '{key}'; to run one value, --set 'sweep.values.{key}=[...]'"
            )
    return from_dict(apply_overrides(raw, overrides), source)


def load_study(path) -> tuple[dict, dict[str, Learner]]:
    """A study file of generated sequences (``configs/experts.toml``, ``configs/rates.toml``):
    its ``[study]`` table (the script's settings: sizes, seeds, sequence names), and its
    ``[learners.NAME]`` tables, each checked and built as a learner like ``[learner]``."""
    path = Path(path)
    raw = _read_toml(path)
    _check_keys(raw, ["name", "description", "study", "learners"], "", str(path))
    learners = raw.get("learners", {})
    if not isinstance(raw.get("study", {}), dict) or not isinstance(learners, dict) or not learners:
        raise ConfigError(f"{path}: a study file has a [study] table and at least one [learners.NAME] table")
    built = {name: _build_part(Learner, table, f"learners.{name}", str(path)) for name, table in learners.items()}
    return raw.get("study", {}), built
