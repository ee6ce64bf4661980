//! A state-machine property test: random commits, stale and invalid
//! commits, crashes and reopens against a model of the topic files. After
//! every step the disk equals the model, the derived views and the search
//! index equal a rebuild from scratch, and the id and link index answers
//! what the files say (after a commit, its table is byte for byte the one a
//! build from nothing gives).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use proptest::prelude::*;
use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace as index;
use scriptorium_testkit::{ada_record, block, patch, revision, tree};
use scriptorium_transaction::disk::{Faults, Mode};
use scriptorium_transaction::validation::{self, FileFacts, TopicIndex, TOPICS_CACHE, TOPICS_DELTA};
use scriptorium_transaction::{Base, Code, Committer, Edit, Tier};

const WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
enum Op {
    /// Append a block to file `f % files` (or create file `f` when absent).
    Write { f: u8 },
    /// The same with a stale base revision.
    Stale { f: u8 },
    /// A block citing a record that is not archived.
    Invalid { f: u8 },
    /// A write that crashes after `at` write calls, then a reopen.
    Crash { f: u8, at: u8 },
    /// Delete file `f` if it exists.
    Delete { f: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..4).prop_map(|f| Op::Write { f }),
        1 => (0u8..4).prop_map(|f| Op::Stale { f }),
        1 => (0u8..4).prop_map(|f| Op::Invalid { f }),
        2 => (0u8..4, 0u8..40).prop_map(|(f, at)| Op::Crash { f, at }),
        1 => (0u8..4).prop_map(|f| Op::Delete { f }),
    ]
}

struct Model {
    files: BTreeMap<String, String>,
    next: u32,
}

fn path_of(f: u8) -> String {
    format!("topics/f{f}.md")
}

/// The edit and record that add block `n` (a unique word `wordN`) to `path`.
fn write_edit(m: &Model, path: &str, n: u32) -> (Edit, scriptorium_source_archive::SourceRecord) {
    let msg = format!("r{n}");
    let rec = ada_record(&msg, &format!("record {n}"));
    let b = block(n, &msg, &format!("Fact word{n} recorded."), 0);
    let edit = if m.files.contains_key(path) {
        Edit::Append { path: path.to_owned(), content: b }
    } else {
        Edit::Create { path: path.to_owned(), content: format!("# {path}\n{b}") }
    };
    (edit, rec)
}

fn apply(m: &mut Model, edit: &Edit) {
    match edit {
        Edit::Create { path, content } => {
            m.files.insert(path.clone(), content.clone());
        }
        Edit::Append { path, content } => m.files.get_mut(path).unwrap().push_str(content),
        Edit::Delete { path } => {
            m.files.remove(path);
        }
        _ => unreachable!(),
    }
}

fn topics_on_disk(root: &Path) -> BTreeMap<String, String> {
    tree(root)
        .into_iter()
        .filter(|(p, _)| p.starts_with("topics/"))
        .map(|(p, b)| (p, String::from_utf8(b).unwrap()))
        .collect()
}

fn hits(root: &Path, query: &str) -> Vec<(String, String)> {
    let opened = index::open(root, TokenizerConfig::default()).unwrap();
    let hits = opened.view.search(query, &Filters::default(), 50, Bm25::default()).unwrap();
    let mut out: Vec<(String, String)> = hits
        .iter()
        .map(|h| {
            let s = opened.view.stored(h).unwrap();
            (s.path.to_owned(), s.anchor.to_owned())
        })
        .collect();
    out.sort();
    out
}

/// Derived views and index agree with a rebuild of a copy from scratch.
fn check_derived(root: &Path, model: &Model) {
    let croot = scriptorium_testkit::assert_views_rebuilt(root);
    let croot = croot.path().join("ws");
    for n in (1..model.next).step_by(3) {
        let q = format!("word{n}");
        assert_eq!(hits(root, &q), hits(&croot, &q), "index answers for {q} differ from a rebuild");
    }
    assert_eq!(hits(root, "record"), hits(&croot, "record"));
}

