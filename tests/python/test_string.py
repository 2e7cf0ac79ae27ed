"""The minimal ``string`` dtype (issue 16) and ``gt.strings``: constants, numpy
interop, printing, indexing, equality, the structural ops, datasets, no math and no
gradients. Expected values and messages are TF 2.21's."""

import numpy as np
import pytest

import gradtape as gt

S = gt.string


def test_dtype_object_is_tf_s():
    assert S.name == "string" and repr(S) == "gt.string" and str(S) == "<dtype: 'string'>"
    assert S.as_datatype_enum == 7 and S.size == 0
    assert not (S.is_floating or S.is_integer or S.is_complex or S.is_bool)
    assert S.as_numpy_dtype is object
    assert gt.dtypes.as_dtype("string") == S and gt.dtypes.string == S
    assert gt.dtypes.as_dtype(np.dtype("U3")) == S and gt.dtypes.as_dtype(object) == S
    with pytest.raises(TypeError):
        print(S.min)


def test_constants_from_python_values():
    a = gt.constant("a")
    assert a.dtype == S and a.shape == () and a.numpy() == b"a"
    assert isinstance(a.numpy(), bytes)
    v = gt.constant(["cat", "dog"])
    assert v.shape == (2,)
    n = v.numpy()
    assert n.dtype == object and n.tolist() == [b"cat", b"dog"]
    assert gt.constant(b"x").numpy() == b"x"
    assert gt.constant("héllo").numpy() == "héllo".encode()
    long = "a long string of more than twenty-two bytes " * 3
    assert gt.constant([long, "s"]).numpy().tolist() == [long.encode(), b"s"]
    assert gt.constant([["a", "b"], ["c", "d"]]).shape == (2, 2)
    assert gt.constant("a", dtype=gt.string).dtype == S
    assert gt.convert_to_tensor("z").dtype == S


def test_constants_from_numpy_arrays():
    for arr in [np.array(["cat", "dog"]), np.array([b"cat", b"dog"]),
                np.array([b"cat", "dog"], dtype=object)]:
        t = gt.constant(arr)
        assert t.dtype == S and t.numpy().tolist() == [b"cat", b"dog"]
    t = gt.constant(np.array([["a", "b"], ["c", "d"]]).T)
    assert t.numpy().tolist() == [[b"a", b"c"], [b"b", b"d"]]
    with pytest.raises(TypeError, match="only str and bytes"):
        gt.constant(np.array([1, "a"], dtype=object))


def test_printing_is_tf_s():
    assert str(gt.constant(["cat", "dog"])) == "gt.Tensor([b'cat' b'dog'], shape=(2,), dtype=string)"
    assert str(gt.constant("cat")) == "gt.Tensor(b'cat', shape=(), dtype=string)"
    assert repr(gt.constant("cat")) == "<gt.Tensor: shape=(), dtype=string, numpy=b'cat'>"
    assert repr(gt.constant(["cat", "dog"])) == (
        "<gt.Tensor: shape=(2,), dtype=string, numpy=array([b'cat', b'dog'], dtype=object)>")
    assert str(gt.constant([["a"], ["b"]])) == (
        "gt.Tensor(\n[[b'a']\n [b'b']], shape=(2, 1), dtype=string)")


def test_indexing_slicing_and_equality():
    v = gt.constant(["cat", "dog", "emu"])
    assert v[0].numpy() == b"cat" and v[-1].numpy() == b"emu"
    assert v[1:].numpy().tolist() == [b"dog", b"emu"]
    assert v[::-1].numpy().tolist() == [b"emu", b"dog", b"cat"]
    assert (v == "cat").numpy().tolist() == [True, False, False]
    assert (v != b"dog").numpy().tolist() == [True, False, True]
    assert (v == v).dtype == gt.bool
    assert gt.equal(v, gt.constant(["cat", "x", "emu"])).numpy().tolist() == [True, False, True]
    assert [t.numpy() for t in v] == [b"cat", b"dog", b"emu"]
    assert len(v) == 3


