"""Nested structures (lists, tuples, namedtuples, dicts; ``None`` a leaf).
TF equivalent: ``tf.nest``.

>>> import gradtape as gt
>>> gt.nest.flatten({"b": [1, 2], "a": 3})
[3, 1, 2]
>>> gt.nest.map_structure(lambda v: v * 10, (1, [2]))
(10, [20])
"""

from ._nest import flatten, is_nested, map_structure, pack_sequence_as
from ._utils import assert_same_structure

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]
