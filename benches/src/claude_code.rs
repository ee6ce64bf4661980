//! Claude Code as its hooks see it: transcript lines of the shape Claude
//! Code writes (`~/.claude/projects/…/<session>.jsonl`: a prompt, a tool
//! call, the tool's result, an answer), the hook events it sends on stdin,
//! and prompts drawn from the generated workspace's vocabulary
//! ([`crate::WORDS`]), so that they match what it holds.

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

use crate::{Rng, WORDS};

/// The shape of a line's common fields.
fn common(session: &str, uuid: &str, parent: Option<&str>) -> Value {
    json!({
        "parentUuid": parent, "isSidechain": false, "userType": "external",
        "cwd": "/home/ada/proj", "sessionId": session, "version": "2.0.14", "gitBranch": "main",
        "uuid": uuid,
    })
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().expect("an object") {
        base[k] = v.clone();
    }
    base
}

fn time(n: u64, second: u32) -> String {
    format!("2026-03-{:02}T{:02}:{:02}:{second:02}.000Z", 1 + (n / 1440) % 28, (n / 60) % 24, n % 60)
}

/// The person's prompt.
pub fn user(session: &str, uuid: &str, parent: Option<&str>, text: &str, n: u64) -> Value {
    with(
        common(session, uuid, parent),
        json!({"type": "user", "message": {"role": "user", "content": text}, "timestamp": time(n, 0)}),
    )
}

/// The assistant's answer (text), or a tool call (`Bash`) when `text` is
/// `None`.
pub fn assistant(session: &str, uuid: &str, parent: &str, text: Option<&str>, n: u64) -> Value {
    let content = match text {
        Some(t) => json!([{"type": "text", "text": t}]),
        None => json!([{"type": "tool_use", "id": format!("toolu_{uuid}"), "name": "Bash",
                        "input": {"command": "cargo test -p budget", "description": "Run the tests"}}]),
    };
    with(
        common(session, uuid, Some(parent)),
        json!({
            "message": {"id": format!("msg_{uuid}"), "type": "message", "role": "assistant",
                        "model": "claude-sonnet-4-5", "content": content, "stop_reason": null,
                        "usage": {"input_tokens": 1200, "output_tokens": 85}},
            "requestId": format!("req_{uuid}"), "type": "assistant", "timestamp": time(n, 30),
        }),
    )
}

/// The tool's result, as Claude Code records it (a user entry).
pub fn tool_result(session: &str, uuid: &str, parent: &str, n: u64) -> Value {
    with(
        common(session, uuid, Some(parent)),
        json!({
            "type": "user",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{parent}"),
                        "content": "running 12 tests\ntest result: ok. 12 passed; 0 failed"}]},
            "toolUseResult": {"stdout": "running 12 tests\ntest result: ok. 12 passed; 0 failed", "stderr": "", "interrupted": false},
            "timestamp": time(n, 40),
        }),
    )
}

/// `lo..hi` words of the vocabulary, as a sentence.
pub fn sentence(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let n = rng.range(lo, hi);
    let words: Vec<&str> = (0..n).map(|_| WORDS[rng.range(0, WORDS.len())]).collect();
    let mut s = words.join(" ");
    if let Some(first) = s.get(..1) {
        let upper = first.to_uppercase();
        s.replace_range(..1, &upper);
    }
    s
}

/// A prompt a person might type: 4–12 words of the vocabulary, a question
/// or a request.
pub fn prompt(rng: &mut Rng) -> String {
    let s = sentence(rng, 4, 13);
    if rng.range(0, 2) == 0 {
        format!("{s}?")
    } else {
        format!("{s}, please.")
    }
}

/// A conversation's transcript, growing round by round.
#[derive(Debug)]
pub struct Conversation {
    /// The session id (`sessionId`; the transcript file is `<it>.jsonl`).
    pub session: String,
    /// Rounds written so far.
    pub rounds: u64,
    /// A prefix keeping this conversation's node ids apart from others'.
    prefix: String,
    last: Option<String>,
    rng: Rng,
}

impl Conversation {
    /// A conversation of `session` whose node ids start with `prefix`.
    pub fn new(session: &str, prefix: &str, seed: u64) -> Conversation {
        Conversation {
            session: session.to_owned(),
            rounds: 0,
            prefix: prefix.to_owned(),
            last: None,
            rng: Rng::new(seed),
        }
    }

    /// The next round: a prompt, a tool call and its result, an answer (two
    /// real turns: the prompt and the answer).
    pub fn round(&mut self) -> Vec<Value> {
        let n = self.rounds;
        self.rounds += 1;
        let p = &self.prefix;
        let (u, t, r, a) = (format!("{p}u{n}"), format!("{p}t{n}"), format!("{p}r{n}"), format!("{p}a{n}"));
        let s = &self.session;
        let asked = prompt(&mut self.rng);
        let answered = format!("{}. {}.", sentence(&mut self.rng, 8, 30), sentence(&mut self.rng, 8, 30));
        let lines = vec![
            user(s, &u, self.last.as_deref(), &asked, n),
            assistant(s, &t, &u, None, n),
            tool_result(s, &r, &t, n),
            assistant(s, &a, &r, Some(&answered), n),
        ];
        self.last = Some(a);
        lines
    }

    /// Appends `rounds` rounds to `file` (created if missing).
    pub fn append(&mut self, file: &Path, rounds: usize) -> std::io::Result<()> {
        let mut out = Vec::new();
        for _ in 0..rounds {
            for line in self.round() {
                serde_json::to_writer(&mut out, &line)?;
                out.push(b'\n');
            }
        }
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(file)?;
        f.write_all(&out)
    }
}

/// A hook event as Claude Code sends it on stdin; `extra` adds the event's
/// own fields (`prompt`, `stop_hook_active`, `trigger`, …).
pub fn event(name: &str, session: &str, transcript: &Path, extra: Value) -> Vec<u8> {
    let base = json!({
        "session_id": session,
        "transcript_path": transcript.to_str().expect("a UTF-8 path"),
        "cwd": "/home/ada/proj",
        "permission_mode": "default",
        "hook_event_name": name,
    });
    serde_json::to_vec(&with(base, extra)).expect("JSON")
}
