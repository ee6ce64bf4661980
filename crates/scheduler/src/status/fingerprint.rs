//! The fingerprint of a failure: its code and its reason with everything
//! that changes from one occurrence to the next taken out, hashed, so the
//! same failure repeating (at another time, under another process, for
//! another session) has the same fingerprint and a new failure a new one.
//!
//! The reason is normalised in one pass ([`normalise`]):
//!
//! * a quoted run (`"…"`, with `\` escaping, or `` `…` ``) becomes `"*"`
//!   or `` `*` `` (session ids, node ids and names are quoted);
//! * a word (between white space) holding `/` or `\` becomes `<path>`
//!   (files, URLs);
//! * in every other word, each run of letters, digits and `_ - . : +`
//!   holding a digit becomes `#` (numbers, pids, times, revisions, ids);
//! * white space collapses to one space.
//!
//! The fingerprint is `<CODE>:<12 hex digits>`, the first 48 bits of the
//! SHA-256 of the code, a line feed and the normalised reason.
//!
//! ```
//! use scriptorium_scheduler::status::{fingerprint, normalise};
//! let a = "another process holds .scriptorium/write.lock (waited 1000 ms); pid 4242";
//! let b = "another process holds .scriptorium/write.lock (waited 60000 ms); pid 17";
//! assert_eq!(normalise(a), "another process holds <path> (waited # ms); pid #");
//! assert_eq!(fingerprint("LOCKED", a), fingerprint("LOCKED", b));
//! assert_ne!(fingerprint("LOCKED", a), fingerprint("IO", a));
//! assert!(fingerprint("LOCKED", a).starts_with("LOCKED:"));
//! ```

use sha2::{Digest, Sha256};

/// `<CODE>:<12 hex>` of `code` and [`normalise`]d `reason`.
pub fn fingerprint(code: &str, reason: &str) -> String {
    let mut h = Sha256::new();
    h.update(code.as_bytes());
    h.update(b"\n");
    h.update(normalise(reason).as_bytes());
    let hex: String = h.finalize()[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("{code}:{hex}")
}

/// `reason` without what changes between occurrences of one failure (the
/// module page lists the rules). Linear in the length of `reason`.
pub fn normalise(reason: &str) -> String {
    let mut out = String::with_capacity(reason.len().min(4096));
    let mut word = String::new();
    let mut chars = reason.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' | '`' => {
                flush(&mut out, &mut word);
                skip_quoted(&mut chars, c);
                space(&mut out);
                out.extend([c, '*', c]);
            }
            _ if c.is_whitespace() => flush(&mut out, &mut word),
            _ => word.push(c),
        }
    }
    flush(&mut out, &mut word);
    out
}

/// Consumes up to the closing `quote` (a `"` run honours `\` escapes); an
/// unclosed quote runs to the end.
fn skip_quoted(chars: &mut std::str::Chars<'_>, quote: char) {
    while let Some(c) = chars.next() {
        if c == quote {
            return;
        }
        if c == '\\' && quote == '"' {
            chars.next();
        }
    }
}

/// A space before the next piece, unless the output is empty or already
/// ends in one.
fn space(out: &mut String) {
    if !out.is_empty() && !out.ends_with(' ') {
        out.push(' ');
    }
}

/// Appends the normalised `word` (emptied).
fn flush(out: &mut String, word: &mut String) {
    if word.is_empty() {
        return;
    }
    space(out);
    if word.contains(['/', '\\']) {
        out.push_str("<path>");
        word.clear();
        return;
    }
    let joins = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '+');
    let mut run = String::new();
    for c in word.chars() {
        if joins(c) {
            run.push(c);
            continue;
        }
        push_run(out, &mut run);
        out.push(c);
    }
    push_run(out, &mut run);
    word.clear();
}

/// Appends `run` (emptied), as `#` when it holds a digit.
fn push_run(out: &mut String, run: &mut String) {
    if run.chars().any(|c| c.is_ascii_digit()) {
        out.push('#');
    } else {
        out.push_str(run);
    }
    run.clear();
}
