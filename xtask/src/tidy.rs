//! The tidy rules: architecture invariants and hygiene, checked on every
//! `cargo test` and by `cargo xtask tidy`.
//!
//! * No dependency edge points up the layer order (read from `cargo metadata`).
//! * Every third-party dependency is on the allow-list below, with a reason.
//! * Every Rust file opens with a `//!` doc.
//! * No unfinished-code or debugging macros anywhere.

use std::path::{Path, PathBuf};
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

/// Third-party crates the project may depend on, each with its reason.
pub(crate) const ALLOWED: &[(&str, &str)] = &[
    ("serde", "the serialization framework every JSON shape derives from"),
    ("serde_json", "JSON in and out (records, patches, CLI --json, MCP)"),
    ("nom", "the parser combinators of the archive and topic grammars"),
    ("memmap2", "memory-mapped archives, index files and the id and link table"),
    ("rayon", "parallel index builds"),
    ("parking_lot", "small fast locks inside a process"),
    ("fs4", "the cross-process write lock"),
    ("tiktoken-rs", "o200k_base token counts for budgets and batches"),
    ("sha2", "anchor hashes and revisions (SHA-256)"),
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
    ("anyhow", "error plumbing in xtask and binaries only"),
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

fn metadata(root: &Path, manifest: Option<&Path>) -> Result<Value> {
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

/// Dependency edges and the allow-list, for one `cargo metadata` output.
fn check_dependencies(meta: &Value, problems: &mut Vec<String>) {
    let local: Vec<&str> =
        meta["packages"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
    for pkg in meta["packages"].as_array().into_iter().flatten() {
        let name = pkg["name"].as_str().unwrap_or("?");
        for dep in pkg["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or("?");
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
                    "{name} depends on {dep_name}, which is not on the allow-list in xtask/src/tidy.rs (add it with a one-line reason)"
                ));
            }
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && name != ".git" && name != "corpus" && name != "artifacts" {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every Rust file documents itself and holds no unfinished code.
fn check_sources(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    let mut files = Vec::new();
    for dir in ["crates", "xtask", "benches", "fuzz"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    if files.is_empty() {
        bail!("no Rust files found under {}", root.display());
    }
    let banned: Vec<String> = ["todo", "unimplemented", "dbg"].iter().map(|m| format!("{m}!")).collect();
    for f in files {
        let text = std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
        let rel = f.strip_prefix(root).unwrap_or(&f).display().to_string();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if !first.starts_with("//!") {
            problems.push(format!("{rel}: must open with a `//!` doc saying what the module is"));
        }
        for (n, line) in text.lines().enumerate() {
            for b in &banned {
                if line.contains(b.as_str()) {
                    problems.push(format!("{rel}:{}: `{b}` is not allowed", n + 1));
                }
            }
        }
    }
    Ok(())
}

/// Runs every tidy rule and returns the problems found.
pub(crate) fn check(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let meta = metadata(root, None)?;
    for layer in LAYERS {
        let found = meta["packages"].as_array().into_iter().flatten().any(|p| p["name"] == *layer);
        if !found {
            problems.push(format!("layer crate {layer} is missing from the workspace"));
        }
    }
    check_dependencies(&meta, &mut problems);
    check_dependencies(&metadata(root, Some(&root.join("fuzz/Cargo.toml")))?, &mut problems);
    check_sources(root, &mut problems)?;
    Ok(problems)
}

#[cfg(test)]
mod tests {
    //! Tidy as a test, plus tests that the rules can fail.
    use super::*;
    use serde_json::json;

    #[test]
    fn tidy() {
        let problems = check(&crate::root()).unwrap();
        assert!(problems.is_empty(), "tidy problems:\n{}", problems.join("\n"));
    }

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
    fn undocumented_and_unfinished_files_are_caught() {
        let dir = tempfile_dir();
        std::fs::create_dir_all(dir.join("crates/x/src")).unwrap();
        std::fs::write(dir.join("crates/x/src/lib.rs"), format!("fn f() {{ {}!() }}\n", "todo")).unwrap();
        let mut problems = Vec::new();
        check_sources(&dir, &mut problems).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(problems.len(), 2, "{problems:?}");
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("xtask-tidy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }
}
