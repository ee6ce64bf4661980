//! The index files under `.scriptorium/index/`: the base, the head delta
//! and the older deltas it stands on, each published atomically.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use scriptorium_source_archive::{fsio, Code, Error};

use super::{BASE, DELTA, DIR, PROMOTED, REVISION};
use crate::delta::Refreshed;
use crate::search::View;
use crate::segment::{self, Segment};
use crate::tokenize::TokenizerConfig;

pub(super) fn index_dir(root: &Path) -> PathBuf {
    root.join(DIR)
}

pub(super) fn map(path: &Path) -> Result<Option<segment::Bytes>, Error> {
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(e, "cannot open", path)),
    };
    let map = segment::MappedFile::map(&file).map_err(|e| Error::io(e, "cannot map", path))?;
    Ok(Some(Arc::new(map)))
}

/// The file of an older delta the head stands on.
pub(super) fn segment_file(id: u64) -> String {
    format!("seg-{id:016x}.idx")
}

/// Opens the index files as they are, without checking them against the
/// workspace: `Err(why)` when there is no usable index. A head whose
/// stack does not match the files (another base, an older delta missing or
/// replaced) is ignored: the files it covers read as changed and are
/// re-read.
pub fn open_existing(root: &Path, config: TokenizerConfig) -> Result<Result<View, String>, Error> {
    let dir = index_dir(root);
    let Some(base) = map(&dir.join(BASE))? else { return Ok(Err("no index yet".into())) };
    let base = match Segment::open(base, config) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let mut segs = vec![base];
    if let Some(head) = map(&dir.join(DELTA))? {
        if let Some(mut stack) = open_stack(&dir, &segs[0], head, config)? {
            segs.append(&mut stack);
        }
    }
    match View::stack(segs) {
        Ok(v) => Ok(Ok(v)),
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// The deltas of a head over `base`, oldest first, the head last; `None`
/// when they do not fit together.
fn open_stack(
    dir: &Path,
    base: &Segment,
    head: segment::Bytes,
    config: TokenizerConfig,
) -> Result<Option<Vec<Segment>>, Error> {
    let Ok(head) = Segment::open(head, config) else { return Ok(None) };
    let Ok(stack) = head.stack() else { return Ok(None) };
    if !head.is_delta() || stack.first() != Some(&(base.id(), base.len())) {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(stack.len());
    for &(id, docs) in &stack[1..] {
        let Some(bytes) = map(&dir.join(segment_file(id)))? else { return Ok(None) };
        match Segment::open(bytes, config) {
            Ok(s) if s.id() == id && s.len() == docs => out.push(s),
            _ => return Ok(None),
        }
    }
    out.push(head);
    Ok(Some(out))
}

/// The revision the index files describe, as the last writer recorded it.
pub(super) fn recorded_revision(root: &Path) -> Option<String> {
    let bytes = fs::read(index_dir(root).join(REVISION)).ok()?;
    String::from_utf8(bytes).ok().map(|s| s.trim_end().to_owned())
}

/// Records that the index files describe `revision` (a cache: losing it
/// costs one walk of the workspace).
pub(super) fn record_revision(root: &Path, revision: &str) -> Result<(), Error> {
    if recorded_revision(root).as_deref() == Some(revision) {
        return Ok(());
    }
    fsio::check_no_links(root, &format!("{DIR}/{REVISION}"))?;
    fsio::replace_cache_file(root, &index_dir(root).join(REVISION), format!("{revision}\n").as_bytes())
}

/// Writes one index file. Whatever the index files described before, the
/// recorded revision no longer says: it is removed first.
pub(super) fn publish(root: &Path, name: &str, bytes: &[u8]) -> Result<(), Error> {
    fsio::check_no_links(root, &format!("{DIR}/{REVISION}"))?;
    let revision = index_dir(root).join(REVISION);
    match fs::remove_file(&revision) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(e, "cannot remove", &revision)),
    }
    fsio::check_no_links(root, &format!("{DIR}/{name}"))?;
    fsio::check_no_links(root, fsio::TMP_DIR)?;
    fsio::replace_file(root, &index_dir(root).join(name), bytes)
}

/// The promotions the index was last written with (none when unknown).
pub(super) fn reflected_promotions(root: &Path) -> BTreeSet<String> {
    match fs::read(index_dir(root).join(PROMOTED)) {
        Ok(b) => String::from_utf8_lossy(&b).lines().filter(|l| !l.is_empty()).map(str::to_owned).collect(),
        Err(_) => BTreeSet::new(),
    }
}

pub(super) fn record_promoted(root: &Path, promoted: &BTreeSet<String>) -> Result<(), Error> {
    if promoted.is_empty() && !index_dir(root).join(PROMOTED).exists() {
        return Ok(());
    }
    let mut text = String::new();
    for id in promoted {
        text.push_str(id);
        text.push('\n');
    }
    publish(root, PROMOTED, text.as_bytes())
}

pub(super) fn remove_delta(root: &Path) -> Result<(), Error> {
    let p = index_dir(root).join(DELTA);
    match fs::remove_file(&p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(e, "cannot remove", &p)),
    }
}

