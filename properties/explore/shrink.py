"""Shrinking failing schedules, and naming the shape of a failure.

A campaign finds a failing interleaving as a schedule of a few hundred events — or, for a long
walk, of hundreds of thousands; a person can read a dozen. :func:`shrink` removes events while the
failure keeps its *signature* (the same property and the same shape of message). Every
sub-sequence of a schedule is a valid schedule (a step that is not enabled changes nothing,
:mod:`model.world`), so every candidate can simply be replayed; the replay keeps only the events
that applied and stops at the first violation, so each accepted candidate is also truncated at its
failing step.

A replay costs time linear in its length, so the phases go from cheap, wholesale cuts to fine ones,
and repeat while they still remove something:

1. **drop a prefix** — keep only the last 8, 16, 32, ... events (then bisect between the last
   length that lost the failure and the first that kept it). The dropped events do not simply
   vanish — the kept ones now run from the initial world, where a delivery of a message that was
   never sent changes nothing and a poll starts a fresh join — but many failures need only a recent
   window of traffic, and these candidates are short, so trying them is nearly free;
2. **drop a class** — every event of one consumer, or of one kind (all commits, all heartbeats),
   in one candidate each; and merge every run of consecutive ticks into one tick of their total;
3. **drop chunks** — delta debugging: remove chunks of half, a quarter, ... of the schedule, down
   to single events; after each pass at a chunk size the wholesale phases run again on the (now
   shorter, so cheaper) schedule.

It stops at a time budget; the result says whether it reached a locally minimal schedule (a full
pass removing single events removed nothing). ``python -m properties.explore.shrink_bench``
measures it on long schedules.

:func:`signature` names a failure by its property and the shape of its message — numbers, member
ids and partition lists replaced by placeholders — never by its seed, so the many seeds that hit
the same bug land in one cluster. For a model/implementation divergence the shape is the kind of
event after which the two sides differ and the first differing field with both sides' symbolic
values (``after poll: client N member state: model 'PREPARING_REBALANCE', impl 'UNJOINED'``;
numbers become the direction in which the implementation is off), so two unrelated divergences do
not share a name. It is built with hashlib, never ``hash()``, so it is the same in every process.

"""

from __future__ import annotations

import ast
import hashlib
import re
import time

import attrs

from properties.catalogue import BY_NAME, EVENTUALLY

_MEMBER_ID = re.compile(r"consumer-\d+-[0-9A-Za-z-]+|\bc\d+\.\d+\b")
_WHOLE_MEMBER_ID = re.compile(r"^(?:consumer-\d+-[0-9A-Za-z-]+|c\d+\.\d+)$")
_LIST = re.compile(r"\[[^\[\]]*\]|\{[^{}]*\}")
_NUMBER = re.compile(r"-?\d+")

# (a tick compared at a timer's due time inside it is the same failure as one seen at its end)
_DIVERGENCE = re.compile(r"^after \((.*?)\)(?:, at \d+ ms within it \(a timer's due time\))?: (.*)$")
_ONE_SIDED = re.compile(r"^\((.*?)\) was applied only by (the model|the implementation)$")
_FIELD = re.compile(r"^(.*?): model (.*), impl (.*)$")
# properties.systems.watchdog.Hang.describe, then the event: ", in (...)" (classic) or ", after [...]" (KIP-848)
_HANG = re.compile(r"^still running after [^,]* s, at [^,]*, (?:in|after) ([\[(].*[\])])$")


_CONSUMER_CALLS = ("poll", "heartbeat", "commit")  # one consumer's own loop: the same bug shows after any of them


def _event_kind(text: str) -> str:
    """The kind of the event written as *text* (its repr without parentheses). A delivery says
    which way it goes (a request reaches the coordinator, a response the consumer: different
    code); a poll, a heartbeat-thread iteration and a commit are one kind (the consumer's own
    loop, which runs the same coordinator code: one bug shows after any of them)."""
    try:
        event = ast.literal_eval("(" + text + ")")
    except (ValueError, SyntaxError):
        return "?"
    if not isinstance(event, tuple) or not event:
        return "?"
    kind = str(event[0])
    if kind in _CONSUMER_CALLS:
        return "poll/heartbeat/commit"
    if kind == "deliver" and len(event) > 3:
        return f"deliver {'request' if event[3] else 'response'}"
    return kind


def _value(x) -> str:
    """A field value with the run-specific part abstracted: member ids and numbers go, states,
    protocol names, booleans, None and emptiness stay."""
    if isinstance(x, bool) or x is None:
        return repr(x)
    if isinstance(x, str):
        return "<member>" if _WHOLE_MEMBER_ID.match(x) else repr(x)
    if isinstance(x, int):
        return "N"
    if isinstance(x, (list, tuple, dict, set, frozenset)):
        return "[]" if not x else "[…]"
    return "?"


