"""Figures of a run: the OGD post's normalized cumulative loss, and regret with its bound."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ocolearn.io import atomic_write  # noqa: E402


def normalized_loss(ax, curves: dict, title: str = "", learner: str = "learner"):
    """``(1/t) sum_{s<=t} (yhat_s - y_s)^2`` against t, labelled with the ``learner``'s name;
    comparators as dashed lines.

    ``curves`` holds ``cumulative_average_loss`` and the comparators' mean squared errors.
    """
    t = np.arange(1, len(curves["cumulative_average_loss"]) + 1)
    ax.plot(t, curves["cumulative_average_loss"], color="black", lw=1.2, label=learner)
    styles = {
        "comparator_unconstrained_loss": ("grey", "least squares"),
        "comparator_feasible_loss": ("red", "best in the feasible set"),
    }
    for key, (color, label) in styles.items():
        if curves.get(key) is not None:
            ax.axhline(curves[key], color=color, ls="--", lw=1.2, label=label)
    ax.set_xlabel("t")
    ax.set_ylabel(r"$\frac{1}{t}\sum_{s\leq t}(\hat y_s - y_s)^2$")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)


def regret(ax, curves: dict, title: str = ""):
    """``R_t`` against t with the theoretical bound overlaid (if the set is bounded)."""
    t = np.arange(1, len(curves["regret"]) + 1)
    ax.plot(t, curves["regret"], color="black", lw=1.2, label=r"regret $R_t$")
    if curves.get("regret_bound") is not None:
        ax.plot(t, curves["regret_bound"], color="tab:blue", ls=":", lw=1.5, label="Zinkevich bound")
        ax.set_yscale("symlog", linthresh=1.0)
    ax.axhline(0.0, color="grey", lw=0.6)
    ax.set_xlabel("t")
    ax.set_ylabel(r"$R_t$")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)


def save(fig, path) -> None:
    """Save a figure as PNG, atomically, and close it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
    plt.close(fig)
    atomic_write(path, buffer.getvalue())


def run_figures(curves: dict, title: str, out_dir, learner: str = "learner") -> list[str]:
    """The two figures of one run (of the named ``learner``), written into ``out_dir``; returns
    their file names."""
    names = []
    for name, draw in (("normalized_loss.png", normalized_loss), ("regret.png", regret)):
        if name == "regret.png" and curves.get("regret") is None:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        draw(ax, curves, title, learner) if draw is normalized_loss else draw(ax, curves, title)
        save(fig, f"{out_dir}/{name}")
        names.append(name)
    return names


def grid(runs: list[tuple[str, dict]], path) -> None:
    """One figure for several runs: a column each, normalized loss above and regret below."""
    fig, axes = plt.subplots(2, len(runs), figsize=(5 * len(runs), 7), squeeze=False)
    for j, (title, curves) in enumerate(runs):
        normalized_loss(axes[0, j], curves, title)
        if curves.get("regret") is not None:
            regret(axes[1, j], curves, title)
    fig.tight_layout()
    save(fig, path)


def _log_scale(values) -> bool:
    values = np.asarray(values)
    return bool(np.all(values > 0) and values.max() / values.min() > 20)


def sweep_figure(axes: dict, mean, score: str, path, marks=()) -> None:
    """Mean score over seeds: a heatmap for two swept keys, a curve for one (else nothing).

    ``marks`` are ``(label, value of key 1, value of key 2)`` points drawn on the heatmap.
    """
    names = list(axes)
    if len(names) not in (1, 2):
        return
    fig, ax = plt.subplots(figsize=(6.5, 5))
    if len(names) == 1:
        ax.plot(axes[names[0]], mean, marker="o", color="black")
        ax.set_xlabel(names[0])
        ax.set_ylabel(f"{score} (mean over seeds)")
        if _log_scale(axes[names[0]]):
            ax.set_xscale("log")
    else:
        x, y = axes[names[0]], axes[names[1]]
        shown = np.log10(np.clip(mean.T, 1e-12, None))
        mesh = ax.pcolormesh(x, y, shown, shading="nearest", cmap="viridis_r", vmax=np.nanpercentile(shown, 95))
        fig.colorbar(mesh, ax=ax, label=f"log10 {score} (mean over seeds)")
        i, j = np.unravel_index(np.nanargmin(mean), mean.shape)
        ax.plot(x[i], y[j], marker="*", color="red", ms=14, ls="none", label=f"best: {mean[i, j]:.4g}")
        for label, mx, my in marks:
            ax.plot(mx, my, marker="o", mfc="none", mec="white", ms=10, mew=2, ls="none")
            ax.annotate(label, (mx, my), textcoords="offset points", xytext=(6, 6), color="white", fontsize=8)
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
        if _log_scale(x):
            ax.set_xscale("log")
        if _log_scale(y):
            ax.set_yscale("log")
        ax.legend(fontsize=8, loc="lower right")
    save(fig, path)


def regret_bands(bands: list, path) -> None:
    """Regret curves (median over seeds) with a min-max band, one colour per configuration."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for label, curves in bands:
        t = np.arange(1, curves.shape[1] + 1)
        (line,) = ax.plot(t, np.median(curves, axis=0), lw=1.2, label=label)
        ax.fill_between(t, curves.min(axis=0), curves.max(axis=0), color=line.get_color(), alpha=0.25)
    ax.set_xlabel("t")
    ax.set_ylabel(r"regret $R_t$")
    ax.set_title("best configurations (band: min-max over seeds)", fontsize=10)
    ax.legend(fontsize=8)
    save(fig, path)


def mistakes_figure(runs: dict, path, title: str = "") -> None:
    """Mistakes per pass, one line per run (``{label: [mistakes of pass 1, 2, ...]}``)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, mistakes in runs.items():
        ax.plot(np.arange(1, len(mistakes) + 1), mistakes, marker="o", label=label)
    ax.set_xlabel("pass")
    ax.set_ylabel("mistakes in the pass")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    save(fig, path)
