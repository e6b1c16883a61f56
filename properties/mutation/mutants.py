"""Mutation analysis of the implementation (``groupcheck mutants``, issue 3).

A *mutant* is one realistic bug in ``impl/`` — the kind a Kafka engineer could write — kept as a
small source change to today's code: its target (the dotted path of a function or method) and
one or more ``(old, new)`` texts. :func:`applied` replaces each ``old`` (it must occur exactly
once) in the live source of the target (``inspect.getsource``, dedented), compiles the result
with the original's file name, line numbers, globals and closure cells (zero-argument ``super()``
too), puts it in the original's place and restores the very same object on exit, also when the
body raises. Every change carries a ``# MUTANT:`` comment, so the mutated source says what it
changed; files on disk are never touched. A mutant whose text no longer matches ``impl/`` fails to
apply with :class:`StaleMutant` naming it and the text, instead of silently testing an old copy.

A mutant is *killed* by an interleaving (``properties.systems.run("impl", seed, ...)``) when the
mutated implementation reports a violation there (the implementation disagrees with the model, a
catalogue always property breaks on either side, or the implementation raises out of the world)
**and** the unmutated implementation passes the very same interleaving (so known divergences of the
unmutated implementation are never counted as kills). Interleaving ``i`` of a search is seed ``i``
under fault profile ``profiles[i % len(profiles)]``; the same budget gives the same verdicts.
The unmutated verdicts are computed only for seeds where a mutant reported something, and cached
per (seed, fault profile) for the whole run.

:data:`MUTANTS` are the mutants ``groupcheck mutants`` runs; each is killed within the default
budget. :data:`UNREACHED` are equally realistic bugs whose trigger the world's random search does
not reach (:data:`WHY_UNREACHED` says why, and what would reach it); they run only when asked for
(``--only NAME`` or ``--unreached``). Those in :data:`EQUIVALENT` no run can tell from the correct
code, and a report scores the others apart from them.

``groupcheck mutants`` (its options: :func:`add_parser`) exits 0 if every mutant run was killed, 1
if one survived, 2 on a usage error; progress goes to stderr, and ``--json`` prints one ``{name,
killed, interleavings, seconds, property, seed, faults, message, world}`` per mutant (``property``
caught it: an exception out of the implementation is ``impl-no-crash``, an event it never finishes
``impl-no-hang``, an exception out of the model world ``crash:<Exception>``).
"""

from __future__ import annotations

import __future__
import argparse
import contextlib
import inspect
import json
import pkgutil
import re
import statistics
import textwrap
import time
import types
from collections import OrderedDict
from typing import Callable, Dict, List, Optional, Tuple

import attrs

from model.config import Config
from properties.explore.walker import DEFAULT_STEPS
from properties.mutation.kip848_table import CLASSIC_DEFS as KIP848_CLASSIC_DEFS
from properties.mutation.kip848_table import DEFS as KIP848_DEFS

DEFAULT_BUDGET = 2000  # the default campaign's interleavings (issue 14's measure of power)
PROFILES = ("none", "network", "all")
WORLDS = ("swarm", "fixed")


@attrs.frozen
class Mutant:
    """One realistic bug: a small source change to one or more functions of impl/, made by applied()."""

    name: str
    description: str
    target: str  # dotted path of the mutated function or method; ``Class.a+b``: a and b, the same edits
    kind: str  # the kind of bug
    # (old, new) texts: each old occurs once in the target's source and is replaced by new
    edits: Tuple[Tuple[str, str], ...] = attrs.field(converter=lambda pairs: tuple(map(tuple, pairs)), repr=False)
    source: str = ""  # the public bug history it comes from (a JIRA or an issue), if it has one

    def owners(self) -> List[Tuple[object, str]]:
        """(owner, attribute) of every function the mutant changes."""
        path, last = self.target.rsplit(".", 1)
        return [(pkgutil.resolve_name(path), attr) for attr in last.split("+")]


# ============================================================================================
# Applying a mutant: its edits to the live source of its target
# ============================================================================================

class StaleMutant(Exception):
    """A mutant that no longer applies to today's impl/ (an ``old`` text missing or ambiguous, or a
    source on disk that is not the code Python loaded): one line naming the mutant and the text."""


_FUTURE_FLAGS = sum(getattr(__future__, feature).compiler_flag for feature in __future__.all_feature_names)


