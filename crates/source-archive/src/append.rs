//! Batch append: one call, one batch, all or nothing (FORMAT.md §2.2, §2.5).
//!
//! A batch is grouped by file and deduplicated (an id already archived is a
//! no-op; within the batch the first occurrence wins). It is refused whole,
//! before any byte is written, when two provider names, or two thread names
//! of one provider, are equal after `NFC(casefold(NFC(name)))` but differ as
//! strings (within the batch or against what is on disk), or when a target
//! file does not parse to its end. Each changed file is then replaced
//! atomically ([`crate::fsio::replace_file`]).
//!
//! Planning and committing are separate steps so that a caller holding a
//! larger transaction can stage the planned bytes itself.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::Path;

use crate::code::Code;
use crate::error::{Error, Result};
use crate::id::fold_key;
use crate::record::SourceRecord;
use crate::v2::{self, Expect};
use crate::{fsio, pct};

/// What an append did (or, for a plan, will do).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct AppendReport {
    /// Records newly archived.
    pub appended: usize,
    /// Records skipped because their id was already archived (or came
    /// earlier in the same batch).
    pub duplicates: usize,
    /// Workspace-relative paths of the files that changed, sorted.
    pub files: Vec<String>,
}

/// The planned result of a batch: the new bytes of every file it changes.
#[derive(Debug, Clone)]
pub struct AppendPlan {
    /// Workspace-relative path and complete new content, sorted by path.
    pub writes: Vec<(String, Vec<u8>)>,
    /// The report the commit will give.
    pub report: AppendReport,
}

fn list_dir(dir: &Path) -> Result<Vec<(String, bool)>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(e, "cannot list", dir)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(e, "cannot list", dir))?;
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        out.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
    }
    Ok(out)
}

fn conflict(what: &str, a: &str, b: &str, place: &str) -> Error {
    Error::new(
        Code::Conflict,
        format!(
            "{what} names {a:?} and {b:?} are equal after NFC and case folding ({place}); the whole batch was refused and nothing was written"
        ),
    )
}

/// Refuses NFC/case-fold twins within the batch and against the disk.
fn check_collisions(root: &Path, records: &[SourceRecord]) -> Result<()> {
    let mut providers: BTreeMap<String, &str> = BTreeMap::new();
    let mut threads: BTreeMap<(&str, String), &str> = BTreeMap::new();
    for r in records {
        let (p, t) = (r.id().provider(), r.id().thread());
        let seen = providers.entry(fold_key(p)).or_insert(p);
        if *seen != p {
            return Err(conflict("provider", seen, p, "within the batch"));
        }
        let seen = threads.entry((p, fold_key(t))).or_insert(t);
        if *seen != t {
            return Err(conflict("thread", seen, t, "within the batch"));
        }
    }
    let sources = root.join("sources");
    let on_disk = list_dir(&sources)?;
    for (key, &p) in &providers {
        for (name, is_dir) in &on_disk {
            if !is_dir {
                continue;
            }
            let decoded = pct::decode_lenient(name).unwrap_or_else(|| name.clone());
            if decoded != p && fold_key(&decoded) == *key {
                return Err(conflict("provider", &decoded, p, "against sources/ on disk")
                    .with_path(format!("sources/{name}")));
            }
        }
    }
    let mut per_provider: HashMap<&str, Vec<String>> = HashMap::new();
    for ((p, key), &t) in &threads {
        if !per_provider.contains_key(p) {
            let dir = sources.join(pct::encode(p)).join("_v2");
            let stems = list_dir(&dir)?
                .into_iter()
                .filter(|(_, is_dir)| !is_dir)
                .filter_map(|(n, _)| n.strip_suffix(".md").map(str::to_owned))
                .collect();
            per_provider.insert(p, stems);
        }
        for stem in &per_provider[p] {
            let decoded = pct::decode_lenient(stem).unwrap_or_else(|| stem.clone());
            if decoded != t && fold_key(&decoded) == *key {
                return Err(conflict("thread", &decoded, t, "against the _v2 files on disk")
                    .with_path(format!("sources/{}/_v2/{stem}.md", pct::encode(p))));
            }
        }
    }
    Ok(())
}

/// Plans a batch against workspace `root` without writing anything.
pub fn plan(root: &Path, records: &[SourceRecord]) -> Result<AppendPlan> {
    if !records.is_empty() {
        fsio::check_no_links(root, fsio::TMP_DIR)?;
    }
    check_collisions(root, records)?;
    // Group by file, keeping batch order within each file.
    let mut groups: BTreeMap<String, Vec<&SourceRecord>> = BTreeMap::new();
    for r in records {
        groups.entry(r.id().v2_path()).or_default().push(r);
    }
    let mut report = AppendReport::default();
    let mut writes = Vec::new();
    for (rel, group) in groups {
        fsio::check_no_links(root, &rel)?;
        let path = root.join(&rel);
        let existing = match fs::symlink_metadata(&path) {
            Ok(_) => Some(fsio::read_file(&path)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(e, "cannot stat", &path)),
        };
        let first = group[0].id();
        let expect = Expect { provider: first.provider(), thread: first.thread() };
        let mut seen: HashSet<String> = HashSet::new();
        let mut bytes = match &existing {
            Some(bytes) => {
                let parsed = v2::parse_prefix(bytes, Some(expect));
                if let Some(d) = parsed.error {
                    return Err(Error::new(
                        Code::ValidationFailed,
                        format!(
                            "{rel} does not parse to its end (byte {}, line {}: {}); a damaged archive is never appended to, nothing was written",
                            d.offset, d.line, d.reason
                        ),
                    )
                    .with_path(rel.clone())
                    .with_offset(d.offset as u64)
                    .with_line(d.line));
                }
                seen.extend(parsed.frames.iter().map(|f| f.source_text.to_owned()));
                bytes.to_vec()
            }
            None => {
                let mut b = Vec::with_capacity(4096);
                b.extend_from_slice(v2::MARKER.as_bytes());
                b.push(b'\n');
                b
            }
        };
        let mut added = 0;
        for r in group {
            if seen.insert(r.id().text()) {
                v2::write_frame(r, &mut bytes);
                added += 1;
            } else {
                report.duplicates += 1;
            }
        }
        if added > 0 {
            report.appended += added;
            report.files.push(rel.clone());
            writes.push((rel, bytes));
        }
    }
    Ok(AppendPlan { writes, report })
}

impl AppendPlan {
    /// Writes every planned file by atomic whole-file replacement.
    pub fn commit(self, root: &Path) -> Result<AppendReport> {
        for (rel, bytes) in &self.writes {
            fsio::replace_file(root, &root.join(rel), bytes)?;
        }
        Ok(self.report)
    }
}

/// Appends a batch to the archive of workspace `root`: [`plan`], then
/// [`AppendPlan::commit`].
pub fn append(root: &Path, records: &[SourceRecord]) -> Result<AppendReport> {
    plan(root, records)?.commit(root)
}
