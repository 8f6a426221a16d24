"""The documented experiment and speed numbers equal the committed records.

Cheap: it reads the pages the generators write (docs/experiments.md, docs/benchmarks.md and
README.md's headline numbers) and the JSON records (experiments/records/, benchmarks/records/) and
renders the marked blocks again; it reruns no experiment and no benchmark.
"""

import json
import re
import statistics
from pathlib import Path

import pytest
from conftest import script_module

ROOT = Path(__file__).resolve().parent.parent


reproduce = script_module(ROOT / "experiments" / "reproduce.py")
tables = script_module(ROOT / "benchmarks" / "tables.py")
PAGES = {path: path.read_text() for path in {*reproduce.TARGETS, *tables.TARGETS}}


def blocks(text, kind):
    """{name: content} of each ``<!-- KIND:NAME -->`` block."""
    return dict(re.findall(rf"<!-- {kind}:([\w-]+) -->(.*?)<!-- /{kind}:\1 -->", text, re.S))


def documented(kind):
    """{name: (page, content)} of each ``KIND`` block on the pages the generators write."""
    return {name: (path, content) for path, text in PAGES.items() for name, content in blocks(text, kind).items()}


def test_every_experiment_has_a_record_and_a_readme_block():
    scripts = {p.stem for p in (ROOT / "experiments").glob("*.py")} - {"reproduce"}
    studies = {name for name in reproduce.STUDIES if (ROOT / "configs" / f"{name}.toml").exists()}
    assert studies == reproduce.STUDIES  # `ocolearn study configs/NAME.toml`
    assert scripts | studies == set(reproduce.EXPERIMENTS)
    for name in scripts | studies:
        record = json.loads((ROOT / "experiments" / "records" / f"{name}.json").read_text())
        assert record, name
    assert set(documented("exp")) == set(reproduce.BLOCKS)


def test_documented_experiment_numbers_equal_the_records():
    assert reproduce.main(["--check"]) == 0
    for name, (_, content) in documented("exp").items():
        made = reproduce.BLOCKS[name]()
        # a block on lines of its own is wrapped; one inside a sentence is written as it is
        assert content.strip() == (tables.wrap(made) if content.startswith("\n") else made), name


def test_polarity_numbers_come_from_its_record():
    """Spot check by parsing: the documented error at the configured lambda is the record's mean over orders."""
    record = json.loads((ROOT / "experiments" / "records" / "polarity_pegasos.json").read_text())
    text = documented("exp")["polarity"][1]
    lam = f"{record['confidence']['lambda']:g}"
    at = float(re.search(rf"([\d.]+)% at lambda = {re.escape(lam)} ", text).group(1))
    assert at == pytest.approx(100 * record["validation_error"][lam][0], abs=0.005)


def test_documented_speed_numbers_equal_the_records():
    assert tables.main(["--check"]) == 0
    assert set(documented("bench")) == set(tables.BLOCKS)


def test_the_readme_keeps_the_headline_numbers():
    assert "headline" in blocks((ROOT / "README.md").read_text(), "bench")


@pytest.mark.parametrize(
    ("kind", "name"),
    [(kind, name) for kind in ("exp", "bench") for name, (_, c) in documented(kind).items() if re.search(r"\d", c)],
)
def test_the_check_fails_on_a_changed_number(kind, name):
    """A page whose numbers were edited by hand (one digit changed, in any block) no longer passes."""
    path, content = documented(kind)[name]
    text = PAGES[path]
    digit = re.search(r"\d", content)
    changed = content[: digit.start()] + str((int(digit.group()) + 1) % 10) + content[digit.end() :]
    edited = text.replace(f"<!-- {kind}:{name} -->{content}", f"<!-- {kind}:{name} -->{changed}", 1)
    assert edited != text
    fill = reproduce.fill if kind == "exp" else (lambda text: tables.fill(text, tables.BLOCKS))
    assert fill(edited) != edited
    assert fill(text) == text


def test_every_block_must_stand_on_a_page(tmp_path):
    """A block the pages lost is an error naming it, not a table silently left unwritten."""
    page = tmp_path / "page.md"
    page.write_text("<!-- bench:ogd -->\n<!-- /bench:ogd -->\n")
    with pytest.raises(SystemExit, match="sweep"):
        tables.write([page], tables.BLOCKS, "bench", check=True)


