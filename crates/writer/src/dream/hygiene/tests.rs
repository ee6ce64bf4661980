//! The twin key and the plan over topics checked against a resolver built
//! in memory.

use scriptorium_topic_markdown::validate::{check, ArchiveResolver};

use super::*;

fn def(label: &str, m: &str) -> String {
    format!("[^{label}]: Time: `2026-01-01`; Sources: [chat/t/{m}](../sources/chat/_v2/t.md#source-{m})")
}

fn resolver(pending: &[&str]) -> ArchiveResolver<'static> {
    let mut r = ArchiveResolver::default();
    for m in ["m1", "m2", "m3"] {
        let content = "the words";
        r.insert(
            format!("chat/t/{m}"),
            "sources/chat/_v2/t.md".into(),
            format!("source-{m}"),
            pending.contains(&m),
            content,
        );
    }
    r
}

fn planned(files: &[(&str, String)], pending: &[&str]) -> Plan {
    let topics: Vec<Loaded> = files.iter().map(|(p, t)| Loaded::parse(p, t)).collect();
    let checked = check(&topics, &resolver(pending));
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
    plan(&topics, &checked)
}

fn content(plan: &Plan, path: &str) -> String {
    plan.edits
        .iter()
        .find_map(|e| match e {
            Edit::Replace { path: p, content } if p == path => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{path} not edited: {plan:?}"))
}

#[test]
fn twins_differ_only_in_space_case_and_references() {
    let a = format!("# A\n\nAda  LEADS\nthe review.[^e-0000000001] ^a1\n\n{}\n", def("e-0000000001", "m1"));
    let b = format!("# B\n\nada leads the[^e-0000000002] review. ^b1\n\n{}\n", def("e-0000000002", "m2"));
    let p = planned(&[("topics/a.md", a), ("topics/b.md", b)], &[]);
    assert_eq!(p.merged, 1);
    assert_eq!(
        content(&p, "topics/a.md"),
        format!(
            "# A\n\nAda  LEADS\nthe review.[^e-0000000001][^e-0000000002] ^a1\n{}\n\n{}\n",
            def("e-0000000002", "m2"),
            def("e-0000000001", "m1")
        )
    );
    assert_eq!(content(&p, "topics/b.md"), "# B\n\n");
}

#[test]
fn other_words_other_trust_and_ordinary_footnotes_stay_apart() {
    let one = |label: &str, m: &str, text: &str, id: &str| {
        format!("{text}[^{label}] ^{id}\n\n{}\n\n", def(label, m))
    };
    let a = format!(
        "{}{}",
        one("e-0000000001", "m1", "Ada leads the review.", "a1"),
        one("e-0000000003", "m3", "Ada leads the review.", "a3")
    );
    let b = format!(
        "{}Ada leads the review.[^e-0000000002][^n] ^b2\n\n{}\n[^n]: a note\n",
        one("e-0000000004", "m1", "Ada leads the reviews.", "b1"),
        def("e-0000000002", "m2")
    );
    // m3 is pending: a3 is pending and a1 is not; b2 cites an ordinary
    // footnote; b1 says something else.
    let p = planned(&[("topics/a.md", a), ("topics/b.md", b)], &["m3"]);
    assert_eq!(p, Plan::default());
}

#[test]
fn core_stays_first_and_links_follow() {
    let block =
        |label: &str, m: &str, id: &str| format!("Bo prefers tea.[^{label}] ^{id}\n\n{}\n", def(label, m));
    let core = format!("# Core\n\n{}", block("e-0000000001", "m1", "c1"));
    let ada = format!("# Ada\n\n{}", block("e-0000000002", "m2", "a1"));
    let links = format!(
        "See [it](ada.md#^a1) and [[ada#^a1|Ada]].[^e-0000000003] ^l1\n\n{}\n",
        def("e-0000000003", "m3")
    );
    let p = planned(&[("topics/ada.md", ada), ("topics/core.md", core), ("topics/links.md", links)], &[]);
    assert_eq!(p.merged, 1);
    assert!(content(&p, "topics/core.md").contains("Bo prefers tea.[^e-0000000001][^e-0000000002] ^c1"));
    assert_eq!(
        content(&p, "topics/links.md").lines().next().unwrap(),
        "See [it](core.md#^c1) and [[core#^c1|Ada]].[^e-0000000003] ^l1"
    );
}

#[test]
fn a_block_with_a_link_merges_only_in_its_own_file() {
    let block = |label: &str, m: &str, id: &str| {
        format!("Tea, see [[core]].[^{label}] ^{id}\n\n{}\n\n", def(label, m))
    };
    let core = format!("# Core\n\n{}", block("e-0000000001", "m1", "c1"));
    let other = format!("{}{}", block("e-0000000002", "m2", "o1"), block("e-0000000003", "m3", "o2"));
    let p = planned(&[("topics/core.md", core), ("topics/other.md", other)], &[]);
    assert_eq!(p.merged, 1, "o2 into o1, not into core.md");
    let text = content(&p, "topics/other.md");
    assert!(text.contains("^o1") && !text.contains("^o2"), "{text}");
}

#[test]
fn people_cards_aliases_sorted() {
    let card = |aliases: &str| format!("---\nkind: person\naliases: {aliases}\n---\n# Dave\n");
    let p = planned(&[("topics/people/dave.md", card("[dave.k, Dave, bob, Dave,  Émile]"))], &[]);
    assert_eq!(p.aliases, 1);
    assert_eq!(content(&p, "topics/people/dave.md"), card("[bob, Dave, dave.k, Émile]"));
    assert_eq!(planned(&[("topics/people/dave.md", card("[bob, Dave, dave.k]"))], &[]), Plan::default());
    let theme = "---\nkind: theme\naliases: [b, a]\n---\n# T\n".to_owned();
    assert_eq!(planned(&[("topics/t.md", theme)], &[]), Plan::default(), "only people cards");
}
