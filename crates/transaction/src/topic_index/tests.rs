//! The index over a workspace on disk (built when missing or damaged, a
//! hand edit re-read and only it), and its answers against a naive model
//! over random changes.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::revision;

mod layers;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    crate::layout::ensure(root).unwrap();
    write(root, "topics/a.md", "# A\n\nAda wrote it. See [b](b.md#^b1). ^a1\n\nMore. ^a2\n");
    write(root, "topics/b.md", "# B\n\nBob. ^b1\n");
    write(root, "topics/c.md", "# C\n\nCarol. ^c1\n");
    dir
}

fn loaded(root: &Path) -> TopicIndex {
    TopicIndex::load(root, &revision::compute(root).unwrap()).unwrap()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// What the index says, in a form to compare.
fn answers(idx: &TopicIndex) -> (Vec<(String, FileFacts)>, usize, usize, Vec<bool>) {
    let ids = ["a1", "a2", "b1", "c1", "x9"].map(|id| idx.holds_block_id(id).unwrap());
    (idx.entries().unwrap().collect(), idx.file_count(), idx.block_count(), ids.to_vec())
}

#[test]
fn a_missing_table_is_built_then_read_in_place() {
    let dir = workspace();
    let root = dir.path();
    let mut idx = loaded(root);
    assert!(idx.dirty.get(), "built from the topic files");
    assert_eq!((idx.file_count(), idx.block_count()), (3, 4));
    assert!(idx.holds_block_id("a2").unwrap() && !idx.holds_block_id("a3").unwrap());
    assert!(idx.contains("topics/b.md") && !idx.contains("topics/d.md"));
    let (s, l) = idx.scope(&set(&["topics/b.md"])).unwrap();
    assert_eq!(s, set(&["topics/a.md", "topics/b.md"]), "a links to b");
    assert_eq!(l, s);
    let want = answers(&idx);
    idx.save(root);
    assert!(root.join(TOPICS_CACHE).is_file());
    let again = loaded(root);
    assert!(!again.dirty.get(), "nothing to re-read");
    assert!(again.state.borrow().changed.is_empty());
    assert_eq!(answers(&again), want);
}

#[test]
fn a_hand_edit_is_reread_and_only_it() {
    let dir = workspace();
    let root = dir.path();
    loaded(root).save(root);
    write(root, "topics/b.md", "# B\n\nBob, now with c's id. ^c1\n");
    fs::remove_file(root.join("topics/c.md")).unwrap();
    write(root, "topics/d.md", "# D\n\nDan. ^d1\n");
    let mut idx = loaded(root);
    let changed: Vec<String> = idx.state.borrow().changed.keys().cloned().collect();
    assert_eq!(changed, ["topics/b.md", "topics/c.md", "topics/d.md"]);
    assert_eq!(idx.facts("topics/b.md").unwrap().unwrap().ids, ["c1"]);
    assert_eq!(idx.facts("topics/c.md").unwrap(), None);
    assert_eq!(idx.previous["topics/b.md"].ids, ["b1"], "what the table said it held");
    assert!(!idx.holds_block_id("b1").unwrap() && idx.holds_block_id("d1").unwrap());
    assert_eq!((idx.file_count(), idx.block_count()), (3, 4));
    let want = answers(&idx);
    idx.save(root);
    let again = loaded(root);
    assert!(again.state.borrow().changed.is_empty());
    assert_eq!(answers(&again), want);
}

#[test]
fn a_damaged_or_stale_table_is_rebuilt_never_believed() {
    let dir = workspace();
    let root = dir.path();
    let mut first = loaded(root);
    let want = answers(&first);
    first.save(root);
    let path = root.join(TOPICS_CACHE);
    let whole = fs::read(&path).unwrap();
    let text = String::from_utf8(whole.clone()).unwrap();
    let line = text.find("b1\ttopics/b.md\n").unwrap();
    let mut garbled = whole.clone();
    garbled[line..line + 14].fill(0);
    let mut wrong_row = whole.clone();
    let row = text.find("topics/a.md\t").unwrap() + "topics/a.md\t".len();
    wrong_row[row..row + 64].copy_from_slice(&[b'0'; 64]);
    for (what, bytes) in [
        ("truncated", whole[..whole.len() / 2].to_vec()),
        ("empty", Vec::new()),
        ("the old format", b"scriptorium topics cache 3\n{\"path\":\"topics/a.md\"}\n".to_vec()),
        ("a line zeroed", garbled),
        ("a hash that is not the file's", wrong_row),
    ] {
        fs::write(&path, &bytes).unwrap();
        let mut idx = loaded(root);
        // The zeroed line is met by the lookups, which rebuild.
        let (s, _) = idx.scope(&set(&["topics/b.md"])).unwrap();
        assert_eq!(s, set(&["topics/a.md", "topics/b.md"]), "{what}");
        assert_eq!(answers(&idx), want, "{what}");
        assert!(idx.dirty.get(), "{what}: written again");
        idx.save(root);
        assert_eq!(fs::read(&path).unwrap(), whole, "{what}: the table a build gives");
    }
    fs::remove_file(&path).unwrap();
    assert_eq!(answers(&loaded(root)), want);
}

/// What the old maps computed: the scope over `sets` of facts.
fn naive_scope(
    sets: &[&BTreeMap<String, FileFacts>],
    dirty: &BTreeSet<String>,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let facts = |p: &str| sets.iter().filter_map(move |m| m.get(p)).collect::<Vec<_>>();
    let holders = |id: &str| -> Vec<String> {
        sets.iter()
            .flat_map(|m| m.iter())
            .filter(|(_, f)| f.ids.iter().any(|i| i == id))
            .map(|(p, _)| p.clone())
            .collect()
    };
    let mut s = dirty.clone();
    for path in dirty {
        for m in sets {
            s.extend(m.iter().filter(|(_, f)| f.links.contains(path)).map(|(p, _)| p.clone()));
        }
        for f in facts(path) {
            for id in &f.ids {
                s.extend(holders(id));
            }
        }
    }
    let mut l = s.clone();
    for path in &s {
        for f in facts(path) {
            l.extend(f.links.iter().cloned());
            for id in &f.ids {
                l.extend(holders(id));
            }
        }
    }
    (s, l)
}

fn arb_facts() -> impl Strategy<Value = FileFacts> {
    let pick = |v: Vec<&'static str>| prop::sample::select(v);
    (
        any::<u8>(),
        prop::collection::vec(pick(vec!["i1", "i2", "i3", "i4"]), 0..3),
        prop::collection::btree_set(
            pick(vec!["topics/f0.md", "topics/f1.md", "topics/f2.md", "topics/f3.md"]),
            0..2,
        ),
        prop::collection::btree_set(pick(vec!["sources/s0.md", "sources/s1.md"]), 0..2),
        prop::collection::btree_set(pick(vec!["p/t/0", "p/t/1"]), 0..2),
    )
        .prop_map(|(sha, ids, links, cites, sources)| FileFacts {
            sha256: format!("{sha:02x}").repeat(32),
            ids: ids.into_iter().map(str::to_owned).collect(),
            links: links.into_iter().map(str::to_owned).collect(),
            cites: cites.into_iter().map(str::to_owned).collect(),
            sources: sources.into_iter().map(str::to_owned).collect(),
        })
}

fn path_of(n: usize) -> String {
    format!("topics/f{n}.md")
}

type Files = BTreeMap<String, FileFacts>;

fn arb_files() -> impl Strategy<Value = Files> {
    prop::collection::btree_map((0usize..4).prop_map(path_of), arb_facts(), 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A table written at one commit, the files changed by hand before the
    /// next load, then changes recorded: every answer equals the naive
    /// model's (facts now, and what changed files held before), and the
    /// table saved equals a build of the files as they now are.
    #[test]
    fn the_index_follows_a_model(
        table_files in arb_files(),
        hand in prop::collection::vec((0usize..4, prop::option::of(arb_facts())), 0..3),
        changes in prop::collection::vec((0usize..4, prop::option::of(arb_facts())), 0..5),
        dirty in prop::collection::btree_set((0usize..4).prop_map(path_of), 1..3),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = TopicIndex {
            root: dir.path().to_owned(),
            state: RefCell::new(built(&table_files)),
            previous: BTreeMap::new(),
            previous_lost: false,
            dirty: Cell::new(false),
        };
        let mut files = table_files.clone();
        let mut previous: Files = BTreeMap::new();
        // Hand edits, as `load` finds them.
        for (n, f) in hand {
            let p = path_of(n);
            if let Some(old) = table_files.get(&p) {
                idx.previous.insert(p.clone(), old.clone());
                previous.insert(p.clone(), old.clone());
            }
            idx.state.get_mut().changed.insert(p.clone(), f.clone());
            match f { Some(f) => files.insert(p, f), None => files.remove(&p) };
        }
        let then: Files = changes.iter().filter_map(|(n, f)| Some((path_of(*n), f.clone()?))).collect();
        prop_assert_eq!(idx.scope_with(&dirty, &then).unwrap(), naive_scope(&[&files, &then], &dirty));
        for (n, f) in changes {
            let p = path_of(n);
            idx.set(&p, f.clone());
            let old = match f { Some(f) => files.insert(p.clone(), f), None => files.remove(&p) };
            if let Some(old) = old {
                previous.entry(p).or_insert(old);
            }
        }
        prop_assert_eq!(idx.scope(&dirty).unwrap(), naive_scope(&[&files, &previous], &dirty));
        let entries: Files = idx.entries().unwrap().collect();
        prop_assert_eq!(&entries, &files);
        prop_assert_eq!(idx.file_count(), files.len());
        prop_assert_eq!(idx.block_count(), files.values().map(|f| f.ids.len()).sum::<usize>());
        for n in 0..4 {
            let p = path_of(n);
            prop_assert_eq!(idx.contains(&p), files.contains_key(&p));
            let found = idx.facts(&p).unwrap();
            prop_assert_eq!(found.as_ref(), files.get(&p));
        }
        for id in ["i1", "i2", "i3", "i4"] {
            prop_assert_eq!(idx.holds_block_id(id).unwrap(), files.values().any(|f| f.ids.iter().any(|i| i == id)));
        }
        for src in ["p/t/0", "p/t/1"] {
            prop_assert_eq!(idx.cites_source(src).unwrap(), files.values().any(|f| f.sources.iter().any(|s| s == src)));
        }
        for cited in ["sources/s0.md", "sources/s1.md"] {
            let want: BTreeSet<String> = files.iter().chain(&previous)
                .filter(|(_, f)| f.cites.iter().any(|c| c == cited))
                .map(|(p, _)| p.clone()).collect();
            prop_assert_eq!(idx.citing(&set(&[cited])).unwrap(), want);
        }
        if idx.dirty.get() {
            crate::layout::ensure(dir.path()).unwrap();
            idx.save(dir.path());
            let saved = Layers::open(dir.path()).unwrap();
            prop_assert_eq!(&saved.all_facts().unwrap().into_iter().collect::<Files>(), &files);
        }
    }
}
