//! Real `SIGKILL`s in the middle of commits: after recovery the workspace
//! is at the old revision or the new one, never a mixture.

use super::*;

/// SplitMix64: a small seeded generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn staging_left(root: &Path) -> Vec<String> {
    std::fs::read_dir(root.join(".scriptorium/tmp"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("tx-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Copies `topics/` and `sources/` of `root` into a fresh folder: a
/// workspace at the same revision, to learn what a patch produces.
fn shadow_of(root: &Path) -> tempfile::TempDir {
    let shadow = tempfile::tempdir().unwrap();
    let mut files = BTreeMap::new();
    regular_files(root, "topics", &mut files);
    regular_files(root, "sources", &mut files);
    for (p, bytes) in files {
        let to = shadow.path().join(String::from_utf8(p).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    shadow
}

/// The derived views of a workspace (everything outside `topics/`,
/// `sources/`, `.scriptorium/` and the git history `.git/`, whose commits
/// carry their time), by workspace-relative path.
fn derived_views(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    snapshot(root)
        .into_iter()
        .map(|(p, b)| (p.strip_prefix(root).unwrap().to_path_buf(), b))
        .filter(|(p, _)| !p.starts_with("topics") && !p.starts_with("sources") && !p.starts_with(".git"))
        .collect()
}

fn read_opt(p: &Path) -> Option<Vec<u8>> {
    match std::fs::read(p) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("{}: {e}", p.display()),
    }
}

/// The archive file the trials' records go to.
const ARCHIVE: &str = "sources/chat/_v2/kills.md";

/// Each trial's patch changes two files — it archives a new record in
/// `sources/chat/_v2/kills.md` and appends a block citing it to ada.md — so
/// a kill between the two renames would show as a mixture without the
/// intent record and its recovery.
#[test]
#[allow(clippy::print_stderr)]
fn killed_updates_leave_the_old_revision_or_the_new_one() {
    let seed: u64 =
        std::env::var("SCRIPTORIUM_KILL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5C21_2026);
    let mut rng = SplitMix64(seed);
    let ws = workspace();
    let root = ws.path();
    let dir = tempfile::tempdir().unwrap();
    let patch_file = dir.path().join("patch.json");

    // How long a whole update takes here and now, spawn to exit.
    let mut took = Vec::new();
    for t in 0..5 {
        let p = trial_patch(1000 + t, &revision(root));
        let start = Instant::now();
        let out = spawn_update(root, &patch_file, &p).wait_with_output().unwrap();
        took.push(start.elapsed());
        assert!(out.status.success(), "{}", stderr(&out));
    }
    took.sort();
    let span_us = u64::try_from((took[2] * 3 / 2).as_micros()).unwrap().max(2_000);

    let trials = 100;
    let mut tally = Tally::default();
    let started = Instant::now();
    let mut current = revision(root);
    for t in 0..trials {
        let ctx = format!("trial {t} (seed {seed}, kill within {span_us} µs)");
        let before = Before::of(root, current.clone());
        let p = trial_patch(t, &before.revision);
        let after = what_the_patch_makes(root, &p, &before.revision, &ctx);
        let ack = kill_update(root, &patch_file, &p, rng.below(span_us), &ctx, &mut tally);
        // Half the time a reader comes first: it must see a whole state.
        let seen = (rng.below(2) == 0).then(|| revision(root));
        current = recover(root, &ctx, &mut tally);
        if let Some(seen) = seen {
            assert_eq!(seen, current, "{ctx}: a reader saw a state that recovery then changed");
        }
        assert_old_or_new(root, &ctx, &current, &before, &after, ack.as_deref(), &mut tally);
    }
    let Tally { kept, installed, acknowledged, found_intent, found_staging, recovered } = tally;
    eprintln!(
        "{trials} kills in {:?} (update took {:?}, killed within {span_us} µs): {kept} kept the old revision, \
         {installed} installed ({acknowledged} acknowledged); found after the kill: {found_intent} intent(s), \
         {found_staging} staging folder(s); check recovered {recovered:?}",
        started.elapsed(),
        took[2],
    );
    assert!(kept > 0, "no kill landed before the commit point; the test proves nothing");
    assert!(installed > 0, "no update got through; the test proves nothing");
    assert_eq!(revision(root), current);
    every_install_is_there_once(root, installed + 5);
}

/// Trial `t`'s patch against `base`: a new record `chat/kills/k<t>` and a
/// block citing it appended to ada.md.
fn trial_patch(t: u64, base: &str) -> String {
    let label = format!("e-{:010x}", 0x10_0000 + t);
    let message = format!("k{t}");
    let content = format!(
        "\nKilled trial {t} fact.[^{label}] ^k{t}\n\n{}\n",
        footnote(&label, "kills", &message, "../../")
    );
    patch(
        base,
        vec![record("kills", &message, &format!("trial {t}"), false)],
        vec![append(ADA_PATH, &content)],
    )
}

/// Starts `update` on `patch` (written to `patch_file`) without waiting.
fn spawn_update(root: &Path, patch_file: &Path, patch: &str) -> std::process::Child {
    std::fs::write(patch_file, patch).unwrap();
    Command::new(env!("CARGO_BIN_EXE_scriptorium"))
        .args(["update", "--workspace", w(root), "--patch", w(patch_file), "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// What the trials saw, summed.
#[derive(Default)]
struct Tally {
    /// Trials that kept the old revision.
    kept: usize,
    /// Trials that installed the new one.
    installed: usize,
    /// Updates that finished and printed their revision before the kill.
    acknowledged: usize,
    /// Kills that left an intent record.
    found_intent: usize,
    /// Kills that left a staging folder.
    found_staging: usize,
    /// What `check` said it recovered, and how often.
    recovered: BTreeMap<String, usize>,
}

/// The two files a trial's patch changes.
type Files = (Option<Vec<u8>>, Option<Vec<u8>>);

fn files_of(root: &Path) -> Files {
    (read_opt(&root.join(ADA_PATH)), read_opt(&root.join(ARCHIVE)))
}

/// The workspace before a trial.
struct Before {
    revision: String,
    files: Files,
    hist: Vec<Value>,
    views: BTreeMap<PathBuf, Vec<u8>>,
}

impl Before {
    fn of(root: &Path, revision: String) -> Before {
        Before { revision, files: files_of(root), hist: history(root), views: derived_views(root) }
    }
}

/// The workspace after a trial's patch, had it been installed.
struct After {
    revision: String,
    files: Files,
    views: BTreeMap<PathBuf, Vec<u8>>,
}

/// What the patch `p` produces, from a copy of `root` at the revision
/// `before`.
fn what_the_patch_makes(root: &Path, p: &str, before: &str, ctx: &str) -> After {
    let shadow = shadow_of(root);
    assert_eq!(expected_revision(shadow.path(), &[]), before, "{ctx}: the copy");
    let after = updated(shadow.path(), p, &[])["revision"].as_str().unwrap().to_owned();
    assert_eq!(expected_revision(shadow.path(), &[]), after, "{ctx}: the revision is FORMAT.md's");
    After { revision: after, files: files_of(shadow.path()), views: derived_views(shadow.path()) }
}

/// Runs the update of `p` and kills it after `delay_us` µs: the revision
/// it printed if it finished first. Counts what the kill left behind.
fn kill_update(
    root: &Path,
    patch_file: &Path,
    p: &str,
    delay_us: u64,
    ctx: &str,
    tally: &mut Tally,
) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;

    let mut child = spawn_update(root, patch_file, p);
    std::thread::sleep(Duration::from_micros(delay_us));
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let ack = if out.status.success() {
        tally.acknowledged += 1;
        Some(json_lines(&out.stdout)[0]["revision"].as_str().unwrap().to_owned())
    } else {
        assert_eq!(out.status.signal(), Some(9), "{ctx}: the update failed by itself: {}", stderr(&out));
        None
    };
    tally.found_intent += usize::from(root.join(".scriptorium/journal/intent").exists());
    tally.found_staging += usize::from(!staging_left(root).is_empty());
    ack
}

/// `check` after a kill: it succeeds, and says what it recovered; the
/// revision it reports.
fn recover(root: &Path, ctx: &str, tally: &mut Tally) -> String {
    let out = run(&["check", "--workspace", w(root), "--json"], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{ctx}: check: {}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
    let summary = json_lines(&out.stdout).pop().unwrap();
    *tally.recovered.entry(summary["recovered"].as_str().unwrap().to_owned()).or_default() += 1;
    summary["revision"].as_str().unwrap().to_owned()
}

/// After recovery the workspace at `root` is at revision `now`: wholly
/// `before` or wholly `after` (files, views, history), `after` when the
/// update acknowledged it, and nothing of the transaction is left.
fn assert_old_or_new(
    root: &Path,
    ctx: &str,
    now: &str,
    before: &Before,
    after: &After,
    ack: Option<&str>,
    tally: &mut Tally,
) {
    assert!(
        now == before.revision || now == after.revision,
        "{ctx}: revision {now} is neither {} nor {}",
        before.revision,
        after.revision
    );
    assert_eq!(expected_revision(root, &[]), now, "{ctx}");
    if let Some(ack) = ack {
        assert_eq!(ack, after.revision, "{ctx}: the acknowledged revision");
        assert_eq!(now, after.revision, "{ctx}: an acknowledged update was lost");
    }
    let files = files_of(root);
    let hist = &before.hist;
    let hist_now = history(root);
    if now == after.revision {
        tally.installed += 1;
        assert!(files == after.files, "{ctx}: installed, but the files are not what the patch makes");
        assert_eq!(hist_now.len(), hist.len() + 1, "{ctx}: one history line per install");
        let h = hist_now.last().unwrap();
        assert_eq!(h["revision_before"], before.revision.as_str(), "{ctx}");
        assert_eq!(h["revision_after"], after.revision.as_str(), "{ctx}");
        assert!(derived_views(root) == after.views, "{ctx}: the views are not rebuilt from the new files");
    } else {
        tally.kept += 1;
        assert!(files == before.files, "{ctx}: not installed, but the files changed");
        assert!(derived_views(root) == before.views, "{ctx}: not installed, but the views changed");
        assert_eq!(hist_now.len(), hist.len(), "{ctx}: a history line without an install");
    }
    assert_eq!(hist_now[..hist.len()], hist[..], "{ctx}: history lines are only ever appended");
    assert!(!root.join(".scriptorium/journal/intent").exists(), "{ctx}: an intent survived recovery");
    assert!(staging_left(root).is_empty(), "{ctx}: staging survived recovery: {:?}", staging_left(root));
}

/// Every installed block and record is there once (`n` of each), and the
/// search index followed every install, and nothing else.
fn every_install_is_there_once(root: &Path, n: usize) {
    let blocks = std::fs::read_to_string(root.join(ADA_PATH)).unwrap().matches("Killed trial").count();
    assert_eq!(blocks, n, "every installed block is there once");
    let dump = run(&["archive", "dump", w(&root.join(ARCHIVE)), "--json"], b"");
    assert!(dump.status.success(), "{}", stderr(&dump));
    assert_eq!(json_lines(&dump.stdout).len(), n, "every installed record is there once");
    // The search index followed every install, and nothing else.
    let out = run(
        &[
            "search",
            "killed trial fact",
            "--workspace",
            w(root),
            "--json",
            "--kind",
            "topic",
            "--limit",
            "1000",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hits = json_lines(&out.stdout);
    assert_eq!(hits.len(), n, "one hit per installed block");
}
