"""The topics a consumer can subscribe to, and how the model names their partitions.

A world has the subscribed topic ``config.topic`` and, when ``config.second_partitions`` is above
zero, a second topic ``config.second_topic`` a consumer may change its subscription to (the
``subscribe`` event, issue 37: "a consumer changing its subscription to a topic with other
partitions, and back"). A subscription is a bit mask over the two: :data:`FIRST`, :data:`SECOND` or
:data:`BOTH` (``KafkaConsumer.subscribe`` takes a set of topic names; the model's sets are these).

The model numbers partitions with one int each: partition *i* of the first topic is *i*, partition
*i* of the second is ``SECOND_BASE + i``. That keeps every assignment, owned set and committed
offset a sorted tuple of ints, in Kafka's order (``TopicPartition`` by topic, then partition: the
first topic's name sorts first, which :class:`model.config.Config` checks), and a world with one
topic exactly as it was. The implementation's world maps its ``TopicPartition`` to the same ints
(:func:`partition_id`).
"""

from __future__ import annotations

#: subscription masks: the first topic, the second, both
FIRST, SECOND, BOTH = 1, 2, 3
#: the masks a ``subscribe`` event may take, in its domain's order
SUBSCRIPTIONS = (FIRST, SECOND, BOTH)
#: partition i of the second topic is SECOND_BASE + i (the first topic stays below it, even grown)
SECOND_BASE = 100
#: add_partitions grows the first topic by at most this many in one world (model.events offers it)
MAX_ADDED_PARTITIONS = 4


def topic_names(config, mask: int) -> tuple:
    """The topic names of subscription *mask*, sorted (Kafka's TopicPartition order)."""
    return tuple(name for bit, name in ((FIRST, config.topic), (SECOND, config.second_topic)) if mask & bit)


def mask_of(config, topics) -> int:
    """The subscription mask of topic names *topics* (names of neither topic are ignored)."""
    mask = 0
    for topic in topics:
        if topic == config.topic:
            mask |= FIRST
        elif topic == config.second_topic:
            mask |= SECOND
    return mask


def partition_id(config, topic: str, index: int) -> int:
    """The model's int for partition *index* of *topic*."""
    return index if topic == config.topic else SECOND_BASE + index


def topic_of(partition: int) -> int:
    """The topic bit (:data:`FIRST` or :data:`SECOND`) of the model's partition int."""
    return SECOND if partition >= SECOND_BASE else FIRST


def index_of(partition: int) -> int:
    """The partition's index within its topic."""
    return partition - SECOND_BASE if partition >= SECOND_BASE else partition


def second_partitions(config) -> tuple:
    """The second topic's partitions, as the model's ints (none in a one-topic world)."""
    return tuple(range(SECOND_BASE, SECOND_BASE + config.second_partitions))
