//! `search --method embedding|hybrid` and `memory_search` against a local
//! OpenAI-compatible `/v1/embeddings` server whose vectors group words by
//! meaning, so a query can find a record that shares no word with it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::{error_of, json_lines};

/// Words by meaning: a text's vector counts its words in each group.
const GROUPS: &[&[&str]] = &[
    &["budget", "money", "cost", "funds", "50k"],
    &["key", "secret", "password", "share"],
    &["archived", "noted", "messages", "records"],
    &["speaker", "dashes", "display-only", "called"],
];

fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0.01f32; GROUPS.len()];
    for w in text.to_lowercase().split(|c: char| !c.is_alphanumeric() && c != '-') {
        for (i, g) in GROUPS.iter().enumerate() {
            if g.contains(&w) {
                v[i] += 1.0;
            }
        }
    }
    v
}

/// A server answering `POST …/embeddings`; counts the inputs it embedded.
pub(super) struct Server {
    pub(super) url: String,
    pub(super) inputs: Arc<AtomicUsize>,
    /// The dimension it answers with (the groups, then zeros).
    pub(super) dims: Arc<AtomicUsize>,
}

fn server() -> Server {
    slow_server(std::time::Duration::ZERO)
}

/// [`server`], waiting `delay` before each answer.
pub(super) fn slow_server(delay: std::time::Duration) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let inputs = Arc::new(AtomicUsize::new(0));
    let counted = inputs.clone();
    let dims = Arc::new(AtomicUsize::new(GROUPS.len()));
    let dim = dims.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            let mut line = String::new();
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            loop {
                line.clear();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0u8; length];
            reader.read_exact(&mut body).unwrap();
            let req: Value = serde_json::from_slice(&body).unwrap();
            assert!(first.starts_with("POST /v1/embeddings "), "{first}");
            assert_eq!(req["model"], "toy-embed");
            let texts: Vec<String> =
                req["input"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
            counted.fetch_add(texts.len(), Ordering::SeqCst);
            std::thread::sleep(delay);
            let data: Vec<Value> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut v = vector(t);
                    v.resize(dim.load(Ordering::SeqCst), 0.0);
                    json!({"object": "embedding", "index": i, "embedding": v})
                })
                .collect();
            let answer = json!({"object": "list", "data": data, "model": "toy-embed"}).to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    Server { url, inputs, dims }
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let records = std::fs::read(super::data("append-input.jsonl")).unwrap();
    let out =
        super::run(&["archive", "append", "--workspace", dir.path().to_str().unwrap(), "--json"], &records);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

