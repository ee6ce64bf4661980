//! Unit tests of the v2 writer and parser: non-canonical values, exhaustive
//! truncation and single-byte corruption.

use super::sample::archive as sample_archive;
use super::*;

fn frame_bytes(id: &str, role: &str, extra: &str, n: &str, record: &str) -> String {
    let (p, rest) = id.split_once('/').unwrap();
    let _ = (p, rest);
    let hash = crate::id::anchor_hash(id.as_bytes());
    format!("\n<a id=\"source-{hash}\"></a>\n<!-- source:{id} -->\n<!-- role:{role} -->\n{extra}<!-- record-lines:{n} -->\n{record}\n")
}

fn file(frames: &[String]) -> Vec<u8> {
    let mut s = format!("{MARKER}\n");
    for f in frames {
        s.push_str(f);
    }
    s.into_bytes()
}

fn good() -> String {
    good_with("m0")
}

fn good_with(m: &str) -> String {
    frame_bytes(
        &format!("chat/t/{m}"),
        "user",
        "<!-- speaker-id:7391 -->\n",
        "1",
        "[2026-08-09T10:11:12Z] Ada (7391): hi",
    )
}

/// The bad frame (second in the file) must stop the parser at its start.
fn check_refused(bad: String, why: &str) {
    let bytes = file(&[good(), bad, good_with("m9")]);
    assert!(parse(&file(&[good(), good_with("m9")]), None).is_ok());
    let parsed = parse_prefix(&bytes, None);
    assert_eq!(parsed.frames.len(), 1, "{why}: {:?}", parsed.error);
    let d = parsed.error.expect(why);
    assert_eq!(d.offset, MARKER.len() + 1 + good().len(), "{why}");
    assert_eq!(d.line, 2 + 7, "{why}");
}

#[test]
fn accepts_the_reference_frame() {
    let bytes = file(&[good()]);
    let frames = parse(&bytes, None).unwrap();
    assert_eq!(frames[0].label, "Ada (7391)");
    assert_eq!(frames[0].speaker_display, Some("Ada"));
    assert_eq!(frames[0].line, 2);
}

#[test]
fn non_canonical_values_stop_the_parser() {
    let rec = "[2026-08-09T10:11:12Z] user: hi";
    let sp = |v: &str| format!("<!-- speaker-id:{v} -->\n");
    let cases = [
        (frame_bytes("chat/t/%c3%a9", "user", "", "1", rec), "lowercase hex"),
        (frame_bytes("chat/t/%41", "user", "", "1", rec), "encoded unreserved byte"),
        (frame_bytes("chat/t/a--b", "user", "", "1", rec), "raw --"),
        (frame_bytes("chat/t/a%2", "user", "", "1", rec), "truncated escape"),
        (frame_bytes("chat/t/a%ZZ", "user", "", "1", rec), "bad escape"),
        (frame_bytes("chat/t/%FF", "user", "", "1", rec), "invalid UTF-8"),
        (
            frame_bytes("chat/t/m1", "user", &sp("%2d"), "1", "[2026-08-09T10:11:12Z] -: hi"),
            "lowercase speaker hex",
        ),
        (
            frame_bytes("chat/t/m1", "user", &sp("a--b"), "1", "[2026-08-09T10:11:12Z] a--b: hi"),
            "raw -- in speaker id",
        ),
        (frame_bytes("chat/t/m1", "user", "", "2", rec), "record-lines too large"),
        (frame_bytes("chat/t/m1", "user", "", "01", rec), "leading zero"),
        (frame_bytes("chat/t/m1", "user", "", "0", rec), "zero lines"),
        (frame_bytes("chat/t/m0", "user", "", "1", rec), "duplicate id"),
        (frame_bytes("other/t/m1", "user", "", "1", rec), "another provider"),
        (frame_bytes("chat/u/m1", "user", "", "1", rec), "another thread"),
        (frame_bytes("chat/t/m1", "tool", "", "1", "[2026-08-09T10:11:12Z] tool: hi"), "unknown role"),
        (
            frame_bytes("chat/t/m1", "user", "", "1", "[2026-08-09T10:11:12Z] assistant: hi"),
            "label is not the role",
        ),
        (
            frame_bytes("chat/t/m1", "user", "", "1", "[2026-08-09T10:11:12+00:00] user: hi"),
            "offset timestamp",
        ),
        (frame_bytes("chat/t/m1", "user", "", "1", "[2026-08-09T10:11:12Z] user:hi"), "no space after colon"),
        (frame_bytes("chat/t/m1", "user", "", "1", "[2026-08-09T10:11:12Z]user: hi"), "no space after ]"),
        (
            frame_bytes("chat/t/m1", "user", &sp("7391"), "1", "[2026-08-09T10:11:12Z] Ada (7392): hi"),
            "label/id mismatch",
        ),
        (
            frame_bytes("chat/t/m1", "user", &sp("7391"), "1", "[2026-08-09T10:11:12Z] Ada  (7391): hi"),
            "display not normalised",
        ),
        (frame_bytes("chat/t/m1", "user", &sp(""), "1", "[2026-08-09T10:11:12Z] : hi"), "empty display"),
        (
            frame_bytes("chat/t/.m1", "user", "", "1", rec).replace("chat/t/.m1", "chat/.t/m1"),
            "a dotted thread under another id's anchor",
        ),
        (frame_bytes("chat/.t/m1", "user", "", "1", rec), "thread starts with a dot"),
        (frame_bytes("chat/t/m1", "user", "<!-- trust:trusted -->\n", "1", rec), "unknown trust line"),
        (
            frame_bytes(
                "chat/t/m1",
                "user",
                &format!("{}<!-- trust:pending -->\n", sp("1")),
                "1",
                "[2026-08-09T10:11:12Z] 1: hi",
            ),
            "comment order",
        ),
        (good_with("m1").replacen("\n", "\r\n", 3), "CRLF in comment lines"),
        (good_with("m1").replace("hi", "\u{1}"), "control char body is fine"),
        (
            frame_bytes("chat/t/m1", "user", &sp(""), "1", "[2026-08-09T10:11:12Z] (7391): hi"),
            "display-only with an id-looking display is fine",
        ),
    ];
    for (bad, why) in cases {
        if why.ends_with("is fine") {
            let bytes = file(&[good(), bad]);
            assert!(parse(&bytes, None).is_ok(), "{why}");
            continue;
        }
        if why == "record-lines too large" {
            // As the last frame it is truncated; mid-file it would take the
            // next separator as a body line (a different, valid frame).
            let bytes = file(&[good(), bad]);
            let p = parse_prefix(&bytes, None);
            assert_eq!(p.frames.len(), 1, "{why}");
            assert_eq!(p.error.unwrap().offset, MARKER.len() + 1 + good().len());
            continue;
        }
        check_refused(bad, why);
    }
    // Invalid UTF-8 in the body.
    let mut bytes = file(&[good()]);
    let k = bytes.len() - 2;
    bytes[k] = 0xFF;
    assert_eq!(parse_prefix(&bytes, None).frames.len(), 0);
    // Uppercase anchor hex.
    let upper = good_with("m1");
    let h = crate::id::anchor_hash(b"chat/t/m1");
    check_refused(upper.replace(&h, &h.to_uppercase()), "uppercase anchor");
    // A file that names another conversation than expected.
    let bytes = file(&[good()]);
    let e = parse(&bytes, Some(Expect { provider: "chat", thread: "u" })).unwrap_err();
    assert_eq!(e.offset, MARKER.len() + 1);
}

