//! Embedding search for `memory_search`'s `embedding` and `hybrid`
//! methods: vectors from the configured OpenAI-compatible `/v1/embeddings`
//! endpoint, kept in `.scriptorium/embeddings.bin` beside the BM25 index,
//! ranked by brute-force cosine similarity.
//!
//! The candidates are the BM25 index's documents (topic blocks and archived
//! records) after the path, date and pending filters, so both methods see
//! the same workspace. A document is embedded the first time a search
//! needs it; its vector is keyed by a hash of its text, so an edited
//! paragraph is embedded again and an unchanged one never is. The file is
//! a cache: a torn or foreign one (another model or endpoint) is ignored
//! and rewritten, and vectors of texts no longer in the workspace are
//! dropped when it is written.
//!
//! File: `SCREMB01`, then u32 length + the `model@url` identity, u32
//! dimension, u64 count, then per vector 16 key bytes (SHA-256 of the text,
//! truncated) and the dimension's f32 values, all little-endian; last, the
//! SHA-256 of everything before it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use sha2::{Digest, Sha256};

use scriptorium_bm25_index::hit::{Found, Hit};
use scriptorium_bm25_index::search::Filters;
use scriptorium_bm25_index::segment::Kind;
use scriptorium_bm25_index::tokenize::{Tokenizer, TokenizerConfig};
use scriptorium_bm25_index::workspace as index_ws;
use scriptorium_writer::embed::Embedder;
use scriptorium_writer::model::ModelError;

use crate::error::Error;
use scriptorium_source_archive::Code;

/// The vector file, relative to the workspace.
pub const FILE: &str = ".scriptorium/embeddings.bin";

const MAGIC: &[u8; 8] = b"SCREMB01";

type Key = [u8; 16];

fn key(text: &str) -> Key {
    let d = Sha256::digest(text.as_bytes());
    let mut k = [0u8; 16];
    k.copy_from_slice(&d[..16]);
    k
}

/// The vectors of one model at one endpoint.
#[derive(Debug, Default, PartialEq)]
struct Store {
    identity: String,
    dim: usize,
    vectors: HashMap<Key, Vec<f32>>,
}

impl Store {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.vectors.len() * (16 + 4 * self.dim));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.identity.len() as u32).to_le_bytes());
        out.extend_from_slice(self.identity.as_bytes());
        out.extend_from_slice(&(self.dim as u32).to_le_bytes());
        out.extend_from_slice(&(self.vectors.len() as u64).to_le_bytes());
        let mut keys: Vec<&Key> = self.vectors.keys().collect();
        keys.sort();
        for k in keys {
            out.extend_from_slice(k);
            for x in &self.vectors[k] {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        let sum = Sha256::digest(&out);
        out.extend_from_slice(&sum);
        out
    }

    /// `None` for anything but a whole, checksummed file.
    fn decode(bytes: &[u8]) -> Option<Store> {
        let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
        if Sha256::digest(body).as_slice() != sum {
            return None;
        }
        let mut at = 0usize;
        let mut take = |n: usize| -> Option<&[u8]> {
            let s = body.get(at..at.checked_add(n)?)?;
            at += n;
            Some(s)
        };
        if take(8)? != MAGIC {
            return None;
        }
        let u32_at = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        let id_len = u32_at(take(4)?);
        let identity = String::from_utf8(take(id_len)?.to_vec()).ok()?;
        let dim = u32_at(take(4)?);
        let count = u64::from_le_bytes(take(8)?.try_into().ok()?);
        let mut vectors = HashMap::new();
        for _ in 0..count {
            let k: Key = take(16)?.try_into().ok()?;
            let raw = take(dim.checked_mul(4)?)?;
            let v: Vec<f32> =
                raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            if v.iter().any(|x| !x.is_finite()) {
                return None;
            }
            vectors.insert(k, v);
        }
        (at == body.len()).then_some(Store { identity, dim, vectors })
    }

    fn load(root: &Path, identity: &str) -> Store {
        match std::fs::read(root.join(FILE)).ok().as_deref().and_then(Store::decode) {
            Some(s) if s.identity == identity => s,
            _ => Store { identity: identity.to_owned(), ..Store::default() },
        }
    }
}