def _reindent(text: str, indent: str) -> str:
    """*text* with its second and later (non-empty) lines indented by *indent* more."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [indent + line if line else line for line in rest])


def _replace_once(source: str, old: str, new: str, stale: str) -> str:
    """*source* with *old*, which must occur exactly once (else :class:`StaleMutant`, *stale* saying
    whose), replaced by *new*. The lines after the first of *old* match whatever their indentation;
    those of *new* are indented relative to the line *old* starts in, so an edit reads as the code
    it changes."""
    first, *rest = old.split("\n")
    hits = list(re.finditer(re.escape(first) + "".join(r"\n[ \t]*" + re.escape(line.lstrip()) for line in rest),
                            source))
    if len(hits) != 1:
        text = repr(first) + (" ..." if rest else "")
        raise StaleMutant(f"{stale}: {text} is {'not in' if not hits else f'{len(hits)} times in'} its source")
    start, end = hits[0].span()
    indent = re.match(r"[ \t]*", source[source.rfind("\n", 0, start) + 1:]).group()
    return source[:start] + _reindent(new, indent) + source[end:]


def _shape(code: types.CodeType) -> tuple:
    """What is equal between a function and its source compiled again: not the bytecode (an imported name's
    attribute compiles otherwise inside its module), and a docstring only up to dedenting."""
    consts = [_shape(c) if isinstance(c, types.CodeType) else (type(c), c) for c in code.co_consts]
    if consts and isinstance(code.co_consts[0], str):  # the docstring
        consts[0] = " ".join(code.co_consts[0].split())
    return (code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars, code.co_firstlineno,
            sorted({line for _, _, line in code.co_lines() if line}), consts)


def _compile(source: str, fn: types.FunctionType) -> types.FunctionType:
    """*source* (a dedented ``def`` of *fn*) compiled as *fn* was: its file and line numbers (for
    tracebacks and the watchdog's ``_where``), its module's globals and future flags, its closure
    cells (a factory's parameters provide them: ``super()``'s ``__class__``), defaults and doc."""
    code = fn.__code__
    if code.co_freevars:
        text = ("\n" * (code.co_firstlineno - 2) + f"def __mutant__({', '.join(code.co_freevars)}):\n"
                + textwrap.indent(source, "    ") + f"\n    return {fn.__name__}\n")
    else:  # no factory: its local name would shadow a global of the function's own name
        text = "\n" * (code.co_firstlineno - 1) + source
    scope: dict = {}
    exec(compile(text, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True),
         fn.__globals__, scope)
    new = scope["__mutant__"](*(c.cell_contents for c in fn.__closure__)) if code.co_freevars else scope[fn.__name__]
    new.__defaults__, new.__kwdefaults__, new.__doc__ = fn.__defaults__, fn.__kwdefaults__, fn.__doc__
    new.__dict__.update(fn.__dict__)
    return new


def mutated_source(mutant: Mutant, fn: types.FunctionType) -> str:
    """The dedented source of *fn* (the live function) with the mutant's edits made; raises
    :class:`StaleMutant` if the source on disk is not what was loaded or an edit does not apply."""
    prefix = f"mutant {mutant.name} no longer applies to {fn.__module__.replace('.', '/')}.py ({fn.__qualname__})"
    source = textwrap.dedent(inspect.getsource(fn))
    if not source.startswith("def "):
        raise StaleMutant(f"{prefix}: a decorated function (only a plain def can be patched)")
    if _shape(_compile(source, fn).__code__) != _shape(fn.__code__):
        raise StaleMutant(f"{prefix}: its source on disk is not the code loaded (edited since the import?)")
    for old, new in mutant.edits:
        source = _replace_once(source, old, new, prefix)
    return source


_BUILT: Dict[Mutant, Tuple[list, list]] = {}  # mutant -> (the originals it was built from, replacements)
_MISSING = object()  # an attribute the owner inherits: restored by deleting it


def _replacements(mutant: Mutant) -> List[Tuple[object, str, object, Callable]]:
    """(owner, attribute, original or _MISSING, replacement) for every function the mutant changes;
    built once per set of originals (entering a mutant per interleaving costs no compile)."""
    owners = mutant.owners()
    originals = [vars(owner).get(attr, _MISSING) for owner, attr in owners]
    built = _BUILT.get(mutant)
    if built is None or any(a is not b for a, b in zip(built[0], originals)):
        news = []
        for owner, attr in owners:
            fn = getattr(owner, attr)
            if not isinstance(fn, types.FunctionType):
                raise StaleMutant(f"mutant {mutant.name}: {mutant.target} is a {type(fn).__name__}, not a function")
            try:
                new = _compile(mutated_source(mutant, fn), fn)
            except SyntaxError as e:
                raise StaleMutant(f"mutant {mutant.name}: its edits of {attr} are not Python: {e.msg} at line {e.lineno}") from None
            new.__qualname__ = f"{getattr(owner, '__qualname__', owner.__name__)}.{attr} [mutant {mutant.name}]"  # a class or a module
            news.append(new)
        built = _BUILT[mutant] = (originals, news)
    return [(owner, attr, old, new) for (owner, attr), old, new in zip(owners, originals, built[1])]


@contextlib.contextmanager
def applied(name):
    """Apply the mutant *name* (or a :class:`Mutant`) for the duration of the block; the original
    attributes are restored exactly (the very same objects, or their absence) on exit, also on
    exceptions. Raises :class:`UnknownMutant` for an unknown name, :class:`StaleMutant` for a mutant
    that no longer applies to impl/."""
    mutant = name if isinstance(name, Mutant) else get(name)
    patches = _replacements(mutant)
    try:
        for owner, attr, _, new in patches:
            setattr(owner, attr, new)
        yield mutant
    finally:
        for owner, attr, old, _ in reversed(patches):
            if old is not _MISSING:
                setattr(owner, attr, old)
            elif attr in vars(owner):
                delattr(owner, attr)


# ============================================================================================
# The catalogue of mutants: (name, description, target, kind, edits); history.py adds its own
# ============================================================================================

_CNC = "impl.consumer_network_client"
_NC = "impl.network.network_client"
_AC = "impl.coordinator.abstract_coordinator"
_CC = "impl.coordinator.consumer_coordinator"
_GC = "impl.server.group_coordinator.GroupCoordinator"
_GM = "impl.server.group_metadata.GroupMetadata"

_DEFS = [
    # ConsumerNetworkClient
    ("unsent_expiry_ge", "failExpiredRequests fails an unsent request at exactly its timeout (>= instead of >)",
     f"{_CNC}.UnsentRequests.remove_expired_requests", "off-by-one",
     [("if elapsed_ms > request.request_timeout_ms:", "if elapsed_ms >= request.request_timeout_ms:  # MUTANT: >=")]),
    ("unsent_expiry_no_node_stop", "failExpiredRequests scans a node's whole queue instead of stopping at its first "
     "live request", f"{_CNC}.UnsentRequests.remove_expired_requests", "wrong loop exit",
     [("while requests:\n    request = requests[0]",
       "for request in list(requests):  # MUTANT: scans the whole queue, no stop at the first live request"),
      ("requests.popleft()", "requests.remove(request)"), ("break", "continue")]),
    ("unsent_expiry_global_stop", "failExpiredRequests stops at the first live request of any node, leaving other "
     "nodes' expired requests", f"{_CNC}.UnsentRequests.remove_expired_requests", "wrong loop exit",
     [("break", "return expired_requests  # MUTANT: stops the whole scan, not just this node's queue")]),
    ("disconnect_keeps_unsent", "checkDisconnects does not fail the unsent requests of a node whose connection failed",
     f"{_CNC}.ConsumerNetworkClient.check_disconnects", "missing step",
     [("client = self.client", "return  # MUTANT: they stay queued until they expire or the node reconnects\n"
       "client = self.client")]),
    ("disconnect_fails_in_place", "checkDisconnects fails the unsent requests without removing them, so they are sent "
     "and completed again", f"{_CNC}.ConsumerNetworkClient.check_disconnects", "future completed twice",
     [("requests = self.unsent.remove(node)",
       "requests = list(self.unsent.request_iterator(node))  # MUTANT: the queue is not removed first")]),
    ("pending_disconnect_not_disconnected", "handlePendingDisconnects fails the coordinator's unsent requests but never "
     "disconnects it", f"{_CNC}.ConsumerNetworkClient._handle_pending_disconnects", "missing step",
     [("self.client.disconnect(node.id)", "# MUTANT: not disconnected: the connection and its in-flight requests stay")]),
    ("completions_lifo", "pending completions are fired newest first",
     f"{_CNC}.ConsumerNetworkClient._fire_pending_completed_requests", "wrong order",
     [("pending.popleft()", "pending.pop()  # MUTANT: newest first")]),
    # RequestFuture
    ("future_listeners_refire", "a future's listeners stay registered after firing, so a late listener re-fires the "
     "earlier ones", "impl.future.RequestFuture._fire_success+_fire_failure", "listener fired twice",
     [("while listeners:\n    listeners.popleft()",
       "for listener in list(listeners):  # MUTANT: iterated, not polled: the listeners stay registered\n    listener")]),
    ("future_late_listener_dropped", "a listener added to a future that is already complete is never fired",
     "impl.future.RequestFuture.add_listener", "missing step",
     [("r = self._result",
       "return  # MUTANT: a complete future does not fire the new listener\nr = self._result")]),
    # NetworkClient
    ("inflight_timeout_ignored", "an in-flight request past its timeout never disconnects the node",
     f"{_NC}.NetworkClient._handle_timed_out_requests", "missing step",
     [("for node in", "return  # MUTANT: an in-flight request past its timeout never disconnects the node\nfor node in")]),
    ("inflight_timeout_from_creation", "the in-flight timeout is measured from the request's creation, not from its send",
     f"{_NC}.InFlightRequests.nodes_with_timed_out_requests", "wrong timestamp",
     [("elapsed = now - r.send_time_ms  # time_elapsed_since_send_ms, inline: every poll asks of every request",
       "elapsed = now - r.created_time_ms  # MUTANT: since creation, not since send")]),
    ("inflight_timeout_first_request_order", "nodes timed out in one poll are disconnected in the order they first "
     "got a request (a dict's), not in the order Kafka's in-flight HashMap iterates their ids",
     f"{_NC}.InFlightRequests.nodes_with_timed_out_requests", "wrong order",
     [("if len(out) > 1:", "if False:  # MUTANT: the dict's insertion order, not HashMap's (impl/ before e3596af)")]),
    ("send_before_previous_completed", "canSendMore does not wait for the channel's previous send to complete",
     f"{_NC}.InFlightRequests.can_send_more", "missing check",
     [("(q[-1].send_completed", "(True  # MUTANT: does not wait for the newest send to complete")]),
    ("reconnect_ignores_backoff", "a disconnected node may be reconnected at once, without waiting for "
     "reconnect.backoff.ms", f"{_NC}.ClusterConnectionStates.can_connect", "missing check",
     [("and now - state.last_connect_attempt_ms >= state.reconnect_backoff_ms)",
       ")  # MUTANT: the reconnect backoff is not checked")]),
    ("reconnect_backoff_gt", "a disconnected node may be reconnected only after more than reconnect.backoff.ms (> "
     "instead of >=)", f"{_NC}.ClusterConnectionStates.can_connect", "off-by-one",
     [(">= state.reconnect_backoff_ms)", "> state.reconnect_backoff_ms)  # MUTANT: > instead of >=")]),
    # client coordinator
    ("stale_heartbeat_resets", "a Heartbeat error answering an older generation resets the member (generation check "
     "missing)", f"{_AC}.HeartbeatResponseHandler.handle", "missing check",
     [("if self.generation_unchanged():", "if True:  # MUTANT: an answer to an older generation's heartbeat resets")]),
    ("heartbeat_while_unjoined", "the heartbeat thread keeps heartbeating after the member left its generation",
     f"{_AC}.HeartbeatThread.run_once", "missing check",
     [("if c.state.has_not_joined_group() or self.has_failed():",
       "if self.has_failed():  # MUTANT: c.state.has_not_joined_group() is not checked")]),
    ("heartbeat_rechecks_state_after_poll", "the heartbeat thread checks the member state again after its "
     "pollNoWakeup, so a reset fired in that poll sends no Heartbeat of the reset generation (Kafka checks only "
     "before the poll)", f"{_AC}.HeartbeatThread.run_once", "extra check",
     [("c.client.poll_no_wakeup()\nnow = c.time.milliseconds()",
       "c.client.poll_no_wakeup()\nif c.state.has_not_joined_group() or self.has_failed():  # MUTANT: re-checked\n"
       "    self.disable()\n    return \"disable\"\nnow = c.time.milliseconds()")]),
    ("subscription_change_not_rejoined", "a consumer whose subscription changed does not rejoin "
     "(rejoinNeededOrPending's joinedSubscription check missing): the group keeps assigning by the old one",
     f"{_CC}.ConsumerCoordinator.rejoin_needed_or_pending", "missing check",
     [("if self.joined_subscription is not None and self.joined_subscription != self.subscriptions.subscription:",
       "if False:  # MUTANT: the subscription is not compared with the joined one")]),
    ("assignment_not_matched_to_subscription", "onJoinComplete takes an assignment without checking it against "
     "the current subscription (checkAssignmentMatchedSubscription missing): a subscription changed while the "
     "JoinGroup was in flight meets partitions of a topic the consumer dropped",
     f"{_CC}.ConsumerCoordinator.on_join_complete", "missing check",
     [("if not self.subscriptions.check_assignment_matched_subscription(assigned_partitions):",
       "if False:  # MUTANT: the assignment is not matched to the subscription")]),
    ("leader_assigns_without_new_topic_metadata", "the leader assigns without awaiting the metadata of the "
     "topics only other members subscribe to (updateGroupSubscription's ensureFreshMetadata missing): those "
     "topics go unassigned until a refresh makes it rejoin",
     f"{_CC}.ConsumerCoordinator._update_group_subscription", "missing step",
     [("if not self.client.ensure_fresh_metadata(self.time.timer(LONG_MAX)):",
       "if False:  # MUTANT: the new topics' metadata is not awaited")]),
    ("join_timeout_not_extended", "JoinGroup is sent with request.timeout.ms instead of max(request timeout, rebalance "
     "timeout + 5000)", f"{_AC}.AbstractCoordinator.join_group_request_timeout_ms", "wrong timeout",
     [("return join_group_request_timeout_ms(", "return self.client.default_request_timeout_ms()  # MUTANT: not "
       "extended\nreturn join_group_request_timeout_ms(")]),
    ("commit_without_generation", "OffsetCommit is sent without the member's generation and member id",
     f"{_CC}.ConsumerCoordinator.send_offset_commit_request", "missing field",
     [("else:\n    generation = NO_GENERATION", "    generation = NO_GENERATION  # MUTANT: not the member's "
       "generation\nelse:\n    generation = NO_GENERATION")]),
    # server
    ("generation_not_bumped", "join completion does not increment the generation",
     f"{_GM}.init_next_generation", "missing step",
     [("self.generation_id += 1", "# MUTANT: self.generation_id += 1 forgotten")]),
    ("sync_accepts_stale_generation", "SyncGroup does not validate the generation",
     f"{_GC}.validate_sync_group", "missing check",
     [("error = self.validate_generation(group, generation_id)\nif error is not None:\n    return error",
       "# MUTANT: validate_generation(group, generation_id) is not called")]),
    ("commit_accepts_stale_generation", "OffsetCommit does not validate the generation",
     f"{_GC}.validate_offset_commit", "missing check",
     [("return self.validate_generation(group, generation_id)", "return None  # MUTANT: the generation is not validated")]),
    ("commit_accepts_unknown_member", "OffsetCommit does not check that the member is in the group",
     f"{_GC}.validate_offset_commit", "missing check",
     [("error = self.validate_current_member(group, member_id, group_instance_id)\nif error is not None:\n    return error",
       "# MUTANT: validate_current_member is not called: a member that was removed may commit")]),
    ("leader_not_repicked", "removing the leader leaves leader_id pointing at the removed member",
     f"{_GM}.remove", "missing step",
     [("if self.leader_id == member_id:\n    self.leader_id = self.choose_leader_after_removal()",
       "# MUTANT: the leader is not re-picked when the leader is removed")]),
    ("heartbeat_none_while_preparing", "Heartbeat is answered NONE during PreparingRebalance",
     f"{_GC}.handle_heartbeat", "wrong error code",
     [("error = Errors.REBALANCE_IN_PROGRESS", "error = _NONE  # MUTANT: NONE instead of REBALANCE_IN_PROGRESS")]),
    ("pending_members_never_expire", "a pending (MEMBER_ID_REQUIRED) member gets no expiry, so it holds back join "
     "completion", f"{_GC}.add_pending_member_expiration", "missing step",
     [("self.heartbeat_purgatory",
       "return  # MUTANT: no DelayedHeartbeat for a pending member\nself.heartbeat_purgatory")]),
    ("session_expiry_early", "the session deadline is armed 1 ms early (timeout - 1)",
     f"{_GC}.complete_and_schedule_next_expiration", "off-by-one",
     [("False, timeout_ms), (key,))", "False, timeout_ms - 1), (key,))  # MUTANT: timeout - 1")]),
    ("session_expiry_ignored", "an expired session removes nobody",
     f"{_GC}.on_expire_heartbeat", "missing step",
     [("if group.state is DEAD:", "return  # MUTANT: the DelayedHeartbeat fires and is ignored\nif group.state is DEAD:")]),
    ("follower_sync_rejected", "a follower's SyncGroup before the leader's is answered REBALANCE_IN_PROGRESS",
     f"{_GC}.do_sync_group", "wrong error code",
     [("group.members[member_id].awaiting_sync_callback = response_callback",
       "if not group.is_leader(member_id):  # MUTANT: answered REBALANCE_IN_PROGRESS at once, not parked\n"
       "    self.remove_pending_sync_member(group, member_id)\n"
       "    response_callback(sync_error(Errors.REBALANCE_IN_PROGRESS))\n    return\n"
       "group.members[member_id].awaiting_sync_callback = response_callback")]),
    ("join_ignores_pending_members", "join completion does not wait for pending (MEMBER_ID_REQUIRED) members",
     f"{_GM}.has_all_members_joined", "missing check",
     [(" and not self.pending_members", "  # MUTANT: pending members do not hold back join completion")]),
    ("non_rejoined_kept", "members that did not rejoin are kept at join completion",
     f"{_GC}.on_complete_join", "missing step",
     [("for failed_member in not_yet_rejoined_dynamic:\n    group.remove(failed_member.member_id)\n"
       "    self.remove_heartbeat_for_leaving_member(group, failed_member.member_id)",
       "# MUTANT: dynamic members that did not rejoin are not removed at join completion")]),
    # server: a group deleted while a member still believes itself in it (the delete_group event, issue 37)
    ("commit_to_unknown_group_creates_it", "an OffsetCommit at a generation to a group the coordinator does not have "
     "creates the group, as one without a generation does (Kafka rejects it ILLEGAL_GENERATION)",
     f"{_GC}.handle_commit_offsets", "missing check",
     [("if generation_id < 0:", "if True:  # MUTANT: a commit at a generation creates the group too")]),
    ("deleted_group_record_kept", "deleting a group writes tombstones for its offsets but not for its group record, "
     "so the next coordinator loads the group again", "impl.server.group_metadata_manager.GroupMetadataManager"
     ".cleanup_group_metadata", "missing step",
     [("records.append((GroupMetadataKey(group_id), None))", "pass  # MUTANT: no tombstone for the group record")]),
    # client: commitSync with a timeout (the commit_sync event, issue 37)
    ("commit_sync_waits_past_its_timer", "commitSync waits for its OffsetCommit's answer however long it takes, its "
     "timeout notwithstanding (as commitSync did before KIP-266 gave it one)", f"{_CC}.CommitOffsetsSync._pass",
     "missing check",
     [("return None if timer.not_expired() else False  # the answer still awaited: wait on, or time out",
       "return None  # MUTANT: the timer is not looked at while the answer is awaited")]),
    ("commit_sync_retries_without_backoff", "commitSync resends at once after a retriable failure instead of "
     "sleeping retry.backoff.ms first", f"{_CC}.CommitOffsetsSync._pass", "missing step",
     [("self.sleep_until = timer.current_time_ms() + min(backoff, timer.remaining_ms())",
       "pass  # MUTANT: no backoff before the retry")]),
    # server: a rejoin with other settings (a process redeployed: the redeploy event, issue 37)
    ("rejoin_keeps_session_timeout", "a member's rejoin does not take the session timeout its JoinGroup carries: the "
     "first join's stays", f"{_GM}.update_member", "stale field",
     [("member.session_timeout_ms = session_timeout_ms",
       "pass  # MUTANT: the session timeout of the member's first JoinGroup stays")]),
    ("rejoin_keeps_rebalance_timeout", "a member's rejoin does not take the rebalance timeout its JoinGroup carries: "
     "the first join's stays", f"{_GM}.update_member", "stale field",
     [("member.rebalance_timeout_ms = rebalance_timeout_ms",
       "pass  # MUTANT: the rebalance timeout of the member's first JoinGroup stays")]),
    ("static_replacement_expiry_with_new_timeout", "a static member replaced by a rejoin is given its next session "
     "expiry with the new JoinGroup's session timeout (Kafka schedules it before updateMember: the old one's)",
     f"{_GC}.update_static_member_and_rebalance", "wrong order",
     [("self.complete_and_schedule_next_heartbeat_expiration(group, member)\nold_rebalance_timeout_ms",
       "# MUTANT: the next expiry is scheduled after updateMember\nold_rebalance_timeout_ms"),
      ("group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, response_callback)\n"
       "state = group.state",
       "group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, response_callback)\n"
       "self.complete_and_schedule_next_heartbeat_expiration(group, member)  # MUTANT: with the new session timeout\n"
       "state = group.state")]),
    ("static_replacement_ignores_protocols", "a static member replaced by a rejoin to a Stable group never rebalances, "
     "even when its new protocols change the group's selected protocol",
     f"{_GC}.update_static_member_and_rebalance", "missing check",
     [("if group.protocol_name == selected_protocol_of_next_generation:",
       "if True:  # MUTANT: the selected protocol is not compared")]),
]


# Realistic bugs the world's random search does not reach within the default budget (the model's: UNREACHED
# in model/variants.py); they run with ``--only NAME`` or ``--unreached``; tests/mutation shows each one applies.
WHY_UNREACHED: Dict[str, str] = {
    "unsent_expiry_no_node_stop":
        "needs a node's unsent queue with a live head and an expired request behind it: requests of one "
        "node expire in the order they were queued unless their timeouts differ (a JoinGroup's is the "
        "rebalance timeout + 5 s) or the client's clock jumps back between them. A consumer queues nothing "
        "behind a JoinGroup but the LeaveGroup of a close() while the JoinGroup waits for a connection "
        "that hangs (a rejoining member whose coordinator is partitioned away, then shut down), and a "
        "clock jump between two commits to an unready coordinator meets the session timeout first "
        "(the heartbeat thread marks the coordinator unknown and its queue is failed)",
    "unsent_expiry_global_stop":
        "needs two nodes with unsent requests at once, the first with a live head and a later one "
        "with an expired head; a consumer queues to a second node only for FindCoordinator, and then "
        "the coordinator's queue has just been failed by the disconnect that made it unknown",
    "inflight_timeout_first_request_order":
        "needs two nodes whose in-flight requests time out in the same poll, the one Kafka's HashMap "
        "iterates first (its id's bucket: \"1\" before \"2147483647\") having got its first request after "
        "the other, and the two disconnects deciding differently what becomes of requests in transit: "
        "campaign seed 2,016,606 of 50,000 from seed 2,000,000 (2026-12-02, the bug this mutant puts back: "
        "impl/ before e3596af). tests/systems/test_differential.py kills it with that seed's 55 events",
    "future_listeners_refire":
        "equivalent in this client: it adds a listener to a completed future only as that future's first "
        "(a failure made at once); commitAsync chains onto the memoised FindCoordinator future only after "
        "ensureCoordinatorReadyAsync left it incomplete, a completed one being cleared first "
        "(tests/mutation/test_equivalent.py checks this after every event of swarm walks)",
    # from public bug histories (properties/mutation/history.py), survivors of the default
    # campaign's 2,000 interleavings
    "sync_illegal_generation_resets_member_id":
        "needs a SyncGroup answered ILLEGAL_GENERATION: one of a generation the coordinator it reaches does "
        "not hold, while that coordinator holds the member. The coordinator mix's failovers while a "
        "generation is unstored make the new coordinator answer Heartbeats so (the heartbeat mutants are "
        "killed at interleaving 99), but a member sends its SyncGroup in the JoinGroup answer's handler, "
        "to the coordinator that answered (a slow assignor's leader too: its heartbeat thread waits for "
        "the lock, so it learns of no new coordinator meanwhile), and that one answers NOT_COORDINATOR once "
        "the group has moved; the SyncGroup meets the older generation only if the group moved away and "
        "back while the leader assigned (two failovers in its assignor's time): not in 2,000 "
        "interleavings (2026-11-25). The campaign's directed schedules kill it (properties/campaign/directed.py: "
        "the SyncGroup of a newer generation than a coordinator that moved away and back reloaded, "
        "2026-11-29); the random search alone, which this command measures, still does not",
    "join_unknown_member_ignores_sent_generation":
        "needs a JoinGroup answered UNKNOWN_MEMBER_ID after the member's generation changed since it was "
        "sent, in a way the mutant's reset undoes: while its one JoinGroup is outstanding only a reset "
        "changes the generation, and only a Heartbeat or OffsetCommit sent before the JoinGroup and answered "
        "ILLEGAL_GENERATION resets it keeping the member id (the mutant's second reset then drops the id). One "
        "connection answers in order, so the coordinator must hold the member when it reads the "
        "earlier request and not when it reads the JoinGroup right after (removed in between): not in 2,000 "
        "interleavings",
    "sync_error_ignores_sent_generation":
        "as join_unknown_member_ignores_sent_generation, for SyncGroup: a Heartbeat answered "
        "ILLEGAL_GENERATION between the SyncGroup's sending and its UNKNOWN_MEMBER_ID answer, which the "
        "ordering of one connection leaves to a member removed between the two requests' handling",
    "heartbeat_rebalance_rejoins_while_completing":
        "equivalent in this client: outside STABLE the rejoin flag is already set (a successful SyncGroup "
        "clears it and moves to STABLE; every join starts with it set), and the heartbeat thread's "
        "listener takes a RebalanceInProgressException as it takes a success (receiveHeartbeat); only "
        "the rejoin reason's text differs, which a JoinGroup carries from v8 (KIP-800) and the swarm's "
        "go to v5 (tests/mutation/test_equivalent.py checks the flag after every event of swarm walks, "
        "where such answers do arrive outside STABLE)",
}
_UNREACHED_NAMES: Tuple[str, ...] = tuple(WHY_UNREACHED)
#: Unreached mutants no run can tell from the correct code in this client (an invariant of impl/
#: makes both choices of the mutated decision do the same wherever it is taken; the invariant is
#: checked after every event of swarm walks in tests/mutation/test_equivalent.py). A report counts
#: them apart: a survivor among them is no weakness of the search.
EQUIVALENT: Tuple[str, ...] = ("future_listeners_refire", "heartbeat_rebalance_rejoins_while_completing")

# Mutants whose bug lives in a regime the default world does not enter are searched in a world
# that does (the same config overrides as the model's quality tier, LONG_SESSION): with a session
# timeout longer than the rebalance timeout a member that did not rejoin is still alive at the
# join deadline, which is where ``non_rejoined_kept`` forgets to remove it.
LONG_SESSION = {"session_timeout_ms": 12000, "heartbeat_interval_ms": 3000, "max_poll_interval_ms": 8000}
MUTANT_WORLDS: Dict[str, Dict[str, int]] = {"non_rejoined_kept": LONG_SESSION}


def _build(unreached: bool) -> "OrderedDict[str, Mutant]":
    """The mutants of this module's rows (no source: written from Kafka's code rather than from a bug
    report), then :mod:`properties.mutation.history`'s, that are (not) in :data:`WHY_UNREACHED`."""
    from properties.mutation.history import HISTORY_DEFS

    rows = [row + ("",) for row in _DEFS] + list(HISTORY_DEFS)
    return OrderedDict((row[0], Mutant(*row)) for row in rows if (row[0] in _UNREACHED_NAMES) == unreached)


