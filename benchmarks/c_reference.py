"""The C reference of the OGD benchmarks: ``ogd_reference.c`` compiled with the system's compiler
(``$CC``, else ``cc``) at ``-O3 -march=native``, with and without ``-ffast-math``, and called
through ctypes on the benchmark's own float32 arrays (no copy, no loading counted).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import numpy as np
from common import ROOT, SCRATCH

SOURCE = ROOT / "benchmarks" / "ogd_reference.c"
FLOATS = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")


def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise SystemExit("benchmarks: error: no C compiler (set CC, or install cc) for the C reference")
    return cc


def flags(fast_math: bool) -> list[str]:
    return ["-O3", "-march=native", *(["-ffast-math"] if fast_math else []), "-shared", "-fPIC"]


def version() -> str:
    """The compiler's first line of ``--version`` (for the record)."""
    out = subprocess.run([compiler(), "--version"], capture_output=True, text=True)
    return (out.stdout.splitlines() or ["unknown"])[0]


def compiled(fast_math: bool):
    """The reference as a ctypes library, compiled afresh into ``benchmarks/scratch``."""
    SCRATCH.mkdir(parents=True, exist_ok=True)
    path = SCRATCH / f"ogd_reference{'_fast_math' if fast_math else ''}.so"
    subprocess.run([compiler(), *flags(fast_math), str(SOURCE), "-o", str(path), "-lm"], check=True)
    lib = ctypes.CDLL(str(path))
    lib.ogd.argtypes = [FLOATS, FLOATS, ctypes.c_long, ctypes.c_long, ctypes.c_float, ctypes.c_float, FLOATS]
    lib.ogd.restype = None
    lib.ogd_sweep.argtypes = [FLOATS, FLOATS, ctypes.c_long, ctypes.c_long, ctypes.c_long, FLOATS, FLOATS, FLOATS]
    lib.ogd_sweep.restype = None
    return lib


def label(fast_math: bool) -> str:
    return "C reference, -O3 -march=native" + (" -ffast-math" if fast_math else "")


def single(lib, X, y, eta, radius):
    """A callable: one pass of the C loop from w = 0; returns the weights."""
    X, y = np.ascontiguousarray(X, np.float32), np.ascontiguousarray(y, np.float32)

    def once():
        w = np.zeros(X.shape[1], np.float32)
        lib.ogd(X, y, X.shape[0], X.shape[1], eta, radius, w)
        return w

    return once


def sweep(lib, X, y, etas, radii):
    """A callable: the C sweep of ``len(etas)`` configurations from W = 0; returns W."""
    X, y = np.ascontiguousarray(X, np.float32), np.ascontiguousarray(y, np.float32)
    etas, radii = np.ascontiguousarray(etas, np.float32), np.ascontiguousarray(radii, np.float32)

    def once():
        W = np.zeros((len(etas), X.shape[1]), np.float32)
        lib.ogd_sweep(X, y, X.shape[0], X.shape[1], len(etas), etas, radii, W)
        return W

    return once