pub(crate) fn model_error(e: ModelError) -> Error {
    Error::from(e)
}

/// The Euclidean norm, in f64: components near f32's limits must not
/// overflow into an infinite or NaN score.
fn norm(v: &[f32]) -> f64 {
    v.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt()
}

/// Cosine similarity in f64; 0 for a zero or non-finite norm or a
/// dimension mismatch, so every score is a finite number in [-1, 1].
fn cosine(q: &[f32], qn: f64, v: &[f32]) -> f64 {
    let n = norm(v);
    if !(qn.is_normal() && n.is_normal()) || q.len() != v.len() {
        return 0.0;
    }
    let dot: f64 = q.iter().zip(v).map(|(&a, &b)| f64::from(a) * f64::from(b)).sum();
    let c = dot / qn / n;
    if c.is_finite() {
        c.clamp(-1.0, 1.0)
    } else {
        0.0
    }
}

struct Candidate {
    kind: Kind,
    key: Key,
    text: String,
    found: Found,
}

/// The top `limit` documents by cosine similarity to `query`, as search
/// hits (the `--json` hit shape: `kind`, the record or block fields,
/// `score` — the cosine — and `snippet`). Embeds the documents that have
/// no vector yet, then writes the vector file. A blank query or a `limit`
/// of 0 has no hits and asks the model nothing.
pub fn search(
    root: &Path,
    embedder: &Embedder,
    query: &str,
    filters: &Filters,
    limit: usize,
) -> Result<Vec<Hit>, Error> {
    if limit == 0 || query.trim().is_empty() {
        return Ok(Vec::new());
    }
    let config = TokenizerConfig::default();
    let opened = index_ws::open(root, config)?;
    let view = &opened.view;
    let damaged = |d: scriptorium_bm25_index::segment::Damaged| Error::new(Code::Io, d.to_string());
    let prefix = filters.path_prefix.as_deref().unwrap_or("");
    let mut all_keys = HashSet::new();
    let mut candidates = Vec::new();
    for unit in view.units().map_err(damaged)? {
        let wanted_unit = filters.kind.is_none_or(|k| k == unit.kind)
            && unit.path.as_bytes().starts_with(prefix.as_bytes());
        for (doc, found) in index_ws::unit_documents(root, view, &unit).map_err(damaged)? {
            let k = key(&doc.text);
            all_keys.insert(k);
            let dated = |bound: Option<i32>, ok: fn(i32, i32) -> bool| {
                bound.is_none_or(|b| doc.day.is_some_and(|d| ok(d, b)))
            };
            if wanted_unit
                && (filters.include_pending || !doc.pending)
                && dated(filters.day_from, |d, b| d >= b)
                && dated(filters.day_to, |d, b| d <= b)
            {
                candidates.push(Candidate { kind: unit.kind, key: k, text: doc.text, found });
            }
        }
    }
    let mut store = Store::load(root, &embedder.identity());
    let mut missing: Vec<&Candidate> = Vec::new();
    let mut seen = HashSet::new();
    for c in &candidates {
        if !store.vectors.contains_key(&c.key) && seen.insert(c.key) {
            missing.push(c);
        }
    }
    let mut texts: Vec<&str> = vec![query];
    texts.extend(missing.iter().map(|c| c.text.as_str()));
    tracing::info!(
        model = %embedder.identity(),
        candidates = candidates.len(),
        to_embed = missing.len(),
        "embedding search"
    );
    let mut vectors = embedder.embed(&texts).map_err(model_error)?.into_iter();
    let q = vectors.next().ok_or_else(|| Error::new(Code::ModelUnavailable, "no vector for the query"))?;
    if store.dim != 0 && store.dim != q.len() {
        // The model now answers with another dimension: start afresh.
        store.vectors.clear();
    }
    store.dim = q.len();
    let mut added = !missing.is_empty();
    for (c, v) in missing.iter().zip(vectors) {
        store.vectors.insert(c.key, v);
    }
    // After a change of dimension, the candidates that had vectors need new ones.
    let mut seen = HashSet::new();
    let rest: Vec<&Candidate> =
        candidates.iter().filter(|c| !store.vectors.contains_key(&c.key) && seen.insert(c.key)).collect();
    if !rest.is_empty() {
        let texts: Vec<&str> = rest.iter().map(|c| c.text.as_str()).collect();
        let vectors = embedder.embed(&texts).map_err(model_error)?;
        if vectors.first().is_some_and(|v| v.len() != q.len()) {
            return Err(Error::new(
                Code::ModelUnavailable,
                "the embedding server answers the query and the documents in different dimensions",
            ));
        }
        for (c, v) in rest.iter().zip(vectors) {
            store.vectors.insert(c.key, v);
        }
        added = true;
    }
    if added || store.vectors.len() > all_keys.len() {
        store.vectors.retain(|k, _| all_keys.contains(k));
        let target = root.join(FILE);
        // A cache: failing to keep it costs only embedding again later.
        let _ = scriptorium_source_archive::fsio::replace_cache_file(root, &target, &store.encode());
    }
    Ok(rank(&q, &candidates, &store, limit, query))
}