#: the mutants ``groupcheck mutants`` runs by default: every one is killed within the default budget
MUTANTS: "OrderedDict[str, Mutant]" = _build(False)
#: realistic mutants the world does not reach (yet); run with ``--only NAME`` or ``--unreached``
UNREACHED: "OrderedDict[str, Mutant]" = _build(True)
ALL: "OrderedDict[str, Mutant]" = OrderedDict(list(MUTANTS.items()) + list(UNREACHED.items()))
#: impl/'s KIP-848 coordinator's mutants (properties/mutation/kip848_table.py), hunted by
#: properties.kip848.mutants (the walks) and the KIP-848 broker judge
KIP848: "OrderedDict[str, Mutant]" = OrderedDict((row[0], Mutant(*row))
                                                 for row in KIP848_DEFS + KIP848_CLASSIC_DEFS)


class UnknownMutant(KeyError):
    def __str__(self) -> str:
        return self.args[0]


def get(name: str) -> Mutant:
    """A mutant by name: the classic ones here, or one of impl/'s KIP-848 coordinator (:data:`KIP848`)."""
    found = ALL.get(name) or KIP848.get(name)
    if found is None:
        raise UnknownMutant(f"unknown mutant {name!r}; known mutants: {', '.join(list(ALL) + list(KIP848))}")
    return found



