//! Transaction helpers: workspaces, records, cited blocks and patches, and
//! the snapshots of a workspace's files and derived views the tests compare.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use scriptorium_source_archive::{Role, SourceId, SourceRecord, Speaker};
use scriptorium_transaction::{Base, Committer, Edit, Patch, Tier};

/// The v2 archive file of thread `chat/t`, where [`ada_record`]s go.
pub const THREAD: &str = "sources/chat/_v2/t.md";

/// A record Ada (`7391`) said in thread `chat/t`.
pub fn ada_record(message: &str, content: &str) -> SourceRecord {
    let id = SourceId::new("chat", "t", message).unwrap();
    let speaker = Speaker::from_transport(Some("7391"), Some("Ada"));
    SourceRecord::new(id, Role::User, "2026-08-09T10:11:12Z", speaker, false, content.to_owned()).unwrap()
}

/// A block citing record `message` from a file at `topics/<depth dirs>/x.md`.
pub fn block(n: u32, message: &str, text: &str, depth: usize) -> String {
    let id = SourceId::new("chat", "t", message).unwrap();
    let up = "../".repeat(depth + 1);
    format!(
        "\n{text}[^e-{n:010x}] ^b{n}\n\n[^e-{n:010x}]: Time: `2026-08-09T10:11:12Z`; Sources: [{}]({up}{}#{})\n",
        id.text(),
        id.v2_path(),
        id.anchor()
    )
}

/// An owner patch on `base` (`""`: an empty workspace).
pub fn patch(base: &str, sources: Vec<SourceRecord>, edits: Vec<Edit>) -> Patch {
    Patch { base_revision: base.to_owned(), message: "test".into(), sources, edits }
}

/// The workspace revision of `root`.
pub fn revision(root: &Path) -> String {
    scriptorium_transaction::revision::compute(root).unwrap().hex
}

/// Every file under `topics/` and `sources/`, by relative path.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for top in ["topics", "sources"] {
        let mut stack = vec![root.join(top)];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            for e in rd {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
    }
    out
}

/// A workspace with three records, `topics/a.md` (one block) and
/// `topics/c.md` (one block).
pub fn fixture() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let mut w = Committer::open(&root, Duration::from_secs(5)).unwrap();
    let p = patch(
        "",
        vec![
            ada_record("m1", "the budget is 50k"),
            ada_record("m2", "the deadline is friday"),
            ada_record("m3", "hello"),
        ],
        vec![
            Edit::Create {
                path: "topics/a.md".into(),
                content: format!("# A\n{}", block(1, "m1", "Budget is 50k.", 0)),
            },
            Edit::Create {
                path: "topics/c.md".into(),
                content: format!("# C\n{}", block(2, "m2", "Deadline friday.", 0)),
            },
        ],
    );
    w.commit(&p, Tier::Owner, Base::Any).unwrap();
    (dir, root)
}

/// The change under test: a new record, an append citing it, a new file
/// linking to the appended block, and a removal — four files at once.
pub fn big_change(base: &str) -> Patch {
    patch(
        base,
        vec![ada_record("m4", "the venue is lisbon")],
        vec![
            Edit::Append { path: "topics/a.md".into(), content: block(3, "m4", "Venue is Lisbon.", 0) },
            Edit::Create {
                path: "topics/people/b.md".into(),
                content: format!("# B\n\nSee [the venue](../a.md#^b3).{}", block(4, "m3", "Said hello.", 1)),
            },
            Edit::Delete { path: "topics/c.md".into() },
        ],
    )
}

/// The derived views on disk: `core.md`, `recent_events.jsonl`,
/// `relations.json` and every timeline file, by relative path.
pub fn derived(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for rel in ["recent_events.jsonl", "relations.json", "core.md"] {
        if let Ok(b) = std::fs::read(root.join(rel)) {
            out.insert(rel.to_owned(), b);
        }
    }
    let mut stack = vec![root.join("timeline")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.filter_map(Result::ok) {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// Asserts that the derived views of `root` are those a rebuild from
/// scratch of a copy of its `topics/` and `sources/` gives; returns the
/// copy (at `ws` inside the folder).
pub fn assert_views_rebuilt(root: &Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let croot = copy.path().join("ws");
    std::fs::create_dir_all(&croot).unwrap();
    for (rel, bytes) in tree(root) {
        let p = croot.join(&rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    for rel in ["scriptorium.toml", ".scriptorium/audit.jsonl"] {
        if let Ok(b) = std::fs::read(root.join(rel)) {
            std::fs::create_dir_all(croot.join(rel).parent().unwrap()).unwrap();
            std::fs::write(croot.join(rel), b).unwrap();
        }
    }
    let mut w = Committer::open(&croot, Duration::from_secs(5)).unwrap();
    w.rebuild_derived().unwrap();
    drop(w);
    assert_eq!(derived(root), derived(&croot), "derived views differ from a rebuild");
    copy
}
