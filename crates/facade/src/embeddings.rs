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

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use scriptorium_bm25_index::search::Filters;
use scriptorium_bm25_index::segment::Kind;
use scriptorium_bm25_index::tokenize::{Tokenizer, TokenizerConfig};
use scriptorium_bm25_index::workspace as index_ws;
use scriptorium_scheduler::WriteFailure;
use scriptorium_writer::embed::Embedder;

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

fn model_error(e: WriteFailure) -> Error {
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
    payload: String,
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
) -> Result<Vec<Value>, Error> {
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
        for doc in view.unit_docs(&unit).map_err(damaged)? {
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
                candidates.push(Candidate { kind: unit.kind, key: k, text: doc.text, payload: doc.payload });
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

fn rank(q: &[f32], candidates: &[Candidate], store: &Store, limit: usize, query: &str) -> Vec<Value> {
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
            let mut hit = Map::new();
            hit.insert("kind".into(), c.kind.as_str().into());
            if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(&c.payload) {
                hit.extend(fields);
            }
            hit.insert("score".into(), score.into());
            hit.insert("snippet".into(), tok.snippet(&c.text, &terms, index_ws::SNIPPET_CHARS).into());
            Value::Object(hit)
        })
        .collect()
}

/// A search by `method` (`bm25`, `embedding` or `hybrid`), as
/// `memory_search` answers it: `{"method", "hits"}`, plus `"fallback"`
/// (why) when `hybrid` answered with BM25 alone because no embedding
/// endpoint is configured or it failed. `embedding` without an endpoint is
/// `MODEL_UNAVAILABLE`. The endpoint comes from `config`. The caller has checked the arguments (a speaker
/// filter, a name resolved as FORMAT.md §7 says, is BM25's alone) and holds
/// the read lock.
pub fn answer(
    root: &Path,
    config: &crate::config::Config,
    method: &str,
    query: &str,
    filters: &Filters,
    speaker: Option<&str>,
    limit: usize,
) -> Result<Value, Error> {
    let bm25 = || -> Result<Vec<Value>, Error> {
        let lines = index_ws::search_lines(
            root,
            TokenizerConfig::default(),
            query,
            filters,
            speaker,
            limit,
            scriptorium_bm25_index::search::Bm25::default(),
        )?;
        Ok(lines.iter().filter_map(|l| serde_json::from_str(l).ok()).collect())
    };
    if method == "bm25" {
        return Ok(serde_json::json!({"method": "bm25", "hits": bm25()?}));
    }
    let embedder = config.embedder().transpose().map_err(model_error)?;
    match (method, embedder) {
        ("embedding", Some(e)) => {
            Ok(serde_json::json!({"method": "embedding", "hits": search(root, &e, query, filters, limit)?}))
        }
        ("embedding", None) => {
            let mut e = Error::new(
                Code::ModelUnavailable,
                "no embedding endpoint is configured ([memory.embeddings] url and model, or SCRIPTORIUM_EMBEDDING_URL and SCRIPTORIUM_EMBEDDING_MODEL)",
            );
            e.retryable = Some(false);
            Err(e)
        }
        (_, Some(e)) => {
            let lexical = bm25()?;
            Ok(match search(root, &e, query, filters, limit) {
                Ok(semantic) => {
                    serde_json::json!({"method": "hybrid", "hits": fuse(lexical, semantic, limit)})
                }
                Err(err) => serde_json::json!({
                    "method": "bm25",
                    "fallback": format!("the embedding endpoint failed ({}: {}); BM25 only", err.code, err.message),
                    "hits": lexical,
                }),
            })
        }
        (_, None) => Ok(serde_json::json!({
            "method": "bm25",
            "fallback": "no embedding endpoint is configured; BM25 only",
            "hits": bm25()?,
        })),
    }
}

