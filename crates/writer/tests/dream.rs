//! The dream pass on real workspaces: the offline hygiene (twins merged
//! citing every source, links kept, aliases sorted, idempotent, valid,
//! `sources/` untouched, thousands of blocks and a huge one), the selector
//! with its ledger, explicit picks and the focus, and a model that fails
//! halfway with nothing of it applied.

use std::path::Path;
use std::time::Duration;

use scriptorium_scheduler::dream::Unchanged;
use scriptorium_scheduler::Code;
use scriptorium_source_archive::input::parse_record;
use scriptorium_source_archive::{SourceId, SourceRecord};
use scriptorium_testkit::*;
use scriptorium_transaction::{snapshot, Base, Committer, Edit, Tier};
use scriptorium_writer::agent::ModelWriter;
use scriptorium_writer::dream::{self, hygiene, Caps, Ledger, Options, Pick};
use scriptorium_writer::input::Evidence;
use scriptorium_writer::model::ModelError;
use serde_json::json;

fn rec(thread: &str, message: &str, who: (&str, &str), content: &str, time: &str) -> SourceRecord {
    let v = json!({"provider": "chat", "thread": thread, "message": message, "role": "user",
        "timestamp": time, "content": content, "speaker_id": who.0, "speaker_display": who.1});
    parse_record(&v.to_string()).unwrap()
}

const ADA: (&str, &str) = ("7391", "Ada");
const BO: (&str, &str) = ("4402", "Bo");

fn evidence(thread: &str, message: &str) -> Evidence {
    let id = SourceId::new("chat", thread, message).unwrap();
    Evidence::new(&id, "2026-03-01", &id.v2_path())
}

/// A block: its text, its id, and the records `(thread, message)` it cites.
type Block<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