/// Writes a new base: no delta, the promotions it reflects.
pub(super) fn save_base(root: &Path, bytes: &[u8], promoted: &BTreeSet<String>) -> Result<(), Error> {
    publish(root, BASE, bytes)?;
    remove_delta(root)?;
    remove_segments(root, &[])?;
    record_promoted(root, promoted)
}

/// Writes what a refresh folded in over `view` (the index it refreshed).
pub(super) fn save_refreshed(
    root: &Path,
    view: &View,
    refreshed: &Refreshed,
    promoted: &BTreeSet<String>,
) -> Result<(), Error> {
    match refreshed {
        Refreshed::Delta(bytes) => {
            let head = Segment::open_vec(bytes.clone(), view.base().config())
                .map_err(|d| Error::new(Code::Io, format!("the new delta is unusable: {d}")))?;
            let stack = head.stack().map_err(|d| Error::new(Code::Io, d.to_string()))?;
            let below = &view.segments()[..stack.len().min(view.segments().len())];
            let ids: Vec<u64> = stack.iter().map(|s| s.0).collect();
            for seg in below.iter().skip(1) {
                keep_segment(root, view, seg)?;
            }
            publish(root, DELTA, bytes)?;
            remove_segments(root, &ids)?;
            record_promoted(root, promoted)
        }
        Refreshed::Base(bytes) => save_base(root, bytes, promoted),
    }
}

/// Makes sure an older delta the new head stands on has its file: the
/// current head becomes one by a hard link (no copy); a file that is
/// missing, or (after a concurrent refresh) holds other bytes, is written
/// from the mapped segment.
fn keep_segment(root: &Path, view: &View, seg: &Segment) -> Result<(), Error> {
    let name = segment_file(seg.id());
    let dir = index_dir(root);
    let target = dir.join(&name);
    let holds = |p: &Path| -> Result<bool, Error> {
        Ok(match map(p)? {
            Some(b) => Segment::open(b, seg.config()).is_ok_and(|s| s.id() == seg.id()),
            None => false,
        })
    };
    if holds(&target)? {
        return Ok(());
    }
    fsio::check_no_links(root, &format!("{DIR}/{name}"))?;
    if view.delta().is_some_and(|h| h.id() == seg.id()) {
        let _ = fs::remove_file(&target);
        if fs::hard_link(dir.join(DELTA), &target).is_ok() && holds(&target)? {
            return Ok(());
        }
    }
    publish(root, &name, seg.bytes())
}

/// Removes the older-delta files whose ids are not in `keep`.
fn remove_segments(root: &Path, keep: &[u64]) -> Result<(), Error> {
    let dir = index_dir(root);
    let entries = match fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(e, "cannot list", &dir)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(e, "cannot list", &dir))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(hex) = name.strip_prefix("seg-").and_then(|n| n.strip_suffix(".idx")) else { continue };
        if u64::from_str_radix(hex, 16).is_ok_and(|id| !keep.contains(&id)) {
            match fs::remove_file(entry.path()) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(e, "cannot remove", &entry.path())),
            }
        }
    }
    Ok(())
}
