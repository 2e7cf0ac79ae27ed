"""Shared fixtures: every test starts from a fresh global seed and fresh layer names
(TF's ``tf.keras.backend.clear_session()``), so printed names like ``dense/kernel:0``
match the guides."""

import re

import pytest

import gradtape as gt
from gradtape.layers import _base as _layers_base


@pytest.fixture(autouse=True)
def _fresh_session():
    gt.random.set_seed(0)
    _layers_base._name_counts.clear()
    yield
    _layers_base._name_counts.clear()


_TOKEN = re.compile(r"None|[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def printed_values(text):
    """The numbers and ``None``s of printed output, in order (``None`` stays ``None``).

    Shapes and names are part of the text too, so callers compare against the full
    sequence the TF guide shows.
    """
    out = []
    for tok in _TOKEN.findall(text):
        out.append(None if tok == "None" else float(tok))
    return out


def assert_printed(text, expected, rel=1e-5, abs_=1e-6):
    """``text``'s numbers equal ``expected`` (floats compared to tolerance, ``None`` exactly)."""
    got = printed_values(text)
    assert len(got) == len(expected), f"printed {got!r}, expected {expected!r}\n{text}"
    for g, e in zip(got, expected):
        if e is None:
            assert g is None, f"printed {got!r}, expected {expected!r}\n{text}"
        else:
            assert g is not None and g == pytest.approx(e, rel=rel, abs=abs_), (
                f"printed {got!r}, expected {expected!r}\n{text}"
            )
