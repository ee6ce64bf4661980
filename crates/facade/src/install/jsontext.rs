//! JSON text edited in place: a document is read into spans (where each
//! value, member and element starts and ends), and every change splices
//! the text, so each byte outside the change — key order, spacing,
//! escapes, the way numbers are written, the final newline — stays as it
//! was. Removing what was inserted gives back the bytes from before.
//!
//! The text is checked with `serde_json` first (which gives the line and
//! column of a fault); the span reader then only ever sees valid JSON.

use serde::Serialize;
use serde_json::Value;

/// A value of the document and where it lies: `text[start..end]`.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The byte offset of its first character.
    pub(crate) start: usize,
    /// The byte offset just past its last character.
    pub(crate) end: usize,
    /// What it holds.
    pub(crate) kind: Kind,
}

/// What a [`Node`] holds.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// An object's members, in file order (duplicates kept).
    Object(Vec<Member>),
    /// An array's elements, in file order.
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

/// One `"key": value` of an object.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    /// The decoded key.
    pub(crate) key: String,
    /// The byte offset of the key's opening quote.
    pub(crate) key_start: usize,
    /// The byte offset just past the key's closing quote.
    pub(crate) key_end: usize,
    /// The value.
    pub(crate) value: Node,
}

/// Where a document fails to be JSON: serde_json's message, line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fault {
    /// What is wrong.
    pub(crate) message: String,
    /// The 1-based line.
    pub(crate) line: usize,
    /// The 1-based column.
    pub(crate) column: usize,
}

/// The deepest nesting of arrays and objects read (settings files are a
/// few levels deep; the reader recurses once per level).
const MAX_DEPTH: usize = 512;

/// Where (line, column) `text` first nests deeper than [`MAX_DEPTH`], if
/// it does; strings are stepped over.
fn too_deep(text: &str) -> Option<(usize, usize)> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut line, mut column) = (1, 0);
    for c in text.chars() {
        column += 1;
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                '\n' => (line, column) = (line + 1, 0),
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some((line, column));
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            '\n' => (line, column) = (line + 1, 0),
            _ => {}
        }
    }
    None
}

/// Reads `text` into spans; `Err` when it is not JSON. The root may be any
/// value; callers check that it is an object.
pub(crate) fn parse(text: &str) -> Result<Node, Fault> {
    if let Some((line, column)) = too_deep(text) {
        let message = format!("nested deeper than {MAX_DEPTH} levels of arrays and objects");
        return Err(Fault { message, line, column });
    }
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        let (line, column) = (e.line(), e.column());
        let full = e.to_string();
        let message =
            full.strip_suffix(&format!(" at line {line} column {column}")).unwrap_or(&full).to_owned();
        return Err(Fault { message, line, column });
    }
    let mut reader = Reader { b: text.as_bytes(), text, i: 0 };
    reader.ws();
    Ok(reader.value())
}

impl Node {
    /// The members when this is an object.
    pub(crate) fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The elements when this is an array.
    pub(crate) fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(e) => Some(e),
            _ => None,
        }
    }

    /// The last member named `key` (as `JSON.parse` and serde_json read a
    /// duplicated key) and its index.
    pub(crate) fn member(&self, key: &str) -> Option<(usize, &Member)> {
        self.members()?.iter().enumerate().rev().find(|(_, m)| m.key == key)
    }

    /// The number of members or elements (0 for a scalar).
    pub(crate) fn len(&self) -> usize {
        match &self.kind {
            Kind::Object(m) => m.len(),
            Kind::Array(e) => e.len(),
            Kind::Scalar => 0,
        }
    }

    /// The value this node spells in `text`.
    pub(crate) fn value(&self, text: &str) -> Value {
        serde_json::from_str(&text[self.start..self.end]).unwrap_or(Value::Null)
    }

    /// Where each child (member from its key, or element) starts and ends.
    fn child_spans(&self) -> Vec<(usize, usize)> {
        match &self.kind {
            Kind::Object(m) => m.iter().map(|m| (m.key_start, m.value.end)).collect(),
            Kind::Array(e) => e.iter().map(|e| (e.start, e.end)).collect(),
            Kind::Scalar => Vec::new(),
        }
    }
}

/// A recursive-descent reader of text serde_json has accepted.
struct Reader<'a> {
    /// The text's bytes.
    b: &'a [u8],
    /// The text.
    text: &'a str,
    /// Where the reader is.
    i: usize,
}

