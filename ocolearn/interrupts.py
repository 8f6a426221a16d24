"""Ctrl-C (SIGINT) and SIGTERM in the ``ocolearn`` command: one line, status 130 or 143, and
nothing half-written, whenever the signal comes (importing, compiling, reading, writing).

The handlers are installed as the command starts (``python -m ocolearn``: before ``ocolearn.cli``
is imported; the console script: in ``cli.entry``), before anything heavy is imported, and kept
to the process's end. Before that only the interpreter's start-up runs (about 40 ms), under
Python's own handling. While the command works (``arm`` to ``disarm``, in ``cli.main``) a signal
raises in the main thread, ``KeyboardInterrupt`` for SIGINT and ``Terminated`` for SIGTERM, so
that the clean-up of what was being written runs (``ocolearn.io`` removes its temporaries) and
``cli.main`` prints its one line; outside, it is only recorded. It is recorded (``received``) in
any case, because Python drops an exception raised inside a finalizer (``__del__``), a garbage
collector's callback (JAX's ``_xla_gc_callback``), a weak reference's or a ctypes callback
(llvmlite's): a Ctrl-C there let training go on, write its model and exit 0. Where it can tell,
the handler raises nothing there and sends the signal again 0.1 s later, to land outside; and a
recorded signal is raised before every final rename of an output (``held``) and when the command
ends, so nothing is written after a signal and the status is 130 or 143 wherever it was
swallowed. What Python would print about such a dropped exception, or an extension module about
an import cut by a signal, and a thread's traceback after a signal, are not printed.

Nothing here imports more than the standard library's small modules: ``import ocolearn.cli``
stays light.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal's number

_received: list[int] = []  # the first signal received while the handlers are ours
_resends: list = []  # the pending ``threading.Timer``s of ``_send_again``
_state = {"armed": False, "held": 0, "written": 0}


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a scheduler's time limit), raised in the main thread like Ctrl-C's
    KeyboardInterrupt, so that the same clean-up runs (temporary files and folders removed,
    the last checkpoint named) and the process exits with 143 (128 + 15)."""


def received() -> int | None:
    """The first signal received while the handlers were ours (and not yet put back), or None."""
    return _received[0] if _received else None


def install() -> dict | None:
    """Make the handlers of SIGINT and SIGTERM ours, with hooks that print nothing for a
    signal's exception that Python drops (``sys.unraisablehook``) or that an extension module
    prints itself (``sys.excepthook``: NumPy's ``import_array`` prints the error of a failed
    import, a traceback, then fails with an ``ImportError``), nor for a thread's error after a
    signal (``threading.excepthook``). Returns what to give ``restore``, or None where they are
    ours already or this is not the main thread (only the main thread may set handlers)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is _on_signal:
        return None
    previous = {signum: signal.signal(signum, _on_signal) for signum in STATUS}
    previous["hooks"] = unraisable, excepthook, thread_excepthook = (
        sys.unraisablehook,
        sys.excepthook,
        threading.excepthook,
    )
    sys.unraisablehook = lambda u: None if isinstance(u.exc_value, KeyboardInterrupt) else unraisable(u)
    sys.excepthook = lambda *e: None if _received and isinstance(e[1], KeyboardInterrupt) else excepthook(*e)
    threading.excepthook = lambda args: None if _received else thread_excepthook(args)
    _received.clear()
    return previous


def restore(previous: dict | None) -> None:
    """Put back what ``install`` replaced (``main`` may run inside another program) and forget
    the signal received."""
    if previous is None:
        return
    sys.unraisablehook, sys.excepthook, threading.excepthook = previous.pop("hooks")
    for signum, handler in previous.items():
        signal.signal(signum, handler)
    _received.clear()


def arm() -> None:
    """From now on a signal raises its exception; one received before (``entry`` installs the
    handlers first) raises at once."""
    _state.update(armed=True, written=0)
    check()


def disarm() -> None:
    """From now on a signal is only recorded (the command has ended, or is reporting its stop),
    and no signal is sent again."""
    _state["armed"] = False
    _cancel_resends()


def check() -> None:
    """Raise the exception of a signal received (and perhaps dropped where it was raised) while
    armed, unless one is being handled already (its clean-up is running)."""
    signum = received()
    if signum is not None and _state["armed"] and not isinstance(sys.exc_info()[1], KeyboardInterrupt):
        raise _exception(signum)


@contextlib.contextmanager
def held(output: bool = True):
    """A step that must not be cut (an output's final rename and what must follow it): a signal
    received before raises on entry, nothing written; one received inside raises on exit, after
    the step. An ``output`` step done is counted (``written``: the stop's line says so)."""
    check()
    _state["held"] += 1
    try:
        yield
        _state["written"] += output
    finally:
        _state["held"] -= 1
    check()


def written() -> int:
    """The outputs written (``held`` steps done) since ``arm``."""
    return _state["written"]


def _exception(signum: int) -> KeyboardInterrupt:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _on_signal(signum, frame):
    """Record the signal; while armed, raise its exception where the signal finds the main
    thread, unless one is being handled already (its clean-up runs), a step is ``held``, or
    Python would drop it there (``_dropped_here``). Raising or not, it sends the signal again
    0.1 s later, in case the raise is dropped somewhere unforeseen: the sends stop once the
    exception is being handled, and are cancelled when the command ends."""
    if not _received:
        _received.append(signum)
    if not _state["armed"] or _state["held"] or isinstance(sys.exc_info()[1], KeyboardInterrupt):
        return
    _send_again(signum)
    if not _dropped_here(frame):
        raise _exception(signum)


def _dropped_here(frame) -> bool:
    """Whether Python drops an exception raised at ``frame``: inside a ``__del__`` (llvmlite's
    ``ObjectRef.__del__`` while a sweep compiles), a callback of the garbage collector
    (``gc.callbacks``: JAX's ``_xla_gc_callback``) or llvmlite (its ctypes callbacks:
    ``ExecutionEngine._raw_object_cache_notify`` while numba compiles the parser on a machine
    whose numba cache is empty). A SIGTERM lost there let a sweep run on for hours."""
    import gc

    callbacks = {getattr(callback, "__code__", None) for callback in gc.callbacks}
    while frame is not None:
        code = frame.f_code
        if code.co_name == "__del__" or code in callbacks or f"{os.sep}llvmlite{os.sep}" in code.co_filename:
            return True
        frame = frame.f_back
    return False


def _send_again(signum) -> None:
    timer = threading.Timer(0.1, os.kill, (os.getpid(), signum))
    timer.daemon = True
    _resends.append(timer)
    timer.start()


def _cancel_resends() -> None:
    while _resends:
        _resends.pop().cancel()
