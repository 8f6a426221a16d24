"""The contract every learner keeps (DESIGN.md section 8), over every learner configuration."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ocolearn import (
    AROW,
    COCOB,
    CW,
    FLH,
    FTRL,
    MIRA,
    NAG,
    OCPSVM,
    OGD,
    OMD,
    ONS,
    SCW,
    Absolute,
    AdaGrad,
    Box,
    CoinBetting,
    Constant,
    DoG,
    EpsilonInsensitive,
    Euclidean,
    FTRLProximal,
    Hedge,
    Hinge,
    Identity,
    InverseTime,
    InvSqrt,
    L1Ball,
    L2Ball,
    Logistic,
    Mechanic,
    MetaGrad,
    NegEntropy,
    NonNegative,
    OneVsRest,
    PassiveAggressive,
    Pegasos,
    Perceptron,
    PNorm,
    SignedEntropy,
    Simplex,
    SketchedONS,
    Sparse,
    Squared,
    SquaredHinge,
    Winnow,
    from_optax,
    ridge,
    run,
)

D = 6
# (learner, a copy with other hyperparameter values and the same structure, task)
LEARNERS = {
    "ridge": (ridge(InvSqrt(0.1), 1.0), ridge(InvSqrt(0.3), 0.5), "regression"),
    "ogd_absolute_l1": (
        OGD(Absolute(), Constant(0.05), L1Ball(2.0)),
        OGD(Absolute(), Constant(0.2), L1Ball(0.5)),
        "regression",
    ),
    "ogd_eps_box": (
        OGD(EpsilonInsensitive(0.1), InvSqrt(0.5), Box(-1.0, 1.0)),
        OGD(EpsilonInsensitive(0.3), InvSqrt(0.1), Box(-0.2, 0.4)),
        "regression",
    ),
    "ogd_hinge_l2": (
        OGD(Hinge(), InverseTime(0.1), L2Ball(3.0)),
        OGD(Hinge(), InverseTime(1.0), L2Ball(1.0)),
        "binary",
    ),
    "ogd_squared_hinge_nonneg": (
        OGD(SquaredHinge(), InvSqrt(0.1), NonNegative()),
        OGD(SquaredHinge(), InvSqrt(0.5), NonNegative()),
        "binary",
    ),
    "ogd_logistic_simplex": (
        OGD(Logistic(), InvSqrt(1.0), Simplex(1.0)),
        OGD(Logistic(), InvSqrt(2.0), Simplex(3.0)),
        "binary",
    ),
    "ogd_squared_identity": (
        OGD(Squared(), Constant(0.01), Identity()),
        OGD(Squared(), Constant(0.05), Identity()),
        "regression",
    ),
    "perceptron": (Perceptron(), Perceptron(), "binary"),
    "perceptron_multiclass": (Perceptron(classes=3), Perceptron(classes=3), "multiclass"),
    "mira": (MIRA(classes=3), MIRA(classes=3), "multiclass"),
    "pa": (PassiveAggressive(variant=0), PassiveAggressive(variant=0), "binary"),
    "pa1": (PassiveAggressive(0.1, 1), PassiveAggressive(2.0, 1), "binary"),
    "pa2_regression": (
        PassiveAggressive(0.1, 2, EpsilonInsensitive(0.1)),
        PassiveAggressive(1.0, 2, EpsilonInsensitive(0.5)),
        "regression",
    ),
    "pegasos": (Pegasos(0.1), Pegasos(0.5), "binary"),
    "pegasos_projected": (Pegasos(0.1, True), Pegasos(1.0, True), "binary"),
    "winnow": (Winnow(), Winnow(1.5, 3.0), "binary"),
    "balanced_winnow": (Winnow(balanced=True), Winnow(3.0, 2.0, True), "binary"),
    "ocp_svm": (OCPSVM(0.1), OCPSVM(2.0), "binary"),
    "pa_multiclass": (PassiveAggressive(0.1, 2, classes=3), PassiveAggressive(1.0, 2, classes=3), "multiclass"),
    "one_vs_rest_pa": (OneVsRest(PassiveAggressive(0.1), 3), OneVsRest(PassiveAggressive(2.0), 3), "multiclass"),
    "one_vs_rest_pegasos": (OneVsRest(Pegasos(0.1), 3), OneVsRest(Pegasos(1.0), 3), "multiclass"),
    "adagrad": (AdaGrad(0.1), AdaGrad(0.5, 0.1), "regression"),
    "adagrad_l2": (AdaGrad(0.1, projection=L2Ball(1.0)), AdaGrad(0.5, projection=L2Ball(0.3)), "regression"),
    "adagrad_l1_box": (
        AdaGrad(0.1, l1=0.01, projection=Box(-1.0, 1.0)),
        AdaGrad(0.5, l1=0.1, projection=Box(-0.5, 0.5)),
        "regression",
    ),
    "nag": (NAG(0.5), NAG(1.5), "regression"),
    "cw": (CW(eta=0.8), CW(eta=0.95), "binary"),
    "arow": (AROW(r=1.0), AROW(r=0.1), "binary"),
    "scw1_multiclass": (SCW(classes=3), SCW(classes=3, C=0.1, eta=0.7), "multiclass"),
    "scw2": (SCW(variant=2), SCW(C=0.1, eta=0.7, variant=2), "binary"),
    "arow_multiclass": (AROW(classes=3), AROW(classes=3, r=0.2), "multiclass"),
    "ons": (ONS(1.0, 1.0), ONS(0.5, 2.0), "regression"),
    "ons_l2": (ONS(1.0, 1.0, projection=L2Ball(1.0)), ONS(0.5, 2.0, projection=L2Ball(0.2)), "regression"),
    "sketched_ons": (SketchedONS(1.0, 10.0, 3), SketchedONS(0.5, 20.0, 3), "regression"),
    "coin": (CoinBetting(), CoinBetting(0.5), "regression"),
    "coin_per_coordinate": (CoinBetting(per_coordinate=True), CoinBetting(2.0, True), "regression"),
    "cocob": (COCOB(), COCOB(50.0), "regression"),
    "cocob_backprop": (COCOB(backprop=True), COCOB(10.0, True), "regression"),
    "dog": (DoG(), DoG(1e-3), "regression"),
    "dog_l2_hinge": (DoG(loss=Hinge(), projection=L2Ball(1.0)), DoG(1e-2, Hinge(), L2Ball(0.5)), "binary"),
    "mechanic_ogd": (Mechanic(), Mechanic(lam=0.1, s_init=1e-4), "regression"),
    "mechanic_adagrad_hinge": (
        Mechanic(AdaGrad(1.0, loss=Hinge()), loss=Hinge()),
        Mechanic(AdaGrad(0.5, loss=Hinge()), 0.0, loss=Hinge()),
        "binary",
    ),
    "metagrad": (MetaGrad(1.0, 5.0, 4), MetaGrad(2.0, 10.0, 4), "regression"),
    "flh_ons": (FLH(ONS(0.5, 1.0), 0.5, 6), FLH(ONS(1.0, 2.0), 0.2, 6), "regression"),
    "flh_perceptron_multiclass": (FLH(Perceptron(classes=3), 0.5, 6), FLH(Perceptron(classes=3), 0.1, 6), "multiclass"),
    "optax_adagrad": (
        from_optax("adagrad", Hinge(), learning_rate=0.1),
        from_optax("adagrad", Hinge(), learning_rate=0.5),
        "binary",
    ),
    "omd_euclidean_l2": (
        OMD(Squared(), InvSqrt(0.1), Euclidean(L2Ball(1.0))),
        OMD(Squared(), InvSqrt(0.3), Euclidean(L2Ball(0.5))),
        "regression",
    ),
    "eg": (
        OMD(Squared(), Constant(0.05), NegEntropy(2.0)),
        OMD(Squared(), Constant(0.2), NegEntropy(0.5)),
        "regression",
    ),
    "eg_pm": (
        OMD(Hinge(), InvSqrt(0.1), SignedEntropy(3.0)),
        OMD(Hinge(), InvSqrt(0.5), SignedEntropy(1.0)),
        "binary",
    ),
    "omd_p_norm": (
        OMD(Squared(), Constant(0.02), PNorm(3.0)),
        OMD(Squared(), Constant(0.05), PNorm(4.0)),
        "regression",
    ),
    "ftrl_entropy": (
        FTRL(Logistic(), InvSqrt(0.5), NegEntropy(1.0)),
        FTRL(Logistic(), InvSqrt(1.0), NegEntropy(2.0)),
        "binary",
    ),
    "ftrl_euclidean_l2": (
        FTRL(Squared(), Constant(0.02), Euclidean(L2Ball(1.0))),
        FTRL(Squared(), Constant(0.05), Euclidean(L2Ball(2.0))),
        "regression",
    ),
    "ftrl_proximal": (FTRLProximal(), FTRLProximal(0.5, 0.5, 0.1, 0.0), "binary"),
    "ftrl_proximal_river_order": (
        FTRLProximal(loss=Squared(), river_order=True),
        FTRLProximal(0.5, 0.5, 0.1, 0.0, Squared(), True),
        "regression",
    ),
    "hedge": (Hedge(0.5), Hedge(0.1), "regression"),
}
ids = list(LEARNERS)


def stream(task, n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)).astype(np.float32)
    y = X @ rng.normal(size=D).astype(np.float32)
    if task == "binary":
        y = np.where(y >= 0, 1.0, -1.0).astype(np.float32)
    if task == "multiclass":
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])).astype(np.int32)
    return jnp.asarray(X), jnp.asarray(y)


@pytest.fixture(params=ids)
def case(request):
    return LEARNERS[request.param]


def test_init_matches_update_shapes_and_dtypes(case):
    learner, _, task = case
    X, y = stream(task)
    state = learner.init(D)
    after = jax.eval_shape(learner.update, state, (X[0], y[0]))
    assert jax.tree.structure(after) == jax.tree.structure(state)
    for a, b in zip(jax.tree.leaves(after), jax.tree.leaves(state), strict=True):
        assert (a.shape, a.dtype) == (b.shape, b.dtype)
    assert state.t.dtype == jnp.int32 and int(state.t) == 1 and state.w.dtype == jnp.float32
    assert state.w.shape == ((3, D) if task == "multiclass" else (D,))


def test_scan_equals_a_python_loop_of_update(case):
    learner, _, task = case
    X, y = stream(task)
    result = run(learner, X, y)
    # Each round's step compiled on its own (called outside a compiled function, a step with a
    # lax.cond or loop inside, such as the L2 ball's re-sum, would be traced and compiled each round).
    predict, update = jax.jit(learner.predict), jax.jit(learner.update)
    state, losses = learner.init(D), []
    for i in range(len(y)):
        losses.append(learner.loss.value(predict(state, X[i]), y[i]))
        state = update(state, (X[i], y[i]))
    # Up to float32 rounding: XLA fuses the compiled scan's arithmetic differently (ONS's
    # eigendecomposition and root find move by a few ulps of ||w||).
    np.testing.assert_allclose(result.state.w, state.w, rtol=1e-5, atol=5e-6)
    np.testing.assert_allclose(result.trace.loss, losses, rtol=1e-5, atol=5e-6)
    assert int(result.state.t) == len(y) + 1


def needs_numbers(learner):
    if not jax.tree.leaves(learner):
        pytest.skip("this learner has no numbers to sweep")


def test_vmapped_sweep_equals_separate_runs(case):
    learner, other, task = case
    needs_numbers(learner)
    X, y = stream(task)
    stacked = jax.tree.map(lambda a, b: jnp.stack([jnp.asarray(a), jnp.asarray(b)]), learner, other)
    swept = jax.vmap(lambda lrn: run(lrn, X, y))(stacked)
    for j, single in enumerate([learner, other]):
        alone = run(single, X, y)
        np.testing.assert_allclose(swept.state.w[j], alone.state.w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(swept.trace.loss[j], alone.trace.loss, rtol=1e-5, atol=1e-6)


def test_new_hyperparameter_values_compile_nothing(case):
    learner, other, task = case
    needs_numbers(learner)
    X, y = stream(task)
    run(learner, X, y)  # compiles
    events = []
    listen = lambda event, *_, **__: events.append(event)  # noqa: E731
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        # Not ``.state.w``: for AdaGrad that is a slice of its table, compiled the first time it is
        # taken outside a jit (in the full suite an earlier test had; alone this test failed).
        jax.block_until_ready(run(other, X, y))
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)  # (only ours: others' listeners stay)
    assert [e for e in events if e.startswith("/jax/core/compile/")] == []  # no trace, no compile


def test_zero_and_huge_examples_give_finite_weights(case):
    learner, _, task = case
    X, y = stream(task)  # the other tests' 40 rows, so that their run's program serves this one
    X = X.at[1].set(0.0).at[2].multiply(1e15)
    result = run(learner, X, y)
    assert np.all(np.isfinite(result.state.w)) and np.all(np.isfinite(result.trace.loss[:3]))
    # An all-zero example leaves the weights unchanged (Pegasos still applies its shrinkage, and
    # the coin bettor's bets theta Wealth / t shrink by t / (t + 1); FLH gives the new expert,
    # at 0, weight 1 / (t + 1)). The step compiled as test_scan_equals_a_python_loop_of_update
    # compiles it (the same program: the compilation cache's, not a run of one row and each of
    # the step's operations compiled again per learner); that test shows it is the runner's round.
    update = jax.jit(learner.update)
    before = update(learner.init(D), (X[0], y[0]))
    after = update(before, (X[1], y[1]))
    t = float(before.t)
    shrinks = {Pegasos: 1.0 - 1.0 / t, CoinBetting: t / (t + 1.0), FLH: t / (t + 1.0)}
    kind = type(learner) if type(learner) in shrinks else type(getattr(learner, "base", learner))
    shrink = shrinks.get(kind, 1.0)
    expected = shrink * np.asarray(learner.weights(before))
    if isinstance(learner, AdaGrad) and learner.l1 is not None:  # the composite L1 step still applies
        H = learner.delta + np.sqrt(np.asarray(before.G))
        cut = np.where(H > 0, learner.eta * learner.l1 / np.where(H > 0, H, 1), 0)
        expected = learner.projection(np.sign(expected) * np.maximum(np.abs(expected) - cut, 0))
    if isinstance(learner, FTRL):  # the same sum of gradients, played at the next round's rate
        expected = learner.mirror.weights(learner.schedule(before.t) * before.theta)
    np.testing.assert_allclose(learner.weights(after), expected, rtol=1e-6, atol=1e-7)


def test_sparse_features_give_the_dense_result(case):
    learner, _, task = case
    X, y = stream(task)
    idx = jnp.tile(jnp.arange(D, dtype=jnp.int32)[::-1], (len(y), 1))
    sparse = Sparse(idx, X[:, ::-1], D)
    np.testing.assert_allclose(run(learner, sparse, y).state.w, run(learner, X, y).state.w, rtol=1e-5, atol=1e-6)
