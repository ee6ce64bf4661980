//! A scripted chat-completions server on 127.0.0.1: it answers each request
//! with the next scripted response and keeps every request body. For tests
//! and demos of the OpenAI-compatible client without a model.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

/// One scripted response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scripted {
    /// The HTTP status.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
    /// Wait this long before answering (to provoke a client timeout).
    pub delay: Duration,
}

impl Scripted {
    /// A 200 with this body.
    pub fn ok(body: impl Into<String>) -> Scripted {
        Scripted { status: 200, headers: Vec::new(), body: body.into(), delay: Duration::ZERO }
    }

    /// A status with a short body.
    pub fn status(status: u16, body: impl Into<String>) -> Scripted {
        Scripted { status, headers: Vec::new(), body: body.into(), delay: Duration::ZERO }
    }

    /// A chat-completions answer calling tools, each `(name, arguments)`.
    pub fn tool_calls(calls: &[(&str, Value)]) -> Scripted {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                json!({"id": format!("call_{i}"), "type": "function",
                       "function": {"name": name, "arguments": args.to_string()}})
            })
            .collect();
        Scripted::ok(
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls},
                                 "finish_reason": "tool_calls"}],
                   "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
            .to_string(),
        )
    }

    /// A chat-completions answer with text only.
    pub fn text(text: &str) -> Scripted {
        Scripted::ok(
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
                .to_string(),
        )
    }
}

/// A running scripted server; stops when dropped.
#[derive(Debug)]
pub struct Replay {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    port: u16,
    thread: Option<JoinHandle<()>>,
}

impl Replay {
    /// Starts serving `script`, one response per request, in order; past
    /// its end every request gets a 500.
    pub fn start(script: Vec<Scripted>) -> std::io::Result<Replay> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut script = script.into_iter();
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = conn else { continue };
                let next = script
                    .next()
                    .unwrap_or_else(|| Scripted::status(500, "{\"error\":\"the script is exhausted\"}"));
                serve(stream, &next, &r);
            }
        });
        Ok(Replay {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            requests,
            stop,
            port,
            thread: Some(thread),
        })
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(stream: TcpStream, answer: &Scripted, requests: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(&stream);
    let mut length = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    if let Ok(mut r) = requests.lock() {
        r.push(String::from_utf8_lossy(&body).into_owned());
    }
    std::thread::sleep(answer.delay);
    let mut out = format!(
        "HTTP/1.1 {} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        answer.status,
        answer.body.len()
    );
    for (k, v) in &answer.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&answer.body);
    let mut stream = stream;
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.flush();
}
