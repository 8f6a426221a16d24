"""``ocolearn.significance``: the Friedman test (tie-corrected), Iman-Davenport and Nemenyi against
scipy and closed forms; Wilcoxon's signed-rank test against scipy's exact, permutation and normal
p-values; a learner with diverged orders is never listed as not different from the best."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ocolearn.significance import (
    EXACT_UP_TO,
    Q_05,
    compare,
    critical_difference,
    friedman,
    not_different,
    paired,
    ranks,
    signed_rank_p,
)

stats = pytest.importorskip("scipy.stats")
ROOT = Path(__file__).resolve().parents[1]

# Issue 41's tied table: 0.35 without the correction for ties, 0.477 with it (scipy).
TIED = np.array([[0, 0, 1, 0], [1, 1, 1, 2], [1, 2, 2, 2], [2, 2, 0, 0], [2, 2, 0, 1], [2, 0, 1, 2]], np.float64)


def anova_F_of_ranks(scores):
    """Conover's T2, the analysis-of-variance F of the ranks (treatments x blocks), from its sums of squares."""
    r = ranks(scores)
    N, k = r.shape
    treatments = N * np.sum((r.mean(axis=0) - r.mean()) ** 2)
    error = np.sum((r - r.mean()) ** 2) - treatments  # (every block's ranks have the same mean)
    return (treatments / (k - 1)) / (error / ((N - 1) * (k - 1)))


def test_ranks_equal_scipy_and_a_diverged_score_ranks_last():
    scores = np.random.default_rng(0).uniform(size=(7, 5)).round(1)  # ties within data sets
    np.testing.assert_array_equal(ranks(scores), [stats.rankdata(row) for row in scores])
    np.testing.assert_array_equal(ranks([[np.nan, 0.2, -np.inf, 0.1, np.inf]]), [[4.0, 2.0, 4.0, 1.0, 4.0]])


def test_friedman_is_corrected_for_ties_as_scipy():
    result = friedman(TIED)
    chi2, p = stats.friedmanchisquare(*TIED.T)
    assert chi2 == pytest.approx(0.4772727, abs=1e-7)
    assert result["chi2"] == pytest.approx(chi2, rel=1e-12)  # (without the correction: 0.35)
    assert result["p_value"] == pytest.approx(p, rel=1e-12)
    rng = np.random.default_rng(1)
    for N, k, levels in [(7, 5, 3), (4, 3, 2), (12, 6, 4), (9, 4, 10**6)]:  # the last: no ties
        scores = rng.integers(0, levels, size=(N, k)).astype(np.float64)
        scores[0, :2] = 0.0, 1.0  # not every data set ties all its learners
        chi2, p = stats.friedmanchisquare(*scores.T)
        result = friedman(scores)
        assert result["chi2"] == pytest.approx(chi2, rel=1e-12, abs=1e-12)
        assert result["p_value"] == pytest.approx(p, rel=1e-9)
        assert result["df"] == k - 1
        F = result["iman_davenport_F"]
        assert F == pytest.approx(anova_F_of_ranks(scores), rel=1e-12)
        assert result["iman_davenport_p"] == pytest.approx(stats.f.sf(F, k - 1, (k - 1) * (N - 1)), rel=1e-9)
    # near the largest chi2, N (k - 1) = 20: nine data sets rank 1, 2, 3 and one ties the last two
    scores = np.vstack([np.tile([0.0, 1.0, 2.0], (9, 1)), [0.0, 1.0, 1.0]])
    result = friedman(scores)
    assert result["chi2"] == pytest.approx(stats.friedmanchisquare(*scores.T).statistic, rel=1e-12)
    assert 19 < result["chi2"] < 20 and result["iman_davenport_F"] == pytest.approx(anova_F_of_ranks(scores))
    result = friedman(np.tile([0.0, 1.0, 2.0], (4, 1)))  # every data set ranks alike: F has no finite value
    assert result["chi2"] == pytest.approx(8.0, rel=1e-12) and "iman_davenport_F" not in result
    result = friedman(np.ones((3, 4)))  # every data set ties all its learners: nothing to rank
    assert (result["chi2"], result["p_value"], result["iman_davenport_p"]) == (0.0, 1.0, 1.0)


