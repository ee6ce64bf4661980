//! The archive's part of the document, from one pass over every record:
//! the records to embed (cited or pending), and counts per thread, speaker
//! and day for all of them.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use scriptorium_source_archive::archive::Archive;
use scriptorium_source_archive::json::RecordView;
use scriptorium_source_archive::legacy::LegacyRecord;
use scriptorium_source_archive::{id, SourceRecord};
use scriptorium_topic_markdown::views::percent_path;

use super::{RecordOut, SpeakerOut, ThreadOut};

/// The records the export embeds and how to find them by source id.
pub(super) struct Embedded {
    pub(super) records: Vec<RecordOut>,
    pub(super) by_id: HashMap<String, usize>,
}

/// What [`summarise`] gathers.
pub(super) struct ArchiveSummary {
    pub(super) embedded: Embedded,
    pub(super) threads: Vec<ThreadOut>,
    pub(super) speakers: Vec<SpeakerOut>,
    pub(super) records_per_day: BTreeMap<String, usize>,
    pub(super) pending: usize,
    pub(super) legacy: usize,
}

/// The speaker a record is counted under: a trusted identity's attribution,
/// or a legacy hint's `… [legacy hint]`; `None` without either.
pub(super) fn shown_as(v: &RecordView) -> Option<String> {
    if v.speaker_trusted {
        return Some(v.attribution.clone());
    }
    v.speaker_label
        .as_deref()
        .map(|l| format!("{} [legacy hint]", scriptorium_source_archive::speaker::shown_id(l)))
}

/// Speaker key: a trusted identity's attribution, verbatim id and display.
type SpeakerKey<'a> = (String, Option<&'a str>, Option<&'a str>);

#[derive(Default)]
struct SpeakerCount {
    records: usize,
    pending: usize,
}

/// A timestamp's UTC day: its first ten bytes (`YYYY-MM-DD`; archive
/// timestamps are UTC with a `Z`).
fn day_of(ts: &str) -> Option<&str> {
    ts.get(..10).filter(|d| d.as_bytes().get(4) == Some(&b'-'))
}

/// The `file://` URL of a record: its archive file and anchor.
fn record_url(root_url: &str, path: &str, view: &RecordView) -> String {
    format!("{root_url}{}#{}", percent_path(path), view.anchor.as_deref().unwrap_or(""))
}

/// One pass over the archive: the records to embed (cited or pending),
/// counts per thread, speaker and day for all of them.
pub(super) fn summarise(
    archive: &Archive,
    cited: &HashSet<String>,
    promoted: &BTreeSet<String>,
    root_url: &str,
) -> ArchiveSummary {
    let mut tally = Tally::default();
    for r in archive.v2_records() {
        tally.v2(r, cited, promoted, root_url);
    }
    for (path, r) in archive.legacy_records() {
        tally.legacy(path, r, cited, root_url);
    }
    tally.finish(root_url)
}

/// What the pass over the archive has seen so far.
#[derive(Default)]
struct Tally<'a> {
    records: Vec<RecordOut>,
    by_id: HashMap<String, usize>,
    /// (records, pending, embedded) per v2 thread.
    v2_threads: BTreeMap<(&'a str, &'a str), (usize, usize, usize)>,
    /// (records, pending, embedded) per legacy file.
    legacy_files: BTreeMap<&'a str, (usize, usize, usize)>,
    speakers: HashMap<SpeakerKey<'a>, SpeakerCount>,
    /// Untrusted speaker hints of legacy records, counted apart from trusted ones.
    hints: BTreeMap<String, usize>,
    per_day: BTreeMap<&'a str, usize>,
    pending: usize,
    legacy: usize,
}

