"""Virtual members: raw group-protocol clients over TCP, one connection each.

A :class:`Link` is one connection (its *epoch* counts the member's connections, so an answer meant
for a connection that was closed is recognised). It writes requests with groupcheck's codec and
reads whatever frames arrive without blocking; a frame that does not decode is kept as the
:class:`impl.wire.WireError` value it is (the broker's bytes in hex), and a connection the broker
closes is an event, never an exception.

A :class:`VirtualMember` is what one member knows — its member id, generation, protocol, whether it
leads and which members it was told about — and turns a :class:`~properties.conform.schedule.Step`
into a request (in :mod:`impl.protocol`'s vocabulary) from that knowledge.
"""

from __future__ import annotations

import errno
import socket
from typing import Dict, List, Optional, Tuple

from impl import protocol as P
from impl.wire import FrameReader, WireError, decode_response, encode_request
from properties.live.exchange import connect as _connect

#: The topic every schedule subscribes to and commits (created by the launcher, or auto-created).
TOPIC = "groupcheck-conform"
SESSION_TIMEOUT_MS = 30_000
REBALANCE_TIMEOUT_MS = 30_000
MAX_FRAME = 16 * 1024 * 1024


def connect(address: Tuple[str, int], timeout_s: float) -> socket.socket:
    """A non-blocking connection to the broker (:func:`properties.live.exchange.connect`)."""
    sock = _connect(address, timeout_s)
    sock.setblocking(False)
    return sock


class Link:
    """One connection of one virtual member."""

    def __init__(self, address: Tuple[str, int], member: int, epoch: int, client_id: str, timeout_s: float) -> None:
        self.member = member
        self.epoch = epoch
        self.client_id = client_id
        self.sock = connect(address, timeout_s)
        self.reader = FrameReader(MAX_FRAME)
        self.correlation_id = 0
        self.inflight: Dict[int, Tuple[str, int, Optional[str]]] = {}  # correlation id -> (api, version, variant)
        self.closed = False

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, request, version: int, variant: Optional[str] = None, api: Optional[str] = None) -> int:
        """Write *request* (``impl.protocol``, or a kio object with its *api* named); its correlation id."""
        self.correlation_id += 1
        data = encode_request(request, version, self.correlation_id, self.client_id)
        self.sock.setblocking(True)
        try:
            self.sock.sendall(data)
        finally:
            self.sock.setblocking(False)
        self.inflight[self.correlation_id] = (api or request.api_key, version, variant)
        return self.correlation_id

    def read(self) -> List[tuple]:
        """Events since the last read: ``("response", api, version, body, variant)``,
        ``("undecodable", api, version, WireError)``, ``("closed", reason)``."""
        events: List[tuple] = []
        while not self.closed:
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as e:
                events.append(("closed", f"connection error: {errno.errorcode.get(e.errno, e)}"))
                self.close()
                break
            if not data:
                events.append(("closed", "the broker closed the connection"))
                self.close()
                break
            self.reader.feed(data)
        while True:
            payload = self.reader.next()
            if payload is None:
                break
            if isinstance(payload, WireError):
                events.append(("undecodable", "?", -1, payload))
                self.close()
                break
            correlation_id = int.from_bytes(bytes(payload[:4]), "big", signed=True) if len(payload) >= 4 else -1
            api, version, variant = self.inflight.pop(correlation_id, ("?", -1, None))
            if api == "?":
                events.append(("closed", f"a response with correlation id {correlation_id}, which no request had"))
                self.close()
                break
            decoded = decode_response(api, version, payload)
            if isinstance(decoded, WireError):
                events.append(("undecodable", api, version, decoded))
            else:
                events.append(("response", api, version, decoded.body, variant))
        return events

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass


#: What the corner variants of a step send (properties.conform.schedule): a member id no member
#: has, a session timeout below any broker's group.min.session.timeout.ms and one above Kafka's
#: group.max.session.timeout.ms (30 min), a protocol type and a protocol no other member offers,
#: and offset metadata over offset.metadata.max.bytes (4096).
UNKNOWN_ID = "no-such-member"
SHORT_SESSION_MS = 1
LONG_SESSION_MS = 86_400_000
FOREIGN_TYPE = "connect"
FOREIGN_PROTOCOL = "groupcheck-foreign"
OVERSIZED_METADATA = "m" * 5000


