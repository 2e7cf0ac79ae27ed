//! The Python gradient checks as one cargo test, for the mutation-score job
//! (`scripts/mutants`, docs/mutants.md).
//!
//! cargo-mutants runs `cargo test` on a mutated copy of the crate; this test builds that
//! copy's extension (`maturin develop`, the dev profile: quickest to rebuild) into the virtual
//! environment `GRADTAPE_MUTANTS_VENV` names, and runs the gradient checks against it,
//! stopping at the first failure: the op table's finite-difference and complex checks,
//! TF's numbers at kinks, the jacobian tests, and the mutated family's own test file.
//! It is ignored in a plain `cargo test` (it needs Python and minutes); scripts/mutants
//! runs it with `--include-ignored`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python files every mutant is checked with.
const GRADIENT_CHECKS: &[&str] = &[
    "tests/python/test_gradcheck.py",
    "tests/python/test_kinks.py",
    "tests/python/test_jacobian.py",
    "tests/python/test_autodiff.py",
];

/// The op families whose source differs from the unmutated tree (`GRADTAPE_MUTANTS_ORIGIN`):
/// `src/ops/reduce.rs` → `reduce`.
fn mutated_families(root: &Path, origin: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let dir = root.join("src/ops");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let (Ok(mine), Ok(theirs)) = (std::fs::read(&path), std::fs::read(origin.join(rel))) else {
            continue;
        };
        if mine != theirs {
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                out.push(stem.to_string());
            }
        }
    }
    out
}

#[test]
#[ignore = "the mutation job's Python stage (needs Python and minutes): run by scripts/mutants"]
fn python_gradient_checks() {
    let venv = PathBuf::from(
        std::env::var("GRADTAPE_MUTANTS_VENV").expect("scripts/mutants sets GRADTAPE_MUTANTS_VENV"),
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));

    let built = Command::new(venv.join("bin/maturin"))
        .args(["develop", "--quiet"])
        .env("VIRTUAL_ENV", &venv)
        .current_dir(root)
        .status()
        .expect("maturin runs");
    assert!(built.success(), "maturin develop failed");

    let mut files: Vec<String> = GRADIENT_CHECKS.iter().map(|s| s.to_string()).collect();
    if let Ok(origin) = std::env::var("GRADTAPE_MUTANTS_ORIGIN") {
        for family in mutated_families(root, Path::new(&origin)) {
            let own = format!("tests/python/test_{family}.py");
            if root.join(&own).exists() && !files.contains(&own) {
                files.push(own);
            }
        }
    }
    let passed = Command::new(venv.join("bin/python"))
        .args(["-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"])
        .args(&files)
        .current_dir(root)
        .status()
        .expect("pytest runs");
    assert!(
        passed.success(),
        "the Python gradient checks failed on this build"
    );
}
