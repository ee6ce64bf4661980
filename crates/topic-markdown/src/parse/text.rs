//! A block's text as other modules read it: without footnote references
//! and block id ([`plain_text`]), and as search indexes it
//! ([`search_text`]).

use super::grammar::footnote_ref;

/// A block's text without footnote references and without its ` ^id`.
pub fn plain_text(block_text: &str, id: Option<&str>) -> String {
    let mut s = block_text;
    if let Some(id) = id {
        if let Some(stripped) = s.strip_suffix(id).and_then(|t| t.strip_suffix(" ^")) {
            s = stripped;
        }
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(k) = rest.find("[^") {
        out.push_str(&rest[..k]);
        match footnote_ref(&rest[k..]) {
            Ok((r, _)) => rest = r,
            Err(_) => {
                out.push_str("[^");
                rest = &rest[k + 2..];
            }
        }
    }
    out.push_str(rest);
    out.trim_end().to_owned()
}

/// A block's text as search indexes it: [`plain_text`] with link markup
/// removed and link text kept (`[text](target)` → `text`, `[[target]]` →
/// `target`, `[[target|alias]]` → `alias`). Linear in the text's length.
pub fn search_text(block_text: &str, id: Option<&str>) -> String {
    let s = plain_text(block_text, id);
    let b = s.as_bytes();
    let n = b.len();
    // next[c][i]: the first position ≥ i holding byte c (n when none).
    let next_of = |c: u8| {
        let mut v = vec![n as u32; n + 1];
        for i in (0..n).rev() {
            v[i] = if b[i] == c { i as u32 } else { v[i + 1] };
        }
        v
    };
    let (close, paren, open) = (next_of(b']'), next_of(b')'), next_of(b'['));
    let at = |v: &Vec<u32>, i: usize| v.get(i).map_or(n, |&x| x as usize);
    let mut out = String::with_capacity(n);
    let (mut i, mut copied) = (0, 0);
    while i < n {
        if b[i] == b'[' {
            if b.get(i + 1) == Some(&b'[') {
                let e = at(&close, i + 2);
                if e > i + 2 && b.get(e + 1) == Some(&b']') && at(&open, i + 2) > e {
                    let inner = &s[i + 2..e];
                    out.push_str(&s[copied..i]);
                    out.push_str(inner.split_once('|').map_or(inner, |x| x.1));
                    i = e + 2;
                    copied = i;
                    continue;
                }
            } else {
                let e = at(&close, i + 1);
                if e < n && b.get(e + 1) == Some(&b'(') && at(&open, i + 1) > e {
                    let p = at(&paren, e + 2);
                    if p < n {
                        out.push_str(&s[copied..i]);
                        out.push_str(&s[i + 1..e]);
                        i = p + 1;
                        copied = i;
                        continue;
                    }
                }
            }
        }
        i += 1;
    }
    out.push_str(&s[copied..]);
    out
}