#[test]
fn marker_is_required() {
    for bytes in [
        &b""[..],
        b"\n",
        b"<!-- openprogram-source-archive:v2 -->",
        b"<!-- openprogram-source-archive:v1 -->\n",
        b" <!-- openprogram-source-archive:v2 -->\n",
    ] {
        let p = parse_prefix(bytes, None);
        assert_eq!((p.frames.len(), p.valid_len), (0, 0));
        assert_eq!(p.error.unwrap().offset, 0);
    }
    let only = format!("{MARKER}\n");
    let p = parse_prefix(only.as_bytes(), None);
    assert_eq!(p.error, None);
    let crlf = format!("{MARKER}\r\n");
    let p = parse_prefix(crlf.as_bytes(), None);
    assert!(p.error.is_some());
}

#[test]
fn every_truncation_parses_to_the_contained_frames() {
    let bytes = sample_archive();
    let frames = parse(&bytes, None).unwrap();
    assert_eq!(frames.len(), 6);
    for cut in 0..=bytes.len() {
        let p = parse_prefix(&bytes[..cut], None);
        let contained: Vec<_> = frames.iter().filter(|f| f.offset + f.len <= cut).cloned().collect();
        if cut <= MARKER.len() {
            assert_eq!((p.frames.len(), p.valid_len), (0, 0), "cut {cut}");
            assert!(p.error.is_some());
            continue;
        }
        assert_eq!(p.frames, contained, "cut {cut}");
        let end = contained.last().map_or(MARKER.len() + 1, |f| f.offset + f.len);
        assert_eq!(p.valid_len, end, "cut {cut}");
        assert_eq!(p.error.is_none(), end == cut, "cut {cut}");
        if let Some(d) = p.error {
            assert_eq!(d.offset, end);
        }
    }
}

