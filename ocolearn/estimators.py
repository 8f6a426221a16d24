"""scikit-learn estimators over any ocolearn learner: ``OnlineClassifier`` and ``OnlineRegressor``.

An estimator holds a learner (a registered name such as ``"pegasos"``, a learner object, or
None, the default: ``ocolearn train``'s default learner, ``pipeline.default_learner``: AdaGrad on
the logistic loss for a classifier, one-vs-rest over it for more than two classes, so that
``predict_proba`` is there; OGD on the squared loss at river's constant rate for a regressor),
the preprocessing every door uses (``ocolearn.preprocess.default_steps``): ``scale`` (``"auto"``:
online standardization of dense rows, river's order, normalize for sparse rows; ``"standardize"``,
``"normalize"``, ``"none"``) and ``fit_intercept`` (a constant feature whose weight is the
intercept, left out of the learner's regularizer and projection), composed in front of the
learner as one ``ocolearn.pipeline.Pipeline``; and the runner's options under scikit-learn's
names: ``max_iter`` passes over the data, ``random_state`` (None: the rows' own order; an int:
pass p shuffled by ``fold_in(random_state, p)``, as ``ocolearn.run``; unlike scikit-learn's
``shuffle=True``, None does not shuffle), ``average`` (predict with the learner's averaged
weights), ``warm_start`` (``fit`` continues the state, and the numbering of the shuffles, the
last call left, so ``fit`` twice with ``max_iter=k`` equals one ``fit`` with ``2k``; it goes on
with the learner it started with, whose state it holds, whatever ``set_params`` did since) and
``verbose`` (a line per pass: rounds, average loss, mistakes). ``fit`` runs the learner from its
initial state; ``partial_fit`` runs one pass over the given rows in their order, continuing from
the state it left, so that ``partial_fit(A); partial_fit(B)`` equals ``fit`` on the rows of A
then B with one pass, bit for bit (sparse rows: when both are padded to the same width, as the
sum over a row's padding is then the same sum). Rows are NumPy arrays, ``scipy.sparse``
matrices (CSR, CSC, ...) or pandas and polars DataFrames (``ocolearn.data.containers``), and the
same rows give the same model whatever holds them: a DataFrame's columns are read as numbers
(``table_of``; text, categorical or missing cells as a CSV file's: ``ocolearn.data.csvfile``, the
categories one-hot, a missing numeric cell imputed online with an indicator), and a sparse
matrix at most 256 features wide, or whose dense rows are no larger than its sparse ones, is read
as the dense rows it holds (``dense_enough``); a wider one becomes padded ``Sparse`` rows in
O(nnz), as wide as the longest row (a ``partial_fit`` takes rows of the kind its first call
took). A pass is compiled once per shape of the rows (their number, and for sparse rows their
width), so ``partial_fit`` on batches of one size compiles once. Training that leaves
non-finite weights is an error, not a model.

``coef_`` and ``intercept_`` are the pipeline folded into one linear model of the raw features
(``ocolearn.pipeline.raw_linear``): ``decision_function(X) = X @ coef_.T + intercept_``
(``coef_`` is ``(1, d)`` for two classes, ``(K, d)`` for K, ``(d,)`` for a regressor).

**Weights.** ``sample_weight`` (and a classifier's ``class_weight``: None, ``{label: weight}``
or ``"balanced"``, ``n / (K * count(label))`` as scikit-learn computes it) scale each example's
step, as scikit-learn's SGD does (``update *= class_weight * sample_weight`` in its
``plain_sgd``): the round of an example of weight s is ``Learner.weighted_update(state, (x, y),
s)``. It is exactly scikit-learn's rule for OGD on any loss without a projection
(``SGDClassifier``/``SGDRegressor`` with ``penalty=None``, ``learning_rate="constant"`` or an
``eta_t`` schedule), the Perceptron (its ``Perceptron``) and PA-I/PA-II (``tau * s`` after the
clipping at C; ``learning_rate="pa1"|"pa2"``; scikit-learn's PA leaves the intercept's constant 1
out of ``||x||^2``, so the two agree with ``fit_intercept=False``), tested equal in
``tests/test_estimators.py``. Pegasos scales its hinge step and not its shrinkage (scikit-learn's
rule, on Pegasos' rate ``1 / (lam t)``). Any other learner with a ``loss`` field runs on the
loss ``s * loss`` (its gradient scaled by s): for AdaGrad, FTRL, ONS and the parameter-free
learners that is the learner on the weighted losses, not s times its unweighted step (their
steps are not linear in the gradient), and the gradient bound some of them assume grows with
the largest weight. The learners without a loss to weight (MIRA, CW, AROW, SCW, Winnow, Hedge,
FLH, OCP-SVM) refuse weights. With two classes, or a K-class learner, an example's weight is
its ``sample_weight`` times its label's ``class_weight``; one-vs-rest copy k weights its
positive examples by ``class_weight[k]`` and its negative ones by 1, as scikit-learn's
one-vs-rest does. The online scaling statistics take in every row whatever its weight. Without
weights the runner runs the unweighted program, unchanged. scikit-learn's checks that weight 2
equals two copies of a row are expected to fail (``expected_failed_checks``), as scikit-learn
expects for its own SGD estimators: an online step on a doubled example is not two steps.

**Probabilities.** With the logistic loss (``learner__loss="logistic"``; a one-vs-rest base's
loss counts), ``predict_proba`` is scikit-learn's ``SGDClassifier``'s: ``sigmoid(score)`` for two
classes, the K sigmoids normalized to sum to one for K; with any other loss the method is absent
(``hasattr`` is False), as scikit-learn's is.

The learner's fields are parameters: ``get_params()`` lists them as ``learner__lam``,
``learner__schedule__eta``, ... and ``set_params(learner__lam=0.1)`` replaces them in the
learner (a name becomes the registered learner with its defaults first; a part may be given by
name, ``learner__loss="logistic"``, or as a table, ``learner__schedule={"kind": "constant",
"eta": 0.5}``, as in a config file), so ``GridSearchCV`` can search over them.

A classifier with two classes trains a binary learner on labels -1/+1 (``classes_[1]`` is
+1); with K > 2, a learner with a ``classes`` field is made K-class, any other is run
one-vs-rest (``OneVsRest``). ``save``/``load`` write and read the model file of
``ocolearn train`` (``ocolearn.modelfile``), so a model trained here is read identically by
``ocolearn predict`` and ``ocolearn test`` and one trained there can predict here. A file holds
the folded weights, not the learner's state: a loaded estimator predicts and scores, ``fit``
trains afresh, and ``partial_fit`` cannot continue it (an error).

Without scikit-learn (or SciPy), importing this module fails with one line saying
``pip install 'ocolearn[sklearn]'``.

>>> import numpy as np
>>> X, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array(["a", "b"])
>>> OnlineClassifier("perceptron").fit(X, y).predict(X).tolist()
['a', 'b']
"""

