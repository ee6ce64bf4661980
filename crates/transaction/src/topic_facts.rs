//! What the id and link index ([`crate::topic_index`]) keeps of one topic
//! file ([`FileFacts`]), read from the file as parsed, and the parse of a
//! topic file's bytes.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use scriptorium_topic_markdown::diag::{Code as DiagCode, Diagnostic};
use scriptorium_topic_markdown::validate::{self, link_target, Loaded};

impl FileFacts {
    /// The facts of a file that does not parse: its hash, nothing else.
    pub fn unreadable(sha256: String) -> FileFacts {
        FileFacts { sha256, ids: Vec::new(), links: Vec::new(), cites: Vec::new(), sources: Vec::new() }
    }
}

/// What the index keeps of one topic file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFacts {
    /// SHA-256 (hex) of the bytes these facts were read from.
    pub sha256: String,
    /// Its block ids, in file order.
    pub ids: Vec<String>,
    /// The topic files its blocks link to, sorted, each once.
    pub links: Vec<String>,
    /// The archive files its evidence cites, sorted, each once.
    #[serde(default)]
    pub cites: Vec<String>,
    /// The source ids its evidence cites (text form), sorted, each once.
    #[serde(default)]
    pub sources: Vec<String>,
}

/// The facts of a parsed topic file.
pub fn facts_of(loaded: &Loaded, sha256: String) -> FileFacts {
    let ids = loaded.file.blocks.iter().filter_map(|b| b.id.clone()).collect();
    let mut links = BTreeSet::new();
    for b in &loaded.file.blocks {
        for (_, l) in &b.links {
            if let Ok(Some(t)) = link_target(&loaded.path, l) {
                links.insert(t.path);
            }
        }
    }
    let mut cites = BTreeSet::new();
    let mut sources = BTreeSet::new();
    for def in &loaded.file.definitions {
        if let Some(Ok(ev)) = &def.evidence {
            for src in &ev.sources {
                sources.insert(src.id.clone());
                if let Some(p) = validate::join(validate::dir_of(&loaded.path), &src.path) {
                    cites.insert(p);
                }
            }
        }
    }
    FileFacts {
        sha256,
        ids,
        links: links.into_iter().collect(),
        cites: cites.into_iter().collect(),
        sources: sources.into_iter().collect(),
    }
}

/// Parses topic file bytes: `Err` with a `BAD_ENCODING` diagnostic when
/// they are not UTF-8.
pub fn load(path: &str, bytes: &[u8]) -> Result<Loaded, Diagnostic> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Loaded::parse(path, text)),
        Err(e) => Err(Diagnostic {
            code: DiagCode::BadEncoding,
            path: path.to_owned(),
            line: 1,
            block_id: None,
            message: format!("the file is not valid UTF-8 ({e})"),
        }),
    }
}
