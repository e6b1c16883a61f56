"""The one error type every groupcheck command reports the same way.

A :class:`UsageError` is a problem the user can fix — a bad argument or setting, an unwritable
output path, no Java, an unreachable Spark master — and is printed as one line
(``groupcheck: error: ...``) with exit status 2, never a traceback; an :class:`Inconclusive` (the
system under test is not there to judge) the same way with exit status 3. It lives in a module of its own
at the bottom of the package so that every wing can raise it without importing the CLI; so does
:func:`int_at_least`, the integer check every command's options share, with the ``--set`` option
and the ``--out FILE`` check.
"""

import argparse


class UsageError(Exception):
    """A problem the user can fix: reported in one line, exit status 2."""


class Inconclusive(Exception):
    """Nothing could be judged because the system under test was not there: a broker nobody
    listens for, one that died before its first answer, a launched broker that did not start.
    Reported in one line like a :class:`UsageError`, but with exit status 3 (:data:`INCONCLUSIVE`),
    so a CI tells "the broker is down" from "the command line is wrong" (2) and "it diverges" (1)."""


#: The exit statuses of the checkers: 0 conforms, 1 diverges, 2 usage error, 3 inconclusive.
INCONCLUSIVE = 3


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


def add_settings_argument(p: argparse.ArgumentParser) -> None:
    """``--set NAME=VALUE`` (repeatable): a Kafka setting by its property name."""
    from model.config import SETTINGS

    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="settings",
                   help="a Kafka setting by its property name, repeatable; known: " + ", ".join(sorted(SETTINGS)))


def check_output_file(path: str, option: str, force: bool = False) -> None:
    """Before any work: *path* can be written — its folder exists, it is not a directory, it does
    not exist yet (or *force*), and a file can really be created there (``os.access`` says yes to
    root on a read-only or virtual file system, so the file is created and removed). Raises a
    UsageError naming the option and the path."""
    import os

    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory")
    existed = os.path.lexists(path)
    if existed and not force:
        raise UsageError(f"{option} {path}: exists (use --force to replace it)")
    try:
        with open(path, "a" if existed else "x", encoding="utf-8"):
            pass
    except OSError as e:
        raise UsageError(f"{option} {path}: cannot be written ({e.strerror or e})") from None
    if not existed:
        os.unlink(path)


def host_and_port(text: str, option: str = "--bootstrap") -> tuple:
    """``HOST:PORT`` -> ``(host, port)``; a UsageError naming *option* and the value otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise UsageError(f"{option} expects HOST:PORT, got {text!r}")
    try:
        number = int(port)
    except ValueError:
        raise UsageError(f"{option} {text}: the port {port!r} is not a number") from None
    if not 0 < number < 65536:
        raise UsageError(f"{option} {text}: the port {number} is out of range (1-65535)")
    return host, number


def whole_number(text: str, value: str, minimum=None, what: str = "an integer") -> int:
    """*value* as an integer (at least *minimum*, if given); otherwise a UsageError that begins
    with *text*, the argument as given (``--set session.timeout.ms=soon``, ``--topic t:x``)."""
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"{text}: expected {what}") from None
    if minimum is not None and number < minimum:
        raise UsageError(f"{text}: must be at least {minimum}")
    return number