/// Every single-byte change to a frame's comment lines leaves the frames
/// before it unchanged, and either stops the parser at that frame or (for a
/// digit of `record-lines` turned into another digit) yields a frame whose
/// record has exactly the new number of lines.
#[test]
fn every_comment_byte_corruption_stops_at_that_frame() {
    let bytes = sample_archive();
    let frames = parse(&bytes, None).unwrap();
    for (k, f) in frames.iter().enumerate() {
        let record_start = {
            // The record line starts after the `record-lines` line.
            let head = &bytes[f.offset..f.offset + f.len];
            let pos = memchr::memmem::find(head, b"<!-- record-lines:").unwrap();
            pos + memchr::memchr(b'\n', &head[pos..]).unwrap() + 1
        };
        for pos in f.offset..f.offset + record_start {
            for delta in [1u8, 0x20, 0x80, 0xFF] {
                let mut b = bytes.clone();
                b[pos] ^= delta;
                let p = parse_prefix(&b, None);
                assert_eq!(&p.frames[..k.min(p.frames.len())], &frames[..k], "frame {k} byte {pos}");
                assert!(p.frames.len() >= k);
                let in_count = {
                    let line_start = bytes[..pos].iter().rposition(|&c| c == b'\n').map_or(0, |x| x + 1);
                    bytes[line_start..].starts_with(b"<!-- record-lines:")
                        && b[pos].is_ascii_digit()
                        && bytes[pos].is_ascii_digit()
                };
                if in_count && p.frames.len() > k {
                    let got = &p.frames[k];
                    let n: usize = std::str::from_utf8(&b[f.offset..])
                        .ok()
                        .and_then(|s| {
                            let s = &s[s.find("record-lines:")? + 13..];
                            s[..s.find(' ')?].parse().ok()
                        })
                        .unwrap();
                    assert_eq!(got.body.matches('\n').count() + 1, n, "frame {k} byte {pos}");
                    assert_ne!(got, &frames[k]);
                } else {
                    assert_eq!(p.frames.len(), k, "frame {k} byte {pos} delta {delta:#x} accepted");
                    assert_eq!(p.error.as_ref().map(|d| d.offset), Some(f.offset), "frame {k} byte {pos}");
                }
            }
        }
    }
}

#[test]
fn body_is_never_structure() {
    let bytes = sample_archive();
    let frames = parse(&bytes, None).unwrap();
    // The body of m6 holds a record-lines comment and U+2028; m2 a forged label.
    assert_eq!(frames[1].label, "Bo (4402)");
    assert!(frames[1].body.contains("[Ada (7391)]"));
    assert_eq!(frames[5].body, "\n<!-- record-lines:1 -->\n\u{2028}");
    assert!(frames[5].pending);
}

#[test]
fn a_duplicate_stops_the_parser_even_when_its_frame_is_also_bad() {
    // The duplicate of m0 is itself malformed (bad label): the prefix ends there.
    let bad_dup = frame_bytes("chat/t/m0", "user", "", "1", "[2026-08-09T10:11:12Z] assistant: x");
    let bytes = file(&[good(), good_with("m1"), bad_dup, good_with("m2")]);
    let p = parse_prefix(&bytes, None);
    assert_eq!(p.frames.len(), 2);
    // A later duplicate after a good run.
    let bytes = file(&[good(), good_with("m1"), good_with("m2"), good_with("m1"), good_with("m3")]);
    let p = parse_prefix(&bytes, None);
    assert_eq!(p.frames.len(), 3);
    let d = p.error.unwrap();
    assert!(d.reason.contains("duplicate"), "{}", d.reason);
    assert_eq!(d.offset, p.valid_len);
    assert_eq!(d.line, 2 + 3 * 7);
}

#[test]
fn an_anchor_of_another_id_stops_the_parser() {
    let hash_of_m2 = crate::id::anchor_hash(b"chat/t/m2");
    let bad = good_with("m1").replace(&crate::id::anchor_hash(b"chat/t/m1"), &hash_of_m2);
    check_refused(bad, "anchor hash mismatch");
}

/// A record-lines count that is too small leaves a well-formed frame with a
/// shorter body: the grammar cannot tell. The line it left behind is then
/// not a frame separator, so parsing stops right there and nothing after it
/// is read.
#[test]
fn a_record_lines_count_that_is_too_small_stops_at_the_line_left_over() {
    let two_lines = frame_bytes("chat/t/m1", "user", "", "1", "[2026-08-09T10:11:12Z] user: one\ntwo");
    let bytes = file(&[good(), two_lines.clone(), good_with("m2")]);
    let p = parse_prefix(&bytes, None);
    assert_eq!(p.frames.len(), 2);
    assert_eq!(p.frames[1].body, "one");
    let d = p.error.unwrap();
    let two = memchr::memmem::find(&bytes, b"two\n").unwrap();
    assert_eq!(d.offset, two);
}

#[test]
fn a_frame_parses_alone_from_its_bytes_and_nothing_else_does() {
    let bytes = sample_archive();
    let frames = parse(&bytes, None).unwrap();
    let expect = Expect { provider: "chat", thread: "team-1" };
    for f in &frames {
        let own = &bytes[f.offset..f.offset + f.len];
        let alone = parse_frame(own, expect).expect("a frame of the file parses alone");
        assert_eq!(alone.to_record(), f.to_record());
        assert_eq!((alone.offset, alone.len), (0, f.len));
        assert_eq!(parse_frame(&own[..own.len() - 1], expect), None, "a cut frame");
        let mut longer = own.to_vec();
        longer.push(b'\n');
        assert_eq!(parse_frame(&longer, expect), None, "a frame and more");
        assert_eq!(parse_frame(own, Expect { provider: "chat", thread: "team-2" }), None, "another thread");
    }
    let two = &bytes[frames[0].offset..frames[1].offset + frames[1].len];
    assert_eq!(parse_frame(two, expect), None, "two frames");
    assert_eq!(parse_frame(b"", expect), None);
}
