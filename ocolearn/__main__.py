"""``python -m ocolearn``: the ``ocolearn`` command (``ocolearn.cli.entry``)."""

from ocolearn.cli import entry

entry()
