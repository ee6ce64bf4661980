//! Just enough Rust lexing for the source rules: comments and literals
//! blanked out, so that braces, paths and attributes are read only where
//! they are code.

/// `text` with every comment (line, block, doc) and every string, raw
/// string, byte string and character literal replaced by spaces, newlines
/// kept: the result has the same lines as `text`, and what is left on them
/// is code. Lifetimes and labels stay.
pub(crate) fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        match skipped(&c, i) {
            Some(end) => {
                for &ch in &c[i..end] {
                    out.push(if ch == '\n' { '\n' } else { ' ' });
                }
                i = end;
            }
            None => {
                out.push(c[i]);
                i += 1;
            }
        }
    }
    out
}

/// Where the comment or literal that starts at `i` ends (exclusive), when
/// one starts there.
fn skipped(c: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| c.get(k).copied();
    let word_start = i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    match c[i] {
        '/' if at(i + 1) == Some('/') => {
            Some(c[i..].iter().position(|&x| x == '\n').map_or(c.len(), |k| i + k))
        }
        '/' if at(i + 1) == Some('*') => Some(block_comment_end(c, i)),
        '"' => Some(string_end(c, i + 1)),
        '\'' => char_end(c, i),
        'r' | 'b' | 'c' if word_start => raw_string_end(c, i),
        _ => None,
    }
}

/// The end of the (nested) block comment opening at `i`.
fn block_comment_end(c: &[char], i: usize) -> usize {
    let mut depth = 0usize;
    let mut k = i;
    while k + 1 < c.len() {
        if c[k] == '/' && c[k + 1] == '*' {
            depth += 1;
            k += 2;
        } else if c[k] == '*' && c[k + 1] == '/' {
            depth -= 1;
            k += 2;
            if depth == 0 {
                return k;
            }
        } else {
            k += 1;
        }
    }
    c.len()
}

/// The end of a quoted string whose body starts at `k`.
fn string_end(c: &[char], mut k: usize) -> usize {
    while k < c.len() {
        match c[k] {
            '\\' => k += 2,
            '"' => return k + 1,
            _ => k += 1,
        }
    }
    c.len()
}

/// The end of the character literal at `i`, or `None` for a lifetime or a
/// label.
fn char_end(c: &[char], i: usize) -> Option<usize> {
    if c.get(i + 1) == Some(&'\\') {
        let close = c.get(i + 3..)?.iter().position(|&x| x == '\'')?;
        return Some(i + 3 + close + 1);
    }
    (c.get(i + 2) == Some(&'\'')).then_some(i + 3)
}

/// The end of the raw string (`r"…"`, `r#"…"#`, `br…`, `cr…`) at `i`, if
/// one starts there.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    let mut k = i;
    if c[k] != 'r' {
        k += 1;
        if c.get(k) != Some(&'r') {
            return None;
        }
    }
    k += 1;
    let hashes = c[k..].iter().take_while(|&&x| x == '#').count();
    k += hashes;
    if c.get(k) != Some(&'"') {
        return None;
    }
    k += 1;
    while k < c.len() {
        if c[k] == '"' && c[k + 1..].iter().take(hashes).filter(|&&x| x == '#').count() == hashes {
            return Some(k + 1 + hashes);
        }
        k += 1;
    }
    Some(c.len())
}

#[cfg(test)]
mod tests {
    //! Braces and paths inside comments and literals are blanked; code,
    //! lifetimes and line breaks stay.
    use super::*;

    #[test]
    fn comments_and_literals_are_blanked() {
        let text = "fn f<'a>(x: &'a str) { // }\n    let s = \"}{\\\"\"; let c = '{'; let e = '\\''; /* { /* } */ } */\n    let r = r#\"a \"}\" b\"#; let b = b'}'; 'outer: loop {}\n}\n";
        let code = code_only(text);
        assert_eq!(code.lines().count(), text.lines().count());
        assert_eq!(code.matches('{').count(), 2, "{code}");
        assert_eq!(code.matches('}').count(), 2, "{code}");
        assert!(code.contains("fn f<'a>(x: &'a str)"), "{code}");
        assert!(code.contains("'outer: loop"), "{code}");
    }

    #[test]
    fn raw_identifiers_and_words_ending_in_r_are_code() {
        let text = "let r#type = 1; let bar = \"x\"; let br = 2;";
        assert_eq!(code_only(text), "let r#type = 1; let bar =    ; let br = 2;");
    }
}
