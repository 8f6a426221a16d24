"""Checks at the boundary: declared hyperparameter ranges, run inputs, non-finite runs."""

import dataclasses
import typing

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ocolearn import (
    CW,
    FLH,
    MIRA,
    OGD,
    ONS,
    SCW,
    AdaGrad,
    Box,
    ConfigError,
    Constant,
    EpsilonInsensitive,
    Hinge,
    InvSqrt,
    L2Ball,
    NonFiniteError,
    Normalize,
    OneVsRest,
    PassiveAggressive,
    Pegasos,
    Perceptron,
    SketchedONS,
    Sparse,
    Squared,
    Winnow,
    check_finite,
    from_optax,
    run,
    run_passes,
)
from ocolearn.checks import (
    FLOAT32_MAX,
    MAX_ROUNDS,
    check_count,
    check_data,
    check_float32,
    check_rounds,
    first_nonfinite,
    in_loop,
)
from ocolearn.config import load
from ocolearn.data import DataError
from ocolearn.learners import Learner
from ocolearn.losses import Loss
from ocolearn.parts import hyper
from ocolearn.pipeline import with_pipeline
from ocolearn.projections import Projection
from ocolearn.run import is_mistake
from ocolearn.schedules import Schedule
from ocolearn.sweep import stack_values, sweep

PARTS = [cls for family in (Loss, Schedule, Projection, Learner) for cls in family.registry.values()]


def undeclared(cls) -> list[str]:
    """The numeric fields of a part class (numbers, integers, arrays; not switches) that
    declare no valid range."""
    hints = typing.get_type_hints(cls)

    def numeric(tp):
        if typing.get_origin(tp) in (typing.Union, type(int | None)):
            return any(numeric(a) for a in typing.get_args(tp))
        return tp in (float, int, jax.Array)

    return [f.name for f in dataclasses.fields(cls) if numeric(hints[f.name]) and "valid" not in f.metadata]


@pytest.mark.parametrize("cls", PARTS, ids=lambda c: c.name)
def test_every_numeric_field_of_every_registered_part_declares_its_range(cls):
    assert undeclared(cls) == []


def test_the_registry_test_catches_a_part_that_forgets_a_range():
    class Forgetful(Learner):  # no name: kept out of the registry
        lam: float = 0.1
        rounds: int = hyper(1, ge=1, integer=True)
        project: bool = False

    assert undeclared(Forgetful) == ["lam"]


BAD = [
    (lambda: L2Ball(-1.0), "radius must be > 0, got -1"),
    (lambda: PassiveAggressive(variant=5), "variant must be one of 0, 1, 2, got 5"),
    (lambda: PassiveAggressive(C=-1.0), "C must be > 0, got -1"),
    (lambda: Pegasos(lam=0.0), "lam must be > 0, got 0"),
    (lambda: Pegasos(lam=float("nan")), "lam must be > 0, got nan"),
    (lambda: Pegasos(lam=True), "lam must be a number"),
    (lambda: InvSqrt(-1.0), "eta must be > 0, got -1"),
    (lambda: Constant(eta=0.0), "eta must be > 0, got 0"),
    (lambda: AdaGrad(eta=-1.0), "eta must be > 0, got -1"),
    (lambda: AdaGrad(l1=-0.5), "l1 must be >= 0, got -0.5"),
    (lambda: EpsilonInsensitive(-0.1), "epsilon must be >= 0, got -0.1"),
    (lambda: CW(eta=0.3), r"eta must be in \(0.5, 1\), got 0.3"),
    (lambda: SCW(variant=0), "variant must be one of 1, 2, got 0"),
    (lambda: Perceptron(classes=1), "classes must be an integer >= 2 or 0, got 1"),
    (lambda: MIRA(classes=3, cost=-jnp.ones((3, 3))), r"cost must be >= 0, got -1 \(at index 0, 0\)"),
    (lambda: SketchedONS(sketch_size=0), "sketch_size must be an integer >= 1, got 0"),
    (lambda: Winnow(promotion=1.0), "promotion must be > 1, got 1"),
    (lambda: Box(1.0, -1.0), "upper must be >= lower"),
    (lambda: OneVsRest(MIRA(), 3), "base must be a binary learner, got mira"),
    (lambda: from_optax("adamm"), "transformation must name an optax optimizer"),
    (lambda: from_optax("adam", learning_rat=0.1), "hyperparams.learning_rat is not an argument of optax.adam"),
    (lambda: from_optax("sgd", learning_rate=-0.1), "hyperparams.learning_rate must be > 0, got -0.1"),  # ascent
    (lambda: from_optax("adam", learning_rate=0.1, b1=1.0), r"hyperparams.b1 must be in \[0, 1\), got 1"),
]


