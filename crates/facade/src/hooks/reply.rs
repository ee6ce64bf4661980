//! What a hook prints: the JSON each harness accepts for each event.
//!
//! Claude Code and Codex take the same shapes for the events memory
//! answers (Codex refuses an answer with any key it does not know for the
//! event, and then injects nothing, so only these keys are ever written):
//!
//! * `SessionStart`, `UserPromptSubmit`: `{"hookSpecificOutput":{"hookEventName":E,"additionalContext":C}}`
//!   when there is context, plus `"systemMessage"` when there is a notice;
//! * every other event: `{"systemMessage":M}` when there is a notice,
//!   nothing otherwise.
//!
//! No answer ever blocks the agent: `continue`, `decision` and `stopReason`
//! are never written.

use serde_json::{json, Map, Value};

use super::{Answer, EventName};

/// The JSON to print for `a`, or `None`: print nothing.
pub(super) fn render(a: &Answer) -> Option<Value> {
    let mut out = Map::new();
    let takes_context = matches!(a.event, EventName::SessionStart | EventName::UserPromptSubmit);
    if takes_context && !a.context.is_empty() {
        out.insert(
            "hookSpecificOutput".to_owned(),
            json!({"hookEventName": a.event.as_str(), "additionalContext": a.context.as_str()}),
        );
    }
    if let Some(m) = &a.system_message {
        out.insert("systemMessage".to_owned(), Value::String(m.clone()));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}
