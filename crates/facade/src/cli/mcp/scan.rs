//! One pass over each line that reaches `scriptorium mcp`, before rmcp
//! parses it: linear, without recursion and in bounded memory, whatever
//! the line holds. It measures the nesting depth and the length, and reads
//! the top-level `id`, `method` and kind of message with a shallow scan, so
//! a line rmcp could not parse (nested past serde_json's recursion limit,
//! or longer than its line cap) can still be answered with its `id`.

use rmcp::model::RequestId;

/// The deepest nesting passed on to rmcp: arrays and objects counted
/// together, the JSON-RPC envelope being level 1. serde_json stops at 128;
/// a tool call needs well under 10.
pub(super) const MAX_DEPTH: usize = 64;

/// The longest line passed on to rmcp, its line feed included: rmcp's own
/// cap, so a line it would drop silently is answered here instead.
pub(super) const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The most bytes of a top-level key or of an `id` or `method` value kept
/// for reading; a longer one is not read (an id that long is not
/// recovered).
const MAX_CAPTURE: usize = 1024;

/// Why a line is not passed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Excess {
    /// Nested deeper than [`MAX_DEPTH`].
    Depth,
    /// Longer than [`MAX_LINE`].
    Length,
}

/// A top-level member the scan cares about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Id,
    Method,
    Params,
    /// `result` or `error`: the line is a response.
    Response,
    Other,
}

/// A few bytes kept for reading, or too many to keep.
#[derive(Debug, Default)]
struct Capture {
    bytes: Vec<u8>,
    overflow: bool,
}

impl Capture {
    fn push(&mut self, b: u8) {
        if self.bytes.len() < MAX_CAPTURE {
            self.bytes.push(b);
        } else {
            self.overflow = true;
        }
    }

    fn read<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        if self.overflow {
            return None;
        }
        serde_json::from_slice(&self.bytes).ok()
    }
}

/// The scan of one line so far.
#[derive(Debug, Default)]
pub(super) struct Scan {
    /// Bytes seen, the line feed not included.
    len: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The first byte that is not white space (nor a byte order mark).
    first: Option<u8>,
    /// In the top-level object, whether a key comes next.
    expect_key: bool,
    /// The top-level key being read or last read.
    key: Capture,
    reading_key: bool,
    /// The top-level member whose value is being read.
    member: Option<Member>,
    id: Capture,
    ids: usize,
    method: Capture,
    response: bool,
    excess: Option<Excess>,
    /// The member under which the nesting first went past the limit.
    deep_in: Option<Member>,
}

/// What to do with a line whose nesting or length is past the limit.
#[derive(Debug, PartialEq)]
pub(super) enum Verdict {
    /// A notification or a response: no answer is due.
    Ignore,
    /// An error answer: the code (`-32600` or `-32602`), the reason, the
    /// request's id when the shallow scan recovered one.
    Answer { code: i32, reason: String, id: Option<RequestId> },
}

impl Scan {
    /// Takes the next byte of the line (never its line feed).
    pub(super) fn feed(&mut self, b: u8) {
        self.len += 1;
        if self.len >= MAX_LINE && self.excess.is_none() {
            self.excess = Some(Excess::Length);
        }
        if self.in_string {
            self.keep(b);
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                self.reading_key = false;
            }
            return;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            0xEF | 0xBB | 0xBF if self.first.is_none() => {}
            b'"' => {
                self.first.get_or_insert(b);
                if self.depth == 1 && self.expect_key {
                    self.key = Capture::default();
                    self.reading_key = true;
                }
                self.in_string = true;
                self.keep(b);
            }
            b'{' | b'[' => {
                self.first.get_or_insert(b);
                self.keep(b);
                self.depth += 1;
                if self.depth > MAX_DEPTH && self.excess.is_none() {
                    self.excess = Some(Excess::Depth);
                    self.deep_in = self.member;
                }
                if self.depth == 1 && self.first == Some(b'{') {
                    self.expect_key = true;
                }
            }
            b'}' | b']' if self.depth == 1 => {
                self.depth = 0;
                self.member = None;
            }
            b'}' | b']' => {
                self.keep(b);
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && self.expect_key => {
                self.expect_key = false;
                self.member = Some(self.member_named());
            }
            b',' if self.depth == 1 => {
                self.expect_key = true;
                self.member = None;
            }
            _ => {
                self.first.get_or_insert(b);
                self.keep(b);
            }
        }
    }

