//! Validation judges the change, at a cost that follows the change.

use std::time::Duration;

use scriptorium_testkit::{ada_record, block, fixture, patch, revision, tree};
use scriptorium_transaction::{Base, Code, Committer, Edit, Tier};

const WAIT: Duration = Duration::from_secs(5);

#[test]
fn only_the_changed_files_and_what_they_involve_are_checked() {
    let (_dir, root) = fixture();
    let mut w = Committer::open(&root, WAIT).unwrap();
    let mut edits = Vec::new();
    let mut sources = Vec::new();
    for k in 0..60u32 {
        let msg = format!("x{k}");
        sources.push(ada_record(&msg, "filler"));
        edits.push(Edit::Create {
            path: format!("topics/many/f{k}.md"),
            content: format!("# F{k}\n{}", block(100 + k, &msg, &format!("Filler {k}."), 1)),
        });
    }
    w.commit(&patch(&revision(&root), sources, edits), Tier::Owner, Base::Check).unwrap();
    // One append to one unrelated file: it alone is checked.
    let c = w
        .commit(
            &patch(
                &revision(&root),
                vec![],
                vec![Edit::Append {
                    path: "topics/many/f7.md".into(),
                    content: block(900, "x7", "More.", 1),
                }],
            ),
            Tier::Owner,
            Base::Check,
        )
        .unwrap();
    assert_eq!(c.files_checked, 1, "{c:?}");
    // A file linked from elsewhere brings its linker along.
    let c = w
        .commit(
            &patch(
                &revision(&root),
                vec![],
                vec![Edit::Append { path: "topics/a.md".into(), content: block(901, "m1", "Again.", 0) }],
            ),
            Tier::Owner,
            Base::Check,
        )
        .unwrap();
    assert!(c.files_checked <= 2, "{c:?}");
}

#[test]
fn a_problem_left_by_hand_elsewhere_does_not_block_an_unrelated_write() {
    let (_dir, root) = fixture();
    // A person breaks c.md in an editor: a citation to nothing.
    let c = root.join("topics/c.md");
    let mut text = std::fs::read_to_string(&c).unwrap();
    text.push_str("\nBroken claim.[^e-00000000ff] ^hand\n\n[^e-00000000ff]: Time: `2026-08-09T10:11:12Z`; Sources: [chat/t/zz](../sources/chat/_v2/t.md#source-00000000)\n");
    std::fs::write(&c, text).unwrap();
    let mut w = Committer::open(&root, WAIT).unwrap();
    let ok = w.commit(
        &patch(
            &revision(&root),
            vec![],
            vec![Edit::Append { path: "topics/a.md".into(), content: block(5, "m3", "Hello.", 0) }],
        ),
        Tier::Owner,
        Base::Check,
    );
    assert!(ok.is_ok(), "{ok:?}");
    // Even a write to the broken file is fine when it adds nothing broken …
    let ok = w.commit(
        &patch(
            &revision(&root),
            vec![],
            vec![Edit::Append { path: "topics/c.md".into(), content: block(6, "m3", "Fine.", 0) }],
        ),
        Tier::Owner,
        Base::Check,
    );
    assert!(ok.is_ok(), "{ok:?}");
    // … and one that adds a second broken citation is refused, naming it.
    let before = tree(&root);
    let e = w
        .commit(
            &patch(
                &revision(&root),
                vec![],
                vec![Edit::Append { path: "topics/c.md".into(), content: block(7, "nope", "Bad.", 0) }],
            ),
            Tier::Owner,
            Base::Check,
        )
        .unwrap_err();
    assert_eq!(e.code, Code::ValidationFailed);
    assert_eq!(e.diagnostics.len(), 1, "{:?}", e.diagnostics);
    assert!(e.diagnostics[0].message.contains("chat/t/nope"), "{:?}", e.diagnostics);
    assert_eq!(tree(&root), before);
}

#[test]
fn a_hand_edit_is_seen_by_the_id_index() {
    let (_dir, root) = fixture();
    // Warm the id index, then add an id by hand.
    drop(Committer::open(&root, WAIT).unwrap());
    let c = root.join("topics/c.md");
    let mut text = std::fs::read_to_string(&c).unwrap();
    text.push_str(&block(50, "m3", "Hand-made.", 0));
    std::fs::write(&c, text).unwrap();
    // A new file reusing that id is a duplicate, found without re-reading c.md by the patch.
    let mut w = Committer::open(&root, WAIT).unwrap();
    let e = w
        .commit(
            &patch(
                &revision(&root),
                vec![],
                vec![Edit::Create {
                    path: "topics/d.md".into(),
                    content: format!("# D\n{}", block(50, "m3", "Dup.", 0)),
                }],
            ),
            Tier::Owner,
            Base::Check,
        )
        .unwrap_err();
    assert_eq!(e.code, Code::ValidationFailed);
    assert!(e.diagnostics.iter().any(|d| d.code == scriptorium_topic_markdown::diag::Code::DuplicateBlockId));
}

