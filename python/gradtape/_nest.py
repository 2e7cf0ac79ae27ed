"""Nested structures (lists, tuples, dicts, namedtuples) as TF's ``tf.nest`` sees them.

Dicts flatten in sorted key order, as in TF; ``None`` is a leaf.
"""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_seq(x):
    return isinstance(x, (list, tuple, dict))


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:
        return list(d)


def flatten(structure):
    """The leaves of ``structure`` in order. TF equivalent: ``tf.nest.flatten``."""
    out = []
    _flatten(structure, out)
    return out


def _flatten(x, out):
    if isinstance(x, dict):
        for k in _sorted_keys(x):
            _flatten(x[k], out)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten(v, out)
    else:
        out.append(x)


def pack_sequence_as(structure, flat):
    """``flat`` leaves in the shape of ``structure``. TF equivalent:
    ``tf.nest.pack_sequence_as``."""
    it = iter(flat)
    r = _pack(structure, it)
    rest = list(it)
    if rest:
        raise ValueError(f"pack_sequence_as: {len(rest)} leaves left over")
    return r


def _pack(x, it):
    if isinstance(x, dict):
        vals = {k: _pack(x[k], it) for k in _sorted_keys(x)}
        return type(x)((k, vals[k]) for k in x) if type(x) is not dict else {k: vals[k] for k in x}
    if _is_namedtuple(x):
        return type(x)(*[_pack(v, it) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_pack(v, it) for v in x)
    try:
        return next(it)
    except StopIteration:
        raise ValueError("pack_sequence_as: not enough leaves") from None


def map_structure(fn, *structures):
    """Applies ``fn`` leafwise. TF equivalent: ``tf.nest.map_structure``."""
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])


def is_nested(x):
    """Whether ``x`` is a list, tuple or dict."""
    return _is_seq(x)
