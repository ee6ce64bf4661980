//! Checks of identifiers in their encoded (canonical PCT) form, as frames
//! hold them, and the ASCII bytes the matchers return as text.

use std::borrow::Cow;

use crate::pct;

/// Bytes written raw by PCT (`-` aside).
const UNRESERVED: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'~';
        b += 1;
    }
    t
};

/// True when `encoded` needs no decoding: unreserved bytes and single `-`.
#[inline]
pub(super) fn is_plain(encoded: &[u8]) -> bool {
    let mut prev_dash = false;
    for &b in encoded {
        if UNRESERVED[usize::from(b)] {
            prev_dash = false;
        } else if b == b'-' && !prev_dash {
            prev_dash = true;
        } else {
            return false;
        }
    }
    true
}

#[inline]
pub(super) fn ascii(b: &[u8]) -> &str {
    // Callers pass bytes matched by ASCII-only combinators.
    if b.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(b) }
    } else {
        ""
    }
}

/// Checks one encoded identifier part.
pub(super) fn check_encoded(what: &str, encoded: &[u8], path_component: bool) -> Result<(), String> {
    if !is_plain(encoded) {
        let value = pct::decode_canonical(encoded)
            .map_err(|e| format!("{what} {:?}: {}", String::from_utf8_lossy(encoded), e.describe()))?;
        if value.contains('\0') {
            return Err(format!("{what} contains NUL"));
        }
    }
    if encoded.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if encoded.len() > crate::id::MAX_ENCODED_BYTES {
        return Err(format!("{what} is longer than {} bytes encoded", crate::id::MAX_ENCODED_BYTES));
    }
    if path_component && encoded[0] == b'.' {
        return Err(format!("{what} starts with '.'"));
    }
    Ok(())
}

/// An encoded identifier of a valid frame, decoded (borrowed when it is
/// plain).
pub(super) fn decoded(encoded: &str) -> Cow<'_, str> {
    if is_plain(encoded.as_bytes()) {
        Cow::Borrowed(encoded)
    } else {
        Cow::Owned(pct::decode_canonical(encoded.as_bytes()).expect("a valid frame holds canonical values"))
    }
}