def test_nemenyi_table_equals_the_studentized_range():
    for k, q in Q_05.items():
        # the tables give three decimals (Demšar truncates: 2.3437 is 2.343)
        assert q == pytest.approx(stats.studentized_range.ppf(0.95, k, np.inf) / math.sqrt(2), abs=1e-3), k
    # Demšar (2006), section 3.2.4: k = 4 classifiers on N = 14 data sets, CD = 1.25
    assert critical_difference(4, 14) == pytest.approx(1.25, abs=5e-3)
    assert critical_difference(21, 14) is None  # beyond the table


def test_compare_says_what_the_ranks_and_tests_are():
    table = {
        "x": {"a": 0.1, "b": 0.2, "c": 0.3},
        "y": {"a": 0.2, "b": 0.3, "c": 0.1},
        "z": {"a": 0.1, "b": 0.5, "c": 0.1},
    }
    result = compare(table, ["a", "b", "c"])
    assert result["average_ranks"] == {"a": 1.5, "b": 8 / 3, "c": 11 / 6}
    assert (result["datasets"], result["learners"], result["alpha"]) == (3, 3, 0.05)
    assert result["friedman"] == friedman(np.array([[0.1, 0.2, 0.3], [0.2, 0.3, 0.1], [0.1, 0.5, 0.1]]))
    assert result["critical_difference"] == critical_difference(3, 3)
    f = result["friedman"]
    assert result["text"] == (
        f"Average ranks over 3 data sets; Friedman chi2 = {f['chi2']:.2f} with 2 degrees of freedom, "
        f"p = {f['p_value']:.3g} (Iman-Davenport F = {f['iman_davenport_F']:.2f}, p = {f['iman_davenport_p']:.3g}); "
        f"Nemenyi critical difference at 0.05: {critical_difference(3, 3):.2f} (Demšar 2006)."
    )
    assert compare({"x": table["x"]}, ["a", "b", "c"]) == {
        "text": "No significance test: it needs two or more learners on two or more data sets (3 on 1)."
    }
    assert compare({"x": {"a": 0.1, "b": 0.2}, "y": {"a": 0.1, "b": 0.3}}, ["a", "b"])["average_ranks"] == {
        "a": 1.0,
        "b": 2.0,
    }  # two learners on two data sets: the fewest there is a test for
    many = [f"l{i}" for i in range(21)]  # no Nemenyi table for 21 learners
    result = compare({d: {n: float(i) for i, n in enumerate(many)} for d in "xy"}, many)
    assert result["critical_difference"] is None and "Nemenyi" not in result["text"]