def test_structural_ops():
    m = gt.constant([["a", "b", "c"], ["d", "e", "f"]])
    assert gt.shape(m).numpy().tolist() == [2, 3] and int(gt.rank(m)) == 2 and int(gt.size(m)) == 6
    assert gt.reshape(m, [3, 2]).numpy().tolist() == [[b"a", b"b"], [b"c", b"d"], [b"e", b"f"]]
    assert gt.transpose(m).numpy().tolist() == [[b"a", b"d"], [b"b", b"e"], [b"c", b"f"]]
    assert gt.concat([m, m], 0).shape == (4, 3)
    assert gt.stack([m[0], m[1]]).numpy().tolist() == m.numpy().tolist()
    assert gt.gather(m[0], [2, 0]).numpy().tolist() == [b"c", b"a"]
    assert gt.identity(m).numpy().tolist() == m.numpy().tolist()
    assert gt.tile(gt.constant(["x", "y"]), [2]).numpy().tolist() == [b"x", b"y", b"x", b"y"]
    assert gt.expand_dims(m[0], 0).shape == (1, 3)
    assert gt.squeeze(gt.constant([["q"]])).numpy() == b"q"
    mask = gt.constant([True, False, True])
    assert gt.boolean_mask(m[0], mask).numpy().tolist() == [b"a", b"c"]
    assert gt.where(mask, m[0], m[1]).numpy().tolist() == [b"a", b"e", b"c"]
    assert gt.zeros_like(m[0]).numpy().tolist() == [b"", b"", b""]
    assert [u.numpy().tolist() for u in gt.unstack(m)] == m.numpy().tolist()


def test_no_math_and_tf_s_errors():
    s = gt.constant(["a", "b"])
    msg = r"as input #1\(zero-based\) was expected to be a string tensor but is a int32 tensor"
    with pytest.raises(gt.errors.InvalidArgumentError, match=msg):
        s + 1
    with pytest.raises(TypeError, match="Mul does not support dtype string"):
        s * s
    with pytest.raises(TypeError):
        gt.reduce_sum(s)
    with pytest.raises(TypeError, match="Cast string to float is not supported"):
        gt.cast(s, gt.float32)
    with pytest.raises(gt.errors.InvalidArgumentError, match="of string is not in the list"):
        gt.less(s, s)
    # TF's Add concatenates strings.
    assert (s + "!").numpy().tolist() == [b"a!", b"b!"]
    assert (s + s).numpy().tolist() == [b"aa", b"bb"]


