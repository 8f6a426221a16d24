"""The names that the command line and the data readers share: file formats, tasks, and the
rules for numbers and class labels a user writes.

Kept free of imports beyond the standard library, so that the command line builds its parser (``ocolearn --help``,
``--version``, a usage error) without loading NumPy, numba or JAX.
"""

import numbers
from pathlib import Path

FORMATS = ("svmlight", "mira", "csv", "text", "vw")  # the file formats of ``ocolearn.data.stream``
TASKS = ("regression", "binary", "multiclass")  # see ``ocolearn.data.task``
# The reading settings (train's options, a config's [data] keys) that some formats read, and
# which: one given for another format would do nothing, and is refused ("table": a config's).
FORMAT_KEYS = {
    "target": ("csv", "table"),
    "features": ("table",),
    "batch_scale": ("table",),
    "bits": ("svmlight", "mira", "text", "vw"),
    "dim": ("svmlight",),
    "zero_based": ("svmlight",),
    # The one shuffle of a folder's documents; a file's rows are streamed in chunks, in the
    # file's order (train's --seed shuffles each chunk's rows).
    "order_seed": ("text",),
    # A CSV file's feature columns and their kinds (``ocolearn.data.csvfile``).
    "columns": ("csv",),
    "ignore": ("csv",),
    "categorical": ("csv",),
    "numeric": ("csv",),
    "interactions": ("vw", "csv", "svmlight"),  # crossed namespaces or columns (ocolearn.data.interactions)
}


def key_of(task_key: str, setting: str) -> str:
    """The door's key of a reading ``setting`` ("labels", "dim"), from its key that declares the
    task: train's ``--task``: ``--labels``; a config's ``data.task``: ``data.labels``; a study's
    ``task``: ``labels``."""
    return task_key.replace("task", setting)


def unread_setting(format: str, settings: dict) -> str | None:
    """The first reading setting given in ``settings`` (set: not None, "", False or []; a seed
    0 is set) that ``format`` does not read (``FORMAT_KEYS``), else None: the one rule of train
    and of a config."""
    given = (key for key, value in settings.items() if value is not False and value not in (None, "", []))
    return next((key for key in given if format not in FORMAT_KEYS[key]), None)


def formats_reading(key: str) -> str:
    """The file formats that read the setting ``key``, as a message lists them ("svmlight or mira")."""
    return " or ".join(f for f in FORMAT_KEYS[key] if f in FORMATS)


# Seeds are whole numbers 0..2^32 - 1: NumPy refuses negative ones, and JAX keeps only the low
# 32 bits (seed 2^32 would shuffle as seed 0 does).
MAX_SEED = 2**32 - 1


def is_seed(value) -> bool:
    """Whether ``value`` is a seed: an integer (Python's or NumPy's, not a bool) in 0..``MAX_SEED``."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= value <= MAX_SEED


SCALES = ("auto", "standardize", "normalize", "none", "river")  # online scaling, see ``ocolearn.preprocess``


def number(text: str):
    """``text`` as a float, or None: Python's ``float`` of ASCII text without ``_`` (``float``
    alone reads ``6_1`` as 61 and full-width digits as digits; no data file means those)."""
    if not text.isascii() or "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def written_twice(names):
    """The first two of the class ``names`` that are one number written two ways (``1`` and
    ``1.0``, ``01``, ``+1``), or None: as names they would be two classes of one value."""
    seen = {}
    for name in names:
        value = number(str(name))
        if value is not None and seen.setdefault(value, name) != name:
            return seen[value], name
    return None


def label_list_problem(names) -> str | None:
    """What is wrong with class labels a user lists (train's ``--labels``, a config's
    ``data.labels``), or None: two or more non-empty names, each given once, a number in one
    spelling (classes match numbers by value: ``ocolearn.data.sparse_text.class_lookup``)."""
    for k, name in enumerate(names):
        if not name:
            return f"label {k + 1} is empty"
        if name in names[:k]:
            return f"the label {name[:60]!r} is repeated"
    if len(names) == 1:  # (a classifier tells two or more apart; regression has no labels)
        return f"{names[0][:60]!r} names one label; give two or more"
    twice = written_twice(names)
    if twice:
        return "the labels {!r} and {!r} are one number written two ways; give each class once".format(*twice)
    return None


def format_of(data: str) -> str:
    """The format ``train`` reads ``data`` in where ``--format`` is not given: by its name, as
    pandas' ``read_*`` and VW's users name their files (``.csv``, ``.vw``), a folder as text
    documents, and svmlight (LIBSVM's format, ocolearn's own) otherwise."""
    suffix = Path(data).suffix.lower()
    if suffix in (".csv", ".vw"):
        return suffix[1:]
    return "text" if Path(data).is_dir() else "svmlight"
