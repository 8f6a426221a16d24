"""The ``ocolearn`` command.

    ocolearn run CONFIG [--out DIR] [--set key=value ...]

writes the run's metrics, trace, resolved config and figures into DIR (default
``runs/NAME``) and prints the metrics. Errors in the config or the data are printed as one
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


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ocolearn", description="Online convex optimization experiments on JAX.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run an experiment file and write its metrics, trace and figures")
    r.add_argument("config", help="experiment file (TOML), e.g. configs/iris_ridge_magic.toml")
    r.add_argument("--out", help="output folder (default: runs/NAME)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    r.set_defaults(func=_run)
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
