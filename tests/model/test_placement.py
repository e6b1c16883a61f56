"""FindCoordinator placement: Java String.hashCode and Utils.abs, with the reference's worked values (§2)."""

import pytest

from model.placement import initial_leader, java_abs, java_string_hash, partition_for
from tests.helpers.placement import WORKED_VALUES


@pytest.mark.parametrize("group_id, hash_code, of_50, of_2", WORKED_VALUES)
def test_worked_values(group_id, hash_code, of_50, of_2):
    assert java_string_hash(group_id) == hash_code
    assert partition_for(group_id, 50) == of_50
    assert partition_for(group_id, 2) == of_2


@pytest.mark.parametrize("group_id", ["polygenelubricants", "GydZG_", "DESIGNING WORKHOUSES"])
def test_integer_min_value_maps_to_partition_zero(group_id):
    assert java_string_hash(group_id) == -(2**31)
    assert java_abs(java_string_hash(group_id)) == 0  # Math.abs would stay negative
    assert partition_for(group_id, 50) == 0


def test_hash_uses_utf16_code_units():
    # U+1F600 is a surrogate pair in UTF-16: two code units, 0xD83D and 0xDE00.
    assert java_string_hash("\U0001F600") == (31 * 0xD83D + 0xDE00)


def test_initial_leaders_spread_round_robin():
    assert [initial_leader(p, 3) for p in range(5)] == [0, 1, 2, 0, 1]
