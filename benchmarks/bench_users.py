"""What users wait for: ``ocolearn train`` end to end (process start to exit, loading counted) from
a CSV file, the same rows as svmlight and as VW text, and a folder of documents; a 200-row
``train`` and ``test`` against a bare ``python -c "import jax.numpy"``; the peak memory of each;
side by side in the same run with Vowpal Wabbit, scikit-learn (pandas' ``read_csv``) and river.

    python benchmarks/bench_users.py [--rows 300000] [--repeats 3] [--polarity-data FOLDER]
                                     [--scratch benchmarks/scratch] [--out benchmarks/records]
                                     [--before FOLDER]

The data: ``--rows`` rows of 20 features drawn from N(0, 1), written ``%.6g``, labels -1/1 from a
hidden linear rule: one CSV file (header ``x0..x19,y``), its svmlight twin and its VW twin (the same
number text), made once into the scratch folder; the folder of documents is ``--polarity-data``
(a folder with one folder of text files per label, as the README's review polarity data
``txt_sentoken``), by default ``../shared/data/review_polarity/txt_sentoken`` next to the
checkout if it is there, else 2 x 900 synthetic documents of 700 words (made once). Each
command runs in a process of its own, timed from its start to its exit; its peak memory is the
child's ``ru_maxrss`` (``os.wait4``). Repeats alternate between the commands after one untimed
round (which fills numba's and JAX's on-disk caches, as any earlier use would); the tables take
the best of the repeats, and the record keeps every repeat. The runs:

- ocolearn: ``train --learner pegasos --set lam=1e-4 --passes 1`` on the CSV file
  (``--format csv --target y``), the svmlight file, the VW file (``--format vw``, where this
  ocolearn has that format; otherwise the row is left out with a note), and the README's
  polarity command on the folder (Pegasos, lambda 0.1, 10 passes, ``--scale normalize``);
  ``train`` and ``test`` on the first 200 rows of the CSV file; ``python -c "import jax.numpy"``;
- Vowpal Wabbit (its Python package's ``Workspace``, one pass: ``-d FILE.vw --loss_function hinge``);
- scikit-learn: pandas ``read_csv`` then ``SGDClassifier(loss="hinge")`` for one epoch; on the
  folder, ``HashingVectorizer`` + TF-IDF + ``SGDClassifier`` (5 epochs), reading the files;
- river: ``stream.iter_csv`` into ``LogisticRegression`` with the hinge loss, one pass;
- with ``--before FOLDER`` (a checkout of an earlier ocolearn, e.g. ``git worktree add FOLDER
  REV``; its commit is recorded), that ocolearn's polarity command, run from its folder in the
  same run: the ratio says how much faster this ocolearn is.

Writes ``OUT/users_cpu.json``; ``benchmarks/tables.py``'s ``users_table`` writes its table into docs/benchmarks.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

import numpy as np
from common import ROOT, SCRATCH, Record, alternate, options

D, LAM, SMALL = 20, 1e-4, 200
VW_TEXT = "ocolearn train, VW text"
POLARITY = ROOT.parent / "shared" / "data" / "review_polarity" / "txt_sentoken"
PEGASOS = ["--learner", "pegasos", "--set", f"lam={LAM}", "--passes", "1", "--quiet"]
POLARITY_TRAIN = ["--learner", "pegasos", "--set", "lam=0.1", "--scale", "normalize", "--no-intercept"]
POLARITY_TRAIN += ["--passes", "10", "--quiet", "--format", "text"]


def write_data(folder: Path, rows: int, seed: int = 0, block: int = 100_000) -> dict[str, Path]:
    """The CSV file, its svmlight and VW twins and the CSV file's first 200 rows, made once
    (a file is written under a temporary name and renamed when complete)."""
    paths = {kind: folder / f"users_{rows}.{kind}" for kind in ("csv", "svm", "vw")}
    paths["small"] = folder / f"users_{rows}_first{SMALL}.csv"
    if all(p.exists() for p in paths.values()):
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(D)
    formats = {
        "csv": ",".join(["%.6g"] * D) + ",%d\n",
        "svm": "%d " + " ".join(f"{j + 1}:%.6g" for j in range(D)) + "\n",
        "vw": "%d |f " + " ".join(f"{j + 1}:%.6g" for j in range(D)) + "\n",
    }
    files = {kind: open(paths[kind].with_suffix(".tmp" + kind), "w") for kind in formats}  # noqa: SIM115
    files["csv"].write(",".join(f"x{j}" for j in range(D)) + ",y\n")
    for start in range(0, rows, block):
        X = rng.standard_normal((min(block, rows - start), D))
        y = np.where(X @ w > 0, 1, -1)
        for r, label in zip(X.tolist(), y.tolist(), strict=True):
            files["csv"].write(formats["csv"] % (*r, label))
            files["svm"].write(formats["svm"] % (label, *r))
            files["vw"].write(formats["vw"] % (label, *r))
    for kind, f in files.items():
        f.close()
        Path(f.name).replace(paths[kind])
    with open(paths["csv"]) as f:
        head = [next(f) for _ in range(SMALL + 1)]
    paths["small"].write_text("".join(head))
    return paths


def write_documents(folder: Path, per_label: int = 900, words: int = 700, seed: int = 0) -> Path:
    """Synthetic documents (made once): ``pos/`` and ``neg/``, ``per_label`` files each of
    ``words`` words from a 5,000-word vocabulary whose frequencies differ a little by label."""
    if folder.exists():
        return folder
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{k}" for k in range(5000)])
    base = rng.dirichlet(np.ones(vocabulary.size))
    tmp = folder.with_name(folder.name + ".tmp")
    for label in ("pos", "neg"):
        p = base * np.exp(rng.normal(0, 0.3, vocabulary.size))
        p /= p.sum()
        (tmp / label).mkdir(parents=True, exist_ok=True)
        for k in range(per_label):
            (tmp / label / f"d{k}.txt").write_text(" ".join(rng.choice(vocabulary, words, p=p)))
    tmp.replace(folder)
    return folder


def ocolearn(*args, before: Path | None = None) -> list[str]:
    """``ocolearn ARGS`` of this checkout, or of the checkout ``before`` (run from its folder:
    ``python -m`` imports the package of the folder it starts in)."""
    command = [sys.executable, "-m", "ocolearn", *map(str, args)]
    return command if before is None else ["/bin/sh", "-c", 'cd "$0" && exec "$@"', str(before), *command]


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def vw_code(path) -> str:
    return (
        "import vowpalwabbit\n"
        f"ws = vowpalwabbit.Workspace({f'-d {path} --loss_function hinge --quiet'!r})\n"
        "ws.run_parser(); ws.finish()"
    )


def sklearn_code(path) -> str:
    return (
        "import warnings, pandas\n"
        "from sklearn.linear_model import SGDClassifier\n"
        f"table = pandas.read_csv({str(path)!r})\n"
        "warnings.simplefilter('ignore')\n"
        f"SGDClassifier(loss='hinge', alpha={LAM}, max_iter=1, tol=None, shuffle=False)"
        ".fit(table.drop(columns='y').to_numpy(), table['y'].to_numpy())"
    )


def river_code(path) -> str:
    return (
        "from river import linear_model, optim, stream\n"
        "model = linear_model.LogisticRegression(loss=optim.losses.Hinge())\n"
        f"for x, y in stream.iter_csv({str(path)!r}, target='y', converters={{'y': int}}):\n"
        "    model.learn_one({k: float(v) for k, v in x.items()}, y == 1)"
    )


def sklearn_text_code(folder) -> str:
    return (
        "from sklearn.datasets import load_files\n"
        "from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer\n"
        "from sklearn.linear_model import SGDClassifier\n"
        f"data = load_files({str(folder)!r}, encoding='utf-8', decode_error='replace')\n"
        "X = TfidfTransformer().fit_transform(HashingVectorizer(n_features=2**18, alternate_sign=False)"
        ".transform(data.data))\n"
        "SGDClassifier(loss='hinge', max_iter=5, tol=None).fit(X, data.target)"
    )


WRAPPER = """import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
seconds = time.perf_counter() - start
print(json.dumps([done.returncode, seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))
sys.stderr.write(done.stderr.decode(errors="replace"))
"""


def timed(argv, peaks: list) -> float:
    """Wall seconds of one process from its start to its exit (returned, so ``alternate``
    records it); its peak resident memory in MB (``ru_maxrss``) is appended to ``peaks``. A small
    Python process starts it and measures both, so that the child's memory does not count this
    process's (Linux keeps a forked child's ``ru_maxrss`` from before its ``exec``)."""
    done = subprocess.run([sys.executable, "-c", WRAPPER, *map(str, argv)], cwd=ROOT, capture_output=True, text=True)
    status, seconds, peak = json.loads(done.stdout.strip().splitlines()[-1])
    if status:
        raise SystemExit(f"benchmarks: error: {' '.join(map(str, argv))} failed:\n{done.stderr}")
    peaks.append(peak)
    return seconds


def shown(argv, scratch) -> str:
    """A run's command as the record keeps it: no path of this machine (the checkout's files
    relative to it, its neighbours as ``../``, the temporary folder as ``TMP``, this Python as
    ``python``)."""
    text = " ".join(map(str, argv))
    for path, name in [(scratch, "TMP"), (sys.executable, "python"), (f"{ROOT}/", ""), (f"{ROOT.parent}/", "../")]:
        text = text.replace(str(path), name)
    return text


def commands(paths: dict, documents: Path, tmp: Path, before=None) -> tuple[dict[str, list[str]], list[str]]:
    """The runs (name: argv) and notes on runs left out; ``before``: a checkout of an earlier
    ocolearn whose polarity command runs beside this one's."""
    from ocolearn.data.stream import READERS

    rows = {
        "ocolearn train, CSV": ocolearn("train", *PEGASOS, paths["csv"], "--format", "csv", "--target", "y"),
        "ocolearn train, svmlight": ocolearn("train", *PEGASOS, paths["svm"], "--labels=-1,1"),
    }
    notes = []
    if "vw" in READERS:
        rows[VW_TEXT] = ocolearn("train", *PEGASOS, paths["vw"], "--format", "vw")
    else:
        notes.append("ocolearn train, VW text: left out (this ocolearn has no --format vw)")
    for k, name in enumerate(rows):
        rows[name] += ["--model", tmp / f"{k}.npz"]
    small_model = tmp / "small.npz"
    rows |= {
        "Vowpal Wabbit, VW text": python(vw_code(paths["vw"])),
        "scikit-learn, pandas read_csv + SGDClassifier": python(sklearn_code(paths["csv"])),
        "river, iter_csv + LogisticRegression (hinge)": python(river_code(paths["csv"])),
        "ocolearn train, text folder (README's polarity command)": ocolearn(
            "train", *POLARITY_TRAIN, documents, "--model", tmp / "text.npz"
        ),
        "scikit-learn, text folder (HashingVectorizer + TF-IDF + SGDClassifier)": python(sklearn_text_code(documents)),
        f"ocolearn train, {SMALL}-row CSV": ocolearn(
            "train", *PEGASOS, paths["small"], "--format", "csv", "--target", "y", "--model", small_model
        ),
        f"ocolearn test, {SMALL}-row CSV": ocolearn("test", small_model, paths["small"]),
        'python -c "import jax.numpy"': python("import jax.numpy"),
    }
    if before is not None:
        rows[BEFORE_TEXT] = ocolearn("train", *POLARITY_TRAIN, documents, "--model", tmp / "before.npz", before=before)
    return rows, notes


