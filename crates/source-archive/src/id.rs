//! Source ids, anchors and archive paths (FORMAT.md §2.1–2.2).

use std::fmt;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::pct;

/// The most bytes an identifier may take once encoded.
pub const MAX_ENCODED_BYTES: usize = 200;

/// Checks the rules every identifier obeys: non-empty, no NUL, at most 200
/// bytes encoded; a path component (provider, thread) must not start with `.`.
pub fn check_identifier(what: &str, value: &str, path_component: bool) -> Result<()> {
    if value.is_empty() {
        return Err(Error::invalid(format!("{what} is empty")));
    }
    if value.contains('\0') {
        return Err(Error::invalid(format!("{what} contains a NUL character")));
    }
    let encoded_len = pct::encoded_len(value);
    if encoded_len > MAX_ENCODED_BYTES {
        return Err(Error::invalid(format!(
            "{what} is {encoded_len} bytes encoded; at most {MAX_ENCODED_BYTES} are allowed"
        )));
    }
    if path_component && value.starts_with('.') {
        return Err(Error::invalid(format!("{what} {value:?} starts with '.'; it is also a path component")));
    }
    Ok(())
}

/// The identity of one archived message: `provider/thread/message`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceId {
    provider: String,
    thread: String,
    message: String,
}

impl SourceId {
    /// Builds a source id, checking each part ([`check_identifier`]).
    pub fn new(provider: &str, thread: &str, message: &str) -> Result<SourceId> {
        check_identifier("provider", provider, true)?;
        check_identifier("thread", thread, true)?;
        check_identifier("message", message, false)?;
        Ok(SourceId { provider: provider.to_owned(), thread: thread.to_owned(), message: message.to_owned() })
    }

    /// Parses the text form (three canonical encoded parts joined by `/`).
    pub fn parse(text: &str) -> Result<SourceId> {
        let mut parts = text.split('/');
        let (Some(p), Some(t), Some(m), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Error::invalid(format!("source id {text:?} is not provider/thread/message")));
        };
        let decode = |what: &str, v: &str| {
            pct::decode_canonical(v.as_bytes())
                .map_err(|e| Error::invalid(format!("{what} {v:?} in source id: {}", e.describe())))
        };
        SourceId::new(&decode("provider", p)?, &decode("thread", t)?, &decode("message", m)?)
    }

    /// The provider (decoded).
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The thread (decoded).
    pub fn thread(&self) -> &str {
        &self.thread
    }

    /// The message id (decoded).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The text form: the three encoded parts joined by `/`.
    pub fn text(&self) -> String {
        let mut s = String::with_capacity(self.provider.len() + self.thread.len() + self.message.len() + 2);
        pct::encode_into(&self.provider, &mut s);
        s.push('/');
        pct::encode_into(&self.thread, &mut s);
        s.push('/');
        pct::encode_into(&self.message, &mut s);
        s
    }

    /// The anchor name, `source-` followed by [`anchor_hash`] of the text form.
    pub fn anchor(&self) -> String {
        format!("source-{}", anchor_hash(self.text().as_bytes()))
    }

    /// The workspace-relative path of the v2 file that holds this id.
    pub fn v2_path(&self) -> String {
        v2_path(&self.provider, &self.thread)
    }
}

impl fmt::Display for SourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// The first 8 lowercase hex digits of SHA-256 over `text_form`.
///
/// ```
/// use scriptorium_source_archive::id::anchor_hash;
/// assert_eq!(anchor_hash(b"chat/team-1/m1"), "99a7df07");
/// ```
pub fn anchor_hash(text_form: &[u8]) -> String {
    let bytes = anchor_hash_bytes(text_form);
    let mut s = String::with_capacity(8);
    for b in bytes {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 0xF)]));
    }
    s
}

/// The first four bytes of SHA-256 over `text_form`.
pub fn anchor_hash_bytes(text_form: &[u8]) -> [u8; 4] {
    let digest = Sha256::digest(text_form);
    [digest[0], digest[1], digest[2], digest[3]]
}

/// `sources/<PCT(provider)>/_v2/<PCT(thread)>.md`.
pub fn v2_path(provider: &str, thread: &str) -> String {
    format!("sources/{}/_v2/{}.md", pct::encode(provider), pct::encode(thread))
}

/// The decoded provider and thread of the workspace-relative v2 file
/// `sources/<provider>/_v2/<thread>.md` (the inverse of [`v2_path`]), or
/// `None` when `path` is not one in the canonical encoding.
pub fn conversation_of(path: &str) -> Option<(String, String)> {
    let rest = path.strip_prefix("sources/")?;
    let (provider, file) = rest.split_once('/')?;
    let thread = file.strip_prefix("_v2/")?.strip_suffix(".md")?;
    let provider = crate::pct::decode_canonical(provider.as_bytes()).ok()?;
    let thread = crate::pct::decode_canonical(thread.as_bytes()).ok()?;
    Some((provider, thread))
}

/// The key two names collide under: `NFC(casefold(NFC(name)))`.
pub fn fold_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let nfc: String = name.nfc().collect();
    caseless::default_case_fold_str(&nfc).nfc().collect()
}

#[cfg(test)]
mod tests {
    //! Id, anchor and path vectors.
    use super::*;

    #[test]
    fn anchors_of_the_test_vector() {
        for (m, hash) in [("m1", "99a7df07"), ("m2", "af37cd7e"), ("m3", "7ecc327f"), ("m6", "82a463b6")] {
            let id = SourceId::new("chat", "team-1", m).unwrap();
            assert_eq!(id.anchor(), format!("source-{hash}"));
            assert_eq!(id.v2_path(), "sources/chat/_v2/team-1.md");
            assert_eq!(SourceId::parse(&id.text()).unwrap(), id);
        }
    }

    #[test]
    fn identifier_rules() {
        assert!(SourceId::new("", "t", "m").is_err());
        assert!(SourceId::new("p", "t", "").is_err());
        assert!(SourceId::new(".p", "t", "m").is_err());
        assert!(SourceId::new("p", ".t", "m").is_err());
        assert!(SourceId::new("p", "t", ".m").is_ok());
        assert!(SourceId::new("p", "t\0", "m").is_err());
        assert!(SourceId::new("p", "t", &"a".repeat(200)).is_ok());
        assert!(SourceId::new("p", "t", &"a".repeat(201)).is_err());
        assert!(SourceId::new("p", "t", &"é".repeat(33)).is_ok()); // 198 bytes encoded
        assert!(SourceId::new("p", "t", &"é".repeat(34)).is_err()); // 204
        assert!(SourceId::parse("a/b").is_err());
        assert!(SourceId::parse("a/b/c/d").is_err());
        assert!(SourceId::parse("a/b/%c3%a9").is_err());
    }

    #[test]
    fn fold_keys() {
        assert_eq!(fold_key("Chat"), fold_key("chat"));
        assert_eq!(fold_key("STRASSE"), fold_key("straße"));
        assert_eq!(fold_key("e\u{301}"), fold_key("É"));
        assert_ne!(fold_key("chat"), fold_key("chats"));
    }
}
