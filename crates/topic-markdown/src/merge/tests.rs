//! The merge of topic files, rule by rule, on real topic text: front
//! matter, headings, evidence footnotes.

use super::*;

const D1: &str = "[^e-1175dea39c]: Time: `2024-03-15`; Sources: [chat/team-1/m1](../../sources/chat/_v2/team-1.md#source-99a7df07)";
const D2: &str = "[^e-20a9ff0b11]: Time: `2024-03-16T09:30:00Z`; Sources: [chat/team-1/m2](../../sources/chat/_v2/team-1.md#source-af37cd7e)";
const D3: &str = "[^e-3333333333]: Time: `2024-03-17`; Sources: [chat/team-1/m3](../../sources/chat/_v2/team-1.md#source-00000003)";
const D4: &str = "[^e-4444444444]: Time: `2024-03-18`; Sources: [chat/team-1/m4](../../sources/chat/_v2/team-1.md#source-00000004)";

const FM: &str = "---\ndescription: Dave, who runs the budget.\nkind: person\naliases: [Dave, dave.k]\n---\n";
const LEADS: &str = "Dave leads the budget tracker work.[^e-1175dea39c] ^f888f60e";
const JARGON: &str = "He prefers answers without jargon.[^e-1175dea39c][^e-20a9ff0b11] ^9c2d4e01";

/// A topic file: the front matter, a heading, the given blocks (one line
/// each, blank-separated) and the given definitions.
fn topic(fm: &str, blocks: &[&str], defs: &[&str]) -> String {
    let mut s = format!("{fm}# Dave\n");
    for b in blocks {
        s.push('\n');
        s.push_str(b);
        s.push('\n');
    }
    s.push('\n');
    for d in defs {
        s.push_str(d);
        s.push('\n');
    }
    s
}

fn base() -> String {
    topic(FM, &[LEADS, JARGON], &[D1, D2])
}

fn ids(text: &str) -> Vec<String> {
    let (file, problems) = TopicFile::parse_lenient(text);
    assert!(problems.iter().all(|p| p.code != crate::Code::MissingBlockId), "{problems:?}\n{text}");
    file.blocks.iter().filter_map(|b| b.id.clone()).collect()
}

fn clean(m: &Merged) -> &str {
    assert_eq!(m.conflicts, vec![], "{}", m.text);
    &m.text
}

#[test]
fn identities_return_a_side_byte_for_byte() {
    let b = base();
    let x = topic(FM, &[LEADS, "New. [^e-3333333333] ^aa01"], &[D1, D3]);
    assert_eq!(merge(Some(&b), &x, &x).text, x);
    assert_eq!(merge(None, &x, &x).text, x);
    assert_eq!(merge(Some(&b), &b, &x).text, x);
    assert_eq!(merge(Some(&b), &x, &b).text, x);
}

#[test]
fn blocks_added_on_both_sides_are_kept_in_a_side_independent_order() {
    let b = base();
    let o = topic(FM, &[LEADS, "Ours.[^e-3333333333] ^bb02", JARGON], &[D1, D2, D3]);
    let t = topic(FM, &[LEADS, "Theirs.[^e-4444444444] ^aa01", JARGON], &[D1, D2, D4]);
    let m = merge(Some(&b), &o, &t);
    let want = topic(
        FM,
        &[LEADS, "Theirs.[^e-4444444444] ^aa01", "Ours.[^e-3333333333] ^bb02", JARGON],
        &[D1, D2, D3, D4],
    );
    assert_eq!(clean(&m), want);
    assert_eq!(merge(Some(&b), &t, &o), m);
}

#[test]
fn a_run_inserted_by_one_side_stays_where_that_side_put_it() {
    let b = base();
    let o = topic(FM, &["First. ^aa00", LEADS, JARGON], &[D1, D2]);
    let t = topic(FM, &[LEADS, JARGON, "Last one. ^zz99", "Really last. ^aa98"], &[D1, D2]);
    let m = merge(Some(&b), &o, &t);
    assert_eq!(ids(clean(&m)), ["aa00", "f888f60e", "9c2d4e01", "zz99", "aa98"]);
}

