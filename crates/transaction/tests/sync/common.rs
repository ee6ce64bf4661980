//! The network of machines the sync tests share: a bare remote on disk,
//! workspaces that write records and blocks, and the convergence checks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use scriptorium_source_archive::archive::Archive;
use scriptorium_source_archive::{Role, SourceId, SourceRecord, Speaker};
use scriptorium_testkit::tree;
use scriptorium_transaction::history::{self, tamper};
use scriptorium_transaction::sync::{self, Options, Synced};
use scriptorium_transaction::{disk::Faults, Base, Committed, Committer, Edit, Error, Patch, Tier};

pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// Runs git in `dir`; panics unless it succeeds.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A record said in thread `chat/<thread>`.
pub(crate) fn record(thread: &str, message: &str, content: &str) -> SourceRecord {
    let id = SourceId::new("chat", thread, message).unwrap();
    let speaker = Speaker::from_transport(Some("7391"), Some("Ada"));
    SourceRecord::new(id, Role::User, "2026-08-09T10:11:12Z", speaker, false, content.to_owned()).unwrap()
}

/// Block `^b<n>` with `text`, citing record `message` of `chat/<thread>`,
/// for a file directly under `topics/`.
pub(crate) fn cited(n: u32, thread: &str, message: &str, text: &str) -> String {
    let id = SourceId::new("chat", thread, message).unwrap();
    format!(
        "\n{text}[^e-{n:010x}] ^b{n}\n\n[^e-{n:010x}]: Time: `2026-08-09T10:11:12Z`; Sources: [{}](../{}#{})\n",
        id.text(),
        id.v2_path(),
        id.anchor()
    )
}

/// The sync options the tests use.
pub(crate) fn options() -> Options {
    Options { lock_timeout: WAIT, ..Options::default() }
}

/// A bare remote and the workspaces of the machines sharing it, all in one
/// folder (the remote's URL is relative, so a copy of the folder is an
/// independent network).
pub(crate) struct Net {
    pub(crate) dir: tempfile::TempDir,
}

impl Net {
    /// `n` machines; machine 0 starts the memory (`topics/shared.md` with
    /// block `^b1` citing `chat/shared/m0`) and pushes it, the others join
    /// by syncing.
    pub(crate) fn new(n: usize) -> Net {
        let net = Net::empty(n);
        net.write(
            0,
            vec![record("shared", "m0", "the start")],
            vec![create("shared", 1, "shared", "m0", "Start.")],
        );
        for k in 0..n {
            net.sync(k);
        }
        net
    }

    /// A bare remote and `n` machines with a repository and the remote, no
    /// memory yet.
    pub(crate) fn empty(n: usize) -> Net {
        let net = Net { dir: tempfile::tempdir().unwrap() };
        git(net.dir.path(), &["init", "--bare", "-q", "remote.git"]);
        for k in 0..n {
            net.join(k);
        }
        net
    }

    /// Makes machine `k`'s workspace (with its repository) and gives it the
    /// remote.
    pub(crate) fn join(&self, k: usize) {
        self.join_at(k, "../remote.git");
    }

    /// Makes machine `k`'s workspace (kept if it exists) and gives it the
    /// remote at `url`.
    pub(crate) fn join_at(&self, k: usize, url: &str) {
        let root = self.root(k);
        std::fs::create_dir_all(&root).unwrap();
        history::Writer::open(&root).unwrap().expect("history is on");
        sync::transport::add_remote(&root, "origin", url).unwrap();
    }

