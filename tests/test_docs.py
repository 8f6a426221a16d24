"""The documentation site (docs/): its reference names everything public, its examples run.

Fast: the reference pages' sources and generators against ``ocolearn.__all__``, the learner
registry, the argument parser and the config checker; every Python block of a page is a doctest
(pytest runs those: ``--doctest-glob=*.md``). Slow (CI runs them): each page's console blocks run
in a temporary folder, and ``sphinx-build -W`` builds the site.
"""

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ocolearn
import ocolearn.pipeline  # noqa: F401  (registers the learner "pipeline")
from ocolearn import config, study
from ocolearn.cli import parser
from ocolearn.learners import Learner
from ocolearn.parts import ConfigError

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import ocolearn_docs  # noqa: E402


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.relative_to(DOCS).parts)


FENCE = re.compile(r"^(`{3,})(.*)\n((?:.*\n)*?)\1[ \t]*$", re.MULTILINE)


def fenced(text: str) -> list[tuple[str, str, int]]:
    """Each fenced block of a Markdown page: (info string, content, line of the opening fence)."""
    return [(m[2].strip(), m[3], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def reference_text() -> str:
    return "\n".join(p.read_text() for p in sorted((DOCS / "reference").glob("*.md")))


def test_api_reference_documents_every_public_name():
    targets = re.findall(r"^\.\. auto(?:class|function|data|exception):: (\S+)$", reference_text(), re.MULTILINE)
    documented = {t.removeprefix("ocolearn.") for t in targets}
    assert set(ocolearn.__all__) - documented == set()


def test_learners_reference_documents_every_registered_learner():
    text = (DOCS / "reference" / "learners.md").read_text()
    for kind, cls in Learner.registry.items():
        if not cls.__module__.startswith("ocolearn."):  # (one a page's doctest defined, in this process)
            continue
        section = text.split(f"## `{kind}`\n", 1)[1].split("\n## ", 1)[0]  # (IndexError: no section)
        assert f".. autoclass:: {cls.__name__}\n" in section or f"{{py:class}}`ocolearn.{cls.__name__}`" in section, (
            kind
        )


def test_cli_reference_names_every_subcommand_and_option():
    text = "\n".join(ocolearn_docs.cli_lines(parser()))
    programs = dict(re.findall(r"^\.\. program:: (.+)\n((?:(?!\.\. program::).*\n?)*)", text, re.MULTILINE))
    (subcommands,) = (a for a in parser()._actions if a.choices and a.dest == "command")
    assert set(programs) == {"ocolearn", *(f"ocolearn {name}" for name in subcommands.choices)}
    for name, sub in subcommands.choices.items():
        signatures = re.findall(r"^\.\. option:: (.+)$", programs[f"ocolearn {name}"], re.MULTILINE)
        flags = {flag.split()[0] for signature in signatures for flag in signature.split(", ")}
        listed = re.findall(r"^  (-.*?)(?:  |$)", sub.format_help(), re.MULTILINE)  # `ocolearn NAME --help`
        shown = {flag.split()[0] for entry in listed for flag in entry.split(", ")} - {"-h", "--help"}
        assert shown and shown <= flags, name
        positionals = {a.dest for a in sub._actions if not a.option_strings}
        assert positionals <= flags, name
    train = programs["ocolearn train"]
    assert ".. option:: --learner LEARNER\n\n   a learner's name: ogd, adagrad, perceptron," in train
    assert ".. option:: --passes PASSES\n\n   Default ``1``." in train


def test_config_reference_lists_the_keys_the_checker_accepts():
    text = "\n".join(ocolearn_docs.config_lines())
    for table, cls in [("data", config.DataSpec), ("learner", Learner.registry["ogd"])]:
        raw = {"name": "x", "data": {"target": "Species"}, "learner": {"kind": "ogd"}}
        raw[table] = {**raw[table], "no_such_key": 1}
        with pytest.raises(ConfigError) as error:  # the checker's own list of valid keys ...
            config.from_dict(raw)
        keys = ["kind", *config.keys_of(cls)] if table == "learner" else list(config.keys_of(cls))
        assert str(error.value).endswith("valid keys: " + ", ".join(keys))
    for name in config.TOP + study.TOP:  # ... is the list the page shows
        assert f"``{name}``" in text
    for cls in (config.DataSpec, config.PipelineSpec, config.RunSpec, config.SweepSpec, study.EvaluateSpec):
        section = text.split(f"[{'evaluate' if cls is study.EvaluateSpec else cls.__name__[:-4].lower()}]\n~")[1]
        for key in config.keys_of(cls):
            assert f"* - ``{key}``" in section.split("\n~~~")[0], (cls.__name__, key)
    for kind, cls in Learner.registry.items():
        if getattr(cls, "from_files", True):
            row = text.split(f"* - ``{kind}``\n", 1)[1].split("\n   * - ", 1)[0]
            assert all(f"``{key}`` = " in row for key in config.keys_of(cls)), kind


def test_records_reference_lists_every_committed_record():
    text = "\n".join(ocolearn_docs.records_lines())
    for folder in ("experiments/records", "benchmarks/records"):
        for path in (ROOT / folder).glob("*.json"):
            assert f"``{folder}/{path.name}``" in text


def test_every_python_example_is_a_doctest():
    """A Python block runs (pytest's --doctest-glob) only as `>>>` lines; doctest would read a
    closing fence right after the output as more expected output."""
    for page in [*pages(), ROOT / "README.md"]:
        for info, content, line in fenced(page.read_text()):
            language = info.removeprefix("{code-block}").removeprefix("{code}").strip().split(" ")[0]
            if language in ("python", "py", "python3", "pycon", "ipython"):
                where = f"{page.relative_to(ROOT)}:{line}"
                assert content.lstrip().startswith(">>>"), f"{where}: a Python example that is not a doctest"
                assert content.endswith("\n\n"), f"{where}: a doctest needs a blank line before its closing fence"


def console_blocks(text: str) -> list[tuple[int, list[tuple[str, str]]]]:
    """The ``{code-block} console`` blocks to run: (line, [(command, expected output), ...])."""
    blocks = []
    for info, content, line in fenced(text):
        if info.split() != ["{code-block}", "console"]:
            continue
        options = re.findall(r"^:(\w[\w-]*):(.*)$", content, re.MULTILINE)
        if any(name == "class" and "no-test" in value.split() for name, value in options):
            continue
        body = re.sub(r"^(?::\w[\w-]*:.*\n)+", "", content)
        steps: list[tuple[str, str]] = []
        for row in re.sub(r"\s*\\\n\s*", " ", body).splitlines():
            if row.startswith("$ "):
                steps.append((row[2:], ""))
            elif steps and not steps[-1][1] and (row == ">" or row.startswith("> ")):  # the shell's PS2
                steps[-1] = (steps[-1][0] + "\n" + row[2:], "")
            elif steps:
                steps[-1] = (steps[-1][0], steps[-1][1] + row + "\n")
            else:
                raise AssertionError(f"line {line}: a console block starts with '$ COMMAND'")
        blocks.append((line, steps))
    return blocks


def test_console_blocks_are_parsed_as_written():
    text = "```{code-block} console\n:class: demo\n$ ocolearn a \\\n  --b\nout 1\n...\n$ ls\n"
    text += "$ cat > f <<'EOF'\n> x = 1\n>\n> EOF\n$ cat f\nx = 1\n> output\n```\n"
    text += "```{code-block} console\n:class: no-test\n$ ocolearn never\n```\n```console\n$ ocolearn neither\n```\n"
    steps = [
        ("ocolearn a --b", "out 1\n...\n"),
        ("ls", ""),
        ("cat > f <<'EOF'\nx = 1\n\nEOF", ""),
        ("cat f", "x = 1\n> output\n"),
    ]
    assert console_blocks(text) == [(1, steps)]


SHELLS = ("sh", "bash", "shell", "zsh", "console", "shell-session")
# Pages whose shell examples are not yet console blocks (their owner converts them; then delete the entry).
UNCONVERTED: set[str] = set()


def test_every_shell_example_of_a_page_is_a_console_block():
    """A page's shell example runs (the slow test below) only as a ``{code-block} console`` block
    of ``$ ocolearn ...`` lines, the commands of a page being copy-pasteable with the environment
    active (getting-started.md says so): no ```sh block, and no ``.venv/bin/`` in a command."""
    for page in (p for p in pages() if str(p.relative_to(ROOT)) not in UNCONVERTED):
        for info, content, line in fenced(page.read_text()):
            where = f"{page.relative_to(ROOT)}:{line}"
            assert info not in SHELLS and not (info == "" and content.startswith("$ ")), (
                f"{where}: an untested shell block"
            )
        for line, steps in console_blocks(page.read_text().replace(":class: no-test", ":class: (checked here)")):
            for command, _ in steps:
                assert not command.startswith(".venv/"), f"{page.relative_to(ROOT)}:{line}: $ {command}"


def shell_folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder to run a page's commands in (configs/ linked there) and their environment:
    ``ocolearn`` and ``.venv/bin/ocolearn`` there are this checkout's, run by this Python, and ``python`` is
    this Python (a page's commands run with the environment active)."""
    work = tmp_path / "work"
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / "configs").symlink_to(ROOT / "configs")
    for name, module in (("ocolearn", "-m ocolearn "), ("python", "")):
        shim = work / ".venv" / "bin" / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" {module}"$@"\n')
        shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}", "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return work, env


def shell(command: str, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in pages() if console_blocks(p.read_text())], ids=lambda p: p.name)
def test_console_examples_run_and_print_what_the_page_says(page, tmp_path):
    """Each page's console blocks, top to bottom, in one folder (configs/ linked there), with
    ``ocolearn`` this checkout's; output shown under a command must match (``...``: any text)."""
    work, env = shell_folder(tmp_path)
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    for line, steps in console_blocks(page.read_text()):
        for command, want in steps:
            done = shell(command, work, env)
            where = f"{page.relative_to(ROOT)}:{line}: $ {command}"
            assert done.returncode == 0, f"{where}\nexit status {done.returncode}:\n{done.stdout}"
            if want:
                assert checker.check_output(want, done.stdout, flags), (
                    f"{where}\nexpected:\n{want}\ngot:\n{done.stdout}"
                )


