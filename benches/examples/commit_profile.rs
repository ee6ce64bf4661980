//! Where the time of a one-block commit goes:
//! `commit_profile BLOCKS [RECORDS] [COMMITS]` generates a workspace
//! (`scriptorium_benches::workspace_gen`; defaults 1,000,000 records, 30
//! commits; `SCRIPTORIUM_BENCH_DIR` picks the folder), then, in turn,
//! times `COMMITS` real commits (`Committer::open` + `commit` + drop) and makes
//! `COMMITS` more step by step through the same public calls
//! `Committer::commit` makes, in its order, timing each:
//!
//! * `open`: `Committer::open` (the lock, recovery, the layout, and the check
//!   that the derived state was built from the current revision: one
//!   `revision::compute`);
//! * `revision`: `revision::compute` (directory walk, one `stat` a file,
//!   `.scriptorium/revision.cache` read and rewritten);
//! * `stage`: the path and tier checks, the archive plan, reading the topic
//!   file and applying the edit;
//! * `topic index`: `TopicIndex::load` (`.scriptorium/topics.cache`, read
//!   in place, and its delta: the hash of every file compared with the
//!   revision's);
//! * `validate`: the promotions and `validation::validate`;
//! * `install`: the crash-safe install (staging, intent, renames, history);
//! * `topics cache`: `TopicIndex::save` (the delta written with the changed
//!   file's lines replaced; the table too once the delta holds an eighth of
//!   it);
//! * `views state`: the views cache's state (`.scriptorium/views/state`)
//!   read, the views checked against their stamps, `relations.json` and
//!   `recent_events.jsonl` read (the bytes the untouched files' parts are
//!   copied from);
//! * `index refresh`: `scriptorium_bm25_index::workspace::open_committed`
//!   (the files the commit changed, while the index describes the revision
//!   before),
//!   scoped by the id and link index;
//! * `scope check`: the scope of the changed file, and the files it names
//!   loaded and checked against the index;
//! * `views apply`: the scope's pieces made anew, the other files' parts
//!   copied, the key tables merged, `core.md` kept or rendered
//!   (`views::apply`);
//! * `views write`: the changed views, entries and the state written
//!   (`views::cache::write`; `relations.json` rearranged in place, the
//!   state written over itself);
//! * `derived mark`: `.scriptorium/derived.revision` written with the
//!   views' stamps;
//! * `close`: dropping the writer (the lock).
//!
//! Prints the median and mean of each step and of the whole, and the median
//! time of one fsync before and after (the disk's part varies with it). A step-by-step
//! commit that left the caches unusable would send the next real commit
//! down the full rebuild; it is checked that it does not.
#![allow(clippy::print_stdout)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use scriptorium_benches::workspace_gen::{Spec, Workspace, LOCK_TIMEOUT};
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_source_archive::{append, fsio, trust};
use scriptorium_topic_markdown::validate::{check, Checked, Loaded};
use scriptorium_topic_markdown::views::{render_core, CoreRender, CORE_BUDGET};
use scriptorium_transaction::derive;
use scriptorium_transaction::disk::{Disk, Faults};
use scriptorium_transaction::revision;
use scriptorium_transaction::validation::{self, TopicIndex};
use scriptorium_transaction::views::apply::{self, Before};
use scriptorium_transaction::views::cache::{self, Scope};
use scriptorium_transaction::views::{self, stamp, IndexSources};
use scriptorium_transaction::{install, patch, Committer, Edit, Patch, Tier};

const STEPS: &[&str] = &[
    "open",
    "revision",
    "stage",
    "topic index",
    "validate",
    "install",
    "topics cache",
    "views state",
    "index refresh",
    "scope check",
    "views apply",
    "views write",
    "derived mark",
    "close",
];

struct Clock {
    last: Instant,
    laps: Vec<Duration>,
}

impl Clock {
    fn start() -> Clock {
        Clock { last: Instant::now(), laps: Vec::with_capacity(STEPS.len()) }
    }

    fn lap(&mut self) {
        let now = Instant::now();
        self.laps.push(now - self.last);
        self.last = now;
    }
}