from __future__ import annotations

import typing
import warnings

import numpy as np

try:
    import scipy.sparse  # noqa: F401  (the estimators take its matrices; without it, the one line below)
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
    from sklearn.utils.class_weight import compute_class_weight
    from sklearn.utils.metaestimators import available_if
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import _check_feature_names, _check_sample_weight, check_is_fitted, validate_data
except ImportError:  # one line saying what to install, not a traceback into scipy or sklearn
    raise ImportError("ocolearn.estimators needs scikit-learn and SciPy: pip install 'ocolearn[sklearn]'") from None

from ocolearn import metrics, modelfile
from ocolearn.checks import check_rounds
from ocolearn.config import _build_part
from ocolearn.data.containers import csr_rows, dense_enough, is_frame, matrix_of, rows_of
from ocolearn.features import Sparse
from ocolearn.learners import Learner, OneVsRest
from ocolearn.learners.pipeline import steps_of, with_intercept_field, with_pipeline
from ocolearn.losses import Logistic
from ocolearn.names import MAX_SEED, is_seed
from ocolearn.parts import ConfigError, Part, fields_of
from ocolearn.pipeline import (
    TrainOptions,
    build_learner,
    default_learner,
    model_of,
    table_steps,
    target_map,
)
from ocolearn.run import run

