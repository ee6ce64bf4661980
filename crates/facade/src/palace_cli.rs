//! `scriptorium palace`: write the memory palace of a workspace and print
//! its absolute path (FORMAT.md §9).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use scriptorium::palace;
use scriptorium::tools::ToolError;

use crate::{fail_with, print_line, refuse, settle, workspace};

fn fail_tool(e: &ToolError) -> ExitCode {
    fail_with(&e.code, e.message.clone(), e.path.as_deref().map(std::path::Path::new))
}

/// Reads the workspace under the shared lock (an interrupted install is
/// completed first), writes the page, prints its path, and with `open`
/// hands it to the platform's opener; a failure to start the opener is a
/// warning on stderr, since the page is written either way.
pub(crate) fn run(root: PathBuf, out: Option<PathBuf>, open: bool) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    if let Some(o) = &out {
        if let Some(inside) = inside_memory(&root, o) {
            return fail_with(
                "INVALID_ARGUMENT",
                format!(
                    "--out {} is inside the workspace's {inside}; the page is written outside memory",
                    o.display()
                ),
                Some(o),
            );
        }
    }
    let html = {
        let _shared = match settle(&root) {
            Ok(l) => l,
            Err(code) => return code,
        };
        match palace::generate(&root) {
            Ok(h) => h,
            Err(e) => return fail_tool(&e),
        }
    };
    let path = match palace::write(&html, out.as_deref()) {
        Ok(p) => p,
        Err(e) => return fail_tool(&e),
    };
    let printed = print_line(&path.display().to_string());
    if open {
        if let Err(e) = palace::open(&path) {
            let _ = writeln!(io::stderr().lock(), "warning: {}; open the file yourself", e.message);
        }
    }
    printed
}

/// The part of the workspace (`topics/`, `sources/`, `.scriptorium/`) the
/// folder of `out` lies in, if any: the page must never change memory or
/// its revision.
fn inside_memory(root: &std::path::Path, out: &std::path::Path) -> Option<&'static str> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let parent = std::fs::canonicalize(parent).ok()?;
    let root = std::fs::canonicalize(root).ok()?;
    ["topics", "sources", ".scriptorium"].into_iter().find(|d| parent.starts_with(root.join(d)))
}
