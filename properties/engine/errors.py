"""The run engine's one error type for what a user can fix before or while a run starts."""

from __future__ import annotations

from properties.errors import UsageError


class RunError(UsageError):
    """A problem the user can fix (bad argument, unwritable folder, no Java, Spark not starting, an
    unreachable master): one line, exit 2."""
