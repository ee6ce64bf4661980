//! Parser vectors and the round-trip property.

use super::*;
use proptest::prelude::*;

const DAVE: &str = "---
description: One line.
kind: person
aliases: [Dave, dave.k]
owner: ops
---
# Dave

Dave leads the budget tracker work.[^e-1175dea39c] ^f888f60e

He prefers answers without jargon.[^e-1175dea39c][^e-20a9ff0b11]
See [the tracker](../projects/budget.md#^b1) and [[projects/budget#^b2|it]]. ^9c2d4e01

[^e-1175dea39c]: Time: `2024-03-15`; Sources: [openprogram/sess-7f2a/msg_2f9b](../../sources/openprogram/_v2/sess-7f2a.md#source-9047c191)
[^e-20a9ff0b11]: Time: `2024-03-16T09:30:00Z`; Sources: [openprogram/sess-7f2a/msg_3a01](../../sources/openprogram/_v2/sess-7f2a.md#source-a26d0031), [openprogram/sess-80/msg_1](../../sources/openprogram/_v2/sess-80.md#source-67b028cf)
";

#[test]
fn reads_the_format_example() {
    let f = TopicFile::parse(DAVE).unwrap();
    assert_eq!(f.print(), DAVE);
    let fm = f.front_matter.as_ref().unwrap();
    assert_eq!(fm.description(), Some("One line."));
    assert_eq!(fm.kind(), Some(TopicKind::Person));
    assert_eq!(fm.aliases(), ["Dave", "dave.k"]);
    assert_eq!(fm.entries[3].key, "owner");
    assert_eq!(f.headings, [6]);
    assert_eq!(f.blocks.len(), 2);
    assert_eq!(f.blocks[0].id.as_deref(), Some("f888f60e"));
    assert_eq!(f.blocks[1].id.as_deref(), Some("9c2d4e01"));
    assert_eq!((f.blocks[1].first_line, f.blocks[1].last_line), (10, 11));
    let labels: Vec<_> = f.blocks[1].refs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["e-1175dea39c", "e-20a9ff0b11"]);
    assert_eq!(f.blocks[1].links.len(), 2);
    let ev = f.definitions[1].evidence.as_ref().unwrap().as_ref().unwrap();
    assert_eq!(ev.sources.len(), 2);
    assert_eq!(ev.sources[1].id, "openprogram/sess-80/msg_1");
    assert_eq!(ev.sources[1].path, "../../sources/openprogram/_v2/sess-80.md");
    assert_eq!(ev.sources[1].anchor, "source-67b028cf");
    assert_eq!(
        plain_text(&f.block_text(&f.blocks[0]), f.blocks[0].id.as_deref()),
        "Dave leads the budget tracker work."
    );
}

#[test]
fn every_kind_reads_and_no_other() {
    for kind in ["person", "project", "theme", "core", "persona", "identity"] {
        let f = TopicFile::parse(&format!("---\nkind: {kind}\n---\n# Self\n")).unwrap();
        let read = f.front_matter.as_ref().and_then(|fm| fm.kind()).map(TopicKind::as_str);
        assert_eq!(read, Some(kind));
    }
    // Kinds are exact: another case, a plural or a list is not a kind.
    for bad in ["Persona", "personas", "[persona]", "self"] {
        let text = format!("---\nkind: {bad}\n---\n");
        let problems = TopicFile::parse_lenient(&text).1;
        assert_eq!(problems.len(), 1, "{bad:?}");
        assert_eq!((problems[0].code, problems[0].line), (Code::BadFrontMatter, 1), "{bad:?}");
        assert!(problems[0].message.contains("persona, identity"), "{}", problems[0].message);
    }
}

fn codes(text: &str) -> Vec<(Code, usize)> {
    TopicFile::parse_lenient(text).1.into_iter().map(|p| (p.code, p.line + 1)).collect()
}

#[test]
fn grammar_problems() {
    assert_eq!(codes("---\nkind: person\n"), [(Code::BadFrontMatter, 1)]);
    assert_eq!(codes("---\nkind: robot\n---\n"), [(Code::BadFrontMatter, 2)]);
    assert_eq!(codes("---\njust text\n---\n"), [(Code::BadFrontMatter, 2)]);
    assert_eq!(codes("A block without id.[^e-1175dea39c]\n"), [(Code::MissingBlockId, 1)]);
    assert_eq!(codes("Trailing space ^abc \n"), [(Code::MissingBlockId, 1)]);
    assert_eq!(codes("x ^abc\n\n[^n]: one\n[^n]: two\n"), [(Code::BadFootnote, 4)]);
    assert_eq!(
        codes("x ^abc\n\n[^e-1175dea39c]: Time: `2024-13-01`; Sources: [a/b/c](x.md#source-1)\n"),
        [(Code::BadFootnote, 3)]
    );
    assert_eq!(codes("x ^abc\n\n[^e-1175dea39c]: Time: `2024-03-01`; Sources:\n"), [(Code::BadFootnote, 3)]);
    assert_eq!(
        codes("x ^abc\n\n[^e-1175dea39c]: Time: `2024-03-01/2024-03-02`; Sources: [a/b/c](x.md#s)\n"),
        [(Code::BadFootnote, 3)]
    );
    // An id-looking suffix elsewhere in a block is plain text.
    assert_eq!(codes("a ^abc\nb\n"), [(Code::MissingBlockId, 1)]);
}

#[test]
fn fences_headings_and_crlf() {
    let text = "Intro line\r\n```\r\n\r\n# not a heading\r\n[^x]: not a definition\r\n```\r\nafter ^b1\r\n\r\n## Real\r\n";
    let (f, problems) = TopicFile::parse_lenient(text);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(f.print(), text);
    assert_eq!(f.blocks.len(), 1);
    assert_eq!((f.blocks[0].first_line, f.blocks[0].last_line), (0, 6));
    assert_eq!(f.blocks[0].id.as_deref(), Some("b1"));
    assert!(f.blocks[0].refs.is_empty());
    assert_eq!(f.headings, [8]);
    assert!(f.definitions.is_empty());
    // Inline code hides references and links.
    let (f, _) = TopicFile::parse_lenient("`[^x]` and `[a](b.md)` ^c\n");
    assert!(f.blocks[0].refs.is_empty() && f.blocks[0].links.is_empty());
}

fn line_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("---".to_owned()),
        Just("# Heading".to_owned()),
        Just("```".to_owned()),
        Just("~~~~".to_owned()),
        Just("kind: person".to_owned()),
        Just("Some text.[^e-1175dea39c] ^f888f60e".to_owned()),
        Just("[^e-1175dea39c]: Time: `2024-03-15`; Sources: [a/b/c](../s.md#source-1)".to_owned()),
        Just("[^note]: plain".to_owned()),
        Just("See [x](a.md#^b) and [[p#^q|r]] `code [^z]`".to_owned()),
        Just("\u{202E}ünïcødé 日本 ^id-1".to_owned()),
        any::<String>(),
    ]
}