# ============================================================================================
# Killing mutants
# ============================================================================================

@attrs.frozen
class Outcome:
    name: str
    killed: bool
    interleavings: int  # run under the mutant (until the kill, or the whole budget)
    seconds: float
    property: Optional[str]
    seed: Optional[int] = None
    faults: Optional[str] = None  # the fault profile of the killing interleaving
    message: Optional[str] = None
    world: Optional[str] = None  # the killing interleaving's world (its swarm regimes), in a swarm search

    def as_dict(self) -> dict:
        return {"name": self.name, "killed": self.killed, "interleavings": self.interleavings,
                "seconds": round(self.seconds, 2), "property": self.property, "seed": self.seed,
                "faults": self.faults, "message": self.message, "world": self.world}


@attrs.frozen
class Case:
    """One interleaving of a search: what :func:`properties.systems.run` needs."""

    seed: int
    config: Config
    steps: int
    faults: str  # the fault profile
    mix: str = "default"  # the swarm world's fault mix
    max_faults: int = 6
    quiet_rate: Optional[float] = None
    world: Optional[str] = None  # the swarm regimes, for the report
    reseed: tuple = ()  # a guided search's child (properties.explore.guided)


def _verdict(case: Case, features=None) -> Tuple[Optional[str], Optional[str]]:
    """(property, message) of the first problem of one interleaving of the implementation, or
    (None, None). The implementation's exceptions are the ``impl-no-crash`` property; an exception
    out of the model world still counts as a problem (``crash:<Exception>``). *features* (a
    :class:`properties.explore.guided.Features`) sees every step and gets ``result`` (the
    interleaving's RunResult, None after an exception) set."""
    from properties.systems import run

    on_step = None if features is None else features.on_step
    try:
        result = run("impl", case.seed, case.config, steps=case.steps, faults=case.faults,
                     max_faults=case.max_faults, quiet_rate=case.quiet_rate, hash_trace=False, on_step=on_step,
                     reseed=case.reseed, mix=case.mix)
    except Exception as e:  # noqa: BLE001 - a crash of the implementation is a detection
        return f"crash:{type(e).__name__}", str(e)[:200]
    if features is not None:
        features.result = result
    v = result.violation
    return (None, None) if v is None else (v.property, v.message)