BEFORE_TEXT = "earlier ocolearn (--before) train, text folder (the polarity command)"
# (numerator, denominator, what the ratio is): best of the repeats over best of the repeats
RATIOS = [
    (
        BEFORE_TEXT,
        "ocolearn train, text folder (README's polarity command)",
        "text folder: earlier ocolearn over this one (issue 39: at least 5)",
    ),
    ("ocolearn train, CSV", "ocolearn train, svmlight", "CSV against svmlight (issue 39: at most 1.3)"),
    (VW_TEXT, "ocolearn train, svmlight", "VW text against svmlight"),
    ("ocolearn train, CSV", "Vowpal Wabbit, VW text", "CSV against Vowpal Wabbit"),
    ("ocolearn train, CSV", "scikit-learn, pandas read_csv + SGDClassifier", "CSV against pandas + scikit-learn"),
    ("ocolearn train, CSV", "river, iter_csv + LogisticRegression (hinge)", "CSV against river"),
    (
        "ocolearn train, text folder (README's polarity command)",
        "scikit-learn, text folder (HashingVectorizer + TF-IDF + SGDClassifier)",
        "text folder against scikit-learn",
    ),
    (f"ocolearn train, {SMALL}-row CSV", 'python -c "import jax.numpy"', "200-row train against import (at most 1.5)"),
    (f"ocolearn test, {SMALL}-row CSV", 'python -c "import jax.numpy"', "200-row test against import"),
]


