//! The HTML page: the embedded data document, escaped for its
//! `<script type="application/json">` element, between the page's inline
//! style (`palace.css`) and script (`palace.js`), both pinned by their
//! SHA-256 in a Content-Security-Policy of `default-src 'none'`.

use sha2::{Digest, Sha256};

use super::DATA_ELEMENT_ID;

/// The page's script, pinned by its hash in the page's policy.
pub(super) const SCRIPT: &str = include_str!("palace.js");
/// The page's style sheet, pinned by its hash in the page's policy.
pub(super) const STYLE: &str = include_str!("palace.css");

/// Escapes compact JSON for a `<script type="application/json">` element:
/// `<`, `>`, `&`, U+2028 and U+2029 become `\u003c`, `\u003e`, `\u0026`,
/// `\u2028`, `\u2029`. These characters occur in JSON only inside strings,
/// where the escape decodes to the same character, so the document means
/// exactly what it meant; and no sequence of memory bytes can end the
/// element (`</script`) or open a comment (`<!--`).
pub fn escape_json(json: &str) -> String {
    let bytes = json.as_bytes();
    let mut out = String::with_capacity(json.len() + json.len() / 32);
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let escape = match bytes[i] {
            b'<' => Some(("\\u003c", 1)),
            b'>' => Some(("\\u003e", 1)),
            b'&' => Some(("\\u0026", 1)),
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA8) => {
                Some(("\\u2028", 3))
            }
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA9) => {
                Some(("\\u2029", 3))
            }
            _ => None,
        };
        match escape {
            Some((with, len)) => {
                out.push_str(&json[copied..i]);
                out.push_str(with);
                i += len;
                copied = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&json[copied..]);
    out
}

/// Standard base64 with padding (RFC 4648 §4).
pub(super) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(chunk.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(chunk.get(2).copied().unwrap_or(0));
        let sextets = [n >> 18, n >> 12, n >> 6, n];
        for (k, s) in sextets.iter().enumerate() {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[(*s & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `'sha256-…'`: a CSP source expression for an inline element's text.
pub(super) fn hash_source(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// The page's Content-Security-Policy: nothing is allowed (`default-src
/// 'none'`) except the page's own script and style, each by the SHA-256
/// of its text; no `<base>` and no form submission either.
pub fn content_security_policy() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; base-uri 'none'; form-action 'none'",
        hash_source(SCRIPT),
        hash_source(STYLE)
    )
}

/// The HTML page around `data_json` (what [`export`](super::export)
/// returns): the policy, the style, the escaped data and the script.
/// Deterministic: the same data gives the same bytes.
pub fn page(data_json: &str) -> String {
    let data = escape_json(data_json);
    let mut html = String::with_capacity(data.len() + SCRIPT.len() + STYLE.len() + 1024);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    html.push_str(&content_security_policy());
    html.push_str("\">\n<meta name=\"referrer\" content=\"no-referrer\">\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str("<title>Scriptorium palace</title>\n<style>");
    html.push_str(STYLE);
    html.push_str("</style>\n</head>\n<body>\n<noscript>The palace draws its views with its own script; allow scripts for this file to see them.</noscript>\n");
    html.push_str("<script type=\"application/json\" id=\"");
    html.push_str(DATA_ELEMENT_ID);
    html.push_str("\">");
    html.push_str(&data);
    html.push_str("</script>\n<script>");
    html.push_str(SCRIPT);
    html.push_str("</script>\n</body>\n</html>\n");
    html
}