impl<'a> Tally<'a> {
    /// Counts a v2 record, and embeds it when it is pending (and not
    /// promoted) or cited.
    fn v2(
        &mut self,
        r: &'a SourceRecord,
        cited: &HashSet<String>,
        promoted: &BTreeSet<String>,
        root_url: &str,
    ) {
        let id = r.id();
        let text = id.text();
        let promoted_here = r.is_pending() && promoted.contains(&text);
        let pending = r.is_pending() && !promoted_here;
        let entry = self.v2_threads.entry((id.provider(), id.thread())).or_default();
        entry.0 += 1;
        if pending {
            entry.1 += 1;
            self.pending += 1;
        }
        if let Some(s) = r.speaker() {
            let c = self.speakers.entry((s.attribution(), s.id(), s.display())).or_default();
            c.records += 1;
            c.pending += usize::from(pending);
        }
        if let Some(d) = day_of(r.timestamp()) {
            *self.per_day.entry(d).or_default() += 1;
        }
        if pending || cited.contains(&text) {
            entry.2 += 1;
            let mut view = RecordView::of_record(r);
            if promoted_here {
                view.trust = scriptorium_source_archive::json::Trust::Trusted;
            }
            let url = record_url(root_url, &view.path, &view);
            self.by_id.insert(text, self.records.len());
            self.records.push(RecordOut {
                view,
                url,
                legacy: false,
                promoted: promoted_here,
                cited_by: Vec::new(),
            });
        }
    }

    /// Counts a legacy record of the file at `path`, and embeds it when it
    /// is cited and no v2 record of the same id is.
    fn legacy(&mut self, path: &'a str, r: &'a LegacyRecord, cited: &HashSet<String>, root_url: &str) {
        self.legacy += 1;
        let entry = self.legacy_files.entry(path).or_default();
        entry.0 += 1;
        if let Some(h) = &r.hint {
            *self.hints.entry(h.attribution()).or_default() += 1;
        }
        if let Some(d) = day_of(&r.timestamp) {
            *self.per_day.entry(d).or_default() += 1;
        }
        let Some(id) = &r.id else { return };
        let text = id.text();
        if cited.contains(&text) && !self.by_id.contains_key(&text) {
            entry.2 += 1;
            let view = RecordView::of_legacy(r, path, None);
            let url = record_url(root_url, path, &view);
            self.by_id.insert(text, self.records.len());
            self.records.push(RecordOut { view, url, legacy: true, promoted: false, cited_by: Vec::new() });
        }
    }

    fn finish(self, root_url: &str) -> ArchiveSummary {
        ArchiveSummary {
            embedded: Embedded { records: self.records, by_id: self.by_id },
            threads: threads(self.v2_threads, self.legacy_files, root_url),
            speakers: speakers(self.speakers, self.hints),
            records_per_day: self.per_day.into_iter().map(|(d, n)| (d.to_owned(), n)).collect(),
            pending: self.pending,
            legacy: self.legacy,
        }
    }
}

/// Every trusted identity and every legacy hint with its counts, most
/// records first (`cited` is filled in once the blocks are known).
fn speakers(
    trusted: HashMap<SpeakerKey<'_>, SpeakerCount>,
    hints: BTreeMap<String, usize>,
) -> Vec<SpeakerOut> {
    let mut speakers: Vec<SpeakerOut> = trusted
        .into_iter()
        .map(|((attribution, id, display), c)| SpeakerOut {
            attribution,
            id: id.map(str::to_owned),
            display: display.map(str::to_owned),
            trusted: true,
            records: c.records,
            pending: c.pending,
            cited: 0,
        })
        .collect();
    speakers.extend(hints.into_iter().map(|(attribution, n)| SpeakerOut {
        attribution,
        id: None,
        display: None,
        trusted: false,
        records: n,
        pending: 0,
        cited: 0,
    }));
    speakers.sort_by(|a, b| b.records.cmp(&a.records).then_with(|| a.attribution.cmp(&b.attribution)));
    speakers
}

/// Every v2 thread file and legacy file with its counts, by path.
fn threads(
    v2_threads: BTreeMap<(&str, &str), (usize, usize, usize)>,
    legacy_files: BTreeMap<&str, (usize, usize, usize)>,
    root_url: &str,
) -> Vec<ThreadOut> {
    let mut threads: Vec<ThreadOut> = v2_threads
        .into_iter()
        .map(|((provider, thread), c)| (id::v2_path(provider, thread), c))
        .chain(legacy_files.into_iter().map(|(path, c)| (path.to_owned(), c)))
        .map(|(path, (records, pending, embedded))| ThreadOut {
            url: format!("{root_url}{}", percent_path(&path)),
            path,
            records,
            pending,
            embedded,
        })
        .collect();
    threads.sort_by(|a, b| a.path.cmp(&b.path));
    threads
}
