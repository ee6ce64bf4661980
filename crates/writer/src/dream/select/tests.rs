//! The caps at their edges, on conversations described by their record
//! sizes.

use super::*;

fn conv(name: &str, sizes: &[u64], reflected: usize) -> Summary {
    Summary {
        conversation: name.to_owned(),
        file: PathBuf::from(name),
        sizes: sizes.to_vec(),
        first_unreflected: reflected,
        newest: None,
    }
}

fn picked(plans: &[(&Summary, Range<usize>)]) -> Vec<(String, Range<usize>)> {
    plans.iter().map(|(s, r)| (s.conversation.clone(), r.clone())).collect()
}

fn caps(max_conversations: usize, max_bytes: u64) -> Caps {
    Caps { max_conversations, max_bytes }
}

fn p(name: &str, r: Range<usize>) -> (String, Range<usize>) {
    (name.to_owned(), r)
}

#[test]
fn most_unreflected_bytes_first_ties_by_id() {
    let all =
        [conv("c/a", &[10, 10], 0), conv("c/b", &[30], 0), conv("c/c", &[5, 15], 0), conv("c/d", &[9, 9], 1)];
    assert_eq!(
        picked(&auto(&all, caps(10, 1000))),
        [p("c/b", 0..1), p("c/a", 0..2), p("c/c", 0..2), p("c/d", 1..2)]
    );
}

#[test]
fn the_byte_cap_exactly_at_one_over_and_under() {
    let all = [conv("c/a", &[40, 30], 0), conv("c/b", &[20, 10], 0)];
    // 70 + 30 = 100: exactly at the cap, everything fits.
    assert_eq!(picked(&auto(&all, caps(10, 100))), [p("c/a", 0..2), p("c/b", 0..2)]);
    // One byte less: c/b's last record does not fit; the pass stops there.
    assert_eq!(picked(&auto(&all, caps(10, 99))), [p("c/a", 0..2), p("c/b", 0..1)]);
    // The first conversation itself crosses the cap: its oldest records that
    // fit, and nothing after it.
    assert_eq!(picked(&auto(&all, caps(10, 69))), [p("c/a", 0..1)]);
    // The next conversation's first record does not fit: not taken at all.
    assert_eq!(picked(&auto(&all, caps(10, 79))), [p("c/a", 0..2)]);
}

#[test]
fn a_record_larger_than_the_cap_goes_alone_first() {
    let all = [conv("c/big", &[500, 1], 0), conv("c/small", &[3], 0)];
    assert_eq!(picked(&auto(&all, caps(10, 100))), [p("c/big", 0..1)]);
    // The next pass (c/big reflected through its first record) goes on.
    let next = [conv("c/big", &[500, 1], 1), conv("c/small", &[3], 0)];
    assert_eq!(picked(&auto(&next, caps(10, 100))), [p("c/small", 0..1), p("c/big", 1..2)]);
}

#[test]
fn the_conversation_cap_exactly_at_one_over_and_zero() {
    let all = [conv("c/a", &[3], 0), conv("c/b", &[2], 0), conv("c/c", &[1], 0)];
    assert_eq!(picked(&auto(&all, caps(3, 100))).len(), 3, "exactly at the cap");
    assert_eq!(picked(&auto(&all, caps(2, 100))), [p("c/a", 0..1), p("c/b", 0..1)], "one over");
    assert!(auto(&all, caps(0, 100)).is_empty(), "a cap of 0 takes nothing");
    assert!(auto(&all, caps(3, 0)).is_empty(), "a cap of 0 bytes takes nothing");
}

#[test]
fn nothing_unreflected_selects_nothing() {
    let all = [conv("c/a", &[3, 4], 2), conv("c/b", &[5], 1)];
    assert!(auto(&all, caps(10, 100)).is_empty());
    assert!(auto(&[], caps(10, 100)).is_empty());
}

#[test]
fn asked_for_each_conversation_gets_its_share() {
    let all = [conv("c/a", &[40, 30, 20], 1), conv("c/b", &[10, 10, 10, 10], 4)];
    let plans = asked(all.iter().collect(), 60);
    // c/a: its unreflected records within 30 bytes; c/b has none
    // unreflected: its newest records within 30 bytes.
    assert_eq!(picked(&plans), [p("c/a", 1..2), p("c/b", 1..4)]);
    // A share smaller than any record still gives one.
    assert_eq!(picked(&asked(all.iter().collect(), 2)), [p("c/a", 1..2), p("c/b", 3..4)]);
}

#[test]
fn the_most_recent_first() {
    let mut a = conv("c/a", &[1], 1);
    let mut b = conv("c/b", &[1], 1);
    let mut c = conv("c/c", &[1], 1);
    a.newest = time::parse("2026-01-02T00:00:00Z");
    b.newest = time::parse("2026-01-03T00:00:00.5Z");
    c.newest = time::parse("2026-01-03T00:00:00.5Z");
    let all = [a, b, c];
    let names: Vec<&str> = recent(&all, 2).iter().map(|s| s.conversation.as_str()).collect();
    assert_eq!(names, ["c/b", "c/c"]);
}

#[test]
fn conversation_ids_are_checked() {
    for bad in ["chat", "chat/", "/t", "chat/t/m", "chat/team 1", ".x/t", "chat/%2d"] {
        assert_eq!(check_id(bad).unwrap_err().code, Code::InvalidArgument, "{bad}");
    }
    for good in ["chat/t", "chat/team%201", "locomo/conv-26"] {
        assert!(check_id(good).is_ok(), "{good}");
    }
}
