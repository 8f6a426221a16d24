"""The textbook's two rates, measured: sqrt(T) regret on an adversarial sequence, log T on
strongly convex and exp-concave losses, each with its bound.

    python experiments/rates.py [--out runs/rates] [--record PATH]

Runs the learners of configs/rates.toml, each on M generated sequences of its kind
(ocolearn/sequences.py) in one vmapped program, and draws OUT/rates.png: the mean over
the sequences of R_t / sqrt(t) (OGD on the random-sign linear losses), of R_t / ln(t + 1) (OGD
with 1/(lambda t) steps on strongly convex losses) and of R_t on a log t axis (ONS on exp-concave
losses, where R_t = a ln t + b with b < 0, so that R_t / ln t approaches a from below), with OGD's
eta/sqrt(t) steps for contrast; R_t against the best fixed point in hindsight of rounds
1..t, each with its bound divided the same way. Writes the numbers, the study's sizes and the learners'
settings to RECORD (default experiments/records/rates.json, committed).

Why a script and not a study config (``ocolearn study``): generated loss sequences (random
signs, strongly convex, exp-concave), regret against the best point of each prefix and the
bounds divided by sqrt(t) or ln t (a study reads labelled examples and measures regret over the
whole stream).
"""

import argparse
import json
from pathlib import Path

import jax
import matplotlib.pyplot as plt
import numpy as np

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import plots, run
from ocolearn.config import load_study
from ocolearn.io import write_json
from ocolearn.regret import (
    least_squares_in_ball,
    ogd_regret_bound,
    ons_parameters,
    ons_regret_bound,
    prefix_best_linear,
    prefix_best_squared,
    strongly_convex_regret_bound,
)
from ocolearn.sequences import bounded_regression, random_signs

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "rates.toml"
RECORDS = Path(__file__).resolve().parent / "records"


def losses_of(learner, X, y):
    """``(M, T)`` float64 losses of the weights played, one run per sequence, vmapped."""
    return np.asarray(jax.vmap(lambda X, y: run(learner, X, y).trace.loss)(X, y), np.float64)


def ball_regret(losses, X, y, checkpoints):
    """``(M, len(checkpoints))`` regret against the best point of the unit ball over rounds 1..t."""
    out = np.empty((len(X), len(checkpoints)))
    for m in range(len(X)):
        cumulative = np.cumsum(losses[m])
        for j, t in enumerate(checkpoints):
            A, b = X[m, :t].astype(np.float64), y[m, :t].astype(np.float64)
            u = least_squares_in_ball(A, b, 1.0)
            out[m, j] = cumulative[t - 1] - 0.5 * np.sum((A @ u - b) ** 2)
    return out