def _field_shape(difference: str) -> str:
    """``client N member state: model 'A', impl 'B'`` from ``client 2 member state: model 'A', impl
    'B'``; two numbers become the direction (``impl below model``)."""
    m = _FIELD.match(difference)
    if not m:
        return _NUMBER.sub("N", _LIST.sub("[…]", _MEMBER_ID.sub("<member>", difference)))
    field = _NUMBER.sub("N", m.group(1))
    try:
        a, b = ast.literal_eval(m.group(2)), ast.literal_eval(m.group(3))
    except (ValueError, SyntaxError):
        return field
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and not isinstance(b, bool):
        return f"{field}: impl {'below' if b < a else 'above'} model"
    return f"{field}: model {_value(a)}, impl {_value(b)}"


def shape(message: str) -> str:
    """A failure message with the run-specific values abstracted away. For a model/implementation
    divergence (``after EVENT: field: model X, impl Y; ...``): the event's kind and the first
    differing field with both values' symbolic part (the fields after it usually follow from it);
    for an event only one side applied: the event's kind and the side; for a hang (the watchdog's
    ``still running after S s, at WHERE``): the event's kind alone — where the watchdog interrupted
    a loop that never ends is chance, and moves from one replay of the same schedule to the next."""
    m = _ONE_SIDED.match(message)
    if m:
        return f"{_event_kind(m.group(1))} applied only by {m.group(2)}"
    m = _DIVERGENCE.match(message)
    if m:
        return f"after {_event_kind(m.group(1))}: {_field_shape(m.group(2).split('; ')[0])}"
    m = _HANG.match(message)
    if m:
        return f"still running after N s, in {_event_kind(m.group(1)[1:-1])}"
    text = _MEMBER_ID.sub("<member>", message)
    text = _LIST.sub("[…]", text)
    return _NUMBER.sub("N", text)


def signature(violation) -> str:
    """``<property>-<8 hex>``: stable across seeds, processes and ``PYTHONHASHSEED``; usable as a
    file name. An eventually failure is shaped by its kind alone (the text before the first colon:
    "the group did not settle", ...): where a livelock stands when the quiet time runs out (which
    state, which generation) is not part of what went wrong, and it moves as a shrinker tries
    shorter schedules, each followed by its own settle phase."""
    message = violation.message.split(":")[0] if is_eventually(violation.property) else violation.message
    digest = hashlib.sha256(f"{violation.property}\n{shape(message)}".encode()).hexdigest()[:8]
    return f"{violation.property}-{digest}"


def is_eventually(property_name: str) -> bool:
    prop = BY_NAME.get(property_name)
    return prop is not None and prop.kind == EVENTUALLY


@attrs.frozen
class Shrunk:
    schedule: tuple  # the smallest failing schedule found
    result: object  # its replay RunResult (build the counterexample from this one)
    original_events: int
    replays: int
    seconds: float
    reproduced: bool  # the original schedule failed again the same way when replayed
    complete: bool  # locally minimal: no single event can be removed (False: the budget ran out)
    replayed_events: int = 0  # events replayed over all candidates (the cost)
    phases: tuple = ()  # (phase, events after it, replays so far, seconds so far) per phase run


class _OutOfTime(Exception):
    pass


class _Search:
    """The current smallest failing schedule, and the one way to try a candidate."""

    def __init__(self, replay, sig: str, eventually: bool, deadline: float, clock, log):
        self.replay, self.sig, self.eventually = replay, sig, eventually
        self.deadline, self.clock, self.log = deadline, clock, log
        self.best = None
        self.current: tuple = ()
        self.replays = 0
        self.replayed_events = 0
        self.phases: list = []
        self.start = clock()

    def attempt(self, candidate) -> bool:
        """Replay *candidate*; keep it (truncated at its failing step) if it fails with the same
        signature and is shorter than the current schedule."""
        if self.clock() > self.deadline:
            raise _OutOfTime
        candidate = tuple(candidate)
        if not candidate or len(candidate) >= len(self.current):
            return False
        self.replays += 1
        self.replayed_events += len(candidate)
        result = self.replay(candidate, check_eventually=self.eventually)
        if result.violation is None or signature(result.violation) != self.sig:
            return False
        if len(result.schedule) >= len(self.current):
            return False
        self.best, self.current = result, tuple(result.schedule)
        return True

    def mark(self, phase: str) -> None:
        entry = (phase, len(self.current), self.replays, round(self.clock() - self.start, 3))
        self.phases.append(entry)
        if self.log is not None:
            self.log(*entry)


