"""``python -m ocolearn``: the ``ocolearn`` command (``ocolearn.cli.entry``). The signal handlers
are installed before ``ocolearn.cli`` is imported: a signal meanwhile is recorded, and ends the
command as it starts."""

from ocolearn import interrupts

interrupts.install()

from ocolearn.cli import entry  # noqa: E402

entry()