def main() -> None:
    parser = options(__doc__)
    parser.set_defaults(repeats=3)
    parser.add_argument("--rows", type=int, default=300_000, help="rows of the CSV file (default 300000)")
    parser.add_argument("--scratch", type=Path, default=SCRATCH, help="folder of the generated data")
    parser.add_argument("--polarity-data", type=Path, help="a folder of text files per label (default: see above)")
    parser.add_argument(
        "--before", type=Path, help="a checkout of an earlier ocolearn whose polarity command to time beside this one's"
    )
    args = parser.parse_args()
    before = args.before.resolve() if args.before else None
    commit = ["git", "-C", str(before), "rev-parse", "HEAD"] if before else None
    paths = write_data(args.scratch, args.rows)
    documents = args.polarity_data or (POLARITY if POLARITY.is_dir() else write_documents(args.scratch / "users_docs"))
    earlier = {"before": subprocess.run(commit, capture_output=True, text=True).stdout.strip()} if before else {}
    record = Record("users", args.out, args.repeats, rows=args.rows, d=D, documents=documents.name, **earlier)
    peaks: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        runs, notes = commands(paths, documents, Path(folder), before)
        for name, argv in list(runs.items()):  # the untimed round (``alternate``'s warm-up, run here)
            peaks[name] = []
            try:
                timed(argv, peaks[name])
            except SystemExit as e:
                if name != VW_TEXT:  # (a format another branch adds: its failure is a note, not the end)
                    raise
                notes.append(f"{name}: left out, it failed ({str(e).strip().splitlines()[-1]})")
                del runs[name]
        runs_of = {name: partial(timed, argv, peaks[name]) for name, argv in runs.items()}
        times = alternate(runs_of, args.repeats, warmup=False)
    results = [
        {"name": name, "seconds": t, "peak_mb": peaks[name][-len(t) :], "command": shown(runs[name][1:], folder)}
        for name, t in times.items()
    ]
    best = {name: min(t) for name, t in times.items()}
    ratios = [
        {"of": a, "to": b, "what": what, "ratio": best[a] / best[b]} for a, b, what in RATIOS if a in best and b in best
    ]
    for r in results:
        print(f"{r['name']:80s} best {min(r['seconds']):7.2f} s  peak {max(r['peak_mb']):7.0f} MB")
    for r in ratios:
        print(f"{r['what']:50s} {r['ratio']:.2f}")
    record.save(results=results, ratios=ratios, notes=notes)


if __name__ == "__main__":
    main()
