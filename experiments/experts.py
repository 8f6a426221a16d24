"""Learning with expert advice: Hedge's regret against the best expert, with its bound.

    python experiments/experts.py [--out runs/experts] [--record PATH]

Runs the learners of configs/experts.toml on each of its generated sequences (T rounds, N
experts; the adaptive one generated against each learner) and draws OUT/experts.png: the
regret R_t against the best expert of each prefix, with Hedge's bound ln N / eta + eta t / 8 for
the tuned rate, which reaches sqrt(T ln N / 2) at T. Writes the numbers and the
learners' settings to RECORD (default experiments/records/experts.json, committed).

Why a script and not a study config (``ocolearn study``): learners over generated expert losses
(no examples and labels), one sequence generated against each learner, and regret against the
best expert with Hedge's bound (a study reads labelled examples).
"""

import argparse
import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn import Hedge, plots, run
from ocolearn.config import load_study
from ocolearn.io import write_json
from ocolearn.regret import experts_regret, hedge_regret_bound
from ocolearn.sequences import adaptive_experts_losses, experts_losses

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "experts.toml"
RECORDS = Path(__file__).resolve().parent / "records"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/experts")
    parser.add_argument("--record", default=str(RECORDS / "experts.json"), help="the committed record of the numbers")
    args = parser.parse_args()
    study, learners = load_study(CONFIG)
    T, N, seed = int(study["rounds"]), int(study["experts"]), int(study["seed"])
    tuned = Hedge.tuned(T, N)
    bound = hedge_regret_bound(tuned.eta, N, T)
    t = np.arange(1, T + 1)
    fig, axes = plt.subplots(1, len(study["sequences"]), figsize=(5 * len(study["sequences"]), 4), sharey=True)
    record = {"rounds": T, "experts": N, "tuned_eta": tuned.eta, "bound_at_T": bound[-1], "sequences": {}}
    record["learners"] = {name: learner.to_config() for name, learner in learners.items()}
    for ax, kind in zip(np.atleast_1d(axes), study["sequences"], strict=True):
        rows = {}
        for name, learner in learners.items():
            L = adaptive_experts_losses(learner, T, N) if kind == "adaptive" else experts_losses(kind, T, N, seed)
            regret = experts_regret(run(learner, L, np.zeros(T, np.float32)).trace.loss, L)
            rows[name] = {
                "regret_at_T": float(regret[-1]),
                "max_regret": float(regret.max()),
                "max_regret_over_tuned_bound": float(np.max(regret / bound)),
                "below_tuned_bound": bool(np.all(regret <= bound)),
            }
            ax.plot(t, regret, lw=0.9, label=f"{name}: {regret[-1]:.1f}")
        ax.plot(t, bound, color="black", ls=":", lw=1.5, label=r"bound $\ln N/\eta + \eta t/8$ (tuned)")
        ax.axhline(math.sqrt(T * math.log(N) / 2), color="grey", lw=0.8, ls="--")
        ax.set(xlabel="t", title=f"{kind} sequence, N = {N}")
        ax.set_yscale("symlog", linthresh=10.0)
        ax.legend(fontsize=7)
        record["sequences"][kind] = rows
    np.atleast_1d(axes)[0].set_ylabel(r"regret $R_t$ against the best expert")
    plots.save(fig, Path(args.out) / "experts.png")
    write_json(args.record, record)
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
