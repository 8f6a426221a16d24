"""The names that the command line and the data readers share: file formats and tasks.

Kept free of imports, so that the command line builds its parser (``ocolearn --help``,
``--version``, a usage error) without loading NumPy, numba or JAX.
"""

FORMATS = ("svmlight", "mira", "csv", "text")  # the file formats of ``ocolearn.data.stream``
TASKS = ("regression", "binary", "multiclass")  # see ``ocolearn.data.task``
# Seeds are whole numbers 0..2^32 - 1: NumPy refuses negative ones, and JAX keeps only the low
# 32 bits (seed 2^32 would shuffle as seed 0 does).
MAX_SEED = 2**32 - 1
SCALES = ("auto", "standardize", "normalize", "none")  # online scaling, see ``ocolearn.preprocess``
