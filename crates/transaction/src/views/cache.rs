//! Building and writing the derived views through the cache: the state,
//! the entries, and the views themselves, every write through
//! [`Disk`] (so crash tests can stop any of them).
//!
//! Order: the derived record removed, the timeline days and `core.md`
//! (fsynced), `recent_events.jsonl` and `relations.json` (fsynced only
//! where the system has no boot id), the new entries, the state, then the
//! caller records the revision and the views' stamps in
//! `.scriptorium/derived.revision`. `relations.json` and the state are
//! written in place, the rest replaced by rename. A crash anywhere before
//! the record leaves none: the next writer rebuilds everything.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::rc::Rc;

use scriptorium_source_archive::fsio;
use scriptorium_topic_markdown::validate::{Checked, Loaded};
use scriptorium_topic_markdown::views::{self, CoreRender, RelationsReport, RenderReport};

use crate::disk::{Disk, Place};
use crate::error::Error;
use crate::views::apply::{self, After, Before, Ranked};
use crate::views::entries::{self, VIEWS_DIR};
use crate::views::stamp::{self, Record, Stamp, DERIVED_FROM};
use crate::views::state::State;
use crate::views::{is_timeline_day, CoreSlot};

/// The state file, relative to the workspace root.
pub const STATE_FILE: &str = ".scriptorium/views/state";

/// The state of workspace `root`, when it describes `revision` and the
/// derived record vouches for it: the record names `revision` and was
/// written in this boot (the state is written in place without fsync, so
/// after a crash only the record tells whether it is whole).
pub fn load_state(root: &Path, revision: &str) -> Option<State> {
    let record = Record::read(root);
    if record.revision != revision || !record.same_boot(stamp::boot_id().as_deref()) {
        return None;
    }
    // Mapped when large: only a writer holding the write lock writes the
    // state, and this writer decodes it whole before writing it over.
    State::decode(&fsio::read_file(&root.join(STATE_FILE)).ok()?, revision)
}

/// The eligible blocks' pieces of the files of `loaded` named by `scope`
/// (every loaded file when `None`), by path, ranked.
pub fn fresh(
    loaded: &[Loaded],
    checked: &Checked,
    scope: Option<&BTreeSet<String>>,
) -> HashMap<String, Rc<Ranked>> {
    let wanted = |p: &str| scope.is_none_or(|s| s.contains(p));
    let mut by_path: HashMap<String, Vec<views::BlockViews>> =
        loaded.iter().filter(|l| wanted(&l.path)).map(|l| (l.path.clone(), Vec::new())).collect();
    for b in views::block_views(loaded, checked) {
        if let Some(v) = by_path.get_mut(&b.path) {
            v.push(b);
        }
    }
    by_path.into_iter().map(|(p, v)| (p, Rc::new(Ranked::new(v)))).collect()
}

/// Whether a write replaces everything (removing what the views no longer
/// hold) or only what the change touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every view, from every file.
    Whole,
    /// The views a change touched.
    Change,
}

struct Writes<'a, 'f> {
    root: &'a Path,
    disk: Disk<'f>,
    tmp: std::path::PathBuf,
    n: usize,
}

impl Writes<'_, '_> {
    fn put(&mut self, rel: &str, bytes: &[u8], durable: bool) -> Result<(), Error> {
        fsio::check_no_links(self.root, rel)?;
        let target = self.root.join(rel);
        if let Some(dir) = target.parent() {
            self.disk.create_dirs(dir).map_err(|e| Error::io(&e, "cannot create", dir))?;
        }
        self.n += 1;
        // Named as the orphan cleaner of recovery expects.
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let tmp = self.tmp.join(format!("write-view-{}-{nanos:x}-{}.tmp", std::process::id(), self.n));
        self.disk.replace(&tmp, &target, bytes, durable).map_err(|e| Error::io(&e, "cannot write", &target))
    }

