//! Speaker normalisation and labels (FORMAT.md §2.3).
//!
//! A trusted identity comes from the chat platform's transport fields
//! (`speaker_id`, `speaker_display`), never from message text. Only the header
//! label is built from normalised values; the id is stored verbatim and the
//! body is never touched.

/// The most characters (Unicode scalar values) a normalised part keeps.
pub const MAX_PART_CHARS: usize = 64;

/// Unicode general category `Cf` (format characters), Unicode 16.0.
const FORMAT_RANGES: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

/// True iff `c` has Unicode general category `Cf`.
pub fn is_format_char(c: char) -> bool {
    let c = c as u32;
    FORMAT_RANGES
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Normalises a display name or id for use in a header label.
///
/// 1. removes every `Cc`/`Cf` character that is not White_Space;
/// 2. collapses White_Space runs to one space and trims;
/// 3. maps `[` → `(`, `]` → `)`, `:` → `꞉` (U+A789);
/// 4. cuts to 64 characters and trims spaces the cut left.
///
/// ```
/// use scriptorium_source_archive::speaker::normalise;
/// assert_eq!(normalise("  Mal [admin]:\u{202E} x "), "Mal (admin)꞉ x");
/// ```
pub fn normalise(value: &str) -> String {
    let mut out = String::with_capacity(value.len().min(4 * MAX_PART_CHARS));
    let mut chars = 0usize;
    let mut pending_space = false;
    for c in value.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if c.is_control() || is_format_char(c) {
            continue;
        }
        if pending_space {
            if chars == MAX_PART_CHARS {
                break;
            }
            out.push(' ');
            chars += 1;
            pending_space = false;
        }
        if chars == MAX_PART_CHARS {
            break;
        }
        out.push(match c {
            '[' => '(',
            ']' => ')',
            ':' => '\u{A789}',
            c => c,
        });
        chars += 1;
    }
    let trimmed = out.trim_end_matches(' ').len();
    out.truncate(trimmed);
    out
}

/// True iff `value == normalise(value)`, checked without allocating for the
/// common case.
pub fn is_normalised(value: &str) -> bool {
    if value.len() <= MAX_PART_CHARS && value.is_ascii() {
        let b = value.as_bytes();
        let ends_ok = b.first() != Some(&b' ') && b.last() != Some(&b' ');
        return ends_ok
            && !b.windows(2).any(|w| w == b"  ")
            && b.iter().all(|&c| (c == b' ' || c.is_ascii_graphic()) && !matches!(c, b'[' | b']' | b':'));
    }
    let mut chars = 0usize;
    let mut prev_space = true; // a leading space is not normalised
    for c in value.chars() {
        chars += 1;
        if chars > MAX_PART_CHARS {
            return false;
        }
        if c == ' ' {
            if prev_space {
                return false;
            }
            prev_space = true;
            continue;
        }
        prev_space = false;
        if c.is_whitespace() || c.is_control() || is_format_char(c) || matches!(c, '[' | ']' | ':') {
            return false;
        }
    }
    !prev_space || value.is_empty()
}

/// `label(display, id)`: `"{d} ({i})"`, `"{d}"` or `"{i}"` over the
/// normalised parts; `None` when both are empty (no identity).
///
/// ```
/// use scriptorium_source_archive::speaker::label;
/// assert_eq!(label(Some("Ada"), Some("7391")).as_deref(), Some("Ada (7391)"));
/// assert_eq!(label(Some("user"), None).as_deref(), Some("user"));
/// assert_eq!(label(Some("\u{200B}"), None), None);
/// ```
pub fn label(display: Option<&str>, id: Option<&str>) -> Option<String> {
    let d = display.map(normalise).unwrap_or_default();
    let i = id.map(normalise).unwrap_or_default();
    join_label(&d, &i)
}

fn join_label(d: &str, i: &str) -> Option<String> {
    match (d.is_empty(), i.is_empty()) {
        (true, true) => None,
        (false, true) => Some(d.to_owned()),
        (true, false) => Some(i.to_owned()),
        (false, false) => Some(format!("{d} ({i})")),
    }
}

/// A trusted identity: the verbatim transport id, the normalised display,
/// and the header label built from both.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Speaker {
    id: Option<String>,
    display: Option<String>,
    label: String,
}

impl Speaker {
    /// Builds the identity carried by a message's transport fields.
    ///
    /// Returns `None` when both parts normalise to nothing: such a record is
    /// speakerless. An empty id counts as absent. The id is kept verbatim (even when it adds nothing to the
    /// label); the display is kept normalised, as a v2 file stores it.
    pub fn from_transport(id: Option<&str>, display: Option<&str>) -> Option<Speaker> {
        let id = id.filter(|i| !i.is_empty());
        let d = display.map(normalise).unwrap_or_default();
        let i = id.map(normalise).unwrap_or_default();
        let label = join_label(&d, &i)?;
        Some(Speaker { id: id.map(str::to_owned), display: (!d.is_empty()).then_some(d), label })
    }

    /// Recovers an identity from a v2 header label and the decoded
    /// `speaker-id` value (empty for a display-only identity).
    ///
    /// Returns `None` when the pair is not one a writer could have produced.
    pub fn from_stored(label: &str, id: &str) -> Option<Speaker> {
        let i = normalise(id);
        let display = if i.is_empty() {
            Some(label)
        } else if label == i {
            None
        } else {
            let rest = label.strip_suffix(')')?.strip_suffix(i.as_str())?;
            Some(rest.strip_suffix(" (")?)
        };
        if let Some(d) = display {
            if d.is_empty() || !is_normalised(d) {
                return None;
            }
        }
        let speaker = Speaker {
            id: (!id.is_empty()).then(|| id.to_owned()),
            display: display.map(str::to_owned),
            label: label.to_owned(),
        };
        (join_label(speaker.display.as_deref().unwrap_or(""), &i).as_deref() == Some(label))
            .then_some(speaker)
    }

    /// The stable transport id, verbatim.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The normalised display name.
    pub fn display(&self) -> Option<&str> {
        self.display.as_deref()
    }

    /// The header label, `label(display, id)`.
    pub fn label(&self) -> &str {
        &self.label
    }
}

#[cfg(test)]
mod tests;
