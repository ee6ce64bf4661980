//! `scriptorium mcp`: the `memory_*` tools over the Model Context Protocol,
//! stdio transport (one JSON-RPC 2.0 message per line), served by `rmcp`,
//! the official Rust SDK, on a current-thread tokio runtime.
//!
//! The handler answers `tools/list` with the six tool specs, `tools/call`
//! with `tools::call_tool`, and unknown methods and malformed `tools/call`
//! params with JSON-RPC errors; `initialize`, `ping` and lines that are no
//! JSON-RPC message are rmcp's. A line rmcp could not parse or would drop
//! (not JSON, nested deeper than [`scan::MAX_DEPTH`], longer than
//! [`scan::MAX_LINE`]) is answered by the [`guard`] in front of it, so every
//! request gets an answer. Tool calls run on the runtime's blocking
//! pool, so a slow one never holds up `ping` or the end of input. A tool's
//! refusal (an unknown tool name included) is
//! a tool result with `isError: true` carrying the FORMAT §5 error object as
//! text and as `structuredContent`; JSON-RPC errors are for protocol faults
//! only. MCP is never interactive, so `memory_promote` is refused.

use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult,
    ErrorCode, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{QuitReason, RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncWrite;

use scriptorium::archive::json;
use scriptorium::tools::{self, Caller};
use scriptorium::transaction::Tier;
use scriptorium::{Code, Error};

use crate::report::{Exit, Outcome};

mod guard;
mod scan;

/// The MCP server of one workspace and one caller.
#[derive(Debug)]
struct Server {
    root: PathBuf,
    caller: Caller,
    /// `tools::tool_specs()` in MCP's shape, in the same order.
    tools: Vec<Tool>,
}

impl Server {
    fn new(root: PathBuf, caller: Caller) -> Server {
        let tools = tools::tool_specs().iter().map(mcp_tool).collect();
        Server { root, caller, tools }
    }
}

/// One tool spec, from the function-calling shape to MCP's.
fn mcp_tool(spec: &Value) -> Tool {
    let f = &spec["function"];
    let name = f["name"].as_str().expect("every tool spec has a name").to_owned();
    let description = f["description"].as_str().expect("every tool spec has a description").to_owned();
    let schema = f["parameters"].as_object().expect("every tool spec has an object schema").clone();
    Tool::new(name, description, schema)
}

/// A tool's answer or refusal as a tool result: the value as one JSON line
/// of text and as `structuredContent`.
fn tool_result(answer: Result<Value, scriptorium::Error>) -> CallToolResult {
    let (mut result, value) = match answer {
        Ok(v) => (CallToolResult::success(vec![ContentBlock::text(json::to_line(&v))]), v),
        Err(e) => {
            let v = e.to_value();
            (CallToolResult::error(vec![ContentBlock::text(json::to_line(&v))]), v)
        }
    };
    result.structured_content = Some(value);
    result
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("scriptorium", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let (root, caller, name) = (self.root.clone(), self.caller, request.name.to_string());
        // Off the runtime's thread: a slow tool (an embedding call, a lock
        // wait) must not hold up `ping` or the end of input.
        let answer = tokio::task::spawn_blocking(move || tools::call_tool(&root, &name, &args, &caller))
            .await
            .unwrap_or_else(|e| {
                Err(scriptorium::Error::new(scriptorium::Code::Io, format!("the tool stopped: {e}")))
            });
        Ok(tool_result(answer).into())
    }

    /// rmcp routes here every method it does not know, and a `tools/call`
    /// whose params do not parse (no string `name`, or `arguments` not an
    /// object): that one is `-32602` invalid params, the rest `-32601`.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method == "tools/call" {
            return Err(ErrorData::invalid_params(
                "tools/call needs params with a string name and, if any, object arguments",
                None,
            ));
        }
        Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("no method {:?}", request.method), None))
    }
}

/// Stdout with U+2028 and U+2029 written as `\u2028` and `\u2029`, as on
/// every other stream (FORMAT §5). rmcp serializes each message with
/// serde_json, which writes them raw; they can only occur inside JSON
/// strings, where the escape means the same character.
#[derive(Debug)]
struct EscapeSeparators<W> {
    inner: W,
    /// Escaped bytes not yet taken by `inner`.
    out: Vec<u8>,
    /// How much of `out` `inner` has taken.
    taken: usize,
    /// The end of the last write when it may begin a separator (`E2` or
    /// `E2 80`), kept until the next write shows what follows.
    held: Vec<u8>,
}

impl<W> EscapeSeparators<W> {
    fn new(inner: W) -> EscapeSeparators<W> {
        EscapeSeparators { inner, out: Vec::new(), taken: 0, held: Vec::new() }
    }
}

