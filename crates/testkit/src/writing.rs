//! Writer helpers: workspaces and inputs, records said by a given speaker,
//! a scripted model and the offline writer's person files.

use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use scriptorium_source_archive::input::parse_record;
use scriptorium_source_archive::SourceRecord;
use scriptorium_writer::input::{Input, Turn};
use scriptorium_writer::model::ModelError;
use scriptorium_writer::{Message, Model, Reply, ToolCall, ToolSpec};

/// An empty workspace with its layout, in a temporary folder.
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    scriptorium_transaction::layout::ensure(dir.path()).unwrap();
    dir
}

/// A record of thread `chat/t1` said by `speaker` (`(id, display)`;
/// `None`: speakerless).
pub fn record_by(message: &str, speaker: Option<(&str, &str)>, content: &str) -> SourceRecord {
    let mut v = serde_json::json!({"provider": "chat", "thread": "t1", "message": message, "role": "user",
        "timestamp": "2026-03-01T10:00:00Z", "content": content});
    if let Some((id, display)) = speaker {
        v["speaker_id"] = id.into();
        v["speaker_display"] = display.into();
    }
    parse_record(&v.to_string()).unwrap()
}

/// The writer input of `records`, one turn each, over the workspace `root`.
pub fn input<'a>(root: &'a Path, records: &[SourceRecord]) -> Input<'a> {
    Input {
        root,
        origin: "test-session".to_owned(),
        turns: records.iter().map(Turn::of_record).collect(),
        archive: records.to_vec(),
        lock_timeout: Duration::from_secs(5),
    }
}

/// Every file under `root` except `.scriptorium/`, with its bytes.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".scriptorium") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// A model that answers from a script of tool-call lists, and keeps every
/// conversation it was sent.
#[derive(Debug)]
pub struct ScriptedModel {
    /// The answers still to give, in order; past them every answer is the
    /// text `done?`.
    pub replies: VecDeque<Result<Reply, ModelError>>,
    /// Every conversation sent, in order.
    pub seen: Vec<Vec<Message>>,
}

impl ScriptedModel {
    /// A model giving `replies` in order.
    pub fn new(replies: Vec<Result<Reply, ModelError>>) -> ScriptedModel {
        ScriptedModel { replies: replies.into(), seen: Vec::new() }
    }
}

/// A reply calling the tools of `list`, each `(name, arguments)`, with
/// ids `c0`, `c1`, ….
pub fn calls(list: &[(&str, serde_json::Value)]) -> Result<Reply, ModelError> {
    Ok(Reply {
        text: None,
        tool_calls: list
            .iter()
            .enumerate()
            .map(|(i, (n, a))| ToolCall {
                id: format!("c{i}"),
                name: (*n).to_owned(),
                arguments: a.to_string(),
            })
            .collect(),
        prompt_tokens: None,
    })
}

impl Model for ScriptedModel {
    fn name(&self) -> &str {
        "scripted"
    }

    fn chat(&mut self, messages: &[Message], _tools: &[ToolSpec]) -> Result<Reply, ModelError> {
        self.seen.push(messages.to_vec());
        self.replies
            .pop_front()
            .unwrap_or_else(|| Ok(Reply { text: Some("done?".into()), ..Reply::default() }))
    }
}

/// The last tool answer in a conversation.
pub fn last_tool_answer(messages: &[Message]) -> String {
    messages.iter().rev().find(|m| m.role == "tool").and_then(|m| m.content.clone()).unwrap_or_default()
}

/// The offline writer's person file of a trusted identity (FORMAT.md §8),
/// under `folder` (`topics/people`).
pub fn person_file(folder: &str, id: &str, display: &str) -> String {
    let who = scriptorium_source_archive::speaker::attribution(Some(display), Some(id));
    let key = scriptorium_writer::input::person_key(Some(id), Some(display));
    format!("{folder}/{}-{key}.md", scriptorium_writer::offline::slug(&who))
}

/// Ada's (`7391`) person file.
pub fn ada_file() -> String {
    person_file("topics/people", "7391", "Ada")
}

/// Bo's (`4402`) person file.
pub fn bo_file() -> String {
    person_file("topics/people", "4402", "Bo")
}
