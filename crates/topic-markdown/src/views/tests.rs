//! View vectors: the core budget edge, pending blocks in no view, exact
//! bytes of each view, determinism.

use super::*;
use crate::validate::check;
use crate::validate::tests::resolver;

const EV1: &str = "[^e-1175dea39c]: Time: `2024-03-15T23:30:00-01:00`; Sources: [chat/t/m1](../sources/chat/_v2/t.md#source-11111111)";
const EVP: &str =
    "[^e-20a9ff0b11]: Time: `2024-03-17`; Sources: [chat/t/m2](../sources/chat/_v2/t.md#source-22222222)";

fn workspace() -> Vec<Loaded> {
    vec![
        Loaded::parse(
            "topics/core.md",
            &format!("---\nkind: core\n---\n# Core\n\nPrefer short answers.[^e-1175dea39c] See [Ada](people/ada.md#^a1). ^c1\n\nPending fact.[^e-20a9ff0b11] ^c2\n\nUse metric units.[^e-1175dea39c] ^c3\n\n{EV1}\n{EVP}\n"),
        ),
        Loaded::parse(
            "topics/people/ada.md",
            &format!("Ada likes tea.[^e-1175dea39c] ^a1\n\nLinks [[core#^c2]] and [[core]].[^e-1175dea39c] ^a2\n\n{}\n", EV1.replace("../", "../../")),
        ),
    ]
}

#[test]
fn views_hold_exactly_the_eligible_blocks() {
    let topics = workspace();
    let checked = check(&topics, &resolver());
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
    let r = render(&topics, &checked, CORE_BUDGET);
    let core = &r.files["core.md"];
    assert_eq!(
        core,
        "<!-- scriptorium:derived core.md -->\n\nPrefer short answers.[^e-1175dea39c] See [Ada](topics/people/ada.md#^a1). ^c1\n\nUse metric units.[^e-1175dea39c] ^c3\n\n[^e-1175dea39c]: Time: `2024-03-15T23:30:00-01:00`; Sources: [chat/t/m1](sources/chat/_v2/t.md#source-11111111)\n"
    );
    assert_eq!(r.report.core.tokens, count_tokens(core));
    assert!(r.report.core.omitted.is_empty());
    // 23:30 at -01:00 is the next UTC day.
    assert_eq!(
        r.files.keys().filter(|k| k.starts_with("timeline/")).collect::<Vec<_>>(),
        ["timeline/2024/03/16.md"]
    );
    let day = &r.files["timeline/2024/03/16.md"];
    assert_eq!(day.lines().count(), 2 + 4);
    assert!(day.contains("- 2024-03-15T23:30:00-01:00 [topics/core.md#^c1](../../../topics/core.md#^c1)\n"));
    for view in r.files.values() {
        assert!(!view.contains("topics/core.md#^c2"), "pending block in a view: {view}");
        assert!(!view.contains("\"c2\""), "pending block in a view: {view}");
        assert!(!view.contains("Pending fact"));
    }
    let events = &r.files["recent_events.jsonl"];
    assert_eq!(events.lines().count(), 4);
    let first: serde_json::Value = serde_json::from_str(events.lines().next().unwrap()).unwrap();
    assert_eq!(first["path"], "topics/core.md");
    assert_eq!(first["block_id"], "c1");
    assert_eq!(first["text"], "Prefer short answers. See [Ada](people/ada.md#^a1).");
    assert_eq!(first["sources"], serde_json::json!(["chat/t/m1"]));
    assert_eq!(first["visibility"], "paired");
    let rel: serde_json::Value = serde_json::from_str(&r.files["relations.json"]).unwrap();
    let edges = rel["edges"].as_array().unwrap();
    // a2 links the pending c2 (no edge) and the file (edge); c1 links a1.
    assert_eq!(
        edges,
        &[
            serde_json::json!({"from": "topics/core.md#^c1", "to": "topics/people/ada.md#^a1"}),
            serde_json::json!({"from": "topics/people/ada.md#^a2", "to": "topics/core.md"}),
        ]
    );
    assert_eq!(rel["nodes"].as_array().unwrap().len(), 2 + 4);
    assert_eq!(render(&topics, &checked, CORE_BUDGET), r, "rendering twice differs");
}

#[test]
fn the_budget_is_an_edge() {
    let topics = workspace();
    let checked = check(&topics, &resolver());
    let full = render_core(topics.first(), &checked, CORE_BUDGET);
    let exact = full.report.tokens;
    // Exactly enough: everything fits.
    let r = render_core(topics.first(), &checked, exact);
    assert_eq!((r.report.tokens, r.report.omitted.len()), (exact, 0));
    // One token short: the last block is left out, and so reported.
    let r = render_core(topics.first(), &checked, exact - 1);
    assert_eq!(r.report.omitted, ["c3"]);
    let bytes = r.bytes.unwrap();
    assert!(count_tokens(&bytes) < exact);
    assert_eq!(r.report.tokens, count_tokens(&bytes));
    assert!(!bytes.contains("^c3"));
    // Nothing fits: nothing to hold, every eligible id left out.
    let r = render_core(topics.first(), &checked, 5);
    assert_eq!(r.bytes, None);
    assert_eq!(r.report.omitted, ["c1", "c3"]);
    assert_eq!(r.report.tokens, 0);
}