def test_stream_table_shows_predict_and_test_and_a_run_without_vw(monkeypatch):
    """A stream record with ``predict`` and ``test`` runs shows their rows/s and peak memory next to
    train's; one made with ``--only ocolearn`` renders and says the targets need every run."""
    record = json.loads((ROOT / "benchmarks" / "records" / "stream_cpu.json").read_text())
    train = record["results"][0]
    n = len(train["seconds"])
    extra = [
        {
            "name": "ocolearn predict (streamed, to a file)",
            "rows": 4_000_000,
            "seconds": [40.0] * n,
            "peak_mb": [600.0],
        },
        {"name": "ocolearn test (streamed, error rate)", "rows": 4_000_000, "seconds": [50.0] * n, "peak_mb": [300.0]},
    ]
    record["results"] = [train, *extra, *record["results"][1:]]
    monkeypatch.setattr(tables, "load", lambda name, device="cpu": record)
    table = tables.stream_table()
    assert "| ocolearn predict (streamed, to a file) | 4,000,000 | 40.0 | 100 k |  | 600 MB |" in table
    assert "| ocolearn test (streamed, error rate) | 4,000,000 | 50.0 | 80 k |  | 300 MB |" in table
    assert "all three count parsing the text" in table
    train_peak = sorted(train["peak_mb"])[len(train["peak_mb"]) // 2]
    assert f"`predict` {600 / train_peak:.2f}x and `test` {300 / train_peak:.2f}x" in tables.stream_targets()

    mark = {"date": "2026-01-02T00:00:00Z", "command": "python benchmarks/bench_stream.py", "ocolearn": "abc"}
    kept = [r if r["name"].startswith("ocolearn") else {**r, "earlier": mark} for r in record["results"]]
    record["results"] = kept  # as ``--only ocolearn --keep-earlier`` saves them
    vw = next(r for r in kept if r["name"].startswith("Vowpal Wabbit, defaults"))
    ratio = (train["rows"] / statistics.median(train["seconds"])) / (vw["rows"] / statistics.median(vw["seconds"]))
    assert f"| Vowpal Wabbit, defaults, text (earlier run, 2026-01-02) | {vw['rows']:,} |" in tables.stream_table()
    assert f"{ratio:.2f}x (medians only)" in tables.stream_table()
    assert f"ocolearn is {ratio:.2f}x its speed: the target is" in tables.stream_targets()

    record["results"] = [r for r in record["results"] if r["name"].startswith("ocolearn")]
    assert "Vowpal" not in tables.stream_table().split("|---|")[-1]
    assert "need every run" in tables.stream_targets()


def test_users_table_shows_the_best_repeat_every_repeat_peak_memory_and_the_ratios(monkeypatch):
    record = json.loads((ROOT / "benchmarks" / "records" / "startup_cpu.json").read_text())  # (its machine)
    record |= {"params": {"rows": 1000, "d": 20, "documents": "synthetic"}, "notes": ["a row left out"]}
    record["command"] = "python benchmarks/bench_users.py --rows 1000 --scratch /tmp/x --out /tmp/y"
    record["results"] = [
        {"name": "ocolearn train, CSV", "seconds": [3.0, 2.5, 2.75], "peak_mb": [300.0, 310.0, 305.0]},
        {"name": "ocolearn train, svmlight", "seconds": [2.0, 2.25, 2.5], "peak_mb": [290.0, 280.0, 285.0]},
    ]
    record["ratios"] = [{"of": "a", "to": "b", "what": "CSV against svmlight", "ratio": 2.5 / 2.0}]
    monkeypatch.setattr(tables, "load", lambda name, device="cpu": record)
    table = tables.users_table()
    assert "| ocolearn train, CSV | 2.50 (3.00, 2.50, 2.75) | 310 |" in table
    assert "| ocolearn train, svmlight | 2.00 (2.00, 2.25, 2.50) | 290 |" in table
    assert "| CSV against svmlight | 1.25 |" in table and table.endswith("a row left out.")
    assert "1,000 rows x 20 features" in table and "--scratch FOLDER" in table
