//! Records as `scriptorium archive append` and patches receive them: one JSON
//! object each, `{"provider","thread","message","role","timestamp","content"}`
//! plus optional `"speaker_id"`, `"speaker_display"` (the trusted transport
//! fields) and `"pending"`.
//!
//! Unknown keys are refused, so a misspelt `speaker_id` can never silently
//! turn a trusted turn into a speakerless one. `null` means absent.

use std::io::BufRead;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::id::{check_identifier, SourceId};
use crate::record::{Role, SourceRecord};
use crate::speaker::Speaker;

/// The JSON shape of one input record.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRecord {
    /// The platform or program the conversation came from.
    pub provider: String,
    /// The conversation.
    pub thread: String,
    /// The message id within the conversation.
    pub message: String,
    /// `user`, `assistant` or `system`.
    pub role: String,
    /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z`.
    pub timestamp: String,
    /// The body, verbatim.
    pub content: String,
    /// The trusted transport id of the speaker.
    #[serde(default)]
    pub speaker_id: Option<String>,
    /// The trusted transport display name of the speaker.
    #[serde(default)]
    pub speaker_display: Option<String>,
    /// Archive as pending (e.g. unpaired group text).
    #[serde(default)]
    pub pending: Option<bool>,
}

impl InputRecord {
    /// Checks every field and builds the record.
    pub fn into_record(self) -> Result<SourceRecord> {
        let id = SourceId::new(&self.provider, &self.thread, &self.message)?;
        let role = Role::parse(&self.role).ok_or_else(|| {
            Error::invalid(format!("role {:?} is not one of user, assistant, system", self.role))
        })?;
        if let Some(sid) = &self.speaker_id {
            check_identifier("speaker_id", sid, false)?;
        }
        let speaker = Speaker::from_transport(self.speaker_id.as_deref(), self.speaker_display.as_deref());
        SourceRecord::new(id, role, &self.timestamp, speaker, self.pending.unwrap_or(false), self.content)
    }
}

fn serde_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let cut = s.rfind(" at line ").unwrap_or(s.len());
    format!("{} (column {})", &s[..cut], e.column())
}

/// Parses one JSON object into a checked record.
pub fn parse_record(json: &str) -> Result<SourceRecord> {
    if !json.trim_start().starts_with('{') {
        return Err(Error::invalid("a record must be a JSON object"));
    }
    let input: InputRecord = serde_json::from_str(json).map_err(|e| Error::invalid(serde_message(&e)))?;
    input.into_record()
}

/// Reads JSON lines (blank lines skipped) into records. The first bad line
/// fails the whole read with its 1-based line number.
pub fn read_records(reader: impl BufRead) -> Result<Vec<SourceRecord>> {
    read_records_dyn(Box::new(reader))
}

fn read_records_dyn(mut reader: Box<dyn BufRead + '_>) -> Result<Vec<SourceRecord>> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut line = 0u64;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::new(crate::Code::Io, format!("reading input: {e}")).with_line(line + 1))?;
        if n == 0 {
            break;
        }
        line += 1;
        let text = std::str::from_utf8(&buf)
            .map_err(|e| Error::invalid(format!("input is not UTF-8: {e}")).with_line(line))?;
        // A byte-order mark some editors put at the start of a file.
        let text = if line == 1 { text.strip_prefix('\u{FEFF}').unwrap_or(text) } else { text };
        if text.trim().is_empty() {
            continue;
        }
        out.push(parse_record(text).map_err(|e| e.with_line(line))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    //! Input validation vectors.
    use super::*;

    fn err(input: &str) -> Error {
        read_records(input.as_bytes()).unwrap_err()
    }

    const OK: &str = r#"{"provider":"chat","thread":"t","message":"m","role":"user","timestamp":"2026-08-09T10:11:12Z","content":"hi"}"#;

    #[test]
    fn reads_lines_and_reports_the_bad_one() {
        let input = format!("{OK}\n\n{OK}\n{{\"provider\":1}}\n");
        let e = err(&input);
        assert_eq!(e.code().as_str(), "INVALID_ARGUMENT");
        assert_eq!(e.line(), Some(4));
        assert_eq!(read_records(format!("{OK}\r\n{OK}").as_bytes()).unwrap().len(), 2);
    }

    #[test]
    fn refusals() {
        for (bad, needle) in [
            (OK.replace(r#""thread":"t","#, ""), "missing field `thread`"),
            (OK.replace("2026-08-09T10:11:12Z", "2026-08-09 10:11:12"), "timestamp"),
            (OK.replace(r#""message":"m""#, r#""message":"""#), "message is empty"),
            (OK.replace("user", "tool"), "role"),
            (OK.replace("}", r#","speaker_idd":"1"}"#), "unknown field"),
            (OK.replace("}", r#","speaker_id":""}"#), "speaker_id is empty"),
            (OK.replace(r#""chat""#, r#"".chat""#), "starts with '.'"),
            ("{not json".to_owned(), "key must be a string"),
            (r#"["chat","t","m","user","2026-08-09T10:11:12Z","hi"]"#.to_owned(), "must be a JSON object"),
        ] {
            let e = err(&bad);
            assert_eq!(e.code().as_str(), "INVALID_ARGUMENT", "{bad}");
            assert!(e.message().contains(needle), "{bad}: {}", e.message());
            assert_eq!(e.line(), Some(1));
        }
        assert!(err("\u{FEFF}\u{FEFF}").message().contains("must be a JSON object"));
        assert_eq!(read_records(format!("\u{FEFF}{OK}").as_bytes()).unwrap().len(), 1);
        assert!(read_records(&b"\xff\n"[..]).unwrap_err().message().contains("UTF-8"));
    }

    #[test]
    fn nulls_are_absent() {
        let r =
            parse_record(&OK.replace("}", r#","speaker_id":null,"speaker_display":null,"pending":null}"#))
                .unwrap();
        assert_eq!(r.speaker(), None);
        assert!(!r.is_pending());
    }
}
