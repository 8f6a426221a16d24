"""The ``ocolearn`` command.

    ocolearn run CONFIG [--out DIR] [--set key=value ...]
    ocolearn sweep CONFIG [--out DIR] [--set key=value ...] [--chunk-size C]

    ocolearn train --learner NAME [--set key=value ...] DATA --model MODEL [--passes N] [--stop-early]
    ocolearn predict MODEL DATA        (one label per line)
    ocolearn test MODEL DATA           (prints the error rate)

``run`` writes the run's metrics, trace, resolved config and figures into DIR (default
``runs/NAME``) and prints the metrics; ``sweep`` runs the config's ``[sweep]`` as one compiled
program and writes its table, best configuration and figures. Errors in the config or the data are printed as one
line naming the file and key, with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

import ocolearn  # noqa: F401  (first: sets XLA's CPU flags before JAX starts)
from ocolearn.config import ConfigError, load
from ocolearn.data import DataError


def _run(args) -> int:
    experiment = load(args.config, args.set)
    out = args.out or f"runs/{experiment.name}"
    from ocolearn.experiment import run_experiment

    metrics, _ = run_experiment(experiment, out)
    shown = {k: v for k, v in metrics.items() if k != "definitions" and not k.endswith("_w")}
    print(json.dumps(shown, indent=2))
    print(f"wrote {out}/", file=sys.stderr)
    return 0


def _sweep(args) -> int:
    experiment = load(args.config, args.set)
    if experiment.sweep is None:
        raise ConfigError(f"{experiment.source}: no [sweep] table to sweep")
    out = args.out or f"runs/{experiment.name}_sweep"
    from ocolearn.experiment import run_sweep

    _, best = run_sweep(experiment, out, chunk_size=args.chunk_size)
    print(json.dumps(best, indent=2))
    print(f"wrote {out}/", file=sys.stderr)
    return 0


def _train(args) -> int:
    from ocolearn import model as models

    models.build_learner(args.learner, args.set)  # a mistyped learner fails before any reading
    data = models.read_data(args.data, args.format, bits=args.bits)
    learner = models.build_learner(args.learner, args.set, len(data.labels))
    settings = {"format": args.format, "bits": args.bits}
    trained = models.train(
        learner,
        data,
        passes=args.passes,
        seed=args.seed,
        averaged=args.average,
        stop_early=args.stop_early,
        settings=settings,
    )
    models.save(trained, args.model)
    mistakes = trained.settings["mistakes_per_pass"]
    print(
        f"trained {args.learner} on {len(data.y)} examples x {len(mistakes)} passes; mistakes per pass: "
        f"{' '.join(map(str, mistakes))}; wrote {args.model}",
        file=sys.stderr,
    )
    return 0


def _predict(args) -> int:
    from ocolearn import model as models

    trained = models.load(args.model)
    print("\n".join(models.predict(trained, models.data_for(trained, args.data).X)))
    return 0


def _test(args) -> int:
    from ocolearn import model as models

    trained = models.load(args.model)
    print(f"{models.error_rate(trained, models.data_for(trained, args.data)):.6f}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ocolearn", description="Online convex optimization experiments on JAX.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run an experiment file and write its metrics, trace and figures")
    r.add_argument("config", help="experiment file (TOML), e.g. configs/iris_ridge_magic.toml")
    r.add_argument("--out", help="output folder (default: runs/NAME)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    r.set_defaults(func=_run)
    s = sub.add_parser("sweep", help="run a config's [sweep] in one compiled program; write the table and the best")
    s.add_argument("config", help="experiment file (TOML) with a [sweep] table, e.g. configs/iris_sweep.toml")
    s.add_argument("--out", help="output folder (default: runs/NAME_sweep)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    s.add_argument("--chunk-size", type=int, help="configurations per compiled chunk (default: by memory)")
    s.set_defaults(func=_sweep)
    t = sub.add_parser("train", help="train a classifier on an svmlight, MIRA-format or text data set; save the model")
    t.add_argument(
        "--learner", required=True, help="a learner's name: perceptron, passive_aggressive, mira, pegasos, ..."
    )
    t.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a field of the learner")
    t.add_argument("data", help="training data")
    t.add_argument("--model", required=True, help="model file to write (.npz)")
    t.add_argument("--passes", type=int, default=1)
    t.add_argument("--seed", type=int, help="shuffle each pass with this seed")
    t.add_argument("--stop-early", action="store_true", help="stop after a pass without mistakes")
    t.add_argument("--average", action="store_true", help="save the averaged weights (perceptron, mira, ocp_svm)")
    t.add_argument(
        "--format",
        choices=["svmlight", "mira", "text"],
        default="svmlight",
        help="text: DATA is a folder with one folder of text files per label (bag of words)",
    )
    t.add_argument("--bits", type=int, default=18, help="hash MIRA-format features and words into 2^bits buckets")
    t.set_defaults(func=_train)
    for name, func, text in (
        ("predict", _predict, "print one predicted label per line"),
        ("test", _test, "print the error rate"),
    ):
        q = sub.add_parser(name, help=text)
        q.add_argument("model")
        q.add_argument("data")
        q.set_defaults(func=func)
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, DataError) as e:
        print(f"ocolearn: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