impl Reader<'_> {
    /// Skips JSON white space.
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    /// Reads the value starting here.
    fn value(&mut self) -> Node {
        let start = self.i;
        let kind = match self.b.get(self.i) {
            Some(b'{') => Kind::Object(self.object()),
            Some(b'[') => Kind::Array(self.array()),
            Some(b'"') => {
                self.string();
                Kind::Scalar
            }
            _ => {
                while self.i < self.b.len()
                    && !matches!(self.b[self.i], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                {
                    self.i += 1;
                }
                Kind::Scalar
            }
        };
        Node { start, end: self.i, kind }
    }

    /// Skips the string starting here, its closing quote included.
    fn string(&mut self) {
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }

    /// Reads the members of the object starting here, past its `}`.
    fn object(&mut self) -> Vec<Member> {
        let mut members = Vec::new();
        self.i += 1;
        self.ws();
        while self.b.get(self.i) == Some(&b'"') {
            let key_start = self.i;
            self.string();
            let key_end = self.i;
            let key = serde_json::from_str(&self.text[key_start..key_end]).unwrap_or_default();
            self.ws();
            self.i += 1; // the colon
            self.ws();
            let value = self.value();
            members.push(Member { key, key_start, key_end, value });
            self.ws();
            if self.b.get(self.i) == Some(&b',') {
                self.i += 1;
                self.ws();
            }
        }
        self.i += 1; // the closing brace
        members
    }

    /// Reads the elements of the array starting here, past its `]`.
    fn array(&mut self) -> Vec<Node> {
        let mut elements = Vec::new();
        self.i += 1;
        self.ws();
        while self.i < self.b.len() && self.b[self.i] != b']' {
            elements.push(self.value());
            self.ws();
            if self.b.get(self.i) == Some(&b',') {
                self.i += 1;
                self.ws();
            }
        }
        self.i += 1; // the closing bracket
        elements
    }
}

/// How the document writes itself: its indentation unit and line ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Style {
    /// One level of indentation: the leading white space of the first
    /// indented line (two spaces, four spaces, a tab…); two spaces when no
    /// line is indented.
    pub(crate) unit: String,
    /// `\r\n` when the document has one, else `\n`.
    pub(crate) newline: &'static str,
}

impl Style {
    /// The style of `text`.
    pub(crate) fn of(text: &str) -> Style {
        let unit = text
            .lines()
            .skip(1)
            .map(|l| {
                let first = l.chars().next().filter(|c| *c == ' ' || *c == '\t');
                first.map(|c| l.chars().take_while(|x| *x == c).collect::<String>()).unwrap_or_default()
            })
            .find(|lead| !lead.is_empty())
            .unwrap_or_else(|| "  ".to_owned());
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        Style { unit, newline }
    }

    /// `value` pretty-printed with this style, its lines after the first
    /// indented by `indent`.
    fn render(&self, value: &impl Serialize, indent: &str) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        value.serialize(&mut ser).expect("serializing to memory cannot fail");
        let text = String::from_utf8(out).expect("serde_json writes UTF-8");
        text.replace('\n', &format!("{}{indent}", self.newline))
    }
}

/// A JSON string literal of `s`.
pub(crate) fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("serializing a string cannot fail")
}

/// The leading white space of the line `pos` lies on.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |n| n + 1);
    let rest = &text[line_start..];
    let len = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..len]
}

/// `text` with a new last child added to `container`: `child(indent)`
/// gives the child's text for a multi-line container (its lines after the
/// first indented by `indent`), `None` for a one-line one (compact).
fn append_child(
    text: &str,
    container: &Node,
    style: &Style,
    child: impl Fn(Option<&str>) -> String,
) -> String {
    let spans = container.child_spans();
    let (insert_at, insertion) = match (spans.first(), spans.last()) {
        (Some(&(first_start, _)), Some(&(_, last_end))) => {
            let lead = &text[container.start + 1..first_start];
            if let Some(nl) = lead.rfind('\n') {
                let indent = &lead[nl + 1..];
                let newline = if lead.contains("\r\n") { "\r\n" } else { "\n" };
                (last_end, format!(",{newline}{indent}{}", child(Some(indent))))
            } else {
                let sep = match spans.get(1) {
                    Some(&(second_start, _)) => text[spans[0].1..second_start].to_owned(),
                    None => format!(",{lead}"),
                };
                (last_end, format!("{sep}{}", child(None)))
            }
        }
        _ => {
            let base = line_indent(text, container.start);
            let indent = format!("{base}{}", style.unit);
            let nl = style.newline;
            let inner = format!("{nl}{indent}{}{nl}{base}", child(Some(&indent)));
            return format!("{}{inner}{}", &text[..container.start + 1], &text[container.end - 1..]);
        }
    };
    format!("{}{insertion}{}", &text[..insert_at], &text[insert_at..])
}

/// `text` with the member `key: value` added last to the object `obj`,
/// written in the document's style (the key–value separator copied from
/// the object's first member when it has one).
pub(crate) fn insert_member(
    text: &str,
    obj: &Node,
    key: &str,
    value: &impl Serialize,
    style: &Style,
) -> String {
    let colon = match obj.members().and_then(|m| m.first()) {
        Some(first) => text[first.key_end..first.value.start].to_owned(),
        None => ": ".to_owned(),
    };
    append_child(text, obj, style, |indent| match indent {
        Some(indent) => format!("{}{colon}{}", quoted(key), style.render(value, indent)),
        None => format!("{}{colon}{}", quoted(key), compact(value)),
    })
}