#[test]
fn deleting_a_linked_block_is_refused_and_removing_the_link_too_is_accepted() {
    let (_dir, root) = fixture();
    let mut w = Committer::open(&root, WAIT).unwrap();
    w.commit(
        &patch(
            &revision(&root),
            vec![],
            vec![Edit::Create {
                path: "topics/l.md".into(),
                content: format!("# L\n\nSee [c](c.md#^b2).{}", block(8, "m3", " Linked.", 0)),
            }],
        ),
        Tier::Owner,
        Base::Check,
    )
    .unwrap();
    let e = w
        .commit(
            &patch(&revision(&root), vec![], vec![Edit::Delete { path: "topics/c.md".into() }]),
            Tier::Owner,
            Base::Check,
        )
        .unwrap_err();
    assert_eq!(e.code, Code::ValidationFailed);
    assert!(e.diagnostics.iter().all(|d| d.path == "topics/l.md"), "{:?}", e.diagnostics);
    w.commit(
        &patch(
            &revision(&root),
            vec![],
            vec![
                Edit::Delete { path: "topics/c.md".into() },
                Edit::StrReplace {
                    path: "topics/l.md".into(),
                    old: "See [c](c.md#^b2).".into(),
                    new: "See nothing.".into(),
                },
            ],
        ),
        Tier::Owner,
        Base::Check,
    )
    .unwrap();
}

/// `check_files` judges the named files as the whole workspace's check
/// does: ids shared with any file, links, pending and promoted citations,
/// hand edits since the last write.
#[test]
fn checking_some_files_gives_the_whole_checks_verdicts() {
    use scriptorium_source_archive::{Role, SourceId, SourceRecord, Speaker};
    use scriptorium_transaction::snapshot::{check_files, checkup};
    let (_dir, root) = fixture();
    let pending = SourceRecord::new(
        SourceId::new("chat", "t", "m9").unwrap(),
        Role::User,
        "2026-08-09T10:11:12Z",
        Speaker::from_transport(Some("7391"), Some("Ada")),
        true,
        "maybe".to_owned(),
    )
    .unwrap();
    let persona = format!(
        "---\nkind: persona\n---\n# Persona\n{}{}{}",
        block(11, "m1", "Answer briefly.", 1),
        block(12, "m2", "See [the budget](../a.md#^b1).", 1),
        block(13, "m9", "Maybe formal.", 1),
    );
    let mut w = Committer::open(&root, WAIT).unwrap();
    let p = patch(
        &revision(&root),
        vec![pending],
        vec![Edit::Create { path: "topics/self/persona.md".into(), content: persona }],
    );
    w.commit(&p, Tier::Owner, Base::Check).unwrap();
    drop(w);
    // By hand, outside any transaction: another file takes one of its ids.
    let c = std::fs::read_to_string(root.join("topics/c.md")).unwrap();
    std::fs::write(root.join("topics/c.md"), format!("{c}{}", block(11, "m2", "Taken.", 0))).unwrap();
    let verdicts =
        |states: &[scriptorium_topic_markdown::validate::BlockState]| -> Vec<(String, bool, bool)> {
            states
                .iter()
                .filter(|b| b.path == "topics/self/persona.md")
                .map(|b| (b.id.clone().unwrap_or_default(), b.valid, b.pending))
                .collect()
        };
    let some = check_files(&root, &["topics/self/persona.md", "topics/self/identity.md"]).unwrap();
    let all = checkup(&root).unwrap();
    let expected =
        [("b11".to_owned(), false, false), ("b12".into(), true, false), ("b13".into(), true, true)];
    assert_eq!(verdicts(&some.checked.blocks), expected);
    assert_eq!(verdicts(&all.checked.blocks), expected);
    // Only the named file and what it involves were read.
    let read: Vec<&str> = some.loaded.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(read, ["topics/a.md", "topics/c.md", "topics/self/persona.md"]);
    // A promotion makes the pending block eligible.
    let mut w = Committer::open(&root, WAIT).unwrap();
    w.promote(&["chat/t/m9".to_owned()], "owner").unwrap();
    drop(w);
    let some = check_files(&root, &["topics/self/persona.md"]).unwrap();
    assert_eq!(verdicts(&some.checked.blocks)[2], ("b13".to_owned(), true, false));
    // Nothing named exists: nothing is read.
    let none = check_files(&root, &["topics/self/identity.md"]).unwrap();
    assert!(none.loaded.is_empty() && none.checked.blocks.is_empty());
}
