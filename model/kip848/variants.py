"""Deliberately broken variants of the KIP-848 model: each one changed decision, switched on by
name in ``Config.broken`` and checked at the point where the bug lives (as :mod:`model.variants`
does for the classic model). Several replay a bug from Kafka's own history.

name -> (what the broken model does, the property that must catch it)
"""

VARIANTS: dict[str, tuple[str, str]] = {
    "unreleased_assigned": (
        "CurrentAssignmentBuilder gives a member partitions another member still owns (their "
        "partition epoch is not -1) instead of waiting in UNRELEASED_PARTITIONS: KAFKA-16147's class",
        "kip848-one-owner-per-partition",
    ),
    "revocation_not_awaited": (
        "a member in UNREVOKED_PARTITIONS moves to the next epoch before its heartbeat shows the "
        "revoked partitions released",
        "kip848-no-two-owners-at-one-epoch",
    ),
    "target_overlaps": (
        "the range assignor starts every member's range at partition 0",
        "kip848-target-is-a-partition",
    ),
    "fenced_partitions_kept": (
        "fencing a member (leave, session or rebalance timeout) leaves its partition epochs set, "
        "so its partitions are never released",
        "kip848-partition-epochs-match",
    ),
    "assignment_only_when_changed": (
        "the heartbeat answer carries the assignment only when it changed, not on a full request "
        "(epoch 0, or after an error) as consumerGroupHeartbeat does",
        "kip848-converges",
    ),
    "rebalance_timeout_ignored": (
        "the rebalance timer never fences a member stuck revoking",
        "kip848-revocation-bounded",
    ),
    "lost_not_released": (
        "a fenced consumer rejoins without running onPartitionsLost and clearing its assignment",
        "kip848-outside-owns-nothing",
    ),
    "epoch_past_target": (
        "a member that reaches its target is put one epoch past it",
        "kip848-epochs-bounded",
    ),
    "fenced_rejoins_directly": (
        "a fenced consumer releases its partitions and rejoins in the same step, from whatever state "
        "it was in, without passing through FENCED",
        "kip848-legal-member-transitions",
    ),
    "commit_epoch_unchecked": (
        "OffsetCommit from a member is accepted at any member epoch, not only its current one "
        "(ConsumerGroup.validateMemberEpoch skipped)",
        "kip848-commit-fencing",
    ),
    "stale_keeps_partitions": (
        "a consumer whose poll timer ran out leaves the group but keeps its partitions",
        "kip848-outside-owns-nothing",
    ),
    "static_unreleased_unchecked": (
        "a static member joining at epoch 0 takes over its instance id from a member that still "
        "holds it at a live epoch (throwIfInstanceIdIsUnreleased skipped): the old process still "
        "holds the partitions the new one is given",
        "kip848-one-owner-per-partition",
    ),
    "static_duplicate_member": (
        "a static member joining after the instance id's member left (epoch -2) is added beside it "
        "instead of replacing it (replaceMember skipped)",
        "kip848-one-member-per-instance-id",
    ),
}


# Broken variants of the classic members' path (model.kip848.classic): the walker's worlds have no
# classic members, so these are caught by the broker judge (``conform broker --protocol consumer
# --classic N``), a correct broker diverging from each (tests/live/test_kip848_brokers.py).
CLASSIC_VARIANTS: dict[str, str] = {
    "classic_owned_ignored": (
        "a classic member's JoinGroup is reconciled as if it owned nothing: it moves to the next epoch "
        "while it still holds the partitions it must revoke (KAFKA-19974's class, for classic members)"),
    "classic_sync_gives_revoking": (
        "SyncGroup answers the partitions pending revocation with the assigned ones, so the member keeps "
        "them"),
    "classic_heartbeat_never_rebalances": (
        "Heartbeat answers NONE to a classic member whose epoch the group epoch passed: it never learns to "
        "rejoin (KAFKA-16249's stuck member, for classic members)"),
    "classic_upgrade_drops_assignment": (
        "the online upgrade starts the classic members with no assigned partitions, so the partitions they "
        "still own are free for the consumer that joined"),
    "classic_generation_unchecked": (
        "SyncGroup and Heartbeat accept any generation (throwIfGenerationIdUnmatched skipped)"),
}
