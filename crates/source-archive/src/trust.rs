//! Promotions: pending records an owner has since vouched for.
//!
//! A record archived with `"pending": true` stays pending in the archive for
//! ever (the archive is append-only). Its promotion is recorded instead as
//! one line of `.scriptorium/audit.jsonl`:
//!
//! ```json
//! {"time":"2026-08-09T10:11:12Z","action":"promote","who":"owner","sources":["chat/g1/m3"],"revision":"…"}
//! ```
//!
//! Earlier versions named the actor under `by`; either line promotes the
//! same (the actor is not needed to decide trust).
//!
//! A record whose id is listed by a `promote` line counts as trusted. A line
//! that does not parse (a torn last line after a crash, a hand edit) promotes
//! nothing: when in doubt, text stays pending.

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::{Error, Result};

/// The audit log, relative to the workspace root.
pub const AUDIT_FILE: &str = ".scriptorium/audit.jsonl";

#[derive(serde::Deserialize)]
struct Line {
    action: String,
    #[serde(default)]
    sources: Vec<String>,
}

/// The ids promoted by the lines of an audit log.
pub fn promoted_in(text: &[u8]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.split(|&b| b == b'\n') {
        if let Ok(l) = serde_json::from_slice::<Line>(line) {
            if l.action == "promote" {
                out.extend(l.sources);
            }
        }
    }
    out
}

/// The ids promoted in workspace `root` (empty when there is no audit log).
pub fn promoted(root: &Path) -> Result<BTreeSet<String>> {
    let path = root.join(AUDIT_FILE);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(promoted_in(&bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeSet::new()),
        Err(e) => Err(Error::io(e, "cannot read", &path)),
    }
}

#[cfg(test)]
mod tests {
    //! What counts as a promotion.
    use super::*;

    #[test]
    fn only_whole_promote_lines_count() {
        let log = concat!(
            r#"{"time":"t","action":"promote","by":"owner","sources":["a/b/c","a/b/d"]}"#,
            "\n",
            r#"{"time":"t","action":"promote","who":"owner","sources":["a/b/e"],"revision":"r"}"#,
            "\n",
            r#"{"time":"t","action":"note","sources":["x/y/z"]}"#,
            "\n",
            r#"{"time":"t","action":"promote","sources":["p/q/"#
        );
        let got: Vec<String> = promoted_in(log.as_bytes()).into_iter().collect();
        assert_eq!(got, ["a/b/c", "a/b/d", "a/b/e"]);
    }
}
