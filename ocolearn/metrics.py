"""Each metric's formula, once: what ``test`` prints, ``train``'s progressive figures and studies.

Scores are a model's ``w . x - offset``: ``(n,)`` for a binary model (class 1 where positive),
``(n, K)`` for K classes; targets are class indices (numbers, for regression). Where the scores
are probabilities (a learner on the logistic loss, ``has_probabilities``), ``probabilities``
turns them into class probabilities as scikit-learn's ``SGDClassifier`` does (and
``ocolearn.estimators.OnlineClassifier.predict_proba``): ``sigmoid(score)`` for two classes, the
K sigmoids normalized to sum to one for K (one-vs-rest).
"""

from __future__ import annotations

import numpy as np


def formatted(value: float) -> str:
    """A metric as ``test`` prints it: six decimals, or ``%.6g`` where those would mislead (an MSE
    of 1e77 printed as 78 digits, or 3e-9 as 0.000000)."""
    return f"{value:.6f}" if value == 0 or 1e-4 <= abs(value) < 1e6 or value != value else f"{value:.6g}"


def mse(predicted, target) -> float:
    """Mean squared error, ``mean((p - y)^2)``, river's ``MSE`` and scikit-learn's."""
    return float(np.mean(np.square(np.asarray(predicted, np.float64) - np.asarray(target, np.float64))))


def mae(predicted, target) -> float:
    """Mean absolute error, ``mean(|p - y|)``."""
    return float(np.mean(np.abs(np.asarray(predicted, np.float64) - np.asarray(target, np.float64))))


def accuracy(predicted, target) -> float:
    """The fraction of rows whose predicted class is their class."""
    return float(np.mean(np.asarray(predicted) == np.asarray(target)))


def error_rate(predicted, target) -> float:
    """``1 - accuracy``: the fraction of rows whose predicted class is not theirs."""
    return 1.0 - accuracy(predicted, target)


def has_probabilities(learner) -> bool:
    """Whether a learner's scores are log-odds, so that ``probabilities`` are its class
    probabilities: its loss (one-vs-rest: its base's; a pipeline: its learner's) is the logistic
    loss. ``learner`` is a learner or its config table (a model file's ``settings["learner"]``)."""
    get = dict.get if isinstance(learner, dict) else getattr
    inner = get(learner, "learner", None) or get(learner, "base", None)
    if inner is not None and not isinstance(inner, str):
        return has_probabilities(inner)
    loss = get(learner, "loss", None)
    return (loss.get("kind") if isinstance(loss, dict) else getattr(loss, "name", None)) == "logistic"


def probabilities(scores) -> np.ndarray:
    """Class probabilities ``(n, K)`` from log-odds scores: ``sigmoid(s)`` for two classes (the
    columns ``1 - p, p``), the K sigmoids normalized to sum to one for K (one-vs-rest), as
    scikit-learn's ``SGDClassifier.predict_proba``."""
    s = np.asarray(scores, np.float64)
    p = 0.5 * (1.0 + np.tanh(0.5 * s))  # sigmoid, without overflow
    if p.ndim == 1:
        return np.stack([1.0 - p, p], axis=1)
    return p / p.sum(axis=1, keepdims=True)


def log_losses(scores, target, xp=np):
    """Each row's log loss ``-log p(y)`` of the ``probabilities`` of its scores, computed from the
    scores without rounding a probability to 0: two classes (scores ``(...,)``, targets -1/+1):
    ``log(1 + exp(-y s))``; K classes (scores ``(..., K)``, targets class indices):
    ``log sum_k sigmoid(s_k) - log sigmoid(s_y)``. ``xp`` is NumPy or ``jax.numpy``: the runner
    sums these terms round by round inside its program."""
    scores = xp.asarray(scores)
    if scores.ndim == xp.ndim(target):
        return xp.logaddexp(0.0, -target * scores)
    log_sigmoid = -xp.logaddexp(0.0, -scores)
    top = xp.max(log_sigmoid, axis=-1)
    total = top + xp.log(xp.sum(xp.exp(log_sigmoid - top[..., None]), axis=-1))
    own = xp.take_along_axis(log_sigmoid, xp.asarray(target)[..., None].astype(int), axis=-1)[..., 0]
    return total - own


def log_loss(scores, target) -> float:
    """Mean log loss (natural log, scikit-learn's ``log_loss``) of log-odds ``scores`` against
    class indices ``target`` (see ``log_losses``)."""
    s, y = np.asarray(scores, np.float64), np.asarray(target)
    return float(np.mean(log_losses(s, 2.0 * y - 1.0 if s.ndim == 1 else y)))


def auc(scores, target) -> float:
    """Area under the ROC curve: two classes, the probability that a row of class 1 scores above
    one of class 0 (ties count a half; the Mann-Whitney statistic, scikit-learn's
    ``roc_auc_score``); K classes, the mean over the classes of each class's AUC against the rest
    on the ``probabilities`` (one-vs-rest macro, ``roc_auc_score(multi_class="ovr")``). NaN where
    a class has no rows or every row is of it."""
    from scipy.stats import rankdata

    s, y = np.asarray(scores, np.float64), np.asarray(target)
    if s.ndim == 2:
        p = probabilities(s)
        return float(np.mean([auc(p[:, k], y == k) for k in range(s.shape[1])]))
    positive = y.astype(bool)
    n1, n0 = int(positive.sum()), int((~positive).sum())
    if not (n1 and n0):
        return float("nan")
    ranks = rankdata(s)
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))
