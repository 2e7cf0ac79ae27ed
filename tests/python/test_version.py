"""One version number: Cargo.toml's. The extension compiles it in, ``gt.__version__``
re-exports it, and the installed distribution's metadata (written by maturin from the
same Cargo.toml) agrees."""

import importlib.metadata
import os
import pathlib
import re
import sysconfig

import pytest

import gradtape as gt

CARGO_TOML = pathlib.Path(__file__).resolve().parents[2] / "Cargo.toml"


def cargo_version():
    text = CARGO_TOML.read_text(encoding="utf-8")
    package = text.split("[package]", 1)[1].split("\n[", 1)[0]
    m = re.search(r'^version\s*=\s*"([^"]+)"', package, re.M)
    assert m, f"no version in {CARGO_TOML}"
    return m.group(1)


def test_version_is_cargo_toml_version():
    assert gt.__version__ == cargo_version()
    assert gt._gradtape.__version__ == gt.__version__


def test_version_is_pep440_release():
    assert re.fullmatch(r"\d+\.\d+\.\d+", gt.__version__), gt.__version__


def test_installed_metadata_has_the_same_version():
    # `maturin develop` and a wheel both install a gradtape-<version>.dist-info.
    assert importlib.metadata.version("gradtape") == gt.__version__


@pytest.mark.skipif(
    os.environ.get("GRADTAPE_TEST_INSTALLED") != "1",
    reason="only scripts/test-wheel tests an installed wheel",
)
def test_imported_from_the_installed_wheel():
    # scripts/test-wheel sets GRADTAPE_TEST_INSTALLED=1: the package under test must be
    # the wheel in the venv's site-packages, not python/gradtape in the source tree.
    site = pathlib.Path(sysconfig.get_paths()["platlib"]).resolve()
    here = pathlib.Path(gt.__file__).resolve()
    assert here.parent == site / "gradtape", here
    assert CARGO_TOML.parent not in here.parents, here