class Search:
    """Runs interleavings under mutants; the unmutated verdicts are cached per interleaving.

    ``world="swarm"`` searches as the default campaign does (``groupcheck campaign``, the main
    job): interleaving ``i`` is seed ``i`` in the world :func:`properties.explore.swarm.draw`
    draws for it, so a mutant's verdict says what a user's first campaign would have found.
    ``world="fixed"``: seed ``i`` of the fixed world under fault profile ``profiles[i % n]``
    (mutants of :data:`MUTANT_WORLDS` in their own world)."""

    def __init__(self, config: Optional[Config] = None, steps: int = DEFAULT_STEPS,
                 profiles: Tuple[str, ...] = PROFILES, world: str = "fixed", search: str = "plain"):
        from properties.explore.guided import SEARCHES

        if world not in WORLDS:
            raise ValueError(f"world must be one of {', '.join(WORLDS)}, got {world!r}")
        if search not in SEARCHES:
            raise ValueError(f"search must be one of {', '.join(SEARCHES)}, got {search!r}")
        self.search = search
        self.config = config or Config()
        self.steps = steps
        self.profiles = tuple(profiles)
        self.world_kind = world
        self.baseline: Dict[Case, bool] = {}  # interleaving -> the unmutated implementation passes
        self.baseline_runs = 0

    def interleaving(self, i: int) -> Tuple[int, str]:
        return i, self.profiles[i % len(self.profiles)]

    def world(self, name: str) -> Config:
        """The fixed world mutant *name* is searched in (MUTANT_WORLDS, else the search's config)."""
        overrides = MUTANT_WORLDS.get(name)
        return attrs.evolve(self.config, **overrides) if overrides else self.config

    def case(self, name: str, i: int, spec=None) -> Case:
        """Interleaving *i*, or the guided search's *spec* of it (its world seed, reseed points and
        step budget)."""
        seed, reseed = (i, ()) if spec is None else (spec.world_seed, spec.reseed)
        if self.world_kind == "swarm":
            from properties.explore.swarm import draw

            w = draw(seed, self.config)
            label = w.label() if spec is None or spec.parent is None else f"{w.label()} search=child"
            return Case(seed, w.config, spec.steps if spec is not None and spec.steps else w.steps, w.faults, w.mix,
                        w.max_faults, w.quiet_rate, label, reseed)
        seed, faults = self.interleaving(seed)
        steps = spec.steps if spec is not None and spec.steps else self.steps
        return Case(seed, self.world(name), steps, faults, reseed=reseed)

    def baseline_passes(self, seed_or_case, faults: Optional[str] = None, config: Optional[Config] = None) -> bool:
        case = seed_or_case if isinstance(seed_or_case, Case) else \
            Case(seed_or_case, config or self.config, self.steps, faults)
        if case not in self.baseline:
            self.baseline_runs += 1
            self.baseline[case] = _verdict(case)[0] is None
        return self.baseline[case]

    def hunt(self, name: str, budget: int, progress: Optional[Callable[[int], None]] = None, first: int = 0) -> Outcome:
        """Interleavings under mutant *name* until one kills it, at most *budget*, from interleaving
        *first* on (a plain search only: interleaving i is seed i, so a known kill can be checked
        without running the ones before it). A guided search (``search="guided"``) breeds from the
        interleavings under the mutant that reached something new, round by round, as ``groupcheck
        campaign`` does (:mod:`properties.explore.guided`). The outcome counts interleavings from
        the first one (the kill's index is ``first + interleavings``)."""
        from properties.explore.guided import Corpus, Features

        if first and self.search == "guided":
            raise ValueError("a guided search starts at its first interleaving (first=0)")
        start = time.perf_counter()
        corpus = Corpus(0) if self.search == "guided" else None
        offers: list = []  # this round's (spec, features, walked, steps), offered when it ends
        for i in range(first, first + budget):
            spec = None
            if corpus is not None:
                if i > 0 and corpus.round_of(i) != corpus.round_of(i - 1):
                    for offer in offers:
                        corpus.offer(*offer)
                    offers = []
                spec = corpus.spec(i)
            case = self.case(name, i, spec)
            features = Features() if corpus is not None else None
            with applied(name):
                prop, message = _verdict(case, features)
            if features is not None and features.result is not None:
                r = features.result
                offers.append((spec, features.keys(r), r.walked if r.walked is not None else r.steps, case.steps))
            if progress is not None:
                progress(i + 1 - first)
            if prop is not None and self.baseline_passes(case):
                return Outcome(name, True, i + 1 - first, time.perf_counter() - start, prop, case.seed, case.faults,
                               message, case.world)
        return Outcome(name, False, budget, time.perf_counter() - start, None)


