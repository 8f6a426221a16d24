"""The ``ocolearn`` command.

    ocolearn run CONFIG [--out DIR] [--set key=value ...]
    ocolearn sweep CONFIG [--out DIR] [--set key=value ...] [--chunk-size C]

    ocolearn train --learner NAME [--set key=value ...] DATA --model MODEL [--passes N] [--stop-early]
                   [--chunk-rows R] [--checkpoint PATH --checkpoint-every N] [--resume] [--quiet] [--skip-bad]
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
import os
import sys
from pathlib import Path

import ocolearn  # noqa: F401  (first: sets XLA's CPU flags before JAX starts)
from ocolearn import provenance, tracking
from ocolearn.config import ConfigError, load
from ocolearn.data import DataError

TRACKED_CURVES = ("loss", "squared_error", "cumulative_average_loss", "regret", "regret_bound")  # --track
TRACKED_TRAINING = ("mistakes_per_pass", "average_loss", "rounds", "skipped_lines")  # --track


def _run(args) -> int:
    experiment = load(args.config, args.set)
    out = args.out or f"runs/{experiment.name}"
    from ocolearn.experiment import run_experiment

    tracker = tracking.start(args.track, experiment.name, "run")
    metrics, curves = run_experiment(experiment, out)
    series = {k: v for k, v in curves.items() if k in TRACKED_CURVES}
    tracker.log(params=experiment.to_config(), metrics=metrics, series=series, folder=out)
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

    tracker = tracking.start(args.track, experiment.name, "sweep")
    table, best = run_sweep(experiment, out, chunk_size=args.chunk_size)
    per_seed = {k: v for k, v in table.items() if k != "seed"}
    tracker.log(
        params=experiment.to_config(), metrics=best, table=per_seed, table_params=list(best["values"]), folder=out
    )
    print(json.dumps(best, indent=2))
    print(f"wrote {out}/", file=sys.stderr)
    return 0


def _train(args) -> int:
    from ocolearn import model as models
    from ocolearn.streaming import Progress

    models.build_learner(args.learner, args.set)  # a mistyped learner fails before any reading
    tracker = tracking.start(args.track, "train", args.learner)
    if args.checkpoint_every and not args.checkpoint:
        raise DataError("--checkpoint-every needs --checkpoint PATH")
    if args.format == "text":
        data = models.read_data(args.data, args.format, bits=args.bits)
        learner = models.build_learner(args.learner, args.set, len(data.labels))
        trained = models.train(
            learner,
            data,
            passes=args.passes,
            seed=args.seed,
            averaged=args.average,
            stop_early=args.stop_early,
            settings={"format": args.format, "bits": args.bits or models.DEFAULT_BITS},
        )
    else:
        trained = models.train_file(
            args.learner,
            args.set,
            args.data,
            args.format,
            bits=args.bits,
            dim=args.dim,
            labels=args.labels.split(",") if args.labels else None,
            zero_based=args.zero_based,
            skip_bad=args.skip_bad,
            chunk_rows=args.chunk_rows,
            passes=args.passes,
            seed=args.seed,
            averaged=args.average,
            stop_early=args.stop_early,
            checkpoint=args.checkpoint,
            checkpoint_every=args.checkpoint_every,
            resume=args.resume,
            progress=Progress(quiet=args.quiet),
            target=args.target,
        )
    trained = trained._replace(settings={**trained.settings, "provenance": provenance.record()})
    models.save(trained, args.model)
    options = {k: v for k, v in vars(args).items() if k != "func"}
    metrics = {k: v for k, v in trained.settings.items() if k in TRACKED_TRAINING}
    tracker.log(params={**options, "learner": trained.settings["learner"]}, metrics=metrics, files=[args.model])
    mistakes = trained.settings["mistakes_per_pass"]
    skipped = trained.settings.get("skipped_lines", 0)
    print(
        f"trained {args.learner} x {len(mistakes)} passes; mistakes per pass: {' '.join(map(str, mistakes))}"
        + (f"; skipped {skipped} malformed lines" if skipped else "")
        + f"; wrote {args.model}",
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
        choices=["svmlight", "mira", "csv", "text"],
        default="svmlight",
        help="text: DATA is a folder with one folder of text files per label (bag of words); "
        "csv: a header line, labels in the --target column, every other column a feature",
    )
    t.add_argument("--target", default="", help="csv: the column of labels")
    t.add_argument(
        "--bits", type=int, help="hash MIRA features and words (default 18), or svmlight indices, into 2^bits buckets"
    )
    t.add_argument("--dim", type=int, help="svmlight: the number of features (default: found by a first pass)")
    t.add_argument("--labels", help="the labels, comma-separated, in class order (default: found by a first pass)")
    t.add_argument("--zero-based", action="store_true", help="svmlight indices start at 0 (default 1)")
    t.add_argument("--skip-bad", action="store_true", help="skip and count malformed lines instead of stopping")
    t.add_argument("--chunk-rows", type=int, default=65536, help="rows per chunk (memory is a few chunks)")
    t.add_argument("--checkpoint", help="checkpoint file (.npz), written atomically")
    t.add_argument("--checkpoint-every", type=int, default=0, metavar="N", help="checkpoint every N rows")
    t.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    t.add_argument("--quiet", action="store_true", help="no progress line")
    t.set_defaults(func=_train)
    for command in (r, s, t):
        command.add_argument("--track", choices=["mlflow"], help="log to MLflow (MLFLOW_TRACKING_URI, else ./mlruns)")
    for name, func, text in (
        ("predict", _predict, "print one predicted label per line"),
        ("test", _test, "print the error rate"),
    ):
        q = sub.add_parser(name, help=text)
        q.add_argument("model")
        q.add_argument("data")
        q.set_defaults(func=func)
    return p


def _compilation_cache() -> None:
    """Keep compiled programs on disk between runs (JAX's persistent cache), so a command run
    again on data of the same shapes starts without compiling. ``OCOLEARN_CACHE`` names the
    folder (default ``~/.cache/ocolearn/xla``); ``OCOLEARN_CACHE=0`` turns it off."""
    folder = os.environ.get("OCOLEARN_CACHE", str(Path.home() / ".cache" / "ocolearn" / "xla"))
    if folder == "0":
        return
    import jax

    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.1)


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    _compilation_cache()
    try:
        return args.func(args)
    except (ConfigError, DataError) as e:
        print(f"ocolearn: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
