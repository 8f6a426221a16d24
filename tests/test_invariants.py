"""Invariants of every registered learner over long float32 streams (issue 10).

Every kind in ``Learner.registry`` (its defaults, plus the variants that carry a feasible set or
more classes), dense and sparse, runs through the runner without a trace over five streams:
unit-scale, heavy-tailed (Student t, 1.5 degrees of freedom: infinite variance), 1e6-scale
features, one constant example, and an adversary that flips the label every round on a fixed
example. After every chunk the weights and every floating leaf of the state are finite and the
feasible set holds (``violation``); the run in chunks equals the whole run bit for bit; and, on
the unit stream, ``weights(state)`` equals a float64 transcription of the paper's rule
(``TRANSCRIPTIONS``, reused from the other test files).

The unmarked tests run 2 x 10^4 rounds and compare chunks with the whole run; the ``slow`` ones
run 10^6 rounds in chunks (10^5 for the learners that do an eigendecomposition every round, ONS
with a ball and sketched ONS: about 30 and 50 us a round), and the transcriptions 10^5.
"""

from functools import cache

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ocolearn.pipeline  # noqa: F401  (registers the pipeline kind: the battery runs it too)
from ocolearn import (
    AROW,
    FLH,
    MIRA,
    OCPSVM,
    OGD,
    ONS,
    SCW,
    AdaGrad,
    Box,
    CoinBetting,
    Hinge,
    InvSqrt,
    L1Ball,
    L2Ball,
    NonNegative,
    OneVsRest,
    PassiveAggressive,
    Pegasos,
    Perceptron,
    Simplex,
    Sparse,
    Winnow,
    from_optax,
    run,
)
from ocolearn.checks import check_data
from ocolearn.learners import Learner
from ocolearn.learners.confidence import GaussianState
from ocolearn.learners.flh import FLHState
from ocolearn.learners.metagrad import MetaGrad
from ocolearn.learners.ons import SketchedONS
from ocolearn.run import round_step, tidy_scan

D = 6


def defaults():
    """Every registered kind with its default settings (FromOptax needs an optimizer); the
    pipeline among them, imported above (a kind registers itself when imported)."""
    cases = {}
    for name, cls in Learner.registry.items():
        cases[name] = from_optax("adagrad", Hinge(), learning_rate=0.1) if name == "optax" else cls()
    return cases


VARIANTS = {
    "ridge": OGD(projection=L2Ball(1.5)),
    "ogd_hinge_l1": OGD(Hinge(), InvSqrt(0.5), L1Ball(2.0)),
    "ogd_box": OGD(schedule=InvSqrt(0.1), projection=Box(-0.5, 0.8)),
    "ogd_simplex": OGD(Hinge(), InvSqrt(1.0), Simplex(2.0)),
    "ogd_non_negative": OGD(schedule=InvSqrt(0.1), projection=NonNegative()),
    "pegasos_projected": Pegasos(1e-4, True),
    "pegasos_projected_strong": Pegasos(0.5, True),
    "ocp_svm_strong": OCPSVM(2.0),
    "adagrad_l2": AdaGrad(0.5, projection=L2Ball(0.7)),
    "adagrad_box": AdaGrad(0.5, l1=0.01, projection=Box(-0.3, 0.4)),
    "ons_l2": ONS(projection=L2Ball(0.8)),
    "sketched_ons_shrinking": SketchedONS(1.0, 10.0, 3),
    "balanced_winnow": Winnow(balanced=True),
    "perceptron_multiclass": Perceptron(classes=3),
    "pa_multiclass": PassiveAggressive(0.5, 1, classes=3),
    "arow_multiclass": AROW(classes=3),
    "scw_multiclass": SCW(classes=3),
    "mira_3": MIRA(classes=3),
    "one_vs_rest_pegasos_projected": OneVsRest(Pegasos(0.1, True), 3),
}
CASES = {**defaults(), **VARIANTS}
CASES["flh"] = FLH(levels=17)  # the long streams' 10^5 rounds need max_rounds = 2^levels - 2 >= 10^5
EXPENSIVE = {"ons_l2", "sketched_ons", "sketched_ons_shrinking", "metagrad", "flh"}  # d x d solves every round
# The slowest of them per round (13.5 us at d = 6: an m x m eigendecomposition and two solves in
# every round; 16 s each on the big and heavy streams at 10^5 rounds, where it fails, as on the
# short streams): 3 chunks, still a state carried across chunk boundaries.
# MetaGrad keeps its 10^5: one without its log weights' renormalization (log pi - max log pi)
# passed every stream at 2 x 10^4 rounds and failed the big one after 70,000 (2026-11-24).
LONG_ROUNDS = {"sketched_ons": 30_000}


