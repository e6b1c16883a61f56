"""OffsetCommit answers that differ partition by partition (issue 14: "OffsetCommit of several
partitions with per-partition errors"): the application attaches metadata longer than the broker's
offset.metadata.max.bytes to some of the partitions it commits.

Kafka: GroupMetadataManager.storeOffsets filters those partitions out first (filteredOffsetMetadata);
with none left it answers OFFSET_METADATA_TOO_LARGE for every partition and appends nothing, else
it appends the rest and answers partition by partition: OFFSET_METADATA_TOO_LARGE for the filtered
ones, the append's (mapped) outcome for the others. ConsumerCoordinator.OffsetCommitResponseHandler
acts on the answer's first partition error and returns."""

from __future__ import annotations

import attrs
import pytest

from model import member as mbr
from model.config import Config
from model.errors import Errors
from model.group import handle_offset_commit
from model.messages import OffsetCommitRequest, OffsetCommitResponse
from model.world import step
from properties.catalogue import expected_commit_error
from properties.explore.walker import MIXES, walk
from properties.systems.differential import compare
from tests.helpers.group import CFG, never, only_reply, stable

TOO_LARGE = Errors.OFFSET_METADATA_TOO_LARGE


def _commit(group, member_id, generation, oversized, offsets=((0, 5), (1, 7)), now=0):
    request = OffsetCommitRequest("g", generation, member_id, offsets, oversized)
    return handle_offset_commit(group, request, "commit", now, CFG, never), request


def test_the_partitions_with_metadata_too_long_are_refused_and_the_others_committed():
    g, (a, b), now = stable()
    out, request = _commit(g, a, 1, (1,), now=now)
    assert only_reply(out).errors == ((0, Errors.NONE), (1, TOO_LARGE))
    assert out.committed == ((0, 5),)
    assert ("metadata_too_large", 1, 1) in out.notes
    assert expected_commit_error(g, request) == TOO_LARGE == only_reply(out).error
    out, _ = _commit(g, a, 1, (0,), now=now)
    assert only_reply(out).errors == ((0, TOO_LARGE), (1, Errors.NONE)) and out.committed == ((1, 7),)


def test_a_commit_whose_every_partition_is_too_long_appends_nothing():
    g, (a, b), now = stable()
    failing = attrs.evolve(g, append_errors=(Errors.NOT_ENOUGH_REPLICAS,))
    out, request = _commit(failing, a, 1, (0, 1), now=now)
    assert only_reply(out).errors == ((0, TOO_LARGE), (1, TOO_LARGE))
    assert out.committed == ()
    assert out.group.append_errors == (Errors.NOT_ENOUGH_REPLICAS,)  # no append, the failure still waits
    assert expected_commit_error(failing, request) == TOO_LARGE


def test_with_a_failed_append_the_valid_partitions_get_the_mapped_error_and_the_order_decides_the_first():
    g, (a, b), now = stable()
    failing = attrs.evolve(g, append_errors=(Errors.NOT_ENOUGH_REPLICAS,))
    out, request = _commit(failing, a, 1, (1,), now=now)
    assert only_reply(out).errors == ((0, Errors.COORDINATOR_NOT_AVAILABLE), (1, TOO_LARGE))
    assert only_reply(out).error == Errors.COORDINATOR_NOT_AVAILABLE == expected_commit_error(failing, request)
    assert out.committed == () and out.group.append_errors == ()
    out, request = _commit(failing, a, 1, (0,), now=now)
    assert only_reply(out).error == TOO_LARGE == expected_commit_error(failing, request)


def test_fencing_and_rebalancing_answer_every_partition_alike():
    g, (a, b), now = stable()
    out, request = _commit(g, a, 0, (1,), now=now)  # stale generation: validation comes first
    assert only_reply(out).errors == ((0, Errors.ILLEGAL_GENERATION), (1, Errors.ILLEGAL_GENERATION))
    assert not any(n[0] == "metadata_too_large" for n in out.notes)
    out, request = _commit(g, "nobody", 1, (0,), now=now)
    assert {e for _, e in only_reply(out).errors} == {Errors.UNKNOWN_MEMBER_ID}


@pytest.mark.parametrize("first_error, marks_unknown", [
    (TOO_LARGE, False),  # raised to the callback, nothing else
    (Errors.COORDINATOR_NOT_AVAILABLE, True),
])
def test_the_client_acts_on_the_first_partition_error(first_error, marks_unknown):
    from tests.helpers.member import stable as stable_member

    s = stable_member()
    other = TOO_LARGE if first_error != TOO_LARGE else Errors.COORDINATOR_NOT_AVAILABLE
    request = OffsetCommitRequest("g", s.generation, s.member_id, ((0, 1), (1, 1)), (0,))
    mbr._on_offset_commit(s, _Req(request), OffsetCommitResponse(((0, first_error), (1, other))))
    assert mbr.coordinator_unknown(s) == marks_unknown


@attrs.frozen
class _Req:
    body: OffsetCommitRequest
    id: int = 1


def test_which_partitions_get_metadata_too_long():
    assert mbr.oversized_partitions((3, 1, 2), "first") == (3,)
    assert mbr.oversized_partitions((3, 1, 2), "rest") == (1, 2)
    assert mbr.oversized_partitions((3, 1, 2), "all") == (3, 1, 2)
    assert mbr.oversized_partitions((3, 1, 2), None) == ()


def test_the_world_refuses_an_unknown_choice_and_a_client_without_partitions_commits_nothing():
    result = walk(0, Config(clients=2), steps=60, faults="none")
    world = result.world
    owner = next(c for c, client in enumerate(world.clients) if client.assignment)
    assert step(world, ("commit_oversized", owner, "some", 0))[0] is world
    new, log = step(world, ("commit_oversized", owner, "all", 0))
    assert new is not world and new.clients[owner].commits == world.clients[owner].commits + 1


def test_only_the_mixes_that_say_so_offer_oversized_commits():
    assert [name for name, mix in MIXES.items() if mix.oversized_commits] == ["coordinator", "clients"]
    config = Config(clients=3, brokers=2)
    offered = {name: 0 for name in ("default", "clients")}
    for name in offered:
        for seed in range(40):
            result = walk(seed, config, steps=80, mix=name, eventually=False, hash_trace=False)
            offered[name] += sum(1 for e in result.schedule if e[0] == "commit_oversized")
    assert offered["default"] == 0 and offered["clients"] > 5, offered


def test_walks_with_oversized_commits_agree_with_the_implementation():
    """The implementation's consumers commit the same metadata (one character past its broker's
    offset.metadata.max.bytes), its coordinator refuses the same partitions; the walks stay in step
    with the model, and reach a commit that is partly refused."""
    config = Config(clients=3, brokers=2, partitions=4)
    compared = partly = 0
    for seed in range(120):
        result = walk(seed, config, steps=80, mix="clients", eventually=False, hash_trace=False)
        partly += result.coverage["commit-partly-refused"]
        if any(e[0] == "commit_oversized" for e in result.schedule) and compared < 6:
            compared += 1
            outcome = compare(config, result.schedule, seed)
            assert outcome.divergence is None, (seed, outcome.divergence)
    assert compared == 6 and partly > 0, (compared, partly)