    /// Writes `bytes` over `rel` in place ([`Disk::overwrite`]): for the
    /// large files whose integrity the derived record vouches for.
    fn overwrite(
        &mut self,
        rel: &str,
        durable: bool,
        fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<(), Error> {
        fsio::check_no_links(self.root, rel)?;
        let target = self.root.join(rel);
        if let Some(dir) = target.parent() {
            self.disk.create_dirs(dir).map_err(|e| Error::io(&e, "cannot create", dir))?;
        }
        self.disk.overwrite(&target, durable, fill).map_err(|e| Error::io(&e, "cannot write", &target))
    }

    /// Rearranges `rel` in place ([`Disk::rearrange`]).
    fn rearrange(&mut self, rel: &str, plan: &[Place<'_>], len: u64, durable: bool) -> Result<(), Error> {
        fsio::check_no_links(self.root, rel)?;
        let target = self.root.join(rel);
        self.disk.rearrange(&target, plan, len, durable).map_err(|e| Error::io(&e, "cannot write", &target))
    }

    fn remove(&mut self, rel: &str) -> Result<(), Error> {
        fsio::check_no_links(self.root, rel)?;
        let p = self.root.join(rel);
        self.disk.remove_file(&p).map_err(|e| Error::io(&e, "cannot remove", &p))
    }

    /// Writes `bytes` at `rel` unless the file already holds them; `None`
    /// removes it.
    fn update(&mut self, rel: &str, bytes: Option<&[u8]>, durable: bool) -> Result<(), Error> {
        let target = self.root.join(rel);
        match bytes {
            Some(b) if std::fs::read(&target).ok().as_deref() == Some(b) => Ok(()),
            Some(b) => self.put(rel, b, durable),
            None if std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_file()) => self.remove(rel),
            None => Ok(()),
        }
    }
}

/// Writes the views `after` describes and `core`, then the entries and the
/// state; returns the report. `durable_views`: fsync the views that are
/// otherwise written without (the system has no boot id).
pub fn write(
    root: &Path,
    disk: Disk<'_>,
    mut after: After,
    core: CoreRender,
    scope: Scope,
    durable_views: bool,
    old_relations: &[u8],
) -> Result<RenderReport, Error> {
    fsio::check_no_links(root, fsio::TMP_DIR)?;
    let mut w = Writes { root, disk, tmp: root.join(fsio::TMP_DIR), n: 0 };
    disk.create_dirs(&w.tmp).map_err(|e| Error::io(&e, "cannot create", &w.tmp))?;
    // No record while the views change: until the caller writes the new
    // one, nothing trusts what is being written.
    w.remove(DERIVED_FROM)?;
    for (day, bytes) in &after.days {
        w.update(&apply::day_path(*day), bytes.as_deref().map(str::as_bytes), true)?;
    }
    if scope == Scope::Whole {
        remove_other_days(&mut w, &after)?;
    }
    // A hand-written core.md waits for its migration; anything else that
    // is not a regular file there is left alone (reported).
    let slot = CoreSlot::of(root);
    if !matches!(slot, CoreSlot::HandWritten | CoreSlot::Blocked(_)) {
        match &core.bytes {
            Some(b) => w.update("core.md", Some(b.as_bytes()), true)?,
            None if slot == CoreSlot::Derived => w.remove("core.md")?,
            None => {}
        }
    }
    // What was written before is known: nothing is read to compare.
    match after.recent.as_deref() {
        _ if after.unchanged[0] => {}
        Some(b) => w.put("recent_events.jsonl", b, durable_views)?,
        None => w.update("recent_events.jsonl", None, durable_views)?,
    }
    // Rearranged in place from the file as written: the runs before the
    // first change are not touched, the others moved, the new ones written.
    match &after.relations {
        Some(r) => match r.plan(old_relations) {
            Some((plan, len)) => w.rearrange("relations.json", &plan, len, durable_views)?,
            None => w.overwrite("relations.json", durable_views, |out| r.write_to(out, old_relations))?,
        },
        None => w.update("relations.json", None, durable_views)?,
    }
    let dir = root.join(VIEWS_DIR);
    w.disk.create_dirs(&dir).map_err(|e| Error::io(&e, "cannot create", &dir))?;
    for (name, body) in &after.entries {
        w.put(&format!("{VIEWS_DIR}/{name}"), body.as_bytes(), durable_views)?;
    }
    for (day, bytes) in &after.days {
        if bytes.is_some() {
            if let Some(s) = Stamp::of(&root.join(apply::day_path(*day))) {
                after.state.day_files.push((*day, s));
            }
        }
    }
    after.state.day_files.sort_by_key(|(d, _)| *d);
    w.overwrite(STATE_FILE, durable_views, |out| after.state.write_to(out))?;
    // Entries no longer named (best effort: an unnamed entry is never read).
    let named: BTreeSet<&str> = after.state.files.iter().map(|r| r.entry.as_str()).collect();
    let unused: Vec<String> = match scope {
        Scope::Change => after.unused.clone(),
        Scope::Whole => std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
            })
            .unwrap_or_default(),
    };
    for name in unused.iter().filter(|n| entries::is_name(n) && !named.contains(n.as_str())) {
        let _ = std::fs::remove_file(entries::path_of(root, name));
    }
    Ok(RenderReport {
        core: core.report,
        timeline_files: after.state.day_files.len(),
        events: after.events,
        relations: RelationsReport { nodes: after.counts.0, edges: after.counts.1 },
    })
}

