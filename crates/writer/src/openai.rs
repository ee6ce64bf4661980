//! `OpenAiCompatible`: any chat-completions endpoint with `tools` (OpenAI,
//! Ollama, vLLM, llama.cpp's server, LM Studio), over a blocking HTTP client.

use std::time::Duration;

use serde_json::{json, Value};

use scriptorium_scheduler::Code;

use crate::model::{Message, Model, ModelError, Reply, ToolCall, ToolSpec};

/// The environment variable the API key is read from by default.
pub const API_KEY_ENV: &str = "SCRIPTORIUM_API_KEY";

/// A client of one model at one endpoint. Its `Debug` form shows neither
/// the API key nor credentials in the URL.
#[derive(Clone)]
pub struct OpenAiCompatible {
    base_url: String,
    model: String,
    api_key: Option<String>,
    agent: ureq::Agent,
    /// The request timeout.
    pub timeout: Duration,
}

impl std::fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("base_url", &redact_url(&self.base_url))
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl OpenAiCompatible {
    /// A client of `model` at `base_url` (e.g. `http://127.0.0.1:11434/v1`;
    /// requests go to `{base_url}/chat/completions`). `api_key` is sent as a
    /// bearer token when present.
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
    ) -> Result<OpenAiCompatible, ModelError> {
        let url = checked_endpoint(base_url, model, "model")?;
        let agent = ureq::AgentBuilder::new().timeout(timeout).build();
        Ok(OpenAiCompatible { base_url: url, model: model.to_owned(), api_key, agent, timeout })
    }

    /// The request body for these messages and tools.
    pub fn request_body(&self, messages: &[Message], tools: &[ToolSpec]) -> Value {
        let messages: Vec<Value> = messages.iter().map(wire_message).collect();
        let mut body = json!({"model": self.model, "messages": messages, "temperature": 0});
        if !tools.is_empty() {
            body["tools"] = tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
        }
        body
    }
}

fn wire_message(m: &Message) -> Value {
    let mut v = json!({"role": m.role, "content": m.content});
    if !m.tool_calls.is_empty() {
        v["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
    }
    if let Some(id) = &m.tool_call_id {
        v["tool_call_id"] = id.clone().into();
    }
    v
}

/// `url` with any `user:password@` removed, for messages, logs and files:
/// credentials written into an endpoint URL never leave the process.
///
/// ```
/// use scriptorium_writer::openai::redact_url;
/// assert_eq!(redact_url("http://ada:s3cret@127.0.0.1:11434/v1"), "http://***@127.0.0.1:11434/v1");
/// assert_eq!(redact_url("https://api.example/v1"), "https://api.example/v1");
/// ```
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else { return url.to_owned() };
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}***@{}", &url[..scheme_end], &rest[at + 1..]),
        None => url.to_owned(),
    }
}

/// `base_url` without trailing `/`, once it is an http(s) URL and the
/// model name is not empty; `what` names the endpoint in the refusal
/// (`model`, `embedding`).
pub(crate) fn checked_endpoint(base_url: &str, model: &str, what: &str) -> Result<String, ModelError> {
    let url = base_url.trim_end_matches('/');
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() <= "https://".len() {
        return Err(ModelError::new(
            Code::InvalidArgument,
            format!("{what} URL {:?} is not an http:// or https:// URL", redact_url(base_url)),
        ));
    }
    if model.trim().is_empty() {
        return Err(ModelError::new(Code::InvalidArgument, format!("the {what} name is empty")));
    }
    Ok(url.to_owned())
}

/// POSTs a JSON body to `url` (with the bearer key, if any) and returns the
/// answer's text; a failure is classified by [`status_failure`] or as an
/// unreachable server. `who` names the server in messages.
pub(crate) fn post_json(
    agent: &ureq::Agent,
    url: &str,
    api_key: Option<&str>,
    body: &str,
    who: &str,
) -> Result<String, ModelError> {
    let mut req = agent.post(url).set("Content-Type", "application/json");
    if let Some(key) = api_key {
        req = req.set("Authorization", &format!("Bearer {key}"));
    }
    let shown = redact_url(url);
    tracing::debug!(url = %shown, bytes = body.len(), "POST");
    match req.send_string(body) {
        Ok(resp) => resp.into_string().map_err(|e| unavailable(format!("reading the {who}'s answer: {e}"))),
        Err(ureq::Error::Status(status, resp)) => {
            let retry_after = resp.header("Retry-After").map(str::to_owned);
            let text = resp.into_string().unwrap_or_default();
            Err(status_failure(status, retry_after.as_deref(), &text))
        }
        Err(ureq::Error::Transport(t)) if t.kind() == ureq::ErrorKind::InvalidUrl => Err(ModelError::new(
            Code::InvalidArgument,
            format!("{who} URL {shown:?} is not a valid URL: {}", redact_url(&t.to_string())),
        )),
        Err(ureq::Error::Transport(t)) => {
            Err(unavailable(format!("cannot reach the {who} at {shown}: {}", redact_url(&t.to_string()))))
        }
    }
}

fn unavailable(why: String) -> ModelError {
    ModelError::new(Code::ModelUnavailable, why)
}

/// Classifies an HTTP status: 408, 429 and 5xx are retryable; 401/403 are
/// authentication; the other 4xx are a request the server will never take.
pub fn status_failure(status: u16, retry_after: Option<&str>, body: &str) -> ModelError {
    let detail: String = body.chars().take(300).collect();
    let after = retry_after.map(|s| format!(" (Retry-After: {s})")).unwrap_or_default();
    match status {
        408 | 429 | 500..=599 => unavailable(format!("the model server answered {status}{after}: {detail}")),
        401 | 403 => ModelError::new(
            Code::PermissionDenied,
            format!("the model server refused the credentials ({status}): {detail}"),
        ),
        _ => ModelError::new(
            Code::InvalidArgument,
            format!("the model server refused the request ({status}): {detail}"),
        ),
    }
}

/// Reads a chat-completions answer.
pub fn parse_reply(body: &str) -> Result<Reply, ModelError> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| unavailable(format!("the model's answer is not JSON: {e}")))?;
    let message = &v["choices"][0]["message"];
    if !message.is_object() {
        return Err(unavailable("the model's answer has no choices[0].message".to_owned()));
    }
    let text = message["content"].as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let mut tool_calls = Vec::new();
    for (i, c) in message["tool_calls"].as_array().into_iter().flatten().enumerate() {
        let name = c["function"]["name"].as_str().ok_or_else(|| {
            unavailable(format!("tool call {i} of the model's answer has no function name"))
        })?;
        let arguments = match &c["function"]["arguments"] {
            Value::String(s) => s.clone(),
            Value::Null => "{}".to_owned(),
            other => other.to_string(),
        };
        let id = c["id"].as_str().map(str::to_owned).unwrap_or_else(|| format!("call_{i}"));
        tool_calls.push(ToolCall { id, name: name.to_owned(), arguments });
    }
    Ok(Reply { text, tool_calls, prompt_tokens: v["usage"]["prompt_tokens"].as_u64() })
}

impl Model for OpenAiCompatible {
    fn name(&self) -> &str {
        &self.model
    }

    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<Reply, ModelError> {
        let url = format!("{}/chat/completions", self.base_url);
        let body = self.request_body(messages, tools).to_string();
        let text = post_json(&self.agent, &url, self.api_key.as_deref(), &body, "model")?;
        parse_reply(&text)
    }
}
