"""Comparators that move: k-switch regret against brute force, adaptive regret against every
interval solved directly."""

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from ocolearn import FLH, OMD, ONS, Absolute, Identity, InvSqrt, L2Ball, NegEntropy, Squared, run
from ocolearn.changing import (
    SegmentCosts,
    adaptive_regret,
    best_switching,
    interval_regrets,
    k_switch,
    segment_costs,
)
from ocolearn.cli import main
from ocolearn.parallel import parallel_sgd
from ocolearn.parts import ConfigError
from ocolearn.regret import least_squares_in_ball_gram
from ocolearn.run import run_passes


def shifting(T=9, d=2, seed=0):
    """Rounds whose best predictor changes at T // 3 and 2 T // 3."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    u = rng.normal(size=(3, d)) * 2
    y = np.concatenate([X[s] @ u[j] for j, s in enumerate(np.array_split(np.arange(T), 3))])
    return X, y + 0.1 * rng.normal(size=T)


def best_point(X, y, radius):
    """min_{||u|| <= radius} 1/2 ||X u - y||^2 by a general constrained solver (not the Gram path)."""
    if radius == np.inf:
        u = np.linalg.lstsq(X, y, rcond=None)[0]
        return 0.5 * np.sum((X @ u - y) ** 2)
    best = np.inf
    for start in (np.zeros(X.shape[1]), np.linalg.lstsq(X, y, rcond=None)[0]):
        fit = minimize(
            lambda u: 0.5 * np.sum((X @ u - y) ** 2),
            start,
            jac=lambda u: X.T @ (X @ u - y),
            constraints=[{"type": "ineq", "fun": lambda u: radius**2 - u @ u}],
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        best = min(best, fit.fun)
    return best


def brute_force(X, y, k, radius):
    """The best total over every way to cut the rounds into at most k + 1 segments."""
    T = len(y)
    best = np.inf, None
    for m in range(k + 1):
        for cuts in itertools.combinations(range(1, T), m):
            bounds = [0, *cuts, T]
            total = sum(best_point(X[s:e], y[s:e], radius) for s, e in zip(bounds[:-1], bounds[1:], strict=True))
            best = min(best, (total, [0, *cuts]), key=lambda b: b[0])
    return best


@pytest.mark.parametrize("projection, radius", [(Identity(), np.inf), (L2Ball(1.0), 1.0)], ids=["identity", "ball"])
@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_k_switch_equals_brute_force(projection, radius, k):
    X, y = shifting()
    costs = segment_costs(Squared(), projection, X, y)
    best = k_switch(Squared(), projection, X, y, k, costs=costs)
    total, starts = brute_force(X, y, k, radius)
    np.testing.assert_allclose(best.total, total, rtol=1e-7, atol=1e-9)
    # its per-round losses add up to the total, and every segment's point is feasible
    np.testing.assert_allclose(best.losses.sum(), best.total, rtol=1e-9, atol=1e-12)
    assert np.all(np.linalg.norm(best.weights, axis=1) <= radius * (1 + 1e-12))
    assert len(best.starts) <= k + 1 and best.starts[0] == 0


@pytest.mark.parametrize("projection, radius", [(Identity(), np.inf), (L2Ball(0.1), 0.1)], ids=["identity", "ball"])
def test_k_switch_on_the_shortest_streams_and_a_first_segment_of_one_round(projection, radius):
    # One round: its own best point's cost (0 for least squares, 0.5 (2 - 0.1)^2 in the ball of 0.1).
    one = k_switch(Squared(), projection, np.ones((1, 1)), np.array([2.0]), 1)
    assert one.total == pytest.approx(0.0 if radius == np.inf else 0.5 * 1.9**2, abs=1e-12) and one.starts == [0]
    # The best switch comes after the first round: segments [0, 1) and [1, 3).
    X, y = np.ones((3, 1)), np.array([0.05, -5.0, -5.0])
    best, (total, starts) = k_switch(Squared(), projection, X, y, 1), brute_force(X, y, 1, radius)
    assert best.starts == starts == [0, 1] and best.total == pytest.approx(total, rel=1e-9, abs=1e-12)


def test_k_switch_takes_the_segment_costs_given_and_asks_each_segment_once():
    X, y = shifting(T=9, seed=2)

    class Counted(SegmentCosts):
        asked = 0

        def cost(self, i, j):
            self.asked += 1
            return super().cost(i, j)

    costs = Counted(Squared(), Identity(), X, y)
    best = k_switch(Squared(), Identity(), X, y, 2, costs=costs)
    assert costs.asked == 9 * 10 // 2  # every segment [i, j) once: T (T + 1) / 2
    assert best.starts == k_switch(Squared(), Identity(), X, y, 2).starts


def test_k_switch_finds_the_shifts_and_more_switches_never_cost_more():
    X, y = shifting(T=30, seed=3)
    costs = segment_costs(Squared(), Identity(), X, y)
    totals = [k_switch(Squared(), Identity(), X, y, k, costs=costs).total for k in range(5)]
    assert all(np.diff(totals) <= 1e-12)
    assert k_switch(Squared(), Identity(), X, y, 2, costs=costs).starts == [0, 10, 20]


def test_k_switch_with_a_solver_for_another_loss():
    X, y = shifting(T=8)

    def solver(Xs, ys):  # the absolute loss' best point: least absolute deviations by a generic minimizer
        fit = minimize(lambda u: np.sum(np.abs(Xs @ u - ys)), np.zeros(Xs.shape[1]), method="Nelder-Mead")
        return fit.x

    best = k_switch(Absolute(), Identity(), X, y, 1, solver=solver)
    C = segment_costs(Absolute(), Identity(), X, y, solver)
    assert best.total == pytest.approx(min(C[0, 8], *(C[0, s] + C[s, 8] for s in range(1, 8))))
    with pytest.raises(ValueError, match="squared loss"):
        segment_costs(Absolute(), Identity(), X, y)


def segment_table(X, y, radius):
    """Every segment's best point and cost as full (T + 1, T + 1) tables, each solved from its
    own rows (X_s' X_s and X_s' y_s, not prefix sums): what segment_costs returned before."""
    T, d = X.shape
    C, U = np.full((T + 1, T + 1), np.inf), np.zeros((T + 1, T + 1, d))
    for i in range(T):
        for j in range(i + 1, T + 1):
            Xs, ys = X[i:j], y[i:j]
            U[i, j] = least_squares_in_ball_gram(Xs.T @ Xs, Xs.T @ ys, radius)
            C[i, j] = 0.5 * np.sum((Xs @ U[i, j] - ys) ** 2)
    return C, U


@pytest.mark.parametrize("projection, radius", [(Identity(), np.inf), (L2Ball(0.7), 0.7)], ids=["identity", "ball"])
def test_segment_costs_on_demand_equal_the_full_table(projection, radius):
    """The costs computed when asked for are the table's, the k-switch recursion over them
    finds the table's sequences, and no T x T array is kept (O(T d^2) memory)."""
    X, y = shifting(T=12, d=3, seed=8)
    costs = segment_costs(Squared(), projection, X, y)
    C, U = segment_table(X, y, radius)
    for j in range(1, 13):
        np.testing.assert_allclose(costs.column(j), C[:j, j], rtol=1e-9, atol=1e-10)
        for i in range(j - 3 + 1):  # a segment of fewer than d = 3 rows has no one best point
            np.testing.assert_allclose(costs.point(i, j), U[i, j], rtol=1e-7, atol=1e-9)
    starts = np.arange(12 - 4 + 1)
    np.testing.assert_allclose(costs[starts, starts + 4], C[starts, starts + 4], rtol=1e-9, atol=1e-10)
    assert costs[3, 3] == np.inf and costs[0, 13] == np.inf
    assert isinstance(costs[2, 7], float) and costs[2, 7] == pytest.approx(C[2, 7], rel=1e-9)
    grid = (np.array([[0, 1], [2, 5]]), np.array([[4, 9], [6, 12]]))  # index arrays of one shape: that shape
    np.testing.assert_allclose(costs[grid], C[grid], rtol=1e-9, atol=1e-10)
    for k in range(4):
        total, best = best_switching(C, k)
        assert best_switching(costs, k)[1] == best and best_switching(costs, k)[0] == pytest.approx(total, rel=1e-9)
        assert k_switch(Squared(), projection, X, y, k).starts == best
    arrays = [a for a in vars(costs).values() if isinstance(a, np.ndarray)]
    assert max(a.size for a in arrays) <= 13 * 3 * 3


