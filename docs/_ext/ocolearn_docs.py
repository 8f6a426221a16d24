"""Reference pages generated from the code, so they cannot go stale (a Sphinx extension).

Directives, each writing reStructuredText that Sphinx then parses like the page's own:

- ``ocolearn-cli``: every subcommand of ``ocolearn.cli.parser()`` with its usage and every
  option (flags, argument, choices, default, help), as Sphinx ``option`` entries;
- ``ocolearn-config``: every key of an experiment file and of a study file, read from the
  dataclasses and registries the checkers (``ocolearn.config``, ``ocolearn.study``) validate
  with: each table's keys with their type and default, and each kind of learner and part with
  the keys a file may set and their valid values;
- ``ocolearn-records``: the committed records (``experiments/records``, ``benchmarks/records``)
  with their top-level keys.

The functions that write the text (``cli_lines``, ``config_lines``, ``records_lines``) need no
Sphinx: ``tests/test_docs.py`` checks their output.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def escape(text: str) -> str:
    """``text`` as literal reST inline text: markup characters escaped."""
    text = text.replace("\\", "\\\\")
    text = re.sub(r"([*`|])", r"\\\1", text)
    return re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", text)  # (word_ is a reference)


def table(header: list[str], rows: list[list[str]], widths: str = "auto") -> list[str]:
    """A ``list-table`` of reST cells (already marked up)."""
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0] or ' '}")
        lines += [f"     - {cell or ' '}" for cell in row[1:]]
    return [*lines, ""]


def heading(text: str, char: str, label: str = "") -> list[str]:
    """A section title, with a label for ``{ref}`` links where given."""
    return [*([f".. _{label}:", ""] if label else []), text, char * len(text), ""]


# --- the command line --------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each subcommand, in the parser's order."""
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in action._choices_actions}
    return [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]


def _option(action: argparse.Action, parser: argparse.ArgumentParser) -> tuple[str, list[str]]:
    """The ``option`` directive's signature of ``action`` and its description's lines."""
    formatter = parser._get_formatter()
    if action.option_strings:
        argument = formatter._format_args(action, action.dest.upper()) if action.nargs != 0 else ""
        signature = ", ".join(f"{flag} {argument}".strip() for flag in action.option_strings)
    else:
        signature = action.metavar or action.dest
    help_text = formatter._expand_help(action) if action.help else ""
    notes = []
    if action.required and action.option_strings:
        notes.append("required")
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        notes.append("one of " + ", ".join(f"``{c}``" for c in action.choices))
    if action.nargs in ("+", "*"):
        notes.append("one or more" if action.nargs == "+" else "any number")
    if isinstance(action, argparse._AppendAction):
        notes.append("may be given more than once")
    if action.default not in (None, False, [], "", argparse.SUPPRESS) and action.nargs != 0:
        notes.append(f"default ``{action.default}``")
    description = escape(help_text)
    if notes:
        notes = "; ".join(notes)
        description = f"{description} ({notes})" if description else notes[:1].upper() + notes[1:] + "."
    return signature, [description or "(no description)"]


def cli_lines(parser: argparse.ArgumentParser) -> list[str]:
    """The reference of every subcommand and option of ``parser`` (``ocolearn.cli.parser()``)."""
    lines = [*heading(parser.prog, "-"), escape(parser.description or ""), "", ".. code-block:: text", ""]
    lines += ["   " + line for line in parser.format_usage().strip().splitlines()] + [""]
    lines += [f".. program:: {parser.prog}", ""]
    for action in parser._actions:
        if action.option_strings and not isinstance(action, argparse._HelpAction):
            signature, description = _option(action, parser)
            lines += [f".. option:: {signature}", "", *("   " + d for d in description), ""]
    for name, summary, sub in _subcommands(parser):
        lines += heading(f"ocolearn {name}", "-")
        lines += [escape(summary[:1].upper() + summary[1:]) + ".", "", ".. code-block:: text", ""]
        lines += ["   " + line for line in sub.format_usage().strip().splitlines()] + [""]
        lines += [f".. program:: {sub.prog}", ""]
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            signature, description = _option(action, sub)
            lines += [f".. option:: {signature}", "", *("   " + d for d in description), ""]
    return lines


# --- config files ------------------------------------------------------------------------------


def _default(field: dataclasses.Field) -> str:
    from ocolearn.parts import Part

    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "(required)"
    if isinstance(value, Part):
        return f"``{value.name}``"
    if value is None:
        return "absent"
    return f"``{json.dumps(value) if isinstance(value, str | bool | list | dict) else value}``"