fn rank(q: &[f32], candidates: &[Candidate], store: &Store, limit: usize, query: &str) -> Vec<Hit> {
    let qn = norm(q);
    let mut scored: Vec<(f64, usize)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| store.vectors.get(&c.key).map(|v| (cosine(q, qn, v), i)))
        .collect();
    // Best first; ties by kind (topics first), then by position.
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0).then(candidates[a.1].kind.cmp(&candidates[b.1].kind)).then(a.1.cmp(&b.1))
    });
    scored.truncate(limit);
    let tok = Tokenizer::new(TokenizerConfig::default());
    let terms = scriptorium_bm25_index::segment::distinct_terms(&tok, query);
    scored
        .into_iter()
        .map(|(score, i)| {
            let c = &candidates[i];
            let snippet = index_ws::snippet(&tok, &c.found, &c.text, &terms);
            Hit {
                kind: c.kind,
                found: c.found.clone(),
                score,
                snippet,
                bm25_rank: None,
                embedding_rank: None,
                tampered: false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_round_trips_and_refuses_damage() {
        let mut s = Store { identity: "m@http://x".into(), dim: 3, vectors: HashMap::new() };
        s.vectors.insert(key("a"), vec![1.0, 0.5, -2.0]);
        s.vectors.insert(key("b"), vec![0.0, 0.0, 1.0]);
        let bytes = s.encode();
        assert_eq!(Store::decode(&bytes), Some(s));
        for cut in [0, 8, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(Store::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert_eq!(Store::decode(&flipped), None);
        // A checksummed file holding a NaN is refused too.
        let mut bad = Store { identity: "m".into(), dim: 1, vectors: HashMap::new() };
        bad.vectors.insert(key("a"), vec![f32::NAN]);
        assert_eq!(Store::decode(&bad.encode()), None);
    }

    #[test]
    fn cosine_is_scale_free_and_safe_on_zero() {
        let q = [1.0f32, 1.0];
        assert!((cosine(&q, norm(&q), &[2.0, 2.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&q, norm(&q), &[0.0, 0.0]), 0.0);
        assert_eq!(cosine(&q, norm(&q), &[1.0]), 0.0);
        // Near f32's limits: no overflow, a real score.
        let big = [3e38f32, 3e38];
        assert!((cosine(&big, norm(&big), &[1.0, 1.0]) - 1.0).abs() < 1e-9);
        let huge_q = [1e20f32, -1e20];
        assert!((cosine(&huge_q, norm(&huge_q), &[1.0, -1.0]) - 1.0).abs() < 1e-9);
    }
}