/// Appends `bytes` to `out` with each U+2028 and U+2029 escaped.
fn escape_separators(bytes: &[u8], out: &mut Vec<u8>) {
    let mut rest = bytes;
    loop {
        rest = match rest {
            [0xE2, 0x80, 0xA8, tail @ ..] => {
                out.extend_from_slice(b"\\u2028");
                tail
            }
            [0xE2, 0x80, 0xA9, tail @ ..] => {
                out.extend_from_slice(b"\\u2029");
                tail
            }
            [b, tail @ ..] => {
                out.push(*b);
                tail
            }
            [] => return,
        };
    }
}

impl<W: AsyncWrite + Unpin> EscapeSeparators<W> {
    /// Hands `inner` everything escaped so far.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.taken < self.out.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.out[self.taken..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.taken += n;
        }
        self.out.clear();
        self.taken = 0;
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for EscapeSeparators<W> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        let mut bytes = std::mem::take(&mut this.held);
        bytes.extend_from_slice(buf);
        let keep = if bytes.ends_with(&[0xE2, 0x80]) {
            2
        } else if bytes.ends_with(&[0xE2]) {
            1
        } else {
            0
        };
        let (now, later) = bytes.split_at(bytes.len() - keep);
        escape_separators(now, &mut this.out);
        this.held = later.to_vec();
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.held.is_empty() {
            let held = std::mem::take(&mut this.held);
            this.out.extend_from_slice(&held);
        }
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().poll_flush(cx))?;
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Serves one session on stdin and stdout until stdin ends.
async fn serve(server: Server) -> Outcome {
    let transport = guard::Guarded::new(tokio::io::stdin(), EscapeSeparators::new(tokio::io::stdout()));
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // stdin ended before a session was opened: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(Exit::Success),
        Err(ServerInitializeError::ExpectedInitializeRequest(_)) => {
            return Err(Error::invalid(
                "an MCP session opens with an initialize request (a ping or a request carrying its \
                 protocol metadata may come first); a notification or response came first",
            )
            .into())
        }
        Err(ServerInitializeError::InitializeFailed(e)) => {
            return Err(Error::invalid(format!("initialize refused: {}", e.message)).into())
        }
        Err(e) => return Err(Error::new(Code::Io, format!("the MCP session could not start: {e}")).into()),
    };
    match running.waiting().await {
        Ok(QuitReason::Closed | QuitReason::Cancelled) => Ok(Exit::Success),
        Ok(QuitReason::JoinError(e)) | Err(e) => {
            Err(Error::new(Code::Io, format!("the MCP server stopped: {e}")).into())
        }
        Ok(other) => Err(Error::new(Code::Io, format!("the MCP server stopped: {other:?}")).into()),
    }
}

pub(crate) fn run(root: PathBuf, tier: Tier) -> Outcome {
    let server = Server::new(root, Caller { tier, interactive: false });
    match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => {
            let code = runtime.block_on(serve(server));
            // A tool still running (a commit finishing, a slow endpoint)
            // gets a few seconds; its answer has nowhere to go any more.
            runtime.shutdown_timeout(std::time::Duration::from_secs(5));
            code
        }
        Err(e) => Err(Error::new(Code::Io, format!("cannot start the async runtime: {e}")).into()),
    }
}

#[cfg(test)]
mod tests {
    //! The stdout adapter, fed in awkward pieces.
    use super::*;
    use tokio::io::AsyncWriteExt;

    fn through_adapter(pieces: &[&[u8]]) -> Vec<u8> {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let mut w = EscapeSeparators::new(Vec::new());
            for p in pieces {
                w.write_all(p).await.unwrap();
            }
            w.flush().await.unwrap();
            w.inner
        })
    }

    #[test]
    fn separators_are_escaped_even_when_split_across_writes() {
        let line = "{\"t\":\"a\u{2028}b\u{2029}c\u{2026}\"}\n".as_bytes();
        let want = "{\"t\":\"a\\u2028b\\u2029c\u{2026}\"}\n".as_bytes();
        assert_eq!(through_adapter(&[line]), want);
        for cut in 0..=line.len() {
            let (a, b) = line.split_at(cut);
            assert_eq!(through_adapter(&[a, b]), want, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = line.chunks(1).collect();
        assert_eq!(through_adapter(&bytes), want);
    }

    #[test]
    fn the_tools_are_the_six_specs_in_order() {
        let server = Server::new(PathBuf::from("."), Caller { tier: Tier::Paired, interactive: false });
        let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_ref()).collect();
        let specs = tools::tool_specs();
        let want: Vec<&str> = specs.iter().map(|s| s["function"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, want);
        assert!(server.tools.iter().all(|t| t.description.is_some() && t.input_schema.get("type").is_some()));
    }
}
