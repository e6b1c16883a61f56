"""The one error type every groupcheck command reports the same way.

A :class:`UsageError` is a problem the user can fix — a bad argument or setting, an unwritable
output path, no Java, an unreachable Spark master — and is printed as one line
(``groupcheck: error: ...``) with exit status 2, never a traceback. It lives in a module of its own
at the bottom of the package so that every wing can raise it without importing the CLI.
"""


class UsageError(Exception):
    """A problem the user can fix: reported in one line, exit status 2."""