def task(learner):
    name = learner.loss.name
    if name.startswith("multiclass"):
        return "multiclass"
    return "regression" if name in ("squared", "absolute", "epsilon_insensitive") else "binary"


def violation(learner, state):
    """How far ``weights(state)`` is outside the learner's feasible set, relative to its size
    (0 inside), or, for learners without one, whether a quantity the rule keeps in a set is out
    of it (Winnow's weights and the confidence-weighted variances are >= 0, the coin bettor's
    wealth > 0): 0 or 1."""
    w = jnp.asarray(learner.weights(state), jnp.float32)
    if isinstance(learner, OneVsRest):
        return jnp.max(jax.vmap(lambda s: violation(learner.base, s))(state.inner))
    if isinstance(learner, Pegasos | OCPSVM):
        return (jnp.sqrt(jnp.sum(w * w) * learner.lam) - 1.0) if getattr(learner, "project", True) else 0.0
    if isinstance(learner, Winnow):
        return jnp.where(jnp.all(state.w >= 0) & jnp.all(state.negative >= 0), 0.0, 1.0)
    if isinstance(state, GaussianState):
        return jnp.where(jnp.all(state.sigma >= 0), 0.0, 1.0)
    if isinstance(learner, CoinBetting):
        return jnp.where(jnp.all(state.wealth > 0), 0.0, 1.0)
    if isinstance(learner, MetaGrad):  # its ball is a setting of its own, not a projection part
        return jnp.sqrt(jnp.sum(w * w)) / learner.radius - 1.0
    p = getattr(learner, "projection", None)
    if isinstance(p, L2Ball):
        return jnp.sqrt(jnp.sum(w * w)) / p.radius - 1.0
    if isinstance(p, L1Ball):
        return jnp.sum(jnp.abs(w)) / p.radius - 1.0
    if isinstance(p, Box):
        size = jnp.maximum(jnp.abs(p.lower), jnp.abs(p.upper))
        return jnp.maximum(jnp.max(jnp.maximum(p.lower - w, w - p.upper)), 0.0) / size
    if isinstance(p, NonNegative):
        return jnp.maximum(-jnp.min(w), 0.0)
    if isinstance(p, Simplex):
        return jnp.maximum(jnp.abs(jnp.sum(w) / p.radius - 1.0), jnp.maximum(-jnp.min(w), 0.0) / p.radius)
    return jnp.zeros(())


# Float32 rounding of one step is ~1e-7 relative; the projected Pegasos step on sparse rows
# carries ||w||^2 for up to 1,024 rounds between refreshes (``Pegasos._refresh``).
TOLERANCE = 1e-6
SPARSE_PEGASOS_TOLERANCE = 2e-5


STREAMS = ["unit", "heavy", "big", "constant", "flip"]


@cache
def draws(kind, rounds, classes=3):
    """The random part of a stream, shared by its tasks (drawing 10^6 heavy-tailed rows takes
    0.3 s): float32 features, the regression score and the multiclass labels."""
    rng = np.random.default_rng(STREAMS.index(kind))
    u, U = rng.normal(size=D) / np.sqrt(D), rng.normal(size=(classes, D))
    if kind in ("constant", "flip"):
        X = np.tile(rng.normal(size=D), (rounds, 1))
    elif kind == "heavy":
        X = rng.standard_t(1.5, size=(rounds, D))
    else:
        X = rng.normal(size=(rounds, D)) * (1e6 if kind == "big" else 1.0)
    score = X @ u + (0.1 * rng.normal(size=rounds) if kind in ("unit", "heavy", "big") else 0.0)
    X32 = X.astype(np.float32)
    X32.flags.writeable = False  # shared by every test of the process that reads this stream
    return X32, score, np.argmax(X @ U.T, axis=1)


