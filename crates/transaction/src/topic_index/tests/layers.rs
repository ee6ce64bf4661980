//! The delta over the base: what a save writes, what a load reads back,
//! and a delta lost, stale or damaged costing re-reading, never a wrong
//! answer.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::revision;
use crate::topic_facts::{facts_of, load as parse, FileFacts};
use crate::topic_index::TopicIndex;
use crate::topic_layers::{Layers, TOPICS_CACHE, TOPICS_DELTA};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn topic(n: usize, version: usize) -> String {
    let next = (n + 1) % FILES;
    format!("# T{n}\n\nAbout {n}, take {version}. See [t](t{next}.md#^t{next}-0). ^t{n}-0\n\nMore on {n}. ^t{n}-{version}\n")
}

const FILES: usize = 40;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    crate::layout::ensure(dir.path()).unwrap();
    for n in 0..FILES {
        write(dir.path(), &format!("topics/t{n}.md"), &topic(n, 1));
    }
    dir
}

/// Loads the index and saves it, as a commit does; says whether the load
/// had to re-read any file.
fn load_and_save(root: &Path) -> bool {
    let mut idx = TopicIndex::load(root, &revision::compute(root).unwrap()).unwrap();
    let reread = idx.changed_since_saved() > 0;
    idx.save(root);
    reread
}

fn holds(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// What the topic files say.
fn truth(root: &Path) -> BTreeMap<String, FileFacts> {
    let mut out = BTreeMap::new();
    for e in fs::read_dir(root.join("topics")).unwrap() {
        let e = e.unwrap();
        let rel = format!("topics/{}", e.file_name().to_str().unwrap());
        let bytes = fs::read(e.path()).unwrap();
        let sha: String =
            <sha2::Sha256 as sha2::Digest>::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        out.insert(rel.clone(), facts_of(&parse(&rel, &bytes).unwrap(), sha));
    }
    out
}

/// What the layers on disk say, without the loader's re-reading.
fn on_disk(root: &Path) -> BTreeMap<String, FileFacts> {
    Layers::open(root).unwrap().all_facts().unwrap().into_iter().collect()
}

#[test]
fn a_small_change_goes_to_the_delta_and_reads_back() {
    let dir = workspace();
    let root = dir.path();
    load_and_save(root);
    let base = fs::read(root.join(TOPICS_CACHE)).unwrap();
    assert!(!root.join(TOPICS_DELTA).exists());
    // A file edited (an id moved in), one removed, one added.
    write(root, "topics/t3.md", &topic(3, 2));
    fs::remove_file(root.join("topics/t7.md")).unwrap();
    write(root, "topics/new.md", "# New\n\nFresh. ^fresh\n");
    assert!(load_and_save(root), "the changes are read from the files");
    assert_eq!(fs::read(root.join(TOPICS_CACHE)).unwrap(), base, "the base is left as it was");
    let delta = fs::read(root.join(TOPICS_DELTA)).unwrap();
    assert!(holds(&delta, b"removed\ttopics/t7.md\n"));
    assert_eq!(on_disk(root), truth(root));
    assert!(!load_and_save(root), "the delta says what changed: nothing is re-read");
    // The removed file made again leaves the removed list.
    write(root, "topics/t7.md", &topic(7, 3));
    load_and_save(root);
    assert!(!holds(&fs::read(root.join(TOPICS_DELTA)).unwrap(), b"removed\t"));
    assert_eq!(on_disk(root), truth(root));
    let idx = TopicIndex::load(root, &revision::compute(root).unwrap()).unwrap();
    assert!(idx.holds_block_id("t3-2").unwrap() && !idx.holds_block_id("t3-1").unwrap());
    assert!(idx.holds_block_id("fresh").unwrap());
    assert_eq!(idx.linking_to("topics/t4.md").unwrap(), ["topics/t3.md"]);
}

#[test]
fn a_grown_delta_is_merged_into_the_base_a_build_would_give() {
    let dir = workspace();
    let root = dir.path();
    load_and_save(root);
    let mut merged = false;
    for n in 0..FILES {
        write(root, &format!("topics/t{n}.md"), &topic(n, 5));
        load_and_save(root);
        assert_eq!(on_disk(root), truth(root), "after file {n}");
        if !root.join(TOPICS_DELTA).exists() {
            merged = true;
            break;
        }
    }
    assert!(merged, "the delta grew to an eighth of the base and was merged");
    let built = tempfile::tempdir().unwrap();
    crate::layout::ensure(built.path()).unwrap();
    for (rel, _) in truth(root) {
        write(built.path(), &rel, &fs::read_to_string(root.join(&rel)).unwrap());
    }
    load_and_save(built.path());
    assert_eq!(
        fs::read(root.join(TOPICS_CACHE)).unwrap(),
        fs::read(built.path().join(TOPICS_CACHE)).unwrap()
    );
}

#[test]
fn a_lost_stale_or_damaged_delta_costs_a_reread_never_a_wrong_answer() {
    let dir = workspace();
    let root = dir.path();
    load_and_save(root);
    write(root, "topics/t1.md", &topic(1, 2));
    load_and_save(root);
    let old_delta = fs::read(root.join(TOPICS_DELTA)).unwrap();
    write(root, "topics/t1.md", &topic(1, 3));
    fs::remove_file(root.join("topics/t2.md")).unwrap();
    load_and_save(root);
    let delta = fs::read(root.join(TOPICS_DELTA)).unwrap();
    let mut zeroed = delta.clone();
    let mid = delta.len() / 2;
    zeroed[mid..mid + 8].fill(0);
    for (what, bytes) in [
        ("stale", Some(old_delta)),
        ("truncated", Some(delta[..delta.len() / 2].to_vec())),
        ("zeroed", Some(zeroed)),
        ("garbage", Some(b"scriptorium topics delta 1\nremoved\tno newline".to_vec())),
        ("lost", None),
    ] {
        match &bytes {
            Some(b) => fs::write(root.join(TOPICS_DELTA), b).unwrap(),
            None => fs::remove_file(root.join(TOPICS_DELTA)).unwrap(),
        }
        let idx = TopicIndex::load(root, &revision::compute(root).unwrap()).unwrap();
        let answers: BTreeMap<String, FileFacts> = idx.entries().unwrap().collect();
        assert_eq!(answers, truth(root), "{what}");
        assert!(idx.holds_block_id("t1-3").unwrap() && !idx.holds_block_id("t1-2").unwrap(), "{what}");
        assert!(!idx.contains("topics/t2.md"), "{what}");
        fs::write(root.join(TOPICS_DELTA), &delta).unwrap();
    }
}
