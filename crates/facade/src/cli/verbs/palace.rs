//! `scriptorium palace`: write the memory palace of a workspace and print
//! its absolute path (FORMAT.md §9).

use std::io::{self, Write};
use std::path::PathBuf;

use scriptorium::{palace, snapshot, Code, Error};

use super::Ctx;
use crate::report::{self, refusal, Outcome};

/// Reads the workspace under the shared lock (an interrupted install is
/// completed first), writes the page, prints its path, and with `open`
/// hands it to the platform's opener; a failure to start the opener is a
/// warning on stderr, since the page is written either way.
pub(super) fn run(ctx: &Ctx, out: Option<PathBuf>, open: bool) -> Outcome {
    let root = &ctx.root;
    snapshot::require(root)?;
    let place = out.clone().unwrap_or_else(|| std::env::temp_dir().join(palace::FILE_NAME));
    if inside_workspace(root, &place) {
        let what = if out.is_some() { "--out" } else { "the temporary folder (TMPDIR)" };
        return Err(refusal(
            Code::InvalidArgument,
            format!(
                "{what} {} is inside the workspace; the page is written outside it, so it never changes memory or what an agent is given",
                place.display()
            ),
            Some(&place),
        ));
    }
    let html = {
        let _snapshot = super::snapshot(root)?;
        palace::generate(root)?
    };
    let path = palace::write(&html, out.as_deref())?;
    // One line whatever the path holds: control characters as \u{…}.
    let printed = report::line(&report::shown(&path.display().to_string()));
    if open {
        if let Err(e) = open_with_opener(&path) {
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

/// The platform's opener: `open` on macOS, `explorer` on Windows,
/// `xdg-open` elsewhere.
fn opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    }
}

/// Hands `path` to the platform's [`opener`] without waiting for it (a
/// browser may run for hours). `IO` when the opener cannot be started.
fn open_with_opener(path: &std::path::Path) -> Result<(), Error> {
    let opener = opener();
    std::process::Command::new(opener)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| {
            let mut err =
                Error::new(Code::Io, format!("cannot start {opener} to open {}: {e}", path.display()));
            err.path = Some(path.display().to_string());
            err
        })
}