fn file_strategy() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(
            (line_strategy(), prop_oneof![Just("\n"), Just("\r\n"), Just("\r")]),
            0..16,
        ),
        any::<bool>(),
    )
        .prop_map(|(lines, final_lf)| {
            let mut s: String = lines.iter().map(|(l, e)| format!("{l}{e}")).collect();
            if !final_lf {
                s.pop();
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn print_parse_is_identity(text in file_strategy()) {
        let (f, _) = TopicFile::parse_lenient(&text);
        prop_assert_eq!(f.print(), text.clone());
        if let Ok(strict) = TopicFile::parse(&text) {
            prop_assert_eq!(strict.print(), text);
        }
    }

    #[test]
    fn blocks_are_disjoint_and_ordered(text in file_strategy()) {
        let (f, _) = TopicFile::parse_lenient(&text);
        let mut last = None;
        for b in &f.blocks {
            prop_assert!(b.first_line <= b.last_line);
            if let Some(l) = last { prop_assert!(b.first_line > l); }
            last = Some(b.last_line);
        }
    }
}

#[test]
fn hostile_lines_scan_in_linear_time() {
    // Each of these would cost a search to the end of the line per `[`
    // with a naive scanner; here each is one pass.
    for unit in ["[", "[a", "[[", "![", "`", "``a", "[^a"] {
        let line = unit.repeat(200_000 / unit.len());
        let text = format!("x {line}[^e-1175dea39c] ^n1\n");
        let (f, _) = TopicFile::parse_lenient(&text);
        assert_eq!(f.print(), text);
        assert_eq!(f.blocks[0].id.as_deref(), Some("n1"));
    }
}

#[test]
fn link_shapes() {
    let (f, problems) = TopicFile::parse_lenient(
        "[a](<sub dir/x.md#^t1>) [b](//host/x.md) ![img](p.png) [c](d.md \"title\") ^z\n",
    );
    assert!(problems.is_empty(), "{problems:?}");
    let targets: Vec<&str> = f.blocks[0]
        .links
        .iter()
        .map(|(_, l)| match l {
            Link::Markdown { target, .. } => target.as_str(),
            Link::Wiki { target, .. } => target.as_str(),
        })
        .collect();
    assert_eq!(targets, ["sub dir/x.md#^t1", "//host/x.md", "d.md"]);
    // An unclosed list and a byte-order mark before front matter.
    assert_eq!(codes("---\naliases: [a, b\n---\n"), [(Code::BadFrontMatter, 2)]);
    let (f, problems) = TopicFile::parse_lenient("\u{FEFF}---\nkind: person\n---\nx[^e-1175dea39c] ^a\n");
    assert!(problems.is_empty());
    assert_eq!(f.front_matter.unwrap().kind(), Some(TopicKind::Person));
}

#[test]
fn search_text_keeps_link_text_only() {
    let text = "See [the plan](../plan.md#b1) and [[people/ada|Ada]] and [[tea]] [^e-0123456789] ^b7";
    assert_eq!(search_text(text, Some("b7")), "See the plan and Ada and tea");
    assert_eq!(search_text("a [b] (c) [[x [y]]", None), "a [b] (c) [[x [y]]");
    let long = "[".repeat(200_000);
    assert_eq!(search_text(&long, None), long);
}

#[test]
fn inline_spans_cover_what_the_parser_records() {
    let line = "a `[^e-0000000000]` [x](y.md#^b1) ![i](p.png) [^e-1175dea39c][[t|T]] [[]] [^]";
    let spans = inline_spans(line);
    let shown: Vec<&str> = spans.iter().map(|s| &line[s.range.clone()]).collect();
    assert_eq!(shown, ["[x](y.md#^b1)", "[^e-1175dea39c]", "[[t|T]]"]);
    assert_eq!(spans[1].item, Inline::Footnote("e-1175dea39c".into()));
    assert_eq!(spans[2].item, Inline::Link(Link::Wiki { target: "t".into(), alias: Some("T".into()) }));
    // The same items, in the same order, as the block's refs and links.
    let f = TopicFile::parse(DAVE).unwrap();
    for b in &f.blocks {
        let (mut refs, mut links) = (Vec::new(), Vec::new());
        for k in b.first_line..=b.last_line {
            for s in inline_spans(f.line(k)) {
                match s.item {
                    Inline::Footnote(label) => refs.push(FootnoteRef { label, line: k }),
                    Inline::Link(l) => links.push((k, l)),
                }
            }
        }
        assert_eq!((refs, links), (b.refs.clone(), b.links.clone()));
    }
}

#[test]
fn a_people_card_may_set_its_own_limits() {
    let (f, problems) = TopicFile::parse_lenient(
        "---\nkind: person\nmax_entries: 50\nmax_entry_chars: 400\naliases: [Dave, Smith\\u{2c} D]\n---\n",
    );
    assert!(problems.is_empty(), "{problems:?}");
    let fm = f.front_matter.unwrap();
    assert_eq!((fm.max_entries(), fm.max_entry_chars()), (Some(50), Some(400)));
    assert_eq!(fm.aliases(), ["Dave", "Smith\\u{2c} D"]);
    assert_eq!(crate::parse::unescape_item(fm.aliases()[1]), "Smith, D");
    let (f, _) = TopicFile::parse_lenient("---\nkind: person\n---\n");
    assert_eq!(f.front_matter.unwrap().max_entries(), None);
    for bad in
        ["max_entries: 0", "max_entries: lots", "max_entry_chars: -3", "max_entries: [5]", "max_entries:"]
    {
        assert_eq!(codes(&format!("---\n{bad}\n---\n")), [(Code::BadFrontMatter, 2)], "{bad}");
    }
}

#[test]
fn a_block_text_comes_back_from_its_bytes() {
    let text = "---\naliases: [Ada]\n---\n# Notes\r\n\r\nOne line\r\nand a CR\r\r\nlast ^b1\r\n\n- item ^b2\n\nx ^b3";
    let f = TopicFile::parse_lenient(text).0;
    assert_eq!(f.blocks.len(), 3, "{:?}", f.blocks);
    for b in &f.blocks {
        let (at, source) = f.block_source(b);
        assert!(text[at..].starts_with(source));
        assert_eq!(block_text_of(source), f.block_text(b), "{source:?}");
    }
}

proptest! {
    #[test]
    fn any_block_text_comes_back_from_its_bytes(text in "([a-c ^\\[\\]-]{0,6}(\r|\n|\r\n)?){0,14}") {
        let f = TopicFile::parse_lenient(&text).0;
        for b in &f.blocks {
            let (at, source) = f.block_source(b);
            prop_assert!(text[at..].starts_with(source));
            prop_assert_eq!(block_text_of(source), f.block_text(b));
        }
    }
}
