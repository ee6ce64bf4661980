//! The tidy rules: architecture invariants and hygiene, checked on every
//! `cargo test` and by `cargo xtask tidy`.
//!
//! * **Layers** ([`deps`]): no dependency edge points up the layer order
//!   (read from `cargo metadata`); the test kit (`scriptorium-testkit`) may
//!   depend on any layer, and is only ever a dev-dependency.
//! * **Allow-list** ([`deps`]): every third-party dependency is listed, with
//!   a reason.
//! * **Workspace lints** ([`deps`]): every member of the workspace says
//!   `[lints] workspace = true` (`fuzz/` is a workspace of its own).
//! * **Dependency tree** ([`tree`]): no library crate, built without its
//!   default features, pulls in a crate only a binary needs (`clap`,
//!   `indicatif`, `rmcp`, `tokio`, `tracing-subscriber`); the topic crate
//!   without its `tokens` feature has no tokenizer.
//! * **Docs and unfinished code** ([`sources`]): every Rust file opens with
//!   a `//!` doc; no unfinished-code or debugging macros anywhere.
//! * **File length** ([`sources`]): no source file under `crates/*/src`
//!   over 600 lines, its `#[cfg(test)]` modules not counted (from the
//!   attribute to the module's closing brace) and test files (`tests.rs`,
//!   files in a `tests` folder) not read.
//! * **Function length** ([`functions`]): no function over 100 lines as
//!   clippy's `too_many_lines` counts them — the lint is on in
//!   `[workspace.lints.clippy]`, its threshold in `clippy.toml`, and tidy
//!   checks both, and that the lint is allowed at most twice, each time at a
//!   function listed with its reason.
//! * **No import circles** ([`circles`], where the definition is): between
//!   the top-level modules of a crate, or between the modules of one module
//!   folder, no module depends on another that depends back on it, directly
//!   or around a longer circle.

mod circles;
mod deps;
mod functions;
mod lexer;
mod scc;
mod sources;
mod tree;

use std::path::{Path, PathBuf};

use anyhow::Result;

/// The folders of the workspace members, from `cargo metadata`.
fn member_dirs(meta: &serde_json::Value) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Path::new(p["manifest_path"].as_str()?).parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs
}

/// Runs every tidy rule and returns the problems found.
pub(crate) fn check(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let meta = deps::metadata(root, None)?;
    for layer in deps::LAYERS.iter().chain(deps::TEST_ONLY) {
        let found = meta["packages"].as_array().into_iter().flatten().any(|p| p["name"] == *layer);
        if !found {
            problems.push(format!("crate {layer} is missing from the workspace"));
        }
    }
    deps::check_dependencies(&meta, &mut problems);
    deps::check_dependencies(&deps::metadata(root, Some(&root.join("fuzz/Cargo.toml")))?, &mut problems);
    deps::check_lints_inherited(&meta, root, &mut problems)?;
    tree::check_trees(root, &meta, &mut problems)?;
    let sources = sources::read_sources(root)?;
    sources::check_sources(&sources, &mut problems);
    functions::check_config(root, &mut problems)?;
    functions::check_allowances(&sources, &mut problems);
    circles::check_circles(root, &member_dirs(&meta), &mut problems)?;
    Ok(problems)
}

#[cfg(test)]
mod tests {
    //! Tidy as a test; each module's tests show its rules can fail.

    #[test]
    fn tidy() {
        let problems = super::check(&crate::root()).unwrap();
        assert!(problems.is_empty(), "tidy problems:\n{}", problems.join("\n"));
    }
}