# ============================================================================================
# Command line
# ============================================================================================

def add_parser(subparsers) -> argparse.ArgumentParser:
    from properties.errors import int_at_least
    from properties.explore.guided import SEARCHES

    p = subparsers.add_parser("mutants", help="mutation analysis of the implementation (impl/)")
    p.add_argument("--budget", type=int_at_least("--budget", 1), default=DEFAULT_BUDGET,
                   help=f"interleavings per mutant at most (default {DEFAULT_BUDGET}, the default campaign's)")
    p.add_argument("--world", choices=WORLDS, default="swarm",
                   help="swarm: interleaving i is seed i of the default campaign, in the world it draws "
                        "(default); fixed: seed i of the fixed world, fault profiles cycled (--faults)")
    p.add_argument("--search", choices=SEARCHES, default="plain",
                   help="plain: interleaving i is seed i, as groupcheck campaign searches by default; guided: "
                        "a quarter of every round after the first is bred from the interleavings that reached "
                        "something new, as groupcheck campaign --search guided does")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="run only this mutant (repeatable); see --list")
    p.add_argument("--faults", action="append", default=[], metavar="PROFILE",
                   help=f"--world fixed: fault profiles to cycle through (repeatable; default {' '.join(PROFILES)})")
    p.add_argument("--steps", type=int_at_least("--steps", 1), default=DEFAULT_STEPS,
                   help="--world fixed: random events per interleaving")
    p.add_argument("--unreached", action="store_true",
                   help="also run the mutants the world is known not to reach (see --list)")
    p.add_argument("--all", action="store_true", help="run every mutant, the unreached ones too")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--json", action="store_true", help="print a JSON array of results")
    p.add_argument("--out", metavar="FILE", help="also write the results as a Markdown report to FILE")
    return p


