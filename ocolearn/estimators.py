"""scikit-learn estimators over any ocolearn learner: ``OnlineClassifier`` and ``OnlineRegressor``.

An estimator holds a learner (a registered name such as ``"pegasos"``, or a learner object)
and the runner's options: ``passes`` over the data, ``seed`` (None: the stored order; an int:
each pass shuffled, as ``ocolearn.run``), and ``average`` (predict with the learner's
averaged weights). ``fit`` runs the learner from its initial state; ``partial_fit`` runs one
pass over the given rows in their order, continuing from the state it left, so that
``partial_fit(A); partial_fit(B)`` equals ``fit`` on the rows of A then B with one pass, bit
for bit (sparse rows: when both are padded to the same width, as the sum over a row's padding
is then the same sum). Rows are NumPy arrays (dense features) or ``scipy.sparse`` matrices
(converted to padded ``Sparse`` rows in O(nnz), as wide as the longest row). The pass is
compiled once per shape of the rows (their number, and for sparse rows their width), so
``partial_fit`` on batches of one size compiles once. Training that leaves non-finite weights
is an error, not a model.

The learner's fields are parameters: ``get_params()`` lists them as ``learner__lam``,
``learner__schedule__eta``, ... and ``set_params(learner__lam=0.1)`` replaces them in the
learner (a name becomes the registered learner with its defaults first), so ``GridSearchCV``
can search over them.

A classifier with two classes trains a binary learner on labels -1/+1 (``classes_[1]`` is
+1); with K > 2, a learner with a ``classes`` field is made K-class, any other is run
one-vs-rest (``OneVsRest``). ``save``/``load`` write and read the model file of
``ocolearn train`` (``ocolearn.pipeline``), so a model trained here can be used by
``ocolearn predict`` and one trained there can predict here. A file holds the weights, not
the learner's state: a loaded estimator predicts and scores, ``fit`` trains afresh, and
``partial_fit`` cannot continue it (an error).

>>> import numpy as np
>>> X, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array(["a", "b"])
>>> OnlineClassifier("perceptron").fit(X, y).predict(X).tolist()
['a', 'b']
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ocolearn import modelfile
from ocolearn import pipeline as model_file
from ocolearn.config import _build_part
from ocolearn.data.arrays import Arrays, rows
from ocolearn.data.sparse_text import sparse_rows
from ocolearn.features import Sparse
from ocolearn.learners import Learner, OneVsRest
from ocolearn.parts import Part, fields_of
from ocolearn.run import run

_PREFIX = "learner__"


def as_learner(learner) -> Learner:
    """A learner object from a registered name (with its defaults) or a learner itself."""
    if isinstance(learner, Learner):
        return learner
    if isinstance(learner, str):
        return model_file.build_learner(learner)
    raise ValueError(f"learner must be a registered learner's name or a Learner, got {learner!r}")


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
    """``part`` with the field at ``path`` (``"schedule__eta"``) set to ``value``."""
    head, _, rest = path.partition("__")
    if head not in fields_of(type(part)):
        raise ValueError(f"{type(part).__name__} has no field {head!r}; fields: {', '.join(fields_of(type(part)))}")
    if rest:
        value = _replace_field(getattr(part, head), rest, value)
    return part.replace(**{head: value})


def csr_rows(X) -> Sparse:
    """The rows of a ``scipy.sparse`` matrix as padded ``Sparse`` rows (width: the longest row),
    read as the data path reads in-memory arrays (``ocolearn.data.arrays``; O(nnz), repeated
    entries summed, values checked against float32's range)."""
    data = Arrays(X)
    return sparse_rows(rows(data, 0, data.X.shape[0]), data.X.shape[1], data, shift=0)


def as_rows(X):
    """Validated rows as the runner takes them: padded ``Sparse`` rows or a float32 array."""
    return csr_rows(X) if scipy.sparse.issparse(X) else np.asarray(X, np.float32)


class _Online(BaseEstimator):
    """What both estimators share: parameters, the runner, the model and its file."""

    def __init__(self, learner="perceptron", *, passes=1, seed=None, average=False):
        self.learner = learner
        self.passes = passes
        self.seed = seed
        self.average = average

    # -- parameters: the learner's fields, nested ---------------------------------------------

    def get_params(self, deep=True):
        params = super().get_params(deep=False)
        if deep:
            try:
                params.update(_flat_fields(as_learner(self.learner), _PREFIX))
            except ValueError:
                pass  # an invalid learner is reported by fit, not by get_params
        return params

    def set_params(self, **params):
        fields = {k[len(_PREFIX) :]: params.pop(k) for k in list(params) if k.startswith(_PREFIX)}
        super().set_params(**params)
        if fields:
            learner = as_learner(self.learner)
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
        return as_rows(validate_data(self, X, accept_sparse="csr", dtype=(np.float64, np.float32), reset=reset))

    def _start_partial(self) -> bool:
        """Whether this ``partial_fit`` is the first (options checked); a loaded model cannot
        be continued, as its file holds weights, not the learner's state."""
        if hasattr(self, "state_"):
            return False
        if hasattr(self, "model_"):
            raise ValueError("a model loaded from a file holds weights, not the learner's state: call fit first")
        self._check_options()
        return True

    def _check_options(self):
        if not isinstance(self.passes, int | np.integer) or self.passes < 1:
            raise ValueError(f"passes must be a positive integer, got {self.passes!r}")
        if self.seed is not None and not isinstance(self.seed, int | np.integer):
            raise ValueError(f"seed must be None or an integer, got {self.seed!r}")

    def _train(self, learner: Learner, rows, targets, *, fresh: bool, passes: int, seed) -> None:
        """Run the learner over the rows, from its initial state or the one carried, and keep
        the model of the state (``ocolearn.pipeline.model_of``)."""
        if self.average and not hasattr(learner, "averaged"):
            raise ValueError(f"average=True, but {type(learner).__name__} keeps no averaged weights")
        seed = None if seed is None else int(seed)
        state = run(
            learner, rows, targets, seed, state=None if fresh else self.state_, passes=passes, trace=False
        ).state
        settings = {
            "format": "svmlight",  # column j of X is feature j of a zero-based svmlight file
            "zero_based": True,
            "bits": None,
            "estimator": {
                "class": type(self).__name__,
                "learner": as_learner(self.learner).to_config(),
                "passes": int(self.passes),
                "seed": seed,
                "average": bool(self.average),
            },
            **self._labels_settings(),
        }
        model = model_file.model_of(learner, state, self._labels(), self.n_features_in_, self.average, settings)
        if not np.all(np.isfinite(model.w)):
            raise ValueError(f"{type(learner).__name__}'s weights are not finite after training: lower its rate")
        self.state_, self.learner_, self.model_ = state, learner, model

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
        options = model.settings.get("estimator", {})
        table = options.get("learner", model.settings["learner"])
        learner = _build_part(Learner, table, "learner", str(path))
        average = bool(options.get("average", model.settings.get("averaged", False)))
        estimator = cls(learner, passes=options.get("passes", 1), seed=options.get("seed"), average=average)
        estimator.model_, estimator.n_features_in_ = model, int(model.settings["dim"])
        estimator._restore_labels(model)
        return estimator

    def _restore_labels(self, model) -> None:
        pass


class OnlineClassifier(ClassifierMixin, _Online):
    """A classifier trained online by an ocolearn learner (see the module docstring).

    ``decision_function`` is ``w . x`` (two classes: its sign picks ``classes_[1]``; K
    classes: ``(n, K)`` scores, the largest wins), computed from the model's weights exactly
    as ``ocolearn predict`` computes it.
    """

    expected_failed_checks = {}

    def _for_classes(self, k: int) -> Learner:
        learner = as_learner(self.learner)
        if k == 2:
            return learner
        if "classes" in fields_of(type(learner)):
            return learner.replace(classes=k)
        return OneVsRest(learner, classes=k)

    def fit(self, X, y):
        """Run ``passes`` passes of the learner over ``(X, y)`` from its initial state."""
        self._check_options()
        rows, targets = self._data(X, y, reset=True, classes=None)
        learner = self._for_classes(len(self.classes_))
        self._train(learner, rows, self._targets(learner, targets), fresh=True, passes=self.passes, seed=self.seed)
        return self

    def partial_fit(self, X, y, classes=None):
        """One pass over ``(X, y)`` in their order, continuing from the state left by the last
        ``fit`` or ``partial_fit``; ``classes`` (all the labels) is needed on the first call."""
        first = self._start_partial()
        if first:
            if classes is None:
                raise ValueError("classes must be given on the first call to partial_fit (all the labels y can hold)")
        rows, targets = self._data(X, y, reset=first, classes=classes if first else None)
        learner = self._for_classes(len(self.classes_)) if first else self.learner_
        self._train(learner, rows, self._targets(learner, targets), fresh=first, passes=1, seed=None)
        return self

    def _data(self, X, y, reset, classes):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=(np.float64, np.float32), reset=reset)
        check_classification_targets(y)
        if classes is not None or reset:
            self.classes_ = np.unique(y if classes is None else classes)
            if len(self.classes_) < 2:
                raise ValueError(f"a classifier needs at least two classes; y has one class: {self.classes_.tolist()}")
        unknown = np.setdiff1d(y, self.classes_)
        if unknown.size:
            raise ValueError(f"y holds labels not in classes_ {self.classes_.tolist()}: {unknown.tolist()}")
        return as_rows(X), np.searchsorted(self.classes_, y).astype(np.int32)

    def _targets(self, learner, indices):
        return model_file.target_map(learner, range(len(self.classes_)))(indices)

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