@cache
def stream(kind, rounds, target, classes=3):
    """``rounds`` rows of the named stream as float32 features and the task's targets."""
    X, score, labels = draws(kind, rounds, classes)
    if kind == "flip":
        score = np.where(np.arange(rounds) % 2 == 0, 1.0, -1.0) * (1.0 + abs(score))
    if target == "regression":
        y = score
    elif target == "binary":
        y = np.where(score > 0, 1.0, -1.0)
    elif kind == "flip":
        y = np.arange(rounds) % 2
    else:  # as many classes as the learner has
        y = labels
    return X, y.astype(np.int32 if target == "multiclass" else np.float32)


def data_for(learner, kind, rounds, sparse):
    target = task(learner)
    X, y = stream(kind, rounds, target, learner.classes if target == "multiclass" else 3)
    if isinstance(learner, Winnow):  # Littlestone's domain: {0, 1} features
        X = (X > 0).astype(np.float32)
    if sparse:  # every feature stored, in reverse order
        return Sparse(np.tile(np.arange(D, dtype=np.int32)[::-1], (len(y), 1)), X[:, ::-1], D), y
    return X, y


def slice_rows(X, start, stop):
    return jax.tree.map(lambda a: a[start:stop], X)


# Where the battery fails, and why. The first two are the exact rule: squared-loss gradient
# steps without a set or a normalization, at a rate above 2 / ||x||^2, grow geometrically (in
# float64 too). The others are float32 numerics of second-order learners with gradients of
# 1e12 (issue 10, found by this battery and not fixed yet): Sherman-Morrison's A^{-1} loses
# its positive definiteness, and the sketch's small system turns to NaN.
KNOWN_FAILURES = {
    ("ogd", "big"): "OGD, squared loss, no set: eta ||x||^2 = 1e12, the exact iterates diverge",
    ("ogd_non_negative", "big"): "OGD, squared loss, orthant: eta ||x||^2 = 1e12, the exact iterates diverge",
    ("ons", "big"): "ONS: float32 Sherman-Morrison with gradients of 1e12 goes NaN",
    ("sketched_ons", "big"): "sketched ONS, epsilon = 1: float32 NaN with gradients of 1e12",
    ("sketched_ons", "heavy"): "sketched ONS, epsilon = 1: float32 NaN on infinite-variance rows",
    # OMD with the Euclidean map and FTRL linearized are OGD's rule (eagerly and lazily projected):
    ("omd", "heavy"): "OMD = OGD, squared loss, no set: the exact iterates diverge on infinite-variance rows",
    ("omd", "big"): "OMD = OGD, squared loss, no set: eta ||x||^2 = 1e12, the exact iterates diverge",
    ("ftrl", "heavy"): "FTRL, squared loss linearized, no set: the iterates diverge on infinite-variance rows",
    ("ftrl", "big"): "FTRL, squared loss linearized, no set: eta ||x||^2 = 1e12, the iterates diverge",
    # Mechanic scales its base's own steps: its default base is the OGD above.
    ("mechanic", "big"): "Mechanic around OGD (squared loss, no set): the base's steps diverge at 1e12",
    ("flh", "big"): "FLH over ONS experts (its default): the ONS failure above",
}
# Failures that take the long (10^6-round) streams to show. (Mechanic around OGD on the heavy
# stream was one while its m was one undiscounted max; with the paper's max(beta m, |h|) per beta
# its scale stays finite.)
KNOWN_LONG_FAILURES: dict = {}


def pairs(names, long=False) -> list:
    """``(name, stream)`` parameters; the known failures are strict xfails: they must fail. The
    long streams leave out the pairs known to fail on the short ones, where they are strict xfails
    already (sketched ONS's rounds on NaN took 110 us each: 6.5 s of CPU for two xfails)."""
    params = []
    for name in names:
        for kind in STREAMS:
            if long and (name, kind) in KNOWN_FAILURES:
                continue
            reason = (KNOWN_LONG_FAILURES if long else KNOWN_FAILURES).get((name, kind))
            marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] if reason else []
            params.append(pytest.param(name, kind, marks=marks, id=f"{name}-{kind}"))
    return params


CHUNK = 10_000  # rows per run call: one compiled program per learner serves every stream and length