#[test]
fn a_block_changed_on_one_side_takes_the_change() {
    let b = base();
    let edited = "Dave leads the budget tracker and the audit.[^e-1175dea39c] ^f888f60e";
    let o = topic(FM, &[edited, JARGON], &[D1, D2]);
    let t = topic(FM, &[LEADS, JARGON, "More.[^e-3333333333] ^cc03"], &[D1, D2, D3]);
    let m = merge(Some(&b), &o, &t);
    assert_eq!(clean(&m), topic(FM, &[edited, JARGON, "More.[^e-3333333333] ^cc03"], &[D1, D2, D3]));
    // The same change on both sides is taken once, without conflict.
    let m = merge(Some(&b), &o, &topic(FM, &[edited, JARGON, "More. ^cc03"], &[D1, D2]));
    assert_eq!(ids(clean(&m)), ["f888f60e", "9c2d4e01", "cc03"]);
}

#[test]
fn a_block_changed_differently_on_both_sides_keeps_ours_and_reports_both() {
    let b = base();
    let ours = "Dave leads the budget work.[^e-1175dea39c] ^f888f60e";
    let theirs = "Dave led the budget tracker work until May.[^e-1175dea39c] ^f888f60e";
    let m = merge(Some(&b), &topic(FM, &[ours, JARGON], &[D1, D2]), &topic(FM, &[theirs, JARGON], &[D1, D2]));
    assert_eq!(m.text, topic(FM, &[ours, JARGON], &[D1, D2]));
    let want = Conflict {
        kind: ConflictKind::Block { id: "f888f60e".into() },
        ours: ours.into(),
        theirs: theirs.into(),
    };
    assert_eq!(m.conflicts, vec![want]);
}

#[test]
fn a_block_added_on_both_sides_with_one_id_and_two_texts_is_a_conflict() {
    let o = topic(FM, &[LEADS], &[D1]);
    let t = topic(FM, &["Dave runs the budget.[^e-1175dea39c] ^f888f60e"], &[D1]);
    let m = merge(None, &o, &t);
    assert_eq!(m.text, o);
    assert!(
        matches!(&m.conflicts[..], [Conflict { kind: ConflictKind::Block { id }, .. }] if id == "f888f60e")
    );
}

#[test]
fn deletions_win_over_unchanged_and_lose_to_changed() {
    let b = base();
    // Deleted by theirs, unchanged in ours: gone.
    let o = topic(FM, &[LEADS, JARGON, "Ours.[^e-1175dea39c] ^bb02"], &[D1, D2]);
    let t = topic(FM, &[JARGON], &[D1, D2]);
    assert_eq!(
        clean(&merge(Some(&b), &o, &t)),
        topic(FM, &[JARGON, "Ours.[^e-1175dea39c] ^bb02"], &[D1, D2])
    );
    // Deleted by ours, changed by theirs: kept, with a conflict whose ours is empty.
    let changed = "He prefers short answers without jargon.[^e-20a9ff0b11] ^9c2d4e01";
    let m = merge(Some(&b), &topic(FM, &[LEADS], &[D1, D2]), &topic(FM, &[LEADS, changed], &[D1, D2]));
    assert_eq!(m.text, topic(FM, &[LEADS, changed], &[D1, D2]));
    let want = Conflict {
        kind: ConflictKind::Block { id: "9c2d4e01".into() },
        ours: String::new(),
        theirs: changed.into(),
    };
    assert_eq!(m.conflicts, vec![want]);
}

#[test]
fn front_matter_merges_by_key() {
    let b = base();
    let fo = "---\ndescription: Dave, our budget lead.\nkind: person\naliases: [Dave, dave.k]\nteam: finance\n---\n";
    let ft = "---\ndescription: Dave, who runs the budget.\nkind: person\naliases: [Dave, dave.k, DK]\nsince: 2021\n---\n";
    let m = merge(Some(&b), &topic(fo, &[LEADS, JARGON], &[D1, D2]), &topic(ft, &[LEADS, JARGON], &[D1, D2]));
    let want = "---\ndescription: Dave, our budget lead.\nkind: person\naliases: [Dave, dave.k, DK]\nteam: finance\nsince: 2021\n---\n";
    assert_eq!(clean(&m), topic(want, &[LEADS, JARGON], &[D1, D2]));
    // Both changed one key differently: ours, and a conflict.
    let ft = "---\ndescription: Dave from finance.\nkind: person\naliases: [Dave, dave.k]\n---\n";
    let m = merge(Some(&b), &topic(fo, &[LEADS, JARGON], &[D1, D2]), &topic(ft, &[LEADS, JARGON], &[D1, D2]));
    assert_eq!(m.text, topic(fo, &[LEADS, JARGON], &[D1, D2]));
    let want = Conflict {
        kind: ConflictKind::FrontMatter { key: "description".into() },
        ours: "description: Dave, our budget lead.".into(),
        theirs: "description: Dave from finance.".into(),
    };
    assert_eq!(m.conflicts, vec![want]);
}

