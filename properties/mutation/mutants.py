"""Mutation analysis of the implementation (``groupcheck mutants``, issue 3).

A *mutant* is one realistic bug in ``impl/`` — the kind a Kafka engineer could write — applied at
run time by :func:`applied`, which replaces one function or method with a copy of it that differs
in exactly one decision (marked ``# MUTANT:``) and restores the original on exit, also when the
body raises. Files on disk are never touched.

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

``groupcheck mutants [--budget N] [--search plain|guided] [--only NAME]... [--faults PROFILE]...
[--unreached] [--list] [--json]`` (``--search guided`` hunts as ``groupcheck campaign --search
guided`` does, breeding from the interleavings under the mutant that reached something new): exit 0 if every mutant run was killed, 1 if one survived, 2 on a usage error. Progress
goes to stderr; ``--json`` prints an array of ``{name, killed, interleavings, seconds, property,
seed, faults}`` (``property`` is the property that caught the mutant: an exception raised by the
implementation is ``impl-no-crash``, an event it never finishes ``impl-no-hang``; ``crash:<Exception>``
is left for an exception out of the model world itself).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections import OrderedDict
from typing import Callable, Dict, List, Optional, Tuple

import attrs

from model.config import Config
from properties.explore.walker import DEFAULT_STEPS

DEFAULT_BUDGET = 2000  # the default campaign's interleavings (issue 14's measure of power)
PROFILES = ("none", "network", "all")
WORLDS = ("swarm", "fixed")


@attrs.frozen
class Mutant:
    name: str
    description: str
    target: str  # dotted path of the replaced function or method
    kind: str  # the kind of bug
    _replacement: Callable[[], Callable] = attrs.field(repr=False)  # builds the mutated function
    source: str = ""  # the public bug history it comes from (a JIRA or an issue), if it has one

    def owner_and_attr(self) -> Tuple[object, str]:
        import importlib

        parts = self.target.split(".")
        for i in range(len(parts) - 1, 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for p in parts[i:-1]:
                obj = getattr(obj, p)
            return obj, parts[-1]
        raise ValueError(f"cannot resolve {self.target!r}")


# ============================================================================================
# The mutated functions. Each is the original body with one change, marked "# MUTANT:".
# ============================================================================================

# ---- ConsumerNetworkClient (§4.1) -----------------------------------------------------------

def _unsent_expiry_ge():
    def remove_expired_requests(self, now):
        expired_requests = []
        for requests in self._unsent.values():
            while requests:
                request = requests[0]
                elapsed_ms = now - request.created_time_ms
                if elapsed_ms < 0:
                    elapsed_ms = 0
                if elapsed_ms >= request.request_timeout_ms:  # MUTANT: >= instead of >
                    expired_requests.append(request)
                    requests.popleft()
                else:
                    break
        return expired_requests
    return remove_expired_requests


def _unsent_expiry_no_node_stop():
    def remove_expired_requests(self, now):
        expired_requests = []
        for requests in self._unsent.values():
            for request in list(requests):  # MUTANT: scans the whole queue, no stop at the first live request
                elapsed_ms = now - request.created_time_ms
                if elapsed_ms < 0:
                    elapsed_ms = 0
                if elapsed_ms > request.request_timeout_ms:
                    expired_requests.append(request)
                    requests.remove(request)
        return expired_requests
    return remove_expired_requests


def _unsent_expiry_global_stop():
    def remove_expired_requests(self, now):
        expired_requests = []
        for requests in self._unsent.values():
            while requests:
                request = requests[0]
                elapsed_ms = now - request.created_time_ms
                if elapsed_ms < 0:
                    elapsed_ms = 0
                if elapsed_ms > request.request_timeout_ms:
                    expired_requests.append(request)
                    requests.popleft()
                else:
                    return expired_requests  # MUTANT: stops the whole scan, not just this node's queue
        return expired_requests
    return remove_expired_requests


def _check_disconnects_keeps_unsent():
    def check_disconnects(self, now):
        # MUTANT: the unsent requests of a node whose connection failed are not failed; they stay
        # queued until they expire or the node reconnects
        return None
    return check_disconnects


def _check_disconnects_fails_in_place():
    from impl.network.network_client import ClientResponse

    def check_disconnects(self, now):
        client = self.client
        for node in self.unsent.nodes():
            if client.connection_failed(node):
                requests = self.unsent.request_iterator(node)  # MUTANT: the queue is not removed first
                for request in list(requests):
                    handler = request.callback
                    authentication_exception = client.authentication_exception(node)
                    handler.on_complete(ClientResponse(
                        request.make_header(), handler, request.destination,
                        request.created_time_ms, now, True, None, authentication_exception, None))
    return check_disconnects


def _pending_disconnects_not_disconnected():
    from impl.errors import DisconnectException

    def _handle_pending_disconnects(self):
        pending = self.pending_disconnects
        while pending:
            node = pending.popleft()
            self._fail_unsent_requests(node, DisconnectException.INSTANCE)
            # MUTANT: self.client.disconnect(node.id) forgotten: the connection and its in-flight
            # requests stay
    return _handle_pending_disconnects


def _completions_lifo():
    def _fire_pending_completed_requests(self):
        pending = self.pending_completion
        completed_requests_fired = False
        while pending:
            completion_handler = pending.pop()  # MUTANT: newest first (pop instead of popleft)
            completion_handler.fire_completion()
            completed_requests_fired = True
        if completed_requests_fired:
            self.client.wakeup()
    return _fire_pending_completed_requests


# ---- RequestFuture (§4.2) --------------------------------------------------------------------

def _future_listeners_kept_fire_success():
    def _fire_success(self):
        value = self._result
        for listener in list(self._listeners):  # MUTANT: listeners are iterated, not polled: they stay registered
            listener.on_success(value)
    return _fire_success


def _future_listeners_kept_fire_failure():
    def _fire_failure(self):
        e = self._result
        for listener in list(self._listeners):  # MUTANT: listeners are iterated, not polled: they stay registered
            listener.on_failure(e)
    return _fire_failure


def _future_late_listener_dropped():
    def add_listener(self, listener):
        self._listeners.append(listener)
        # MUTANT: a future that is already complete does not fire the new listener
    return add_listener


# ---- NetworkClient (§4.3) --------------------------------------------------------------------

def _inflight_timeout_ignored():
    def _handle_timed_out_requests(self, responses, now):
        # MUTANT: an in-flight request past its timeout never disconnects the node
        return None
    return _handle_timed_out_requests


def _inflight_timeout_from_creation():
    def nodes_with_timed_out_requests(self, now):
        out = []
        for node, q in self._requests.items():
            for r in q:
                if r.time_elapsed_since_create_ms(now) > r.request_timeout_ms:  # MUTANT: since creation, not since send
                    out.append(node)
                    break
        return out
    return nodes_with_timed_out_requests


def _can_send_more_ignores_send_completed():
    def can_send_more(self, node):
        q = self._requests.get(node)
        # MUTANT: does not wait for the newest send to complete
        return (not q) or len(q) < self.max_in_flight_requests_per_connection
    return can_send_more


def _reconnect_ignores_backoff():
    from impl.network.network_client import ConnectionState

    def can_connect(self, node_id, now):
        state = self._node_state.get(node_id)
        if state is None:
            return True
        return ConnectionState.is_disconnected(state.state)  # MUTANT: the reconnect backoff is not checked
    return can_connect


def _reconnect_backoff_gt():
    from impl.network.network_client import ConnectionState

    def can_connect(self, node_id, now):
        state = self._node_state.get(node_id)
        if state is None:
            return True
        return (ConnectionState.is_disconnected(state.state)
                and now - state.last_connect_attempt_ms > state.reconnect_backoff_ms)  # MUTANT: > instead of >=
    return can_connect


# ---- client coordinator (§3) -----------------------------------------------------------------

def _heartbeat_stale_response_resets():
    from impl.coordinator.abstract_coordinator import MemberState, group_authorization_exception
    from impl.errors import Errors, KafkaException

    def handle(self, heartbeat_response, future):
        c = self.coordinator
        error = Errors.for_code(heartbeat_response.error_code)
        if error is Errors.NONE:
            future.complete(None)
        elif error is Errors.COORDINATOR_NOT_AVAILABLE or error is Errors.NOT_COORDINATOR:
            c.mark_coordinator_unknown(False, "error response " + error.name)
            future.raise_(error)
        elif error is Errors.REBALANCE_IN_PROGRESS:
            if c.state is MemberState.STABLE:
                c.request_rejoin("group is already rebalancing")
                future.raise_(error)
            else:
                future.complete(None)
        elif error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
            # MUTANT: no generationUnchanged() check: an answer to a heartbeat of an older
            # generation resets the member
            c.reset_state_on_response_error("Heartbeat", error, error is not Errors.ILLEGAL_GENERATION)
            future.raise_(error)
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            future.raise_(group_authorization_exception(c.rebalance_config.group_id))
        else:
            future.raise_(KafkaException("Unexpected error in heartbeat response: " + error.message))
    return handle


def _heartbeat_while_unjoined():
    from impl.coordinator.abstract_coordinator import _HeartbeatListener

    def run_once(self):
        c = self.coordinator
        try:
            if self.closed:
                return "closed"
            if not self.enabled:
                return "disabled"
            if self.wait_until is not None:
                if c.time.milliseconds() < self.wait_until:
                    return "waiting"
                self.wait_until = None
            if self.has_failed():  # MUTANT: c.state.has_not_joined_group() is not checked
                self.disable()
                return "disable"
            c.client.poll_no_wakeup()
            now = c.time.milliseconds()
            if c.coordinator_unknown():
                if c.find_coordinator_future is not None:
                    c.clear_find_coordinator_future()
                    self.wait_until = now + c.rebalance_config.retry_backoff_ms
                    tag = "clear-lookup"
                else:
                    c.lookup_coordinator()
                    tag = "lookup"
                return tag
            if c.heartbeat.session_timeout_expired(now):
                c.mark_coordinator_unknown(False, "session timed out without receiving a heartbeat response")
                return "session-expired"
            if c.heartbeat.poll_timeout_expired(now):
                c.maybe_leave_group("consumer poll timeout has expired.")
                return "poll-expired"
            if not c.heartbeat.should_heartbeat(now):
                return "not-due"
            c.heartbeat.sent_heartbeat(now)
            heartbeat_future = c.send_heartbeat_request()
            heartbeat_future.add_listener(_HeartbeatListener(self))
            return "heartbeat"
        except Exception as e:  # noqa: BLE001 - as the original
            self.failed = e
            self.closed = True
            return "failed"
    return run_once


def _join_timeout_not_extended():
    def join_group_request_timeout_ms(self):
        # MUTANT: the JoinGroup uses request.timeout.ms, not max(request timeout, rebalance timeout + 5000)
        return self.client.default_request_timeout_ms()
    return join_group_request_timeout_ms


def _commit_without_generation():
    from impl.coordinator.consumer_coordinator import (
        NO_GENERATION, NO_LEADER_EPOCH, CommitFailedException, OffsetCommitRequestData,
        OffsetCommitRequestPartition, OffsetCommitRequestTopic, OffsetCommitResponseHandler,
        RebalanceInProgressException)
    from impl.errors import IllegalArgumentException
    from impl.future import RequestFuture

    def send_offset_commit_request(self, offsets):
        if not offsets:
            return RequestFuture.void_success()
        coordinator = self.check_and_get_coordinator()
        if coordinator is None:
            return RequestFuture.coordinator_not_available()
        request_topic_data = {}
        for tp, offset_and_metadata in offsets.items():
            if offset_and_metadata.offset < 0:
                return RequestFuture.failure(IllegalArgumentException("Invalid offset: %d" % offset_and_metadata.offset))
            topic = request_topic_data.get(tp.topic)
            if topic is None:
                topic = request_topic_data[tp.topic] = OffsetCommitRequestTopic(tp.topic)
            topic.partitions.append(OffsetCommitRequestPartition(
                partition_index=tp.partition,
                committed_offset=offset_and_metadata.offset,
                committed_metadata=offset_and_metadata.metadata,
                committed_leader_epoch=NO_LEADER_EPOCH if offset_and_metadata.leader_epoch is None
                else offset_and_metadata.leader_epoch))
        if self.subscriptions.has_auto_assigned_partitions():
            generation = self.generation_if_stable()
            group_instance_id = self.rebalance_config.group_instance_id
            if generation is None:
                if self.rebalance_in_progress():
                    return RequestFuture.failure(RebalanceInProgressException(
                        "Offset commit cannot be completed since the consumer is undergoing a rebalance"))
                return RequestFuture.failure(CommitFailedException(
                    "Offset commit cannot be completed since the consumer is not part of an active group"))
            generation = NO_GENERATION  # MUTANT: the commit does not carry the member's generation
        else:
            generation = NO_GENERATION
            group_instance_id = None
        data = OffsetCommitRequestData(group_id=self.rebalance_config.group_id,
                                       generation_id=generation.generation_id,
                                       member_id=generation.member_id,
                                       group_instance_id=group_instance_id,
                                       topics=list(request_topic_data.values()))
        return self.client.send(coordinator, data).compose(
            OffsetCommitResponseHandler(self, offsets, generation))
    return send_offset_commit_request


# ---- server: GroupCoordinator / GroupMetadata (§1) -------------------------------------------

def _generation_not_bumped():
    from impl.server.group_metadata import COMPLETING_REBALANCE, EMPTY

    def init_next_generation(self, now_ms=None):
        # MUTANT: self.generation_id += 1 forgotten
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition_to(COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.transition_to(EMPTY)
        self.current_state_timestamp = now_ms
        self.clear_pending_sync_members()
    return init_next_generation


def _sync_accepts_stale_generation():
    from impl.errors import Errors
    from impl.server.group_metadata import DEAD

    def validate_sync_group(self, group, generation_id, member_id, protocol_type, protocol_name, group_instance_id):
        if group.state is DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = self.validate_current_member(group, member_id, group_instance_id)
        if error is not None:
            return error
        # MUTANT: validate_generation(group, generation_id) is not called
        if protocol_type is not None and group.protocol_type != protocol_type:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and group.protocol_name != protocol_name:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None
    return validate_sync_group


def _commit_accepts_stale_generation():
    from impl.errors import Errors
    from impl.protocol import UNKNOWN_MEMBER_ID
    from impl.server.group_metadata import DEAD, EMPTY

    def validate_offset_commit(self, group, generation_id, member_id, group_instance_id):
        if group.state is DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.state is EMPTY:
            return None
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
            error = self.validate_current_member(group, member_id, group_instance_id)
            if error is not None:
                return error
            return None  # MUTANT: the generation is not validated
        return Errors.UNKNOWN_MEMBER_ID
    return validate_offset_commit


def _commit_accepts_unknown_member():
    from impl.errors import Errors
    from impl.protocol import UNKNOWN_MEMBER_ID
    from impl.server.group_metadata import DEAD, EMPTY

    def validate_offset_commit(self, group, generation_id, member_id, group_instance_id):
        if group.state is DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.state is EMPTY:
            return None
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
            # MUTANT: validate_current_member is not called: a member that was removed may commit
            return self.validate_generation(group, generation_id)
        return Errors.UNKNOWN_MEMBER_ID
    return validate_offset_commit


def _leader_not_repicked():
    def remove(self, member_id):
        member = self.members.pop(member_id, None)
        if member is not None:
            self._dec_supported_protocols(member)
            if member.awaiting_join_callback is not None:
                self.num_members_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        # MUTANT: the leader is not re-picked when the leader is removed
        self.pending_members.pop(member_id, None)
        self.pending_sync_members.pop(member_id, None)
    return remove


def _heartbeat_none_while_preparing():
    from impl.errors import Errors, IllegalStateException
    from impl.protocol import HeartbeatResponseData
    from impl.server.group_coordinator import HEARTBEAT, _NONE
    from impl.server.group_metadata import COMPLETING_REBALANCE, EMPTY, PREPARING_REBALANCE, STABLE

    def handle_heartbeat(self, group_id, member_id, group_instance_id, generation_id, response_callback):
        error = self.validate_group_status(group_id, HEARTBEAT)
        if error is not None:
            if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
                error = _NONE
            response_callback(HeartbeatResponseData(error_code=error.value))
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            error = Errors.UNKNOWN_MEMBER_ID
        else:
            error = self.validate_heartbeat(group, generation_id, member_id, group_instance_id)
            if error is None:
                state = group.state
                if state is EMPTY:
                    error = Errors.UNKNOWN_MEMBER_ID
                elif state is COMPLETING_REBALANCE or state is STABLE:
                    self.complete_and_schedule_next_heartbeat_expiration(group, group.members[member_id])
                    error = _NONE
                elif state is PREPARING_REBALANCE:
                    self.complete_and_schedule_next_heartbeat_expiration(group, group.members[member_id])
                    error = _NONE  # MUTANT: NONE instead of REBALANCE_IN_PROGRESS
                else:
                    raise IllegalStateException("Reached unexpected condition for Dead group " + group_id)
        response_callback(HeartbeatResponseData(error_code=error.value))
    return handle_heartbeat


def _pending_members_never_expire():
    def add_pending_member_expiration(self, group, pending_member_id, timeout_ms):
        # MUTANT: no DelayedHeartbeat is scheduled for a pending (MEMBER_ID_REQUIRED) member
        return None
    return add_pending_member_expiration


def _session_expiry_off_by_one():
    from impl.server.group_coordinator import DelayedHeartbeat, member_key

    def complete_and_schedule_next_expiration(self, group, member, timeout_ms):
        key = member_key(group.group_id, member.member_id)
        member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(key)
        member.heartbeat_satisfied = False
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member.member_id, False, timeout_ms - 1), (key,))  # MUTANT: timeout - 1
    return complete_and_schedule_next_expiration


def _follower_sync_rejected():
    from impl.errors import Errors
    from impl.server.group_coordinator import GroupCoordinator, sync_error
    from impl.server.group_metadata import COMPLETING_REBALANCE

    correct = GroupCoordinator.do_sync_group

    def do_sync_group(self, group, generation_id, member_id, protocol_type, protocol_name, group_instance_id,
                      group_assignment, response_callback):
        if (group.state is COMPLETING_REBALANCE and not group.is_leader(member_id)
                and self.validate_sync_group(group, generation_id, member_id, protocol_type, protocol_name,
                                             group_instance_id) is None):
            # MUTANT: a follower that syncs before the leader is answered REBALANCE_IN_PROGRESS at once
            # instead of waiting for the leader's assignment
            self.remove_pending_sync_member(group, member_id)
            response_callback(sync_error(Errors.REBALANCE_IN_PROGRESS))
            return
        correct(self, group, generation_id, member_id, protocol_type, protocol_name, group_instance_id,
                group_assignment, response_callback)
    return do_sync_group


def _session_expiry_ignored():
    def on_expire_heartbeat(self, group, member_id, is_pending):
        # MUTANT: an expired session removes nobody (the DelayedHeartbeat fires and is ignored)
        return None
    return on_expire_heartbeat


def _join_ignores_pending_members():
    def has_all_members_joined(self):
        # MUTANT: members handed out with MEMBER_ID_REQUIRED (pending) do not hold back join completion
        return len(self.members) == self.num_members_awaiting_join
    return has_all_members_joined


def _non_rejoined_kept():
    def on_complete_join(self, group):
        from impl.server.group_metadata import DEAD, EMPTY
        from impl.server.group_coordinator import DelayedJoin, group_join_key, _ignore_store_error

        # MUTANT: dynamic members that did not rejoin are not removed at join completion
        if group.state is DEAD:
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            self.rebalance_purgatory.try_complete_else_watch(
                DelayedJoin(self, group, group.rebalance_timeout_ms()), (group_join_key(group.group_id),))
            return
        group.init_next_generation(self.time.milliseconds())
        if group.state is EMPTY:
            self.group_manager.store_group(group, {}, _ignore_store_error)
            return
        leader_id = group.leader_id
        for member in list(group.members.values()):
            member_id = member.member_id
            group.maybe_invoke_join_callback(member, self._join_result(group, member_id, member_id == leader_id))
            self.complete_and_schedule_next_heartbeat_expiration(group, member)
            member.is_new = False
            group.add_pending_sync_member(member_id)
        self.schedule_pending_sync(group)
    return on_complete_join


# ============================================================================================
# The catalogue of mutants
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
     f"{_CNC}.UnsentRequests.remove_expired_requests", "off-by-one", _unsent_expiry_ge),
    ("unsent_expiry_no_node_stop", "failExpiredRequests scans a node's whole queue instead of stopping at its first live request",
     f"{_CNC}.UnsentRequests.remove_expired_requests", "wrong loop exit", _unsent_expiry_no_node_stop),
    ("unsent_expiry_global_stop", "failExpiredRequests stops at the first live request of any node, leaving other nodes' expired requests",
     f"{_CNC}.UnsentRequests.remove_expired_requests", "wrong loop exit", _unsent_expiry_global_stop),
    ("disconnect_keeps_unsent", "checkDisconnects does not fail the unsent requests of a node whose connection failed",
     f"{_CNC}.ConsumerNetworkClient.check_disconnects", "missing step", _check_disconnects_keeps_unsent),
    ("disconnect_fails_in_place", "checkDisconnects fails the unsent requests without removing them, so they are sent and completed again",
     f"{_CNC}.ConsumerNetworkClient.check_disconnects", "future completed twice", _check_disconnects_fails_in_place),
    ("pending_disconnect_not_disconnected", "handlePendingDisconnects fails the coordinator's unsent requests but never disconnects it",
     f"{_CNC}.ConsumerNetworkClient._handle_pending_disconnects", "missing step", _pending_disconnects_not_disconnected),
    ("completions_lifo", "pending completions are fired newest first",
     f"{_CNC}.ConsumerNetworkClient._fire_pending_completed_requests", "wrong order", _completions_lifo),
    # RequestFuture
    ("future_listeners_refire", "a future's listeners stay registered after firing, so a late listener re-fires the earlier ones",
     "impl.future.RequestFuture._fire_success+_fire_failure", "listener fired twice", None),
    ("future_late_listener_dropped", "a listener added to a future that is already complete is never fired",
     "impl.future.RequestFuture.add_listener", "missing step", _future_late_listener_dropped),
    # NetworkClient
    ("inflight_timeout_ignored", "an in-flight request past its timeout never disconnects the node",
     f"{_NC}.NetworkClient._handle_timed_out_requests", "missing step", _inflight_timeout_ignored),
    ("inflight_timeout_from_creation", "the in-flight timeout is measured from the request's creation, not from its send",
     f"{_NC}.InFlightRequests.nodes_with_timed_out_requests", "wrong timestamp", _inflight_timeout_from_creation),
    ("send_before_previous_completed", "canSendMore does not wait for the channel's previous send to complete",
     f"{_NC}.InFlightRequests.can_send_more", "missing check", _can_send_more_ignores_send_completed),
    ("reconnect_ignores_backoff", "a disconnected node may be reconnected at once, without waiting for reconnect.backoff.ms",
     f"{_NC}.ClusterConnectionStates.can_connect", "missing check", _reconnect_ignores_backoff),
    ("reconnect_backoff_gt", "a disconnected node may be reconnected only after more than reconnect.backoff.ms (> instead of >=)",
     f"{_NC}.ClusterConnectionStates.can_connect", "off-by-one", _reconnect_backoff_gt),
    # client coordinator
    ("stale_heartbeat_resets", "a Heartbeat error answering an older generation resets the member (generation check missing)",
     f"{_AC}.HeartbeatResponseHandler.handle", "missing check", _heartbeat_stale_response_resets),
    ("heartbeat_while_unjoined", "the heartbeat thread keeps heartbeating after the member left its generation",
     f"{_AC}.HeartbeatThread.run_once", "missing check", _heartbeat_while_unjoined),
    ("join_timeout_not_extended", "JoinGroup is sent with request.timeout.ms instead of max(request timeout, rebalance timeout + 5000)",
     f"{_AC}.AbstractCoordinator.join_group_request_timeout_ms", "wrong timeout", _join_timeout_not_extended),
    ("commit_without_generation", "OffsetCommit is sent without the member's generation and member id",
     f"{_CC}.ConsumerCoordinator.send_offset_commit_request", "missing field", _commit_without_generation),
    # server
    ("generation_not_bumped", "join completion does not increment the generation",
     f"{_GM}.init_next_generation", "missing step", _generation_not_bumped),
    ("sync_accepts_stale_generation", "SyncGroup does not validate the generation",
     f"{_GC}.validate_sync_group", "missing check", _sync_accepts_stale_generation),
    ("commit_accepts_stale_generation", "OffsetCommit does not validate the generation",
     f"{_GC}.validate_offset_commit", "missing check", _commit_accepts_stale_generation),
    ("commit_accepts_unknown_member", "OffsetCommit does not check that the member is in the group",
     f"{_GC}.validate_offset_commit", "missing check", _commit_accepts_unknown_member),
    ("leader_not_repicked", "removing the leader leaves leader_id pointing at the removed member",
     f"{_GM}.remove", "missing step", _leader_not_repicked),
    ("heartbeat_none_while_preparing", "Heartbeat is answered NONE during PreparingRebalance",
     f"{_GC}.handle_heartbeat", "wrong error code", _heartbeat_none_while_preparing),
    ("pending_members_never_expire", "a pending (MEMBER_ID_REQUIRED) member gets no expiry, so it holds back join completion",
     f"{_GC}.add_pending_member_expiration", "missing step", _pending_members_never_expire),
    ("session_expiry_early", "the session deadline is armed 1 ms early (timeout - 1)",
     f"{_GC}.complete_and_schedule_next_expiration", "off-by-one", _session_expiry_off_by_one),
    ("session_expiry_ignored", "an expired session removes nobody",
     f"{_GC}.on_expire_heartbeat", "missing step", _session_expiry_ignored),
    ("follower_sync_rejected", "a follower's SyncGroup before the leader's is answered REBALANCE_IN_PROGRESS",
     f"{_GC}.do_sync_group", "wrong error code", _follower_sync_rejected),
    ("join_ignores_pending_members", "join completion does not wait for pending (MEMBER_ID_REQUIRED) members",
     f"{_GM}.has_all_members_joined", "missing check", _join_ignores_pending_members),
    ("non_rejoined_kept", "members that did not rejoin are kept at join completion",
     f"{_GC}.on_complete_join", "missing step", _non_rejoined_kept),
]


# Realistic bugs the world's random search does not reach within the default budget (the model's
# side of the same story is in model/variants.py, UNREACHED). They stay applicable (``--only NAME``
# or ``--unreached``); tests/test_mutants.py shows each one changes what its target does.
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
        "interleavings (2026-11-25)",
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


def _all_defs() -> list:
    """Every mutant row, each with its source ("" for the first mutants, written from Kafka's code
    rather than from a bug report): this module's, then :mod:`properties.mutation.history`'s."""
    from properties.mutation.history import HISTORY_DEFS

    return [row if len(row) == 6 else row + ("",) for row in _DEFS] + list(HISTORY_DEFS)


def _build(unreached: bool) -> "OrderedDict[str, Mutant]":
    out: "OrderedDict[str, Mutant]" = OrderedDict()
    for name, description, target, kind, replacement, source in _all_defs():
        if (name in _UNREACHED_NAMES) == unreached:
            out[name] = Mutant(name, description, target, kind, replacement, source)
    return out


#: the mutants ``groupcheck mutants`` runs by default: every one is killed within the default budget
MUTANTS: "OrderedDict[str, Mutant]" = _build(False)
#: realistic mutants the world does not reach (yet); run with ``--only NAME`` or ``--unreached``
UNREACHED: "OrderedDict[str, Mutant]" = _build(True)
ALL: "OrderedDict[str, Mutant]" = OrderedDict(list(MUTANTS.items()) + list(UNREACHED.items()))


def _patches(mutant: Mutant) -> List[Tuple[object, str, Callable]]:
    """(owner, attribute, replacement) for every attribute the mutant replaces."""
    if mutant.name == "future_listeners_refire":
        from impl.future import RequestFuture

        return [(RequestFuture, "_fire_success", _future_listeners_kept_fire_success()),
                (RequestFuture, "_fire_failure", _future_listeners_kept_fire_failure())]
    owner, attr = mutant.owner_and_attr()
    return [(owner, attr, mutant._replacement())]


class UnknownMutant(KeyError):
    def __str__(self) -> str:
        return self.args[0]


def get(name: str) -> Mutant:
    try:
        return ALL[name]
    except KeyError:
        raise UnknownMutant(f"unknown mutant {name!r}; known mutants: {', '.join(ALL)}") from None


_MISSING = object()


@contextlib.contextmanager
def applied(name: str):
    """Apply the mutant *name* for the duration of the block; the original attributes are
    restored exactly (the very same objects, or their absence) on exit, also on exceptions."""
    mutant = get(name)
    patches = _patches(mutant)
    saved = []
    try:
        for owner, attr, new in patches:
            saved.append((owner, attr, vars(owner).get(attr, _MISSING)))
            new.__qualname__ = f"{getattr(owner, '__qualname__', owner)}.{attr} [mutant {name}]"
            setattr(owner, attr, new)
        yield mutant
    finally:
        for owner, attr, old in reversed(saved):
            if old is _MISSING:
                delattr(owner, attr)
            else:
                setattr(owner, attr, old)


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
    faults: str
    max_faults: int = 6
    quiet_rate: Optional[float] = None
    world: Optional[str] = None  # the swarm regimes, for the report
    reseed: tuple = ()  # a guided search's child (properties.explore.guided)
    mix: str = "default"  # the swarm world's fault mix


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
            return Case(seed, w.config, spec.steps if spec is not None and spec.steps else w.steps, w.faults,
                        w.max_faults, w.quiet_rate, label, reseed, w.mix)
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

def _positive_budget(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--budget must be an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--budget must be >= 1, got {value}")
    return value


def add_parser(subparsers) -> argparse.ArgumentParser:
    from properties.explore.guided import SEARCHES

    p = subparsers.add_parser("mutants", help="mutation analysis of the implementation (impl/)")
    p.add_argument("--budget", type=_positive_budget, default=DEFAULT_BUDGET,
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
    p.add_argument("--steps", type=_positive_budget, default=DEFAULT_STEPS,
                   help="--world fixed: random events per interleaving")
    p.add_argument("--unreached", action="store_true",
                   help="also run the mutants the world is known not to reach (see --list)")
    p.add_argument("--all", action="store_true", help="run every mutant, the unreached ones too")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--json", action="store_true", help="print a JSON array of results")
    p.add_argument("--out", metavar="FILE", help="also write the results as a Markdown report to FILE")
    return p


def median(values: List[float]) -> Optional[float]:
    ordered = sorted(values)
    if not ordered:
        return None
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


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
