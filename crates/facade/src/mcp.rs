//! `scriptorium mcp`: the `memory_*` tools over the Model Context Protocol,
//! stdio transport (one JSON-RPC 2.0 message per line).
//!
//! `initialize`, `ping`, `tools/list`, `tools/call`. A tool's refusal is a
//! tool result with `isError: true` carrying the FORMAT §5 error object as
//! text and as `structuredContent`; JSON-RPC errors are for protocol faults
//! only. MCP is never interactive, so `memory_promote` is refused.

use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use scriptorium::archive::json;
use scriptorium::tools::{self, Caller};
use scriptorium::transaction::Tier;

/// The protocol version this server speaks.
const PROTOCOL: &str = "2025-06-18";

fn reply(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Answers one message; `None` for a notification.
fn answer(root: &std::path::Path, caller: &Caller, msg: &Value) -> Option<Value> {
    let id = msg.get("id").cloned();
    let method = msg.get("method").and_then(Value::as_str);
    let Some(method) = method else {
        return Some(rpc_error(&id.unwrap_or(Value::Null), -32600, "not a JSON-RPC request"));
    };
    let id = id?; // a notification gets no answer
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    Some(match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str).unwrap_or(PROTOCOL);
            reply(
                &id,
                json!({"protocolVersion": asked, "capabilities": {"tools": {"listChanged": false}},
                       "serverInfo": {"name": "scriptorium", "version": env!("CARGO_PKG_VERSION")}}),
            )
        }
        "ping" => reply(&id, json!({})),
        "tools/list" => {
            let list: Vec<Value> = tools::tool_specs()
                .into_iter()
                .map(|t| {
                    let f = &t["function"];
                    json!({"name": f["name"], "description": f["description"], "inputSchema": f["parameters"]})
                })
                .collect();
            reply(&id, json!({"tools": list}))
        }
        "tools/call" => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return Some(rpc_error(&id, -32602, "tools/call needs params.name"));
            };
            let args = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
            match tools::call_tool(root, name, &args, caller) {
                Ok(v) => reply(
                    &id,
                    json!({"content": [{"type": "text", "text": json::to_line(&v)}], "structuredContent": v, "isError": false}),
                ),
                Err(e) => {
                    let v = e.to_value();
                    reply(
                        &id,
                        json!({"content": [{"type": "text", "text": json::to_line(&v)}], "structuredContent": v, "isError": true}),
                    )
                }
            }
        }
        other => rpc_error(&id, -32601, &format!("no method {other:?}")),
    })
}

pub(crate) fn run(root: PathBuf, tier: &str) -> ExitCode {
    let Some(tier) = Tier::parse(tier) else {
        return crate::fail_with("INVALID_ARGUMENT", format!("--tier {tier:?} is not owner or paired"), None);
    };
    let caller = Caller { tier, interactive: false };
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let response = match serde_json::from_str::<Value>(&line) {
            Ok(Value::Array(batch)) if batch.is_empty() => {
                Some(rpc_error(&Value::Null, -32600, "invalid request: an empty batch"))
            }
            Ok(Value::Array(batch)) => {
                let answers: Vec<Value> = batch.iter().filter_map(|m| answer(&root, &caller, m)).collect();
                (!answers.is_empty()).then_some(Value::Array(answers))
            }
            Ok(msg) => answer(&root, &caller, &msg),
            Err(e) => Some(rpc_error(&Value::Null, -32700, &format!("parse error: {e}"))),
        };
        if let Some(r) = response {
            if writeln!(out, "{}", json::to_line(&r)).and_then(|()| out.flush()).is_err() {
                break;
            }
        }
    }
    ExitCode::SUCCESS
}