class VirtualMember:
    """What member *index* knows, and its current :class:`Link` (``None`` until it first speaks)."""

    def __init__(self, index: int, group_id: str, protocols: Tuple[str, ...], partitions: int,
                 session_timeout_ms: int = SESSION_TIMEOUT_MS, rebalance_timeout_ms: int = REBALANCE_TIMEOUT_MS,
                 instance_id: Optional[str] = None) -> None:
        self.index = index
        self.instance_id = instance_id  # group.instance.id of a static member (KIP-345), on every request
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.group_id = group_id
        self.protocol_names = protocols
        self.partitions = partitions
        self.client_id = f"conform-m{index}"
        self.member_id = ""
        self.generation = -1
        self.protocol_name: Optional[str] = None
        self.leader = False
        self.members_seen: List[str] = []  # the member ids a JoinGroup answer gave this member as leader
        self.metadata_version = 0
        self.link: Optional[Link] = None
        self.epochs = 0
        self.commits = 0

    @property
    def busy(self) -> bool:
        """A request is in flight on the open connection (a parked JoinGroup or SyncGroup)."""
        return self.link is not None and not self.link.closed and bool(self.link.inflight)

    def subscription(self) -> P.Subscription:
        # user_data says which member and which metadata version: every member's metadata differs,
        # and a "changed" join really changes it
        return P.Subscription(topics=[TOPIC], user_data=bytes([self.index, self.metadata_version % 256]))

    def protocols(self) -> List[P.JoinGroupRequestProtocol]:
        return [P.JoinGroupRequestProtocol(name=n, metadata=self.subscription()) for n in self.protocol_names]

    def request(self, action: str, variant: Optional[str]):
        """The request of a step, from what this member knows."""
        if action == "join":
            if variant == "fresh":
                self.forget()
            elif variant == "changed":
                self.metadata_version += 1
            protocols = self.protocols()
            if variant == "no-protocols":
                protocols = []
            elif variant == "foreign":
                protocols = [P.JoinGroupRequestProtocol(name=FOREIGN_PROTOCOL, metadata=self.subscription())]
            session = {"short-session": SHORT_SESSION_MS, "long-session": LONG_SESSION_MS}.get(
                variant, self.session_timeout_ms)
            return P.JoinGroupRequestData(group_id=self.group_id, session_timeout_ms=session,
                                          rebalance_timeout_ms=self.rebalance_timeout_ms,
                                          member_id=UNKNOWN_ID if variant == "unknown" else self.member_id,
                                          group_instance_id=self.instance_id,
                                          protocol_type=FOREIGN_TYPE if variant == "other-type" else "consumer",
                                          protocols=protocols)
        if action == "sync":
            assignments = []
            if self.leader:
                owners: Dict[str, List[int]] = {m: [] for m in self.members_seen}
                for p in range(self.partitions):
                    if self.members_seen:
                        owners[self.members_seen[p % len(self.members_seen)]].append(p)
                assignments = [P.SyncGroupRequestAssignment(
                    member_id=m, assignment=P.Assignment(partitions=[P.TopicPartition(TOPIC, p) for p in ps]))
                    for m, ps in owners.items()]
            generation = self.generation - 1 if variant == "stale" else self.generation
            return P.SyncGroupRequestData(group_id=self.group_id, generation_id=generation,
                                          member_id=UNKNOWN_ID if variant == "unknown" else self.member_id,
                                          group_instance_id=self.instance_id, protocol_type="consumer",
                                          protocol_name=FOREIGN_PROTOCOL if variant == "wrong-name"
                                          else self.protocol_name, assignments=assignments)
        if action == "heartbeat":
            generation, member_id = self._fenced(variant)
            return P.HeartbeatRequestData(group_id=self.group_id, generation_id=generation, member_id=member_id,
                                          group_instance_id=self.instance_id)
        if action == "commit":
            generation, member_id = self._fenced(variant)
            if variant == "simple":
                generation, member_id = -1, ""
            elif variant == "ahead":  # a generation the group has not reached (a group that does not exist yet)
                generation = self.generation + 1 if self.generation >= 0 else 1
            self.commits += 1
            partition = P.OffsetCommitRequestPartition(partition_index=self.index % self.partitions,
                                                       committed_offset=self.commits,
                                                       committed_metadata=OVERSIZED_METADATA if variant == "big-metadata"
                                                       else "")
            return P.OffsetCommitRequestData(group_id=self.group_id, generation_id=generation, member_id=member_id,
                                             group_instance_id=None if variant == "simple" else self.instance_id,
                                             topics=[P.OffsetCommitRequestTopic(name=TOPIC, partitions=[partition])])
        if action == "fetch":
            return P.OffsetFetchRequestData(group_id=self.group_id, topics=[
                P.OffsetFetchRequestTopic(name=TOPIC, partition_indexes=list(range(self.partitions)))])
        if action == "leave":
            if variant == "unknown":  # someone else's id: the member itself stays
                return P.LeaveGroupRequestData(group_id=self.group_id, members=[
                    P.MemberIdentity(member_id=UNKNOWN_ID, group_instance_id=None)])
            request = P.LeaveGroupRequestData(group_id=self.group_id,
                                              members=[P.MemberIdentity(member_id=self.member_id,
                                                                        group_instance_id=self.instance_id)])
            self.forget()
            return request
        raise ValueError(f"no request for action {action!r}")

    def _fenced(self, variant: Optional[str]) -> Tuple[int, str]:
        if variant == "stale":
            return self.generation - 1, self.member_id
        if variant == "unknown":
            return self.generation, UNKNOWN_ID
        return self.generation, self.member_id

    def forget(self) -> None:
        self.member_id = ""
        self.generation = -1
        self.protocol_name = None
        self.leader = False
        self.members_seen = []

    def learn(self, api: str, body, variant: Optional[str]) -> None:
        """Update what the member knows from an answer meant for its current connection (to a
        request of *variant*: an answer to a deliberately wrong id teaches nothing)."""
        if variant in ("unknown", "simple", "ahead", "short-session", "long-session", "wrong-name"):
            return
        if api == "JoinGroup":
            if body.error_code == 0:
                self.member_id = body.member_id
                self.generation = body.generation_id
                self.protocol_name = body.protocol_name
                self.leader = body.leader == body.member_id
                self.members_seen = [m.member_id for m in body.members] if self.leader else []
            elif body.error_code == 79 and body.member_id:  # MEMBER_ID_REQUIRED: use the id next time
                self.member_id = body.member_id
        elif api in ("SyncGroup", "Heartbeat", "OffsetCommit"):
            error = body.error_code if api != "OffsetCommit" else next(
                (p.error_code for t in body.topics for p in t.partitions if p.error_code), 0)
            if error == 25:  # UNKNOWN_MEMBER_ID: a real client resets its id and rejoins
                self.forget()
