"""The names that the command line and the data readers share: file formats and tasks.

Kept free of imports, so that the command line builds its parser (``ocolearn --help``,
``--version``, a usage error) without loading NumPy, numba or JAX.
"""

FORMATS = ("svmlight", "mira", "csv", "text")  # the file formats of ``ocolearn.data.stream``
TASKS = ("regression", "binary", "multiclass")  # see ``ocolearn.data.task``
# The reading settings (train's options, a config's [data] keys) that some formats read, and
# which: one given for another format would do nothing, and is refused ("table": a config's).
FORMAT_KEYS = {
    "target": ("csv", "table"),
    "features": ("table",),
    "batch_scale": ("table",),
    "bits": ("svmlight", "mira", "text"),
    "dim": ("svmlight",),
    "zero_based": ("svmlight",),
    # The one shuffle of a folder's documents; a file's rows are streamed in chunks, in the
    # file's order (train's --seed shuffles each chunk's rows).
    "order_seed": ("text",),
}


def unread_setting(format: str, settings: dict) -> str | None:
    """The first reading setting given in ``settings`` (set: not None, "", False or []; a seed
    0 is set) that ``format`` does not read (``FORMAT_KEYS``), else None: the one rule of train
    and of a config."""
    given = (key for key, value in settings.items() if value is not False and value not in (None, "", []))
    return next((key for key in given if format not in FORMAT_KEYS[key]), None)


# Seeds are whole numbers 0..2^32 - 1: NumPy refuses negative ones, and JAX keeps only the low
# 32 bits (seed 2^32 would shuffle as seed 0 does).
MAX_SEED = 2**32 - 1
SCALES = ("auto", "standardize", "normalize", "none")  # online scaling, see ``ocolearn.preprocess``
