"""Shared helpers of the benchmarks: timing, synthetic data, VW files, and the ratio table."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def best_time(fn, repeat=3):
    """The best wall time of ``repeat`` calls of ``fn`` (seconds), and its last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def regression_data(n, d, seed=0):
    """float32 ``X ~ N(0, 1/d)`` (rows of norm about 1) and ``y = X w* + noise``."""
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d), dtype=np.float32) / np.sqrt(d)).astype(np.float32)
    w = rng.standard_normal(d).astype(np.float32)
    y = (X @ w + 0.1 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)
    return X, y


def sklearn_sgd_epoch(X64, y64, eta):
    """One epoch of scikit-learn's ``SGDRegressor`` with eta0 / t^0.5, no penalty, no intercept,
    no shuffling: the same update as OGD without a projection."""
    import warnings

    from sklearn.linear_model import SGDRegressor

    model = SGDRegressor(
        loss="squared_error",
        penalty=None,
        learning_rate="invscaling",
        eta0=eta,
        power_t=0.5,
        max_iter=1,
        tol=None,
        shuffle=False,
        fit_intercept=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch does not "converge"
        return model.fit(X64, y64)


def vw_cache(X, y, name):
    """A VW cache file of dense rows ``y | 0:x0 1:x1 ...`` (made once, reused)."""

    def write(text):
        fmt = "%.7g |f " + " ".join(f"{j}:%.7g" for j in range(X.shape[1]))
        np.savetxt(text, np.column_stack([y, X]), fmt=fmt)

    return vw_cache_of(write, name)


def vw_cache_of(write, name):
    """A VW cache file made (once) from the text file that ``write(path)`` writes."""
    import vowpalwabbit

    RESULTS.mkdir(parents=True, exist_ok=True)
    text, cache = RESULTS / f"{name}.vw", RESULTS / f"{name}.vw.cache"
    if not cache.exists():
        write(text)
        ws = vowpalwabbit.Workspace(f"-d {text} --cache_file {cache} --noconstant --quiet")
        ws.run_parser()
        ws.finish()
        text.unlink()
    return cache


def vw_from_cache(cache, args):
    """Seconds for VW to learn one pass from its cache with ``args``."""
    import vowpalwabbit

    def once():
        ws = vowpalwabbit.Workspace(f"--cache_file {cache} --noconstant --quiet {args}")
        ws.run_parser()
        ws.finish()

    return best_time(once)[0]


def report(title, rows, baseline, path, command):
    """Print and save a table of examples/second with ratios ``baseline / peer``."""
    base = next(r for r in rows if r["name"] == baseline)["examples_per_s"]
    lines = [
        f"### {title}",
        "",
        f"`{command}` on {platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d')}",
        "",
        f"| implementation | examples/s | {baseline} speed-up |",
        "|---|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['name']} | {r['examples_per_s']:,.0f} | {base / r['examples_per_s']:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{path}.md").write_text(text)
    (RESULTS / f"{path}.json").write_text(json.dumps(rows, indent=2))
    return text
