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
            "# A\n\nAda  LEADS\nthe review.[^e-0000000001][^e-0000000002] ^a1\n\n{}\n\n{}\n",
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
fn links_in_headings_and_notes_follow_the_block_too() {
    let block =
        |label: &str, m: &str, id: &str| format!("Bo prefers tea.[^{label}] ^{id}\n\n{}\n", def(label, m));
    let core = format!("# Core\n\n{}", block("e-0000000001", "m1", "c1"));
    let ada = format!("# Ada\n\n{}", block("e-0000000002", "m2", "a1"));
    let links = format!(
        "# Tea, see [[ada#^a1]]\n\nA note.[^e-0000000003][^n] ^l1\n\n{}\n[^n]: details in [the block](ada.md#^a1)\n",
        def("e-0000000003", "m3")
    );
    let p = planned(&[("topics/ada.md", ada), ("topics/core.md", core), ("topics/links.md", links)], &[]);
    assert_eq!(p.merged, 1);
    let text = content(&p, "topics/links.md");
    assert!(text.starts_with("# Tea, see [[core#^c1]]\n"), "{text}");
    assert!(text.ends_with("[^n]: details in [the block](core.md#^c1)\n"), "{text}");
}

#[test]
fn a_label_another_block_cites_undefined_is_not_given_to_it() {
    // `^c2` cites a label its file never defines (invalid); the twin of
    // `^c1` brings evidence under that very label, which must not make
    // `^c2` cite it.
    let core = "# Core\n\nBudget is fifty.[^e-0000000001] ^c1\n\nMallory got a raise.[^e-0000000007] ^c2\n\n"
        .to_owned()
        + &def("e-0000000001", "m1")
        + "\n";
    let b = format!("# B\n\nBudget is fifty.[^e-0000000007] ^b1\n\n{}\n", def("e-0000000007", "m2"));
    let topics: Vec<Loaded> =
        [("topics/core.md", core), ("topics/b.md", b)].iter().map(|(p, t)| Loaded::parse(p, t)).collect();
    let checked = check(&topics, &resolver(&[]));
    let p = plan(&topics, &checked);
    assert_eq!(p.merged, 1);
    let text = content(&p, "topics/core.md");
    assert!(text.contains("Mallory got a raise.[^e-0000000007] ^c2"), "{text}");
    assert!(!text.contains("[^e-0000000007]: "), "no definition under c2's label: {text}");
    let after: Vec<Loaded> = vec![Loaded::parse("topics/core.md", &text)];
    let again = check(&after, &resolver(&[]));
    assert!(
        again.diagnostics.iter().any(|d| d.block_id.as_deref() == Some("c2")),
        "c2 stays invalid: {:?}",
        again.diagnostics
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
    // Two spellings of one escaped alias are one alias.
    let p = planned(&[("topics/people/dave.md", card(r"[a\u{2C}b, a\u{2c}b, Zed]"))], &[]);
    assert_eq!(content(&p, "topics/people/dave.md"), card(r"[a\u{2C}b, Zed]"));
    let theme = "---\nkind: theme\naliases: [b, a]\n---\n# T\n".to_owned();
    assert_eq!(planned(&[("topics/t.md", theme)], &[]), Plan::default(), "only people cards");
}

mod property {
    //! Over generated workspaces full of twins, links and citations: the
    //! planned result checks clean, a second plan is empty, and every
    //! block's text still stands somewhere, citing every source it cited.

    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    const PATHS: [&str; 5] =
        ["topics/core.md", "topics/a.md", "topics/people/b.md", "topics/x/y/c.md", "topics/self/persona.md"];
    const TEXTS: [&str; 5] = [
        "Ada leads the review.",
        "ADA leads\nthe  review.",
        "Bo drinks tea.",
        "bo drinks TEA.",
        "Cy is here.",
    ];

    /// One block: its text, the records it cites (bits of m1..m3), and the
    /// block it links to, if any (an index into every block, and whether
    /// the link is a wiki link).
    type Gen = (usize, u8, Option<(usize, bool)>);

    fn dir_up(path: &str) -> String {
        "../".repeat(path.matches('/').count())
    }

    fn build(files: &[Vec<Gen>]) -> Vec<(String, String)> {
        let ids: Vec<(usize, String)> = files
            .iter()
            .enumerate()
            .flat_map(|(f, bs)| (0..bs.len()).map(move |b| (f, format!("b{f}-{b}"))))
            .collect();
        let mut out = Vec::new();
        for (f, blocks) in files.iter().enumerate() {
            let path = PATHS[f];
            let mut text = String::from("# T\n\n");
            let mut used = BTreeSet::new();
            for (b, (t, cites, link)) in blocks.iter().enumerate() {
                text.push_str(TEXTS[*t]);
                if let Some((to, wiki)) = link {
                    let (tf, tid) = &ids[to % ids.len()];
                    let target = PATHS[*tf];
                    text.push_str(&if *wiki {
                        format!(
                            " See [[{}#^{tid}]].",
                            target.trim_start_matches("topics/").trim_end_matches(".md")
                        )
                    } else {
                        format!(" See [it]({}#^{tid}).", links::relative_path(path, target))
                    });
                }
                for m in 1..=3u8 {
                    if cites & (1 << (m - 1)) != 0 || (*cites & 7 == 0 && m == 1) {
                        text.push_str(&format!("[^e-000000000{m}]"));
                        used.insert(m);
                    }
                }
                text.push_str(&format!(" ^b{f}-{b}\n\n"));
            }
            for m in used {
                text.push_str(&format!(
                    "[^e-000000000{m}]: Time: `2026-01-01`; Sources: [chat/t/m{m}]({}sources/chat/_v2/t.md#source-m{m})\n",
                    dir_up(path)
                ));
            }
            out.push((path.to_owned(), text));
        }
        out
    }

    /// What a block says: its text without references, id or links (a
    /// link to a removed block follows it; a Markdown link's text stays),
    /// space collapsed, case folded.
    fn key(t: &Loaded, b: usize) -> String {
        let block = &t.file.blocks[b];
        let mut text = String::new();
        for k in block.first_line..=block.last_line {
            let line = t.file.line(k);
            let line = line.strip_suffix(&format!(" ^{}", block.id.as_deref().unwrap_or(""))).unwrap_or(line);
            let mut at = 0;
            for span in inline_spans(line) {
                text.push_str(&line[at..span.range.start]);
                if let Inline::Link(Link::Markdown { text: shown, .. }) = &span.item {
                    text.push_str(shown);
                }
                at = span.range.end;
            }
            text.push_str(&line[at..]);
            text.push(' ');
        }
        fold_key(&text.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    fn gen() -> impl Strategy<Value = Vec<Vec<Gen>>> {
        let block = (0..TEXTS.len(), 0u8..8, proptest::option::weighted(0.3, (0usize..64, any::<bool>())));
        proptest::collection::vec(proptest::collection::vec(block, 0..6), 1..=PATHS.len())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn the_plan_checks_clean_says_everything_once_and_is_idempotent(files in gen(), pending in any::<bool>()) {
            let texts = build(&files);
            let topics: Vec<Loaded> = texts.iter().map(|(p, t)| Loaded::parse(p, t)).collect();
            let pending: &[&str] = if pending { &["m3"] } else { &[] };
            let r = resolver(pending);
            let checked = check(&topics, &r);
            prop_assume!(checked.diagnostics.is_empty());
            let p = plan(&topics, &checked);
            let after: Vec<Loaded> = topics
                .iter()
                .map(|t| {
                    let text = p.edits.iter().find_map(|e| match e {
                        Edit::Replace { path, content } if *path == t.path => Some(content.clone()),
                        _ => None,
                    });
                    Loaded::parse(&t.path, &text.unwrap_or_else(|| t.file.print()))
                })
                .collect();
            let again = check(&after, &r);
            prop_assert!(again.diagnostics.is_empty(), "{:?}\n{:?}", again.diagnostics, p.edits);
            prop_assert_eq!(plan(&after, &again), Plan::default());
            prop_assert_eq!(again.blocks.len() + p.merged, checked.blocks.len());
            for (before, s) in topics.iter().zip(0..).flat_map(|(t, _)| (0..t.file.blocks.len()).map(move |b| (t, b))).zip(&checked.blocks) {
                let (t, b) = before;
                let k = key(t, b);
                let holds = after.iter().flat_map(|u| (0..u.file.blocks.len()).map(move |c| (u, c))).any(|(u, c)| {
                    let state = again.blocks.iter().find(|x| x.path == u.path && x.index == c).unwrap();
                    key(u, c) == k && state.pending == s.pending && s.sources.iter().all(|x| state.sources.contains(x))
                });
                prop_assert!(holds, "{}#{} lost its text or a source: {:?}", t.path, b, p.edits);
            }
        }
    }
}
