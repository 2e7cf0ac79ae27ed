"""Random tensors. TF equivalent: ``tf.random``.

Native (``ops::random`` in the crate), with TF's seed rules: ``set_seed`` makes a
program's sequence reproducible; an op-level ``seed=`` makes calls reproducible after
``set_seed`` (the first call with a seed gives one tensor, the second another, and
``set_seed`` starts them over, as TF's kernels do); with neither, every call differs.
The numbers are gradtape's (ChaCha12 streams), not TF's (its Philox streams are not
reproduced).

>>> import gradtape as gt
>>> gt.random.set_seed(1)
>>> a = gt.random.normal([2])
>>> gt.random.set_seed(1)
>>> bool(gt.reduce_all(gt.random.normal([2]) == a))
True
"""

from ._gradtape import normal, set_seed, truncated_normal, uniform

__all__ = ["set_seed", "normal", "uniform", "truncated_normal"]
