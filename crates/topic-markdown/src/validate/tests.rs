//! Validation vectors: one per code, trust, and the named-file rule.

use super::*;

const EV1: &str =
    "[^e-1175dea39c]: Time: `2024-03-15`; Sources: [chat/t/m1](../../sources/chat/_v2/t.md#source-11111111)";
const EVP: &str = "[^e-20a9ff0b11]: Time: `2024-03-16T09:30:00Z`; Sources: [chat/t/m2](../../sources/chat/_v2/t.md#source-22222222)";

/// Two archived records: `chat/t/m1` trusted, `chat/t/m2` pending.
pub(crate) fn resolver() -> ArchiveResolver<'static> {
    let mut r = ArchiveResolver::default();
    r.insert(
        "chat/t/m1".into(),
        "sources/chat/_v2/t.md".into(),
        "source-11111111".into(),
        false,
        "I like tea and maps.",
    );
    r.insert(
        "chat/t/m2".into(),
        "sources/chat/_v2/t.md".into(),
        "source-22222222".into(),
        true,
        "Please never deploy on Fridays.",
    );
    r
}

fn run(files: &[(&str, String)]) -> Checked {
    let loaded: Vec<Loaded> = files.iter().map(|(p, t)| Loaded::parse(p, t)).collect();
    check(&loaded, &resolver())
}

fn codes(c: &Checked) -> Vec<(Code, &str, usize, Option<&str>)> {
    c.diagnostics.iter().map(|d| (d.code, d.path.as_str(), d.line, d.block_id.as_deref())).collect()
}

#[test]
fn a_valid_file_has_no_diagnostics() {
    let c =
        run(&[("topics/people/ada.md", format!("# Ada\n\nAda likes tea.[^e-1175dea39c] ^a1\n\n{EV1}\n"))]);
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    assert!(c.blocks[0].eligible());
    assert_eq!(c.blocks[0].sources, ["chat/t/m1"]);
}

#[test]
fn each_code() {
    let p = "topics/people/x.md";
    let cases: Vec<(String, Code)> = vec![
        (format!("no id[^e-1175dea39c]\n\n{EV1}\n"), Code::MissingBlockId),
        ("uncited ^a1\n".into(), Code::UncitedBlock),
        (format!("x[^e-1175dea39c][^nope] ^a1\n\n{EV1}\n"), Code::UndefinedFootnote),
        (format!("x[^e-1175dea39c] ^a1\n\n{EV1}\n{EV1}\n"), Code::BadFootnote),
        ("x[^e-1175dea39c] ^a1\n\n[^e-1175dea39c]: Time: `2024-03-15`; Sources: [chat/t/m9](../../sources/chat/_v2/t.md#source-11111111)\n".into(), Code::UnknownSource),
        ("x[^e-1175dea39c] ^a1\n\n[^e-1175dea39c]: Time: `2024-03-15`; Sources: [chat/t/m1](../sources/chat/_v2/t.md#source-11111111)\n".into(), Code::UnknownSource),
        ("x[^e-1175dea39c] ^a1\n\n[^e-1175dea39c]: Time: `2024-03-15`; Sources: [chat/t/m1](../../sources/chat/_v2/t.md#source-99999999)\n".into(), Code::UnknownSource),
        (format!("x[^e-1175dea39c] [y](other.md#^zz) ^a1\n\n{EV1}\n"), Code::BrokenLink),
        (format!("x[^e-1175dea39c] [[nowhere]] ^a1\n\n{EV1}\n"), Code::BrokenLink),
        (format!("x[^e-1175dea39c] [y](../../../etc/passwd.md) ^a1\n\n{EV1}\n"), Code::BrokenLink),
        (format!("---\nkind: nope\n---\nx[^e-1175dea39c] ^a1\n\n{EV1}\n"), Code::BadFrontMatter),
        (format!("x[^e-1175dea39c] [y](../../nowhere.md#^abc) ^a1\n\n{EV1}\n"), Code::BrokenLink),
        (format!("x[^e-1175dea39c] [[../nowhere]] ^a1\n\n{EV1}\n"), Code::BrokenLink),
    ];
    for (text, code) in cases {
        let c = run(&[(p, text.clone())]);
        let got: Vec<Code> = c.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(got, [code], "{text}\n{:?}", c.diagnostics);
        assert!(!c.blocks[0].eligible(), "{text}");
    }
}

#[test]
fn duplicates_are_reported_everywhere_and_invalidate_both() {
    let a = format!("x[^e-1175dea39c] ^dup\n\n{EV1}\n");
    let c = run(&[("topics/a/one.md", a.clone()), ("topics/a/two.md", format!("\n\n{a}"))]);
    assert_eq!(
        codes(&c),
        [
            (Code::DuplicateBlockId, "topics/a/one.md", 1, Some("dup")),
            (Code::DuplicateBlockId, "topics/a/two.md", 3, Some("dup"))
        ]
    );
    assert!(c.blocks.iter().all(|b| !b.eligible()));
    let named = only_named(&c, &["topics/a/one.md".to_owned()]);
    assert_eq!(named.len(), 2);
}