_PREFIX = "learner__"


def as_learner(learner, task: str = "binary") -> Learner:
    """A learner object from a registered name (with its defaults) or a learner itself; None is
    ``train``'s default learner for ``task`` (``pipeline.default_learner``: a classifier's binary
    learner, AdaGrad on the logistic loss, run one-vs-rest for more classes; a regressor's
    OGD on the squared loss at rate 0.02)."""
    if isinstance(learner, Learner):
        return learner
    if learner is None:
        return build_learner(*default_learner(task))
    if isinstance(learner, str):
        return build_learner(learner)
    raise ValueError(f"learner must be a registered learner's name, a Learner or None, got {learner!r}")


def _flat_fields(part: Part, prefix: str) -> dict:
    """``{prefix + field: value}`` for every field of ``part``, and recursively for its parts."""
    out = {}
    for name in fields_of(type(part)):
        value = getattr(part, name)
        out[prefix + name] = value
        if isinstance(value, Part):
            out.update(_flat_fields(value, f"{prefix}{name}__"))
    return out


def _replace_field(part: Part, path: str, value) -> Part:
    """``part`` with the field at ``path`` (``"schedule__eta"``) set to ``value``; a part given
    by name (``"logistic"``) or as a table (``{"kind": "logistic"}``) is built as a config file's is."""
    head, _, rest = path.partition("__")
    if head not in fields_of(type(part)):
        raise ValueError(f"{type(part).__name__} has no field {head!r}; fields: {', '.join(fields_of(type(part)))}")
    if rest:
        value = _replace_field(getattr(part, head), rest, value)
    elif isinstance(value, str | dict) and isinstance(getattr(part, head), Part):
        family = typing.get_type_hints(type(part))[head]
        value = _build_part(family, value, head, "set_params")
    return part.replace(**{head: value})


def _scoring_learner(learner: Learner) -> Learner:
    """The learner whose loss scores one output: a one-vs-rest's base, a pipeline's learner."""
    inner = getattr(learner, "base", None) or getattr(learner, "learner", None)
    return _scoring_learner(inner) if isinstance(inner, Learner) else learner


def as_rows(X, dense=None):
    """Validated rows as the runner takes them (``containers.rows_of``): a float32 array, or
    padded ``Sparse`` rows for a sparse matrix not read dense."""
    out = rows_of(X, dense)
    return out if isinstance(out, Sparse) else np.asarray(out, np.float32)


