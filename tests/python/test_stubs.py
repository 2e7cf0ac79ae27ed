"""The type stubs (python/gradtape/_gradtape.pyi) match the native module, and the
public API type-checks as a user sees it (``mypy --strict`` on tests/typing/sample_user.py).

When a native name is added or removed, ``test_stub_names_match_the_module`` fails
listing it: add it to the stub (with its real signature) in the same change."""

import ast
import os
import subprocess
import sys
from pathlib import Path

from gradtape import _gradtape

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "python" / "gradtape" / "_gradtape.pyi"
ALLOWLIST = ROOT / "tests" / "typing" / "stubtest_allowlist.txt"

# Names that exist only in the stub (type aliases and a shared-method base class).
STUB_ONLY = {"TensorLike", "DTypeLike", "ShapeLike", "AxisLike", "_TensorOps"}


def _stub_names():
    tree = ast.parse(STUB.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_stub_names_match_the_module():
    def dunder(n):
        return n.startswith("__") and n.endswith("__")

    runtime = {n for n in dir(_gradtape) if not dunder(n)}
    stub = {n for n in _stub_names() if not dunder(n)} - STUB_ONLY
    assert sorted(runtime - stub) == [], "native names missing from _gradtape.pyi"
    assert sorted(stub - runtime) == [], "names in _gradtape.pyi that the module lacks"


def _run(args):
    env = dict(os.environ, MYPY_CACHE_DIR=str(ROOT / ".venv" / ".mypy_cache"))
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True
    )


def test_generated_blocks_are_current():
    """The namespaces' native imports, their ``__all__`` and the op stubs are written by
    scripts/gen-api from the ops' expose! tables; a table changed without a re-run fails here."""
    r = _run([str(ROOT / "scripts" / "gen-api"), "--check"])
    assert r.returncode == 0, r.stdout + r.stderr


def test_stubtest():
    r = _run(["-m", "mypy.stubtest", "gradtape._gradtape", "--allowlist", str(ALLOWLIST)])
    assert r.returncode == 0, r.stdout + r.stderr


def test_sample_user_script_passes_mypy_strict():
    r = _run(["-m", "mypy", "--strict", "tests/typing/sample_user.py"])
    assert r.returncode == 0, r.stdout + r.stderr