#[test]
fn footnotes_appended_on_both_sides_are_all_kept_once() {
    let b = base();
    let o = topic(FM, &[LEADS, JARGON, "Three.[^e-3333333333] ^cc03"], &[D1, D2, D3]);
    let t = topic(FM, &[LEADS, JARGON, "Four.[^e-4444444444][^e-3333333333] ^dd04"], &[D1, D2, D4, D3]);
    let m = merge(Some(&b), &o, &t);
    let text = clean(&m);
    for d in [D1, D2, D3, D4] {
        assert_eq!(text.matches(d).count(), 1, "{text}");
    }
    assert_eq!(merge(Some(&b), &t, &o).text, text);
    assert!(TopicFile::parse(text).is_ok(), "{text}");
}

#[test]
fn headings_added_on_one_side_and_removed_footnotes_merge_as_lines() {
    let b = base();
    let o = format!("{FM}# Dave\n\n## Work\n\n{LEADS}\n\n{JARGON}\n\n{D1}\n{D2}\n");
    let t = topic(FM, &[LEADS, JARGON], &[D2]);
    let m = merge(Some(&b), &o, &t);
    assert_eq!(clean(&m), format!("{FM}# Dave\n\n## Work\n\n{LEADS}\n\n{JARGON}\n\n{D2}\n"));
}

#[test]
fn a_clash_of_lines_keeps_ours_and_names_the_block_before() {
    let b = base();
    let o = format!("{FM}# Dave\n\n{LEADS}\n\n## Style\n\n{JARGON}\n\n{D1}\n{D2}\n");
    let t = format!("{FM}# Dave\n\n{LEADS}\n\n## Manner\n\n{JARGON}\n\n{D1}\n{D2}\n");
    // Both inserted a heading at one place: both are kept.
    let m = merge(Some(&b), &o, &t);
    assert!(clean(&m).contains("## Style") && m.text.contains("## Manner"));
    // Both replaced the same heading differently: a clash.
    let t2 = format!("{FM}# Dave\n\n{LEADS}\n\n## Manner\n\n{JARGON}\n\n{D1}\n{D2}\n");
    let o2 = format!("{FM}# Dave\n\n{LEADS}\n\n## Tone\n\n{JARGON}\n\n{D1}\n{D2}\n");
    let m = merge(Some(&o), &o2, &t2);
    assert_eq!(m.text, o2);
    let want = Conflict {
        kind: ConflictKind::Lines { after: Some("f888f60e".into()) },
        ours: "## Tone".into(),
        theirs: "## Manner".into(),
    };
    assert_eq!(m.conflicts, vec![want]);
}

#[test]
fn blocks_are_never_glued() {
    // Theirs deleted X with the blank line before it; ours changed X.
    let b = "A.[^e-1175dea39c] ^a1\n\nX.[^e-1175dea39c] ^x1\n\nB.[^e-1175dea39c] ^b2\n";
    let o = "A.[^e-1175dea39c] ^a1\n\nX, edited.[^e-1175dea39c] ^x1\n\nB.[^e-1175dea39c] ^b2\n";
    let t = "A.[^e-1175dea39c] ^a1\nB.[^e-1175dea39c] ^b2\n".replace("^a1\n", "^a1\n\n");
    let m = merge(Some(b), o, &t);
    assert_eq!(ids(&m.text), ["a1", "x1", "b2"], "{}", m.text);
    // Ours deleted A and the blank line after it; theirs changed A.
    let b = "A. ^a1\n\nB. ^b2\n";
    let m = merge(Some(b), "B. ^b2\n", "A2. ^a1\n\nB. ^b2\n");
    assert_eq!(m.text, "A2. ^a1\n\nB. ^b2\n");
    assert_eq!(m.conflicts.len(), 1);
    // An ordinary line a side put right after a block is kept apart from it.
    let m = merge(Some(b), "A. ^a1\n\nB2. ^b2\n", "A. ^a1\n\nB. ^b2\n\nnote\n");
    assert_eq!(m.text, "A. ^a1\n\nB2. ^b2\n\nnote\n");
    let m = merge(Some(b), "A. ^a1\n\nB2. ^b2\n", "A. ^a1\n\nB. ^b2\n# H\nnote\n");
    assert_eq!(m.text, "A. ^a1\n\nB2. ^b2\n# H\nnote\n");
}