def check_stream(name, kind, rounds, sparse, whole):
    """Run in chunks of ``CHUNK`` rounds, checking the state after each; with ``whole``, also
    in one call, which must give the same state and sums bit for bit."""
    learner = CASES[name]
    X, y = data_for(learner, kind, rounds, sparse)
    X, y = jax.tree.map(jnp.asarray, (X, y))
    tolerance = SPARSE_PEGASOS_TOLERANCE if sparse and "pegasos_projected" in name else TOLERANCE
    state, summary = learner.init(D), None
    for start in range(0, rounds, CHUNK):
        part = slice_rows(X, start, start + CHUNK), y[start : start + CHUNK]
        result = run(learner, *part, state=state, trace=False, summary=summary)
        state, summary = result.state, result.trace
        where = f"{name} on the {kind} stream, after {start + CHUNK} rounds"
        for leaf in jax.tree.leaves(state._replace(log_v=np.zeros(())) if isinstance(state, FLHState) else state):
            assert np.all(np.isfinite(np.asarray(leaf, np.float64))), f"{where}: a state leaf is not finite"
        if isinstance(state, FLHState):  # log weights: -inf is the log of an empty slot's weight 0
            assert not np.any(np.isnan(state.log_v) | (state.log_v == np.inf)), f"{where}: FLH's log weights"
        assert np.all(np.isfinite(np.asarray(learner.weights(state)))), f"{where}: weights not finite"
        assert float(violation(learner, state)) <= tolerance, f"{where}: outside the feasible set"
    if whole:
        one = run(learner, X, y, trace=False)
        for a, b in zip(jax.tree.leaves(one), jax.tree.leaves((state, summary)), strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"{name} on the {kind} stream: chunked != whole")


def chunk_checks(learner, state):
    """The checks of ``check_stream`` on one state, inside a compiled program: (every floating
    leaf finite, and FLH's log weights neither NaN nor +inf; the weights finite; the violation)."""
    leaves = jax.tree.leaves(state._replace(log_v=jnp.zeros(())) if isinstance(state, FLHState) else state)
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in leaves]))
    if isinstance(state, FLHState):
        finite &= ~jnp.any(jnp.isnan(state.log_v) | (state.log_v == jnp.inf))
    weights = jnp.all(jnp.isfinite(learner.weights(state)))
    return finite, weights, jnp.asarray(violation(learner, state), jnp.float32)


@jax.jit
def chunked_run(learner, X, y, state):
    """``rounds / CHUNK`` runs of ``CHUNK`` rounds, the state carried from one to the next as
    ``check_stream`` carries it (the runner's round and upkeep: ``round_step``, ``tidy_scan``), in
    one program, with ``chunk_checks`` after each."""
    chunks = y.shape[0] // CHUNK

    def one(state, c):
        part = jax.tree.map(lambda a: jax.lax.dynamic_slice_in_dim(a, c * CHUNK, CHUNK), (X, y))
        state, _ = tidy_scan(learner, round_step(learner, *part), state, jnp.arange(CHUNK))
        return state, chunk_checks(learner, state)

    return jax.lax.scan(one, state, jnp.arange(chunks))[1]


def check_long_stream(name, kind, rounds, sparse):
    """``check_stream`` without the whole run, its chunks run in one compiled program: the same
    checks after every chunk, without a return to Python between chunks."""
    learner = CASES[name]
    X, y = data_for(learner, kind, rounds, sparse)
    learner.check("learner")
    check_data(learner, X, y)
    tolerance = SPARSE_PEGASOS_TOLERANCE if sparse and "pegasos_projected" in name else TOLERANCE
    finite, weights, worst = (
        np.asarray(a) for a in chunked_run(learner, *jax.tree.map(jnp.asarray, (X, y)), learner.init(D))
    )
    for c in range(len(finite)):
        where = f"{name} on the {kind} stream, after {(c + 1) * CHUNK} rounds"
        assert finite[c], f"{where}: a state leaf is not finite"
        assert weights[c], f"{where}: weights not finite"
        assert worst[c] <= tolerance, f"{where}: outside the feasible set"