/// A topic file at `path`: `head`, then each block, then each definition
/// once.
fn file(path: &str, head: &str, blocks: &[Block<'_>]) -> String {
    let mut out = head.to_owned();
    let mut defs: Vec<String> = Vec::new();
    for (text, id, cites) in blocks {
        let refs: String = cites.iter().map(|(t, m)| format!("[^{}]", evidence(t, m).label())).collect();
        out.push_str(&format!("{text}{refs} ^{id}\n\n"));
        for (t, m) in *cites {
            let d = evidence(t, m).definition(path);
            if !defs.contains(&d) {
                defs.push(d);
            }
        }
    }
    out + &defs.join("\n") + "\n"
}

fn commit(root: &Path, sources: Vec<SourceRecord>, files: &[(&str, String)]) {
    let edits =
        files.iter().map(|(p, c)| Edit::Create { path: (*p).to_owned(), content: c.clone() }).collect();
    Committer::open(root, Duration::from_secs(5))
        .unwrap()
        .commit(&patch("", sources, edits), Tier::Owner, Base::Any)
        .unwrap();
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap()
}

/// Every block's state, after a check of the whole workspace that must
/// find nothing wrong.
fn valid(root: &Path) -> snapshot::Checkup {
    let c = snapshot::checkup(root).unwrap();
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    c
}

fn sources_of(c: &snapshot::Checkup, path: &str, id: &str) -> Vec<String> {
    let b = c.checked.blocks.iter().find(|b| b.path == path && b.id.as_deref() == Some(id)).unwrap();
    b.sources.clone()
}

fn options(pick: Pick, focus: Option<&str>) -> Options {
    Options {
        pick,
        focus: focus.map(str::to_owned),
        caps: Caps { max_conversations: 10, max_bytes: 1 << 20 },
        lock_timeout: Duration::from_secs(5),
    }
}

/// Ada's fact said twice (in core.md and her card, from two records), a
/// file linking to the card's copy, her card's aliases unsorted.
fn twins(root: &Path) {
    let records = vec![
        rec("t1", "m1", ADA, "I lead the budget review.", "2026-03-01T10:00:00Z"),
        rec("t1", "m6", ADA, "I lead the budget review, as I said.", "2026-03-02T10:00:00Z"),
        rec("t2", "m7", BO, "I drink tea.", "2026-03-03T10:00:00Z"),
    ];
    let card = "topics/people/ada.md";
    let files = [
        (
            "topics/core.md",
            file("topics/core.md", "# Core\n\n", &[("Ada leads the budget review.", "c1", &[("t1", "m1")])]),
        ),
        (
            card,
            file(
                card,
                "---\nkind: person\naliases: [ada, Ada Lovelace, Ada, ada]\n---\n# Ada\n\n",
                &[
                    ("ada  leads the\nBudget Review.", "a1", &[("t1", "m6"), ("t1", "m1")]),
                    ("Ada likes long walks.", "a2", &[("t1", "m6")]),
                ],
            ),
        ),
        (
            "topics/links.md",
            file(
                "topics/links.md",
                "",
                &[("See [[people/ada#^a1|Ada]] and [this](people/ada.md#^a1).", "l1", &[("t2", "m7")])],
            ),
        ),
    ];
    commit(root, records, &files);
}

#[test]
fn hygiene_merges_twins_keeps_links_and_sorts_aliases_once() {
    let dir = workspace();
    let root = dir.path();
    twins(root);
    let archive_before =
        tree(root).into_iter().filter(|(p, _)| p.starts_with("sources/")).collect::<Vec<_>>();
    let done = hygiene::run(root, Duration::from_secs(5)).unwrap();
    assert_eq!((done.merged, done.aliases), (1, 1));
    let mut changed = done.written.unwrap().changed;
    changed.sort();
    assert_eq!(changed, ["topics/core.md", "topics/links.md", "topics/people/ada.md"]);
    let c = valid(root);
    // core.md's block stays, citing both records; the card's twin is gone.
    assert_eq!(sources_of(&c, "topics/core.md", "c1"), ["chat/t1/m1", "chat/t1/m6"]);
    let card = read(root, "topics/people/ada.md");
    assert!(!card.contains("^a1") && card.contains("^a2"), "{card}");
    assert!(card.contains("aliases: [Ada, ada, Ada Lovelace]"), "{card}");
    // The link follows the block that stays.
    let l1 = c.checked.blocks.iter().find(|b| b.id.as_deref() == Some("l1")).unwrap();
    assert!(
        l1.links.iter().all(|t| t.path == "topics/core.md" && t.block_id.as_deref() == Some("c1")),
        "{l1:?}"
    );
    assert_eq!(l1.links.len(), 2);
    let archive_after = tree(root).into_iter().filter(|(p, _)| p.starts_with("sources/")).collect::<Vec<_>>();
    assert_eq!(archive_after, archive_before, "sources/ is never touched");
    // A second run changes nothing.
    let rev = revision(root);
    assert_eq!(hygiene::run(root, Duration::from_secs(5)).unwrap(), hygiene::Done::default());
    assert_eq!(revision(root), rev);
}

#[test]
fn hygiene_over_thousands_of_blocks_and_a_huge_one() {
    let dir = workspace();
    let root = dir.path();
    let records: Vec<SourceRecord> =
        (0..20).map(|m| rec("t1", &format!("m{m}"), ADA, "words", "2026-03-01T10:00:00Z")).collect();
    let huge = "y".repeat(1 << 20);
    let mut files = Vec::new();
    for f in 0..20 {
        let path = format!("topics/f{f:02}.md");
        let texts: Vec<(String, String, String)> = (0..100)
            .map(|b| {
                (
                    format!("Fact number {}.", (f * 100 + b) % 1000),
                    format!("b{f}-{b}"),
                    format!("m{}", (f + b) % 20),
                )
            })
            .chain((f < 2).then(|| (huge.clone(), format!("huge{f}"), "m1".to_owned())))
            .collect();
        let cites: Vec<[(&str, &str); 1]> = texts.iter().map(|(_, _, m)| [("t1", m.as_str())]).collect();
        let blocks: Vec<Block<'_>> =
            texts.iter().zip(&cites).map(|((t, id, _), c)| (t.as_str(), id.as_str(), &c[..])).collect();
        files.push((path.clone(), file(&path, "# F\n\n", &blocks)));
    }
    let files: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
    commit(root, records, &files);
    let done = hygiene::run(root, Duration::from_secs(30)).unwrap();
    // 2,000 blocks saying 1,000 facts, each twice, and the huge pair.
    assert_eq!(done.merged, 1001);
    let c = valid(root);
    assert_eq!(c.checked.blocks.len(), 1001);
    assert_eq!(hygiene::run(root, Duration::from_secs(30)).unwrap(), hygiene::Done::default());
}

fn conversations(root: &Path) {
    let records = vec![
        rec("t1", "m1", ADA, "I lead the budget review.", "2026-03-01T10:00:00Z"),
        rec("t1", "m2", ADA, "The offsite is in May.", "2026-03-01T11:00:00Z"),
        rec("t1", "m3", BO, "Fine by me.", "2026-03-01T12:00:00Z"),
        rec("t2", "m4", BO, "I drink green tea every morning.", "2026-03-05T09:00:00Z"),
    ];
    commit(root, records, &[]);
}

#[test]
fn a_model_pass_reflects_once_and_the_next_takes_what_is_new() {
    let dir = workspace();
    let root = dir.path();
    conversations(root);
    let mut w = ModelWriter::new(ScriptedModel::new(vec![calls(&[("finish", json!({}))])]));
    let both = Pick::Conversations(vec!["chat/t1".into(), "chat/t2".into()]);
    let r = dream::run(root, &options(both, Some("Ada's plans")), Some(&mut w)).unwrap();
    let selected: Vec<(&str, usize)> =
        r.selected.iter().map(|s| (s.conversation.as_str(), s.records)).collect();
    assert_eq!(selected, [("chat/t1", 3), ("chat/t2", 1)]);
    assert_eq!((r.changed.len(), r.reason), (0, Some(Unchanged::NothingToChange)));
    let sent = w.model.seen[0][1].content.clone().unwrap();
    assert!(sent.contains("## Records to reflect on: 4"), "{sent}");
    assert!(sent.contains(
        "{\"ref\":\"chat/t1/m2\",\"speaker\":\"Ada [id 7391]\",\"content\":\"The offsite is in May.\"}"
    ));
    assert!(sent.contains("```json\n{\"focus\":\"Ada's plans\"}\n```"), "{sent}");
    assert_eq!(Ledger::load(root).through("chat/t1"), Some("chat/t1/m3"));
    // Nothing new: nothing selected, the model is not asked.
    let mut idle = ModelWriter::new(ScriptedModel::new(Vec::new()));
    let r = dream::run(root, &options(Pick::Auto, None), Some(&mut idle)).unwrap();
    assert_eq!((r.selected.len(), r.reason), (0, Some(Unchanged::NothingSelected)));
    assert!(idle.model.seen.is_empty());
    // A new record: only it.
    commit(root, vec![rec("t2", "m5", BO, "Tea again.", "2026-03-06T09:00:00Z")], &[]);
    let mut w = ModelWriter::new(ScriptedModel::new(vec![calls(&[("finish", json!({}))])]));
    let r = dream::run(root, &options(Pick::Auto, None), Some(&mut w)).unwrap();
    let selected: Vec<(&str, usize)> =
        r.selected.iter().map(|s| (s.conversation.as_str(), s.records)).collect();
    assert_eq!(selected, [("chat/t2", 1)]);
}

#[test]
fn without_a_model_the_pass_reports_what_a_model_would_take() {
    let dir = workspace();
    let root = dir.path();
    conversations(root);
    let r = dream::run(root, &options(Pick::Auto, None), None).unwrap();
    assert_eq!((r.selected.len(), r.reason), (2, Some(Unchanged::NoModel)));
    assert_eq!(Ledger::load(root), Ledger::default(), "nothing was reflected on");
    twins(root);
    let r = dream::run(root, &options(Pick::Auto, None), None).unwrap();
    assert_eq!((r.hygiene.merged, r.reason), (1, None));
    assert_eq!(r.changed, ["topics/core.md", "topics/links.md", "topics/people/ada.md"]);
    let empty = workspace();
    let r = dream::run(empty.path(), &options(Pick::Auto, None), None).unwrap();
    assert_eq!((r.selected.len(), r.changed.len(), r.reason), (0, 0, Some(Unchanged::NothingSelected)));
}

#[test]
fn picks_asked_for_by_name_by_recency_and_by_focus() {
    let dir = workspace();
    let root = dir.path();
    conversations(root);
    twins(root);
    let before = revision(root);
    let named = Pick::Conversations(vec!["chat/t2".into(), "chat/nope".into()]);
    let e = dream::run(root, &options(named, None), None).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
    assert!(e.reason.contains("\"chat/nope\""), "{}", e.reason);
    assert_eq!(revision(root), before, "refused before anything changed");
    let e = dream::run(root, &options(Pick::Conversations(vec!["chat/t 2".into()]), None), None).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    let e = dream::run(root, &options(Pick::Auto, Some("  ")), None).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    let names = |p: Pick, focus: Option<&str>| -> Vec<String> {
        let r = dream::run(root, &options(p, focus), None).unwrap();
        r.selected.into_iter().map(|s| s.conversation).collect()
    };
    assert_eq!(
        names(Pick::Conversations(vec!["chat/t2".into(), "chat/t1".into(), "chat/t2".into()]), None),
        ["chat/t2", "chat/t1"]
    );
    assert_eq!(names(Pick::Recent(1), None), ["chat/t2"]);
    assert_eq!(names(Pick::Auto, Some("budget review")), ["chat/t1"]);
    assert_eq!(names(Pick::Auto, Some("xylophone")), Vec::<String>::new());
}

#[test]
fn a_model_failing_halfway_applies_nothing_of_its_own() {
    let dir = workspace();
    let root = dir.path();
    conversations(root);
    twins(root);
    let e = evidence("t1", "m1");
    let created = format!("# New\n\nAda leads.[^{}] ^n1\n\n{}\n", e.label(), e.definition("topics/new.md"));
    let mut w = ModelWriter::new(ScriptedModel::new(vec![
        calls(&[("create", json!({"path": "topics/new.md", "content": created}))]),
        calls(&[("read", json!({"path": "topics/core.md"}))]),
        Err(ModelError::new(Code::ModelUnavailable, "HTTP 500 from the endpoint")),
    ]));
    let f = dream::run(root, &options(Pick::Auto, None), Some(&mut w)).unwrap_err();
    assert_eq!((f.code, f.retryable), (Code::ModelUnavailable, true));
    assert!(f.reason.contains("offline hygiene before it was committed"), "{}", f.reason);
    assert!(!root.join("topics/new.md").exists(), "nothing the model staged was written");
    assert_eq!(Ledger::load(root), Ledger::default(), "the ledger did not move");
    // The hygiene stands, whole; the workspace is valid.
    assert!(!read(root, "topics/people/ada.md").contains("^a1"));
    valid(root);
    assert_eq!(hygiene::run(root, Duration::from_secs(5)).unwrap(), hygiene::Done::default());
    // The same records are selected again next time.
    let r = dream::run(root, &options(Pick::Auto, None), None).unwrap();
    assert_eq!(r.selected.len(), 2);
}
