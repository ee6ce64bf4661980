//! The one search of the memory API: BM25, embedding or both fused, as
//! `scriptorium search` and `memory_search` answer it, with typed hits
//! ([`Hit`]).

use std::collections::hash_map::{Entry, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::segment::Kind;
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace as index_ws;
use scriptorium_source_archive::Code;

pub use scriptorium_bm25_index::hit::{Block, Found, Hit};

use crate::config::Config;
use crate::embeddings::{self, model_error};
use crate::error::{Error, Result};

/// How to rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Words (the default).
    #[default]
    Bm25,
    /// Meaning: cosine similarity of embeddings from the configured
    /// endpoint.
    Embedding,
    /// Both, fused by reciprocal rank; BM25 alone, saying so, without an
    /// endpoint.
    Hybrid,
}

impl Method {
    /// `bm25`, `embedding` or `hybrid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Bm25 => "bm25",
            Method::Embedding => "embedding",
            Method::Hybrid => "hybrid",
        }
    }
}

/// What a search answers: the method that ranked the hits, why a hybrid
/// search fell back to BM25 alone (if it did), and the hits, best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// The method that ranked them.
    pub method: Method,
    /// Why `hybrid` answered with BM25 alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The hits, best first.
    pub hits: Vec<Hit>,
}

/// A search by `method`. `embedding` without an endpoint is
/// `MODEL_UNAVAILABLE`; `hybrid` without one, or when it fails, answers
/// with BM25 alone and says why in `fallback`. The endpoint comes from
/// `config`. A speaker filter (a name resolved as FORMAT.md §7 says) is
/// BM25's alone. Records from an archive file that no longer holds its
/// committed frames are marked [`Hit::tampered`]. The caller holds the
/// read lock (a [`crate::snapshot::Snapshot`]).
pub fn answer(
    root: &Path,
    config: &Config,
    method: Method,
    query: &str,
    filters: &Filters,
    speaker: Option<&str>,
    limit: usize,
) -> Result<Answer> {
    let mut answer = rank(root, config, method, query, filters, speaker, limit)?;
    mark_tampered(root, &mut answer.hits);
    Ok(answer)
}

/// Marks the records whose archive file is tampered: only the distinct
/// files of these hits are looked at, each hashed against the head commit
/// and parsed only when it differs. A history that cannot be read leaves
/// the hits unmarked and says so in the log: the search still answers.
fn mark_tampered(root: &Path, hits: &mut [Hit]) {
    let mut files: Vec<&str> = hits
        .iter()
        .filter(|h| h.kind == Kind::Source)
        .map(Hit::path)
        .filter(|p| p.starts_with("sources/"))
        .collect();
    files.sort_unstable();
    files.dedup();
    if files.is_empty() {
        return;
    }
    let tampered = match scriptorium_transaction::history::tamper::tampered_files(root, &files) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "search: cannot compare the archive with its history");
            return;
        }
    };
    for h in hits.iter_mut() {
        h.tampered = h.kind == Kind::Source && tampered.contains(h.path());
    }
}