def test_never_differentiable():
    x = gt.constant(["a", "b"])
    with gt.GradientTape() as tape:
        with pytest.warns(UserWarning, match="integer, bool or string tensor"):
            tape.watch(x)
        y = gt.identity(x)
    assert tape.gradient(y, x) is None
    f = gt.constant([1.0, 2.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(f)
        y = gt.where(gt.constant([True, False]), x, gt.constant(["p", "q"]))
        z = f * 2.0
    assert tape.gradient(y, f) is None
    assert tape.gradient(z, f).numpy().tolist() == [2.0, 2.0]


def test_dataset_of_strings():
    ds = gt.data.Dataset.from_tensor_slices((gt.constant(["cat", "dog", "emu"]), [0, 1, 2]))
    got = [(s.numpy(), int(i)) for s, i in ds]
    assert got == [(b"cat", 0), (b"dog", 1), (b"emu", 2)]
    batches = [b.numpy().tolist() for b, _ in ds.batch(2)]
    assert batches == [[b"cat", b"dog"], [b"emu"]]
    assert [s.numpy() for s in gt.data.Dataset.from_tensor_slices(["a", "b"])] == [b"a", b"b"]


def test_strings_length_join_reduce_join():
    assert gt.strings.length(gt.constant(["héllo", ""])).numpy().tolist() == [6, 0]
    assert gt.strings.length(gt.constant(["héllo"]), unit="UTF8_CHAR").numpy().tolist() == [5]
    assert gt.strings.length("abc").dtype == gt.int32
    j = gt.strings.join([gt.constant(["a", "b"]), gt.constant(["c", "d"])], separator="-")
    assert j.numpy().tolist() == [b"a-c", b"b-d"]
    assert gt.strings.join([gt.constant(["a", "b"]), "x"]).numpy().tolist() == [b"ax", b"bx"]
    m = gt.constant([["a", "b"], ["c", "d"]])
    assert gt.strings.reduce_join(m).numpy() == b"abcd"
    assert gt.strings.reduce_join(m, axis=1, separator=",").numpy().tolist() == [b"a,b", b"c,d"]
    assert gt.strings.reduce_join(m, axis=0).numpy().tolist() == [b"ac", b"bd"]
    assert gt.strings.reduce_join(m, axis=1, keepdims=True).shape == (2, 1)


def test_strings_case_split_strip_substr_regex():
    assert gt.strings.upper("abÉ").numpy() == b"AB\xc3\x89"
    assert gt.strings.lower(gt.constant(["ABc"])).numpy().tolist() == [b"abc"]
    assert gt.strings.split("a b  c").numpy().tolist() == [b"a", b"b", b"c"]
    assert gt.strings.split("a,b,,c", ",").numpy().tolist() == [b"a", b"b", b"", b"c"]
    assert gt.strings.strip(gt.constant(["  a b \n"])).numpy().tolist() == [b"a b"]
    assert gt.strings.substr(gt.constant(["hello", "world"]), 1, 3).numpy().tolist() == [b"ell", b"orl"]
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.strings.substr("ab", 5, 1)
    r = gt.strings.regex_full_match(gt.constant(["cat", "dog", "cats"]), "c.t")
    assert r.dtype == gt.bool and r.numpy().tolist() == [True, False, False]


def test_strings_to_number_and_as_string():
    n = gt.strings.to_number(gt.constant(["1.5", "-3e2"]))
    assert n.dtype == gt.float32 and n.numpy().tolist() == [1.5, -300.0]
    i = gt.strings.to_number(gt.constant(["7"]), gt.int32)
    assert i.dtype == gt.int32 and i.numpy().tolist() == [7]
    with pytest.raises(gt.errors.InvalidArgumentError,
                       match="StringToNumberOp could not correctly convert string: abc"):
        gt.strings.to_number(gt.constant(["abc"]))
    assert gt.strings.as_string(gt.constant([1.5, -2.0])).numpy().tolist() == [b"1.500000", b"-2.000000"]
    assert gt.strings.as_string(gt.constant([3, -4])).numpy().tolist() == [b"3", b"-4"]
    assert gt.strings.as_string(gt.constant([True, False])).numpy().tolist() == [b"true", b"false"]
    assert gt.strings.as_string(gt.constant(1.5), precision=2).numpy() == b"1.50"
    assert gt.as_string(3).numpy() == b"3"
    with pytest.raises(TypeError):
        gt.strings.upper(gt.constant([1.0]))


def test_string_ordering_comparisons_are_invalid_arguments():
    # TF registers Less/LessEqual/Greater/GreaterEqual for real numbers only: a string
    # operand is an InvalidArgumentError naming the attr (eagerly and in a graph).
    a = gt.constant(["a", "b"])
    for f in (lambda: a < a, lambda: a > "x", lambda: a <= a, lambda: a >= a, lambda: gt.math.less(a, a),
              lambda: gt.math.greater_equal(a, a)):
        with pytest.raises(gt.errors.InvalidArgumentError, match="string is not in the list of allowed values"):
            f()
    np.testing.assert_array_equal((a == "a").numpy(), [True, False])

    @gt.function
    def lt(x):
        return x < x

    with pytest.raises(gt.errors.InvalidArgumentError):
        lt(a)