def median(values: List[float]) -> Optional[float]:
    return statistics.median(values) if values else None


def summary(outcomes: List[Outcome]) -> dict:
    """Killed count and share, and the median time to the first counterexample over the killed.
    ``share`` counts every mutant run; ``share_distinguishable`` leaves out the survivors shown
    :data:`EQUIVALENT` (no run can kill them), the usual mutation score."""
    killed = [o for o in outcomes if o.killed]
    equivalent = [o.name for o in outcomes if not o.killed and o.name in EQUIVALENT]
    distinguishable = len(outcomes) - len(equivalent)
    return {
        "mutants": len(outcomes),
        "killed": len(killed),
        "share": len(killed) / len(outcomes) if outcomes else 0.0,
        "equivalent": equivalent,
        "share_distinguishable": len(killed) / distinguishable if distinguishable else 0.0,
        "median_interleavings": median([o.interleavings for o in killed]),
        "median_seconds": median([o.seconds for o in killed]),
        "survived": [o.name for o in outcomes if not o.killed],
    }


def score_line(s: dict) -> str:
    """``K/N killed (x %)``, and with equivalent survivors ``; K/N-E (y %) of those a run can tell
    apart (E equivalent)``."""
    line = f"{s['killed']}/{s['mutants']} killed ({100 * s['share']:.1f} %)"
    if s["equivalent"]:
        line += (f"; {s['killed']}/{s['mutants'] - len(s['equivalent'])} ({100 * s['share_distinguishable']:.1f} %) "
                 f"of those a run can tell apart ({len(s['equivalent'])} equivalent: {', '.join(s['equivalent'])})")
    return line


