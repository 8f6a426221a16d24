"""Regenerate every experiment's record, figure and documented number.

    python experiments/reproduce.py [--only NAME ...] [--polarity-data PATH] [--readme-only] [--check]

Runs each experiment script of EXPERIMENTS in its own process (outputs under runs/NAME/), which
writes its numbers to experiments/records/NAME.json (committed, deterministic, written
atomically); copies its figure to experiments/figures/; a study (STUDIES) is
``ocolearn study configs/NAME.toml``, its ``results.json`` the record and its figures copied as
``NAME_cd.png`` and ``NAME_progressive_DATASET.png``; then rewrites each
``<!-- exp:NAME -->`` ... ``<!-- /exp:NAME -->`` block of TARGETS (docs/experiments.md, README.md)
from the records.

The polarity experiment needs the review data (not in the repository): ``--polarity-data``
names its ``txt_sentoken`` folder (default: the config's ``data.source``, relative to the
repository root). Without the data it is skipped with a message and its committed record
stays. ``--readme-only`` rewrites those pages from the records without running anything;
``--check`` rewrites nothing and exits 1 if their experiment numbers differ from the
records (``tests/test_records.py`` runs it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RECORDS = HERE / "records"
FIGURES = HERE / "figures"
TARGETS = (ROOT / "docs" / "experiments.md", ROOT / "README.md")
POLARITY_DEFAULT = ROOT / "../shared/data/review_polarity/txt_sentoken"
EXPERIMENTS = (
    "iris_regret",
    "iris_sweep",
    "study_iris",
    "multiclass",
    "polarity_pegasos",
    "iris_changing",
    "experts",
    "rates",
    "study_classifiers",
    "study_regressors",
)
STUDIES = {
    "study_iris",
    "study_classifiers",
    "study_regressors",
}  # `ocolearn study configs/NAME.toml`: its results.json is the record


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
    errors = {float(k): v for k, v in r["validation_error"].items()}
    raw = {float(k): v for k, v in r["validation_error_raw_counts"].items()}
    c, p = r["confidence"], r["pipeline"]
    lam, best = c["lambda"], r["best_lambda"]
    pipeline = f'`scale = "{p["scale"]}"` and {"an" if p["intercept"] else "no"} intercept'
    at_best = "(the best of the grid)" if best == lam else f"and {100 * errors[best][0]:.1f}% at the best, {best:g}"
    return (
        f"`configs/polarity_pegasos.toml` follows the Pegasos write-up: word counts of the "
        f"{r['train_rows'] + r['validation_rows']:,} movie reviews, {r['train_rows']:,} for training and "
        f"{r['validation_rows']:,} for validation, {r['epochs']} epochs, lambda from {min(errors):g} to "
        f"{max(errors):g}, all {len(errors)} run as one compiled sweep over {len(r['seeds'])} shuffled orders, "
        f"twice: behind the config's `[pipeline]` ({pipeline}, the settings of the text command of "
        "[Classifiers on text](tutorials/text-classifiers.md)) and "
        f"on the raw counts, as the write-up. Validation error (mean over the orders): with the pipeline "
        f"{100 * errors[lam][0]:.2f}% at lambda = {lam:g} {at_best}, with a deviation over the orders of at most "
        f"{100 * max(e[1] for k, e in errors.items() if k <= lam):.1f} points for lambda up to {lam:g}; on the raw "
        f"counts {100 * min(e[0] for e in raw.values()):.1f}% to {100 * max(e[0] for e in raw.values()):.1f}% "
        f"across lambdas, deviating over the orders by up to {100 * max(e[1] for e in raw.values()):.1f} points "
        f"(the write-up: about 19% at lambda = 0.8). The score works as a confidence: at lambda = {lam:g} the "
        f"{100 * c['confident_fraction']:.0f}% of reviews with |score| > 1 are classified with "
        f"{100 * c['confident_accuracy']:.1f}% accuracy, the rest with {100 * c['other_accuracy']:.1f}% "
        "(`experiments/records/polarity_pegasos.json`)."
    )


def iris_study() -> tuple[dict, dict]:
    """configs/study_iris.toml's record: ``{learner: progressive squared error per order}``
    (order 0 the stored order, then shuffles 0, 1, ...) and ``{learner: its settings}``."""
    r = record("study_iris")
    learners = r["datasets"]["iris"]["learners"]
    return {name: numbers["progressive"] for name, numbers in learners.items()}, r["learners"]


def iris_adaptive() -> str:
    orders, hp = iris_study()
    loss = {name: values[0] for name, values in orders.items()}  # the stored order
    ogd = {k: v for k, v in loss.items() if k.startswith("ogd_")}
    best_ogd = min(ogd, key=ogd.get)
    worst_ogd = max(ogd, key=ogd.get)
    best_hp = hp[best_ogd]
    tuned = max(loss["adagrad"], loss["nag"], loss["ons"])
    relation = "below" if tuned < ogd[best_ogd] else "against"
    worst = worst_ogd.removeprefix("ogd_")

    def eta(name, key):
        return f"{key} {hp[name][key]:g}"

    return (
        f"On the post's task (stored order, predict then update) AdaGrad ({eta('adagrad', 'eta')}), NAG "
        f"({eta('nag', 'eta')}) and ONS ({eta('ons', 'gamma')}) end at {loss['adagrad']:.3f}, {loss['nag']:.3f} and "
        f"{loss['ons']:.3f}, {relation} the best of the post's three OGD settings ({ogd[best_ogd]:.3f}, eta = "
        f"{best_hp['schedule']['eta']:g} and lambda = {best_hp['projection']['radius']:g}: with a prediction made "
        f'before the update the "{worst}" setting is the worst, {ogd[worst_ogd]:.3f}). These '
        f"three were given rates; the KT coin bettor, given nothing, ends at {loss['kt']:.3f}: it leads "
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


WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}
ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}
PARTS = {2: "half", 3: "a third", 4: "a quarter", 5: "a fifth"}


def _g(x) -> str:
    """A setting as written in a config: ``1e-08`` as 1e-8."""
    return f"{x:g}".replace("e-0", "e-").replace("e+0", "e")


def _power(n: int) -> str:
    """10000 as 10⁴, 30000 as 3·10⁴."""
    digits = len(str(n)) - 1
    lead, sup = n // 10**digits, str(digits).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    assert lead * 10**digits == n, n
    return f"10{sup}" if lead == 1 else f"{lead}·10{sup}"


def _span(values, fmt=".1f") -> str:
    """'2.2 to 2.5' (or '2.2' when both ends print the same)."""
    lo, hi = f"{min(values):{fmt}}", f"{max(values):{fmt}}"
    return lo if lo == hi else f"{lo} to {hi}"


FREE = ("cocob", "kt", "metagrad", "cocob_backprop", "mechanic", "dog")  # the parameter-free ones of study_iris


def parameter_free_table() -> tuple[dict, str, bool]:
    """Per learner of the parameter-free comparison: its losses per order, their mean, that mean
    over the mean of OGD (1, 1) and on how many orders it is below OGD (0.045, 0.3); the best
    parameter-free learner, and whether it meets the target (within 5% of (1, 1), below (0.045,
    0.3) on every order)."""
    orders, _ = iris_study()
    best, magic = orders["ogd_arbitrary"], orders["ogd_magic"]
    table = {}
    for name in ("ogd_arbitrary", "ogd_magic", *FREE):
        values = orders[name]
        mean = sum(values) / len(values)
        table[name] = {"per_order": values, "mean": mean, "ratio": mean / (sum(best) / len(best))}
        table[name]["below"] = sum(v < m for v, m in zip(values, magic, strict=True))
    winner = min(FREE, key=lambda name: table[name]["mean"])
    met = table[winner]["ratio"] <= 1.05 and table[winner]["below"] == len(best)
    return table, winner, met


def parameter_free() -> str:
    table, winner, met = parameter_free_table()
    _, cfg = iris_study()
    best, magic = cfg["ogd_arbitrary"], cfg["ogd_magic"]
    n = len(table[winner]["per_order"])

    def ogd(c):
        return f"eta = {_g(c['schedule']['eta'])}, lambda = {_g(c['projection']['radius'])}"

    free_labels = {
        "cocob": "COCOB",
        "kt": f"KT bettor, per coordinate, epsilon = {_g(cfg['kt']['epsilon'])}",
        "metagrad": f"MetaGrad, ball of radius {_g(cfg['metagrad']['radius'])}, "
        f"G = {cfg['metagrad']['lipschitz']:.1f}, {cfg['metagrad']['rates']} rates",
        "cocob_backprop": f"COCOB-Backprop, alpha = {_g(cfg['cocob_backprop']['alpha'])}",
        "mechanic": f"Mechanic around OGD (1/√t), s_init = {_g(cfg['mechanic']['s_init'])}",
        "dog": f"DoG, r_epsilon = {_g(cfg['dog']['r_epsilon'])}",
    }
    short = {"cocob": "COCOB", "kt": "KT", "metagrad": "MetaGrad", "cocob_backprop": "COCOB-Backprop"}
    labels = {
        "ogd_arbitrary": f"OGD, {ogd(best)} (hand-picked)",
        "ogd_magic": f"OGD, {ogd(magic)} (the post's pick)",
        **free_labels,
    }
    labels[winner] = f"**{short.get(winner, winner)}** (`configs/iris_coin.toml`)"
    free = sorted(FREE, key=lambda k: table[k]["mean"])
    lines = [
        "Each parameter-free learner runs with its paper's defaults, none chosen by looking at iris "
        "(`configs/study_iris.toml` lists them), on the post's task with the standard protocol (predict, then "
        f"update), on the stored order and shuffles 0 to {n - 2}. Final average loss "
        f"(1/T) Σ (w_t · x_t − y_t)², its mean over the {n} orders, that mean over the mean of the best hand-picked "
        f"OGD setting ({ogd(best)}), and on how many orders it is below the post's recommended setting ({ogd(magic)}):",
        "",
        "| learner | mean | / OGD (1, 1) | below OGD (0.045, 0.3) | stored | worst order |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key in ["ogd_arbitrary", "ogd_magic", *free]:
        row = table[key]
        below = "" if key == "ogd_magic" else f"{row['below']}/{n}"
        cells = [f"{row['mean']:.4f}", f"{row['ratio']:.3f}", below]
        if key == winner:
            cells = [f"**{c}**" for c in cells]
        worst = max(row["per_order"])
        lines.append(f"| {labels[key]} | {' | '.join(cells)} | {row['per_order'][0]:.3f} | {worst:.3f} |")
    w = table[winner]
    ratio, below = w["ratio"], w["below"]
    beats = sum(v < o for v, o in zip(w["per_order"], table["ogd_arbitrary"]["per_order"], strict=True))
    rounds = record("study_iris")["datasets"]["iris"]["report_rows"]
    lines += [
        "",
        f"The target is {'met' if met else 'not met'}: {short.get(winner, winner)}'s mean is "
        f"{100 * abs(ratio - 1):.1f}% {'above' if ratio >= 1 else 'below'} the best hand-picked setting's, and it is "
        f"below the post's recommended setting on {'all ' + str(n) if below == n else f'{below} of the {n}'} orders "
        f"(it beats (1, 1) itself on {beats} of them). Why the others fall short on {rounds} rounds:",
    ]
    return "\n".join(lines)


def metagrad_rate() -> str:
    """MetaGrad's gradient bound and its largest rate 1/(5 D G), D the ball's diameter."""
    m = iris_study()[1]["metagrad"]
    rate = 1 / (5 * 2 * m["radius"] * m["lipschitz"])
    bound = f"G of the data ({m['lipschitz']:.1f}, far above the typical gradient)"
    return f"{bound}, its largest rate, 1/(5 D G) = {rate:.1g}"


def best_weights_norm() -> str:
    """The norm of the best fixed weights of iris' stored order (the best 0-switch comparator)."""
    weights = record("iris_changing")["comparators"]["0"]["weights"]
    return f"{sum(w * w for w in weights[0]) ** 0.5:.2f}"