#[test]
fn hand_written_core_promotion() {
    let topics = workspace();
    let rest = &topics[1..];
    let valid = format!("Prefer tea.[^e-1175dea39c] ^h1\n\n{EV1}\n");
    assert_eq!(core_promotion(Some(&valid), rest, &resolver()), CorePromotion::Move);
    assert!(
        matches!(core_promotion(Some("just notes\n"), rest, &resolver()), CorePromotion::PreserveAsEvidence(d) if !d.is_empty())
    );
    assert_eq!(core_promotion(Some(&valid), &topics, &resolver()), CorePromotion::Overwrite);
    assert_eq!(
        core_promotion(Some(&format!("{CORE_MARKER}\nx\n")), rest, &resolver()),
        CorePromotion::Nothing
    );
    assert_eq!(core_promotion(None, rest, &resolver()), CorePromotion::Nothing);
}

#[test]
fn timeline_names_only_four_digit_years_and_escapes_paths() {
    let ev = |t: &str| {
        format!(
            "[^e-1175dea39c]: Time: `{t}`; Sources: [chat/t/m1](../sources/chat/_v2/t.md#source-11111111)"
        )
    };
    let topics = vec![
        Loaded::parse(
            "topics/a b)c.md",
            &format!("x[^e-1175dea39c] ^x1\n\n{}\n", ev("9999-12-31T23:59:59-23:59")),
        ),
        Loaded::parse("topics/[d].md", &format!("y[^e-1175dea39c] ^y1\n\n{}\n", ev("2024-01-02"))),
    ];
    let checked = check(&topics, &resolver());
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
    let tl = timeline(&checked);
    assert_eq!(tl.keys().collect::<Vec<_>>(), ["timeline/2024/01/02.md"]);
    assert!(tl["timeline/2024/01/02.md"]
        .contains("- 2024-01-02 [topics/\\[d\\].md#^y1](../../../topics/%5Bd%5D.md#^y1)\n"));
}

#[test]
fn recent_events_hold_the_newest_thousand() {
    // Two files of 600 blocks each; block i of both files is i minutes
    // after midnight, so every time is a tie between the two files.
    let file = |dir: &str, up: &str| {
        let mut s = String::from("# Notes\n");
        for i in 0..600u32 {
            s.push_str(&format!(
                "\nNote {i}.[^e-{i:010x}] ^{dir}{i}\n\n[^e-{i:010x}]: Time: `2024-03-16T{:02}:{:02}:00Z`; Sources: [chat/t/m1]({up}sources/chat/_v2/t.md#source-11111111)\n",
                i / 60,
                i % 60
            ));
        }
        s
    };
    let topics = vec![
        Loaded::parse("topics/a.md", &file("a", "../")),
        Loaded::parse("topics/b/b.md", &file("b", "../../")),
    ];
    let checked = check(&topics, &resolver());
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics.first());
    let r = render(&topics, &checked, CORE_BUDGET);
    let events: Vec<serde_json::Value> =
        r.files["recent_events.jsonl"].lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.len(), RECENT_EVENTS);
    // Expected: the 1,200 blocks sorted newest first, ties by path then id
    // (ids compared as strings), the first 1,000.
    let mut all: Vec<(u32, &str, String)> = Vec::new();
    for i in 0..600u32 {
        all.push((i, "topics/a.md", format!("a{i}")));
        all.push((i, "topics/b/b.md", format!("b{i}")));
    }
    all.sort_by(|x, y| y.0.cmp(&x.0).then_with(|| x.1.cmp(y.1)).then_with(|| x.2.cmp(&y.2)));
    let got: Vec<(&str, &str)> =
        events.iter().map(|e| (e["path"].as_str().unwrap(), e["block_id"].as_str().unwrap())).collect();
    let want: Vec<(&str, &str)> =
        all.iter().take(RECENT_EVENTS).map(|(_, p, id)| (*p, id.as_str())).collect();
    assert_eq!(got, want);
    assert_eq!(r.report.events, RECENT_EVENTS);
}

#[test]
fn no_ordinary_token_stands_for_more_than_max_token_bytes() {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let mut longest = 0;
    let mut tokens = 0;
    // Every rank the vocabulary has (special tokens past its end decode
    // too, and are never counted by `count_tokens`).
    for rank in 0..200_000 {
        if let Ok(bytes) = bpe.decode_bytes(&[rank]) {
            longest = longest.max(bytes.len());
            tokens += 1;
        }
    }
    assert!(tokens > 199_000, "the vocabulary was read: {tokens}");
    assert_eq!(longest, MAX_TOKEN_BYTES, "the bound is the vocabulary's longest token");
    // So a text longer than budget × MAX_TOKEN_BYTES bytes never fits.
    let long = "x".repeat(3 * MAX_TOKEN_BYTES + 1);
    assert!(count_tokens(&long) > 3);
}
