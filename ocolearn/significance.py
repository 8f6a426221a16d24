"""Is a ranking of learners over data sets significant? Demšar (2006), section 3.2.

For k learners on N data sets, each data set ranks the learners (1 = the lowest score, ties
share the mean of their ranks); ``R_j`` is learner j's average rank. The Friedman statistic

    chi2_F = 12 N / (k (k + 1)) * (sum_j R_j^2 - k (k + 1)^2 / 4)

is chi-square with k - 1 degrees of freedom under the null hypothesis that all learners are
equivalent (its tail: ``gammaincc((k - 1) / 2, chi2_F / 2)``); Iman and Davenport's
``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)`` is F with (k - 1, (k - 1)(N - 1)) degrees of
freedom and less conservative (its tail through the regularized incomplete beta function).
Two learners differ (Nemenyi test) when their average ranks differ by at least the critical
difference ``CD = q_alpha sqrt(k (k + 1) / (6 N))``, with ``q_alpha`` the studentized range
statistic for k groups and infinite degrees of freedom divided by sqrt(2) (``Q_05``).

On one data set, two learners run over the same orders are paired by order: Wilcoxon's
signed-rank test (Demšar 2006, section 3.1.3) of their differences, exact (``signed_rank_p``).

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


def ranks(scores) -> np.ndarray:
    """Ranks of each row's scores (1 = lowest), ties sharing the mean of their ranks; a NaN
    ranks last."""
    scores = np.where(np.isnan(scores), np.inf, np.asarray(scores, np.float64))
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
    """The Friedman test of an (N data sets, k learners) array of scores (lower is better)."""
    N, k = np.shape(scores)
    R = ranks(scores).mean(axis=0)
    chi2 = 12.0 * N / (k * (k + 1)) * (np.sum(R**2) - k * (k + 1) ** 2 / 4.0)
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


def signed_rank_p(differences) -> float:
    """The two-sided p-value of Wilcoxon's signed-rank test of paired ``differences``: zeros
    dropped, tied |differences| sharing their ranks, ``W+`` the sum of the ranks of the positive
    ones, and ``P(|W+ - E W+| >= |w+ - E W+|)`` counted over all 2^n equally likely signs
    (exact; n <= 20, beyond which the normal approximation is used)."""
    d = np.asarray(differences, np.float64)
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0
    r = ranks(np.abs(d)[None, :])[0]
    centre, w = r.sum() / 2.0, r[d > 0].sum()
    if n > 20:
        sd = math.sqrt(np.sum(r**2) / 4.0)
        return math.erfc(abs(w - centre) / sd / math.sqrt(2.0))
    signs = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
    return float(np.mean(np.abs(signs @ r - centre) >= abs(w - centre) - 1e-9))


def paired(per_order: dict) -> dict:
    """On one data set: the learner with the lowest mean over orders, and the signed-rank
    p-value of its difference from each other learner, paired by order
    (``{learner: [score of order 1, 2, ...]}``)."""
    means = {name: float(np.mean(v)) for name, v in per_order.items()}
    best = min(means, key=lambda name: np.nan_to_num(means[name], nan=np.inf))
    against = {
        name: signed_rank_p(np.asarray(v, np.float64) - np.asarray(per_order[best], np.float64))
        for name, v in per_order.items()
        if name != best
    }
    return {"best": best, "p_values": against}


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
