//! The table answers what it was built from, an update gives the bytes a
//! build of the new state gives, and a damaged table is refused.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::*;

fn facts(sha: u8, ids: &[&str], links: &[&str], cites: &[&str], sources: &[&str]) -> FileFacts {
    let v = |x: &[&str]| x.iter().map(|s| (*s).to_owned()).collect();
    FileFacts {
        sha256: format!("{sha:02x}").repeat(32),
        ids: v(ids),
        links: v(links),
        cites: v(cites),
        sources: v(sources),
    }
}

fn build(files: &BTreeMap<String, FileFacts>) -> Table {
    Table::build(files.iter().map(|(p, f)| (p.as_str(), f)))
}

/// The table after changing `old` into `new`, by [`Table::merged`].
fn updated(old: &BTreeMap<String, FileFacts>, new: &BTreeMap<String, FileFacts>) -> Vec<u8> {
    let table = build(old);
    let paths: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let changes: Vec<_> = paths
        .into_iter()
        .filter(|p| old.get(*p) != new.get(*p))
        .map(|p| (p.as_str(), old.get(p), new.get(p)))
        .collect();
    table.merged(&changes).expect("a whole table merges")
}

fn bytes_of(t: &Table) -> Vec<u8> {
    t.bytes.to_vec()
}

/// What a naive scan of `files` answers for `key` in `sec`.
fn naive(files: &BTreeMap<String, FileFacts>, sec: Sec, key: &str) -> Vec<String> {
    files
        .iter()
        .filter(|(_, f)| {
            let list = match sec {
                Sec::Ids => &f.ids,
                Sec::Links => &f.links,
                Sec::Cites => &f.cites,
                Sec::Sources => &f.sources,
                Sec::Files | Sec::Facts => unreachable!("pairs only"),
            };
            list.iter().any(|k| k == key)
        })
        .map(|(p, _)| p.clone())
        .collect()
}

fn sample() -> BTreeMap<String, FileFacts> {
    let mut m = BTreeMap::new();
    m.insert(
        "topics/a.md".to_owned(),
        facts(1, &["a1", "a2", "a1"], &["topics/b.md"], &["sources/t.md"], &["p/t/1"]),
    );
    m.insert("topics/b.md".to_owned(), facts(2, &["b1", "a2"], &[], &["sources/t.md"], &["p/t/2"]));
    m.insert("topics/odd\tname\\x\n.md".to_owned(), facts(3, &["tab\tid"], &["topics/a.md"], &[], &[]));
    m.insert("topics/empty.md".to_owned(), facts(4, &[], &[], &[], &[]));
    m
}

#[test]
fn lookups_answer_what_the_table_was_built_from() {
    let files = sample();
    let t = build(&files);
    for (p, f) in &files {
        assert_eq!(t.facts(p).unwrap().as_ref(), Some(f), "{p}");
    }
    assert_eq!(t.facts("topics/none.md").unwrap(), None);
    assert_eq!(t.facts("topics/a").unwrap(), None, "a prefix of a path is not the path");
    let rows = t.files().unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows["topics/a.md"], FileRow { sha256: "01".repeat(32), blocks: 3 });
    assert_eq!(rows["topics/odd\tname\\x\n.md"].blocks, 1);
    for (sec, key) in [
        (Sec::Ids, "a2"),
        (Sec::Ids, "a1"),
        (Sec::Ids, "tab\tid"),
        (Sec::Ids, "a"),
        (Sec::Links, "topics/a.md"),
        (Sec::Links, "topics/b.md"),
        (Sec::Cites, "sources/t.md"),
        (Sec::Sources, "p/t/2"),
        (Sec::Sources, "p/t/3"),
    ] {
        assert_eq!(t.paths(sec, key).unwrap(), naive(&files, sec, key), "{sec:?} {key}");
    }
    let all: BTreeMap<String, FileFacts> = t.all_facts().unwrap().into_iter().collect();
    assert_eq!(all, files);
    // What is written is what is read.
    let back = Table::from_vec(bytes_of(&t)).unwrap();
    assert_eq!(back.all_facts().unwrap(), t.all_facts().unwrap());
    let empty = build(&BTreeMap::new());
    assert_eq!(empty.files().unwrap().len(), 0);
    assert_eq!(empty.paths(Sec::Ids, "a1").unwrap(), Vec::<String>::new());
}

#[test]
fn updates_equal_a_build_of_the_new_state() {
    let old = sample();
    // A file added, one removed, one renamed, an id moving between files,
    // an id kept by a changed file.
    let mut new = old.clone();
    new.insert("topics/c.md".to_owned(), facts(5, &["c1", "b1"], &["topics/a.md"], &[], &["p/t/9"]));
    new.remove("topics/empty.md");
    let moved = new.remove("topics/odd\tname\\x\n.md").unwrap();
    new.insert("topics/renamed.md".to_owned(), moved);
    new.insert("topics/b.md".to_owned(), facts(6, &["a2"], &["topics/c.md"], &[], &["p/t/2"]));
    let bytes = updated(&old, &new);
    assert_eq!(bytes, bytes_of(&build(&new)));
    let t = Table::from_vec(bytes).unwrap();
    assert_eq!(t.paths(Sec::Ids, "b1").unwrap(), vec!["topics/c.md".to_owned()]);
    assert_eq!(t.paths(Sec::Ids, "a2").unwrap(), vec!["topics/a.md".to_owned(), "topics/b.md".to_owned()]);
    assert_eq!(t.paths(Sec::Cites, "sources/t.md").unwrap(), vec!["topics/a.md".to_owned()]);
    assert_eq!(t.facts("topics/empty.md").unwrap(), None);
    // Nothing changed: the same bytes.
    assert_eq!(updated(&new, &new), bytes_of(&build(&new)));
}

