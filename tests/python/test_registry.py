"""RegisterGradient + gradient_override_map (issue 3)."""

import pytest

import gradtape as gt


@gt.RegisterGradient("TestTimesTenSquare")
def _ten(op, grad):
    assert op.type == "Square"
    return grad * 10.0 * op.inputs[0]


@gt.RegisterGradient("TestSwapMul")
def _swap(op, grad):
    a, b = op.inputs
    return grad * a, grad * b  # deliberately swapped


def test_override_applies_only_to_ops_recorded_in_scope():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        with gt.gradient_override_map({"Square": "TestTimesTenSquare"}):
            y1 = gt.square(x)
        y2 = gt.square(x)
    assert float(t.gradient(y1, x)) == 30.0
    assert float(t.gradient(y2, x)) == 6.0


def test_override_of_a_two_input_op():
    a, b = gt.constant(2.0), gt.constant(5.0)
    with gt.GradientTape() as t:
        t.watch([a, b])
        with gt.gradient_override_map({"Mul": "TestSwapMul"}):
            y = a * b
    ga, gb = t.gradient(y, [a, b])
    assert (float(ga), float(gb)) == (2.0, 5.0)


def test_registered_gradient_is_differentiable_again():
    x = gt.constant(3.0)
    with gt.GradientTape() as t2:
        t2.watch(x)
        with gt.GradientTape() as t1:
            t1.watch(x)
            with gt.gradient_override_map({"Square": "TestTimesTenSquare"}):
                y = gt.square(x)
        g = t1.gradient(y, x)
    assert float(g) == 30.0
    assert float(t2.gradient(g, x)) == 10.0


def test_registering_a_name_twice_and_unknown_names_fail():
    with pytest.raises(gt.errors.InvalidArgumentError, match="two gradient"):
        gt.RegisterGradient("TestTimesTenSquare")(lambda op, g: g)
    with pytest.raises(gt.errors.InvalidArgumentError, match="no gradient registered"):
        with gt.gradient_override_map({"Square": "NoSuchGradient"}):
            pass
    with pytest.raises(TypeError):
        gt.RegisterGradient(3)


def test_wrong_count_from_registered_function():
    @gt.RegisterGradient("TestBadCount")
    def _bad(op, grad):
        return [grad, grad]

    x = gt.constant(1.0)
    with gt.GradientTape() as t:
        t.watch(x)
        with gt.gradient_override_map({"Exp": "TestBadCount"}):
            y = gt.exp(x)
    with pytest.raises(gt.errors.InvalidArgumentError, match="2 gradients for 1 inputs"):
        t.gradient(y, x)