def markdown(outcomes: List[Outcome], args, seconds: float) -> str:
    """The mutation report: what the search kills, how fast, by which property."""
    s = summary(outcomes)
    world = ("the default campaign (interleaving i = seed i in its swarm world)" if args.world == "swarm"
             else f"the fixed world, fault profiles {', '.join(args.faults or PROFILES)} in turn")
    if getattr(args, "search", "plain") == "guided":
        world = (("the swarm worlds" if args.world == "swarm" else world) + ", guided as groupcheck campaign "
                 "--search guided is: after the first round of 200, the last 50 of every round are bred from "
                 "the interleavings that reached something new")
    lines = [
        "# Mutation report",
        "",
        f"Search: {world}; at most {args.budget} interleavings per mutant. A mutant is killed by the "
        "first interleaving where the mutated implementation reports a violation that the unmutated "
        "one does not.",
        "",
        f"- **{score_line(s)}** in {seconds:.0f} s",
        f"- median to the first counterexample (killed mutants): {_fmt(s['median_interleavings'])} "
        f"interleavings, {_fmt(s['median_seconds'], 1)} s",
        f"- survived: {', '.join(s['survived']) or 'none'}",
        "",
        "| mutant | kind | source | killed | interleavings | seconds | property | seed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        m = ALL[o.name]
        lines.append(f"| `{o.name}` | {m.kind} | {m.source or '-'} | {'yes' if o.killed else '**no**'} | "
                     f"{o.interleavings} | {o.seconds:.1f} | {o.property or '-'} | "
                     f"{'-' if o.seed is None else o.seed} |")
    lines += ["", "What each mutant does:", ""]
    lines += [f"- `{o.name}`: {ALL[o.name].description} (`{ALL[o.name].target}`)" for o in outcomes]
    return "\n".join(lines) + "\n"


def _fmt(value: Optional[float], digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def cmd_mutants(args) -> int:
    from properties.errors import UsageError
    from properties.progress import Progress

    unknown = [n for n in args.only if n not in ALL]
    if unknown:
        raise UsageError(f"unknown mutant {unknown[0]!r}; known mutants: {', '.join(ALL)}")
    bad = [f for f in args.faults if f not in PROFILES]
    if bad:
        raise UsageError(f"--faults must be one of {', '.join(PROFILES)}, got {bad[0]!r}")
    if args.world == "swarm" and args.faults:
        raise UsageError("--faults cycles fault profiles through the fixed world: use it with --world fixed "
                         "(a swarm interleaving draws its own)")
    if args.list:
        for m in ALL.values():
            print(f"{m.name}: {m.description} [{m.kind}; {m.target}]" + (f" ({m.source})" if m.source else ""))
            if m.name in EQUIVALENT:
                print(f"    {WHY_UNREACHED[m.name]} (run with --only or --unreached)")
            elif m.name in UNREACHED:
                print(f"    not reached by the world (run with --only or --unreached): {WHY_UNREACHED[m.name]}")
        return 0
    out = None
    if args.out:
        from pathlib import Path

        out = Path(args.out)
        if out.exists() and out.is_dir():
            raise UsageError(f"--out must name a file, got the directory {args.out!r}")
        if not out.parent.exists():
            raise UsageError(f"--out: the directory {str(out.parent)!r} does not exist")
    names = list(dict.fromkeys(args.only)) or list(MUTANTS) + (list(UNREACHED) if args.unreached or args.all else [])
    search = Search(steps=args.steps, profiles=tuple(dict.fromkeys(args.faults)) or PROFILES, world=args.world,
                    search=args.search)
    outcomes = []
    total = 0
    wall = time.perf_counter()
    line = Progress(len(names))  # on stderr: in place on a terminal, whole lines in a log
    for k, name in enumerate(names, 1):

        def progress(i, k=k, name=name):
            if line.due():
                line.write(f"mutant {k}/{len(names)} {name}: {i} interleavings ({total + i} in all)", final=False)

        outcome = search.hunt(name, args.budget, progress)
        total += outcome.interleavings
        outcomes.append(outcome)
        where = f"faults {outcome.faults}" if args.world == "fixed" else f"world {outcome.world}"
        verdict = (f"killed by {outcome.property} after {outcome.interleavings} interleavings "
                   f"(seed {outcome.seed}, {where})" if outcome.killed
                   else f"SURVIVED {outcome.interleavings} interleavings")
        line.write(f"mutant {k}/{len(names)} {name}: {verdict}, {outcome.seconds:.1f} s")
    seconds = time.perf_counter() - wall
    s = summary(outcomes)
    if out is not None:
        out.write_text(markdown(outcomes, args, seconds))
    if args.json:
        print(json.dumps([o.as_dict() for o in outcomes]))
    else:
        width = max(len(o.name) for o in outcomes)
        print(f"{'mutant':<{width}}  killed  interleavings  seconds  property")
        for o in outcomes:
            print(f"{o.name:<{width}}  {'yes' if o.killed else 'NO':<6}  {o.interleavings:>13}  {o.seconds:>7.1f}  "
                  f"{o.property or '-'}")
        print(f"{score_line(s)} in {seconds:.1f} s "
              f"({total} interleavings under mutants, {search.baseline_runs} unmutated baseline runs); "
              f"median to the first counterexample: {_fmt(s['median_interleavings'])} interleavings, "
              f"{_fmt(s['median_seconds'], 1)} s")
        if s["survived"]:
            print("survived: " + ", ".join(s["survived"]))
        if out is not None:
            print(f"report: {out}")
    return 0 if all(o.killed for o in outcomes) else 1