def every_sign_p(d):
    """The exact two-sided p-value by brute force: |W+ - E W+| over all 2^n signs of scipy's ranks."""
    d = d[d != 0]
    r = stats.rankdata(np.abs(d))
    signs = (np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1
    return np.mean(np.abs(signs @ r - r.sum() / 2) >= abs(r[d > 0].sum() - r.sum() / 2))


def test_signed_rank_p_values_equal_scipy():
    rng = np.random.default_rng(2)
    for n in (1, 5, 12, 20, 33, EXACT_UP_TO):
        d = rng.normal(0.3, 1.0, n)  # no ties, no zeros: scipy's exact distribution
        assert signed_rank_p(d) == pytest.approx(stats.wilcoxon(d, method="exact").pvalue, rel=1e-12)
        assert signed_rank_p(d, exact_up_to=0) == pytest.approx(stats.wilcoxon(d, method="approx").pvalue, rel=1e-12)
    assert signed_rank_p(np.ones(8)) == pytest.approx(2 / 256)  # all one sign: the smallest p of 8 orders
    exhaustive = stats.PermutationMethod(n_resamples=np.inf)  # all 2^n signs
    for n in (6, 9, 11, 18):
        d = rng.integers(-3, 4, n).astype(np.float64)  # ties and zeros (dropped: zero_method="wilcox")
        d[:2] = 0.0, 1.0
        if n < 12:  # (scipy's enumeration takes seconds beyond)
            assert signed_rank_p(d) == pytest.approx(stats.wilcoxon(d, method=exhaustive).pvalue, rel=1e-12)
        assert signed_rank_p(d) == pytest.approx(every_sign_p(d), rel=1e-12)
        assert signed_rank_p(d, exact_up_to=0) == pytest.approx(stats.wilcoxon(d, method="approx").pvalue, rel=1e-12)
    d = rng.integers(-9, 10, EXACT_UP_TO + 10).astype(np.float64)  # beyond EXACT_UP_TO: the normal approximation
    assert signed_rank_p(d) == pytest.approx(stats.wilcoxon(d, method="approx").pvalue, rel=1e-12)
    # an infinite difference is the largest: as a finite one larger than the others
    d = rng.normal(0.0, 1.0, 9)
    assert signed_rank_p(np.r_[d, np.inf, -np.inf]) == signed_rank_p(np.r_[d, 1e300, -1e300])
    assert signed_rank_p([0.0, 0.0]) == 1.0  # nothing but ties
    with pytest.raises(ValueError, match="^signed_rank_p: a NaN difference has no sign$"):
        signed_rank_p([1.0, np.nan])


def nan_as_most_negative(differences):
    """The old rule (deliberately broken): a NaN difference passed ``d != 0``, ranked last and
    counted among the negative ones: the largest difference in the learner's favour."""
    return signed_rank_p(np.where(np.isnan(differences), -np.inf, differences))


def test_a_learner_with_diverged_orders_is_never_close_to_the_best():
    rng = np.random.default_rng(3)
    best = rng.uniform(0.1, 0.2, 10)
    worse = best + rng.uniform(0.001, 0.01, 10)  # worse on every order, diverged on 3 of them
    worse[[1, 4, 7]] = np.nan
    assert paired({"b": [1.0, 2.0], "a": [2.0, 3.0]})["best"] == "b"  # the lowest mean, not the first name
    result = paired({"best": best, "worse": worse})
    assert result["best"] == "best" and result["diverged"] == {"worse": 3}
    assert result["p_values"]["worse"] == 2 / 2**10  # worse on all 10 orders: the smallest p
    assert not_different(result) == {}
    # the old rule counted the 3 diverged orders in its favour: p = 1, "not different"
    assert nan_as_most_negative(worse - best) == 1.0
    # as good as the best where it ran: the p-value is not small, but the learner is still left out
    tied = best.copy()
    tied[[1, 4, 7]] = [np.nan, np.inf, -np.inf]
    result = paired({"best": best, "tied": tied, "close": best + rng.normal(0, 1e-3, 10)})
    assert result["p_values"]["tied"] == 0.25 and result["diverged"] == {"tied": 3}
    assert set(not_different(result)) == {"close"}
    assert not_different(result, alpha=result["p_values"]["close"]) == {"close": result["p_values"]["close"]}
    # an order both diverged on is a tie; the best is the lowest mean with diverged orders as +inf
    result = paired({"a": [np.nan, 1.0, 2.0, 3.0], "b": [np.nan, 2.0, 3.0, 4.0], "c": [0.0, 0.0, 0.0, np.nan]})
    assert result["best"] == "a" and result["diverged"] == {"a": 1, "b": 1, "c": 1}
    assert result["p_values"]["b"] == signed_rank_p([1.0, 1.0, 1.0])
    assert result["p_values"]["c"] == signed_rank_p([-np.inf, -1.0, -2.0, np.inf])


def test_the_leaderboard_leaves_out_and_names_a_diverged_learner():
    from ocolearn.study import leaderboard_markdown

    results = json.loads((ROOT / "experiments" / "records" / "study_iris.json").read_text())
    entry = next(iter(results["datasets"].values()))
    per_order = {name: numbers["progressive"] for name, numbers in entry["learners"].items()}
    close = next(iter(not_different(entry["paired"])))  # a learner the record lists as close to the best
    per_order[close][:3] = [None] * 3  # a diverged score as results.json reads back: null
    entry["paired"] = paired(per_order)
    text = leaderboard_markdown(results)
    row = next(line for line in text.splitlines() if line.startswith(f"| {next(iter(results['datasets']))} |"))
    assert close not in row.split("|")[3]
    assert f"Diverged (a score not finite; never counted as within p >= 0.05): {close} on " in text
    assert "not `ocolearn run`'s regret, which is against the learner's own feasible set" in text