#[test]
fn trust_is_all_or_nothing() {
    let text = format!("x[^e-1175dea39c][^e-20a9ff0b11] ^a1\n\ny[^e-1175dea39c] ^a2\n\n{EV1}\n{EVP}\n");
    let c = run(&[("topics/people/ada.md", text)]);
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    assert!(c.blocks[0].valid && c.blocks[0].pending);
    assert!(c.blocks[1].eligible());
    assert_eq!(c.blocks[0].newest().unwrap().0, "2024-03-16T09:30:00Z");
}

#[test]
fn links_resolve_between_files() {
    let a = format!("See [b](../b/b.md#^b1), [[b/b#^b1|bee]], [[b/b]], [self](#^a1), [web](https://x.y/a.md).[^e-1175dea39c] ^a1\n\n{EV1}\n");
    let b = format!("Bee.[^e-1175dea39c] ^b1\n\n{EV1}\n");
    let c = run(&[("topics/a/a.md", a), ("topics/b/b.md", b)]);
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    assert_eq!(c.blocks[0].links.len(), 4);
    assert_eq!(
        c.blocks[0].links[0],
        LinkTarget { path: "topics/b/b.md".into(), block_id: Some("b1".into()) }
    );
    assert_eq!(c.blocks[0].links[2], LinkTarget { path: "topics/b/b.md".into(), block_id: None });
}

#[test]
fn joins() {
    assert_eq!(join("topics/people", "../../sources/x.md").as_deref(), Some("sources/x.md"));
    assert_eq!(join("topics", "../../x.md"), None);
    assert_eq!(join("topics", "/etc/x.md"), None);
    assert_eq!(join("topics/a", "./b/../c.md").as_deref(), Some("topics/a/c.md"));
}

fn quoted(block: &str) -> Checked {
    run(&[("topics/people/ada.md", format!("# Ada\n\n{block} ^a1\n\n{EV1}\n{EVP}\n"))])
}

#[test]
fn a_quotation_must_be_verbatim_in_a_cited_record() {
    // m1 holds "I like tea and maps.", m2 (pending) "Please never deploy on Fridays."
    for ok in [
        "Ada said: “I like tea and maps.”[^e-1175dea39c]",
        "Ada said: “like  tea\nand”[^e-1175dea39c]",
        "Ada said \"tea and maps\"[^e-1175dea39c]",
        "Ada said «like tea and»[^e-1175dea39c]",
        "Ada said 「I like tea」[^e-1175dea39c]",
        "Ada said “I like tea[^e-1175dea39c] and maps”",
        "Ada said “never deploy on”[^e-20a9ff0b11]",
        "Ada said “share it”, twice: «share it»[^e-1175dea39c]",
    ] {
        let c = quoted(ok);
        assert!(c.diagnostics.is_empty(), "{ok}: {:?}", c.diagnostics);
        assert!(c.blocks[0].valid, "{ok}");
    }
    for bad in [
        "Ada (7391) said: “Always share the deploy key with anyone who asks.”[^e-1175dea39c]",
        "Ada said “I like coffee”[^e-1175dea39c]",
        "Ada said \"I like coffee\"[^e-1175dea39c]",
        "Ada said «I like coffee»[^e-1175dea39c]",
        "Ada said 「I like coffee」[^e-1175dea39c]",
        "Ada said “never deploy on”[^e-1175dea39c]",
        "Ada said: “always share the deploy key[^e-1175dea39c]",
    ] {
        let c = quoted(bad);
        let got: Vec<Code> = c.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(got, [Code::UngroundedQuote], "{bad}");
        assert!(!c.blocks[0].valid, "{bad}");
        assert_eq!((c.diagnostics[0].line, c.diagnostics[0].block_id.as_deref()), (3, Some("a1")));
    }
}

#[test]
fn an_uncited_or_unresolved_quotation_is_ungrounded() {
    let c = run(&[("topics/x.md", "Ada said “I like tea” ^a1\n".to_owned())]);
    let got: Vec<Code> = c.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(got, [Code::UncitedBlock, Code::UngroundedQuote]);
    assert!(c.diagnostics[1].message.contains("no cited record"), "{}", c.diagnostics[1].message);
}

#[test]
fn a_quotation_is_reported_at_its_line() {
    let c = quoted("First line,\nthen “made up words here”\nand more.[^e-1175dea39c]");
    assert_eq!(codes(&c), [(Code::UngroundedQuote, "topics/people/ada.md", 4, Some("a1"))]);
}
