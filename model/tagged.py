"""Tag-first named tuples: the shape of the model's events (:mod:`model.events`) and log entries
(:mod:`model.entries`).

An event or a log entry is a plain tuple whose first item names its kind (``("poll", 0, 5)``,
``("send", 1, 7, 4, "JoinGroup", 0, 30000)``): schedules are stored as JSON lists, code written
against positions keeps working, and ``==`` and hashing agree with plain tuples. :func:`tagged`
turns a :class:`typing.NamedTuple` declaration whose first field is the tag into such a type whose
constructor fills the tag in, so ``Poll(0, 5) == ("poll", 0, 5)`` and ``Poll(0, 5).c == 0``.

What the decorator changes, and why:

* ``__new__`` takes the fields after the tag (generated as straight-line code: one is built at
  almost every step of every walk, and a keyword-free ``tuple.__new__`` is the cheapest way);
* ``__repr__`` is the plain tuple's, so an event prints as the schedule entry it is (messages,
  trace hashes and ready-to-paste schedules read the same as before the types existed);
* ``__getnewargs__`` leaves the tag out, so pickling (Spark ships schedules between processes) and
  ``copy`` rebuild through the new ``__new__``.

``_make`` (a whole tuple, tag included) and ``_replace`` keep their namedtuple meaning.
"""

from __future__ import annotations

_NEW = tuple.__new__


def _without_tag(self) -> tuple:
    return tuple(self)[1:]


def tagged(tag_field: str, tag: str):
    """Class decorator: the NamedTuple *cls* (first field *tag_field*) built as ``cls(*rest)``
    with its first item the constant *tag*; defaults of the later fields are kept."""

    def decorate(cls):
        fields = cls._fields
        if not fields or fields[0] != tag_field:
            raise TypeError(f"{cls.__name__}: the first field must be {tag_field!r}, got {fields}")
        rest = fields[1:]
        defaults = cls._field_defaults
        params = ", ".join(f"{f}={defaults[f]!r}" if f in defaults else f for f in rest)
        values = "".join(f"{f}, " for f in rest)
        source = f"def __new__(_cls, {params}):\n    return _new(_cls, ({tag!r}, {values}))\n"
        namespace = {"_new": _NEW}
        exec(source, namespace)  # noqa: S102 - generated from the declared field names only
        new = namespace["__new__"]
        new.__qualname__ = f"{cls.__qualname__}.__new__"
        new.__doc__ = f"Build ``({tag!r}, {', '.join(rest)})``."
        cls.__new__ = staticmethod(new)
        cls.__repr__ = tuple.__repr__
        cls.__getnewargs__ = _without_tag
        setattr(cls, "TAG", tag)
        return cls

    return decorate
