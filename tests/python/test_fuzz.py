"""No abort, no panic, no hang from any input: a fuzz test over every public callable
(issue 10, item 3). The machinery is ``fuzz_driver.py`` (its docstring describes the
targets, arguments, child processes and outcomes).

CI mode (this file under pytest): a fixed budget of calls (50 000 by default, well
under a minute on a 2-core machine with the debug build) in child processes under a
1 GiB address-space limit; any abort, signal death, hang (a call without a result for
20 s), ``PanicException``, ``gt.errors.InternalError`` or ``SystemError`` fails the
test, naming the call and how to replay it.

Dev mode, for a long run (10^6 calls and more)::

    python tests/python/test_fuzz.py --calls 1000000            # seed 0
    python tests/python/test_fuzz.py --calls 1000000 --seed 7 --jobs 2 --mem-gib 1
    GRADTAPE_FUZZ_CALLS=1000000 python -m pytest tests/python/test_fuzz.py

It prints the number of calls, the outcomes by class, the aborts, panics, internal
errors and hangs (all must be 0) and the time taken; failures are printed as they
happen, each with ``--seed S --replay I`` to rerun that one call in-process
(``python tests/python/fuzz_driver.py --seed S --replay I``). A release build
(``bash scripts/setup --release``) runs several times faster.
"""

import os
import subprocess
import sys


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fuzz_driver  # noqa: E402

CALLS = int(os.environ.get("GRADTAPE_FUZZ_CALLS", 50000))
SEED = int(os.environ.get("GRADTAPE_FUZZ_SEED", 0))


def test_every_public_callable_is_fuzzed_or_excluded():
    import gradtape as gt

    tgts = fuzz_driver.targets()
    names = {t[0] for t in tgts}
    # A callable reachable under several names is fuzzed once, under one of them.
    names |= {q for q, obj in fuzz_driver._walk(gt) if any(t[2] is obj for t in tgts)}
    # A public name that is neither fuzzed, excluded, a submodule nor a constant.
    assert fuzz_driver.unclassified() == []
    # Exclusions name things that exist.
    assert fuzz_driver.stale_exclusions() == []
    # The namespaces, classes and methods the issue lists are all reached.
    for n in ["zeros", "one_hot", "range", "linspace", "eye", "tile", "reshape", "einsum",
              "math.reduce_logsumexp", "nn.softmax", "linalg.inv", "random.normal",
              "autodiff.hessian", "layers.Dense", "optimizers.Adam", "optimizers.SGD.apply_gradients",
              "Tensor.__getitem__", "Tensor.__add__", "Variable.assign_sub",
              "GradientTape.jacobian", "GradientTape.batch_jacobian"]:
        assert n in names, n
    # Round robin: the CI budget calls every target several times.
    assert CALLS >= 5 * len(tgts)


def test_fuzz_every_public_callable():
    run = fuzz_driver.Run(SEED, CALLS, batch=3000, jobs=2, timeout=20.0, mem_gib=1.0).go()
    report = run.summary()
    print(report)
    detail = "\n\n".join(
        f"{kind} at call {i} (replay: python {fuzz_driver.__file__} --seed {SEED} --replay {i}):\n{msg}"
        for kind, i, msg in run.failures[:10]
    )
    assert run.failures == [], f"{report}\n\n{detail}"
    assert run.done_calls == CALLS, report
    # The calls get somewhere: results, argument errors, and refused sizes.
    for cls in ("ok", "TypeError", "InvalidArgumentError", "ResourceExhaustedError"):
        assert run.outcomes[cls] > 0, report


def test_the_harness_catches_each_kind_of_failure(monkeypatch):
    monkeypatch.setenv("GRADTAPE_FUZZ_SELFTEST", "1")
    tgts = fuzz_driver.targets()
    index = {name: i for i, (name, _, _) in enumerate(tgts)}
    run = fuzz_driver.Run(3, 2 * len(tgts), batch=100, jobs=2, timeout=3.0, mem_gib=1.0).go()
    kinds = {(kind, i % len(tgts)) for kind, i, _ in run.failures}
    assert kinds == {
        ("abort", index["selftest.abort"]),
        ("hang", index["selftest.hang"]),
        ("InternalError", index["selftest.internal"]),
        ("SystemError", index["selftest.system_error"]),
    }
    # Each failing target was called twice (round robin), each time reported; the
    # workers started again after each abort and hang, so every call ran.
    assert len(run.failures) == 8
    assert run.done_calls == 2 * len(tgts)
    assert run.outcomes["ABORT"] == 2 and run.outcomes["HANG"] == 2
    assert run.outcomes["ValueError"] == 2
    # The report names the call.
    abort = next(m for k, _, m in run.failures if k == "abort")
    assert "selftest.abort" in abort and "signal" in abort


def test_dev_mode_prints_its_figures():
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, "test_fuzz.py"), "--calls", "400", "--seed", "5"],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "seed 5: 400 calls over" in out.stdout
    assert "aborts 0, panics 0, internal errors 0, hangs 0, failures 0" in out.stdout


if __name__ == "__main__":
    sys.exit(fuzz_driver.main())