/// What the index refresh of one commit did.
struct Refresh {
    action: String,
    files_read: usize,
    units_changed: usize,
    delta_bytes: u64,
    scope: usize,
    loaded: usize,
}

/// A patch's changed files.
type Changes = Vec<(String, Option<Vec<u8>>)>;

/// The topic files a patch writes (`None`: removed), by path.
type Topics = BTreeMap<String, Option<Vec<u8>>>;

/// The staging step: the path and tier checks, the archive plan, and each
/// topic file read with its edit applied; returns the staged archive
/// writes and the topic files.
fn stage(root: &Path, p: &Patch) -> (HashMap<String, Vec<u8>>, Topics) {
    patch::check_paths_on_disk(root, p).expect("the paths are fine");
    patch::check_tier(p, Tier::Owner).expect("the owner may");
    let plan = append::plan(root, &p.sources).expect("the archive plan");
    let staged: HashMap<String, Vec<u8>> = plan.writes.iter().cloned().collect();
    let mut topics = Topics::new();
    for e in &p.edits {
        let Edit::Append { path, content } = e else { panic!("the bench appends") };
        let mut bytes = std::fs::read(root.join(path)).expect("the topic file");
        bytes.extend_from_slice(content.as_bytes());
        topics.insert(path.clone(), Some(bytes));
    }
    (staged, topics)
}

/// The install step: the link checks, the revision after, the history
/// line and the crash-safe install; returns the changes and the revision
/// after.
fn install_changes(
    root: &Path,
    p: &Patch,
    rev: &revision::Revision,
    topics: Topics,
    faults: &Faults,
) -> (Changes, String) {
    let changes: Changes = topics.into_iter().collect();
    for (path, _) in &changes {
        fsio::check_no_links(root, path).expect("no links");
    }
    let after = rev.after(&changes);
    let tx = install::new_tx_id();
    let line = serde_json::json!({
        "time": scriptorium_source_archive::timestamp::now(),
        "tx": tx,
        "revision_before": rev.hex,
        "revision_after": after,
        "tier": "owner",
        "message": p.message,
        "changed": changes.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
        "sources_appended": 0,
    })
    .to_string();
    let planned = scriptorium_transaction::history::Planned {
        summary: p.message.clone(),
        stamp: scriptorium_transaction::history::Stamp {
            revision: after.clone(),
            writer: "update".into(),
            tier: "owner".into(),
            ..Default::default()
        },
        paths: changes.iter().map(|(p, _)| p.clone()).collect(),
        merge: None,
    };
    install::install(root, Disk::new(faults), &tx, &changes, line, Some(planned)).expect("the install");
    (changes, after)
}

/// The index refresh step: the files the commit changed, while the index
/// describes the revision before, scoped by the id and link index.
fn refresh_index(
    root: &Path,
    (before, after): (&str, &str),
    changes: &Changes,
    index_of_topics: &TopicIndex,
) -> scriptorium_bm25_index::workspace::Opened {
    let changed: Vec<String> = changes.iter().map(|(p, _)| p.clone()).collect();
    let commit = scriptorium_bm25_index::workspace::Commit { before, after, changed: &changed };
    scriptorium_bm25_index::workspace::open_committed(
        root,
        TokenizerConfig::default(),
        Some(index_of_topics),
        commit,
    )
    .expect("the index")
}

/// The scope check step: the scope of the changed files, and the files it
/// names loaded and checked against the index.
fn check_scope(
    root: &Path,
    index_of_topics: &TopicIndex,
    changes: &Changes,
    opened: &scriptorium_bm25_index::workspace::Opened,
) -> (BTreeSet<String>, Vec<Loaded>, Checked) {
    let dirty: BTreeSet<String> = changes.iter().map(|(p, _)| p.clone()).collect();
    let (scope, load) = index_of_topics.scope(&dirty).expect("the scope");
    let mut loaded = Vec::new();
    for path in load.iter().filter(|p| index_of_topics.contains(p)) {
        let bytes = std::fs::read(root.join(path)).expect("a topic file");
        if let Ok(l) = validation::load(path, &bytes) {
            loaded.push(l);
        }
    }
    let checked = check(&loaded, &IndexSources::new(root, &opened.view));
    (scope, loaded, checked)
}