/// Removes the timeline day files the views no longer hold, and the month
/// and year folders that leaves empty.
fn remove_other_days(w: &mut Writes<'_, '_>, after: &After) -> Result<(), Error> {
    let root = w.root;
    let listing = scriptorium_topic_markdown::files::list_md(root, &root.join("timeline"))
        .map_err(|e| Error::io(&e.error, "cannot list", &e.path))?;
    let kept: BTreeSet<String> =
        after.days.iter().filter(|(_, b)| b.is_some()).map(|(d, _)| apply::day_path(*d)).collect();
    for (rel, _) in listing.files.iter().filter(|(r, _)| is_timeline_day(r) && !kept.contains(r)) {
        w.remove(rel)?;
        let mut dir = root.join(rel).parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            if d == root.join("timeline") || std::fs::remove_dir(&d).is_err() {
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
    }
    Ok(())
}

/// Every view from a full check of every topic file (`topics`, `checked`),
/// for `revision`.
pub fn build(root: &Path, topics: &[Loaded], checked: &Checked, revision: &str) -> After {
    let fresh = fresh(topics, checked, None);
    apply::apply(root, &Before::default(), &fresh, &BTreeSet::new(), &|_| Vec::new(), revision)
}

#[cfg(test)]
mod tests {
    //! The views built through the cache are the views of the pure render.
    use super::*;
    use scriptorium_topic_markdown::validate::{check, Resolution, SourceResolver};
    use std::borrow::Cow;

    #[test]
    fn a_build_gives_the_views_of_the_pure_render() {
        let a = "# A\n\nTab\there [b](b.md#^b1).[^e-0000000001] ^a1\n\nLater.[^e-0000000003] ^a2\n\n[^e-0000000001]: Time: `2026-08-09T10:11:12.5Z`; Sources: [p/t/m](../sources/p/_v2/t.md#source-1)\n[^e-0000000003]: Time: `2026-08-11`; Sources: [p/t/m](../sources/p/_v2/t.md#source-1)\n";
        let b = "# B\n\nOther [a](a.md).[^e-0000000002] ^b1\n\n[^e-0000000002]: Time: `2026-08-10`; Sources: [p/t/m](../sources/p/_v2/t.md#source-1)\n";
        let topics = vec![
            Loaded::parse("topics/a.md", a),
            Loaded::parse("topics/b\"x.md", b),
            Loaded::parse("topics/b.md", b),
        ];
        struct All;
        impl SourceResolver for All {
            fn resolve(&self, _: &str, _: &str, _: &str) -> Resolution {
                Resolution::Trusted
            }
            fn content(&self, _: &str, _: &str, _: &str) -> Option<Cow<'_, str>> {
                Some(Cow::Borrowed(""))
            }
        }
        let checked = check(&topics, &All);
        let dir = tempfile::tempdir().unwrap();
        let after = build(dir.path(), &topics, &checked, "rev");
        let full = views::render(&topics, &checked, 2000);
        let mut relations = Vec::new();
        after.relations.as_ref().unwrap().write_to(&mut relations, &[]).unwrap();
        assert_eq!(Some(relations.as_slice()), full.files.get("relations.json").map(|s| s.as_bytes()));
        assert_eq!(after.recent.as_deref(), full.files.get("recent_events.jsonl").map(|s| s.as_bytes()));
        let days: Vec<(String, &str)> =
            after.days.iter().map(|(d, s)| (apply::day_path(*d), s.as_deref().unwrap())).collect();
        let expected: Vec<(String, &str)> = full
            .files
            .iter()
            .filter(|(p, _)| p.starts_with("timeline/"))
            .map(|(p, s)| (p.clone(), s.as_str()))
            .collect();
        assert_eq!(days, expected);
        assert_eq!(after.counts, (full.report.relations.nodes, full.report.relations.edges));
        assert_eq!(after.events, full.report.events);
        assert_eq!(after.state.files.len(), 3);
        assert_eq!(State::decode(&after.state.encode(), "rev"), Some(after.state));
    }
}
