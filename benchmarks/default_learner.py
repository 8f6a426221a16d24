"""Which learner to start with: candidates with their defaults on six data sets, beside river.

    python benchmarks/default_learner.py [--only NAME ...]
    python benchmarks/default_learner.py --registry [--record PATH]

The data sets are those of issue 38: scikit-learn's wine, breast_cancer, digits and diabetes and
river's Phishing and TrumpApproval (shipped inside the packages), split 75/25 with
``train_test_split(random_state=0)``. Each candidate runs one pass over the training rows in
their order behind the default pipeline (``preprocess.default_steps``: online standardization
and an intercept; one-vs-rest for more than two classes where the learner is binary), and is
scored twice: progressively (each row predicted before it is learned, the first pass) and on the
held-out quarter. The reference is river's ``StandardScaler() | LogisticRegression()``
(``OneVsRestClassifier`` for multiclass) or ``StandardScaler() | LinearRegression()`` with their
defaults, progressive figures from ``evaluate.progressive_val_score`` on the same order; and the
constant predictor (the majority class, the mean of the training targets). Figures: accuracy for
classifiers, MSE for regressors. Prints one table per task.

``--registry``: every registered learner with its defaults (one-vs-rest where it is binary and
the task has more classes), the held-out figure against the constant's, written to
benchmarks/records/default_learner.json (committed; ``tests/test_defaults.py`` asks every
learner that loses to the constant somewhere to say in its docstring why it needs tuning).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import ocolearn  # noqa: F401  (first: XLA's CPU flags)
from ocolearn.io import write_json
from ocolearn.learners import OneVsRest
from ocolearn.metrics import accuracy, mse
from ocolearn.modelfile import classes_of, scores
from ocolearn.pipeline import build_learner, model_of, target_map, with_pipeline
from ocolearn.preprocess import default_steps
from ocolearn.run import run

DATASETS = ("wine", "breast_cancer", "digits", "diabetes", "Phishing", "TrumpApproval")

CLASSIFIERS = {  # (name, --set overrides)
    "ogd logistic 0.1/sqrt(t)": ("ogd", ["loss=logistic"]),
    "ogd logistic 0.5/sqrt(t)": ("ogd", ["loss=logistic", "schedule.eta=0.5"]),
    "ogd logistic constant 0.01 (river's)": ("ogd", ["loss=logistic", "schedule.kind=constant", "schedule.eta=0.01"]),
    "adagrad logistic 0.1": ("adagrad", ["loss=logistic"]),
    "adagrad logistic 0.5": ("adagrad", ["loss=logistic", "eta=0.5"]),
    "cocob logistic": ("cocob", ["loss=logistic"]),
    "ftrl_proximal": ("ftrl_proximal", []),
    "perceptron": ("perceptron", []),
    "passive_aggressive": ("passive_aggressive", []),
}
REGRESSORS = {
    "ogd squared 0.1/sqrt(t)": ("ogd", []),
    "ogd squared 0.5/sqrt(t)": ("ogd", ["schedule.eta=0.5"]),
    "ogd squared constant 0.02 (river's)": ("ogd", ["schedule.kind=constant", "schedule.eta=0.02"]),
    "adagrad squared 0.1": ("adagrad", []),
    "adagrad squared 1.0": ("adagrad", ["eta=1.0"]),
    "cocob squared": ("cocob", []),
    "nag squared": ("nag", []),
    "passive_aggressive epsilon_insensitive": ("passive_aggressive", ["loss=epsilon_insensitive"]),
}


def load(name: str):
    """``(X, y, task)`` of a data set: float64 rows, class indices (or numbers for regression)."""
    if name[0].islower():
        from sklearn import datasets

        data = getattr(datasets, f"load_{name}")()
        return data.data.astype(np.float64), data.target, "regression" if name == "diabetes" else "classification"
    from river import datasets

    rows = list(getattr(datasets, name)())
    keys = list(rows[0][0])
    X = np.array([[x[k] for k in keys] for x, _ in rows], np.float64)
    y = np.array([target for _, target in rows])
    if name == "Phishing":
        return X, y.astype(np.int64), "classification"
    return X, y.astype(np.float64), "regression"


def split(name: str):
    """``(X_train, X_test, y_train, y_test, task)``: 75/25, ``random_state=0``."""
    from sklearn.model_selection import train_test_split

    X, y, task = load(name)
    return (*train_test_split(X, y, test_size=0.25, random_state=0), task)


def learner_for(name: str, overrides, classes: int):
    """The registered learner with ``overrides``, made K-class (its ``classes`` field, else
    one-vs-rest) for more than two classes; ``classes`` 0: regression."""
    learner = build_learner(name, overrides, max(classes, 2), "multiclass" if classes > 2 else "")
    if classes > 2 and not getattr(learner, "classes", 0):
        learner = OneVsRest(learner, classes=classes)
    return learner


def ours(learner, X_train, X_test, y_train, y_test, task):
    """``(progressive figure, held-out figure)`` of ``learner`` behind the default pipeline: one
    pass over the training rows in their order."""
    labels = [] if task == "regression" else [str(c) for c in range(int(max(y_train.max(), y_test.max())) + 1)]
    learner = with_pipeline(learner, default_steps(dense=True))
    targets = target_map("regression" if task == "regression" else learner, labels)(y_train)
    result = run(learner, X_train.astype(np.float32), targets)
    model = model_of(learner, result.state, labels, X_train.shape[1], settings={"task": _task(labels)})
    predicted, held = np.asarray(result.trace.prediction, np.float64), scores(model, X_test)
    if task == "regression":
        return mse(predicted, y_train), mse(held, y_test)
    return accuracy(classes_of(predicted), y_train), accuracy(classes_of(held), y_test)


def _task(labels):
    return "regression" if not labels else "binary" if len(labels) == 2 else "multiclass"


def river_reference(X_train, X_test, y_train, y_test, task):
    """``(progressive figure, held-out figure)`` of river's logistic or linear regression with
    their defaults behind ``StandardScaler``."""
    from river import compose, evaluate, linear_model, metrics, multiclass, preprocessing

    def row(x):
        return {f"x{j}": float(v) for j, v in enumerate(x)}

    if task == "regression":
        model, metric, cast = linear_model.LinearRegression(), metrics.MSE(), float
    else:
        binary = len(np.unique(np.concatenate([y_train, y_test]))) == 2
        model, metric, cast = linear_model.LogisticRegression(), metrics.Accuracy(), int
        model = model if binary else multiclass.OneVsRestClassifier(model)
    model = compose.Pipeline(preprocessing.StandardScaler(), model)
    stream = [(row(x), cast(t)) for x, t in zip(X_train, y_train, strict=True)]
    progressive = evaluate.progressive_val_score(stream, model, metric).get()
    predicted = np.array([model.predict_one(row(x)) for x in X_test], np.float64)
    held = mse(predicted, y_test) if task == "regression" else accuracy(predicted.astype(int), y_test)
    return progressive, held


def constant(X_train, X_test, y_train, y_test, task):
    """``(progressive figure, held-out figure)`` of the constant predictor: the running mean (or
    majority) of the targets before each row, then the training rows' mean (or majority)."""
    if task == "regression":
        running = np.concatenate([[0.0], np.cumsum(y_train)[:-1] / np.arange(1, len(y_train))])
        return mse(running, y_train), mse(np.full(len(y_test), y_train.mean()), y_test)
    counts = np.zeros(int(y_train.max()) + 1)
    guesses = []
    for t in y_train:
        guesses.append(int(np.argmax(counts)))
        counts[t] += 1
    return accuracy(np.array(guesses), y_train), accuracy(np.full(len(y_test), np.argmax(counts)), y_test)