#[test]
fn an_update_against_lines_the_table_lacks_is_refused() {
    let files = sample();
    let t = build(&files);
    let stranger = facts(9, &["zz"], &[], &[], &[]);
    // Removing lines that are not there, or adding lines that are.
    assert_eq!(t.merged(&[("topics/x.md", Some(&stranger), None)]), Err(Damaged));
    let a = &files["topics/a.md"];
    assert_eq!(t.merged(&[("topics/a.md", None, Some(a))]), Err(Damaged));
}

#[test]
fn a_damaged_table_is_refused() {
    let whole = bytes_of(&build(&sample()));
    assert!(Table::from_vec(whole.clone()).is_ok());
    // Truncated anywhere, empty, or longer than it says.
    for cut in [0, 1, 10, HEADER_LEN, whole.len() / 2, whole.len() - 1] {
        assert!(Table::from_vec(whole[..cut].to_vec()).is_err(), "cut at {cut}");
    }
    let mut longer = whole.clone();
    longer.extend_from_slice(b"more\n");
    assert!(Table::from_vec(longer).is_err());
    // Another format, or its header changed.
    assert!(Table::from_vec(b"scriptorium topics cache 3\n{}\n".to_vec()).is_err());
    let mut head = whole.clone();
    head[MAGIC.len() + 3] = b'x';
    assert!(Table::from_vec(head).is_err());
    // The same length, a line garbled: the lookup that meets it says so.
    let text = String::from_utf8(whole.clone()).unwrap();
    let at = text.find("a2\ttopics/a.md\n").unwrap();
    let mut garbled = whole.clone();
    garbled[at..at + 14].copy_from_slice(b"\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
    let t = Table::from_vec(garbled).unwrap();
    assert_eq!(t.paths(Sec::Ids, "a2"), Err(Damaged));
    let at = text.find("topics/b.md\t02").unwrap();
    let mut garbled = whole;
    garbled[at + 12] = b'z';
    let t = Table::from_vec(garbled).unwrap();
    assert!(t.files().is_err());
}

fn arb_facts() -> impl Strategy<Value = FileFacts> {
    let ids = prop::collection::vec(prop::sample::select(vec!["i1", "i2", "i3", "i\t4", "i5"]), 0..4);
    let targets = prop::collection::btree_set(
        prop::sample::select(vec!["topics/f0.md", "topics/f1.md", "topics/f2.md"]),
        0..3,
    );
    let cites =
        prop::collection::btree_set(prop::sample::select(vec!["sources/s0.md", "sources/s1.md"]), 0..2);
    let sources = prop::collection::btree_set(prop::sample::select(vec!["p/t/0", "p/t/1", "p/t/2"]), 0..3);
    (any::<u8>(), ids, targets, cites, sources).prop_map(|(sha, ids, links, cites, sources)| {
        let own = |s: BTreeSet<&str>| s.into_iter().map(str::to_owned).collect();
        FileFacts {
            sha256: format!("{sha:02x}").repeat(32),
            ids: ids.into_iter().map(str::to_owned).collect(),
            links: own(links),
            cites: own(cites),
            sources: own(sources),
        }
    })
}

/// A change to one of six files: its new facts, or its removal.
fn arb_change() -> impl Strategy<Value = (usize, Option<FileFacts>)> {
    (0usize..6, prop::option::weighted(0.8, arb_facts()))
}

fn path_of(n: usize) -> String {
    ["topics/f0.md", "topics/f1.md", "topics/f2.md", "topics/g/h.md", "topics/f\\0.md", "topics/f 0.md"][n]
        .to_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Over random batches of changes, the updated table equals a build
    /// of the model byte for byte, and every lookup equals a naive scan.
    #[test]
    fn the_table_follows_a_model(batches in prop::collection::vec(prop::collection::vec(arb_change(), 1..4), 1..8)) {
        let mut model: BTreeMap<String, FileFacts> = BTreeMap::new();
        let mut table = build(&model);
        for batch in batches {
            let before = model.clone();
            for (n, f) in batch {
                match f {
                    Some(f) => model.insert(path_of(n), f),
                    None => model.remove(&path_of(n)),
                };
            }
            let paths: BTreeSet<&String> = before.keys().chain(model.keys()).collect();
            let changes: Vec<_> = paths
                .into_iter()
                .filter(|p| before.get(*p) != model.get(*p))
                .map(|p| (p.as_str(), before.get(p), model.get(p)))
                .collect();
            table = Table::from_vec(table.merged(&changes).unwrap()).unwrap();
            prop_assert_eq!(bytes_of(&table), bytes_of(&build(&model)));
            let rows = table.files().unwrap();
            prop_assert_eq!(rows.len(), model.len());
            for n in 0..6 {
                let p = path_of(n);
                let found = table.facts(&p).unwrap();
                prop_assert_eq!(found.as_ref(), model.get(&p));
                prop_assert_eq!(rows.get(&p).map(|r| r.blocks), model.get(&p).map(|f| f.ids.len()));
            }
            for (sec, keys) in [
                (Sec::Ids, &["i1", "i2", "i3", "i\t4", "i5", "i"][..]),
                (Sec::Links, &["topics/f0.md", "topics/f1.md", "topics/f2.md"][..]),
                (Sec::Cites, &["sources/s0.md", "sources/s1.md"][..]),
                (Sec::Sources, &["p/t/0", "p/t/1", "p/t/2"][..]),
            ] {
                for key in keys {
                    prop_assert_eq!(table.paths(sec, key).unwrap(), naive(&model, sec, key));
                }
            }
        }
    }
}
