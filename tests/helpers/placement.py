"""The worked values of FindCoordinator's placement (docs/protocol.md §2): a group id, Java's
``String.hashCode`` of it, and ``partitionFor`` over 50 and over 2 offsets partitions. The model's
tests and the implementation's check the same table."""

WORKED_VALUES = [
    ("groupId", 293428218, 18, 0),
    ("otherGroup", -204443313, 13, 1),
    ("", 0, 0, 0),
    ("a", 97, 47, 1),
    ("dummy-group", 2120675610, 10, 0),
    ("test-group", 627841412, 12, 0),
    ("my-group", -1906497762, 12, 0),
    # Integer.MIN_VALUE: Math.abs would stay negative, Utils.abs maps it to partition 0
    ("polygenelubricants", -2147483648, 0, 0),
    ("GydZG_", -2147483648, 0, 0),
    ("DESIGNING WORKHOUSES", -2147483648, 0, 0),
]