/// `core.md` rendered when its file is in scope or was not there, kept
/// as it is otherwise.
fn core_of(rendered: bool, loaded: &[Loaded], checked: &Checked, core_path: &Path) -> CoreRender {
    if rendered {
        render_core(loaded.iter().find(|l| l.path == "topics/core.md"), checked, CORE_BUDGET)
    } else {
        let bytes = std::fs::read_to_string(core_path).expect("core.md");
        CoreRender { bytes: Some(bytes), report: Default::default() }
    }
}

/// One commit, step by step, as `Committer::commit` makes it.
fn stepwise(root: &Path, p: &Patch, faults: &Faults) -> (Vec<Duration>, String, Refresh) {
    let mut clock = Clock::start();
    let w = Committer::open(root, LOCK_TIMEOUT).expect("the writer opens");
    clock.lap();
    let rev = revision::compute(root).expect("the revision");
    assert_eq!(p.base_revision, rev.hex, "the base revision is current");
    clock.lap();
    let (staged, topics) = stage(root, p);
    clock.lap();
    let mut index_of_topics = TopicIndex::load(root, &rev).expect("the topic index");
    clock.lap();
    let promoted = trust::promoted(root).expect("the promotions");
    let outcome =
        validation::validate(root, &index_of_topics, &topics, &staged, &promoted).expect("validation runs");
    assert!(outcome.added.is_empty(), "{:?}", outcome.added);
    clock.lap();
    let (changes, after) = install_changes(root, p, &rev, topics, faults);
    clock.lap();
    for (path, facts) in outcome.facts {
        index_of_topics.set(&path, facts);
    }
    index_of_topics.save(root);
    clock.lap();
    let core_path = root.join("core.md");
    assert!(!core_path.is_file() || views::is_derived_core(&core_path), "no hand-written core.md");
    let state = cache::load_state(root, &rev.hex).expect("the views cache describes the revision before");
    let boot = stamp::boot_id();
    assert!(derive::is_current(root, &rev.hex), "the views are intact");
    let relations = std::fs::read(root.join("relations.json")).ok();
    let recent = std::fs::read(root.join("recent_events.jsonl")).ok();
    clock.lap();
    let opened = refresh_index(root, (&rev.hex, &after), &changes, &index_of_topics);
    clock.lap();
    let core_exists = index_of_topics.contains("topics/core.md");
    let (scope, loaded, checked) = check_scope(root, &index_of_topics, &changes, &opened);
    clock.lap();
    let fresh = cache::fresh(&loaded, &checked, Some(&scope));
    let gone: BTreeSet<String> = scope.iter().filter(|p| !fresh.contains_key(*p)).cloned().collect();
    let prior = Before { state, relations: relations.as_deref(), recent: recent.as_deref() };
    let next = apply::apply(
        root,
        &prior,
        &fresh,
        &gone,
        &|p| index_of_topics.linking_to(p).expect("the linkers"),
        &after,
    );
    let core = core_of(scope.contains("topics/core.md") || !core_exists, &loaded, &checked, &core_path);
    clock.lap();
    cache::write(
        root,
        Disk::new(faults),
        next,
        core,
        Scope::Change,
        boot.is_none(),
        relations.as_deref().unwrap_or_default(),
    )
    .expect("the views are written");
    clock.lap();
    stamp::Record::now(root, &after, boot).write(root).expect("the derived revision is recorded");
    clock.lap();
    drop(w);
    clock.lap();
    let r = &opened.report;
    let refresh = Refresh {
        action: format!("{:?}", r.action),
        files_read: r.files_read,
        units_changed: r.units_changed,
        delta_bytes: r.delta_bytes,
        scope: scope.len(),
        loaded: loaded.len(),
    };
    (clock.laps, after, refresh)
}