/// The id and link index answers what the topic files say; when `exact`
/// (a commit just saved it) and no delta sits beside its table, the table is
/// the one a build gives.
fn check_topic_index(root: &Path, exact: bool) {
    use sha2::Digest;
    let want: BTreeMap<String, FileFacts> = topics_on_disk(root)
        .into_iter()
        .map(|(p, text)| {
            let sha: String =
                sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
            let facts = validation::facts_of(&validation::load(&p, text.as_bytes()).unwrap(), sha);
            (p, facts)
        })
        .collect();
    let table = std::fs::read(root.join(TOPICS_CACHE)).ok();
    let rev = scriptorium_transaction::revision::compute(root).unwrap();
    let idx = TopicIndex::load(root, &rev).unwrap();
    assert_eq!(idx.entries().unwrap().collect::<BTreeMap<_, _>>(), want);
    assert_eq!(idx.file_count(), want.len());
    assert_eq!(idx.block_count(), want.values().map(|f| f.ids.len()).sum::<usize>());
    // A delta beside the table is merged only once it has grown.
    if exact && !root.join(TOPICS_DELTA).exists() {
        let copy = tempfile::tempdir().unwrap();
        scriptorium_transaction::layout::ensure(copy.path()).unwrap();
        for (rel, bytes) in tree(root).into_iter().filter(|(p, _)| p.starts_with("topics/")) {
            let p = copy.path().join(&rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let mut fresh =
            TopicIndex::load(copy.path(), &scriptorium_transaction::revision::compute(copy.path()).unwrap())
                .unwrap();
        fresh.save(copy.path());
        assert_eq!(table, std::fs::read(copy.path().join(TOPICS_CACHE)).ok(), "the table a build gives");
    }
}

fn run(ops: &[Op]) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let mut model = Model { files: BTreeMap::new(), next: 1 };
    let mut stale = revision(&root);
    for op in ops {
        let base = revision(&root);
        let mut committed = false;
        match op.clone() {
            Op::Write { f } | Op::Stale { f } => {
                let stale_op = matches!(op, Op::Stale { .. });
                let n = model.next;
                let (edit, rec) = write_edit(&model, &path_of(f), n);
                let b = if stale_op { stale.clone() } else { base.clone() };
                let mut w = Committer::open(&root, WAIT).unwrap();
                let r = w.commit(&patch(&b, vec![rec], vec![edit.clone()]), Tier::Owner, Base::Check);
                drop(w);
                if stale_op && b != base {
                    assert_eq!(r.unwrap_err().code, Code::Conflict);
                    assert_eq!(revision(&root), base);
                } else {
                    let c = r.unwrap();
                    committed = true;
                    assert_eq!(c.revision, revision(&root));
                    apply(&mut model, &edit);
                    model.next += 1;
                }
            }
            Op::Invalid { f } => {
                let n = model.next;
                let (edit, _) = write_edit(&model, &path_of(f), n);
                let mut w = Committer::open(&root, WAIT).unwrap();
                let r = w.commit(&patch(&base, vec![], vec![edit]), Tier::Owner, Base::Check);
                drop(w);
                let e = r.unwrap_err();
                assert_eq!(e.code, Code::ValidationFailed, "{e}");
                assert!(!e.diagnostics.is_empty());
                assert_eq!(revision(&root), base);
            }
            Op::Delete { f } => {
                let path = path_of(f);
                if !model.files.contains_key(&path) {
                    continue;
                }
                let edit = Edit::Delete { path };
                let mut w = Committer::open(&root, WAIT).unwrap();
                let r = w.commit(&patch(&base, vec![], vec![edit.clone()]), Tier::Owner, Base::Check);
                drop(w);
                r.unwrap();
                committed = true;
                apply(&mut model, &edit);
            }
            Op::Crash { f, at } => {
                let n = model.next;
                let (edit, rec) = write_edit(&model, &path_of(f), n);
                let faults = Faults::new(Mode::CrashAfter(usize::from(at)));
                let r = {
                    let mut w = Committer::open_with(&root, WAIT, &faults).unwrap();
                    w.commit(&patch(&base, vec![rec], vec![edit.clone()]), Tier::Owner, Base::Check)
                };
                drop(Committer::open(&root, WAIT).unwrap());
                let now = revision(&root);
                if now != base {
                    apply(&mut model, &edit);
                    model.next += 1;
                } else {
                    assert!(r.is_err(), "an acknowledged commit was lost");
                    // The record number stays free: nothing was archived.
                }
            }
        }
        assert_eq!(topics_on_disk(&root), model.files, "after {op:?}");
        check_derived(&root, &model);
        check_topic_index(&root, committed);
        stale = base;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, max_shrink_iters: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_workspace_follows_the_model(ops in proptest::collection::vec(op(), 1..10)) {
        run(&ops);
    }
}
