"""gt.Module and gt.name_scope: TF's module_test.py (naming, variable and submodule
tracking, flattening with paths), and layers as modules (issue 15)."""

import abc
import collections
import threading

import numpy as np
import pytest

import gradtape as gt


def get_name_scope():
    # The current scope, as TF's module_test reads it.
    with gt.name_scope("x") as ns:
        ns = "/".join(ns.split("/")[:-2])
        return ns + "/" if ns else ""


class RecursiveModule(gt.Module):
    def __init__(self, depth, trainable=True):
        super().__init__(name="badger")
        with self.name_scope:
            self.child = None
            if depth > 1:
                self.child = RecursiveModule(depth - 1, trainable=trainable)
            self.w = gt.Variable(1.0, trainable=trainable, name="mushroom")


class TreeModule(gt.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self._leaves = []

    @gt.Module.with_name_scope
    def new_leaf(self, name=None):
        leaf = TreeModule(name=name)
        self._leaves.append(leaf)
        return leaf


class ReturnsNameScopeModule(gt.Module):
    @gt.Module.with_name_scope
    def alternative_forward(self):
        return get_name_scope()

    @gt.Module.with_name_scope
    def __call__(self):
        return get_name_scope()


class ErrorModuleError(Exception):
    pass


class ErrorModule(gt.Module):
    def __init__(self, call_super, raise_in_constructor=True):
        if call_super:
            super().__init__()
        if raise_in_constructor:
            raise ErrorModuleError("Deliberate error!")

    @gt.Module.with_name_scope
    def __call__(self):
        raise ErrorModuleError("Deliberate error!")


# ---------------------------------------------------------------------- naming


def test_single_name():
    mod = gt.Module(name="simple")
    assert mod.name == "simple"
    assert mod.name_scope.name == "simple/"


def test_default_names_are_snake_case_of_the_class():
    class MyModule(gt.Module):
        pass

    class HTTPServerX(gt.Module):
        pass

    assert gt.Module().name == "module"
    assert MyModule().name == "my_module"
    assert HTTPServerX().name == "http_server_x"


def test_construct_in_scope():
    with gt.name_scope("foo"):
        mod = gt.Module(name="bar")
    assert mod.name == "bar"
    assert mod.name_scope.name == "foo/bar/"
    # The scope is kept: entering it later, anywhere, gives the full name.
    with gt.name_scope("elsewhere"):
        with mod.name_scope as scope:
            assert scope == "foo/bar/"
            assert gt.Variable(1.0, name="z").name == "foo/bar/z:0"


def test_enters_name_scope_in_call_and_other_methods():
    mod = ReturnsNameScopeModule()
    for _ in range(3):
        assert mod() == mod.name_scope.name == "returns_name_scope_module/"
        assert mod.alternative_forward() == mod.name_scope.name
    assert get_name_scope() == ""


def test_submodule_created_late():
    m = TreeModule()
    assert (m.name, m.name_scope.name) == ("tree_module", "tree_module/")
    leaf1 = m.new_leaf()
    assert leaf1.name == "tree_module"
    assert leaf1.name_scope.name == "tree_module/tree_module/"


def test_invalid_name():
    with pytest.raises(ValueError, match="is not a valid module name"):
        gt.Module(name="$Foo")
    with pytest.raises(ValueError, match="is not a valid module name"):
        gt.Module(name="a/b")


def test_modules_not_numbered_in_eager():
    for _ in range(2):
        mod = RecursiveModule(2)
        assert mod.name_scope.name == "badger/"
        assert mod.child.name_scope.name == "badger/badger/"


def test_errors_close_the_name_scope():
    with pytest.raises(ErrorModuleError):
        ErrorModule(call_super=True)
    assert get_name_scope() == ""
    with pytest.raises(ErrorModuleError):
        ErrorModule(call_super=False)
    assert get_name_scope() == ""
    mod = ErrorModule(call_super=True, raise_in_constructor=False)
    with pytest.raises(ErrorModuleError):
        mod()
    assert get_name_scope() == ""


def test_name_scope_is_memoized():
    mod = gt.Module(name="name")
    assert mod.name_scope is mod.name_scope


def test_name_scope_rules():
    # TF 2.21: entering gives the full scope; "" returns to the root; "x/" is absolute.
    assert gt.name_scope("a").name == "a"
    with gt.name_scope("a") as a:
        with gt.name_scope("b") as b:
            v = gt.Variable(1.0, name="v")
            with gt.name_scope("") as root:
                q = gt.Variable(1.0, name="q")
            with gt.name_scope("abs/") as absolute:
                pass
        w = gt.Variable(1.0)
    assert (a, b, root, absolute) == ("a/", "a/b/", "", "abs/")
    assert (v.name, q.name, w.name) == ("a/b/v:0", "q:0", "a/Variable:0")
    assert gt.Variable(1.0, name="v").name == "v:0"
    with pytest.raises(ValueError, match="must be a string"):
        gt.name_scope(3)


def test_name_scopes_are_per_thread():
    seen = []
    ready, done = threading.Event(), threading.Event()

    def other():
        ready.wait()
        seen.append(gt.Variable(1.0, name="t").name)
        done.set()

    th = threading.Thread(target=other)
    th.start()
    with gt.name_scope("main"):
        ready.set()
        done.wait()
    th.join()
    assert seen == ["t:0"]


def test_variable_names():
    mod = RecursiveModule(3)
    assert mod.w.name == "badger/mushroom:0"
    assert mod.child.w.name == "badger/badger/mushroom:0"
    assert mod.child.child.w.name == "badger/badger/badger/mushroom:0"


# ---------------------------------------------------------------------- tracking


def test_variables():
    m = RecursiveModule(3)
    assert m.variables == (m.w, m.child.w, m.child.child.w)
    assert m.child.variables == (m.child.w, m.child.child.w)
    assert m.child.child.variables == (m.child.child.w,)


def test_trainable_variables():
    m = RecursiveModule(3)
    assert m.trainable_variables == (m.w, m.child.w, m.child.child.w)
    m = RecursiveModule(3, trainable=False)
    assert len(m.trainable_variables) == len(m.child.trainable_variables) == 0
    assert m.non_trainable_variables == (m.w, m.child.w, m.child.child.w)


def test_attributes_in_name_order_and_containers():
    # TF 2.21 gives ['a:0', 'c:0', 'b:0'] and trainable ['a:0', 'b:0'] for this module.
    m = gt.Module()
    m.x = {
        "b": gt.Variable(1.0, name="b"),
        "a": [gt.Variable(2.0, name="a"), (gt.Variable(3.0, name="c", trainable=False),)],
    }
    assert [v.name for v in m.variables] == ["a:0", "c:0", "b:0"]
    assert [v.name for v in m.trainable_variables] == ["a:0", "b:0"]
    assert isinstance(m.variables, tuple)


def test_submodules():
    m = RecursiveModule(3)
    assert list(m.submodules) == [m.child, m.child.child]
    assert list(m.child.submodules) == [m.child.child]
    assert list(m.child.child.submodules) == []
    a, b, c = gt.Module(), gt.Module(), gt.Module()
    a.b = b
    b.c = c
    assert list(a.submodules) == [b, c]
    assert list(b.submodules) == [c]


def test_non_ctor_submodule():
    m = TreeModule()
    leaf1 = m.new_leaf()
    assert set(m.submodules) == {leaf1}
    leaf2 = m.new_leaf()
    assert set(m.submodules) == {leaf1, leaf2}


def test_shared_and_cyclic_references_are_found_once():
    a, b = gt.Module(), gt.Module()
    v = gt.Variable(1.0)
    a.b, b.a, a.self = b, a, a
    a.v, b.v, a.again = v, v, [v, v]
    assert a.variables == (v,)
    assert a.submodules == (b,)


NamedPair = collections.namedtuple("NamedPair", ("first", "second"))


class MemberType:
    pass


class SimpleModule(gt.Module):
    def __init__(self, create_child=True, container_type=list):
        super().__init__()
        self.z = MemberType()
        self.a = container_type([MemberType(), MemberType()])
        if create_child:
            self.c = SimpleModule(create_child=False)


@pytest.mark.parametrize("container_type", [lambda v: NamedPair(*v), list, tuple, lambda v: dict(enumerate(v))])
def test_flatten(container_type):
    def is_member(v):
        return isinstance(v, MemberType)

    parent = SimpleModule(container_type=container_type)
    child = parent.c
    assert list(parent._flatten(recursive=False, predicate=is_member)) == [parent.a[0], parent.a[1], parent.z]
    assert list(parent._flatten(predicate=is_member)) == [
        parent.a[0], parent.a[1], parent.z, child.a[0], child.a[1], child.z,
    ]


def test_attribute_traversal_key():
    class LayerModule(gt.Module):
        def __init__(self):
            super().__init__()
            self._trainable_variables = [gt.Variable(1.0, name="a"), gt.Variable(2.0, name="b")]
            self._non_trainable_variables = [gt.Variable(3.0, name="c"), gt.Variable(4.0, name="d")]
            self._bonus = gt.Variable(5.0, name="e")

        @property
        def variables(self):
            def key_function(name):
                return {"_trainable_variables": 0, "_non_trainable_variables": 1}.get(name, 2), name

            return list(self._flatten(predicate=lambda v: isinstance(v, gt.Variable),
                                      attribute_traversal_key=key_function))

    mod = LayerModule()
    assert [v.name for v in mod.variables] == ["a:0", "b:0", "c:0", "d:0", "e:0"]


def test_attributes_to_ignore():
    class DangerousModule(gt.Module):
        _TF_MODULE_IGNORED_PROPERTIES = frozenset({"dangerous_submodule", "dangerous_variable"})

    mod = DangerousModule()
    mod.dangerous_submodule = gt.Module()
    mod.dangerous_variable = gt.Variable(1.0)
    mod.normal_variable = gt.Variable(2.0)
    assert mod.submodules == ()
    assert mod.variables == (mod.normal_variable,)


def test_with_path():
    mod = gt.Module()
    mod.w = gt.Variable(1.0)
    mod.encoder = gt.Module()
    mod.encoder.w = [({"k": mod.w}, {"k": mod.w})]
    mod.decoder = mod.encoder
    state = dict(mod._flatten(with_path=True, predicate=lambda v: isinstance(v, gt.Variable)))
    assert state == {
        ("w",): mod.w,
        ("encoder", "w", 0, 0, "k"): mod.w,
        ("encoder", "w", 0, 1, "k"): mod.w,
        ("decoder", "w", 0, 0, "k"): mod.w,
        ("decoder", "w", 0, 1, "k"): mod.w,
    }


def test_with_path_survives_a_cycle():
    a = gt.Module()
    a.v = gt.Variable(1.0)
    a.me = a
    assert dict(a._flatten(with_path=True, predicate=lambda v: isinstance(v, gt.Variable))) == {("v",): a.v}


def test_raises_error_with_path():
    m = gt.Module()
    m.layers = {object(): None, object(): None}
    with pytest.raises(ValueError, match="Error processing property 'layers'"):
        m.variables  # noqa: B018


def test_does_not_evaluate_property_methods():
    class PropertyThrows(gt.Module):
        @property
        def raise_assertion_error(self):
            raise AssertionError

    mod = PropertyThrows()
    assert mod.variables == ()
    with pytest.raises(AssertionError):
        mod.raise_assertion_error  # noqa: B018


def test_abstract_modules():
    class AbstractModule(gt.Module, metaclass=abc.ABCMeta):
        @abc.abstractmethod
        def __call__(self, x):
            pass

    class ConcreteModule(AbstractModule):
        @gt.Module.with_name_scope
        def __call__(self, x):
            return x**2, get_name_scope()

    with pytest.raises(TypeError, match="abstract"):
        AbstractModule()
    x, scope = ConcreteModule()(2.0)
    assert (x, scope, get_name_scope()) == (4.0, "concrete_module/", "")


def test_with_name_scope_keeps_the_method_name_and_doc():
    class M(gt.Module):
        @gt.Module.with_name_scope
        def forward(self, x):
            """Doc."""
            return x

    assert M.forward.__name__ == "forward" and M.forward.__doc__ == "Doc."


def test_module_of_variables_trains():
    class Linear(gt.Module):
        def __init__(self):
            super().__init__()
            self.w = gt.Variable([[1.0], [2.0]], name="w")
            self.b = gt.Variable([0.5], name="b")

        def __call__(self, x):
            return gt.matmul(x, self.w) + self.b

    m = Linear()
    x = gt.constant([[1.0, 1.0], [2.0, 0.0]])
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(m(x))
    gb, gw = tape.gradient(loss, m.trainable_variables)
    np.testing.assert_allclose(gw.numpy(), [[3.0], [1.0]])
    np.testing.assert_allclose(gb.numpy(), [2.0])


# ---------------------------------------------------------------------- layers


def test_layers_and_models_are_modules():
    model = gt.layers.Sequential([gt.layers.Dense(4, name="d1"), gt.layers.Dense(1, name="d2")])
    model(gt.ones([2, 3]))
    assert isinstance(model, gt.Module) and isinstance(model.layers[0], gt.Module)
    assert list(model.submodules) == model.layers
    # Keras' names and order are kept (a list, kernel before bias).
    assert [v.name for v in model.trainable_variables] == ["d1/kernel:0", "d1/bias:0", "d2/kernel:0", "d2/bias:0"]
    assert model.layers[0].name_scope.name == "d1/"


def test_a_module_finds_the_variables_of_its_layers():
    class Model(gt.Module):
        def __init__(self):
            super().__init__()
            with self.name_scope:
                self.dense = gt.layers.Dense(2, name="dense")
                self.dense.build((None, 3))
                self.scale = gt.Variable(2.0, name="scale")

    m = Model()
    # TF's order: the module's own variables, then its submodules'.
    assert [v.name for v in m.variables] == ["model/scale:0", "model/dense/kernel:0", "model/dense/bias:0"]
    assert m.submodules == (m.dense,)


def test_a_layer_tracks_the_layers_and_variables_it_holds():
    class Block(gt.layers.Layer):
        def __init__(self):
            super().__init__(name="block")
            self.inner = gt.layers.Dense(2, name="inner")
            self.extra = gt.Variable(1.0, name="extra", trainable=False)

        def call(self, x):
            return self.inner(x) * self.extra

    b = Block()
    b(gt.ones([1, 3]))
    assert [v.name for v in b.variables] == ["extra:0", "inner/kernel:0", "inner/bias:0"]
    assert [v.name for v in b.trainable_variables] == ["inner/kernel:0", "inner/bias:0"]
    assert [v.name for v in b.non_trainable_variables] == ["extra:0"]
    b.trainable = False
    assert b.trainable_variables == []
    assert len(b.non_trainable_variables) == 3
