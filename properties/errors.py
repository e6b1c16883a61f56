"""The one error type every groupcheck command reports the same way.

A :class:`UsageError` is a problem the user can fix — a bad argument or setting, an unwritable
output path, no Java, an unreachable Spark master — and is printed as one line
(``groupcheck: error: ...``) with exit status 2, never a traceback. It lives in a module of its own
at the bottom of the package so that every wing can raise it without importing the CLI; so does
:func:`int_at_least`, the integer check every command's options share.
"""

import argparse


class UsageError(Exception):
    """A problem the user can fix: reported in one line, exit status 2."""


def int_at_least(name: str, minimum: int):
    """An argparse type: an integer >= *minimum* (``_`` allowed as a digit separator), or one
    message naming the option, its bound and the value given."""
    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be >= {minimum}, got {value}")
        return value

    return parse
