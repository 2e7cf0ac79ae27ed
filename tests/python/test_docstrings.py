"""Every public function and class of gradtape names its TF equivalent, and the
examples in the native functions' docstrings (``///`` comments in src/python/ops)
run and print what they claim. (The .py modules' examples run through
``--doctest-modules`` in scripts/test.)"""

import doctest
import inspect
import types

import pytest

import gradtape as gt
from gradtape import _gradtape

NAMESPACES = {
    "gt": gt, "gt.math": gt.math, "gt.nn": gt.nn, "gt.linalg": gt.linalg,
    "gt.random": gt.random, "gt.layers": gt.layers, "gt.optimizers": gt.optimizers,
    "gt.autodiff": gt.autodiff, "gt.dtypes": gt.dtypes, "gt.errors": gt.errors,
    "gt.activations": gt.activations, "gt.initializers": gt.initializers,
    "gt.keras": gt.keras, "gt.keras.losses": gt.keras.losses, "gt.keras.metrics": gt.keras.metrics,
    "gt.optimizers.schedules": gt.optimizers.schedules, "gt.data": gt.data,
}

# Names allowed to lack "TF equivalent", each with its reason.
ALLOWED = {
    # Small initializer/activation helpers not yet documented.
    "gt.activations.linear", "gt.activations.get", "gt.initializers.get",
}


def _public(ns):
    names = getattr(ns, "__all__", None) or [n for n in dir(ns) if not n.startswith("_")]
    for n in names:
        ob = getattr(ns, n)
        if isinstance(ob, types.ModuleType) or ob is None:
            continue
        if callable(ob) or inspect.isclass(ob):
            yield n, ob


def _all_public():
    return [(f"{ns_name}.{n}", ob) for ns_name, ns in NAMESPACES.items() for n, ob in _public(ns)]


def test_every_public_callable_names_its_tf_equivalent():
    missing = [
        name for name, ob in _all_public()
        if name not in ALLOWED and "TF equivalent" not in (inspect.getdoc(ob) or "")
    ]
    assert missing == []


def test_allowlist_has_no_stale_entries():
    public = dict(_all_public())
    stale = [n for n in ALLOWED if n not in public or "TF equivalent" in (inspect.getdoc(public[n]) or "")]
    assert stale == []


def test_the_walk_sees_the_whole_api():
    names = {n for n, _ in _all_public()}
    assert {"gt.reduce_sum", "gt.GradientTape", "gt.nn.softmax", "gt.layers.Dense",
            "gt.optimizers.SGD", "gt.random.normal", "gt.autodiff.hessian"} <= names
    assert len(names) > 200


def _native_functions():
    return sorted(
        n for n in dir(_gradtape)
        if not n.startswith("_") and inspect.isbuiltin(getattr(_gradtape, n))
    )


NATIVE_WITHOUT_EXAMPLES: set[str] = set()


@pytest.mark.parametrize("name", _native_functions())
def test_native_docstring_examples_run(name):
    ob = getattr(_gradtape, name)
    tests = doctest.DocTestFinder().find(ob, name, globs={"gt": gt})
    examples = sum(len(t.examples) for t in tests)
    if name in NATIVE_WITHOUT_EXAMPLES:
        assert examples == 0, f"{name} has examples now: remove it from NATIVE_WITHOUT_EXAMPLES"
        return
    assert examples > 0, f"{name}: no example in its docstring"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) failed (output above)"


def test_native_docstrings_start_with_a_summary():
    # PyO3 puts the signature in __text_signature__, not in the text users read.
    assert inspect.getdoc(gt.sin).startswith("Elementwise sine.")
    assert str(inspect.signature(gt.reduce_sum)) == "(input_tensor, axis=None, keepdims=False, name=None)"


@pytest.mark.parametrize("name", ["persistent", "watched_variables", "reset"])
def test_native_tape_docstring_examples_run(name):
    # gt.GradientTape inherits these from the native tape; --doctest-modules only sees
    # the methods written in Python.
    doc = inspect.getdoc(getattr(gt.GradientTape, name))
    assert "TF equivalent" in doc
    test = doctest.DocTestParser().get_doctest(doc, {"gt": gt}, f"GradientTape.{name}", None, 0)
    assert test.examples, f"{name}: no example in its docstring"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) failed (output above)"
