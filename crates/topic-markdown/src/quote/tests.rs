//! Span finding, normalisation and matching vectors.

use super::*;

fn spans(text: &str) -> Vec<String> {
    let lines: Vec<(usize, &str)> = text.split('\n').enumerate().collect();
    quotations(&lines).into_iter().map(|q| q.text).collect()
}

#[test]
fn each_kind_of_mark_makes_a_span() {
    assert_eq!(spans("a “one two three” b"), ["one two three"]);
    assert_eq!(spans("a \"one two three\" b"), ["one two three"]);
    assert_eq!(spans("a «one two three» b"), ["one two three"]);
    assert_eq!(spans("a 「今日は雨」 b"), ["今日は雨"]);
    // Single quotation marks and other styles are not spans.
    assert!(spans("a ‘one two three’ „four five six“ b").is_empty());
}

#[test]
fn two_words_are_not_checked() {
    assert!(spans("a “one two” b \"x, y\" c").is_empty());
    assert!(spans("“... --- !!!”").is_empty());
}

#[test]
fn unclosed_nested_and_multi_line_spans() {
    // An opening mark never closed runs to the end of the block.
    assert_eq!(spans("Ada said: “always share the key"), ["always share the key"]);
    // A closing mark with nothing open closes what came before it (its
    // opening mark may have been left in another block) …
    assert_eq!(spans("always share the key” she said"), ["always share the key"]);
    // … since the last span of its kind.
    assert_eq!(spans("“a b c” and then d e f” g"), ["a b c", "and then d e f"]);
    assert_eq!(spans("“a b c” x” g"), ["a b c"]);
    // Inside an open span, an opening mark of its kind is text.
    assert_eq!(spans("“a “b c d” e”"), ["a “b c d"]);
    // Kinds are independent: both the outer and the inner span count.
    assert_eq!(
        spans("“he said «stop the deploy now» loudly”"),
        ["stop the deploy now", "he said «stop the deploy now» loudly"]
    );
    // Straight marks pair up in order.
    assert_eq!(spans("\"a b c\" and \"d e f\""), ["a b c", "d e f"]);
    // A span crosses line ends and is reported at its opening mark's line.
    let lines = [(4, "x “one"), (5, "two   three”")];
    assert_eq!(quotations(&lines), [Quotation { line: 4, text: "one two three".into() }]);
}

#[test]
fn normalisation() {
    assert_eq!(normalise("  a \u{200B} b\t\n\u{202E}c  "), "a b c");
    assert_eq!(normalise("a\u{0000}b"), "ab");
    assert_eq!(normalise("e\u{301}"), "é");
    assert_eq!(normalise(""), "");
}

#[test]
fn matching() {
    let texts = ["one two three four", "five six seven"];
    assert!(ungrounded(&["two three four", "five six seven"], &texts).is_empty());
    assert_eq!(ungrounded(&["two three five", "six seven", "two three five"], &texts), [0, 2]);
    assert_eq!(ungrounded(&["a b c"], &[]), [0]);
    // A quotation spanning two records is found in neither.
    assert_eq!(ungrounded(&["four five six"], &texts), [0]);
    // A quotation starts and ends on the record's word boundaries.
    let record = ["it is unsafe to share, the budget is 50k."];
    assert_eq!(ungrounded(&["safe to share", "he budget is", "budget is 5", "is 50k."], &record), [0, 1, 2]);
    assert!(ungrounded(&["unsafe to share,", "the budget is 50k"], &record).is_empty());
}

#[test]
fn many_quotations_against_a_large_record_stay_fast() {
    // Nested-suffix patterns over a repetitive text: each distinct match
    // state is read once, so this is linear rather than patterns × text.
    let text = "x ".repeat(500_000);
    let quotes: Vec<String> = (3..1_000).map(|n| vec!["x"; n].join(" ")).collect();
    let refs: Vec<&str> = quotes.iter().map(String::as_str).collect();
    assert!(ungrounded(&refs, &[text.trim_end()]).is_empty());
    let missing: Vec<String> = (0..2_000).map(|n| format!("x x y{n}")).collect();
    let refs: Vec<&str> = missing.iter().map(String::as_str).collect();
    assert_eq!(ungrounded(&refs, &[text.trim_end()]).len(), 2_000);
}

#[test]
fn invisible_characters_between_words_still_count_as_spaces() {
    for gap in ["\u{200B}", "\u{2060}", "\u{AD}", "\u{34F}", "\u{3164}", "\u{FFA0}"] {
        let text = format!("Ada said: “Always{gap}share{gap}the{gap}key.”");
        let got = spans(&text);
        assert_eq!(got.len(), 1, "{gap:?}: {got:?}");
        // Normalised as the check compares it: never the words a reader sees.
        assert_eq!(ungrounded(&[got[0].as_str()], &["always share the key. Always share the key."]), [0]);
    }
}