@pytest.mark.parametrize("make, message", BAD, ids=[m for _, m in BAD])
def test_values_out_of_their_declared_range_are_errors_naming_key_value_and_range(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


def test_good_values_pass_and_traced_values_are_not_checked():
    PassiveAggressive(C=0.5, variant=0), Perceptron(classes=3), AdaGrad(l1=None), Box(0.0, 0.0)
    from_optax("adam", learning_rate=0.1), OneVsRest(Pegasos(1e-3), 4), CW(eta=0.99)
    # Inside jit and vmap the numbers are tracers: nothing to check (and no error for 0).
    assert float(jax.jit(lambda lam: Pegasos(lam=lam).lam)(0.0)) == 0.0
    lams = jax.vmap(lambda lam: InvSqrt(lam).eta)(jnp.array([1.0, 0.0]))
    assert lams.tolist() == [1.0, 0.0]


def test_a_nested_part_is_named_by_its_key_path():
    learner = jax.tree.map(lambda a: -a, OGD(Squared(), InvSqrt(0.5), L2Ball(1.0)))  # unflattening skips checks
    with pytest.raises(ConfigError, match=r"^learner.schedule.eta must be > 0, got -0.5$") as info:
        learner.check("learner")
    assert info.value.key == "learner.schedule.eta"
    with pytest.raises(ConfigError, match="^learner.schedule.eta must be > 0"):
        run(learner, jnp.ones((2, 2)), jnp.ones(2))


def test_a_config_names_the_file_and_the_nested_key(tmp_path):
    path = tmp_path / "c.toml"
    data = '[data]\nfeatures = ["Sepal.Width"]\ntarget = "Species"\n'
    path.write_text(
        f'name = "t"\n{data}[learner]\nkind = "one_vs_rest"\nclasses = 3\n[learner.base]\nkind = "pegasos"\n'
    )
    with pytest.raises(ConfigError) as info:
        load(path, ["learner.base.lam=0"])
    assert str(info.value).startswith(str(path)) and str(info.value).endswith(": learner.base.lam must be > 0, got 0")
    path.write_text(f'name = "t"\n{data}[learner]\nkind = "passive_aggressive"\n')
    with pytest.raises(ConfigError, match="learner.variant must be one of 0, 1, 2, got 7"):
        load(path, ["learner.variant=7"])


def test_a_sweep_checks_every_stacked_value():
    learners = stack_values(Pegasos(), {"lam": np.array([0.1, 0.0, 0.2])})
    X, y = jnp.ones((4, 2)), jnp.ones(4)
    with pytest.raises(ConfigError, match=r"learner.lam must be > 0, got 0 \(at index 1\)"):
        sweep(learners, X, y)
    out = sweep(stack_values(Pegasos(), {"lam": np.array([0.1, 0.2])}), X, y)
    assert out.trace.mistakes.shape == (2, 1)


X = jnp.asarray(np.random.default_rng(0).normal(size=(1000, 3)), jnp.float32)
SIGNS = jnp.where(X[:, 0] > 0, 1.0, -1.0)
CLASSES = jnp.asarray(np.arange(1000) % 3, jnp.int32)


@pytest.mark.parametrize(
    "learner, X, y, message",
    [
        (OGD(), X[:1000], SIGNS[:500], "X has 1000 rows but y has 500 targets"),
        (OGD(), X[0], SIGNS[:1], r"X must be a matrix of rows \(n, d\)"),
        (Perceptron(classes=3), X, CLASSES.at[7].set(3), r"y row 7: class 3 is not one of 0..2 \(classes = 3\)"),
        (MIRA(classes=3), X, CLASSES.at[9].set(-1), "y row 9: class -1 is not one of 0..2"),
        (OneVsRest(Pegasos(), 3), X, CLASSES.astype(jnp.float32), "y holds float32 numbers; classes are integers"),
        (Pegasos(), X, SIGNS.at[1].set(0.0), r"y row 1: label 0 is not -1 or \+1, which pegasos with the hinge loss"),
        (OGD(Hinge()), X, SIGNS.at[4].set(2.0), r"y row 4: label 2 is not -1 or \+1, which ogd with the hinge loss"),
        (OGD(), X.at[3, 1].set(jnp.nan), SIGNS, "X row 3: nan is not a finite number"),
        (OGD(), np.asarray(X, np.float64) * np.r_[1.0] + np.eye(1000, 3) * 1e300, SIGNS, "X row 0: 1e.300 is beyond"),
        (OGD(), X, SIGNS.at[5].set(jnp.inf), "y row 5: inf is not a finite number"),
        (
            OGD(),
            Sparse(jnp.zeros((4, 2), jnp.int32).at[2, 1].set(3), jnp.ones((4, 2)), 3),
            SIGNS[:4],
            "X row 2: feature index 3 is outside 0..2",
        ),
        (
            OGD(),
            Sparse(jnp.zeros((4, 2), jnp.int32), jnp.ones((4, 2)).at[1, 0].set(-jnp.inf), 3),
            SIGNS[:4],
            "X row 1: -inf",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_run_checks_its_inputs(learner, X, y, message):
    # Shapes, targets and wider-than-float32 values before any compute; float32 rows (values and
    # sparse indices) in the rounds that read them, with the same message once the run is over.
    with pytest.raises(DataError, match=message):
        run(learner, X, y)


def test_the_check_of_rows_in_the_loop():
    from ocolearn.checks import fold_row, rows_held, rows_unseen

    def held(X):
        seen = rows_unseen(X)
        for i in range(X.shape[0] if not isinstance(X, Sparse) else X.idx.shape[0]):
            seen = fold_row(seen, jax.tree.map(lambda a, i=i: a[i], X))
        return bool(rows_held(seen, X))

    assert held(jnp.array([[1.0, -2.0], [3e38, -3e38], [3e38, 3e38]]))  # 0 x never overflows
    assert not held(jnp.array([[1.0, -2.0], [1.0, jnp.inf]])) and not held(jnp.array([[jnp.nan, 0.0], [1.0, 2.0]]))
    assert not held(jnp.array([[-jnp.inf, 0.0], [jnp.inf, 2.0]]))
    good = Sparse(jnp.array([[0, 2], [1, 2]]), jnp.array([[1.0, 2.0], [3.0, 4.0]]), 3)
    assert held(good)
    assert not held(Sparse(jnp.array([[0, 2], [0, 3]]), good.val, 3))
    assert not held(Sparse(jnp.array([[0, 2], [-1, 2]]), good.val, 3))
    assert not held(Sparse(good.idx, jnp.array([[1.0, 2.0], [1.0, jnp.nan]]), 3))
    assert held(Sparse(good.idx, jnp.array([[3e38, 1.0], [3e38, -3e38]]), 3))  # sparse values never overflow either
    # Indices are compared as integers: 2^24 + 1 is outside 0..2^24 (float32 would round it to 2^24, inside).
    assert not held(Sparse(jnp.array([[0], [2**24 + 1]]), jnp.ones((2, 1)), 2**24 + 1))
    assert held(Sparse(jnp.array([[0], [2**24]]), jnp.ones((2, 1)), 2**24 + 1))


class Blind(OGD):
    """Predicts 0 whatever its row: a NaN in x never reaches its prediction or its loss."""

    def predict(self, state, x):
        return jnp.zeros((), jnp.float32)


@pytest.mark.parametrize("trace", [True, False])
def test_a_bad_row_is_found_by_the_loop_even_where_it_never_reaches_the_loss(trace):
    # Only the loop's own check of the row (run.round_step) sees this NaN: the learner's loss stays finite.
    with pytest.raises(DataError, match="^X row 6: nan is not a finite number$"):
        run(Blind(), X[:10].at[6, 0].set(jnp.nan), SIGNS[:10], trace=trace)
    run(Blind(), X[:10], SIGNS[:10], trace=trace)  # and good rows pass


def test_a_sweep_names_a_bad_row():
    learners = stack_values(OGD(), {"schedule.eta": np.array([0.1, 0.2, 0.3])})
    with pytest.raises(DataError, match="^X row 7: inf is not a finite number$"):
        sweep(learners, X[:20].at[7, 2].set(jnp.inf), SIGNS[:20])
    with pytest.raises(DataError, match="^X row 2: feature index 5 is outside 0..2$"):
        sweep(learners, Sparse(jnp.zeros((4, 2), jnp.int32).at[2, 1].set(5), jnp.ones((4, 2)), 3), SIGNS[:4])


def test_real_targets_regression_classes_and_signs_that_fit_pass():
    run(OGD(), X, X[:, 0] * 3.5)
    run(Pegasos(), X, SIGNS)
    run(MIRA(classes=3), X, CLASSES)
    run(OneVsRest(Perceptron(), 3), X, np.asarray(CLASSES, np.int64))


@pytest.mark.parametrize("passes", [0, -1, 1.5, True])
def test_passes_must_be_a_positive_integer(passes):
    with pytest.raises(ConfigError, match=f"passes must be an integer >= 1, got {passes!r}"):
        run(OGD(), X, SIGNS, passes=passes)
    with pytest.raises(ConfigError, match="passes must be an integer >= 1"):
        run_passes(OGD(), X, SIGNS, passes=passes)


def test_check_count_names_the_option():
    check_count(65536, "--chunk-rows")
    with pytest.raises(ConfigError, match="--chunk-rows must be an integer >= 1, got 0") as error:
        check_count(0, "--chunk-rows")
    assert error.value.key == "--chunk-rows"


def test_a_nan_or_infinite_prediction_is_a_mistake():
    # The old rule (prediction * target <= 0) never counted NaN; argmax of NaN scores picks the NaN.
    assert bool(is_mistake(jnp.float32(jnp.nan), 1.0)) and bool(is_mistake(jnp.float32(jnp.nan), -1.0))
    assert bool(is_mistake(jnp.float32(jnp.inf), 1.0))
    assert bool(is_mistake(jnp.array([jnp.nan, 0.0, 0.0]), 0))
    assert not bool(is_mistake(jnp.float32(0.5), 1.0)) and not bool(is_mistake(jnp.array([0.0, 2.0, 1.0]), 1))
    assert bool(is_mistake(jnp.float32(0.0), 1.0))  # a zero score is still a mistake


def test_pegasos_with_a_tiny_lam_is_reported_non_finite_from_round_two():
    # eta_1 = 1 / lam overflows float32, so w_2 is infinite and every prediction from round 2 is not finite.
    learner, y = Pegasos(lam=1e-39), SIGNS[:50]
    summed = run(learner, X[:50], y, trace=False).trace
    assert int(summed.nonfinite) == 2
    assert int(summed.mistakes) == 50  # round 1 scores 0; rounds 2..50 are NaN or infinite
    passes = run_passes(learner, X[:50], y, passes=3)
    assert passes.nonfinite == 2 and passes.mistakes == [50]  # no pass after the one that diverged
    with pytest.raises(NonFiniteError, match="from round 2"):
        check_finite(passes)
    traced = run(learner, X[:50], y)
    assert first_nonfinite(traced) == 2
    message = (
        r"^data.svm: the run diverged: NaN or infinite predictions from round 2; "
        r"try scaled features \(--scale normalize, or standardize for dense rows\), or a smaller rate \(eta\) "
        r"or a larger lam where the learner has one$"
    )
    with pytest.raises(NonFiniteError, match=message):
        check_finite(traced, "data.svm")


def test_a_huge_feature_value_is_reported_from_the_round_its_loss_overflows():
    # OGD on the squared loss: row 4 (round 5) has a feature of 1e30, so its prediction is huge
    # and its squared loss beyond float32. The round is found here in float64, independently.
    Xh, y = np.asarray(X[:40], np.float64), np.asarray(X[:40, 1], np.float64)
    Xh[4, 2] = 1e30
    w, overflow = np.zeros(3), 0
    for t in range(40):
        p = w @ Xh[t]
        if not overflow and 0.5 * (p - y[t]) ** 2 > FLOAT32_MAX:
            overflow = t + 1
        w = w - 0.1 * (p - y[t]) * Xh[t]
    assert overflow == 5
    learner = OGD(Squared(), Constant(0.1))
    whole = run(learner, Xh, y, trace=False)
    assert int(whole.trace.nonfinite) == overflow
    first = run(learner, Xh[:20], y[:20], trace=False)
    chunked = run(learner, Xh[20:], y[20:], state=first.state, trace=False, summary=first.trace)
    assert int(chunked.trace.nonfinite) == overflow  # the first round, carried over chunks
    with pytest.raises(NonFiniteError, match=f"from round {overflow}"):
        check_finite(whole)


def test_check_finite_passes_a_healthy_run_and_catches_non_finite_weights_alone():
    result = run(Pegasos(lam=0.1), X, SIGNS, trace=False)
    check_finite(result)
    assert first_nonfinite(result) == 0 and first_nonfinite(run(Pegasos(lam=0.1), X, SIGNS)) == 0
    # Weights that are NaN where no example looked: no prediction showed it, the state does.
    state = result.state._replace(w=result.state.w.at[0].set(jnp.nan))
    with pytest.raises(NonFiniteError, match="^the run diverged: NaN or infinite weights after round 1000; try"):
        check_finite(result._replace(state=state))


def test_check_float32_names_the_line_of_the_first_bad_number():
    check_float32(np.array([[1.0, -FLOAT32_MAX]]), "a.csv", lines=np.array([2]))
    with pytest.raises(DataError, match=r"^a.csv, line 7: 1e\+300 is beyond float32's range"):
        check_float32(np.array([[1.0, 2.0], [3.0, 1e300]]), "a.csv", lines=np.array([6, 7]))
    # CSR entries: rows [0, 2), [2, 2) (empty), [2, 5); the bad value is entry 3, in row 2.
    with pytest.raises(DataError, match=r"^b.svm, line 12: nan is not a finite number"):
        check_float32(
            np.array([1.0, 2.0, 3.0, np.nan, 5.0]), "b.svm", lines=np.array([10, 11, 12]), indptr=[0, 2, 2, 5]
        )
    # The first entry of a row after an empty one (entry 2 of [2, 5)) is in that row, not the one before.
    with pytest.raises(DataError, match=r"^b.svm, line 12: inf is not a finite number"):
        check_float32(np.array([1.0, 2.0, np.inf, 4.0]), "b.svm", lines=np.array([10, 11, 12]), indptr=[0, 2, 2, 4])
    with pytest.raises(DataError, match=r"^labels: -inf is not a finite number"):
        check_float32(np.array([1.0, -np.inf]), "labels")
    with pytest.raises(DataError, match=r"^wide: 1e\+300 is beyond float32's range"):  # any float wider than float32
        check_float32(np.array([1.0, 1e300], np.longdouble), "wide")


@pytest.mark.parametrize("kind, classes", [("sign", 0), ("class", 3), ("real", 0)])
def test_the_fused_device_check_agrees_with_the_host_check(kind, classes):
    # On an accelerator check_data runs one jitted reduction (_all_hold); on the host, NumPy.
    from ocolearn.checks import _all_hold, _conditions

    idx, val = np.zeros((6, 2), np.int32), np.ones((6, 2), np.float32)
    y = np.array([1, -1, 1, 1, -1, 1] if kind == "sign" else [0, 1, 2, 0, 1, 2], np.int32 if classes else np.float32)
    cases = [(idx, val, y), (idx, val.copy(), y), (idx.copy(), val, y), (idx, val, y.copy())]
    cases[1][1][3, 1], cases[2][0][2, 0], cases[3][2][4] = np.nan, 5, 7  # a NaN, index 5 of 4, target 7
    host = [all(bool(ok.all()) for _, ok in _conditions(v, i, 4, t, kind, classes)) for i, v, t in cases]
    device = [bool(_all_hold(jnp.asarray(v), jnp.asarray(i), 4, jnp.asarray(t), kind, classes)) for i, v, t in cases]
    assert host == device == [True, False, False, kind == "real"]


def test_check_rounds_names_the_setting_and_the_round_it_would_reach():
    """FLH(levels=3) holds 2^3 - 2 = 6 rounds: 6 rows pass and 7 are refused, naming the key as
    configs write it (a pipeline's learner keeps the pipeline's key; a part inside a part, its
    path); a state of 4 rounds run starts at round 5, so 2 rows more reach 6 and 3 reach 7; and
    no run counts more than MAX_ROUNDS = 2^31 - 1 rounds in all, whatever the learner."""
    flh = FLH(ONS(0.5, 1.0), alpha=0.3, levels=3)

    def refused(learner, state, rows, passes=1, **where):
        with pytest.raises(ConfigError) as error:
            check_rounds(learner, state, rows, passes, **where)
        return str(error.value), error.value.key

    check_rounds(flh, None, 6)  # one pass unless told
    assert refused(FLH(levels=1), None, 1)[0].startswith("learner.levels = 1 lets flh run 0 rounds")  # (ran on)
    check_rounds(flh, None, 3, passes=2)
    message = "learner.levels = 3 lets flh run 6 rounds, and this run goes to round 7; raise learner.levels"
    assert refused(flh, None, 7) == (message, "learner.levels")
    assert refused(with_pipeline(flh, (Normalize(),)), None, 7) == (message, "learner.levels")
    with pytest.raises(ConfigError, match="goes to round 12"):
        check_rounds(flh, None, 6, 2)
    nested = FLH(flh, alpha=0.3, levels=8)  # the outer holds 254 rounds, the inner 6
    assert refused(nested, None, 7)[1] == "learner.base.levels"
    assert refused(flh, None, 7, where="")[1] == "levels" and refused(nested, None, 7, where="")[1] == "base.levels"
    state = run(flh, X[:4], X[:4, 0]).state  # its next round is 5
    check_rounds(flh, state, 2)
    assert refused(flh, state, 3)[0] == message
    jax.jit(lambda traced: check_rounds(flh, traced, 6))(state)  # a traced state counts as a fresh one
    check_rounds(OGD(), None, MAX_ROUNDS)
    check_rounds(OGD(), None, MAX_ROUNDS // 2, passes=2)
    assert refused(OGD(), None, 2**30, passes=2) == (
        "passes: 2 passes over 1073741824 rows are 2147483648 rounds, more than 2147483647",
        "passes",
    )


def test_a_door_names_check_rounds_key_in_every_place_its_message_names_it():
    """Each door calls the setting by its own name (``ConfigError.named``): run ``run.passes``,
    train ``--passes``, a study ``learners.NAME.levels``; the key is renamed where the message
    names it, not where the word occurs ("2 passes over"), and in both places of FLH's message."""

    def error(learner, rows, passes=1):
        with pytest.raises(ConfigError) as raised:
            check_rounds(learner, None, rows, passes)
        return raised.value

    levels = error(FLH(ONS(0.5, 1.0), alpha=0.3, levels=3), 7).named("learners.f.levels")
    assert (str(levels), levels.key) == (
        "learners.f.levels = 3 lets flh run 6 rounds, and this run goes to round 7; raise learners.f.levels",
        "learners.f.levels",
    )
    passes = error(OGD(), 2**30, 2)
    rest = ": 2 passes over 1073741824 rows are 2147483648 rounds, more than 2147483647"
    assert [str(passes.at("run")), str(passes.named("--passes"))] == ["run.passes" + rest, "--passes" + rest]


def test_check_data_takes_nested_lists_and_names_shapes_and_classes_in_full():
    """Lists are read as NumPy arrays (rows as X, targets as y); the messages give both shapes
    and the range of classes."""
    check_data(OGD(), [[1.0, 2.0], [3.0, 4.0]], [1.0, 2.0])
    check_data(MIRA(classes=3), [[1.0], [2.0]], [0, 2])
    with pytest.raises(DataError, match="^X has 1 rows but y has 2 targets$"):
        check_data(OGD(), [[1.0, 2.0]], [1.0, 2.0])
    with pytest.raises(DataError, match=r"^y holds float64 numbers; classes are integers 0..2 for mira$"):
        check_data(MIRA(classes=3), [[1.0], [2.0]], [0, 1.5])
    with pytest.raises(DataError, match=r"^y row 1: class 3 is not one of 0..2 \(classes = 3\)$"):
        check_data(MIRA(classes=3), [[1.0], [2.0]], [0, 3])
    shapes = r"^X must be a matrix of rows \(n, d\) and y a vector \(n,\), got shapes \(3,\) and \(1, 1\)$"
    with pytest.raises(DataError, match=shapes):
        check_data(OGD(), np.ones(3, np.float32), np.ones((1, 1), np.float32))


def test_rows_of_float32_or_narrower_are_checked_in_the_loop_and_wider_ones_before():
    f32, f64 = np.ones((2, 3), np.float32), np.ones((2, 3))
    assert in_loop(f32) and in_loop(jnp.asarray(f32)) and in_loop(f32.astype(np.float16)) and in_loop(f32.astype(int))
    assert not in_loop(f64) and not in_loop(f32.astype(np.longdouble))
    assert not in_loop([[1.0, 2.0]])  # a nested list becomes float64
    idx = np.zeros((2, 3), np.int32)
    assert in_loop(Sparse(idx, f32, 4)) and not in_loop(Sparse(idx, f64, 4))


def test_a_non_finite_score_is_found_where_the_loss_stayed_finite():
    """The first round whose prediction was NaN or infinite, also where its loss was not (a
    hinge loss of 0 for a score of +inf), for one score per round or a row of class scores; a
    run that goes on from a state counts its rounds from there."""
    first = run(Pegasos(), X[:5], SIGNS[:5])
    later = run(Pegasos(), X[5:10], SIGNS[5:10], state=first.state)  # rounds 6..10
    for result, round_ in ((first, 4), (later, 9)):
        prediction = np.asarray(result.trace.prediction).copy()
        prediction[3] = np.inf
        assert first_nonfinite(result._replace(trace=result.trace._replace(prediction=prediction))) == round_
    scores = run(MIRA(classes=3), X[:5], CLASSES[:5])
    prediction = np.asarray(scores.trace.prediction).copy()
    prediction[2, 1] = np.nan
    assert np.isfinite(scores.trace.loss).all()
    assert first_nonfinite(scores._replace(trace=scores.trace._replace(prediction=prediction))) == 3
