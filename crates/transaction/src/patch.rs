//! The patch, a transaction's input (FORMAT.md §6), and the checks made
//! before the write lock is taken: its shape, every path, the tier. The
//! checks of the paths against the disk, made under the lock, are in
//! `on_disk`.

use serde::Deserialize;

use scriptorium_source_archive::{input, SourceRecord};

use crate::error::{Code, Error};

mod on_disk;

pub use on_disk::{check_files_on_disk, check_paths_on_disk};

/// One edit of a topic file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Edit {
    /// A new file; `CONFLICT` when the path exists.
    Create {
        /// Workspace-relative path.
        path: String,
        /// The whole file.
        content: String,
    },
    /// Bytes appended to an existing file.
    Append {
        /// Workspace-relative path.
        path: String,
        /// The bytes to append.
        content: String,
    },
    /// An existing file's whole content replaced.
    Replace {
        /// Workspace-relative path.
        path: String,
        /// The new content.
        content: String,
    },
    /// The first occurrence of `old` replaced by `new`.
    StrReplace {
        /// Workspace-relative path.
        path: String,
        /// Text to find (non-empty).
        old: String,
        /// Its replacement.
        new: String,
    },
    /// An existing file removed.
    Delete {
        /// Workspace-relative path.
        path: String,
    },
}

impl Edit {
    /// The path it edits.
    pub fn path(&self) -> &str {
        match self {
            Edit::Create { path, .. }
            | Edit::Append { path, .. }
            | Edit::Replace { path, .. }
            | Edit::StrReplace { path, .. }
            | Edit::Delete { path } => path,
        }
    }

    /// `create`, `append`, `replace`, `str_replace` or `delete`.
    pub fn op(&self) -> &'static str {
        match self {
            Edit::Create { .. } => "create",
            Edit::Append { .. } => "append",
            Edit::Replace { .. } => "replace",
            Edit::StrReplace { .. } => "str_replace",
            Edit::Delete { .. } => "delete",
        }
    }
}

/// Who is writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// May do everything.
    Owner,
    /// May only create files and append to them.
    Paired,
}

impl Tier {
    /// Parses `owner` or `paired`.
    pub fn parse(s: &str) -> Option<Tier> {
        match s {
            "owner" => Some(Tier::Owner),
            "paired" => Some(Tier::Paired),
            _ => None,
        }
    }

    /// `owner` or `paired`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Owner => "owner",
            Tier::Paired => "paired",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename = "patch")]
struct Raw {
    base_revision: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    sources: Vec<serde_json::Value>,
    #[serde(default)]
    edits: Vec<Edit>,
}

/// A parsed, checked patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The revision the writer read; `CONFLICT` when it is not current.
    pub base_revision: String,
    /// Why (recorded in the history).
    pub message: String,
    /// Records to archive first, as `archive append` takes them.
    pub sources: Vec<SourceRecord>,
    /// Edits, applied in order after the sources.
    pub edits: Vec<Edit>,
}

/// Checks one edit path (FORMAT.md §6): workspace-relative under `topics/`,
/// ending in lowercase `.md`, every component non-empty and not `.` or
/// `..`, no NUL, no backslash, not absolute. Twins of existing paths and
/// links are checked against the disk when the patch is staged.
pub fn check_path(path: &str) -> Result<(), Error> {
    let bad = |why: &str| Err(Error::new(Code::InvalidArgument, format!("path {path:?} {why}")).at(path));
    if path.contains('\0') {
        return bad("contains NUL");
    }
    if path.contains('\\') {
        return bad("contains a backslash");
    }
    if path.starts_with('/') {
        return bad("is absolute");
    }
    if !path.starts_with("topics/") {
        return bad("is not under topics/");
    }
    if !path.ends_with(".md") {
        return bad("does not end in .md");
    }
    if path.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return bad("has an empty, `.` or `..` component");
    }
    if path.split('/').any(|c| c.eq_ignore_ascii_case(".git")) {
        return bad("has a `.git` component (git's own name, never a topic folder)");
    }
    if path.len() <= "topics/".len() + ".md".len() {
        return bad("names no file");
    }
    if path.split('/').any(|c| c.len() > 255) {
        return bad("has a component longer than 255 bytes");
    }
    Ok(())
}