#[test]
fn ours_line_endings_are_kept() {
    let b = base();
    let o = topic(FM, &[LEADS, JARGON, "Three.[^e-3333333333] ^cc03"], &[D1, D2, D3]).replace('\n', "\r\n");
    let t = topic(FM, &[LEADS, JARGON], &[D1, D2, D4]);
    let m = merge(Some(&b), &o, &t);
    let text = clean(&m);
    assert!(text.contains(D4) && text.contains(D3));
    assert_eq!(text.matches('\n').count(), text.matches("\r\n").count(), "{text:?}");
    let m = merge(Some(&b), &t, &o);
    assert!(!clean(&m).contains('\r'));
}

#[test]
fn unrelated_versions_merge_as_additions() {
    let o = topic(FM, &[LEADS], &[D1]);
    let t = topic("", &[JARGON], &[D1, D2]);
    let m = merge(None, &o, &t);
    assert_eq!(ids(clean(&m)), ["9c2d4e01", "f888f60e"]);
    assert!(m.text.starts_with(FM) && m.text.contains(D2));
    assert_eq!(merge(None, &t, &o).text.matches(D1).count(), 1);
}

#[test]
fn conflicts_serialize_with_their_kind() {
    let c = Conflict { kind: ConflictKind::Lines { after: None }, ours: "a".into(), theirs: String::new() };
    let json = serde_json::to_string(&c).expect("serializes");
    assert_eq!(serde_json::from_str::<Conflict>(&json).expect("deserializes"), c);
}

#[test]
fn a_footnote_replaced_on_one_side_and_one_appended_on_the_other_both_apply() {
    let b = base();
    // Ours replaced the last definition (its block now cites another);
    // theirs appended one after it.
    let jargon3 = "He prefers answers without jargon.[^e-3333333333] ^9c2d4e01";
    let o = topic(FM, &[LEADS, jargon3], &[D1, D3]);
    let t = topic(FM, &[LEADS, JARGON, "Four.[^e-4444444444] ^dd04"], &[D1, D2, D4]);
    let m = merge(Some(&b), &o, &t);
    assert_eq!(clean(&m), topic(FM, &[LEADS, jargon3, "Four.[^e-4444444444] ^dd04"], &[D1, D3, D4]));
    // Each side removed a different definition: both are gone.
    let m = merge(Some(&b), &topic(FM, &[LEADS, JARGON], &[D2]), &topic(FM, &[LEADS, JARGON], &[D1]));
    assert_eq!(clean(&m), topic(FM, &[LEADS, JARGON], &[]));
}

#[test]
fn a_block_moved_on_one_side_moves() {
    let b = base();
    let o = topic(FM, &[JARGON, LEADS], &[D1, D2]);
    let t = topic(FM, &[LEADS, JARGON, "More.[^e-3333333333] ^cc03"], &[D1, D2, D3]);
    let m = merge(Some(&b), &o, &t);
    assert_eq!(clean(&m), topic(FM, &[JARGON, LEADS, "More.[^e-3333333333] ^cc03"], &[D1, D2, D3]));
    assert_eq!(merge(Some(&b), &t, &o).text, m.text);
}

#[test]
fn a_clash_at_the_file_start_names_no_block_and_loses_no_block() {
    let b = format!("# Dave\n\n{LEADS}\n");
    let o = format!("# Dave K.\n\n{LEADS}\n");
    let t = format!("# David\n\nNew.[^e-1175dea39c] ^ee05\n\n{LEADS}\n");
    let m = merge(Some(&b), &o, &t);
    assert_eq!(ids(&m.text), ["ee05", "f888f60e"], "{}", m.text);
    assert!(m.text.starts_with("# Dave K.\n") && !m.text.contains("David"));
    let [c] = &m.conflicts[..] else { panic!("one conflict: {:?}", m.conflicts) };
    assert_eq!((&c.kind, c.ours.as_str()), (&ConflictKind::Lines { after: None }, "# Dave K."));
    // Theirs' side holds its lines of the clash: the heading and the blank
    // line it put before its new block.
    assert_eq!(c.theirs.trim_end(), "# David");
}
