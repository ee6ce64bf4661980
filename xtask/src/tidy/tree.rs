//! The dependency-tree rule: a library crate drags no crate only a binary
//! needs. Read from `cargo tree -p <crate> --no-default-features -e normal`,
//! so what a library pulls in by itself, whatever features its users turn
//! on.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// Crates only a binary needs (argument parsing, progress bars, the MCP
/// server and its runtime, log output): no library crate's tree may hold
/// them.
pub(crate) const BINARY_ONLY: &[&str] = &["clap", "indicatif", "rmcp", "tokio", "tracing-subscriber"];

/// Crates a given library must not pull in without its default features,
/// beyond [`BINARY_ONLY`], with the feature that brings them.
pub(crate) const FEATURE_ONLY: &[(&str, &str, &str)] =
    &[("scriptorium-topic-markdown", "tiktoken-rs", "tokens")];

/// Library crates of the workspace the rule does not read, with the reason.
pub(crate) const NOT_LIBRARIES: &[(&str, &str)] = &[(
    "scriptorium-benches",
    "the benchmarks' helpers; they drive the scriptorium binary and nothing depends on them",
)];

/// The library crates of the workspace: members with a `lib` target, but
/// [`NOT_LIBRARIES`].
pub(crate) fn libraries(meta: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for pkg in meta["packages"].as_array().into_iter().flatten() {
        let name = pkg["name"].as_str().unwrap_or("?");
        let is_lib = pkg["targets"].as_array().into_iter().flatten().any(|t| {
            t["kind"].as_array().into_iter().flatten().any(|k| k.as_str().is_some_and(|k| k.ends_with("lib")))
        });
        if is_lib && !NOT_LIBRARIES.iter().any(|(n, _)| *n == name) {
            out.push(name.to_owned());
        }
    }
    out.sort();
    out
}

/// The crate names in `cargo tree --prefix none` output.
fn names(tree: &str) -> Vec<&str> {
    tree.lines().filter_map(|l| l.split_whitespace().next()).collect()
}

/// What `krate`'s tree (`cargo tree` output) holds that it must not.
fn tree_problems(krate: &str, tree: &str) -> Vec<String> {
    let names = names(tree);
    let mut problems = Vec::new();
    for banned in BINARY_ONLY {
        if names.contains(banned) {
            problems.push(format!(
                "{krate} (without default features) depends on {banned}, which only a binary needs: put it behind a feature of the binary"
            ));
        }
    }
    for (lib, banned, feature) in FEATURE_ONLY {
        if *lib == krate && names.contains(banned) {
            problems.push(format!(
                "{krate} (without default features) depends on {banned}: it belongs behind its feature `{feature}`"
            ));
        }
    }
    problems
}

/// Runs `cargo tree` for every library crate and checks what it holds.
pub(crate) fn check_trees(root: &Path, meta: &Value, problems: &mut Vec<String>) -> Result<()> {
    for krate in libraries(meta) {
        let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .current_dir(root)
            .args([
                "tree",
                "--locked",
                "-p",
                &krate,
                "--no-default-features",
                "-e",
                "normal",
                "--prefix",
                "none",
            ])
            .output()
            .context("cannot run cargo tree")?;
        if !out.status.success() {
            bail!("cargo tree -p {krate} failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        problems.extend(tree_problems(&krate, &String::from_utf8_lossy(&out.stdout)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The tree rule can fail.
    use super::*;
    use serde_json::json;

    #[test]
    fn binary_crates_in_a_library_tree_are_caught() {
        let tree = "scriptorium v0.1.0 (/w/crates/facade)\nclap v4.6.0\nclap_builder v4.6.0\nserde v1.0.0\ntokio v1.54.1 (*)\n";
        let problems = tree_problems("scriptorium", tree);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("depends on clap,"));
        assert!(problems[1].contains("depends on tokio,"));
        assert!(tree_problems("scriptorium", "scriptorium v0.1.0\nclap_builder v4\n").is_empty());
    }

    #[test]
    fn a_tokenizer_without_its_feature_is_caught() {
        let tree = "scriptorium-topic-markdown v0.1.0 (/w)\ntiktoken-rs v0.12.0\n";
        let problems = tree_problems("scriptorium-topic-markdown", tree);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("feature `tokens`"));
        assert!(tree_problems("scriptorium-writer", tree).is_empty());
    }

    #[test]
    fn libraries_are_members_with_a_lib_target() {
        let meta = json!({"packages": [
            {"name": "xtask", "targets": [{"kind": ["bin"]}]},
            {"name": "scriptorium", "targets": [{"kind": ["lib"]}, {"kind": ["bin"]}]},
            {"name": "scriptorium-benches", "targets": [{"kind": ["lib"]}]},
            {"name": "p", "targets": [{"kind": ["proc-macro"]}]},
            {"name": "r", "targets": [{"kind": ["rlib", "cdylib"]}]}
        ]});
        assert_eq!(libraries(&meta), ["r", "scriptorium"]);
    }
}