/// The median of 20 fsyncs of a 4 KiB write to a private file: what the
/// disk charges for one durable write while the commits run.
fn fsync_floor(root: &Path) -> f64 {
    use std::io::Write;
    let path = root.join(".scriptorium/tmp/fsync-probe");
    let mut f = std::fs::File::create(&path).expect("a probe file");
    let times: Vec<Duration> = (0..20)
        .map(|_| {
            f.write_all(&[b'x'; 4096]).expect("written");
            let t = Instant::now();
            f.sync_all().expect("fsynced");
            t.elapsed()
        })
        .collect();
    drop(f);
    std::fs::remove_file(&path).expect("removed");
    median(times)
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn mean(v: &[Duration]) -> f64 {
    v.iter().sum::<Duration>().as_secs_f64() * 1e3 / v.len() as f64
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.replace('_', "").parse::<usize>().expect("a number"));
    let blocks = args.next().unwrap_or(1_000);
    let records = args.next().unwrap_or(1_000_000);
    let commits = args.next().unwrap_or(30).max(1);
    let base = std::env::var_os("SCRIPTORIUM_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let dir = tempfile::Builder::new().prefix("scriptorium-profile-").tempdir_in(base).expect("a folder");
    let root = dir.path().join("ws");
    let started = Instant::now();
    let mut ws =
        Workspace::generate(&root, Spec { records, blocks, seed: 0x5eed_c0de }).expect("the workspace");
    println!(
        "{blocks} blocks in {} topic files, {records} records ({:.0} MB of archive): generated in {:.1} s (index build {:.1} s, first commit {:.2} s)",
        ws.topic_files.len(),
        ws.source_bytes as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        ws.timings.index.as_secs_f64(),
        ws.timings.first_commit.as_secs_f64()
    );
    for _ in 0..3 {
        let p = ws.append_patch();
        ws.commit(&p).expect("a warm-up commit");
    }
    let floor_before = fsync_floor(&root);
    // Real and step-by-step commits in turn, so that anything else the
    // machine does weighs on both alike.
    let faults = Faults::default();
    let mut real = Vec::with_capacity(commits);
    let mut steps: Vec<Vec<Duration>> = vec![Vec::with_capacity(commits); STEPS.len()];
    let mut totals = Vec::with_capacity(commits);
    let mut last = None;
    for _ in 0..commits {
        let p = ws.append_patch();
        let t = Instant::now();
        ws.commit(&p).expect("a commit");
        real.push(t.elapsed());
        let p = ws.append_patch();
        let (laps, after, refresh) = stepwise(&root, &p, &faults);
        assert!(cache::load_state(&root, &after).is_some(), "the views cache describes the new revision");
        ws.set_revision(after);
        totals.push(laps.iter().sum());
        for (k, d) in laps.into_iter().enumerate() {
            steps[k].push(d);
        }
        last = Some(refresh);
    }
    let floor_after = fsync_floor(&root);
    println!(
        "Committer::open + commit + drop: median {:.2} ms, mean {:.2} ms over {commits}",
        median(real.clone()),
        mean(&real)
    );
    println!(
        "one fsync of a 4 KiB write (median of 20): {floor_before:.2} ms before, {floor_after:.2} ms after"
    );
    println!("step by step, {commits} commits:");
    println!("{:<14} {:>10} {:>10} {:>7}", "step", "median ms", "mean ms", "share");
    let total_mean = mean(&totals);
    for (name, v) in STEPS.iter().zip(&steps) {
        let m = mean(v);
        println!("{name:<14} {:>10.2} {m:>10.2} {:>6.1}%", median(v.clone()), 100.0 * m / total_mean);
    }
    println!("{:<14} {:>10.2} {total_mean:>10.2}", "total", median(totals));
    if let Some(r) = last {
        println!(
            "last step-by-step commit: index {}, {} files read, {} units changed, delta {:.1} MB; {} topic files in scope, {} loaded",
            r.action,
            r.files_read,
            r.units_changed,
            r.delta_bytes as f64 / 1e6,
            r.scope,
            r.loaded
        );
    }
}
