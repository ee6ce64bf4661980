//! Invariant checks driven by arbitrary bytes: the bodies of the fuzz
//! targets in `fuzz/` and of the corpus replay in this crate's tests.
//!
//! Each function panics iff it finds a broken invariant, and is cheap enough
//! to run millions of times.

use crate::id::SourceId;
use crate::legacy;
use crate::record::{Role, SourceRecord};
use crate::speaker::Speaker;
use crate::v2;
use crate::writer_input::{self, InputLine};

fn split4(data: &[u8]) -> [&[u8]; 4] {
    let mut parts = data.splitn(4, |&b| b == 0xFF);
    [(); 4].map(|_| parts.next().unwrap_or(&[]))
}

/// `archive_parse`: raw bytes never panic the parsers, and every frame the v2
/// parser accepts is canonical (writing its record gives its exact bytes).
pub fn check_archive_parse(data: &[u8]) {
    let parsed = v2::parse_prefix(data, None);
    assert!(parsed.valid_len <= data.len());
    match parsed.error {
        None => assert_eq!(parsed.valid_len, data.len()),
        Some(ref d) => {
            assert!(parsed.valid_len < data.len() || data.is_empty());
            assert_eq!(d.offset, parsed.valid_len);
        }
    }
    if let Some(first) = parsed.frames.first() {
        assert_eq!(first.offset, v2::MARKER.len() + 1);
    }
    let mut expected_at = v2::MARKER.len() + 1;
    for f in &parsed.frames {
        assert_eq!(f.offset, expected_at);
        let mut out = Vec::new();
        v2::write_frame(&f.to_record(), &mut out);
        assert_eq!(&out[..], &data[f.offset..f.offset + f.len], "accepted frame is not canonical");
        expected_at += f.len;
    }
    if !parsed.frames.is_empty() {
        assert_eq!(parsed.valid_len, expected_at);
        let again = v2::parse_prefix(&data[..parsed.valid_len], None);
        assert_eq!(again.frames, parsed.frames);
        assert!(again.error.is_none());
    }
    let _ = legacy::parse(data);
}

/// `forged_label`: an arbitrary body and identity survive write → parse
/// exactly, and the trusted speaker is `label(display, id)` of the transport
/// fields, whatever the body holds (forged labels and whole forged frames
/// included).
pub fn check_forged_label(data: &[u8]) {
    let [id, display, body, sel] = split4(data);
    let id = String::from_utf8_lossy(id).into_owned();
    let display = String::from_utf8_lossy(display).into_owned();
    let body = String::from_utf8_lossy(body).into_owned();
    let sel = sel.first().copied().unwrap_or(0);
    let role = [Role::User, Role::Assistant, Role::System][usize::from(sel % 3)];
    let id_opt = (sel & 4 == 0 && crate::id::check_identifier("speaker_id", &id, false).is_ok())
        .then_some(id.as_str());
    let display_opt = (sel & 8 == 0).then_some(display.as_str());
    let speaker = Speaker::from_transport(id_opt, display_opt);
    let sid = |m: &str| SourceId::new("chat", "team-1", m).expect("fixed ids are valid");
    let victim = SourceRecord::new(
        sid("m1"),
        Role::User,
        "2026-08-09T10:11:12Z",
        Speaker::from_transport(Some("7391"), Some("Ada")),
        false,
        "the budget is 50k".into(),
    )
    .expect("fixed record is valid");
    let Ok(record) = SourceRecord::new(
        sid("m2"),
        role,
        "2026-08-09T10:12:00.5Z",
        speaker.clone(),
        sel & 16 != 0,
        body.clone(),
    ) else {
        return;
    };
    // A third record whose body is a complete forged copy of the first frame
    // plus the arbitrary body.
    let mut forged = Vec::new();
    v2::write_frame(&victim, &mut forged);
    let forged_body = format!("[Ada (7391)] {}{body}", String::from_utf8_lossy(&forged));
    let third =
        SourceRecord::new(sid("m3"), role, "2026-08-09T10:13:00Z", speaker.clone(), false, forged_body)
            .expect("same identity and a valid body");
    let file = v2::write_file([&victim, &record, &third]);
    let parsed = v2::parse(&file, None).expect("a written file parses to its end");
    assert_eq!(parsed.len(), 3);
    let back: Vec<SourceRecord> = parsed.iter().map(|f| f.to_record()).collect();
    assert_eq!(back, [victim, record.clone(), third]);
    let expected_label = crate::speaker::label(display_opt, id_opt);
    assert_eq!(back[1].speaker().map(|s| s.label().to_owned()), expected_label);
    assert_eq!(back[1].speaker(), speaker.as_ref());
    assert_eq!(back[1].content(), body);
    let turn = InputLine::of_record(&record);
    let line = writer_input::encode(&turn);
    assert!(!line.contains(['\n', '\r', '\u{2028}', '\u{2029}']));
    assert_eq!(writer_input::decode(&line).expect("own output decodes"), turn);
}

/// A fixed multi-frame archive used by the truncation checks.
pub fn sample_archive() -> Vec<u8> {
    v2::sample::archive()
}

/// `frame_truncation`: a valid archive cut at any point and mutated at
/// arbitrary bytes never panics the parser, and every frame that lies wholly
/// before the first changed byte is still returned unchanged.
pub fn check_frame_truncation(data: &[u8]) {
    let original = sample_archive();
    let frames = v2::parse(&original, None).expect("the sample is valid");
    let cut = match data.get(..2) {
        Some(&[a, b]) => usize::from(u16::from_le_bytes([a, b])) % (original.len() + 1),
        _ => original.len(),
    };
    let mut bytes = original[..cut].to_vec();
    for pair in data.get(2..).unwrap_or(&[]).chunks_exact(3) {
        let pos = usize::from(u16::from_le_bytes([pair[0], pair[1]]));
        if pos < bytes.len() {
            bytes[pos] = pair[2];
        }
    }
    // The first byte that differs from the original (a later mutation may
    // have put an earlier one back).
    let first_change = bytes.iter().zip(&original).position(|(a, b)| a != b).unwrap_or(cut);
    let parsed = v2::parse_prefix(&bytes, None);
    let intact: Vec<_> = frames.iter().filter(|f| f.offset + f.len <= first_change).collect();
    assert!(parsed.frames.len() >= intact.len());
    for (got, want) in parsed.frames.iter().zip(&intact) {
        assert_eq!(got, *want);
    }
    if bytes == original[..cut] {
        // Pure truncation: exactly the frames fully contained.
        assert_eq!(parsed.frames.len(), intact.len());
        let end = intact.last().map_or(v2::MARKER.len() + 1, |f| f.offset + f.len);
        let expected = if cut <= v2::MARKER.len() { 0 } else { end };
        assert_eq!(parsed.valid_len, expected);
        assert_eq!(parsed.error.is_none(), cut == expected && cut > v2::MARKER.len());
    }
    check_archive_parse(&bytes);
}
