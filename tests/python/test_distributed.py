"""gt.distributed over MPI (issue 18): the checks of ``mpi_worker.py`` run under
``mpiexec -n 2`` (mpi4py and the ``mpich`` wheel are installed by scripts/setup and
scripts/test-wheel, so these never skip), each launch bounded in time.

One launch runs every positive check on both ranks (``test_rank_check`` reads its
lines); two more show that a failing rank takes every rank down at once, with its
traceback, instead of leaving the others waiting in a collective.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mpi_worker  # noqa: E402

# Generous for a loaded 2-core machine (a launch takes 2-5 s); a hang fails the test.
TIMEOUT = 120


def mpiexec():
    """The mpiexec beside this Python (the mpich wheel's), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    assert found, "mpiexec not found: install the test requirements (bash scripts/setup: mpi4py, mpich)"
    return found


def launch(mode, timeout=TIMEOUT, script=None):
    env = dict(os.environ)
    # Keep each rank to one engine thread: two ranks share the 2-core CI machine.
    env.setdefault("RAYON_NUM_THREADS", "1")
    t0 = time.monotonic()
    # A session of its own: on a timeout the whole job (mpiexec, its proxy and the
    # ranks, which hold the pipes open) is killed, not only mpiexec.
    p = subprocess.Popen(
        [mpiexec(), "-n", "2", sys.executable, script or os.path.join(HERE, "mpi_worker.py"), *mode.split()],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"mpiexec -n 2 {script or 'mpi_worker.py'} {mode} did not finish in {timeout} s:\n{out}\n{err}")
    return subprocess.CompletedProcess(p.args, p.returncode, out, err), time.monotonic() - t0


@pytest.fixture(scope="module")
def checks_run():
    p, _ = launch("checks")
    return p


@pytest.mark.parametrize("name", [fn.__name__ for fn in mpi_worker.CHECKS])
def test_rank_check(checks_run, name):
    out = checks_run.stdout
    for r in (0, 1):
        fail = [ln for ln in out.splitlines() if ln.startswith(f"rank {r}: FAIL {name}:")]
        assert not fail, fail[0].replace(" | ", "\n")
        assert f"rank {r}: ok {name}" in out.splitlines(), (
            f"rank {r} did not report {name}\nstdout:\n{out}\nstderr:\n{checks_run.stderr}"
        )


def test_every_check_ran_and_the_job_exited_cleanly(checks_run):
    assert checks_run.returncode == 0, checks_run.stderr
    lines = [ln for ln in checks_run.stdout.splitlines() if ln.startswith("rank ")]
    assert len(lines) == 2 * len(mpi_worker.CHECKS)


def test_a_rank_that_raises_stops_every_rank_with_its_traceback():
    p, took = launch("raise")
    assert p.returncode != 0
    text = p.stdout + p.stderr
    assert "rank 0: waiting in allreduce" in text
    assert "Traceback" in text and "ValueError: boom from rank 1" in text, text
    assert "uncaught exception on rank 1 of 2; aborting every rank" in text, text
    assert "allreduce returned" not in text
    assert took < 60, took


def test_a_rank_that_dies_stops_every_rank():
    # A rank gone without MPI_Finalize (a crash, a kill, os._exit): mpiexec ends the job.
    p, took = launch("exit")
    assert p.returncode == 3, p
    assert took < 60, took


@pytest.mark.parametrize("mode", ["sysexit", "systemexit", "exit0", "exit-before", "exit-traced"])
def test_a_rank_that_exits_mid_training_stops_every_rank(mode):
    # sys.exit(n) / SystemExit on rank 1 while rank 0 is about to wait (or, exit-before
    # and exit-traced, already waits) for it in the next gradient reduction: every rank exits non-zero,
    # within a bounded time, instead of rank 0 waiting forever (and rank 1 in
    # MPI_Finalize for it).
    p, took = launch(mode)
    text = p.stdout + p.stderr
    assert p.returncode != 0, text
    assert "rank 1: leaving" in text, text
    assert "step 2 reduced" not in text, text
    # Rank 0 says why (its watchdog: a rank left while it waits).
    assert "rank 1 left (exited) while rank 0 of 2 waits for it in DistributedGradientTape.gradient" in text, text
    assert took < 60, took


def test_every_rank_leaving_with_sys_exit_0_exits_cleanly():
    p, took = launch("clean")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "rank 0: done" in p.stdout and "rank 1: done" in p.stdout
    assert "aborting" not in p.stderr, p.stderr
    assert took < 60, took


def test_without_mpi4py_the_import_error_names_the_extra(monkeypatch):
    import gradtape as gt

    monkeypatch.setattr(gt.distributed._state, "MPI", None)
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match=r'pip install "gradtape\[mpi\]"'):
        gt.distributed.init()
    assert not gt.distributed.is_initialized()


def test_calls_before_init_raise():
    import gradtape as gt

    assert not gt.distributed.is_initialized()
    for call in (gt.distributed.rank, gt.distributed.size, gt.distributed.local_rank,
                 lambda: gt.distributed.allreduce(gt.constant(1.0)),
                 lambda: gt.distributed.DistributedGradientTape(gt.GradientTape())):
        with pytest.raises(RuntimeError, match=r"call gt.distributed.init\(\) first"):
            call()


def test_importing_gradtape_does_not_start_mpi():
    code = "import sys, gradtape as gt; gt.distributed; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out


def test_the_example_trains_on_two_processes():
    example = os.path.join(HERE, "..", "..", "examples", "distributed_train.py")
    p, _ = launch("--epochs 3", script=example)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("Training the demo's 1-32-32-1 tanh network on 2 processes"), lines
    fit = next(ln for ln in lines if ln.startswith("Fit: loss "))
    first, last = (float(v) for v in fit.split()[2:5:2])
    assert last < 0.8 * first, fit
    assert lines[-1] == "Weights identical on all 2 ranks: True"
    assert sum(ln.startswith("Training") for ln in lines) == 1  # rank 0 prints, rank 1 does not
