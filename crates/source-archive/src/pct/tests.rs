//! Tests for the canonical percent-encoding.

use super::*;
use proptest::prelude::*;

fn check(raw: &str, encoded: &str) {
    assert_eq!(encode(raw), encoded, "encode({raw:?})");
    assert_eq!(decode_canonical(encoded.as_bytes()).as_deref(), Ok(raw));
}

#[test]
fn vectors() {
    check("msg_2f9b", "msg_2f9b");
    check("team-1", "team-1");
    check("-100--42", "-100-%2D42");
    check("---", "-%2D-");
    check("----", "-%2D-%2D");
    check("a-->b", "a-%2D%3Eb");
    check("a b", "a%20b");
    check("~._", "~._");
    check("é", "%C3%A9");
    check("x/y", "x%2Fy");
    check("%", "%25");
}

#[test]
fn non_canonical() {
    let bad = [
        ("%c3%a9", PctError::LowercaseHex),
        ("%41", PctError::EncodedUnreserved),
        ("%2D", PctError::EncodedUnreserved),
        ("a--b", PctError::RawReserved),
        ("a b", PctError::RawReserved),
        ("%4", PctError::BadEscape),
        ("%", PctError::BadEscape),
        ("%G1", PctError::BadEscape),
        ("%FF", PctError::InvalidUtf8),
        ("%C3", PctError::InvalidUtf8),
    ];
    for (value, why) in bad {
        assert_eq!(decode_canonical(value.as_bytes()), Err(why), "{value:?}");
        assert!(!is_canonical(value));
    }
    // After an escaped dash a raw dash is canonical again.
    assert!(is_canonical("-%2D-"));
    assert_eq!(decode_lenient("%c3%a9"), Some("é".to_owned()));
}

proptest! {
    #[test]
    fn round_trip(s in any::<String>()) {
        let e = encode(&s);
        prop_assert!(!e.contains("--"));
        prop_assert_eq!(decode_canonical(e.as_bytes()), Ok(s));
    }

    #[test]
    fn canonical_iff_fixed_point(bytes in proptest::collection::vec(
        prop_oneof![Just(b'%'), Just(b'-'), Just(b'A'), Just(b'a'), Just(b'2'), Just(b'D'), Just(b'f'), Just(b' '), any::<u8>()], 0..12)) {
        let decoded = decode_lenient(&String::from_utf8_lossy(&bytes));
        let canonical = decode_canonical(&bytes);
        if let Ok(s) = &canonical {
            let e = encode(s);
            prop_assert_eq!(e.as_bytes(), &bytes[..]);
        } else if let (Some(d), Ok(text)) = (decoded, std::str::from_utf8(&bytes)) {
            prop_assert_ne!(encode(&d), text);
        }
    }
}