/// Checks a path an install may write: a topic path ([`check_path`]) or a
/// v2 archive file `sources/<provider>/_v2/<thread>.md` with plain
/// components. Recovery refuses an intent naming anything else.
pub fn check_target(path: &str) -> Result<(), Error> {
    if path.starts_with("topics/") {
        return check_path(path);
    }
    let parts: Vec<&str> = path.split('/').collect();
    let plain = |c: &str| !c.is_empty() && c != "." && c != ".." && !c.contains(['\\', '\0']);
    if parts.len() == 4
        && parts[0] == "sources"
        && parts[2] == "_v2"
        && parts[3].ends_with(".md")
        && parts.iter().all(|c| plain(c))
    {
        return Ok(());
    }
    Err(Error::new(Code::InvalidArgument, format!("{path:?} is not a path an install may write")).at(path))
}

/// Whether `path` is a file a whole-file change may write: a topic file, a
/// v2 archive file, or a legacy archive file (`sources/<provider>/<name>.md`,
/// which only a sync brings from another machine); the provider and thread
/// of a v2 file in their canonical encoding (FORMAT.md §2.1), and no name
/// hidden (starting with `.`).
pub fn check_file_path(path: &str) -> Result<(), Error> {
    if path.starts_with("topics/") {
        return check_path(path);
    }
    // A path component: not empty, not hidden, at most 200 bytes (§2.1).
    let canonical = |c: &str| {
        !c.is_empty()
            && !c.starts_with('.')
            && c.len() <= 200
            && scriptorium_source_archive::pct::decode_canonical(c.as_bytes()).is_ok()
    };
    let plain = |c: &str| !c.is_empty() && !c.starts_with('.') && !c.contains(['\\', '\0']);
    let fine = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["sources", provider, "_v2", file] => {
            check_target(path).is_ok()
                && canonical(provider)
                && file.strip_suffix(".md").is_some_and(canonical)
        }
        ["sources", provider, file] => plain(provider) && plain(file) && file.ends_with(".md"),
        _ => false,
    };
    if fine {
        Ok(())
    } else {
        Err(Error::new(Code::InvalidArgument, format!("{path:?} is not a workspace file")).at(path))
    }
}

/// Parses a patch and makes every check that needs no lock: its JSON shape
/// (unknown keys refused), each source record, each path, non-empty `old`,
/// then the tier. `INVALID_ARGUMENT` comes before `PERMISSION_DENIED`.
pub fn parse(json: &str, tier: Tier) -> Result<Patch, Error> {
    let json = json.strip_prefix('\u{feff}').unwrap_or(json);
    let raw: Raw = serde_json::from_str(json).map_err(|e| {
        let mut err = Error::new(Code::InvalidArgument, format!("the patch is not valid: {e}"));
        if e.line() > 0 {
            // serde_json's line is 1-based and its column counts bytes
            // (1-based); the offset is the byte where it stopped.
            err.line = Some(e.line() as u64);
            let line_start: usize = json.split_inclusive('\n').take(e.line() - 1).map(str::len).sum();
            err.offset = Some((line_start + e.column().saturating_sub(1)) as u64);
        }
        err
    })?;
    if raw.base_revision.len() != 64
        || !raw.base_revision.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(Error::new(
            Code::InvalidArgument,
            format!(
                "base_revision {:?} is not a revision (64 lowercase hex digits, as `status` prints it)",
                raw.base_revision
            ),
        )
        .at("base_revision"));
    }
    let mut sources = Vec::with_capacity(raw.sources.len());
    for (k, v) in raw.sources.iter().enumerate() {
        let text = v.to_string();
        let record = input::parse_record(&text).map_err(|e| {
            Error::new(Code::InvalidArgument, format!("sources[{k}]: {}", e.message()))
                .at(format!("sources[{k}]"))
        })?;
        sources.push(record);
    }
    for (k, e) in raw.edits.iter().enumerate() {
        check_path(e.path()).map_err(|err| Error { path: Some(format!("edits[{k}].path")), ..err })?;
        if let Edit::StrReplace { old, .. } = e {
            if old.is_empty() {
                return Err(Error::new(Code::InvalidArgument, "str_replace needs a non-empty `old`")
                    .at(format!("edits[{k}].old")));
            }
        }
    }
    let patch = Patch { base_revision: raw.base_revision, message: raw.message, sources, edits: raw.edits };
    check_tier(&patch, tier)?;
    Ok(patch)
}

