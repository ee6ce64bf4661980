//! The open conflicts of this machine's merges: one JSON file each under
//! `.scriptorium/conflicts/`, written in the same install as the merge
//! that found them and removed in the same install as the resolution that
//! closes them. They are local: the machine that merged holds them, the
//! shared history holds the merge's result.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::Error;

/// The folder of open conflicts, relative to the workspace.
pub const CONFLICTS_DIR: &str = ".scriptorium/conflicts";

/// What a conflict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A block both sides changed differently (or one changed and the
    /// other deleted): `MERGE_CONFLICT`.
    Block,
    /// A front-matter key both sides set differently: `MERGE_CONFLICT`.
    FrontMatter,
    /// Lines between blocks both sides changed differently:
    /// `MERGE_CONFLICT`.
    Lines,
    /// A whole file one side deleted and the other changed, or that no
    /// merge understands: `MERGE_CONFLICT`.
    File,
    /// Two different records with one source id: `ARCHIVE_CONFLICT`.
    Record,
}

impl Kind {
    /// The diagnostic code `check` reports it with.
    pub fn code(self) -> &'static str {
        match self {
            Kind::Record => "ARCHIVE_CONFLICT",
            _ => "MERGE_CONFLICT",
        }
    }
}

/// One open conflict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// What `resolve` names it by: the block id, the source id, or
    /// `<path>#<what>` for front matter and lines, the path for a file.
    pub id: String,
    /// What it is about.
    pub kind: Kind,
    /// The workspace-relative file.
    pub path: String,
    /// The block, for a block conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_id: Option<String>,
    /// The record, for a record conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
    /// The front-matter key, for a front-matter conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The version the merge kept (this machine's; empty: none).
    pub ours: String,
    /// The other version (the remote's; empty: it deleted it).
    pub theirs: String,
    /// The remote commit merged (40 hex digits).
    pub theirs_commit: String,
    /// When the merge found it (UTC).
    pub time: String,
}

impl Conflict {
    /// The file that records it, relative to the workspace: named by a
    /// hash of its id, so a conflict found again replaces its record.
    pub fn record_path(&self) -> String {
        let hash = Sha256::digest(format!("{}\n{}", self.path, self.id).as_bytes());
        let hex: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
        format!("{CONFLICTS_DIR}/{hex}.json")
    }

    /// Its record's bytes.
    pub fn to_record(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("a conflict serializes");
        out.push(b'\n');
        out
    }

    /// Whether `name` (as given to `resolve`) names it: its id, or
    /// `<path>#^<block id>` for a block.
    pub fn is_named(&self, name: &str) -> bool {
        name == self.id
            || self.block_id.as_deref().is_some_and(|b| name == format!("{}#^{b}", self.path))
            || (self.kind == Kind::File && name == self.path)
    }

    /// One line for a person: what clashed, which version the merge kept,
    /// and how to close it.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            Kind::Block => format!("block ^{} was changed differently on both sides", self.id),
            Kind::FrontMatter => {
                format!(
                    "front-matter key {} was set differently on both sides",
                    self.key.as_deref().unwrap_or("")
                )
            }
            Kind::Lines => "lines between blocks were changed differently on both sides".to_owned(),
            Kind::File => "one side deleted the file, the other changed it".to_owned(),
            Kind::Record => format!("two different records have the source id {}", self.id),
        };
        let kept = if self.ours.is_empty() {
            "the merge kept the remote's version (this machine had deleted it)"
        } else {
            "the merge kept this machine's version"
        };
        let takes = if matches!(self.kind, Kind::Record | Kind::File | Kind::FrontMatter) {
            "ours|theirs"
        } else {
            "ours|theirs|both"
        };
        format!("{what}; {kept}. Close it with `scriptorium resolve '{}' --take {takes}` (ours: this machine's version, theirs: the remote's)", self.id)
    }
}

/// Every open conflict, sorted by path then id. A record that cannot be
/// read is an error naming it.
pub fn list(root: &Path) -> Result<Vec<Conflict>, Error> {
    let dir = root.join(CONFLICTS_DIR);
    let rd = match fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&e, "cannot read", &dir)),
    };
    let mut out = Vec::new();
    for entry in rd.filter_map(Result::ok) {
        let p = entry.path();
        if p.extension().is_none_or(|x| x != "json") || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let bytes = fs::read(&p).map_err(|e| Error::io(&e, "cannot read", &p))?;
        let c: Conflict = serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(crate::error::Code::ValidationFailed, format!("a conflict record is damaged: {e}"))
                .at(format!("{CONFLICTS_DIR}/{}", entry.file_name().to_string_lossy()))
        })?;
        out.push(c);
    }
    out.sort_by(|a, b| (&a.path, &a.id).cmp(&(&b.path, &b.id)));
    Ok(out)
}
