"""The readers' compiled loops (numba), loaded when first called.

Importing numba and loading its first function from the on-disk cache takes 0.7 to 0.8 s of
CPU in a fresh process (numba's typing registries, scipy's BLAS check, cffi; measured
2026-12-02), as long as a 200-row ``train`` spends beyond importing JAX. ``njit`` is numba's,
put off until one of a module's functions is first called: a command that calls no compiled
loop never imports numba. Small work (``worth``: a small CSV file's rows, padded by
``sparse_text.pad``) is done in NumPy instead, unless numba is loaded already.

Each function is compiled with ``cache=True``: its machine code is kept on disk (beside the
module in ``__pycache__``, else in the user's cache folder, or in ``NUMBA_CACHE_DIR`` where set)
and later processes load it instead of compiling. Where no such folder is writable the function
is compiled in each process instead, silently (numba itself would refuse to define it).
"""

from __future__ import annotations

import functools
import sys
import threading

_lock = threading.RLock()


class Lazy:
    """A function to be compiled by numba (``njit``) on its module's first call."""

    def __init__(self, function, options):
        self.function, self.options, self.dispatcher = function, options, None
        functools.update_wrapper(self, function)

    def __call__(self, *args):
        if self.dispatcher is None:
            load(self.function.__module__)
        return self.dispatcher(*args)


def njit(**options):
    """``numba.njit(cache=True, nogil=True, **options)``, put off until the first call."""
    return lambda function: Lazy(function, options)


# Work of at most this many entries (or bytes) is done without compiled code unless numba is loaded
# already: NumPy pads 65,536 entries in 4 ms (60 ns each against 2 compiled), numba starts in 550 ms.
SMALL = 1 << 16


def loaded() -> bool:
    """Whether numba is imported already: compiled code then costs no start."""
    return "numba" in sys.modules


def worth(size: int) -> bool:
    """Whether work of ``size`` entries (or bytes) is for compiled code: past ``SMALL``, or
    when numba is loaded already."""
    return size > SMALL or loaded()


def load(module: str) -> None:
    """Make numba's dispatchers of every ``Lazy`` function named in ``module`` (its own and
    those it imported, whose modules are loaded too), and put them in its namespace: a compiled
    function finds the compiled functions it calls there (numba cannot call a ``Lazy``)."""
    import numba

    with _lock:
        namespace = vars(sys.modules[module])
        for name, value in list(namespace.items()):
            if isinstance(value, Lazy):
                if value.dispatcher is None:
                    value.dispatcher = _dispatcher(numba, value.function, value.options)
                namespace[name] = value.dispatcher
                if value.function.__module__ != module:
                    load(value.function.__module__)


def _dispatcher(numba, function, options):
    options = {"nogil": True, **options}
    try:
        return numba.njit(cache=True, **options)(function)
    except RuntimeError:  # (numba's "cannot cache function ...: no locator available": no writable folder)
        return numba.njit(cache=False, **options)(function)
