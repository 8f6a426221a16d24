"""Regenerate every experiment's record, figure and README number.

    python experiments/reproduce.py [--only NAME ...] [--polarity-data PATH] [--readme-only] [--check]

Runs each experiment script of EXPERIMENTS in its own process (outputs under runs/NAME/), which
writes its numbers to experiments/records/NAME.json (committed, deterministic, written
atomically); copies its figure to experiments/figures/; then rewrites each
``<!-- exp:NAME -->`` ... ``<!-- /exp:NAME -->`` block of README.md from the records.

The polarity experiment needs the review data (not in the repository): ``--polarity-data``
names its ``txt_sentoken`` folder (default: the config's ``data.source``, relative to the
repository root). Without the data it is skipped with a message and its committed record
stays. ``--readme-only`` rewrites the README from the records without running anything;
``--check`` rewrites nothing and exits 1 if the README's experiment numbers differ from the
records (``tests/test_records.py`` runs it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RECORDS = HERE / "records"
FIGURES = HERE / "figures"
README = ROOT / "README.md"
POLARITY_DEFAULT = ROOT / "../shared/data/review_polarity/txt_sentoken"
EXPERIMENTS = ("iris_regret", "iris_sweep", "iris_adaptive", "multiclass", "polarity_pegasos")


def record(name: str) -> dict:
    return json.loads((RECORDS / f"{name}.json").read_text())


def iris_regret() -> str:
    r = record("iris_regret")
    lines = [
        "| setting | eta | lambda | average loss | best in the ball | least squares | regret | Zinkevich bound |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in r.items():
        lines.append(
            f"| {name.removeprefix('iris_ridge_')} | {m['eta']:g} | {m['lambda']:g} | {m['average_loss']:.4f} "
            f"| {m['comparator_feasible_loss']:.4f} | {m['comparator_unconstrained_loss']:.4f} | {m['regret']:.2f} "
            f"| {m['regret_bound']:.1f} |"
        )
    return "\n".join(lines)


def multiclass() -> str:
    r = record("multiclass")
    wine = [len(m["mistakes_per_pass"]) for k, m in r.items() if k.startswith("wine/")]
    wine_clean = all(m["mistakes_per_pass"][-1] == 0 for k, m in r.items() if k.startswith("wine/"))
    iris_clean = any(0 in m["mistakes_per_pass"] for k, m in r.items() if k.startswith("iris_species/"))
    iris = "a mistake-free pass happens there" if iris_clean else "no pass there is mistake-free"
    wine_text = f"wine is, after {min(wine)} to {max(wine)} passes" if wine_clean else "wine is not always"
    lines = [
        f"Iris' versicolor and virginica are not linearly separable, so {iris}; {wine_text}. Every learner runs "
        "with its default hyperparameters (`python experiments/multiclass.py`, `experiments/records/multiclass.json`):",
        "",
        "| data / learner | passes | mistakes in pass 1 | in the last pass | test error | averaged weights |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, m in r.items():
        mistakes, avg = m["mistakes_per_pass"], m["test_error_averaged"]
        lines.append(
            f"| {key} | {len(mistakes)} | {mistakes[0]} | {mistakes[-1]} | {m['test_error']:.3f} | "
            f"{'' if avg is None else f'{avg:.3f}'} |"
        )
    return "\n".join(lines)


def polarity() -> str:
    r = record("polarity_pegasos")
    errors = {float(k): v[0] for k, v in r["validation_error"].items()}
    upper = [e for lam, e in errors.items() if lam >= 0.5]
    c = r["confidence"]
    return (
        f"`configs/polarity_pegasos.toml` follows the Pegasos write-up: word counts of the "
        f"{r['train_rows'] + r['validation_rows']:,} movie reviews, {r['train_rows']:,} for training and "
        f"{r['validation_rows']:,} for validation, {r['epochs']} epochs, lambda from {min(errors):g} to "
        f"{max(errors):g}, all {len(errors)} run as one compiled sweep over {len(r['seeds'])} shuffled orders. "
        f"Validation error (mean over the orders) is {100 * min(upper):.1f}% to {100 * max(upper):.1f}% for lambda "
        f"in 0.5 to {max(errors):g}, {100 * errors[0.8]:.2f}% at 0.8 (the write-up: about 19%), and "
        f"{100 * errors[min(errors)]:.1f}% at {min(errors):g}; the best is lambda = {r['best_lambda']:g} "
        f"({100 * errors[r['best_lambda']]:.1f}%). The score works as a confidence: at lambda = {c['lambda']:g} "
        f"the {100 * c['confident_fraction']:.0f}% of reviews with |w·x| > 1 are classified with "
        f"{100 * c['confident_accuracy']:.1f}% accuracy, the rest with {100 * c['other_accuracy']:.1f}% "
        "(`experiments/records/polarity_pegasos.json`)."
    )


def iris_adaptive() -> str:
    r = record("iris_adaptive")
    loss, hp = r["final_average_loss"], r["hyperparameters"]
    ogd = {k: v for k, v in loss.items() if k.startswith("ogd ")}
    best_ogd = min(ogd, key=ogd.get)
    worst_ogd = max(ogd, key=ogd.get)
    best_hp = hp[best_ogd]

    def eta(name, key):
        return f"{key} {hp[name][key]:g}"

    return (
        f"On the post's task (stored order, predict then update) AdaGrad ({eta('adagrad', 'eta')}), NAG "
        f"({eta('nag', 'eta')}) and ONS ({eta('ons', 'gamma')}) end at {loss['adagrad']:.3f}, {loss['nag']:.3f} and "
        f"{loss['ons']:.3f}; the best of the post's three OGD settings ({ogd[best_ogd]:.3f}, eta = "
        f"{best_hp['schedule']['eta']:g} and lambda = {best_hp['projection']['radius']:g}: with a prediction made "
        f"before the update the {worst_ogd.removeprefix('ogd ')} setting is the worst, {ogd[worst_ogd]:.3f}). These "
        f"three were given rates; the KT coin bettor, given nothing, ends at {loss['coin_betting']:.3f}: it leads "
        "for the first 100 rounds, then is slow to follow the switch to virginica."
    )


def iris_sweep() -> str:
    r = record("iris_sweep")
    best, picks = r["best"], r["picks"]
    eta, lam = _best_values(best)
    small_ball = f": the ball is too small for the least-squares weights, of norm {r['least_squares_norm']:.2f}"

    def pick(name, why):
        p = picks[f"iris_ridge_{name}"]
        times = f"{p['times_the_best']:.2f}x the best{why}"
        return f"{name} ({p['eta']:g}, {p['lambda']:g}) {p['mean_average_loss']:.4f} ({times})"

    return (
        "*`python experiments/iris_sweep.py`: online ridge on iris, mean average loss (the post's protocol) over "
        f"{r['seeds']} shuffled orders on a {_side(r)} grid of eta x lambda ({r['runs']:,} runs in one program). "
        "The good settings lie in an L-shaped valley: moderate rates with any large enough radius, and for larger "
        f"rates only a narrow band of radii, where the ball tames the large steps. The best, eta = {eta:.2g} and "
        f"lambda = {lam:.2g}, averages {best['mean_score']:.4f}. The post's picks score: "
        f"{pick('arbitrary', '')}, {pick('magic', small_ball)}, {pick('noball', ': the rate is too small')}.*"
    )


def _side(r) -> str:
    side = round(r["configurations"] ** 0.5)
    return f"{side} x {side}" if side * side == r["configurations"] else f"{r['configurations']}-point"


def _best_values(best) -> tuple[float, float]:
    """The best configuration's rate and radius, from ``best.json``'s layout."""
    eta = next(v for k, v in best["values"].items() if k.endswith("eta"))
    lam = next(v for k, v in best["values"].items() if k.endswith("radius"))
    return float(eta), float(lam)


BLOCKS = {
    "iris_regret": iris_regret,
    "multiclass": multiclass,
    "polarity": polarity,
    "iris_adaptive": iris_adaptive,
    "iris_sweep": iris_sweep,
}


def fill(text: str) -> str:
    """README text with every ``exp`` block written from the records (``benchmarks/tables.fill``)."""
    spec = importlib.util.spec_from_file_location("ocolearn_bench_tables", ROOT / "benchmarks" / "tables.py")
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    return tables.fill(text, BLOCKS, kind="exp")


def run(name: str, polarity_data: Path) -> bool:
    """Run one experiment script into runs/NAME/; copy its figure. False if skipped."""
    command = [sys.executable, str(HERE / f"{name}.py"), "--out", str(ROOT / "runs" / name)]
    if name == "polarity_pegasos":
        if not polarity_data.is_dir():
            print(f"reproduce: skipping {name}: no data at {polarity_data} (--polarity-data); its record stays")
            return False
        command += ["--set", f"data.source={polarity_data.resolve()}"]
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    from ocolearn.io import atomic_write

    atomic_write(FIGURES / f"{name}.png", (ROOT / "runs" / name / f"{name}.png").read_bytes())
    print(f"reproduce: {name} ({time.perf_counter() - start:.0f} s)", flush=True)
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=EXPERIMENTS, default=list(EXPERIMENTS))
    parser.add_argument("--polarity-data", type=Path, default=POLARITY_DEFAULT)
    parser.add_argument("--readme-only", action="store_true", help="rewrite README.md from the records alone")
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md differs from the records")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    text = README.read_text()
    if args.check:
        if fill(text) != text:
            print("README.md's experiment numbers differ from experiments/records: run experiments/reproduce.py")
            return 1
        return 0
    if not args.readme_only:
        for name in args.only:
            run(name, args.polarity_data)
    from ocolearn.io import atomic_write

    atomic_write(README, fill(README.read_text()))
    print("README.md experiment numbers written from experiments/records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