def test_chunks_in_one_program_check_what_chunks_from_python_check():
    # The battery's long streams run their chunks in one program (chunked_run); a short stream run
    # both ways gives the same checks, and a state outside the set fails them.
    for name, kind in [("ridge", "unit"), ("ogd_box", "heavy"), ("pegasos_projected", "big"), ("flh", "unit")]:
        check_stream(name, kind, 2 * CHUNK, False, whole=False)
        check_long_stream(name, kind, 2 * CHUNK, False)
    learner = CASES["ridge"]
    outside = learner.init(D)._replace(w=jnp.full((D,), 10.0))
    assert float(chunk_checks(learner, outside)[2]) > 1.0


def test_every_registered_kind_is_in_the_battery():
    kinds = {type(learner).name for learner in CASES.values()}
    assert "pipeline" in kinds and kinds == set(Learner.registry)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name, kind", pairs(CASES))
def test_short_streams_keep_the_invariants(name, kind, sparse):
    check_stream(name, kind, 2 * CHUNK, sparse, whole=True)


@pytest.mark.slow
@pytest.mark.parametrize("name, kind", pairs(CASES, long=True))
def test_long_streams_keep_the_invariants(name, kind):
    rounds = LONG_ROUNDS.get(name, 100_000 if name in EXPENSIVE else 1_000_000)
    check_long_stream(name, kind, rounds, sparse=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in CASES if n not in EXPENSIVE])
def test_long_sparse_stream_keeps_the_invariants(name):
    check_long_stream(name, "unit", 1_000_000, sparse=True)


# Float64 transcriptions after 10^5 rounds ---------------------------------------------------


def ogd_by_hand(X, y, eta, hinge=False, radius=None):
    """Zinkevich (2003), Algorithm 1: w <- P(w - eta / sqrt(t) loss'(w . x) x), float64."""
    w = np.zeros(X.shape[1])
    for t, (x, target) in enumerate(zip(X.astype(np.float64), y, strict=True), start=1):
        p = w @ x
        g = (-target if target * p < 1 else 0.0) if hinge else p - target
        w = w - eta / np.sqrt(t) * g * x
        if radius is not None and np.linalg.norm(w) > radius:
            w = w * radius / np.linalg.norm(w)
    return w


def pa_by_hand(X, y, C):
    """Crammer et al. (2006), PA-I, labels +-1, float64."""
    w = np.zeros(X.shape[1])
    for x, label in zip(X.astype(np.float64), y, strict=True):
        loss = max(0.0, 1.0 - label * (w @ x))
        if loss > 0 and x @ x > 0:
            w = w + min(C, loss / (x @ x)) * label * x
    return w


def perceptron_binary_by_hand(X, y):
    w = np.zeros(X.shape[1])
    for x, label in zip(X.astype(np.float64), y, strict=True):
        if label * (w @ x) <= 0:
            w = w + label * x
    return w


