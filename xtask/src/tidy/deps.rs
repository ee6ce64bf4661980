//! The dependency rules, read from `cargo metadata`: layer order, the
//! third-party allow-list, the test kit as a dev-dependency only, and every
//! member inheriting the workspace lints.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// The layers, bottom first. A crate may depend only on crates ranked lower.
pub(crate) const LAYERS: &[&str] = &[
    "scriptorium-source-archive",
    "scriptorium-topic-markdown",
    "scriptorium-bm25-index",
    "scriptorium-transaction",
    "scriptorium-scheduler",
    "scriptorium-writer",
    "scriptorium",
];

/// Crates for tests only: they may depend on any layer, and any crate may
/// have them as a dev-dependency, never as a normal or build dependency.
pub(crate) const TEST_ONLY: &[&str] = &["scriptorium-testkit"];

/// Third-party crates the project may depend on, each with its reason.
pub(crate) const ALLOWED: &[(&str, &str)] = &[
    ("serde", "the serialization framework every JSON shape derives from"),
    ("serde_json", "JSON in and out (records, patches, CLI --json, MCP)"),
    ("nom", "the parser combinators of the archive and topic grammars"),
    ("memmap2", "memory-mapped archives, index files and the id and link table"),
    ("rayon", "parallel index builds"),
    ("bitpacking", "SIMD bit-packed blocks of 128 postings in the BM25 index (the layout tantivy reads)"),
    ("parking_lot", "small fast locks inside a process"),
    ("fs4", "the cross-process write lock"),
    ("tiktoken-rs", "o200k_base token counts for budgets and batches"),
    ("sha2", "anchor hashes, revisions and imported Codex node ids (SHA-256)"),
    ("unicode-normalization", "NFC for collision keys and speaker matching"),
    ("caseless", "full Unicode case folding for NFC/case-fold collision keys"),
    ("unicode-security", "UTS #39 confusable skeletons, so the memory fence catches look-alike tags"),
    ("unicode-segmentation", "UAX #29 word boundaries for the BM25 tokenizer"),
    ("rust-stemmers", "the Snowball English stemmer of the BM25 tokenizer"),
    ("clap", "the command-line parser of the scriptorium binary"),
    ("thiserror", "error type derives"),
    ("memchr", "fast line and byte scanning in the parsers"),
    ("aho-corasick", "one pass over a cited record for all of a block's quotations (grounded quotes)"),
    ("simdutf8", "SIMD UTF-8 validation of archive records (std's is the v2 parser's bottleneck)"),
    ("criterion", "benchmarks"),
    ("tantivy", "the benchmark peer of the BM25 index (benches crate only)"),
    ("proptest", "property tests"),
    ("tempfile", "temporary workspaces in tests and benchmarks"),
    ("libc", "posix_fadvise and mincore for the cold page cache of the hook benchmark (benches crate only)"),
    ("anyhow", "error plumbing in xtask and binaries only"),
    ("gix", "the workspace history as a git repository: objects, trees, commits, refs, index (pure Rust)"),
    ("rusqlite", "the embedded session store (SQLite, bundled so a fresh machine needs nothing installed)"),
    (
        "jiff",
        "time zones for the nightly 03:00 (DST-correct, bundled tzdb) and RFC 3339 parsing in importers",
    ),
    ("ureq", "the blocking HTTP client of the OpenAI-compatible model client (rustls, no async runtime)"),
    ("regex", "memory_grep's regular expressions (FORMAT.md names Rust regex syntax)"),
    ("toml", "the configuration files (scriptorium.toml, ~/.config/scriptorium/config.toml)"),
    ("libfuzzer-sys", "the cargo-fuzz harness of fuzz/"),
    ("tracing", "structured logs of the layers, off unless -v or RUST_LOG asks"),
    ("tracing-subscriber", "the scriptorium binary's log output (RUST_LOG filters, stderr)"),
    ("indicatif", "progress bars on long CLI work when stderr is a terminal"),
    ("rmcp", "the official Model Context Protocol SDK behind scriptorium mcp"),
    ("tokio", "the async runtime rmcp's stdio transport needs (current-thread, mcp only)"),
];

pub(crate) fn metadata(root: &Path, manifest: Option<&Path>) -> Result<Value> {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root).args(["metadata", "--format-version", "1", "--no-deps"]);
    if let Some(m) = manifest {
        cmd.arg("--manifest-path").arg(m);
    }
    let out = cmd.output().context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

fn rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

