"""Figures of a run: the OGD post's normalized cumulative loss, and regret with its bound."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ocolearn.io import atomic_write  # noqa: E402


def normalized_loss(ax, curves: dict, title: str = ""):
    """``(1/t) sum_{s<=t} (yhat_s - y_s)^2`` against t; comparators as dashed lines.

    ``curves`` holds ``cumulative_average_loss`` and the comparators' mean squared errors.
    """
    t = np.arange(1, len(curves["cumulative_average_loss"]) + 1)
    ax.plot(t, curves["cumulative_average_loss"], color="black", lw=1.2, label="OGD")
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


def run_figures(curves: dict, title: str, out_dir) -> list[str]:
    """The two figures of one run, written into ``out_dir``; returns their file names."""
    names = []
    for name, draw in (("normalized_loss.png", normalized_loss), ("regret.png", regret)):
        if name == "regret.png" and curves.get("regret") is None:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        draw(ax, curves, title)
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