@pytest.mark.parametrize("projection, radius", [(Identity(), np.inf), (L2Ball(0.7), 0.7)], ids=["identity", "ball"])
def test_adaptive_regret_is_the_maximum_over_intervals_solved_directly(projection, radius):
    X, y = shifting(T=12, seed=1)
    rng = np.random.default_rng(2)
    learner_losses = 0.5 * (np.einsum("td,td->t", X, rng.normal(size=X.shape)) - y) ** 2
    C = segment_costs(Squared(), projection, X, y)
    for length in (1, 4, 12):
        direct = [
            learner_losses[s : s + length].sum() - best_point(X[s : s + length], y[s : s + length], radius)
            for s in range(12 - length + 1)
        ]
        np.testing.assert_allclose(interval_regrets(learner_losses, C, length), direct, rtol=1e-7, atol=1e-9)
        assert adaptive_regret(learner_losses, C, length) == pytest.approx(max(direct), rel=1e-7, abs=1e-9)
    with pytest.raises(ValueError, match="interval length"):
        adaptive_regret(learner_losses, C, 13)


def ons_step(w, A, x, target, gamma):
    g = (w @ x - target) * x
    A = A + np.outer(g, g)
    return w - np.linalg.solve(A, g) / gamma, A


def flh_by_hand(X, y, alpha, gamma, epsilon, variant="paper"):
    """Hazan and Seshadhri 2009, FLH over ONS experts on the pruned working set S_t of FLH2, in
    the paper's order: the multiplicative update normalized over S_t, the addition step (the
    new expert 1/(t + 1), the others scaled by 1 - 1/(t + 1)), the pruning step (the expert
    started at round j = r 2^k, r odd, is dropped after round j + 2^(k+2)) and the
    renormalization over S_{t+1}. Returns the points played at rounds 1..T + 1 (the last: the
    weights after T rounds) and v_{T+1} by start round. ``variant`` breaks one step, for the
    tests to reject: "prune_first" normalizes the update over the experts that stay, so that the
    new expert holds exactly 1/(t + 1); "share_1_over_t" gives the new expert 1/t."""
    d = X.shape[1]
    experts = {1: (np.zeros(d), epsilon * np.eye(d))}
    v = {1: 1.0}
    played = []
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y, strict=True), 1):
        played.append(sum(v[j] * experts[j][0] for j in experts))
        vhat = {j: v[j] * np.exp(-alpha * 0.5 * (experts[j][0] @ x - target) ** 2) for j in experts}
        experts = {j: ons_step(*experts[j], x, target, gamma) for j in experts}
        k = lambda j: (j & -j).bit_length() - 1  # noqa: E731
        keep = [j for j in experts if t + 1 <= j + 2 ** (k(j) + 2)]
        share = 1 / t if variant == "share_1_over_t" else 1 / (t + 1)
        total = sum(vhat[j] for j in (keep if variant == "prune_first" else experts))
        v = {j: (1 - share) * vhat[j] / total for j in keep} | {t + 1: share}
        v = {j: v[j] / sum(v.values()) for j in v}
        experts = {j: experts[j] for j in keep} | {t + 1: (np.zeros(d), epsilon * np.eye(d))}
    played.append(sum(v[j] * experts[j][0] for j in experts))
    return np.array(played), v