/// `text` with `value` added as the last element of the array `arr`.
pub(crate) fn push_element(text: &str, arr: &Node, value: &impl Serialize, style: &Style) -> String {
    append_child(text, arr, style, |indent| match indent {
        Some(indent) => style.render(value, indent),
        None => compact(value),
    })
}

/// `value` as compact JSON.
fn compact(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("serializing to memory cannot fail")
}

/// `text` without the child `index` of `container` (a member or an
/// element) and the comma and white space that joined it to the others:
/// the exact inverse of [`insert_member`] and [`push_element`] on a
/// container that already had children. The last child leaves `{}` or `[]`.
pub(crate) fn remove_child(text: &str, container: &Node, index: usize) -> String {
    let spans = container.child_spans();
    let (from, to) = match spans.len() {
        1 => (container.start + 1, container.end - 1),
        _ if index > 0 => (spans[index - 1].1, spans[index].1),
        _ => (spans[0].0, spans[1].0),
    };
    format!("{}{}", &text[..from], &text[to..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(text: &str) -> Node {
        parse(text).unwrap()
    }

    #[test]
    fn spans_and_keys() {
        let text = " {\"a\" : [1, {\"b\\\"\": \"x]}\"}], \"c\":null}\n";
        let r = root(text);
        let m = r.members().unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].key, "a");
        assert_eq!(&text[m[0].value.start..m[0].value.end], "[1, {\"b\\\"\": \"x]}\"}]");
        assert_eq!(m[0].value.elements().unwrap()[1].members().unwrap()[0].key, "b\"");
        assert_eq!(m[1].value.value(text), Value::Null);
        assert_eq!(&text[r.start..r.end], text.trim());
    }

    #[test]
    fn nesting_too_deep_is_a_fault_not_a_crash() {
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let f = parse(&deep).unwrap_err();
        assert!(f.message.contains("nested deeper"), "{}", f.message);
        assert_eq!(f.line, 1);
        assert!(parse(&format!("{{\"x\":\"{}\"}}", "[".repeat(1000))).is_ok(), "brackets in a string");
    }

    #[test]
    fn faults_have_line_and_column() {
        let f = parse("{\n  \"a\": 1,\n}").unwrap_err();
        assert_eq!(f.line, 3, "{f:?}");
    }

    #[test]
    fn styles() {
        assert_eq!(Style::of("{\n    \"a\": 1\n}").unit, "    ");
        assert_eq!(Style::of("{\n\t\"a\": 1\n}").unit, "\t");
        assert_eq!(Style::of("{}").unit, "  ");
        assert_eq!(Style::of("{\r\n  \"a\": 1\r\n}").newline, "\r\n");
    }

    #[test]
    fn insert_then_remove_restores_the_bytes() {
        for text in [
            "{}",
            "{}\n",
            "{\n    \"a\": 1\n}",
            "{\"a\":1}",
            "{ \"a\": 1, \"b\": [] }\n",
            "{\r\n\t\"a\": \"é\"\r\n}\r\n",
        ] {
            let r = root(text);
            let style = Style::of(text);
            let added = insert_member(text, &r, "k", &json!({"x": [1, 2]}), &style);
            let again = root(&added);
            assert_eq!(again.value(&added)["k"], json!({"x": [1, 2]}), "{added}");
            let (i, _) = again.member("k").unwrap();
            let removed = remove_child(&added, &again, i);
            if r.len() > 0 {
                assert_eq!(removed, text, "{added}");
            } else {
                assert_eq!(root(&removed).len(), 0);
            }
        }
    }

    #[test]
    fn pushes_follow_the_indentation() {
        let text = "{\n  \"a\": [\n    1\n  ]\n}";
        let r = root(text);
        let arr = &r.member("a").unwrap().1.value;
        let pushed = push_element(text, arr, &json!({"b": 2}), &Style::of(text));
        assert_eq!(pushed, "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ]\n}");
        let empty = "{\n    \"a\": []\n}";
        let r = root(empty);
        let pushed = push_element(empty, &r.member("a").unwrap().1.value, &json!(1), &Style::of(empty));
        assert_eq!(pushed, "{\n    \"a\": [\n        1\n    ]\n}");
    }

    #[test]
    fn removing_the_first_child_keeps_the_rest() {
        let text = "[1, 2, 3]";
        assert_eq!(remove_child(text, &root(text), 0), "[2, 3]");
        assert_eq!(remove_child(text, &root(text), 1), "[1, 3]");
        assert_eq!(remove_child("[ 1 ]", &root("[ 1 ]"), 0), "[]");
    }
}
