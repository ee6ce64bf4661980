//! Machine-readable shapes (FORMAT.md §5): one physical line per value.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::legacy::LegacyRecord;
use crate::record::SourceRecord;

/// Compact JSON with U+2028 and U+2029 written as `\u2028`/`\u2029`, so a
/// value is always exactly one physical and one displayed line.
pub fn to_line<T: Serialize + ?Sized>(value: &T) -> String {
    let s = serde_json::to_string(value).expect("serializing to a string cannot fail");
    escape_separators(s)
}

/// Replaces raw U+2028/U+2029 in serialized JSON by their escapes. They can
/// only occur inside strings, where the escape means the same character.
pub fn escape_separators(s: String) -> String {
    if !s.contains(['\u{2028}', '\u{2029}']) {
        return s;
    }
    s.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
}

/// Whether a record (or a block citing one) counts as trusted: `pending`
/// until its speaker is paired or the owner promotes it (FORMAT §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    /// Counts as what its speaker said.
    Trusted,
    /// Kept, shown marked, and left out of recall.
    Pending,
}

impl Trust {
    /// `trusted` or `pending`.
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::Pending => "pending",
        }
    }

    /// `Pending` when `pending`.
    pub fn of(pending: bool) -> Trust {
        if pending {
            Trust::Pending
        } else {
            Trust::Trusted
        }
    }
}

impl fmt::Display for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A source record as every `--json` command prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordView {
    /// `provider/thread/message`, encoded parts; `null` for a legacy record
    /// that names no id.
    pub source_id: Option<String>,
    /// The provider.
    pub provider: Option<String>,
    /// The thread.
    pub thread: Option<String>,
    /// The message id.
    pub message: Option<String>,
    /// `user`, `assistant`, `system` (or `tool` for a legacy record).
    pub role: String,
    /// The timestamp, verbatim.
    pub timestamp: String,
    /// The verbatim speaker id, or the legacy hint's id.
    pub speaker_id: Option<String>,
    /// The normalised display, or the legacy hint's display.
    pub speaker_display: Option<String>,
    /// The header label, or the legacy hint's label.
    pub speaker_label: Option<String>,
    /// True only for a v2 identity.
    pub speaker_trusted: bool,
    /// Who said it, as shown to a model or a person (FORMAT.md §2.3): a v2
    /// identity's attribution, else the bare role (a legacy hint is never
    /// shown as an identity).
    pub attribution: String,
    /// `trusted` or `pending`.
    pub trust: Trust,
    /// The body, verbatim.
    pub content: String,
    /// The workspace-relative archive path.
    pub path: String,
    /// `source-HASH8`.
    pub anchor: Option<String>,
}

impl RecordView {
    /// The view of a v2 record; `path` and `anchor` come from its id.
    pub fn of_record(r: &SourceRecord) -> RecordView {
        let id = r.id();
        let speaker = r.speaker();
        RecordView {
            source_id: Some(id.text()),
            provider: Some(id.provider().to_owned()),
            thread: Some(id.thread().to_owned()),
            message: Some(id.message().to_owned()),
            role: r.role().as_str().to_owned(),
            timestamp: r.timestamp().to_owned(),
            speaker_id: speaker.and_then(|s| s.id()).map(str::to_owned),
            speaker_display: speaker.and_then(|s| s.display()).map(str::to_owned),
            speaker_label: speaker.map(|s| s.label().to_owned()),
            speaker_trusted: speaker.is_some(),
            attribution: r.attribution(),
            trust: Trust::of(r.is_pending()),
            content: r.content().to_owned(),
            path: id.v2_path(),
            anchor: Some(id.anchor()),
        }
    }

    /// The view of a legacy record read from `path` (workspace-relative when
    /// known); `provider`/`thread` fall back to `fallback` when it names no id.
    pub fn of_legacy(r: &LegacyRecord, path: &str, fallback: Option<(&str, &str)>) -> RecordView {
        let (provider, thread, message) = match &r.id {
            Some(id) => {
                (Some(id.provider().to_owned()), Some(id.thread().to_owned()), Some(id.message().to_owned()))
            }
            None => (fallback.map(|f| f.0.to_owned()), fallback.map(|f| f.1.to_owned()), None),
        };
        RecordView {
            source_id: r.id.as_ref().map(|id| id.text()),
            provider,
            thread,
            message,
            role: r.role.as_str().to_owned(),
            timestamp: r.timestamp.clone(),
            speaker_id: r.hint.as_ref().map(|h| h.id.clone()),
            speaker_display: r.hint.as_ref().map(|h| h.display.clone()),
            speaker_label: r.hint.as_ref().map(|h| h.label()),
            speaker_trusted: false,
            attribution: r.role.as_str().to_owned(),
            trust: Trust::Trusted,
            content: r.content.clone(),
            path: path.to_owned(),
            anchor: r.anchor.clone(),
        }
    }
}

/// An error as the CLI prints it: `{"error":{"code","message",…}}`.
pub fn error_line(err: &crate::Error) -> String {
    let mut obj = serde_json::Map::new();
    obj.insert("code".into(), err.code().as_str().into());
    obj.insert("message".into(), err.message().into());
    if let Some(o) = err.offset() {
        obj.insert("offset".into(), o.into());
    }
    if let Some(l) = err.line() {
        obj.insert("line".into(), l.into());
    }
    if let Some(p) = err.path() {
        obj.insert("path".into(), p.to_string_lossy().into_owned().into());
    }
    to_line(&serde_json::json!({ "error": obj }))
}