fn search(root: &Path, url: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scriptorium"));
    cmd.args(["search", "--workspace", root.to_str().unwrap(), "--json"])
        .args(args)
        .env_remove("SCRIPTORIUM_EMBEDDING_URL")
        .env_remove("SCRIPTORIUM_EMBEDDING_MODEL")
        .env("XDG_CONFIG_HOME", root.join("no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(u) = url {
        cmd.env("SCRIPTORIUM_EMBEDDING_URL", u).env("SCRIPTORIUM_EMBEDDING_MODEL", "toy-embed");
    }
    cmd.output().unwrap()
}

fn ok_hits(out: &Output) -> Vec<Value> {
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    json_lines(&out.stdout)
}

#[test]
fn embedding_search_finds_meaning_and_embeds_each_text_once() {
    let dir = workspace();
    let srv = server();
    // BM25 knows no "money".
    assert!(ok_hits(&search(dir.path(), None, &["money"])).is_empty());

    let hits =
        ok_hits(&search(dir.path(), Some(&srv.url), &["money", "--method", "embedding", "--limit", "2"]));
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0]["source_id"], "chat/team-1/m1", "{hits:?}");
    assert_eq!(hits[0]["kind"], "source");
    assert_eq!(hits[0]["speaker_trusted"], true);
    assert_eq!(hits[0]["content"], "the budget is 50k");
    assert!(hits[0]["score"].as_f64().unwrap() > hits[1]["score"].as_f64().unwrap());
    let first = srv.inputs.load(Ordering::SeqCst);
    // The query and the five trusted records (the pending one is filtered).
    assert_eq!(first, 6);
    assert!(dir.path().join(".scriptorium/embeddings.bin").is_file());

    // Again: only the query is embedded; the records' vectors are kept.
    let again = ok_hits(&search(dir.path(), Some(&srv.url), &["secret", "--method", "embedding"]));
    assert_eq!(srv.inputs.load(Ordering::SeqCst), first + 1);
    assert_eq!(again[0]["source_id"], "chat/team-1/m2");

    // Pending records only when asked, and embedded then.
    let pending = ok_hits(&search(
        dir.path(),
        Some(&srv.url),
        &["money", "--method", "embedding", "--include-pending"],
    ));
    assert_eq!(pending.len(), 6);
    assert_eq!(srv.inputs.load(Ordering::SeqCst), first + 3);

    // A torn vector file is ignored and rewritten, never an error.
    let file = dir.path().join(".scriptorium/embeddings.bin");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let hits = ok_hits(&search(dir.path(), Some(&srv.url), &["money", "--method", "embedding"]));
    assert_eq!(hits[0]["source_id"], "chat/team-1/m1");
    assert_eq!(
        std::fs::read(&file).unwrap().len(),
        bytes.len() - (16 + 4 * GROUPS.len()),
        "rewritten with the five trusted records' vectors"
    );
}