/// [`answer`] before the tamper marks.
fn rank(
    root: &Path,
    config: &Config,
    method: Method,
    query: &str,
    filters: &Filters,
    speaker: Option<&str>,
    limit: usize,
) -> Result<Answer> {
    let bm25 = || -> Result<Vec<Hit>> {
        let hits = index_ws::search(
            root,
            TokenizerConfig::default(),
            query,
            filters,
            speaker,
            limit,
            Bm25::default(),
        )?;
        Ok(hits)
    };
    let answered = |method, fallback: Option<String>, hits| Answer { method, fallback, hits };
    if method == Method::Bm25 {
        return Ok(answered(Method::Bm25, None, bm25()?));
    }
    let embedder = config.embedder().transpose().map_err(model_error)?;
    match (method, embedder) {
        (Method::Embedding, Some(e)) => {
            Ok(answered(Method::Embedding, None, embeddings::search(root, &e, query, filters, limit)?))
        }
        (Method::Embedding, None) => {
            let mut e = Error::new(
                Code::ModelUnavailable,
                "no embedding endpoint is configured ([memory.embeddings] url and model, or SCRIPTORIUM_EMBEDDING_URL and SCRIPTORIUM_EMBEDDING_MODEL)",
            );
            e.retryable = Some(false);
            Err(e)
        }
        (_, Some(e)) => {
            let lexical = bm25()?;
            Ok(match embeddings::search(root, &e, query, filters, limit) {
                Ok(semantic) => answered(Method::Hybrid, None, fuse(lexical, semantic, limit)),
                Err(err) => answered(
                    Method::Bm25,
                    Some(format!("the embedding endpoint failed ({}: {}); BM25 only", err.code, err.message)),
                    lexical,
                ),
            })
        }
        (_, None) => Ok(answered(
            Method::Bm25,
            Some("no embedding endpoint is configured; BM25 only".to_owned()),
            bm25()?,
        )),
    }
}

/// Reciprocal-rank fusion (k = 60) of two best-first hit lists: each hit
/// scores the sum of `1 / (60 + rank)` over the lists it is in; the fused
/// score replaces `score`, and `bm25_rank` / `embedding_rank` (1-based)
/// say where it came from.
pub fn fuse(bm25: Vec<Hit>, embedding: Vec<Hit>, limit: usize) -> Vec<Hit> {
    const K: f64 = 60.0;
    type Identity = (Kind, String, String);
    let identity = |h: &Hit| -> Identity {
        let (kind, a, b) = h.identity();
        (kind, a.to_owned(), b.to_owned())
    };
    let mut order: Vec<Identity> = Vec::new();
    let mut fused: HashMap<Identity, (f64, Hit)> = HashMap::new();
    for (list, from_bm25) in [(bm25, true), (embedding, false)] {
        for (rank, hit) in list.into_iter().enumerate() {
            let part = 1.0 / (K + rank as f64 + 1.0);
            let (_, kept) = match fused.entry(identity(&hit)) {
                Entry::Occupied(o) => {
                    let e = o.into_mut();
                    e.0 += part;
                    e
                }
                Entry::Vacant(v) => {
                    order.push(v.key().clone());
                    v.insert((part, hit))
                }
            };
            if from_bm25 {
                kept.bm25_rank = Some(rank + 1);
            } else {
                kept.embedding_rank = Some(rank + 1);
            }
        }
    }
    let mut out: Vec<(f64, usize, Hit)> =
        order.iter().enumerate().filter_map(|(i, k)| fused.remove(k).map(|(s, h)| (s, i, h))).collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    out.truncate(limit);
    out.into_iter()
        .map(|(s, _, mut h)| {
            h.score = s;
            h
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Fusion, on hand-made hits.
    use super::*;
    use scriptorium_source_archive::json::Trust;

    fn block(id: &str) -> Hit {
        Hit {
            kind: Kind::Topic,
            found: Found::Block(Block {
                path: "topics/x.md".into(),
                block_id: id.into(),
                text: String::new(),
                time: None,
                trust: Trust::Trusted,
            }),
            score: 1.0,
            snippet: String::new(),
            bm25_rank: None,
            embedding_rank: None,
            tampered: false,
        }
    }

    #[test]
    fn fusion_rewards_agreement() {
        let (a, b, c) = (block("a"), block("b"), block("c"));
        let out = fuse(vec![a.clone(), b.clone()], vec![c.clone(), b.clone()], 10);
        assert_eq!(out[0].anchor(), Some("b"), "in both lists, so first");
        assert_eq!(out.len(), 3);
        assert_eq!((out[0].bm25_rank, out[0].embedding_rank), (Some(2), Some(2)));
        assert_eq!((out[1].bm25_rank, out[1].embedding_rank), (Some(1), None));
        assert!((out[0].score - 2.0 / 62.0).abs() < 1e-12);
        assert_eq!(fuse(vec![a, b], vec![c], 1).len(), 1);
    }
}