/// A hit as one `--json` line in the order a BM25 hit has (FORMAT.md §5,
/// §7): `kind` first, the record's or block's fields in their documented
/// order, `score` and `snippet`, then `bm25_rank` / `embedding_rank` and
/// anything else.
pub fn hit_line(hit: &Value) -> String {
    const SOURCE: &[&str] = &[
        "kind",
        "source_id",
        "provider",
        "thread",
        "message",
        "role",
        "timestamp",
        "speaker_id",
        "speaker_display",
        "speaker_label",
        "speaker_trusted",
        "attribution",
        "trust",
        "content",
        "path",
        "anchor",
        "score",
        "snippet",
        "bm25_rank",
        "embedding_rank",
    ];
    const TOPIC: &[&str] = &[
        "kind",
        "path",
        "block_id",
        "text",
        "time",
        "trust",
        "score",
        "snippet",
        "bm25_rank",
        "embedding_rank",
    ];
    let Value::Object(map) = hit else { return scriptorium_source_archive::json::to_line(hit) };
    let first = if map.get("kind").and_then(Value::as_str) == Some("topic") { TOPIC } else { SOURCE };
    let mut parts: Vec<String> = Vec::with_capacity(map.len());
    let mut put = |k: &str, v: &Value| {
        parts.push(format!(
            "{}:{}",
            scriptorium_source_archive::json::to_line(k),
            scriptorium_source_archive::json::to_line(v)
        ));
    };
    for k in first {
        if let Some(v) = map.get(*k) {
            put(k, v);
        }
    }
    for (k, v) in map {
        if !first.contains(&k.as_str()) {
            put(k, v);
        }
    }
    format!("{{{}}}", parts.join(","))
}

/// The identity of a hit across methods: its kind and its source id or
/// path and block id.
pub fn hit_key(hit: &Value) -> String {
    let s = |k: &str| hit.get(k).and_then(Value::as_str).unwrap_or("");
    format!("{}\u{0}{}\u{0}{}\u{0}{}", s("kind"), s("source_id"), s("path"), s("block_id"))
}

/// Reciprocal-rank fusion (k = 60) of two best-first hit lists: each hit
/// scores the sum of `1 / (60 + rank)` over the lists it is in; the fused
/// score replaces `score`, and `bm25_rank` / `embedding_rank` (1-based)
/// say where it came from.
pub fn fuse(bm25: Vec<Value>, embedding: Vec<Value>, limit: usize) -> Vec<Value> {
    const K: f64 = 60.0;
    let mut order: Vec<String> = Vec::new();
    let mut fused: HashMap<String, (f64, Value)> = HashMap::new();
    for (list, field) in [(bm25, "bm25_rank"), (embedding, "embedding_rank")] {
        for (rank, mut hit) in list.into_iter().enumerate() {
            let k = hit_key(&hit);
            let part = 1.0 / (K + rank as f64 + 1.0);
            match fused.get_mut(&k) {
                Some((score, kept)) => {
                    *score += part;
                    kept[field] = (rank + 1).into();
                }
                None => {
                    hit[field] = (rank + 1).into();
                    order.push(k.clone());
                    fused.insert(k, (part, hit));
                }
            }
        }
    }
    let mut out: Vec<(f64, usize, Value)> =
        order.iter().enumerate().filter_map(|(i, k)| fused.remove(k).map(|(s, v)| (s, i, v))).collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    out.truncate(limit);
    out.into_iter()
        .map(|(s, _, mut v)| {
            v["score"] = s.into();
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn fusion_rewards_agreement() {
        let a = json!({"kind": "source", "source_id": "p/t/a"});
        let b = json!({"kind": "source", "source_id": "p/t/b"});
        let c = json!({"kind": "topic", "path": "topics/x.md", "block_id": "c"});
        let out = fuse(vec![a.clone(), b.clone()], vec![c.clone(), b.clone()], 10);
        let ids: Vec<String> = out.iter().map(hit_key).collect();
        assert_eq!(ids[0], hit_key(&b), "in both lists, so first");
        assert_eq!(out.len(), 3);
        assert_eq!(out[0]["bm25_rank"], 2);
        assert_eq!(out[0]["embedding_rank"], 2);
        assert_eq!(fuse(vec![a, b], vec![c], 1).len(), 1);
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
