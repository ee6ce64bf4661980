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

/// How an identity is shown to a model or a person (FORMAT.md §2.3): the
/// display ([`shown_display`]), then `[id …]` with the verbatim id
/// ([`shown_id`]), or `[no id]` for a display-only identity (`[no id, …]`
/// with the display spelled out by [`shown_id`] when it is not plain
/// printable ASCII, so a Cyrillic `Аda` never looks like a Latin `Ada`);
/// `[id …]` alone for an id without a display.
///
/// A normalised display never holds `[` or `]`, and its look-alikes
/// (fullwidth brackets, `꞉` for `:`, curly quotation marks, any other
/// punctuation outside ASCII) are written as escapes, so no display can
/// imitate the bracketed part or another attribution, and two different
/// identities (normalised display, verbatim id) never get the same
/// attribution. A speakerless record is shown by its bare role
/// ([`crate::SourceRecord::attribution`]), which no identity's attribution
/// equals.
///
/// ```
/// use scriptorium_source_archive::speaker::attribution;
/// assert_eq!(attribution(Some("Ada"), Some("7391")), "Ada [id 7391]");
/// assert_eq!(attribution(Some("Ada (7391)"), None), "Ada (7391) [no id]");
/// assert_eq!(attribution(Some("Ada\u{202E}"), Some("7391\u{200B}")), "Ada [id 7391\\u{200b}]");
/// assert_eq!(attribution(Some("assistant"), None), "assistant [no id]");
/// assert_eq!(attribution(Some("\u{410}da"), None), "\u{410}da [no id, \\u{410}da]");
/// assert_eq!(attribution(Some("Ada \u{FF3B}id 1\u{FF3D}"), Some("5")), "Ada \\u{ff3b}id 1\\u{ff3d} [id 5]");
/// ```
pub fn attribution(display: Option<&str>, id: Option<&str>) -> String {
    let d = display.map(normalise).unwrap_or_default();
    let shown = shown_display(&d);
    match (d.is_empty(), id.filter(|i| !i.is_empty())) {
        (false, Some(i)) => format!("{shown} [id {}]", shown_id(i)),
        (true, Some(i)) => format!("[id {}]", shown_id(i)),
        (false, None) => match shown_id(&d) {
            // Nothing vouches for a display alone: one that is not plain
            // ASCII is spelled out, so look-alike displays differ.
            spelled if spelled == d => format!("{shown} [no id]"),
            spelled => format!("{shown} [no id, {spelled}]"),
        },
        (true, None) => "[no id]".to_owned(),
    }
}

/// A normalised display as an attribution shows it: `\` and every
/// character outside ASCII that is neither a letter, a digit, a combining
/// mark nor an emoji (punctuation, brackets, quotation marks, `꞉`, other
/// symbols) is written `\u{hex}`, so a display cannot imitate the bracketed
/// part of an attribution, a colon or a quotation. Names in any script keep
/// their letters.
///
/// ```
/// use scriptorium_source_archive::speaker::shown_display;
/// assert_eq!(shown_display("José Ünal 李 🌸"), "José Ünal 李 🌸");
/// assert_eq!(shown_display("Ada 〚id 1〛 said꞉ “hi”"), "Ada \\u{301a}id 1\\u{301b} said\\u{a789} \\u{201c}hi\\u{201d}");
/// assert_eq!(shown_display("a\\u{22}"), "a\\u{5c}u{22}");
/// assert_eq!(shown_display("Ada\u{2D0} hi"), "Ada\\u{2d0} hi");
/// ```
pub fn shown_display(display: &str) -> String {
    let kept = |c: char| {
        if c.is_ascii() {
            return c != '\\';
        }
        let mut buf = [0; 4];
        // A letter that looks like punctuation (`ː` for `:`) is not kept either.
        let punctuation_like =
            unicode_security::skeleton(c.encode_utf8(&mut buf)).any(|s| s.is_ascii_punctuation());
        !punctuation_like
            && (c.is_alphanumeric()
                || unicode_normalization::char::is_combining_mark(c)
                || matches!(c as u32, 0x1F300..=0x1FAFF | 0xFE00..=0xFE0F))
    };
    let mut out = String::with_capacity(display.len());
    for c in display.chars() {
        if kept(c) {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    out
}

/// A verbatim id in printable ASCII: every character other than `!`…`~`
/// and a single space between two other characters, and every `[`, `]`
/// and `\`, is written `\u{hex}`, so ids that differ never look alike
/// (no invisible, look-alike or bracket-closing character survives) and
/// the escaped form decodes back to the id.
///
/// ```
/// use scriptorium_source_archive::speaker::shown_id;
/// assert_eq!(shown_id("U12 AB"), "U12 AB");
/// assert_eq!(shown_id("7391\u{200B}"), "7391\\u{200b}");
/// assert_eq!(shown_id("a]b\\ "), "a\\u{5d}b\\u{5c}\\u{20}");
/// assert_eq!(shown_id("7З91"), "7\\u{417}91");
/// ```
pub fn shown_id(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    let mut out = String::with_capacity(id.len());
    for (k, &c) in chars.iter().enumerate() {
        let lone_space =
            c == ' ' && k > 0 && k + 1 < chars.len() && chars[k - 1] != ' ' && chars[k + 1] != ' ';
        if lone_space || (c.is_ascii_graphic() && !matches!(c, '[' | ']' | '\\')) {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    out
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

    /// How the identity is shown: [`attribution`] of its display and
    /// verbatim id.
    pub fn attribution(&self) -> String {
        attribution(self.display(), self.id())
    }
}

#[cfg(test)]
mod tests;