/// The tier's refusal. A `paired` caller (a model) never names who spoke:
/// a record of its patch that carries a speaker is `INVALID_ARGUMENT` at
/// `sources[k].speaker_id` (or `.speaker_display`). It may archive only
/// pending records and may only `create` and `append` (`PERMISSION_DENIED`,
/// by op name, even on a file the patch creates).
pub fn check_tier(patch: &Patch, tier: Tier) -> Result<(), Error> {
    if tier == Tier::Paired {
        // Identity comes only from the chat platform or the owner: a speaker
        // written by a model would be archived with a `speaker-id` line and
        // read back as a trusted identity.
        if let Some((k, speaker)) =
            patch.sources.iter().enumerate().find_map(|(k, r)| Some((k, r.speaker()?)))
        {
            let field = if speaker.id().is_some() { "speaker_id" } else { "speaker_display" };
            return Err(Error::new(
                Code::InvalidArgument,
                format!(
                    "sources[{k}]: the paired tier may not name a speaker ({field}); who spoke comes only from the chat platform or the owner"
                ),
            )
            .at(format!("sources[{k}].{field}")));
        }
        // A patch's records carry speaker fields its author wrote, not the
        // chat platform's: from the paired tier they stay pending until an
        // owner promotes them.
        if let Some(k) = patch.sources.iter().position(|r| !r.is_pending()) {
            return Err(Error::new(
                Code::PermissionDenied,
                "the paired tier may archive only pending records (\"pending\": true); an owner promotes them",
            )
            .at(format!("sources[{k}]")));
        }
        if let Some((k, e)) =
            patch.edits.iter().enumerate().find(|(_, e)| {
                matches!(e, Edit::Replace { .. } | Edit::StrReplace { .. } | Edit::Delete { .. })
            })
        {
            return Err(Error::new(
                Code::PermissionDenied,
                format!(
                    "the paired tier may only create and append; `{}` of {} is refused",
                    e.op(),
                    e.path()
                ),
            )
            .at(format!("edits[{k}]")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Patch shapes, path rules and which refusal wins.
    use super::*;

    const REC: &str = r#"{"provider":"chat","thread":"t","message":"m1","role":"user","timestamp":"2026-08-09T10:11:12Z","content":"hi","pending":true}"#;

    fn patch(edits: &str) -> String {
        format!(
            r#"{{"base_revision":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","message":"why","sources":[{REC}],"edits":[{edits}]}}"#
        )
    }

    #[test]
    fn parses_every_op_in_order() {
        let p = parse(
            &patch(
                r#"{"op":"create","path":"topics/people/ada.md","content":"x"},
                   {"op":"append","path":"topics/people/ada.md","content":"y"},
                   {"op":"replace","path":"topics/a.md","content":"z"},
                   {"op":"str_replace","path":"topics/a.md","old":"z","new":"w"},
                   {"op":"delete","path":"topics/a.md"}"#,
            ),
            Tier::Owner,
        )
        .unwrap();
        assert_eq!(p.base_revision, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(p.sources.len(), 1);
        let ops: Vec<&str> = p.edits.iter().map(Edit::op).collect();
        assert_eq!(ops, ["create", "append", "replace", "str_replace", "delete"]);
    }

    #[test]
    fn paths_outside_the_rules_are_invalid() {
        for bad in [
            "topics/../x.md",
            "topics/./x.md",
            "topics//x.md",
            "/topics/x.md",
            "sources/x.md",
            "topics/x.MD",
            "topics/x.txt",
            "topics/a\\b.md",
            "topics/a\0.md",
            "topics/.md",
            "core.md",
            "topics/x.md/",
        ] {
            let e = check_path(bad).unwrap_err();
            assert_eq!(e.code, Code::InvalidArgument, "{bad:?}");
        }
        for good in ["topics/a.md", "topics/people/ada.md", "topics/é/東京.md", "topics/.hidden/a.md"] {
            assert!(check_path(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn which_refusal_wins() {
        // Invalid beats permission: a paired replace on a bad path.
        let e =
            parse(&patch(r#"{"op":"replace","path":"../x.md","content":"z"}"#), Tier::Paired).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        let e = parse(&patch(r#"{"op":"replace","path":"topics/x.md","content":"z"}"#), Tier::Paired)
            .unwrap_err();
        assert_eq!(e.code, Code::PermissionDenied);
        assert_eq!(e.path.as_deref(), Some("edits[0]"));
        for op in [r#""op":"delete""#, r#""op":"str_replace","old":"a","new":"b""#] {
            let e = parse(&patch(&format!(r#"{{{op},"path":"topics/x.md"}}"#)), Tier::Paired).unwrap_err();
            assert_eq!(e.code, Code::PermissionDenied, "{op}");
        }
        let ok = r#"{"op":"create","path":"topics/x.md","content":"a"},{"op":"append","path":"topics/x.md","content":"b"}"#;
        assert!(parse(&patch(ok), Tier::Paired).is_ok());
        // The paired tier archives only pending records.
        let trusted = patch(ok).replace(r#","pending":true"#, "");
        let e = parse(&trusted, Tier::Paired).unwrap_err();
        assert_eq!((e.code, e.path.as_deref()), (Code::PermissionDenied, Some("sources[0]")));
        assert!(parse(&trusted, Tier::Owner).is_ok());
        // A paired caller never names a speaker: not an id, not a display,
        // pending or not; refused as invalid before the tier's permissions.
        let spoken = patch(ok)
            .replace(r#""content":"hi","#, r#""content":"hi","speaker_id":"7391","speaker_display":"Ada","#);
        let e = parse(&spoken, Tier::Paired).unwrap_err();
        assert_eq!((e.code, e.path.as_deref()), (Code::InvalidArgument, Some("sources[0].speaker_id")));
        let display_only = spoken.replace(r#""speaker_id":"7391","#, "");
        let e = parse(&display_only, Tier::Paired).unwrap_err();
        assert_eq!((e.code, e.path.as_deref()), (Code::InvalidArgument, Some("sources[0].speaker_display")));
        let e = parse(&spoken.replace(r#","pending":true"#, ""), Tier::Paired).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(parse(&spoken, Tier::Owner).is_ok(), "an owner names speakers");
        // A base revision is 64 lowercase hex digits.
        let e = parse(&patch(ok).replace("e3b0c442", "E3B0C442"), Tier::Owner).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        // Empty `old`, unknown keys, unknown ops, bad records, no base revision.
        for bad in [
            patch(r#"{"op":"str_replace","path":"topics/x.md","old":"","new":"b"}"#),
            patch(r#"{"op":"create","path":"topics/x.md","content":"a","mode":"0777"}"#),
            patch(r#"{"op":"chmod","path":"topics/x.md"}"#),
            r#"{"base_revision":"a","sources":[{"provider":"p"}]}"#.to_owned(),
            r#"{"message":"no base"}"#.to_owned(),
            r#"{"base_revision":"a","extra":1}"#.to_owned(),
            "[]".to_owned(),
            "".to_owned(),
        ] {
            let e = parse(&bad, Tier::Owner).unwrap_err();
            assert_eq!(e.code, Code::InvalidArgument, "{bad}");
        }
    }
}