def transcriptions():
    """name -> (stream the rule runs on, its float64 transcription, tolerance on
    ``max |w - w64| / max(1, max |w64|)``).

    Tolerances: the continuous rules (their step is a continuous function of w) agree to float32
    rounding amplified by their conditioning; the mistake-driven ones run on features on a 1/8
    grid (Winnow: a monotone disjunction, Littlestone's setting, where its weights stay
    powers of two far from underflow), where every sum is exact in both precisions, and must
    agree exactly. Pegasos' step is not continuous (the margin test), but a rounding that flips
    the test at round t moves w_T by ||x|| / (lam T) only; OCP-SVM's by ||x|| / sqrt(t), which
    stays (1e-2)."""
    from test_adaptive import (
        adagrad_by_hand,
        arow_rule,
        cw_rule,
        gaussian_by_hand,
        kt_by_hand,
        nag_by_hand,
        ons_by_hand,
        scw_rule,
        son_by_hand,
    )
    from test_classifiers import pegasos_by_hand, winnow_by_hand
    from test_multiclass import mira_by_hand, pa_multiclass_by_hand, perceptron_by_hand

    return {
        "ogd": ("unit", lambda X, y: ogd_by_hand(X, y, 0.1), 1e-4),  # OGD's default rate, eta = 0.1
        "ridge": ("unit", lambda X, y: ogd_by_hand(X, y, 0.1, radius=1.5), 1e-4),
        "ocp_svm": ("unit", lambda X, y: ogd_by_hand(X, y, 1.0, hinge=True, radius=1 / np.sqrt(0.1)), 1e-2),
        "pegasos": ("unit", lambda X, y: pegasos_by_hand(X, y, 1e-4, False, 1), 1e-3),
        "pegasos_projected": ("unit", lambda X, y: pegasos_by_hand(X, y, 1e-4, True, 1), 1e-3),
        "pegasos_projected_strong": ("unit", lambda X, y: pegasos_by_hand(X, y, 0.5, True, 1), 1e-3),
        "passive_aggressive": ("unit", lambda X, y: pa_by_hand(X, y, 1.0), 1e-3),
        "pa_multiclass": ("unit", lambda X, y: pa_multiclass_by_hand(X, y, 3, 0.5, 1), 1e-3),
        "mira_3": ("unit", lambda X, y: mira_by_hand(X, y, 3, 1 - np.eye(3)), 1e-3),
        "perceptron": ("grid", perceptron_binary_by_hand, 0.0),
        "perceptron_multiclass": ("grid", lambda X, y: perceptron_by_hand(X, y, 3), 0.0),
        "winnow": ("disjunction", lambda X, y: winnow_by_hand(X, y, 2.0, 0.0, False, 1), 0.0),
        "balanced_winnow": ("disjunction", lambda X, y: winnow_by_hand(X, y, 2.0, 0.0, True, 1), 0.0),
        "adagrad": ("unit", lambda X, y: adagrad_by_hand(X, y, 0.1), 1e-4),
        "adagrad_l2": ("unit", lambda X, y: adagrad_by_hand(X, y, 0.5, radius=0.7), 1e-4),
        "nag": ("unit", lambda X, y: nag_by_hand(X, y, 1.0)[0], 1e-3),
        "cw": ("unit", lambda X, y: gaussian_by_hand(X, y, cw_rule(0.9)), 1e-3),
        "arow": ("unit", lambda X, y: gaussian_by_hand(X, y, arow_rule(1.0)), 1e-3),
        "scw": ("unit", lambda X, y: gaussian_by_hand(X, y, scw_rule(1.0, 0.9, 1)), 1e-3),
        "arow_multiclass": ("unit", lambda X, y: gaussian_by_hand(X, y, arow_rule(1.0), 3), 1e-3),
        "ons": ("unit", lambda X, y: ons_by_hand(X, y, 1.0, 1.0), 1e-3),
        "ons_l2": ("unit", lambda X, y: ons_by_hand(X, y, 1.0, 1.0, 0.8), 1e-3),
        "sketched_ons_shrinking": ("unit", lambda X, y: son_by_hand(X, y, 1.0, 10.0, 3, 1.0), 1e-3),
        "coin_betting": ("unit", lambda X, y: kt_by_hand(X, y, 1.0, False), 1e-3),
    }


def transcription_data(name, kind, rounds):
    learner = CASES[name]
    if kind == "unit":
        return data_for(learner, "unit", rounds, False)
    if kind == "disjunction":
        from test_classifiers import disjunction

        return disjunction(0, d=D, k=2, n=rounds)
    X, y = stream("unit", rounds, task(learner))
    return (np.round(X * 8) / 8).astype(np.float32), y


@pytest.mark.parametrize("rounds", [2_000, pytest.param(100_000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", list(transcriptions()))
def test_weights_equal_the_float64_transcription(name, rounds):
    kind, by_hand, tolerance = transcriptions()[name]
    learner = CASES[name]
    X, y = transcription_data(name, kind, rounds)
    # 10^5 rounds in runs of CHUNK, the state carried: the program of the short streams' chunks
    # (compiled once per learner), and the whole run's numbers bit for bit (as they check).
    state, step = learner.init(D), min(rounds, CHUNK)
    for start in range(0, rounds, step):
        state = run(learner, X[start : start + step], y[start : start + step], state=state, trace=False).state
    w = np.asarray(learner.weights(state), np.float64)
    expected = by_hand(X, y)
    error = np.max(np.abs(w - expected)) / max(1.0, np.max(np.abs(expected)))
    assert error <= tolerance, f"{name}: {error:.2e} from the float64 rule after {rounds} rounds"
