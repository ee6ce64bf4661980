//! [`Hit`]: one search hit as every verb, tool and recall sees it (FORMAT.md
//! §7): what it is (a topic block or an archived record, with its fields),
//! its score and a snippet.

use serde::{Deserialize, Serialize};

use scriptorium_source_archive::json::{RecordView, Trust};

use crate::segment::Kind;

/// One search hit. As JSON: `kind`, the block's or record's fields in their
/// documented order, `score`, `snippet`, then `bm25_rank` and
/// `embedding_rank` when the hit comes from a fused search, and
/// `"tampered":true` for a record from a tampered archive file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// `topic` or `source`.
    pub kind: Kind,
    /// The block or the record.
    #[serde(flatten)]
    pub found: Found,
    /// The score (BM25, cosine or fused; higher is better).
    pub score: f64,
    /// The best passage for the query.
    pub snippet: String,
    /// Its 1-based rank in the BM25 list of a fused search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25_rank: Option<usize>,
    /// Its 1-based rank in the embedding list of a fused search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_rank: Option<usize>,
    /// A record whose archive file no longer holds its committed frames
    /// as committed (set by the facade from the workspace history; written
    /// only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tampered: bool,
}

/// What a hit found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Found {
    /// A topic block.
    Block(Block),
    /// An archived record.
    Record(Box<RecordView>),
}

/// A topic block as a hit shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// The topic file.
    pub path: String,
    /// The block id.
    pub block_id: String,
    /// The block's text as indexed, without the `(aliases: …)` line its
    /// file's aliases add to what is indexed.
    pub text: String,
    /// The newest cited record's timestamp.
    pub time: Option<String>,
    /// Pending when it cites a pending record.
    pub trust: Trust,
}

impl Hit {
    /// The workspace-relative file it is in.
    pub fn path(&self) -> &str {
        match &self.found {
            Found::Block(b) => &b.path,
            Found::Record(r) => &r.path,
        }
    }

    /// The block id, or the record's `source-HASH8` anchor.
    pub fn anchor(&self) -> Option<&str> {
        match &self.found {
            Found::Block(b) => Some(&b.block_id),
            Found::Record(r) => r.anchor.as_deref(),
        }
    }

    /// Whether it is pending.
    pub fn trust(&self) -> Trust {
        match &self.found {
            Found::Block(b) => b.trust,
            Found::Record(r) => r.trust,
        }
    }

    /// Who said it, for a record.
    pub fn attribution(&self) -> Option<&str> {
        match &self.found {
            Found::Block(_) => None,
            Found::Record(r) => Some(&r.attribution),
        }
    }

    /// What identifies it across search methods: its kind and its source
    /// id, or its path and block id.
    pub fn identity(&self) -> (Kind, &str, &str) {
        match &self.found {
            Found::Block(b) => (self.kind, &b.path, &b.block_id),
            Found::Record(r) => (self.kind, r.source_id.as_deref().unwrap_or(""), &r.path),
        }
    }
}

impl Found {
    /// Decodes what the index stored for a document of `kind` (the block's
    /// or record's fields as one JSON object).
    pub fn decode(kind: Kind, stored: &str) -> Result<Found, serde_json::Error> {
        Ok(match kind {
            Kind::Topic => Found::Block(serde_json::from_str(stored)?),
            Kind::Source => Found::Record(Box::new(serde_json::from_str(stored)?)),
        })
    }
}