def cocob_backprop_alpha() -> str:
    return f"alpha = {_g(iris_study()[1]['cocob_backprop']['alpha'])}"


def parameter_free_steps() -> str:
    """Mechanic's and DoG's first steps, and where they end on the stored order."""
    orders, cfg = iris_study()
    rounds = record("study_iris")["datasets"]["iris"]["report_rows"]
    return (
        f"{_g(cfg['mechanic']['s_init'])} and **DoG** its first step at {_g(cfg['dog']['r_epsilon'])}, and both grow "
        f"the step about geometrically; {rounds} rounds are not enough: on the stored order they end at "
        f"{orders['mechanic'][0]:.3f} and {orders['dog'][0]:.3f}, where OGD (1, 1) ends at "
        f"{orders['ogd_arbitrary'][0]:.3f}"
    )


def iris_changing() -> str:
    r = record("iris_changing")
    comparators, cfg, rows = r["comparators"], r["learners"], r["regret"]
    species = r["species_start_at_round"]
    names = ("setosa", "versicolor", "virginica")
    boundary = next(int(k) for k, c in comparators.items() if set(c["segments_start_at_round"]) & set(species[1:]))
    inside = [s for k, c in comparators.items() if int(k) < boundary for s in c["segments_start_at_round"][1:]]
    within = {names[sum(s >= b for b in species) - 1] for s in inside}
    assert len(within) == 1, within
    at = sorted(set(comparators[str(boundary)]["segments_start_at_round"]) & set(species[1:]))
    flh, base = cfg["flh"], cfg["flh"]["base"]
    labels = {
        "flh": f"FLH over {base['kind'].upper()} (gamma {_g(base['gamma'])}), alpha {_g(flh['alpha'])}",
        "ogd": f"OGD, eta = {_g(cfg['ogd']['schedule']['eta'])}, lambda = {_g(cfg['ogd']['projection']['radius'])}",
        "adagrad": f"AdaGrad, eta {_g(cfg['adagrad']['eta'])}",
        "ons": f"ONS, gamma {_g(cfg['ons']['gamma'])}",
        "coin_betting": "coin betting (KT, per coordinate)",
        "cocob": "COCOB",
    }
    lines = [
        f"**Iris in its stored order** (setosa, versicolor, virginica: the inputs shift at rows {species[1] - 1} and "
        f"{species[2] - 1}), everything predicting before it updates. The best comparator sequences with at most k "
        "switches (unconstrained):",
        "",
        "| k | mean squared error | segments start at round |",
        "|---:|---:|---|",
    ]
    for k, c in comparators.items():
        lines.append(f"| {k} | {c['mean_squared_error']:.4f} | {', '.join(map(str, c['segments_start_at_round']))} |")
    lines += [
        "",
        "The best predictor hardly moves where the species change: one set of weights fits all three, and the first "
        f"switches buy a better fit *within* {within.pop()} (rounds {min(inside)} to {max(inside)}); only the "
        f"{ORDINALS[boundary]} falls on a species boundary (round {', '.join(map(str, at))}). Regret in the learners' "
        "loss ½(w · x − y)², summed, against these unconstrained comparators (OGD's ball of radius "
        f"{_g(cfg['ogd']['projection']['radius'])} does not hold the best fixed weights, of norm "
        f"{best_weights_norm()}, which counts against it):",
        "",
        "| learner | average loss | static (k = 0) | k = 1 | k = 2 | k = 4 | adaptive, 50 rounds "
        "| same, after round 50 | setosa | versicolor | virginica |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    late = min(m["adaptive_regret_50_after_round_50"] for m in rows.values())
    virginica = min(m["regret_on_each_species"][2] for m in rows.values())
    for name, m in rows.items():
        cells = [f"{m['average_loss']:.4f}", *(f"{m['regret_k_switch'][k]:.2f}" for k in "0124")]
        cells.append(f"{m['adaptive_regret_50']:.2f}")
        after = f"{m['adaptive_regret_50_after_round_50']:.2f}"
        cells.append(f"**{after}**" if m["adaptive_regret_50_after_round_50"] == late else after)
        cells += [f"{v:.2f}" for v in m["regret_on_each_species"][:2]]
        v = m["regret_on_each_species"][2]
        cells.append(f"**{v:.2f}**" if v == virginica else f"{v:.2f}")
        lines.append(f"| {labels[name]} | {' | '.join(cells)} |")
    return "\n".join(lines)


def iris_changing_tracking() -> str:
    rows = record("iris_changing")["regret"]
    first = [m["adaptive_regret_50"] for m in rows.values() if m["worst_interval_starts_at_round"] == 1]
    late = {k: m["adaptive_regret_50_after_round_50"] for k, m in rows.items()}
    virginica = {k: m["regret_on_each_species"][2] for k, m in rows.items()}
    kt = rows["coin_betting"]
    middle = [late[k] for k in ("ogd", "adagrad", "cocob")]
    near = (late["flh"] + late["ons"]) / 2
    return (
        "Which learner tracks: every learner's worst 50 rounds but the coin bettors' are the first, where it learns "
        f"from w = 0 ({_span(first)} for all). After them, FLH ({late['flh']:.2f}) and ONS ({late['ons']:.2f}) keep "
        f"the regret of any 50 rounds near {round(near)}, {PARTS[round(sum(middle) / len(middle) / near)]} that of "
        f"OGD, AdaGrad and COCOB ({_span(middle)}), and lose least on virginica ({virginica['flh']:.2f} and "
        f"{virginica['ons']:.2f}). The KT bettor is the one that does not track: its regret on the virginica rounds "
        f"is {virginica['coin_betting']:.2f}, and its worst interval is exactly rounds "
        f"{kt['worst_interval_starts_at_round']} to {kt['worst_interval_starts_at_round'] + 49}. FLH tracks best, "
        "but only just ahead of one ONS: since the best predictor barely moves on iris, FLH's fresh experts have "
        "little to gain here; where the best predictor does move (above) they do."
    )


def experts_setup() -> str:
    r = record("experts")
    return (
        "**Experts.** `configs/experts.toml` runs Hedge with the tuned rate η = √(8 ln N / T) and "
        f"{WORDS[len(r['learners']) - 1]} other learners over N = {r['experts']} experts for T = {r['rounds']} "
        f"rounds, on {WORDS[len(r['sequences'])]} generated sequences (`ocolearn/sequences.py`): *random* (expert "
        "i's losses Bernoulli(μ_i), μ spread over [0.3, 0.7]), *coins* (every loss a fair coin, the lower bound's "
        "randomized adversary) and *adaptive* (loss 1 to the expert the learner weighs most, generated against "
        "each learner). R_t is the regret against the best expert of rounds 1..t; the tuned bound ln N/η + ηt/8 "
        f"reaches √(T ln N / 2) = {r['bound_at_T']:.1f} at T."
    )


def experts() -> str:
    r = record("experts")
    tuned, sequences = r["tuned_eta"], r["sequences"]

    def label(name, c):
        if name == "hedge":
            return f"Hedge, tuned η = {tuned:.4f}"
        if c["kind"] == "ftrl":
            return "anytime FTRL, η_t = √(8 ln N / t)"
        times = c["eta"] / tuned
        if times > 50:
            return f"follow the leader (η = {_g(c['eta'])})"
        return f"Hedge, {round(times, 6):g} η" if times > 1 else f"Hedge, η / {round(1 / times, 6):g}"

    def cell(m):
        ratio = m["max_regret_over_tuned_bound"]
        text = f"{ratio:.1f}" if ratio >= 10 else f"{ratio:.2f}"
        return f"{m['regret_at_T']:.1f} ({text if m['below_tuned_bound'] else f'**{text}**'})"

    lines = [
        f"| R_T (max_t R_t / tuned bound) | {' | '.join(sequences)} |",
        "|---|" + "---|" * len(sequences),
    ]
    for name, c in r["learners"].items():
        lines.append(f"| {label(name, c)} | {' | '.join(cell(sequences[s][name]) for s in sequences)} |")
    return "\n".join(lines)


def rates() -> str:
    r = record("rates")
    study, cfg = r["study"], r["learners"]
    box = cfg["ogd_signs"]["projection"]
    ons = cfg["ons_concave"]
    gamma = Fraction(ons["gamma"]).limit_denominator(1000)
    size = f"{study['sequences']} seq., T = {_power(study['rounds'])}"
    labels = {
        "ogd_signs": f"OGD η/√t, linear, random ±1 signs on [{_g(box['lower'])}, {_g(box['upper'])}] ({size})",
        "ogd_strong": f"OGD 1/(λt), (w - y_t)²/2, y_t = ±1 ({size})",
        "ogd_strong_sqrt": "OGD η/√t, the same losses",
        "ons_concave": f"ONS, γ = {gamma} (the theorem's), ε = {_g(ons['epsilon'])}, exp-concave squared loss, "
        f"d = {study['dimension']} ({study['concave_sequences']} seq., T = {_power(study['concave_rounds'])})",
        "ogd_concave_sqrt": "OGD η/√t, the same losses",
    }
    lines = [
        "| learner, losses | R_T | R_T / bound | R / scale at T/10, at T | regret per e-fold of t, decade before T/10, "
        "last decade |",
        "|---|---|---|---|---|",
    ]
    for name, m in r.items():
        if name not in labels:
            continue
        before, last = m["regret_per_e_fold_decade_before_T_over_10"], m["regret_per_e_fold_last_decade"]
        growth = last / before
        rate = "√T" if growth > 2 else "log T"
        e_fold = ", ".join(f"{v:.1f}" if v >= 1 else f"{v:.3f}" for v in (before, last))
        scale = "R/√t" if name == "ogd_signs" else "R/ln t"
        regret = m["mean_regret_at_T"]
        ratio = "" if m["regret_over_bound_at_T"] is None else f"{m['regret_over_bound_at_T']:.2f}"
        lines.append(
            f"| {labels[name]} | {regret:{'.2f' if regret < 10 else '.1f'}} | {ratio} | "
            f"{scale}: {m['regret_over_scale_at_T_over_10']:.3g}, {m['regret_over_scale_at_T']:.3g} | "
            f"{e_fold} ({f'×{growth:.1f}: ' if name == 'ogd_signs' else ''}{rate}) |"
        )
    signs, strong, sqrt, ons_m = r["ogd_signs"], r["ogd_strong"], r["ogd_strong_sqrt"], r["ons_concave"]
    a = ons_m["regret_per_e_fold_last_decade"]
    b = ons_m["mean_regret_at_T"] - a * math.log(ons_m["T"])
    sqrt_growth = sqrt["regret_per_e_fold_last_decade"] / sqrt["regret_per_e_fold_decade_before_T_over_10"]
    lines += [
        "",
        "On random signs no learner can do better than E|Σ g_t| ~ √(2T/π) (the dashed line), so OGD's R_T/√T levels "
        f"off at {signs['regret_over_scale_at_T']:.2f}, {PARTS[round(1 / signs['regret_over_bound_at_T'])]} of "
        "Zinkevich's bound: the √T rate is tight. On the strongly convex losses the 1/(λt) steps (the running mean) "
        f"add {strong['regret_per_e_fold_last_decade']:.2f} of regret per e-fold of rounds in both decades, σ²/2 "
        f"exactly, so R_T/ln T levels off ({strong['regret_over_scale_at_T']:.2f}, bound "
        f"{strong['bound_at_T'] / math.log(strong['T'] + 1):.1f}), while η/√t steps on the same losses add "
        f"{WORDS[round(sqrt_growth)]} times more per e-fold each decade. ONS with the theorem's γ has a large "
        f"negative offset (R_t ≈ {a:.0f} ln t - {-b:.0f} here), so R_t/ln t still climbs toward about {a:.0f} while "
        f"the regret added per e-fold has settled ({ons_m['regret_per_e_fold_decade_before_T_over_10']:.1f}, then "
        f"{a:.1f}); the bound is the one in the proof of Hazan's ONS theorem (chapter 4) for any ε > 0."
        + (
            " On this stochastic sequence OGD with η/√t has the smaller regret at "
            f"T = {_power(ons_m['T'])} although its rate is worse: the log T guarantee is for the worst case."
            if r["ogd_concave_sqrt"]["mean_regret_at_T"] < ons_m["mean_regret_at_T"]
            else ""
        ),
    ]
    return "\n".join(lines)


def study_block(name: str):
    """A study's leaderboard, written by the study's own writer (``ocolearn.study``) from its record."""

    def block() -> str:
        from ocolearn.study import leaderboard_markdown

        return leaderboard_markdown(record(name)).strip()

    return block


BLOCKS = {
    "iris_regret": iris_regret,
    "multiclass": multiclass,
    "polarity": polarity,
    "iris_adaptive": iris_adaptive,
    "iris_sweep": iris_sweep,
    "parameter_free": parameter_free,
    "metagrad_rate": metagrad_rate,
    "cocob_backprop_alpha": cocob_backprop_alpha,
    "parameter_free_steps": parameter_free_steps,
    "iris_changing": iris_changing,
    "iris_changing_tracking": iris_changing_tracking,
    "experts_setup": experts_setup,
    "experts": experts,
    "rates": rates,
    "study_classifiers": study_block("study_classifiers"),
    "study_regressors": study_block("study_regressors"),
}


def tables():
    """``benchmarks/tables.py``, whose ``fill`` and ``write`` write the blocks."""
    spec = importlib.util.spec_from_file_location("ocolearn_bench_tables", ROOT / "benchmarks" / "tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fill(text: str) -> str:
    """``text`` with every ``exp`` block it holds written from the records (``benchmarks/tables.fill``)."""
    return tables().fill(text, BLOCKS, kind="exp")


def run(name: str, polarity_data: Path) -> bool:
    """Run one experiment script into runs/NAME/; copy its figure (if it draws one). False if skipped."""
    command = [sys.executable, str(HERE / f"{name}.py"), "--out", str(ROOT / "runs" / name)]
    if name in STUDIES:
        out = ROOT / "runs" / name
        command = [sys.executable, "-m", "ocolearn.cli", "study", f"configs/{name}.toml", "--out", str(out), "--quiet"]
    if name == "polarity_pegasos":
        if not polarity_data.is_dir():
            print(f"reproduce: skipping {name}: no data at {polarity_data} (--polarity-data); its record stays")
            return False
        command += ["--set", f"data.source={polarity_data.resolve()}"]
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    from ocolearn.io import atomic_write

    if name in STUDIES:
        atomic_write(RECORDS / f"{name}.json", (out / "results.json").read_bytes())
        for figure in sorted(out.glob("*.png")):
            atomic_write(FIGURES / f"{name}_{figure.name}", figure.read_bytes())
    else:
        atomic_write(FIGURES / f"{name}.png", (ROOT / "runs" / name / f"{name}.png").read_bytes())
    print(f"reproduce: {name} ({time.perf_counter() - start:.0f} s)", flush=True)
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=EXPERIMENTS, default=list(EXPERIMENTS))
    parser.add_argument("--polarity-data", type=Path, default=POLARITY_DEFAULT)
    parser.add_argument("--readme-only", action="store_true", help="rewrite the pages from the records alone")
    parser.add_argument("--check", action="store_true", help="exit 1 if the pages differ from the records")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.check:
        if not tables().write(TARGETS, BLOCKS, "exp", check=True):
            print(
                "the experiment numbers of docs/experiments.md or README.md differ from experiments/records: run "
                "experiments/reproduce.py --readme-only"
            )
            return 1
        return 0
    if not args.readme_only:
        for name in args.only:
            run(name, args.polarity_data)
    tables().write(TARGETS, BLOCKS, "exp", check=False)
    print("experiment numbers written from experiments/records into docs/experiments.md and README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
