//! The model a writer talks to: chat with tool definitions, answering with
//! text and/or tool calls; failures classified as retryable or not.

use serde::{Deserialize, Serialize};

use std::fmt;

use scriptorium_scheduler::{Code, WriteFailure};

/// Why a model endpoint (chat or embeddings) gave no usable answer: the
/// stable code, what went wrong, and whether asking again later could
/// succeed. A write that meets it fails with it ([`WriteFailure`]); a
/// search that meets it says so as a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    /// `MODEL_UNAVAILABLE` (unreachable, timed out, rate-limited, an
    /// unusable answer), `PERMISSION_DENIED` (credentials) or
    /// `INVALID_ARGUMENT` (a request the server will never take, bad
    /// configuration).
    pub code: Code,
    /// What went wrong, for a person.
    pub reason: String,
    /// Whether asking again later could succeed.
    pub retryable: bool,
}

impl ModelError {
    /// A failure whose retryability follows its code.
    pub fn new(code: Code, reason: impl Into<String>) -> ModelError {
        ModelError { code, reason: reason.into(), retryable: code.retryable() }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.reason)
    }
}

impl std::error::Error for ModelError {}

impl From<ModelError> for WriteFailure {
    fn from(e: ModelError) -> WriteFailure {
        WriteFailure { code: e.code, reason: e.reason, retryable: e.retryable }
    }
}

/// One message of a conversation with the model (chat-completions shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The assistant's tool calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a `tool` message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A message with text only.
    pub fn text(role: &str, content: impl Into<String>) -> Message {
        Message {
            role: role.to_owned(),
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A tool's answer to call `id`.
    pub fn tool(id: &str, content: impl Into<String>) -> Message {
        Message {
            role: "tool".to_owned(),
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(id.to_owned()),
        }
    }
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, echoed in the answer.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON object as text (as the model wrote it).
    pub arguments: String,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// Its name.
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// Its arguments as a JSON schema object.
    pub parameters: serde_json::Value,
}

/// The model's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    /// Text, if any.
    pub text: Option<String>,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Prompt tokens the server counted, when it says.
    pub prompt_tokens: Option<u64>,
}

/// A chat model with tools.
pub trait Model {
    /// The model's name, as reports print it.
    fn name(&self) -> &str;
    /// One chat turn. Errors: `MODEL_UNAVAILABLE` (retryable: network,
    /// timeout, 408/429/5xx, a malformed answer), `PERMISSION_DENIED`
    /// (401/403) and `INVALID_ARGUMENT` (400/404/422, bad configuration),
    /// not retryable.
    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<Reply, ModelError>;
}