def registry_learners():
    """``(name, learner class)`` of every registered learner a door can build from its name."""
    from ocolearn.learners import Learner

    return [(name, cls) for name, cls in sorted(Learner.registry.items()) if getattr(cls, "from_files", True)]


def defaults_against_constant(name: str, data) -> tuple[float, float] | None:
    """``(held-out figure of the learner's defaults, the constant's)`` on one split, or None
    where the learner cannot learn the task (a classifier on real-valued targets; a learner
    with a required setting, optax)."""
    from ocolearn.data import DataError
    from ocolearn.parts import ConfigError
    from ocolearn.pipeline import check_learner

    X_train, X_test, y_train, y_test, task = data
    classes = 0 if task == "regression" else int(max(y_train.max(), y_test.max())) + 1
    try:
        learner = learner_for(name, [], classes)
        labels = [str(c) for c in range(classes)]
        check_learner(learner, "regression" if task == "regression" else _task(labels), labels)
    except (ConfigError, DataError):
        return None
    return ours(learner, *data)[1], constant(*data)[1]


RECORD = Path(__file__).resolve().parent / "records" / "default_learner.json"


def registry_record(names) -> dict:
    """Every registered learner's held-out figure with its defaults on each data set (None where
    it cannot learn the task), and the constant predictor's: the record ``tests/test_defaults.py``
    holds the learners' docstrings to."""
    data = {n: split(n) for n in names}
    record = {"datasets": {n: data[n][-1] for n in names}, "constant": {n: constant(*data[n])[1] for n in names}}
    record["learners"] = {}
    for name, _ in registry_learners():
        got = {n: defaults_against_constant(name, data[n]) for n in names}
        record["learners"][name] = {n: None if v is None else v[0] for n, v in got.items()}
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=DATASETS, help="data sets to run")
    parser.add_argument(
        "--registry", action="store_true", help="every registered learner's defaults against the constant"
    )
    parser.add_argument("--record", default=RECORD, help=f"with --registry, the record to write (default {RECORD})")
    args = parser.parse_args(argv)
    if args.registry:
        record = registry_record(args.only)
        write_json(args.record, record)
        print("| learner | " + " | ".join(args.only) + " |\n|---|" + "---|" * len(args.only))
        print("| constant | " + " | ".join(f"{record['constant'][n]:.4g}" for n in args.only) + " |")
        for name, figures in record["learners"].items():
            cells = []
            for n, figure in figures.items():
                task, base = record["datasets"][n], record["constant"][n]
                cells.append(
                    "-" if figure is None else f"{figure:.4g}" + ("" if beats(figure, base, task) else " (loses)")
                )
            print(f"| {name} | " + " | ".join(cells) + " |")
        return
    for task, candidates in (("classification", CLASSIFIERS), ("regression", REGRESSORS)):
        names = [n for n in args.only if split(n)[-1] == task]
        if not names:
            continue
        figure = "MSE" if task == "regression" else "accuracy"
        print(f"\n{task}: progressive / held-out {figure}, one pass")
        print("| learner | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        data = {n: split(n) for n in names}
        rows = {"river (reference)": river_reference, "constant": constant}
        for label, fn in rows.items():
            print(f"| {label} | " + " | ".join(_pair(*fn(*data[n])) for n in names) + " |", flush=True)
        for label, (name, overrides) in candidates.items():
            cells = []
            for n in names:
                X_train, _, y_train, y_test, _ = data[n]
                classes = 0 if task == "regression" else int(max(y_train.max(), y_test.max())) + 1
                cells.append(_pair(*ours(learner_for(name, overrides, classes), *data[n])))
            print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def beats(figure, constant_figure, task) -> bool:
    """Whether a held-out figure beats the constant's: a lower MSE, a higher accuracy."""
    return figure < constant_figure if task == "regression" else figure > constant_figure


def _pair(progressive, held):
    return f"{progressive:.4g} / {held:.4g}"


if __name__ == "__main__":
    main()