def flh_weights(state):
    """The learner's v by the round each live expert started."""
    return {
        int(s): float(np.exp(v)) for s, v in zip(np.asarray(state.start), np.asarray(state.log_v), strict=True) if s > 0
    }


def test_flh_is_algorithm_1_with_its_pruning():
    """The learner's predictions, weights and v_{T+1} are the paper's order of steps to float32
    rounding (about 2e-6); the two broken variants, the update normalized over the experts that
    stay (this learner before: the new expert held exactly 1/(t + 1)) and the new expert's
    share 1/t, are 0.31 and 0.20 off in a prediction and fail the same comparisons."""
    X, y = shifting(T=40, d=3, seed=4)
    learner = FLH(ONS(0.5, 1.0), alpha=0.3, levels=6)
    result = run(learner, np.float32(X), np.float32(y))
    predictions = np.asarray(result.trace.prediction, np.float64)

    def gaps(variant):
        played, v = flh_by_hand(X, y, 0.3, 0.5, 1.0, variant)
        got = flh_weights(result.state)
        assert sorted(got) == sorted(v)  # the same experts live: the pruning step
        return (
            np.max(np.abs(predictions - np.einsum("td,td->t", played[:-1], X))),
            np.max(np.abs(np.asarray(result.state.w) - played[-1])),
            max(abs(got[j] - v[j]) for j in v),
        )

    assert max(gaps("paper")) < 1e-4
    assert min(gaps("prune_first")) > 0.1
    assert gaps("share_1_over_t")[0] > 0.1
    live = np.asarray(result.state.start > 0)
    assert live.sum() <= 3 * np.ceil(np.log2(41))  # O(log T) experts kept