def _is_int(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


class _Online(BaseEstimator):
    """What both estimators share: parameters, the runner, the model and its file."""

    _task = "binary"  # whose default learner ``learner=None`` is (``as_learner``)

    # An online learner's step on an example of weight 2 is not two steps on two copies of it
    # (nor on copies in another order): scikit-learn expects these two checks to fail for its
    # own SGDClassifier, SGDRegressor, Perceptron and PassiveAggressive estimators, with this reason.
    expected_failed_checks = dict.fromkeys(
        ["check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data"],
        "sample_weight is not equivalent to removing/repeating samples.",
    )

    def __init__(
        self,
        learner=None,
        *,
        fit_intercept=True,
        scale="auto",
        max_iter=1,
        random_state=None,
        average=False,
        warm_start=False,
        verbose=0,
    ):
        self.learner = learner
        self.fit_intercept = fit_intercept
        self.scale = scale
        self.max_iter = max_iter
        self.random_state = random_state
        self.average = average
        self.warm_start = warm_start
        self.verbose = verbose

    # -- parameters: the learner's fields, nested ---------------------------------------------

    def get_params(self, deep=True):
        params = super().get_params(deep=False)
        if deep:
            try:
                params.update(_flat_fields(as_learner(self.learner, self._task), _PREFIX))
            except ValueError:
                pass  # an invalid learner is reported by fit, not by get_params
        return params

    def set_params(self, **params):
        fields = {k[len(_PREFIX) :]: params.pop(k) for k in list(params) if k.startswith(_PREFIX)}
        super().set_params(**params)
        if fields:
            learner = as_learner(self.learner, self._task)
            for path, value in fields.items():
                learner = _replace_field(learner, path, value)
            self.learner = learner
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- data and runs --------------------------------------------------------------------

    def _rows(self, X, reset: bool):
        return as_rows(self._validated(X, reset=reset))

    def _validated(self, X, y="no_validation", *, reset: bool, **options):
        """scikit-learn's ``validate_data`` on rows in any container: a DataFrame's columns as
        numbers (``containers.matrix_of``; text, categorical or missing cells by a CSV file's rule,
        its ``Table`` fitted on ``reset`` and kept in ``table_spec_``, whose missing cells
        ``_compose`` imputes online), its column names checked as scikit-learn checks a DataFrame's
        (``feature_names_in_``)."""
        frame = X if is_frame(X) else None
        spec = None
        if frame is not None:
            X, spec = matrix_of(frame, None if reset else getattr(self, "table_spec_", None), fit=reset)
            if not reset:
                _check_feature_names(self, frame, reset=False)
        with warnings.catch_warnings():
            if frame is not None:  # (its names were checked above; the matrix has none)
                warnings.filterwarnings("ignore", "X does not have valid feature names")
            out = validate_data(self, X, y, reset=reset, accept_sparse="csr", dtype=(np.float64, np.float32), **options)
        if reset:
            self.table_spec_ = spec
            if frame is not None:
                _check_feature_names(self, frame, reset=True)
        return out

    def _train_rows(self, X, fresh: bool):
        """The rows a fit trains on: dense where ``containers.dense_enough``; a call that continues
        the state takes rows of the kind its first call took (``standardize`` needs dense rows)."""
        if fresh:
            self.dense_rows_ = dense_enough(X)
        return as_rows(X, self.dense_rows_)

    def _continues(self, partial: bool) -> bool:
        """Whether this call continues the state of the last one (``partial_fit`` after the
        first, ``fit`` with ``warm_start``); options are checked on a fresh start. A loaded model
        cannot be continued, as its file holds weights, not the learner's state."""
        if (partial or self.warm_start) and hasattr(self, "state_"):
            return True
        if partial and hasattr(self, "model_"):
            raise ValueError("a model loaded from a file holds weights, not the learner's state: call fit first")
        self._check_options()
        return False

    def _compose(self, learner: Learner, rows) -> Learner:
        """The learner behind the preprocessing every door uses (``pipeline.TrainOptions.steps``):
        ``scale`` (``"auto"``: online standardization of dense rows, normalize sparse ones), then
        with ``fit_intercept`` a constant feature, whose weight the learner's regularizer and
        projection leave alone (``pipeline.with_pipeline``)."""
        try:
            steps = self._options().steps(not isinstance(rows, Sparse))
        except ValueError as e:  # ConfigError: an unknown scale, or standardize with sparse rows
            raise ValueError(str(e)) from None
        return with_pipeline(learner, table_steps(getattr(self, "table_spec_", None)) + steps)

    def _options(self) -> TrainOptions:
        """The estimator's parameters as ``ocolearn train``'s options (``pipeline.TrainOptions``):
        the steps in front of the learner come from them as at every door."""
        return TrainOptions(
            intercept=bool(self.fit_intercept),
            scale=self.scale,
            passes=self.max_iter,
            seed=self.random_state if _is_int(self.random_state) else None,
            averaged=bool(self.average),
        )

    def _check_options(self):
        if not _is_int(self.max_iter) or self.max_iter < 1:
            raise ValueError(f"max_iter (passes over the data) must be a positive integer, got {self.max_iter!r}")
        if self.random_state is not None and not is_seed(self.random_state):
            # (JAX keeps a seed's low 32 bits: -1 would shuffle as 4294967295 does, 2^32 as 0)
            raise ValueError(
                f"random_state must be None (the rows' own order) or an integer 0..{MAX_SEED} (each pass shuffled), "
                f"got {self.random_state!r}"
            )

    def _sample_weight(self, y, sample_weight):
        """``sample_weight`` validated as scikit-learn does (None: all ones; negative numbers, or
        all zeros, an error), float64 ``(n,)``."""
        return _check_sample_weight(sample_weight, y, dtype=np.float64, ensure_non_negative=True)

    def _train(self, learner: Learner, rows, targets, weights, *, fresh: bool, passes: int, seed, fitting=True) -> None:
        """Run the learner over the rows ``passes`` times, from its initial state or the one
        carried (pass p shuffled by ``fold_in(seed, p)``, numbered across calls, so a warm-started
        ``fit`` continues the shuffles), and keep the model: the pipeline folded into one linear
        model of the raw features, as every door's model file holds it (``pipeline.model_of``)."""
        core = steps_of(learner)[1]
        if self.average and not hasattr(learner, "averaged"):
            raise ValueError(f"average=True, but {type(core).__name__} keeps no averaged weights")
        seed = None if seed is None else int(seed)
        state, first = (None, 0) if fresh else (self.state_, self.passes_run_)
        n = len(targets)
        try:  # the whole call's rounds (run() checks one call's; a warm start or verbose makes several)
            check_rounds(learner, state, n, passes)
        except ConfigError as e:  # ('passes' is max_iter, or partial_fit's one pass; FLH's limit is learner.levels)
            raise ValueError(
                str(e.named("max_iter" if fitting else "partial_fit") if e.key == "passes" else e)
            ) from None
        # All passes in one call (a loop inside one program: 100 passes over iris in 2 ms, where a
        # call per pass took 60); verbose makes a call per pass, to print each pass's line as it
        # ends. The same bits either way.
        at_once = 1 if self.verbose else passes
        for done in range(0, passes, at_once):
            options = dict(state=state, passes=at_once, first_pass=first + done, trace=False, weights=weights)
            result = run(learner, rows, targets, seed, **options)
            state = result.state
            if self.verbose:
                mistakes = f", {int(result.trace.mistakes)} mistakes" if is_classifier(self) else ""
                loss = float(result.trace.loss) / n
                print(f"-- Pass {first + done + 1}: {n} rounds, average loss {loss:.6g}{mistakes}", flush=True)
        settings = {
            **self._reading(),
            "estimator": {
                "class": type(self).__name__,
                "learner": as_learner(self.learner, self._task).to_config(),
                "fit_intercept": bool(self.fit_intercept),
                "scale": self.scale,
                "max_iter": int(self.max_iter),
                "random_state": seed,
                "average": bool(self.average),
                **({"feature_names": [str(n) for n in self.feature_names_in_]} if self._named() else {}),
            },
            **self._labels_settings(),
        }
        model = model_of(learner, state, self._labels(), self.n_features_in_, self.average, settings)
        if not np.all(np.isfinite(model.w)):
            raise ValueError(
                f"{type(core).__name__}'s weights are not finite after training: lower its rate, or scale the "
                "features (scale='standardize' or 'normalize')"
            )
        self.state_, self.learner_, self.passes_run_, self.n_iter_ = state, learner, first + passes, passes
        self._keep(model)

    def _reading(self) -> dict:
        """How the model file reads data: a DataFrame's columns by name, as a CSV file's (its
        ``Table``: text, categories and missing cells as ``ocolearn train`` reads them, so
        ``ocolearn predict`` reads a CSV file of those columns); other rows as a zero-based svmlight
        file's (column j of X is feature j)."""
        spec = getattr(self, "table_spec_", None)
        if spec is None and not self._named():
            return {"format": "svmlight", "zero_based": True, "bits": None}
        columns = spec.names if spec is not None else [str(name) for name in self.feature_names_in_]
        return {"format": "csv", "target": "", "columns": columns, "table": spec.settings() if spec else None}

    def _named(self) -> bool:
        return getattr(self, "feature_names_in_", None) is not None

    def _keep(self, model) -> None:
        """The model and scikit-learn's view of it: ``coef_`` and ``intercept_`` (``score = coef_ . x
        + intercept_``)."""
        self.model_ = model
        w, offset = np.asarray(model.w), -np.asarray(model.offset)
        if is_classifier(self) and w.ndim == 1:
            w, offset = w[None, :], np.reshape(offset, (1,))
        self.coef_, self.intercept_ = w, np.broadcast_to(offset, w.shape[:-1] if w.ndim == 2 else (1,)).copy()

    def _labels(self) -> list[str]:
        return []

    def _labels_settings(self) -> dict:
        return {"task": "regression"}

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self, "model_")
        return modelfile.scores(self.model_, self._rows(X, reset=False))

    # -- model files ----------------------------------------------------------------------

    def save(self, path) -> None:
        """Write the model file of ``ocolearn train`` (``ocolearn.modelfile.save``), atomically."""
        check_is_fitted(self, "model_")
        modelfile.save(self.model_, path)

    @classmethod
    def load(cls, path):
        """An estimator that predicts with the model file at ``path`` (written by ``save`` or by
        ``ocolearn train``); ``fit`` retrains it from scratch."""
        model = modelfile.load(path)
        regressor = issubclass(cls, RegressorMixin)
        if (model.task == "regression") != regressor:
            other = "OnlineClassifier" if regressor else "OnlineRegressor"
            raise ValueError(f"{path}: a {model.task} model; load it with {other}.load")
        options = model.settings.get("estimator", {})
        table = options.get("learner", model.settings["learner"])
        learner = with_intercept_field(
            _build_part(Learner, table, "learner", str(path)), False
        )  # fit_intercept sets it
        average = bool(options.get("average", model.settings.get("averaged", False)))
        steps = model.settings.get("pipeline", [])
        kinds = [step.get("kind") for step in steps]  # a file of any door
        unclipped = {"kind": "standardize", "clip": 0.0} in steps  # (--scale river)
        estimator = cls(
            learner,
            fit_intercept=options.get("fit_intercept", "intercept" in kinds),
            scale=options.get(
                "scale", "river" if unclipped else next((k for k in kinds if k in ("standardize", "normalize")), "none")
            ),
            max_iter=options.get("max_iter", options.get("passes", 1)),  # "passes", "seed": the earlier names
            random_state=options.get("random_state", options.get("seed")),
            average=average,
        )
        estimator.n_features_in_ = int(model.settings["dim"])
        if options.get("feature_names") is not None:  # (fitted on a DataFrame: its columns, in its order)
            estimator.feature_names_in_ = np.asarray(options["feature_names"], dtype=object)
        if model.settings.get("format") == "csv" and model.settings.get("table"):
            from ocolearn.data.csvfile import Table

            table = Table.of_settings(model.settings)
            estimator.table_spec_ = None if table.plain else table
        estimator._restore_labels(model)
        estimator._keep(model)
        return estimator

    def _restore_labels(self, model) -> None:
        pass


