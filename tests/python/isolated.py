"""Running a snippet in a fresh interpreter, for tests whose failure would be a hang,
an abort or a dead process (deadlocks, fork, signals, memory measured as RSS)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def run_python(code: str, timeout: float, env: dict[str, str] | None = None, args: tuple = ()) -> str:
    """Runs ``code`` in a new ``python`` process (``args`` its ``sys.argv[1:]``, as
    strings); returns its stdout. Fails the test with the output when the process hangs
    past ``timeout`` seconds or exits non-zero (an abort, a signal death, an uncaught
    exception)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        r = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
        )
    except subprocess.TimeoutExpired as e:
        raise AssertionError(
            f"the snippet did not finish in {timeout} s (a hang)\n"
            f"stdout: {e.stdout!r}\nstderr: {e.stderr!r}"
        ) from None
    assert r.returncode == 0, (
        f"the snippet exited with {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    )
    return r.stdout


def fresh(code: str, *args: object) -> str:
    """``code`` run in a new interpreter, which has never seen the test's classes (a
    SavedModel loaded there knows only its files); returns its stdout."""
    return run_python(code, timeout=300, args=args)