def test_flh_tracks_the_shifts_where_one_ons_does_not():
    """On a stream whose best predictor changes twice, FLH's largest regret over an interval of
    one segment is far below a single ONS's (which must unlearn each segment); a broken FLH
    whose weights ignore the experts' losses (alpha ~ 0) does not."""
    X, y = shifting(T=300, d=3, seed=5)
    C = segment_costs(Squared(), Identity(), X, y)

    def worst(learner):
        return adaptive_regret(run(learner, np.float32(X), np.float32(y)).trace.loss, C, 100)

    ons = worst(ONS(0.5, 1.0))
    assert worst(FLH(ONS(0.5, 1.0), alpha=0.3, levels=10)) < 0.5 * ons
    assert worst(FLH(ONS(0.5, 1.0), alpha=1e-9, levels=10)) > 0.5 * ons  # weights ignore the losses: no tracking


def test_flh_refuses_a_run_longer_than_its_levels_hold():
    """levels = 3 gives 9 slots: rounds 1..6 start the experts of rounds 2..7 (k <= 2); the
    update of round 7 would start the expert of round 8 = 2^3, whose slot holds a live one.
    Six rounds are Algorithm 1; a seventh, at once or after a checkpoint, is refused."""
    X, y = shifting(T=7, d=2, seed=6)
    learner = FLH(ONS(0.5, 1.0), alpha=0.3, levels=3)
    assert learner.max_rounds == 6
    six = run(learner, np.float32(X[:6]), np.float32(y[:6]))
    played = flh_by_hand(X[:6], y[:6], 0.3, 0.5, 1.0)[0][:-1]
    np.testing.assert_allclose(six.trace.prediction, np.einsum("td,td->t", played, X[:6]), rtol=1e-3, atol=1e-4)
    message = r"learner\.levels = 3 lets flh run 6 rounds, and this run goes to round 7; raise learner\.levels"
    with pytest.raises(ConfigError, match=message):
        run(learner, np.float32(X), np.float32(y))
    with pytest.raises(ConfigError, match=message):
        run(learner, np.float32(X[6:]), np.float32(y[6:]), state=six.state)
    with pytest.raises(ConfigError, match=r"learner\.levels = 3 lets flh run 6 rounds, and this run goes to round 12"):
        run(learner, np.float32(X[:6]), np.float32(y[:6]), passes=2)
    with pytest.raises(ConfigError, match=r"lets flh run 6 rounds, and this run goes to round 12"):
        run_passes(learner, np.float32(X[:6]), np.float32(y[:6]), passes=2)  # refused before the first pass
    with pytest.raises(ConfigError, match=r"lets flh run 6 rounds, and this run goes to round 7"):
        parallel_sgd(learner, np.float32(np.tile(X, (2, 1))), np.float32(np.tile(y, 2)), shards=2)  # 7 rows a shard