def _ref(cls: type) -> str:
    """A cross-reference to ``cls`` where the site documents it (the names of ``ocolearn.__all__``)."""
    import ocolearn

    name = cls.__name__
    return f":py:class:`ocolearn.{name}`" if name in ocolearn.__all__ else f"``{cls.__module__}.{name}``"


def _spec_lines(title: str, cls: type, keys: dict, label: str, applies=None) -> list[str]:
    """A table's keys (``keys``: name -> type, as the checker reads them), types and defaults,
    then the spec's docstring."""
    import inspect

    from ocolearn.config import _type_name as type_name

    fields = {f.name: f for f in dataclasses.fields(cls)}
    header = ["key", "type", "default"] + (["only for format"] if applies else [])
    rows = []
    for key, tp in keys.items():
        row = [f"``{key}``", escape(type_name(tp)), _default(fields[key])]
        if applies:
            row.append(escape(applies(key)))
        rows.append(row)
    doc = inspect.getdoc(cls)
    own = doc and not doc.startswith(f"{cls.__name__}(")  # (a dataclass without one gets its signature)
    return [*heading(title, "~", label), *(["", *doc.splitlines(), ""] if own else []), *table(header, rows)]


def _parts_lines(family: type, title: str, label: str) -> list[str]:
    """Each kind of a part family (``Learner``, ``Loss``, ...) a file may name, with its keys."""
    from ocolearn.config import _type_name as type_name
    from ocolearn.config import keys_of

    rows = []
    for kind, cls in sorted(family.registry.items()):
        if not getattr(cls, "from_files", True):
            continue
        fields = {f.name: f for f in dataclasses.fields(cls)}
        keys = []
        for key, tp in keys_of(cls).items():
            valid = fields[key].metadata.get("valid")
            keys.append(f"``{key}`` = {_default(fields[key])} ({escape(str(valid) if valid else type_name(tp))})")
        rows.append([f"``{kind}``", _ref(cls), "; ".join(keys) or "(none)"])
    return [*heading(title, "~", label), *table(["kind", "class", "keys: default (valid values)"], rows, "15 15 70")]


def config_lines() -> list[str]:
    """Every key of an experiment file and of a study file, from the checkers' own tables."""
    import typing

    import ocolearn.pipeline  # noqa: F401  (registers the learner "pipeline")
    from ocolearn import config, study
    from ocolearn.learners import Learner
    from ocolearn.losses import Loss
    from ocolearn.mirror_maps import MirrorMap
    from ocolearn.projections import Projection
    from ocolearn.schedules import Schedule

    def reads(key):
        return " or ".join(config.FORMAT_KEYS.get(key, ()))  # ("table": a config's bundled table or CSV file)

    lines = [*heading("Experiment files: ocolearn run, ocolearn sweep", "-", "config-experiment")]
    lines += ["Top-level keys: " + ", ".join(f"``{k}``" for k in config.TOP) + ".", ""]
    tables = typing.get_type_hints(config.Experiment)  # (data: DataSpec, sweep: SweepSpec | None, ...)
    for name in config.TOP:
        cls = next((a for a in typing.get_args(tables[name]) or [tables[name]] if dataclasses.is_dataclass(a)), None)
        if cls is not None:
            applies = reads if name == "data" else None
            lines += _spec_lines(f"[{name}]", cls, config.keys_of(cls), f"config-{name}", applies)
    lines += _parts_lines(Learner, "[learner] and [compare.NAME]", "config-learner")
    lines += ['A part inside a learner is a table with ``kind``, or just its kind (``loss = "hinge"``).', ""]
    for family, field in [(Loss, "loss"), (Schedule, "schedule"), (Projection, "projection"), (MirrorMap, "mirror")]:
        lines += _parts_lines(family, f"Parts: {field} kinds", f"config-{field}")
    lines += heading("Study files: ocolearn study", "-", "config-study")
    lines += ["Top-level keys: " + ", ".join(f"``{k}``" for k in study.TOP) + ".", ""]
    lines += _spec_lines("[evaluate]", study.EvaluateSpec, config.keys_of(study.EvaluateSpec), "config-evaluate")
    lines += _spec_lines("[[datasets]]", study.DatasetSpec, config.keys_of(study.DatasetSpec), "config-datasets")
    kinds = [
        [f"``{kind}``", ", ".join(f"``{k}``" for k in ("source", "name", "task", *keys))]
        for kind, keys in study.KEYS.items()
    ]
    lines += ["The keys each ``kind`` of data set takes:", "", *table(["kind", "keys"], kinds, "15 85")]
    lines += heading("[learners.NAME]", "~", "config-study-learners")
    lines += [
        "A learner table as :ref:`config-learner`, and ``tune``: a table of the learner's keys and the values "
        "to tune them over (a list of numbers or ``{linspace | logspace | geomspace = [start, stop, num]}``).",
        "",
    ]
    return lines


