"""A judge of one member's group, as the conform tests build it (properties/conform/judge.py)."""

from model.config import Config
from properties.conform.judge import Judge
from properties.conform.members import TOPIC


def judge() -> Judge:
    """A judge with the model's coordinator for one member, six partitions, no initial delay,
    JoinGroup v9."""
    return Judge(Config(brokers=1, clients=1, partitions=6, topic=TOPIC, initial_rebalance_delay_ms=0,
                        join_group_version=9))