    /// An independent copy of the whole network.
    pub(crate) fn copy(&self) -> Net {
        let net = Net { dir: tempfile::tempdir().unwrap() };
        let status = Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", self.dir.path().display()))
            .arg(net.dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        net
    }

    /// Machine `k`'s workspace.
    pub(crate) fn root(&self, k: usize) -> PathBuf {
        self.dir.path().join(format!("ws{k}"))
    }

    /// The bare remote.
    pub(crate) fn remote(&self) -> PathBuf {
        self.dir.path().join("remote.git")
    }

    /// The commit the remote's `main` names (empty: none).
    pub(crate) fn remote_main(&self) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(self.remote())
            .args(["rev-parse", "--verify", "-q", "refs/heads/main"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Machine `k` commits records and edits as the owner.
    pub(crate) fn write(&self, k: usize, sources: Vec<SourceRecord>, edits: Vec<Edit>) -> Committed {
        let mut w = Committer::open(&self.root(k), WAIT).unwrap();
        let p = Patch { base_revision: String::new(), message: "test".into(), sources, edits };
        w.commit(&p, Tier::Owner, Base::Any).unwrap_or_else(|e| panic!("machine {k} writes: {e}"))
    }

    /// Machine `k` syncs; panics on failure.
    pub(crate) fn sync(&self, k: usize) -> Synced {
        self.try_sync(k).unwrap_or_else(|e| panic!("machine {k} syncs: {e}"))
    }

    /// Machine `k` syncs.
    pub(crate) fn try_sync(&self, k: usize) -> Result<Synced, Error> {
        sync::sync(&self.root(k), &options(), &Faults::default())
    }
}

/// Creates `topics/<name>.md` holding block `^b<n>`.
pub(crate) fn create(name: &str, n: u32, thread: &str, message: &str, text: &str) -> Edit {
    Edit::Create {
        path: format!("topics/{name}.md"),
        content: format!("# {name}\n{}", cited(n, thread, message, text)),
    }
}

/// Adds block `^b<n>` to `topics/<name>.md` of the workspace at `root`
/// (created when missing) the way the writer lays files out: blocks first,
/// then every footnote definition at the end of the file.
pub(crate) fn add_block(root: &Path, name: &str, n: u32, thread: &str, message: &str, text: &str) -> Edit {
    let id = SourceId::new("chat", thread, message).unwrap();
    let line = format!("{text}[^e-{n:010x}] ^b{n}");
    let def = format!(
        "[^e-{n:010x}]: Time: `2026-08-09T10:11:12Z`; Sources: [{}](../{}#{})",
        id.text(),
        id.v2_path(),
        id.anchor()
    );
    let path = format!("topics/{name}.md");
    match std::fs::read_to_string(root.join(&path)) {
        Err(_) => Edit::Create {
            path,
            content: format!(
                "# {name}

{line}

{def}
"
            ),
        },
        Ok(old) => {
            let at = old.find("\n[^").expect("the footnote definitions end the file") + 1;
            Edit::Replace { path, content: format!("{}{line}\n\n{}{def}\n", &old[..at], &old[at..]) }
        }
    }
}

/// Replaces the text `old` of a block by `new` in `topics/<name>.md`.
pub(crate) fn revise(name: &str, old: &str, new: &str) -> Edit {
    Edit::StrReplace {
        path: format!("topics/{name}.md"),
        old: format!("\n{old}[^e-"),
        new: format!("\n{new}[^e-"),
    }
}

/// Appends block `^b<n>` to `topics/<name>.md`.
pub(crate) fn append(name: &str, n: u32, thread: &str, message: &str, text: &str) -> Edit {
    Edit::Append { path: format!("topics/{name}.md"), content: cited(n, thread, message, text) }
}

/// The source ids of every v2 record of the workspace, with how many times
/// each is archived.
pub(crate) fn source_ids(root: &Path) -> BTreeMap<String, usize> {
    let archive = Archive::scan(root).unwrap();
    assert!(archive.problems().is_empty(), "archive problems: {:?}", archive.problems());
    let mut out = BTreeMap::new();
    for r in archive.v2_records() {
        *out.entry(r.id().text()).or_insert(0) += 1;
    }
    out
}

/// The text of block `^b<n>` (the line it ends), if some topic file of
/// `files` holds it.
pub(crate) fn block_text(files: &BTreeMap<String, Vec<u8>>, n: u32) -> Option<String> {
    let mark = format!("[^e-{n:010x}] ^b{n}");
    files.iter().filter(|(p, _)| p.starts_with("topics/")).find_map(|(_, bytes)| {
        let text = std::str::from_utf8(bytes).unwrap();
        text.lines().find(|l| l.ends_with(&mark)).map(|l| l.trim_end_matches(&mark).to_owned())
    })
}

/// The repository is sound: `git fsck --strict` passes, nothing is left
/// uncommitted, no committed archive frame was rewritten, and the whole
/// workspace validates.
pub(crate) fn assert_sound(root: &Path) {
    git(root, &["fsck", "--strict", "--no-progress"]);
    assert_eq!(git(root, &["status", "--porcelain", "--", "topics", "sources"]), "", "{}", root.display());
    assert_eq!(tamper::verify(root).unwrap(), vec![], "tampered in {}", root.display());
    let checkup = scriptorium_transaction::snapshot::checkup(root).unwrap();
    assert!(checkup.diagnostics.is_empty(), "{}: {:?}", root.display(), checkup.diagnostics);
    drop(Committer::open(root, WAIT).unwrap());
}

/// Every machine of `net` holds the same files, revision and head, each is
/// sound, and so is the remote, whose `main` is that head. Returns the
/// files.
pub(crate) fn assert_converged(net: &Net, machines: usize) -> BTreeMap<String, Vec<u8>> {
    let first = tree(&net.root(0));
    let rev = scriptorium_transaction::revision::compute(&net.root(0)).unwrap().hex;
    let head = git(&net.root(0), &["rev-parse", "HEAD"]).trim().to_owned();
    for k in 0..machines {
        let root = net.root(k);
        assert_sound(&root);
        assert_eq!(
            scriptorium_transaction::revision::compute(&root).unwrap().hex,
            rev,
            "machine {k}'s revision"
        );
        assert_eq!(tree(&root), first, "machine {k}'s files");
        assert_eq!(git(&root, &["rev-parse", "HEAD"]).trim(), head, "machine {k}'s head");
    }
    assert_eq!(net.remote_main(), head, "the remote's main");
    git(&net.remote(), &["fsck", "--strict", "--no-progress"]);
    first
}

/// A small seeded generator (xorshift64*), so a failing seed replays.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }

    /// `0..n` in a random order.
    pub(crate) fn order(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            v.swap(i, self.below(i + 1));
        }
        v
    }
}
