//! The guard between stdin and rmcp: every request gets an answer.
//!
//! rmcp drops, without a word, a line serde_json cannot parse (one nested
//! past its recursion limit, or not JSON at all) and a line over its cap;
//! the client then waits forever. [`Guard`] reads stdin a line at a time,
//! scans each once ([`scan`](super::scan)), passes the good ones on to
//! rmcp unchanged and answers the rest itself; [`Guarded`] is rmcp's own
//! stdio transport with those answers sent through its writer, a whole
//! message at a time, so they never interleave with rmcp's.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use rmcp::model::{ErrorCode, ErrorData, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

use super::scan::{Scan, Verdict};

/// Stdin with every line that rmcp could not answer taken out and answered
/// on `answers` instead.
#[derive(Debug)]
pub(super) struct Guard<R> {
    inner: R,
    /// The line being read, while it is within [`MAX_LINE`](super::scan::MAX_LINE).
    line: Vec<u8>,
    scan: Scan,
    /// Lines passed on, not yet read by rmcp, and how much of them it has.
    out: Vec<u8>,
    taken: usize,
    answers: mpsc::UnboundedSender<ServerJsonRpcMessage>,
    ended: bool,
}

impl<R> Guard<R> {
    pub(super) fn new(inner: R, answers: mpsc::UnboundedSender<ServerJsonRpcMessage>) -> Guard<R> {
        Guard {
            inner,
            line: Vec::new(),
            scan: Scan::default(),
            out: Vec::new(),
            taken: 0,
            answers,
            ended: false,
        }
    }

    /// Takes bytes read from stdin.
    fn take(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                self.end_line();
                continue;
            }
            self.scan.feed(b);
            if self.scan.excess().is_none() {
                self.line.push(b);
            } else if !self.line.is_empty() {
                self.line = Vec::new();
            }
        }
    }

    /// Ends the line read so far: passes it on or answers it.
    fn end_line(&mut self) {
        let scan = std::mem::take(&mut self.scan);
        let line = std::mem::take(&mut self.line);
        if scan.is_blank() {
            return;
        }
        let answer = if scan.excess().is_some() {
            match scan.verdict() {
                Verdict::Ignore => {
                    tracing::debug!("a notification or response past the size limits is ignored");
                    None
                }
                Verdict::Answer { code, reason, id } => {
                    Some(ServerJsonRpcMessage::error(ErrorData::new(ErrorCode(code), reason, None), id))
                }
            }
        } else if let Err(reason) = parses(&line) {
            let error = ErrorData::parse_error(format!("the line is not JSON: {reason}"), None);
            Some(ServerJsonRpcMessage::error(error, None))
        } else {
            self.out.extend_from_slice(&line);
            self.out.push(b'\n');
            None
        };
        if let Some(answer) = answer {
            // The receiver lives as long as the transport reading this.
            let _ = self.answers.send(answer);
        }
    }
}

/// Whether `line` is JSON (UTF-8, after an optional byte order mark, as
/// rmcp reads it), its strings decoded as rmcp decodes them: a lone
/// surrogate escape (`"\ud800"`) is refused here, where skipping the
/// string unread would pass it on to be dropped. Its nesting is within the
/// scan's limit, so serde_json's recursion limit is never reached.
fn parses(line: &[u8]) -> Result<(), String> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|e| format!("invalid UTF-8 at byte {}", e.valid_up_to()))?;
    serde_json::from_str::<serde_json::Value>(text).map(drop).map_err(|e| e.to_string())
}

impl<R: AsyncRead + Unpin> AsyncRead for Guard<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.taken < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.taken);
                buf.put_slice(&this.out[this.taken..this.taken + n]);
                this.taken += n;
                if this.taken == this.out.len() {
                    this.out.clear();
                    this.taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0_u8; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                // A last line without its line feed is a line all the same.
                this.end_line();
                this.ended = true;
            } else {
                this.take(read.filled());
            }
        }
    }
}

/// A send under way, kept across cancelled receives.
type Sending = Pin<Box<dyn Future<Output = io::Result<()>> + Send>>;

/// rmcp's stdio transport reading through a [`Guard`], with the guard's
/// answers written by the transport's own writer.
pub(super) struct Guarded<R: AsyncRead + Unpin, W: AsyncWrite> {
    inner: AsyncRwTransport<RoleServer, Guard<R>, W>,
    answers: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
    sending: Option<Sending>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite> std::fmt::Debug for Guarded<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guarded").field("sending", &self.sending.is_some()).finish_non_exhaustive()
    }
}

impl<R, W> Guarded<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(super) fn new(read: R, write: W) -> Guarded<R, W> {
        let (tx, answers) = mpsc::unbounded_channel();
        let inner = AsyncRwTransport::new_server(Guard::new(read, tx), write);
        Guarded { inner, answers, sending: None }
    }

    /// Finishes the answer being sent, if any.
    async fn finish_sending(&mut self) {
        if let Some(sending) = self.sending.as_mut() {
            if let Err(e) = sending.await {
                tracing::debug!("an answer could not be written: {e}");
            }
            self.sending = None;
        }
    }
}

/// What a receive saw first.
enum Next {
    Answer(ServerJsonRpcMessage),
    Message(Option<RxJsonRpcMessage<RoleServer>>),
}

impl<R, W> Transport<RoleServer> for Guarded<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    /// The next message for rmcp; the guard's answers are sent meanwhile.
    /// Cancel-safe, as rmcp needs: a send under way is kept and finished
    /// by the next call.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.finish_sending().await;
            let next = tokio::select! {
                biased;
                Some(answer) = self.answers.recv() => Next::Answer(answer),
                message = self.inner.receive() => Next::Message(message),
            };
            match next {
                Next::Answer(answer) => self.sending = Some(Box::pin(self.inner.send(answer))),
                Next::Message(Some(message)) => return Some(message),
                Next::Message(None) => {
                    // Input ended: answer what is left before saying so.
                    while let Ok(answer) = self.answers.try_recv() {
                        self.sending = Some(Box::pin(self.inner.send(answer)));
                        self.finish_sending().await;
                    }
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.finish_sending().await;
        self.inner.close().await
    }
}