def _drop_prefix(search: _Search) -> bool:
    """Keep only the last L events, L = 8, 16, 32, ...; then bisect between the last L that lost
    the failure and the first that kept it."""
    reference = search.current
    n = len(reference)
    length, failed_below = 8, 0
    while length <= n // 2:  # a longer suffix drops little: the chunk passes try that
        if search.attempt(reference[-length:]):
            break
        failed_below = length
        length *= 2
    else:
        return False
    lo, hi = failed_below, length  # reference[-lo:] lost the failure, reference[-hi:] kept it
    while hi - lo > max(1, hi // 64):
        mid = (lo + hi) // 2
        if search.attempt(reference[-mid:]):
            hi = mid
        else:
            lo = mid
    return True


def _kind(event) -> str:
    return event[0]


_NOT_A_CONSUMER = ("tick", "broker_crash", "broker_restart", "failover", "load")  # events of no consumer


def _actor(event) -> str:
    """The consumer an event belongs to (``c1``), or its kind for an event of none."""
    kind = event[0]
    if kind in _NOT_A_CONSUMER:
        return kind
    return f"c{event[1]}"


def _drop_classes(search: _Search) -> bool:
    """Every event of one consumer, then every event of one kind, in one candidate each (largest
    class first; a class of less than 1/64 of the schedule is left to the chunk passes, as one
    replay of a long schedule costs too much for so little); then consecutive ticks merged."""
    removed = False
    for key in (_actor, _kind):
        sizes: dict = {}
        for e in search.current:
            k = key(e)
            sizes[k] = sizes.get(k, 0) + 1
        worth = max(2, len(search.current) // 64)
        for cls in sorted(sizes, key=lambda k: (-sizes[k], str(k))):
            if key is _kind and cls in _NOT_A_CONSUMER:
                continue  # tried as an actor
            if len(sizes) > 1 and sizes[cls] >= worth and search.attempt(e for e in search.current if key(e) != cls):
                removed = True
                search.mark(f"drop every {cls} event")
    merged, run = [], None
    for e in search.current:
        if e[0] == "tick" and run is not None:
            run = ("tick", run[1] + e[1]) + tuple(run[2:])
            continue
        if run is not None:
            merged.append(run)
            run = None
        if e[0] == "tick":
            run = tuple(e)
        else:
            merged.append(e)
    if run is not None:
        merged.append(run)
    if len(merged) < len(search.current) and search.attempt(merged):
        removed = True
        search.mark("merge consecutive ticks")
    return removed


def _drop_chunks(search: _Search, chunk: int) -> bool:
    """One delta-debugging pass: remove each chunk of *chunk* consecutive events in turn. Where a
    removal works, the next bite at the same place is twice as big (and halves again, down to
    *chunk*, where one fails): a long droppable stretch goes in a few replays, not one per chunk."""
    removed = False
    i, bite = 0, chunk
    while i < len(search.current):
        current = search.current
        if search.attempt(current[:i] + current[i + bite:]):
            removed = True
            bite *= 2
        elif bite > chunk:
            bite //= 2
        else:
            i += chunk
    return removed


def shrink(replay, schedule, violation, budget_seconds: float = 10.0, clock=time.monotonic, log=None) -> Shrunk:
    """The smallest schedule found within *budget_seconds* that still fails with *violation*'s
    signature (see the module docstring). *replay(schedule, check_eventually=...)* re-runs a
    schedule on the system that failed and returns its RunResult — for a system by name,
    :func:`properties.systems.replayer` (explore does not know the systems; they are handed in).
    *log(phase, events, replays, seconds)*, if given, hears of every phase as it ends."""
    start = clock()
    sig = signature(violation)
    eventually = is_eventually(violation.property)
    schedule = tuple(tuple(e) for e in schedule)
    search = _Search(replay, sig, eventually, start + budget_seconds, clock, log)
    search.replays, search.replayed_events = 1, len(schedule)
    first = replay(schedule, check_eventually=eventually)
    if first.violation is None or signature(first.violation) != sig:
        # should not happen (replays are exact); keep the original, unshrunk
        return Shrunk(schedule, first, len(schedule), 1, round(clock() - start, 3), False, False, len(schedule))
    search.best, search.current = first, tuple(first.schedule)
    search.mark("replay")
    complete = False
    try:
        chunk = max(1, len(search.current) // 2)
        wholesale_at = None  # the length the wholesale phases last ran at
        while True:
            if wholesale_at is None or len(search.current) <= wholesale_at // 2:
                # again only once the schedule has halved: on a failure that needs events from all
                # over the schedule they remove nothing, and each costs a replay of all of it
                wholesale_at = len(search.current)
                if _drop_prefix(search):
                    search.mark("drop prefix")
                _drop_classes(search)
                chunk = min(chunk, max(1, len(search.current) // 2))
            removed = _drop_chunks(search, chunk)
            search.mark(f"drop chunks of {chunk}")
            if chunk == 1 and not removed:
                complete = True
                break
            chunk = max(1, chunk // 2)
    except _OutOfTime:
        pass
    return Shrunk(search.current, search.best, len(schedule), search.replays, round(clock() - start, 3), True, complete,
                  search.replayed_events, tuple(search.phases))