class OnlineRegressor(RegressorMixin, _Online):
    """A regressor trained online by an ocolearn learner with a regression loss; ``predict`` is
    ``w . x``. The default, diagonal AdaGrad on the squared loss, moves each weight by at most
    ``eta`` a round whatever the scale of the features, so it does not diverge on unscaled
    data as a fixed-rate OGD can."""

    expected_failed_checks = {}

    def __init__(self, learner="adagrad", *, passes=1, seed=None, average=False):
        super().__init__(learner, passes=passes, seed=seed, average=average)

    def _learner(self) -> Learner:
        learner = as_learner(self.learner)
        if getattr(learner, "classes", 0):
            raise ValueError(f"a regressor needs a single-output learner, got {type(learner).__name__} with classes")
        return learner

    def fit(self, X, y):
        """Run ``passes`` passes of the learner over ``(X, y)`` from its initial state."""
        self._check_options()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=(np.float64, np.float32), y_numeric=True)
        self._train(self._learner(), as_rows(X), y.astype(np.float32), fresh=True, passes=self.passes, seed=self.seed)
        return self

    def partial_fit(self, X, y):
        """One pass over ``(X, y)`` in their order, continuing from the state left by the last
        ``fit`` or ``partial_fit``."""
        first = self._start_partial()
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=(np.float64, np.float32), y_numeric=True, reset=first
        )
        learner = self._learner() if first else self.learner_
        self._train(learner, as_rows(X), y.astype(np.float32), fresh=first, passes=1, seed=None)
        return self

    def predict(self, X):
        return self._scores(X)


__all__ = ["OnlineClassifier", "OnlineRegressor", "as_learner", "csr_rows"]
