"""The task of a data set: regression, binary or multiclass, declared or inferred once.

A reader turns bytes into rows and keeps each label as written; the task says what the labels
mean. It is declared (``--task``, ``[data] task``) or inferred from the labels a first pass
found (``Labels``): names that are not all numbers are classes; numbers with a fraction, or
more than ``MAX_CLASSES`` distinct ones, are a real-valued target (regression), never
thousands of classes; other numbers are classes. Two classes are binary, more multiclass.

>>> infer(Labels(["-1", "1"], numeric=True, integral=True))
'binary'
>>> infer(Labels(["0.5", "1.25", "3"], numeric=True, integral=False))
'regression'
"""

from __future__ import annotations

from typing import NamedTuple

from ocolearn.data import DataError, _number, shown
from ocolearn.names import TASKS, key_of, written_twice

MAX_CLASSES = 100  # a numeric target with more distinct values is read as regression
MAX_LABELS = 10000  # distinct labels a first pass keeps (beyond: "more")


class Labels(NamedTuple):
    """What a first pass found about the labels."""

    names: list  # the distinct label names, sorted (numerically when numeric), at most MAX_LABELS
    numeric: bool = False  # every label is a number
    integral: bool = False  # ... and a whole number
    more: bool = False  # there were more than MAX_LABELS distinct labels
    spellings: tuple = ()  # the labels as written where ``names`` are not (svmlight's numbers, named by %g)


def declaring(key: str, *tasks: str) -> str:
    """Declaring the task in the words of its door: an option ``--task a|b``, or a config's key
    ``data.task = 'a' or 'b'``."""
    return f"{key} {'|'.join(tasks)}" if key.startswith("--") else f"{key} = " + " or ".join(map(repr, tasks))


def infer(labels: Labels, declared: str = "", where: str = "the data", key: str = "--task") -> str:
    """The task: ``declared`` if given (checked against the labels), else inferred (see the
    module docstring). ``key`` is what declared it, as messages name it: ``--task`` (train),
    ``data.task`` (a config)."""
    if declared and declared not in TASKS:
        raise DataError(f"{key}: {declared!r} is not one of {', '.join(TASKS)}")
    count = f"more than {MAX_LABELS}" if labels.more else str(len(labels.names))
    real = labels.numeric and (not labels.integral or labels.more or len(labels.names) > MAX_CLASSES)
    if declared == "regression":
        if not labels.numeric:
            first = next(n for n in labels.names if not _is_number(n))
            raise DataError(
                f"{where}: {declaring(key, declared)} needs numeric targets; label {shown(first)} is not a number"
            )
        return declared
    if real and not declared:
        return "regression"
    _written_alike(labels.spellings or labels.names, where)
    if declared:
        if labels.more:
            raise DataError(
                f"{where}: {count} distinct labels cannot be classes ({declaring(key, declared)}); "
                f"is it a regression target? ({declaring(key, 'regression')})"
            )
        if declared == "binary" and len(labels.names) != 2:
            raise DataError(f"{where}: {declaring(key, declared)} needs exactly two labels, the data has {count}")
        return declared
    if len(labels.names) < 2:
        quantity = f"; if it is a quantity to predict, declare {declaring(key, 'regression')}" if labels.numeric else ""
        raise DataError(
            f"{where}: only one label, {shown(labels.names[0])}; classification needs two or more{quantity}"
        )
    return "binary" if len(labels.names) == 2 else "multiclass"


def of_listed(names, declared: str = "", key: str = "--task", where: str = "the data") -> str:
    """The task of classes a user listed (``--labels``, ``data.labels``: the classes, whatever
    labels the data holds, each checked as it is read): ``declared`` if it fits them, else
    binary for two, multiclass for more. Listed classes with a declared regression task would
    be ignored, and are refused with it."""
    listing = key_of(key, "labels")
    if declared == "regression":
        raise DataError(
            f"{where}: {listing} lists classes, but {declaring(key, 'regression')} has none; leave out one of them"
        )
    if declared == "binary" and len(names) != 2:
        raise DataError(f"{where}: {declaring(key, 'binary')} needs exactly two labels; {listing} lists {len(names)}")
    return declared or ("binary" if len(names) == 2 else "multiclass")


def _written_alike(names, where: str) -> None:
    """Classes named by numbers, as written in any format: one number written two ways (``1``
    and ``1.0``, ``01``, ``+1``) is an error naming both (as names two classes, as numbers one:
    either would be a guess)."""
    twice = written_twice(names)
    if twice:
        a, b = sorted(twice)
        raise DataError(
            f"{where}: the labels {shown(a)} and {shown(b)} are one number written two ways "
            "(two classes as names, one as numbers); write each class alike"
        )


def _is_number(text: str) -> bool:
    return _number(str(text)) is not None
