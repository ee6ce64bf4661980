//! `scriptorium palace`: write the memory palace of a workspace and print
//! its absolute path (FORMAT.md §9).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use scriptorium::palace;
use scriptorium::Error;

use crate::{fail_with, print_line, refuse, settle, workspace};

fn fail_tool(e: &Error) -> ExitCode {
    fail_with(e.code.as_str(), e.message.clone(), e.path.as_deref().map(std::path::Path::new))
}

/// Reads the workspace under the shared lock (an interrupted install is
/// completed first), writes the page, prints its path, and with `open`
/// hands it to the platform's opener; a failure to start the opener is a
/// warning on stderr, since the page is written either way.
pub(crate) fn run(root: PathBuf, out: Option<PathBuf>, open: bool) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let place = out.clone().unwrap_or_else(|| std::env::temp_dir().join(palace::FILE_NAME));
    if inside_workspace(&root, &place) {
        let what = if out.is_some() { "--out" } else { "the temporary folder (TMPDIR)" };
        return fail_with(
            "INVALID_ARGUMENT",
            format!(
                "{what} {} is inside the workspace; the page is written outside it, so it never changes memory or what an agent is given",
                place.display()
            ),
            Some(&place),
        );
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
    // One line whatever the path holds: control characters as \u{…}.
    let printed = print_line(&crate::shown(&path.display().to_string()));
    if open {
        if let Err(e) = palace::open(&path) {
            let _ = writeln!(io::stderr().lock(), "warning: {}; open the file yourself", e.message);
        }
    }
    printed
}

/// Whether the folder `place` would be written in lies inside the
/// workspace (after resolving links): a page there could shadow `topics/`,
/// replace a derived `core.md`, or change the revision.
fn inside_workspace(root: &std::path::Path, place: &std::path::Path) -> bool {
    let parent = match place.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    match (std::fs::canonicalize(parent), std::fs::canonicalize(root)) {
        (Ok(parent), Ok(root)) => parent.starts_with(root),
        _ => false,
    }
}