def test_flh_refuses_from_the_command_line(tmp_path, capsys):
    """train names the learner's key as its other --set errors do ('--learner/--set: learner.levels
    must be ...'), and --passes as its option, after the file whose rows it counts, whichever check
    refuses: the first chunk's, or the whole run's once a pass has counted the rows. Before: a bare
    'learner.levels = 3 ...' or 'd.svm: passes: ...', and levels = 1 (no round held) trained; then
    the first chunk's named no file."""
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{(-1) ** i} 1:{i / 7:.3f}\n" for i in range(7)))

    def refused(*options):
        code = main(["train", "--learner", "flh", *options, str(data), "--model", str(tmp_path / "m"), "--quiet"])
        (line,) = capsys.readouterr().err.strip().splitlines()
        return code, line

    assert refused("--set", "levels=3") == (
        2,
        f"ocolearn: error: {data}: --learner/--set: learner.levels = 3 lets flh run 6 rounds, and this run goes to "
        "round 7; raise learner.levels",
    )
    assert refused("--set", "levels=1")[1].startswith(f"ocolearn: error: {data}: --learner/--set: learner.levels = 1 ")
    assert refused("--set", "levels=4", "--passes", "3") == (
        2,
        f"ocolearn: error: {data}: --learner/--set: learner.levels = 4 lets flh run 14 rounds, and this run goes "
        "to round 21; raise learner.levels",
    )
    assert refused("--passes", "400000000") == (
        2,
        f"ocolearn: error: {data}: --passes: 400000000 passes over 7 rows are 2800000000 rounds, more than 2147483647",
    )


def test_flh_trains_from_the_command_line_and_its_state_holds_no_infinity(tmp_path, capsys):
    """The streaming trainer checks every float of a state for NaN and infinities after each
    chunk (``checks.check_finite``): FLH's empty and expired slots hold a finite stand-in for
    log 0, so a healthy run is not reported as diverged (it was, every time, at its last round)."""
    from ocolearn.checks import check_finite

    X, y = shifting(T=40, d=3, seed=4)
    result = run(FLH(ONS(0.5, 1.0), alpha=0.3, levels=6), np.float32(X), np.float32(y))
    check_finite(result)
    assert np.isfinite(np.asarray(result.state.log_v)).all()
    data = tmp_path / "d.csv"
    data.write_text(
        "a,b,c,y\n" + "".join(f"{a:.4f},{b:.4f},{c:.4f},{t:.4f}\n" for (a, b, c), t in zip(X, y, strict=True))
    )
    code = main(
        ["train", "--learner", "flh", "--format", "csv", "--target", "y", str(data), "--model", str(tmp_path / "m")]
    )
    assert code == 0, capsys.readouterr().err


def test_flh_first_plays_its_base_learners_first_point():
    """w_1 = w_1^1: over exponentiated-gradient experts (the simplex of radius 2), the centre
    2 / d of the simplex, not 0 (outside the set)."""
    X, y = shifting(T=3, d=4, seed=7)
    result = run(FLH(OMD(Squared(), InvSqrt(0.1), NegEntropy(2.0)), alpha=0.3, levels=4), np.float32(X), np.float32(y))
    assert float(result.trace.prediction[0]) == pytest.approx(X[0].sum() * 2 / 4, rel=1e-6)
