"""Is a ranking of learners over data sets significant? Demšar (2006), section 3.2.

For k learners on N data sets, each data set ranks the learners (1 = the lowest score, ties
share the mean of their ranks; a score that is not finite, a diverged run, ranks last);
``R_j`` is learner j's average rank. The Friedman statistic, corrected for ties,

    chi2_F = 12 N / (k (k + 1)) * (sum_j R_j^2 - k (k + 1)^2 / 4) / C,
    C = 1 - sum over data sets and groups of t tied scores of (t^3 - t) / (N k (k^2 - 1))

(C = 1 without ties: Demšar's formula; with them, ``scipy.stats.friedmanchisquare``'s) is
chi-square with k - 1 degrees of freedom under the null hypothesis that all learners are
equivalent (its tail: ``gammaincc((k - 1) / 2, chi2_F / 2)``); Iman and Davenport's
``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)`` of the corrected chi2_F (Conover's T2: the
analysis-of-variance F of the ranks) is F with (k - 1, (k - 1)(N - 1)) degrees of freedom and
less conservative (its tail through the regularized incomplete beta function). Two learners
differ (Nemenyi test) when their average ranks differ by at least the critical difference
``CD = q_alpha sqrt(k (k + 1) / (6 N))``, with ``q_alpha`` the studentized range statistic for
k groups and infinite degrees of freedom divided by sqrt(2) (``Q_05``); it has no correction
for ties (Demšar's test as published).

On one data set, two learners run over the same orders are paired by order: Wilcoxon's
signed-rank test (Demšar 2006, section 3.1.3) of their differences (``signed_rank_p``: exact up
to ``EXACT_UP_TO`` nonzero differences, the normal approximation beyond; ``paired``: a diverged
order counts against the learner that diverged, and a learner with one is never listed as not
different from the best).

>>> r = compare({"x": {"a": 0.1, "b": 0.2, "c": 0.3}, "y": {"a": 0.2, "b": 0.3, "c": 0.1}}, ["a", "b", "c"])
>>> r["average_ranks"]
{'a': 1.5, 'b': 2.5, 'c': 2.0}
"""

from __future__ import annotations

import math

import numpy as np

# q_0.05 of the Nemenyi test for k = 2..10 learners: Demšar (2006), Table 5(a); for k = 11..20,
# the studentized range quantile q_{0.95}(k, inf) / sqrt(2) of the same tables.
Q_05 = {
    2: 1.960,
    3: 2.343,
    4: 2.569,
    5: 2.728,
    6: 2.850,
    7: 2.949,
    8: 3.031,
    9: 3.102,
    10: 3.164,
    11: 3.219,
    12: 3.268,
    13: 3.313,
    14: 3.354,
    15: 3.391,
    16: 3.426,
    17: 3.458,
    18: 3.489,
    19: 3.517,
    20: 3.544,
}


EXACT_UP_TO = 50  # signed_rank_p's exact p-value up to this many nonzero differences (scipy's own choice)


def ranks(scores) -> np.ndarray:
    """Ranks of each row's scores (1 = lowest), ties sharing the mean of their ranks; a score that
    is not finite (NaN or +-inf: a diverged run) ranks last, tied with the row's other such scores."""
    scores = np.asarray(scores, np.float64)
    scores = np.where(np.isfinite(scores), scores, np.inf)
    out = np.empty_like(scores)
    for i, values in enumerate(scores):
        order = np.argsort(values, kind="stable")
        sorted_values = values[order]
        r = np.arange(1, len(values) + 1, dtype=np.float64)
        for v in np.unique(sorted_values):
            tied = sorted_values == v
            r[tied] = r[tied].mean()
        out[i, order] = r
    return out