#[test]
fn hybrid_fuses_and_falls_back_saying_why() {
    let dir = workspace();
    let srv = server();
    let out = search(dir.path(), Some(&srv.url), &["budget", "--method", "hybrid"]);
    let hits = ok_hits(&out);
    // The lines keep a BM25 hit's key order: kind first, the record's
    // fields in FORMAT order, score and snippet, then the ranks.
    let first = String::from_utf8(out.stdout.clone()).unwrap();
    let first = first.lines().next().unwrap();
    assert!(
        first.starts_with("{\"kind\":\"source\",\"source_id\":\"chat/team-1/m1\",\"provider\""),
        "{first}"
    );
    let (score, snippet, rank) = (
        first.find("\"score\"").unwrap(),
        first.find("\"snippet\"").unwrap(),
        first.find("\"bm25_rank\"").unwrap(),
    );
    assert!(first.find("\"anchor\"").unwrap() < score && score < snippet && snippet < rank, "{first}");
    assert_eq!(hits[0]["source_id"], "chat/team-1/m1");
    assert_eq!(hits[0]["bm25_rank"], 1);
    assert_eq!(hits[0]["embedding_rank"], 1);
    assert!(hits.iter().all(|h| h.get("embedding_rank").is_some()), "every record is a semantic candidate");

    // No endpoint: BM25, and a note on stderr.
    let out = search(dir.path(), None, &["budget", "--method", "hybrid"]);
    let hits = ok_hits(&out);
    assert_eq!(hits.len(), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no embedding endpoint is configured"));

    // An endpoint that is down: BM25 with the reason.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let out = search(dir.path(), Some(&down), &["budget", "--method", "hybrid"]);
    assert_eq!(ok_hits(&out).len(), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("the embedding endpoint failed (MODEL_UNAVAILABLE"));
}

#[test]
fn refusals_are_explicit() {
    let dir = workspace();
    let srv = server();
    let e = error_of(&search(dir.path(), None, &["money", "--method", "embedding"]));
    assert_eq!(e["code"], "MODEL_UNAVAILABLE");
    assert_eq!(e["retryable"], false);
    // Nothing to look for: no hits, and the model is not asked.
    assert!(ok_hits(&search(dir.path(), Some(&srv.url), &["  ", "--method", "embedding"])).is_empty());
    assert!(ok_hits(&search(
        dir.path(),
        Some(&srv.url),
        &["money", "--method", "embedding", "--limit", "0"]
    ))
    .is_empty());
    let e = error_of(&search(
        dir.path(),
        Some(&srv.url),
        &["money", "--method", "embedding", "--speaker", "Ada"],
    ));
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    assert_eq!(srv.inputs.load(Ordering::SeqCst), 0, "refused before the model is asked");
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let e = error_of(&search(dir.path(), Some(&down), &["money", "--method", "embedding"]));
    assert_eq!(e["code"], "MODEL_UNAVAILABLE");
    assert_eq!(e["retryable"], true);
    let e = error_of(&search(dir.path(), Some("ftp://nowhere"), &["money", "--method", "embedding"]));
    assert_eq!(e["code"], "INVALID_ARGUMENT");
}

#[test]
fn the_user_file_chooses_the_endpoint_and_the_workspace_file_only_the_model() {
    let dir = workspace();
    let srv = server();
    let user = dir.path().join("no-user-config/scriptorium");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("config.toml"), format!("[memory.embeddings]\nurl = \"{}\"\n", srv.url))
        .unwrap();
    std::fs::write(dir.path().join("scriptorium.toml"), "[memory.embeddings]\nmodel = \"toy-embed\"\n")
        .unwrap();
    let out = search(dir.path(), None, &["money", "--method", "embedding", "--limit", "1"]);
    assert_eq!(ok_hits(&out)[0]["source_id"], "chat/team-1/m1");
    std::fs::write(dir.path().join("scriptorium.toml"), "[memory.embeddings]\nmodel = 5\n").unwrap();
    let e = error_of(&search(dir.path(), None, &["money", "--method", "embedding"]));
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    assert!(e["message"].as_str().unwrap().contains("memory.embeddings.model"), "{e}");
    // The tools refuse a workspace file naming an endpoint before any call.
    let inputs = srv.inputs.load(Ordering::SeqCst);
    std::fs::write(
        dir.path().join("scriptorium.toml"),
        format!("[memory.embeddings]\nurl = \"{}\"\nmodel = \"toy-embed\"\n", srv.url),
    )
    .unwrap();
    let args = json!({"query": "money", "method": "hybrid", "limit": 1});
    let caller =
        scriptorium::tools::Caller { tier: scriptorium::transaction::Tier::Paired, interactive: false };
    let e = scriptorium::tools::call_tool(dir.path(), "memory_search", &args, &caller).unwrap_err();
    assert_eq!(e.code.as_str(), "INVALID_ARGUMENT");
    assert!(e.message.contains("memory.embeddings.url"), "{}", e.message);
    assert!(e.path.unwrap().ends_with("scriptorium.toml"));
    assert_eq!(srv.inputs.load(Ordering::SeqCst), inputs, "nothing was sent");
}

#[test]
fn a_model_that_changes_dimension_starts_the_vectors_afresh() {
    let dir = workspace();
    let srv = server();
    let file = dir.path().join(".scriptorium/embeddings.bin");
    assert_eq!(
        ok_hits(&search(dir.path(), Some(&srv.url), &["money", "--method", "embedding"]))[0]["source_id"],
        "chat/team-1/m1"
    );
    let before = std::fs::read(&file).unwrap().len();
    let inputs = srv.inputs.load(Ordering::SeqCst);
    srv.dims.store(GROUPS.len() + 2, Ordering::SeqCst);
    let hits = ok_hits(&search(dir.path(), Some(&srv.url), &["money", "--method", "embedding"]));
    assert_eq!(hits[0]["source_id"], "chat/team-1/m1");
    assert!(hits.iter().all(|h| h["score"].as_f64().is_some()), "{hits:?}");
    // The query, then the five trusted records again in the new dimension.
    assert_eq!(srv.inputs.load(Ordering::SeqCst), inputs + 6);
    assert_eq!(
        std::fs::read(&file).unwrap().len(),
        before + 5 * 4 * 2,
        "five vectors, two floats longer each"
    );
}
