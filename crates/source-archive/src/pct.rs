//! The canonical percent-encoding (`PCT`) of identifiers (FORMAT.md §2.1).
//!
//! Bytes `A-Z a-z 0-9 . _ ~` are written raw, `-` is written raw unless the
//! previous written character is a raw `-` (then it is `%2D`, so `--` and
//! therefore `-->` never appear), and every other byte is `%XX` with uppercase
//! hex. A value is canonical iff `encode(decode(v)) == v`.

const HEX: &[u8; 16] = b"0123456789ABCDEF";

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~')
}

/// Encodes `value` in the canonical form.
///
/// ```
/// use scriptorium_source_archive::pct;
/// assert_eq!(pct::encode("-100--42"), "-100-%2D42");
/// assert_eq!(pct::encode("a b/é"), "a%20b%2F%C3%A9");
/// ```
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    encode_into(value, &mut out);
    out
}

/// Appends the canonical encoding of `value` to `out`.
pub fn encode_into(value: &str, out: &mut String) {
    let mut prev_raw_dash = false;
    for &b in value.as_bytes() {
        if is_unreserved(b) {
            out.push(b as char);
            prev_raw_dash = false;
        } else if b == b'-' && !prev_raw_dash {
            out.push('-');
            prev_raw_dash = true;
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xF)] as char);
            prev_raw_dash = false;
        }
    }
}

/// The length of `encode(value)`, computed without allocating.
pub fn encoded_len(value: &str) -> usize {
    let mut len = 0;
    let mut prev_raw_dash = false;
    for &b in value.as_bytes() {
        if is_unreserved(b) {
            len += 1;
            prev_raw_dash = false;
        } else if b == b'-' && !prev_raw_dash {
            len += 1;
            prev_raw_dash = true;
        } else {
            len += 3;
            prev_raw_dash = false;
        }
    }
    len
}

/// Why an encoded value is not canonical.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PctError {
    /// A `%` not followed by two hex digits.
    BadEscape,
    /// Escapes in lowercase hex.
    LowercaseHex,
    /// An escape of a byte that must be written raw.
    EncodedUnreserved,
    /// A raw byte that must be escaped (including a second raw `-`).
    RawReserved,
    /// The decoded bytes are not UTF-8.
    InvalidUtf8,
}

impl PctError {
    /// A short human description.
    pub fn describe(self) -> &'static str {
        match self {
            PctError::BadEscape => "malformed or truncated percent escape",
            PctError::LowercaseHex => "percent escape in lowercase hex",
            PctError::EncodedUnreserved => "percent escape of a byte that is written raw",
            PctError::RawReserved => "raw byte that must be percent-encoded (or a raw `--`)",
            PctError::InvalidUtf8 => "decodes to invalid UTF-8",
        }
    }
}

fn hex_val(b: u8) -> Option<(u8, bool)> {
    match b {
        b'0'..=b'9' => Some((b - b'0', false)),
        b'A'..=b'F' => Some((b - b'A' + 10, false)),
        b'a'..=b'f' => Some((b - b'a' + 10, true)),
        _ => None,
    }
}

/// Decodes `encoded`, which must be canonical; otherwise says why not.
///
/// This checks canonicity in one pass: the result is `Ok` iff
/// `encode(decode(v)) == v`.
pub fn decode_canonical(encoded: &[u8]) -> Result<String, PctError> {
    let mut out = Vec::with_capacity(encoded.len());
    let mut prev_raw_dash = false;
    let mut i = 0;
    while i < encoded.len() {
        let b = encoded[i];
        if b == b'%' {
            let (hi, lo) = match (encoded.get(i + 1), encoded.get(i + 2)) {
                (Some(&h), Some(&l)) => (hex_val(h), hex_val(l)),
                _ => return Err(PctError::BadEscape),
            };
            let ((hi, hl), (lo, ll)) = match (hi, lo) {
                (Some(h), Some(l)) => (h, l),
                _ => return Err(PctError::BadEscape),
            };
            if hl || ll {
                return Err(PctError::LowercaseHex);
            }
            let byte = (hi << 4) | lo;
            if is_unreserved(byte) || (byte == b'-' && !prev_raw_dash) {
                return Err(PctError::EncodedUnreserved);
            }
            out.push(byte);
            prev_raw_dash = false;
            i += 3;
        } else if is_unreserved(b) {
            out.push(b);
            prev_raw_dash = false;
            i += 1;
        } else if b == b'-' && !prev_raw_dash {
            out.push(b);
            prev_raw_dash = true;
            i += 1;
        } else {
            return Err(PctError::RawReserved);
        }
    }
    String::from_utf8(out).map_err(|_| PctError::InvalidUtf8)
}

/// Ordinary percent-decoding followed by a UTF-8 check, accepting
/// non-canonical input (used for names found on disk and in legacy files).
pub fn decode_lenient(encoded: &str) -> Option<String> {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            match (bytes.get(i + 1).and_then(|&b| hex_val(b)), bytes.get(i + 2).and_then(|&b| hex_val(b))) {
                (Some((h, _)), Some((l, _))) => {
                    out.push((h << 4) | l);
                    i += 3;
                }
                _ => return None,
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// True iff `encoded` is the canonical encoding of some UTF-8 string.
pub fn is_canonical(encoded: &str) -> bool {
    decode_canonical(encoded.as_bytes()).is_ok()
}

#[cfg(test)]
mod tests;