/// Dependency edges, the test-only crates and the allow-list, for one
/// `cargo metadata` output.
pub(crate) fn check_dependencies(meta: &Value, problems: &mut Vec<String>) {
    let local: Vec<&str> =
        meta["packages"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
    for pkg in meta["packages"].as_array().into_iter().flatten() {
        let name = pkg["name"].as_str().unwrap_or("?");
        for dep in pkg["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or("?");
            let kind = dep["kind"].as_str().unwrap_or("normal");
            if TEST_ONLY.contains(&dep_name) && kind != "dev" {
                problems.push(format!(
                    "{name} has {dep_name} as a {kind} dependency: it is for tests only (a dev-dependency)"
                ));
                continue;
            }
            let is_path = dep["path"].is_string();
            if is_path || local.contains(&dep_name) || rank(dep_name).is_some() {
                if let (Some(from), Some(to)) = (rank(name), rank(dep_name)) {
                    if to >= from {
                        problems.push(format!(
                            "{name} (layer {from}) depends on {dep_name} (layer {to}): dependencies must point down the layer order"
                        ));
                    }
                }
                continue;
            }
            if !ALLOWED.iter().any(|(a, _)| *a == dep_name) {
                problems.push(format!(
                    "{name} depends on {dep_name}, which is not on the allow-list in xtask/src/tidy/deps.rs (add it with a one-line reason)"
                ));
            }
        }
    }
}

/// Every member of the workspace says `[lints] workspace = true`, so the
/// workspace's lints (clippy's `too_many_lines` among them) hold in it.
pub(crate) fn check_lints_inherited(meta: &Value, root: &Path, problems: &mut Vec<String>) -> Result<()> {
    for pkg in meta["packages"].as_array().into_iter().flatten() {
        let name = pkg["name"].as_str().unwrap_or("?");
        let manifest = Path::new(pkg["manifest_path"].as_str().unwrap_or(""));
        let text = std::fs::read_to_string(manifest)
            .with_context(|| format!("cannot read {}", manifest.display()))?;
        let rel = manifest.strip_prefix(root).unwrap_or(manifest).display().to_string();
        if !inherits_lints(&text).with_context(|| format!("{rel} is not valid TOML"))? {
            problems.push(format!(
                "{rel} ({name}): must inherit the workspace lints with `[lints] workspace = true`"
            ));
        }
    }
    Ok(())
}

/// Whether a manifest says `[lints] workspace = true`.
fn inherits_lints(manifest: &str) -> Result<bool> {
    let doc: toml::Table = manifest.parse()?;
    Ok(doc.get("lints").and_then(|l| l.get("workspace")).and_then(toml::Value::as_bool) == Some(true))
}

#[cfg(test)]
mod tests {
    //! The dependency rules can fail.
    use super::*;
    use serde_json::json;

    #[test]
    fn upward_edges_and_unlisted_crates_are_caught() {
        let meta = json!({"packages": [
            {"name": "scriptorium-source-archive", "dependencies": [
                {"name": "scriptorium-transaction", "path": "/x"},
                {"name": "left-pad"},
                {"name": "serde"}
            ]},
            {"name": "scriptorium-transaction", "dependencies": [
                {"name": "scriptorium-source-archive", "path": "/y"}
            ]}
        ]});
        let mut problems = Vec::new();
        check_dependencies(&meta, &mut problems);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("layer order"));
        assert!(problems[1].contains("left-pad"));
    }

    #[test]
    fn the_test_kit_is_a_dev_dependency_only() {
        let meta = json!({"packages": [
            {"name": "scriptorium-testkit", "dependencies": [
                {"name": "scriptorium", "path": "/f", "kind": null},
                {"name": "scriptorium-writer", "path": "/w", "kind": null}
            ]},
            {"name": "scriptorium-writer", "dependencies": [
                {"name": "scriptorium-testkit", "path": "/t", "kind": "dev"}
            ]},
            {"name": "scriptorium-scheduler", "dependencies": [
                {"name": "scriptorium-testkit", "path": "/t", "kind": null}
            ]},
            {"name": "scriptorium-transaction", "dependencies": [
                {"name": "scriptorium-testkit", "path": "/t", "kind": "build"}
            ]}
        ]});
        let mut problems = Vec::new();
        check_dependencies(&meta, &mut problems);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("scriptorium-scheduler has scriptorium-testkit as a normal"));
        assert!(problems[1].starts_with("scriptorium-transaction has scriptorium-testkit as a build"));
    }

    #[test]
    fn a_member_without_the_workspace_lints_is_caught() {
        assert!(inherits_lints("[package]\nname = \"a\"\n\n[lints]\nworkspace = true\n").unwrap());
        assert!(!inherits_lints("[package]\nname = \"a\"\n").unwrap());
        assert!(!inherits_lints("[lints.clippy]\ntodo = \"deny\"\n").unwrap());
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(&manifest, "[package]\nname = \"a\"\n").unwrap();
        let meta = json!({"packages": [{"name": "a", "manifest_path": manifest}]});
        let mut problems = Vec::new();
        check_lints_inherited(&meta, dir.path(), &mut problems).unwrap();
        assert_eq!(
            problems,
            ["Cargo.toml (a): must inherit the workspace lints with `[lints] workspace = true`"]
        );
    }
}