def readme_commands(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The README's ```sh lines that run ocolearn (GitHub renders no MyST, so they stay ```sh):
    (command, [(name, number), ...] its comment states, as ``# mse 0.046541, rows 150``)."""
    commands = []
    for info, content, _ in fenced(text):
        for row in re.sub(r"\s*\\\n\s*", " ", content).splitlines() if info == "sh" else []:
            command, _, comment = row.partition(" # ")
            if re.match(r"(\.venv/bin/)?ocolearn ", command):
                commands.append((command.strip(), re.findall(r"([A-Za-z_]+) (-?\d+(?:\.\d+)?)\b", comment)))
    return commands


def test_readme_commands_are_read_as_written():
    text = "```sh\nmake demo    # x 1\n.venv/bin/ocolearn a \\\n  --b   # mse 0.5, rows 3\nocolearn c\n```\n"
    assert readme_commands(text) == [(".venv/bin/ocolearn a --b", [("mse", "0.5"), ("rows", "3")]), ("ocolearn c", [])]


@pytest.mark.slow
def test_readme_commands_run_and_print_the_numbers_their_comments_state(tmp_path):
    """The README's command-line example, run as written in one folder: each number a comment
    states (``# mse 0.046541, mae 0.169239, rows 150``) is a line ``NAME NUMBER`` of the output."""
    work, env = shell_folder(tmp_path)
    commands = readme_commands((ROOT / "README.md").read_text())
    assert sum(len(numbers) for _, numbers in commands) >= 3
    for command, numbers in commands:
        done = shell(command, work, env)
        assert done.returncode == 0, f"README.md: $ {command}\nexit status {done.returncode}:\n{done.stdout}"
        for name, number in numbers:
            assert f"{name} {number}" in done.stdout.splitlines(), f"README.md: $ {command}\n{done.stdout}"


@pytest.mark.slow
def test_the_site_builds_without_a_warning(tmp_path):
    """``make docs``'s build: warnings (a broken cross-reference, a docstring's bad markup) are errors."""
    out = tmp_path / "html"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr
    cli = (out / "reference" / "cli.html").read_text()
    assert all(f"--{option}" in cli for option in ("learner", "model", "passes", "holdout", "resume"))
    assert "searchindex.js" in {p.name for p in out.iterdir()}