# --- records -----------------------------------------------------------------------------------


def records_lines() -> list[str]:
    """Each committed record file with its top-level keys."""
    rows = []
    for folder in ("experiments/records", "benchmarks/records"):
        for path in sorted((ROOT / folder).glob("*.json")):
            keys = json.loads(path.read_text())
            shown = ", ".join(f"``{k}``" for k in list(keys)[:12]) + (", ..." if len(keys) > 12 else "")
            rows.append([f"``{folder}/{path.name}``", shown])
    return table(["record", "top-level keys"], rows, "35 65")


# --- Sphinx ------------------------------------------------------------------------------------


def trim_doctests(app, doctree) -> None:
    """A doctest block on a page ends with a blank line (else doctest reads the closing fence as
    expected output); the page shows it without."""
    from docutils import nodes

    for block in doctree.findall(nodes.literal_block):
        text = block.astext()
        if text.startswith(">>>") and text != text.rstrip():
            block.children = [nodes.Text(text.rstrip())]
            block.rawsource = text.rstrip()


def skip_others(app, what, name, obj, skip, options):
    """Members that are not ocolearn's to document: a NamedTuple's fields (listed with its
    signature; their docstrings say only "Alias for field number 0"), and the methods
    scikit-learn adds to every estimator (``set_fit_request``, ...), documented by it."""
    if (getattr(obj, "__doc__", None) or "").startswith("Alias for field number"):
        return True
    return True if str(getattr(obj, "__module__", "")).startswith("sklearn.") else None


# A document's tables of names, ids and targets: the generated text's document shares the page's.
SHARED = (
    "reporter",
    "transformer",
    "ids",
    "nameids",
    "nametypes",
    "refnames",
    "refids",
    "id_counter",
    "indirect_targets",
    "substitution_defs",
    "substitution_names",
    "footnote_refs",
    "citation_refs",
    "autofootnotes",
    "autofootnote_refs",
    "symbol_footnotes",
    "symbol_footnote_refs",
    "footnotes",
    "citations",
    "parse_messages",
    "transform_messages",
)


def napoleon_except_properties(app) -> None:
    """Napoleon (Google and NumPy sections: ``Args:`` in ``ocolearn.run.run``) on every docstring
    but those of properties and attributes, whose first line napoleon reads as ``type: text``:
    here they are prose (``regression, binary or multiclass (files from before: by their labels)``)."""
    from sphinx.ext import napoleon

    listeners = app.events.listeners["autodoc-process-docstring"]
    (own,) = (listener for listener in listeners if listener.handler is napoleon._process_docstring)
    app.disconnect(own.id)

    def process(app, what, name, obj, options, lines):
        if what not in ("property", "attribute", "data"):
            napoleon._process_docstring(app, what, name, obj, options, lines)

    app.connect("autodoc-process-docstring", process)


def setup(app):
    from docutils.parsers.rst import Directive, Parser
    from docutils.utils import new_document

    def directive(make):
        class Generated(Directive):
            """The generated reST, parsed as reST (also on a Markdown page, whose own parser is MyST's)."""

            has_content = False

            def run(self):
                page = self.state.document
                document = new_document(page["source"], page.settings)
                for name in SHARED:  # (names, ids and labels land in the page's own tables)
                    setattr(document, name, getattr(page, name))
                Parser().parse("\n".join(make()), document)
                return document.children

        return Generated

    def cli():
        from ocolearn.cli import parser

        return cli_lines(parser())

    app.setup_extension("sphinx.ext.napoleon")
    napoleon_except_properties(app)
    app.connect("doctree-read", trim_doctests)
    app.connect("autodoc-skip-member", skip_others)
    app.add_directive("ocolearn-cli", directive(cli))
    app.add_directive("ocolearn-config", directive(config_lines))
    app.add_directive("ocolearn-records", directive(records_lines))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
