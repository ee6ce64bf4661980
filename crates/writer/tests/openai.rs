//! The OpenAI-compatible client against a scripted local server: answers,
//! malformed JSON, 429 with Retry-After, 500, timeouts, authentication.

use std::time::Duration;

use scriptorium_scheduler::Code;
use scriptorium_testkit::replay::{Replay, Scripted};
use scriptorium_writer::model::{Message, Model};
use scriptorium_writer::OpenAiCompatible;
use serde_json::json;

fn client(server: &Replay, timeout_ms: u64) -> OpenAiCompatible {
    OpenAiCompatible::new(
        &server.base_url,
        "scripted-model",
        Some("sk-test".into()),
        Duration::from_millis(timeout_ms),
    )
    .unwrap()
}

fn hello() -> Vec<Message> {
    vec![Message::text("system", "be brief"), Message::text("user", "hello")]
}

#[test]
fn a_tool_call_answer_and_the_request_it_answers() {
    let server = Replay::start(vec![Scripted::tool_calls(&[("finish", json!({}))])]).unwrap();
    let mut c = client(&server, 5000);
    let reply = c.chat(&hello(), &[]).unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].name, "finish");
    assert_eq!(reply.prompt_tokens, Some(100));
    let sent: serde_json::Value = serde_json::from_str(&server.requests()[0]).unwrap();
    assert_eq!(sent["model"], "scripted-model");
    assert_eq!(sent["messages"][1]["content"], "hello");
}

#[test]
fn failures_are_classified() {
    let mut retry_after = Scripted::status(429, "{\"error\":\"slow down\"}");
    retry_after.headers.push(("Retry-After".into(), "7".into()));
    let mut slow = Scripted::text("late");
    slow.delay = Duration::from_millis(1500);
    let server = Replay::start(vec![
        Scripted::ok("{not json"),
        retry_after,
        Scripted::status(500, "{\"error\":\"boom\"}"),
        Scripted::status(401, "{\"error\":\"bad key\"}"),
        Scripted::status(403, "{\"error\":\"no\"}"),
        Scripted::status(404, "{\"error\":\"no such model\"}"),
        Scripted::ok("{\"choices\":[]}"),
        slow,
    ])
    .unwrap();
    let mut c = client(&server, 500);
    let expect = [
        (Code::ModelUnavailable, true, "not JSON"),
        (Code::ModelUnavailable, true, "Retry-After: 7"),
        (Code::ModelUnavailable, true, "500"),
        (Code::PermissionDenied, false, "401"),
        (Code::PermissionDenied, false, "403"),
        (Code::InvalidArgument, false, "404"),
        (Code::ModelUnavailable, true, "no choices"),
        (Code::ModelUnavailable, true, "cannot reach"),
    ];
    for (i, (code, retryable, says)) in expect.iter().enumerate() {
        let f = c.chat(&hello(), &[]).unwrap_err();
        assert_eq!((f.code, f.retryable), (*code, *retryable), "case {i}: {f}");
        assert!(f.reason.contains(says), "case {i}: {f}");
    }
}

#[test]
fn nothing_listening_is_retryable_and_a_bad_url_is_not() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut c =
        OpenAiCompatible::new(&format!("http://127.0.0.1:{port}/v1"), "m", None, Duration::from_secs(1))
            .unwrap();
    let f = c.chat(&hello(), &[]).unwrap_err();
    assert_eq!((f.code, f.retryable), (Code::ModelUnavailable, true));
    let f = OpenAiCompatible::new("ftp://example.com", "m", None, Duration::from_secs(1)).unwrap_err();
    assert_eq!((f.code, f.retryable), (Code::InvalidArgument, false));
    let f = OpenAiCompatible::new("http://127.0.0.1:1/v1", " ", None, Duration::from_secs(1)).unwrap_err();
    assert_eq!(f.code, Code::InvalidArgument);
}