def summary(t, mean_regret, bound, scale):
    """Numbers of one curve: R_T; R / scale at T/10 and at T (does it level off?); the regret
    added per e-fold of rounds, (R_b - R_a) / ln(b / a), over the decades before T/10 and before T
    (constant for a log T rate, times sqrt(10) a decade for sqrt(T)); and R_T / bound_T."""
    i, j = np.searchsorted(t, t[-1] // 10), np.searchsorted(t, t[-1] // 100)

    def slope(a, b):
        return float((mean_regret[b] - mean_regret[a]) / np.log(t[b] / t[a]))

    return {
        "T": int(t[-1]),
        "mean_regret_at_T": float(mean_regret[-1]),
        "regret_over_scale_at_T_over_10": float(mean_regret[i] / scale[i]),
        "regret_over_scale_at_T": float(mean_regret[-1] / scale[-1]),
        "regret_per_e_fold_decade_before_T_over_10": slope(j, i),
        "regret_per_e_fold_last_decade": slope(i, len(t) - 1),
        "bound_at_T": None if bound is None else float(bound[-1]),
        "regret_over_bound_at_T": None if bound is None else float(mean_regret[-1] / bound[-1]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/rates")
    parser.add_argument("--record", default=str(RECORDS / "rates.json"), help="the committed record of the numbers")
    args = parser.parse_args()
    study, learners = load_study(CONFIG)
    T, M, seed = int(study["rounds"]), int(study["sequences"]), int(study["seed"])
    t = np.arange(1, T + 1)
    record = {}
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))

    # sqrt(T): OGD on linear losses with random signs.
    g = random_signs(T, M, seed)
    ogd = learners["ogd_signs"]
    regret = losses_of(ogd, g, np.zeros(g.shape[:2], np.float32)).cumsum(axis=1) - prefix_best_linear(g[..., 0])
    bound = ogd_regret_bound(ogd.schedule, ogd.projection.diameter(1), 1.0, T)
    mean = regret.mean(axis=0)
    record["ogd_signs"] = summary(t, mean, bound, np.sqrt(t))
    ax = axes[0]
    ax.fill_between(t, *np.quantile(regret, [0.1, 0.9], axis=0) / np.sqrt(t), color="tab:blue", alpha=0.2)
    ax.plot(t, mean / np.sqrt(t), color="tab:blue", label=f"OGD, eta/sqrt(t): mean of {M}, 10-90%")
    ax.plot(t, bound / np.sqrt(t), color="black", ls=":", label="Zinkevich bound")
    ax.axhline(np.sqrt(2 / np.pi), color="grey", ls="--", lw=0.8, label=r"$E|\sum g_t| / \sqrt{T} \to \sqrt{2/\pi}$")
    ax.set(xlabel="t", ylabel=r"$R_t / \sqrt{t}$", xscale="log", title="linear losses, random signs: sqrt(T)")
    ax.legend(fontsize=7)

    # log T: strongly convex losses (w - y_t)^2 / 2 with y_t = +-1.
    y = random_signs(T, M, seed + 1)[..., 0]
    ones = np.ones((M, T, 1), np.float32)
    best = prefix_best_squared(y, -1.0, 1.0)
    bound = strongly_convex_regret_bound(2.0, float(learners["ogd_strong"].schedule.lam), T)
    ax = axes[1]
    for name, color in (("ogd_strong", "tab:red"), ("ogd_strong_sqrt", "tab:orange")):
        mean = (losses_of(learners[name], ones, y).cumsum(axis=1) - best).mean(axis=0)
        record[name] = summary(t, mean, bound if name == "ogd_strong" else None, np.log(t + 1))
        ax.plot(t, mean / np.log(t + 1), color=color, label=f"{name}: R_T = {mean[-1]:.1f}")
    ax.plot(t, bound / np.log(t + 1), color="black", ls=":", label=r"$G^2 (1 + \ln t) / (2\lambda)$")
    ax.set(xlabel="t", ylabel=r"$R_t / \ln(t + 1)$", xscale="log", title="strongly convex: log T with 1/(lambda t)")
    ax.legend(fontsize=7)

    # log T: exp-concave squared losses in d dimensions, ONS.
    Tc, Mc, d = int(study["concave_rounds"]), int(study["concave_sequences"]), int(study["dimension"])
    X, y = bounded_regression(Tc, Mc, d, seed + 2)
    ons = learners["ons_concave"]
    if float(ons.gamma) > ons_parameters(0.25, 2.0, 2.0)[0]:
        raise SystemExit("configs/rates.toml: ons_concave's gamma is above the theorem's; its bound would not hold")
    checkpoints = np.unique(np.geomspace(10, Tc, 31).astype(int))
    bound = ons_regret_bound(float(ons.gamma), float(ons.epsilon), 2.0, 2.0, d, Tc)[checkpoints - 1]
    ax = axes[2]
    for name, color in (("ons_concave", "tab:green"), ("ogd_concave_sqrt", "tab:purple")):
        mean = ball_regret(losses_of(learners[name], X, y), X, y, checkpoints).mean(axis=0)
        record[name] = summary(checkpoints, mean, bound if name == "ons_concave" else None, np.log(checkpoints))
        ax.plot(checkpoints, mean, color=color, marker=".", label=f"{name}: R_T = {mean[-1]:.1f}")
    ax.plot(
        checkpoints,
        bound,
        color="black",
        ls=":",
        label=r"$\frac{d}{2\gamma}\ln(tG^2/\epsilon + 1) + \frac{\gamma\epsilon D^2}{2}$",
    )
    ax.set(xlabel="t (log scale: a ln t + b is a straight line)", ylabel=r"$R_t$", xscale="log")
    ax.set_title(f"exp-concave, d = {d}: log T with ONS", fontsize=10)
    ax.legend(fontsize=7)

    record["study"] = dict(study)
    record["learners"] = {name: learner.to_config() for name, learner in learners.items()}
    plots.save(fig, Path(args.out) / "rates.png")
    write_json(args.record, record)
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