    /// Keeps `b` if it belongs to a top-level key or to the value of `id`
    /// or `method`.
    fn keep(&mut self, b: u8) {
        if self.reading_key {
            self.key.push(b);
        } else if self.depth >= 1 {
            match self.member {
                Some(Member::Id) => self.id.push(b),
                Some(Member::Method) => self.method.push(b),
                _ => {}
            }
        }
    }

    /// The member the key just read names, counted.
    fn member_named(&mut self) -> Member {
        let member = match self.key.read::<String>().as_deref() {
            Some("id") => Member::Id,
            Some("method") => Member::Method,
            Some("params") => Member::Params,
            Some("result" | "error") => Member::Response,
            _ => Member::Other,
        };
        match member {
            Member::Id => self.ids += 1,
            Member::Response => self.response = true,
            _ => {}
        }
        member
    }

    /// Whether the line was only white space.
    pub(super) fn is_blank(&self) -> bool {
        self.first.is_none()
    }

    /// Why the line may not be passed on, if it may not.
    pub(super) fn excess(&self) -> Option<Excess> {
        self.excess
    }

    /// What to answer a line past a limit.
    pub(super) fn verdict(&self) -> Verdict {
        let object = self.first == Some(b'{');
        let method = object && self.method.read::<String>().is_some();
        if object && method && self.ids == 0 {
            return Verdict::Ignore;
        }
        if object && !method && self.response {
            return Verdict::Ignore;
        }
        let id = if object && self.ids == 1 { self.id.read::<RequestId>() } else { None };
        match self.excess {
            Some(Excess::Depth) => Verdict::Answer {
                code: if method && self.deep_in == Some(Member::Params) { -32602 } else { -32600 },
                reason: format!("the message nests deeper than {MAX_DEPTH} levels of arrays and objects"),
                id,
            },
            _ => Verdict::Answer {
                code: -32600,
                reason: format!("the line is longer than {} MiB", MAX_LINE >> 20),
                id,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    //! The scan on whole lines.
    use super::*;

    fn scan(line: &str) -> Scan {
        let mut s = Scan::default();
        line.bytes().for_each(|b| s.feed(b));
        s
    }

    fn nested(open: &str, close: &str, n: usize) -> String {
        format!("{}{}", open.repeat(n), close.repeat(n))
    }

    #[test]
    fn depth_is_measured_outside_strings_only() {
        assert_eq!(scan(&nested("[", "]", MAX_DEPTH)).excess(), None);
        assert_eq!(scan(&nested("[", "]", MAX_DEPTH + 1)).excess(), Some(Excess::Depth));
        let quoted = format!(
            r#"{{"id":1,"method":"ping","params":{{"x":"{}\"{}"}}}}"#,
            "[".repeat(500),
            "{".repeat(9)
        );
        assert_eq!(scan(&quoted).excess(), None);
        assert!(scan("  \r").is_blank());
    }

    #[test]
    fn a_deep_request_is_answered_with_its_id() {
        let deep = nested("[", "]", 200);
        let call = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"x","arguments":{{"a":{deep}}}}},"id":"q-7"}}"#
        );
        let Verdict::Answer { code, id, .. } = scan(&call).verdict() else { panic!("a request is answered") };
        assert_eq!((code, id), (-32602, Some(RequestId::String("q-7".into()))));
        let in_id = format!(r#"{{"jsonrpc":"2.0","id":{deep},"method":"ping"}}"#);
        assert!(matches!(scan(&in_id).verdict(), Verdict::Answer { code: -32600, id: None, .. }));
        let bare = scan(&deep).verdict();
        assert!(matches!(bare, Verdict::Answer { code: -32600, id: None, .. }), "{bare:?}");
        let escaped_key = format!(r#"{{"\u0069d":12,"method":"ping","params":{deep}}}"#);
        assert!(matches!(
            scan(&escaped_key).verdict(),
            Verdict::Answer { id: Some(RequestId::Number(12)), .. }
        ));
        let twice = format!(r#"{{"id":1,"id":2,"method":"ping","params":{deep}}}"#);
        assert!(
            matches!(scan(&twice).verdict(), Verdict::Answer { id: None, .. }),
            "an ambiguous id is not used"
        );
    }

    #[test]
    fn notifications_and_responses_get_no_answer() {
        let deep = format!("{}1{}", "{\"a\":".repeat(100), "}".repeat(100));
        assert_eq!(
            scan(&format!(r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{deep}}}"#)).verdict(),
            Verdict::Ignore
        );
        assert_eq!(
            scan(&format!(r#"{{"jsonrpc":"2.0","id":3,"result":{deep}}}"#)).verdict(),
            Verdict::Ignore
        );
    }
}