def _has_probability(estimator) -> bool:
    """Whether the learner's loss is the logistic loss, the one loss here whose score is a log-odds
    (scikit-learn's ``SGDClassifier`` has ``predict_proba`` for ``loss="log_loss"`` alone, and
    ``"modified_huber"``, which ocolearn has not); otherwise an ``AttributeError`` saying why."""
    try:
        loss = _scoring_learner(as_learner(estimator.learner, estimator._task)).loss
    except ValueError:
        return False
    if not isinstance(loss, Logistic):
        name = getattr(loss, "name", type(loss).__name__)
        raise AttributeError(
            f"probabilities need the logistic loss (learner__loss='logistic'); the learner's loss is {name!r}"
        )
    return True


class OnlineClassifier(ClassifierMixin, _Online):
    """A classifier trained online by an ocolearn learner (see the module docstring).

    ``decision_function`` is ``w . x`` (two classes: its sign picks ``classes_[1]``; K
    classes: ``(n, K)`` scores, the largest wins), computed from the model's weights exactly
    as ``ocolearn predict`` computes it. With the logistic loss, ``predict_proba`` is
    scikit-learn's ``SGDClassifier``'s: ``sigmoid(score)`` for two classes, and for K the K
    sigmoids normalized to sum to one (one-vs-rest).

    ``class_weight`` (None, ``{label: weight}``, or ``"balanced"``: ``n / (K * count(label))``,
    scikit-learn's ``compute_class_weight``) multiplies the ``sample_weight`` of each example,
    as in scikit-learn's SGD: with two classes, or a K-class learner, by its label's weight;
    one-vs-rest copy k by ``class_weight[k]`` on its positive examples and 1 on the others.
    """

    def __init__(
        self,
        learner=None,
        *,
        fit_intercept=True,
        scale="auto",
        max_iter=1,
        random_state=None,
        average=False,
        warm_start=False,
        verbose=0,
        class_weight=None,
    ):
        super().__init__(
            learner,
            fit_intercept=fit_intercept,
            scale=scale,
            max_iter=max_iter,
            random_state=random_state,
            average=average,
            warm_start=warm_start,
            verbose=verbose,
        )
        self.class_weight = class_weight

    def _for_classes(self, k: int) -> Learner:
        learner = as_learner(self.learner, self._task)
        if k == 2:
            return learner
        if "classes" in fields_of(type(learner)):
            return learner.replace(classes=k)
        return OneVsRest(learner, classes=k)

    def fit(self, X, y, sample_weight=None):
        """Run ``max_iter`` passes of the learner over ``(X, y)`` from its initial state (with
        ``warm_start``, from the state the last call left); ``sample_weight`` scales each example's
        step (``Learner.weighted_update``)."""
        warm = self._continues(partial=False)
        classes = self.classes_ if warm else None
        rows, indices = self._data(X, y, reset=not warm, classes=classes)
        learner = self.learner_ if warm else self._compose(self._for_classes(len(self.classes_)), rows)
        weights = self._round_weights(learner, indices, sample_weight, balanced_ok=True)
        targets = self._targets(learner, indices)
        self._train(learner, rows, targets, weights, fresh=not warm, passes=self.max_iter, seed=self.random_state)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over ``(X, y)`` in their order, continuing from the state left by the last
        ``fit`` or ``partial_fit``; ``classes`` (all the labels) is needed on the first call."""
        more = self._continues(partial=True)
        if not more and classes is None:
            raise ValueError("classes must be given on the first call to partial_fit (all the labels y can hold)")
        rows, indices = self._data(X, y, reset=not more, classes=None if more else classes)
        learner = self.learner_ if more else self._compose(self._for_classes(len(self.classes_)), rows)
        weights = self._round_weights(learner, indices, sample_weight, balanced_ok=False)
        self._train(
            learner, rows, self._targets(learner, indices), weights, fresh=not more, passes=1, seed=None, fitting=False
        )
        return self

    def _data(self, X, y, reset, classes):
        X, y = self._validated(X, y, reset=reset)
        check_classification_targets(y)
        if reset:
            self.classes_ = np.unique(y if classes is None else classes)
            if len(self.classes_) < 2:
                raise ValueError(f"a classifier needs at least two classes; y has one class: {self.classes_.tolist()}")
        unknown = np.setdiff1d(y, self.classes_)
        if unknown.size:
            raise ValueError(f"y holds labels not in classes_ {self.classes_.tolist()}: {unknown.tolist()}")
        return self._train_rows(X, fresh=reset), np.searchsorted(self.classes_, y).astype(np.int32)

    def _round_weights(self, learner, indices, sample_weight, *, balanced_ok):
        """Each round's weight, ``sample_weight`` times ``class_weight`` (see the class docstring):
        None when neither is given, so that the run is the unweighted one; ``(n, K)`` for
        one-vs-rest."""
        if sample_weight is None and self.class_weight is None:
            return None
        if self.class_weight == "balanced" and not balanced_ok:
            raise ValueError(
                "class_weight='balanced' needs all the labels at once, which partial_fit does not see; "
                "pass class_weight=dict(zip(classes, compute_class_weight('balanced', classes=classes, y=y)))"
            )
        weights = self._sample_weight(indices, sample_weight)
        labels = self.classes_[indices]
        per_class = compute_class_weight(self.class_weight, classes=self.classes_, y=labels)
        if isinstance(steps_of(learner)[1], OneVsRest):
            positive = indices[:, None] == np.arange(len(self.classes_))
            return weights[:, None] * np.where(positive, per_class[None, :], 1.0)
        return weights * per_class[indices]

    def _targets(self, learner, indices):
        return target_map(steps_of(learner)[1], range(len(self.classes_)))(indices)

    def _labels(self):
        return [str(c) for c in self.classes_]

    def _labels_settings(self):
        return {"task": "binary" if len(self.classes_) == 2 else "multiclass", "classes": self.classes_.tolist()}

    def _restore_labels(self, model):
        self.classes_ = np.asarray(model.settings.get("classes", model.labels))

    def decision_function(self, X):
        """``w . x`` for each row: ``(n,)`` with two classes, ``(n, K)`` with K."""
        return self._scores(X)

    def predict(self, X):
        s = self._scores(X)
        return self.classes_[(s > 0).astype(int) if s.ndim == 1 else np.argmax(s, axis=1)]

    @available_if(_has_probability)
    def predict_proba(self, X):
        """Class probabilities ``(n, K)`` in the order of ``classes_`` (the logistic loss only)."""
        return metrics.probabilities(self._scores(X))

    @available_if(_has_probability)
    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class OnlineRegressor(RegressorMixin, _Online):
    """A regressor trained online by an ocolearn learner with a regression loss; ``predict`` is
    ``coef_ . x + intercept_``. The default (``learner=None``), OGD on the squared loss at the
    constant rate 0.02 (river's ``LinearRegression``: ``SGD(0.01)`` on ``(p - y)^2``), takes steps
    proportional to the error, so that it fits targets of any scale alike (a rate-bounded learner
    such as AdaGrad moves the intercept by at most its ``eta`` a round, far too slowly for targets
    in the hundreds): one pass over scikit-learn's diabetes data gives river's held-out MSE
    (docs/choosing-a-learner.md)."""

    _task = "regression"

    def __init__(
        self,
        learner=None,
        *,
        fit_intercept=True,
        scale="auto",
        max_iter=1,
        random_state=None,
        average=False,
        warm_start=False,
        verbose=0,
    ):
        super().__init__(
            learner,
            fit_intercept=fit_intercept,
            scale=scale,
            max_iter=max_iter,
            random_state=random_state,
            average=average,
            warm_start=warm_start,
            verbose=verbose,
        )

    def _learner(self) -> Learner:
        learner = as_learner(self.learner, self._task)
        if getattr(learner, "classes", 0):
            raise ValueError(f"a regressor needs a single-output learner, got {type(learner).__name__} with classes")
        return learner

    def fit(self, X, y, sample_weight=None):
        """Run ``max_iter`` passes of the learner over ``(X, y)`` from its initial state (with
        ``warm_start``, from the state the last call left); ``sample_weight`` scales each example's
        step (``Learner.weighted_update``)."""
        warm = self._continues(partial=False)
        X, y = self._validated(X, y, y_numeric=True, reset=not warm)
        weights = None if sample_weight is None else self._sample_weight(y, sample_weight)
        rows, targets = self._train_rows(X, fresh=not warm), y.astype(np.float32)
        learner = self.learner_ if warm else self._compose(self._learner(), rows)
        self._train(learner, rows, targets, weights, fresh=not warm, passes=self.max_iter, seed=self.random_state)
        return self

    def partial_fit(self, X, y, sample_weight=None):
        """One pass over ``(X, y)`` in their order, continuing from the state left by the last
        ``fit`` or ``partial_fit``."""
        more = self._continues(partial=True)
        X, y = self._validated(X, y, y_numeric=True, reset=not more)
        weights = None if sample_weight is None else self._sample_weight(y, sample_weight)
        rows = self._train_rows(X, fresh=not more)
        learner = self.learner_ if more else self._compose(self._learner(), rows)
        self._train(learner, rows, y.astype(np.float32), weights, fresh=not more, passes=1, seed=None, fitting=False)
        return self

    def predict(self, X):
        return self._scores(X)


__all__ = ["OnlineClassifier", "OnlineRegressor", "as_learner", "csr_rows"]
