//! The views the document derives from the topic files and the archive:
//! the people and the speakers they cite, how often each speaker is
//! cited, the timeline, `relations.json` and `core.md`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use scriptorium_topic_markdown::time::Instant;
use scriptorium_topic_markdown::validate::{Checked, Loaded};
use scriptorium_topic_markdown::views;

use super::archive::shown_as;
use super::topics::Index;
use super::{
    BlockOut, CitedSpeaker, CoreOut, DayOut, FileOut, Item, PersonOut, RecordOut, Relations, SpeakerOut,
};

/// People: person files and the speakers of the records they cite.
pub(super) fn people(files: &[FileOut], blocks: &[BlockOut], records: &[RecordOut]) -> Vec<PersonOut> {
    let mut people = Vec::new();
    for (f, file) in files.iter().enumerate() {
        if file.kind != Some("person") {
            continue;
        }
        let mut seen: HashSet<usize> = HashSet::new();
        let mut by_speaker: BTreeMap<(bool, String), usize> = BTreeMap::new();
        for item in &file.items {
            let Item::Block { block } = item else { continue };
            for &r in &blocks[*block].records {
                if seen.insert(r) {
                    let v = &records[r].view;
                    let who = shown_as(v).unwrap_or_else(|| v.role.clone());
                    *by_speaker.entry((v.speaker_trusted, who)).or_default() += 1;
                }
            }
        }
        let mut speakers: Vec<CitedSpeaker> = by_speaker
            .into_iter()
            .map(|((trusted, attribution), records)| CitedSpeaker { attribution, trusted, records })
            .collect();
        speakers.sort_by(|a, b| b.records.cmp(&a.records).then_with(|| a.attribution.cmp(&b.attribution)));
        people.push(PersonOut { file: f, aliases: file.aliases.clone(), speakers });
    }
    people
}

/// How often each speaker is cited: the embedded records some block cites,
/// counted under the speaker each is shown as.
pub(super) fn count_cited(speakers: &mut [SpeakerOut], records: &[RecordOut]) {
    let mut cited_per: HashMap<(bool, String), usize> = HashMap::new();
    for r in records.iter().filter(|r| !r.cited_by.is_empty()) {
        if let Some(who) = shown_as(&r.view) {
            *cited_per.entry((r.view.speaker_trusted, who)).or_default() += 1;
        }
    }
    for s in speakers {
        s.cited = cited_per.get(&(s.trusted, s.attribution.clone())).copied().unwrap_or(0);
    }
}

/// The timeline: every block on each UTC day its evidence falls on, and
/// the number of records of each day.
pub(super) fn timeline(
    checked: &Checked,
    index: &Index<'_>,
    files: &[FileOut],
    blocks: &[BlockOut],
    records_per_day: &BTreeMap<String, usize>,
) -> Vec<DayOut> {
    let mut days = blocks_per_day(checked, index);
    let mut all_days: Vec<String> = days.keys().cloned().collect();
    all_days.extend(records_per_day.keys().cloned());
    all_days.sort();
    all_days.dedup();
    all_days
        .into_iter()
        .map(|day| {
            let mut on = days.remove(&day).unwrap_or_default();
            on.sort_by(|a, b| {
                let (ba, bb) = (&blocks[a.1], &blocks[b.1]);
                (a.0, &files[ba.file].path, &ba.id).cmp(&(b.0, &files[bb.file].path, &bb.id))
            });
            let records = records_per_day.get(&day).copied().unwrap_or(0);
            DayOut { day, blocks: on.into_iter().map(|(_, k)| k).collect(), records }
        })
        .collect()
}

/// Each block under every UTC day (`YYYY-MM-DD`, years 0 to 9999) its
/// evidence falls on, with its earliest instant on that day.
fn blocks_per_day(checked: &Checked, index: &Index<'_>) -> BTreeMap<String, Vec<(Instant, usize)>> {
    let mut days: BTreeMap<String, Vec<(Instant, usize)>> = BTreeMap::new();
    for s in &checked.blocks {
        let Some(&f) = index.file_index.get(s.path.as_str()) else { continue };
        let Some(&k) = index.block_at.get(&(f, s.index)) else { continue };
        let mut on: BTreeMap<(i64, i64, i64), Instant> = BTreeMap::new();
        for (_, instant) in &s.times {
            let e = on.entry(instant.utc_day()).or_insert(*instant);
            if *instant < *e {
                *e = *instant;
            }
        }
        for ((y, m, d), instant) in on {
            if (0..=9999).contains(&y) {
                days.entry(format!("{y:04}-{m:02}-{d:02}")).or_default().push((instant, k));
            }
        }
    }
    days
}

/// `relations.json`, as the derived view writes it.
pub(super) fn relations(topics: &[Loaded], checked: &Checked) -> Relations {
    match views::relations(topics, checked).0 {
        Some(json) => serde_json::from_str(&json).expect("relations.json is the shape it is written in"),
        None => Relations::default(),
    }
}

/// `core.md`, as the derived view renders it: the blocks taken, left out
/// for the budget and never eligible, and how the file on disk compares.
pub(super) fn core(
    root: &Path,
    topics: &[Loaded],
    checked: &Checked,
    budget: usize,
    index: &Index<'_>,
    files: &[FileOut],
    blocks: &[BlockOut],
) -> CoreOut {
    let core_file = topics.iter().find(|t| t.path == "topics/core.md");
    let render = views::render_core(core_file, checked, budget);
    let path = core_file.map(|t| t.path.clone());
    let f = core_file.and_then(|t| index.file_index.get(t.path.as_str()).copied());
    let mut included = Vec::new();
    let mut ineligible = Vec::new();
    if let Some(f) = f {
        for item in &files[f].items {
            let Item::Block { block } = item else { continue };
            let b = &blocks[*block];
            match &b.id {
                Some(id) if b.valid && !b.pending => {
                    if !render.report.omitted.contains(id) {
                        included.push(id.clone());
                    }
                }
                _ => ineligible.push(*block),
            }
        }
    }
    let on_disk = core_on_disk(root, render.bytes.as_ref());
    CoreOut {
        path,
        budget,
        tokens: render.report.tokens,
        included,
        omitted: render.report.omitted,
        ineligible,
        text: render.bytes,
        on_disk,
    }
}

/// How the workspace's `core.md` compares with `rendered`: `blocked`,
/// `hand-written`, `current`, `stale` or `absent`.
fn core_on_disk(root: &Path, rendered: Option<&String>) -> &'static str {
    let blocked = matches!(
        scriptorium_transaction::views::CoreSlot::of(root),
        scriptorium_transaction::views::CoreSlot::Blocked(_)
    );
    match std::fs::read_to_string(root.join("core.md")) {
        _ if blocked => "blocked",
        Ok(text) if !text.starts_with(views::CORE_MARKER) => "hand-written",
        Ok(text) if Some(&text) == rendered => "current",
        Ok(_) => "stale",
        Err(_) if rendered.is_none() => "absent",
        Err(_) => "stale",
    }
}