def chi2_tail(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with ``df`` degrees of freedom."""
    from jax.scipy.special import gammaincc

    with _x64():
        return float(gammaincc(df / 2.0, x / 2.0))


def f_tail(x: float, d1: float, d2: float) -> float:
    """P(X >= x) for X F-distributed with (d1, d2) degrees of freedom: I_{d2/(d2 + d1 x)}(d2/2, d1/2)."""
    from jax.scipy.special import betainc

    with _x64():
        return float(betainc(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * x)))


def _x64():
    import jax

    return jax.enable_x64(True)


def friedman(scores) -> dict:
    """The Friedman test of an (N data sets, k learners) array of scores (lower is better),
    corrected for ties (the module's docstring); when every data set ties all its learners there
    is nothing to rank: chi2 = 0, p = 1."""
    N, k = np.shape(scores)
    r = ranks(scores)
    R = r.mean(axis=0)
    ties = sum(float(np.sum(t**3 - t)) for t in (np.unique(row, return_counts=True)[1] for row in r))
    correction = 1.0 - ties / (N * k * (k * k - 1))
    chi2 = 12.0 * N / (k * (k + 1)) * (np.sum(R**2) - k * (k + 1) ** 2 / 4.0)
    chi2 = chi2 / correction if correction > 0 else 0.0
    out = {"chi2": float(chi2), "df": k - 1, "p_value": chi2_tail(chi2, k - 1)}
    denominator = N * (k - 1) - chi2
    if denominator > 0:
        F = (N - 1) * chi2 / denominator
        out.update(iman_davenport_F=float(F), iman_davenport_p=f_tail(F, k - 1, (k - 1) * (N - 1)))
    return out


def critical_difference(k: int, N: int) -> float | None:
    """Nemenyi's critical difference at alpha = 0.05 (None beyond the table's k)."""
    q = Q_05.get(k)
    return None if q is None else q * math.sqrt(k * (k + 1) / (6.0 * N))


def signed_rank_p(differences, exact_up_to: int = EXACT_UP_TO) -> float:
    """The two-sided p-value of Wilcoxon's signed-rank test of paired ``differences``: zeros
    dropped (scipy's ``zero_method="wilcox"``), tied |differences| sharing the mean of their
    ranks, ``W+`` the sum of the ranks of the positive ones. With n <= ``exact_up_to`` (at most
    62) nonzero differences it is exact: ``P(|W+ - E W+| >= |w+ - E W+|)`` over the 2^n equally
    likely signs of the ranks as they are (counted by convolution), which is
    ``scipy.stats.wilcoxon(method="exact")`` without ties and its permutation test
    (``method=PermutationMethod()``) with them. Beyond, the normal approximation with the
    variance ``sum r^2 / 4`` (tie-corrected) and no continuity correction: scipy's
    ``method="approx"``. An infinite difference has the largest |difference|; a NaN one has no
    sign and is an error (``paired`` says what a diverged order counts as)."""
    d = np.asarray(differences, np.float64)
    if np.isnan(d).any():
        raise ValueError("signed_rank_p: a NaN difference has no sign")
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0
    twice = np.rint(2.0 * ranks(np.abs(d)[None, :])[0]).astype(np.int64)  # mean ranks are halves
    total, w = int(twice.sum()), int(twice[d > 0].sum())  # total = n (n + 1): E W+ = total / 4
    if n > exact_up_to:
        sd = math.sqrt(np.sum(twice.astype(np.float64) ** 2) / 16.0)
        return math.erfc(abs(w - total / 2) / 2.0 / sd / math.sqrt(2.0))
    counts = np.zeros(total + 1, np.int64)  # counts[s]: sign patterns with 2 W+ = s
    counts[0] = 1
    for t in twice:
        counts[t:] = counts[t:] + counts[:-t]
    s = np.arange(total + 1)
    return float(counts[np.abs(2 * s - total) >= abs(2 * w - total)].sum() / 2.0**n)


def paired(per_order: dict) -> dict:
    """On one data set, learners run over the same orders (``{learner: [score of order 1, 2,
    ...]}``, lower is better): the learner with the lowest mean over orders (``best``), the
    signed-rank p-value of its difference from each other learner, paired by order
    (``p_values``), and the learners with a diverged order (``diverged``: how many orders).

    The rule for a diverged order (a score NaN or +-inf): it is worse than any finite score.
    It counts as +inf, so against a finite score it is the largest difference, in the direction
    that counts against the learner that diverged; an order both diverged on is a tie (dropped,
    as a zero difference). A learner with a diverged order is never ``not_different`` from the best."""
    scores = {name: np.asarray(v, np.float64) for name, v in per_order.items()}
    scores = {name: np.where(np.isfinite(v), v, np.inf) for name, v in scores.items()}
    means = {name: float(np.mean(v)) for name, v in scores.items()}
    best = min(means, key=means.__getitem__)
    against = {}
    for name, v in scores.items():
        if name != best:
            with np.errstate(invalid="ignore"):  # inf - inf: both diverged, a tie
                d = v - scores[best]
            against[name] = signed_rank_p(np.where(np.isnan(d), 0.0, d))
    diverged = {name: int(np.sum(np.isinf(v))) for name, v in scores.items() if np.isinf(v).any()}
    return {"best": best, "p_values": against, "diverged": diverged}


def not_different(result: dict, alpha: float = 0.05) -> dict:
    """``{learner: p}`` of the learners of a ``paired`` result not significantly different from
    the best (p >= ``alpha``), leaving out every learner with a diverged order."""
    return {name: p for name, p in result["p_values"].items() if p >= alpha and name not in result["diverged"]}


def compare(scores: dict, learners: list[str]) -> dict:
    """Average ranks, the Friedman test and the critical difference of ``scores``
    (``{data set: {learner: score}}``, lower is better), with a sentence saying what they mean."""
    datasets = list(scores)
    k, N = len(learners), len(datasets)
    if k < 2 or N < 2:
        return {"text": f"No significance test: it needs two or more learners on two or more data sets ({k} on {N})."}
    table = np.array([[scores[d][name] for name in learners] for d in datasets], np.float64)
    R = ranks(table).mean(axis=0)
    out = {"datasets": N, "learners": k, "average_ranks": {n: float(r) for n, r in zip(learners, R, strict=True)}}
    out.update(friedman=friedman(table), critical_difference=critical_difference(k, N), alpha=0.05)
    f = out["friedman"]
    text = (
        f"Average ranks over {N} data sets; Friedman chi2 = {f['chi2']:.2f} with {k - 1} degrees of freedom, "
        f"p = {f['p_value']:.3g}"
    )
    if "iman_davenport_p" in f:
        text += f" (Iman-Davenport F = {f['iman_davenport_F']:.2f}, p = {f['iman_davenport_p']:.3g})"
    cd = out["critical_difference"]
    if cd is not None:
        text += f"; Nemenyi critical difference at 0.05: {cd:.2f} (Demšar 2006)."
    out["text"] = text
    return out
