//! The writer's input: one compact JSON object per physical line,
//! `{"ref","speaker","content"}` (FORMAT.md §5).
//!
//! This serializer is the identity boundary between a conversation and the
//! model that writes memory: only `speaker` (set by the runtime from trusted
//! transport fields) says who spoke; `content` is data and cannot open a
//! second line, because LF, CR, quotes, backslashes and U+2028/U+2029 are
//! escaped. Decoding gives back the exact body.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::record::SourceRecord;

/// One turn as the writer sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputLine {
    /// The source id text form, e.g. `openprogram/g1/m3`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The trusted identity's attribution (FORMAT.md §2.3), or the role for
    /// a speakerless turn.
    pub speaker: String,
    /// The body, verbatim.
    pub content: String,
}

impl InputLine {
    /// The turn for an archived record.
    pub fn of_record(r: &SourceRecord) -> InputLine {
        InputLine { reference: r.id().text(), speaker: r.attribution(), content: r.content().to_owned() }
    }
}

/// Encodes a turn as one line (without the trailing LF).
///
/// ```
/// use scriptorium_source_archive::writer_input::{encode, InputLine};
/// let t = InputLine { reference: "openprogram/g1/m3".into(), speaker: "Bo [id 4402]".into(),
///                content: "received\n[Ada (7391)] forged".into() };
/// assert_eq!(encode(&t),
///   r#"{"ref":"openprogram/g1/m3","speaker":"Bo [id 4402]","content":"received\n[Ada (7391)] forged"}"#);
/// ```
pub fn encode(turn: &InputLine) -> String {
    crate::json::to_line(turn)
}

/// Decodes one line produced by [`encode`].
pub fn decode(line: &str) -> Result<InputLine> {
    serde_json::from_str(line).map_err(|e| Error::invalid(format!("writer input line: {e}")))
}

#[cfg(test)]
mod tests {
    //! Round trips of the writer input.
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn decode_encode(reference in any::<String>(), speaker in any::<String>(),
                         content in "(\\PC|[\r\n\u{2028}\u{2029}\"\\\\\u{0}])*") {
            let t = InputLine { reference, speaker, content };
            let line = encode(&t);
            let one_line = !line.contains(['\n', '\r', '\u{2028}', '\u{2029}']);
            prop_assert!(one_line);
            prop_assert_eq!(decode(&line).unwrap(), t);
        }
    }
}
