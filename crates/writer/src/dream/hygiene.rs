//! The offline hygiene of every dream pass: deterministic, needs no model,
//! one transaction (writer `sleep`) or none. Never touches `sources/`.
//!
//! * **Twins merged.** Two valid blocks are twins when their text is equal
//!   once footnote references and the trailing ` ^id` are left out, white
//!   space runs are one space (ends trimmed) and case is folded
//!   (`NFC(casefold(NFC(…)))`), compared by SHA-256 of that key, so the
//!   work is one pass over the blocks however many there are. Of a group of
//!   twins one stays: the first of `topics/core.md` (what every prompt
//!   shows), then by path, then by position. It cites every source the
//!   others cited (their evidence definitions copied into its file with the
//!   link paths made relative to it, under a label the file defines with
//!   exactly that evidence); the others are removed, with the definitions
//!   nothing cites any more, and every link to a removed block is pointed
//!   at the one that stays ([`links`]). Only twins of equal trust merge (a
//!   pending block never makes a trusted one pending), a block citing an
//!   ordinary footnote (its text would be lost) is left alone, and a block
//!   holding a link, or in `topics/self/` (the persona and identity), merges
//!   only with twins in its own file: a relative link means something else
//!   in another folder. A group whose links cannot be rewritten (a path a
//!   link cannot hold as it is) is left as it is.
//! * **People cards' aliases sorted.** In a file whose front matter says
//!   `kind: person`, an `aliases: [...]` list is sorted (by folded case,
//!   then bytewise) with exact duplicates dropped, written `aliases: [a, b]`.
//!
//! A second run finds nothing to do: the key of the block that stays does
//! not change, and a sorted list stays sorted.

mod cite;
mod edit;
mod links;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use scriptorium_scheduler::{WriteFailure, Written};
use scriptorium_source_archive::id::fold_key;
use scriptorium_topic_markdown::diag::Code as Diag;
use scriptorium_topic_markdown::parse::{
    inline_spans, is_evidence_label, unescape_item, FmValue, Inline, Link, TopicFile, TopicKind,
};
use scriptorium_topic_markdown::validate::{link_target, BlockState, Checked, LinkTarget, Loaded};
use scriptorium_transaction::observe::Provenance;
use scriptorium_transaction::{self as transaction, Base, Edit, Patch, Tier};

use cite::{Labels, Resolved};
use edit::FileEdit;
use links::Moves;

/// What the hygiene of one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Done {
    /// The transaction, when something changed.
    pub written: Option<Written>,
    /// Blocks removed into a twin.
    pub merged: usize,
    /// People cards whose aliases were sorted.
    pub aliases: usize,
}

/// The hygiene's edits of a workspace, before they are committed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// One `replace` per changed file, in path order.
    pub edits: Vec<Edit>,
    /// Blocks removed into a twin.
    pub merged: usize,
    /// People cards whose aliases were sorted.
    pub aliases: usize,
}

/// Runs the hygiene on the workspace at `root` as one transaction (writer
/// `sleep`), holding the write lock from reading to the install.
pub fn run(root: &Path, lock_timeout: Duration) -> Result<Done, WriteFailure> {
    let mut w = transaction::Committer::open(root, lock_timeout)?;
    let checkup = transaction::snapshot::checkup(root)?;
    let plan = plan(&checkup.topics.loaded, &checkup.checked);
    if plan.edits.is_empty() {
        return Ok(Done::default());
    }
    let patch = Patch {
        base_revision: String::new(),
        message: format!(
            "sleep: hygiene ({} duplicate blocks merged, {} alias lists sorted)",
            plan.merged, plan.aliases
        ),
        sources: Vec::new(),
        edits: plan.edits,
    };
    let done = w.commit_as(&patch, Tier::Owner, Base::Any, &Provenance::by("sleep"))?;
    Ok(Done {
        written: Some(Written { revision: done.revision, changed: done.changed, limits: Vec::new() }),
        merged: plan.merged,
        aliases: plan.aliases,
    })
}

/// One block: its file's index in the topics and its index in the file.
type At = (usize, usize);

/// The most rounds of merging one plan makes (see [`plan`]).
pub const ROUNDS: usize = 16;

/// Plans the hygiene of `topics`, checked as `checked`.
///
/// Pointing links at the blocks that stay can make two blocks twins that
/// were not (they differed only in which of two twins they linked to), so
/// the merge is repeated on its own result until a round merges nothing,
/// at most [`ROUNDS`] rounds (each one pass over the blocks); the blocks
/// keep the verdicts of `checked` by their ids, which the merge never
/// changes.
pub fn plan(topics: &[Loaded], checked: &Checked) -> Plan {
    let states: HashMap<(&str, &str), &BlockState> =
        checked.blocks.iter().filter_map(|s| Some(((s.path.as_str(), s.id.as_deref()?), s))).collect();
    let mut current: Vec<Loaded> = topics.to_vec();
    let mut merged = 0;
    for _ in 0..ROUNDS {
        let (texts, n) = merge_round(&current, &states);
        if n == 0 {
            break;
        }
        merged += n;
        for (t, text) in current.iter_mut().zip(texts) {
            if let Some(text) = text {
                *t = Loaded::parse(&t.path, &text);
            }
        }
    }
    let mut aliases = 0;
    let mut edits = Vec::new();
    for (t, before) in current.iter().zip(topics) {
        let mut e = FileEdit::new(&t.file);
        aliases += usize::from(sort_aliases(t, &mut e));
        let content = e.print();
        if content != before.file.print() {
            edits.push(Edit::Replace { path: t.path.clone(), content });
        }
    }
    Plan { edits, merged, aliases }
}

/// One round of merging twins: each changed file's new text, and the
/// blocks removed.
fn merge_round(
    topics: &[Loaded],
    states: &HashMap<(&str, &str), &BlockState>,
) -> (Vec<Option<String>>, usize) {
    let mut groups: HashMap<[u8; 32], Vec<At>> = HashMap::new();
    for (fi, t) in topics.iter().enumerate() {
        for (bi, b) in t.file.blocks.iter().enumerate() {
            let state = b.id.as_deref().and_then(|id| states.get(&(t.path.as_str(), id)));
            if let Some(key) = state.and_then(|s| twin_key(t, bi, s)) {
                groups.entry(key).or_default().push((fi, bi));
            }
        }
    }
    let mut groups: Vec<Vec<At>> = groups.into_values().filter(|g| g.len() > 1).collect();
    for g in &mut groups {
        g.sort_by_key(|&(fi, bi)| (topics[fi].path != "topics/core.md", fi, bi));
    }
    groups.sort();
    let mut edits: Vec<FileEdit<'_>> = topics.iter().map(|t| FileEdit::new(&t.file)).collect();
    let merged = merge(topics, &groups, &mut edits);
    let texts = edits.iter().map(|e| e.is_edited().then(|| e.print())).collect();
    (texts, merged)
}

/// The twin key of block `bi` of `t`, or `None` when it takes no part: not
/// valid, no id, or citing an ordinary footnote.
fn twin_key(t: &Loaded, bi: usize, state: &BlockState) -> Option<[u8; 32]> {
    let b = &t.file.blocks[bi];
    let id = b.id.as_deref()?;
    if !state.valid || b.refs.is_empty() || !b.refs.iter().all(|r| is_evidence_label(&r.label)) {
        return None;
    }
    let mut text = String::new();
    for k in b.first_line..=b.last_line {
        let mut line = t.file.line(k);
        if k == b.last_line {
            line = line.strip_suffix(id).and_then(|l| l.strip_suffix(" ^")).unwrap_or(line);
        }
        if k > b.first_line {
            text.push('\n');
        }
        if t.file.is_fenced(k) {
            text.push_str(line);
            continue;
        }
        let mut at = 0;
        for span in inline_spans(line) {
            if let Inline::Footnote(_) = span.item {
                text.push_str(&line[at..span.range.start]);
                at = span.range.end;
            }
        }
        text.push_str(&line[at..]);
    }
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let own_file = !b.links.is_empty() || t.path.starts_with("topics/self/");
    let mut h = Sha256::new();
    h.update(if state.pending { b"pending\0" } else { b"trusted\0" });
    h.update(if own_file { t.path.as_bytes() } else { b"" });
    h.update(b"\0");
    h.update(fold_key(&collapsed).as_bytes());
    Some(h.finalize().into())
}

/// What one merge adds to the block that stays.
struct Staying {
    at: At,
    refs: Vec<String>,
}

/// Every link to a block, by the block's (path, id): the linking file and
/// the link.
type Incoming<'t> = HashMap<(String, String), Vec<(usize, &'t Link)>>;

fn incoming(topics: &[Loaded]) -> Incoming<'_> {
    let mut out: Incoming<'_> = HashMap::new();
    for (fi, t) in topics.iter().enumerate() {
        for b in &t.file.blocks {
            for (_, link) in &b.links {
                if let Ok(Some(LinkTarget { path, block_id: Some(id) })) = link_target(&t.path, link) {
                    out.entry((path, id)).or_default().push((fi, link));
                }
            }
        }
    }
    out
}

/// Merges each group into its first block; returns the blocks removed.
fn merge(topics: &[Loaded], groups: &[Vec<At>], edits: &mut [FileEdit<'_>]) -> usize {
    let key =
        |(fi, bi): At| (topics[fi].path.clone(), topics[fi].file.blocks[bi].id.clone().unwrap_or_default());
    let links_to = incoming(topics);
    let mut moves = Moves::new();
    let mut merged: Vec<&Vec<At>> = Vec::new();
    for g in groups {
        let (to, id) = key(g[0]);
        // Every link to a block that would go must be able to follow it.
        let holds = g[1..].iter().all(|&at| {
            let links = links_to.get(&key(at)).map_or(&[][..], Vec::as_slice);
            links.iter().all(|(fi, link)| links::new_target(&topics[*fi].path, link, &to, &id).is_some())
        });
        if holds {
            for &at in &g[1..] {
                moves.insert(key(at), (to.clone(), id.clone()));
            }
            merged.push(g);
        }
    }
    let removed: HashSet<At> = merged.iter().flat_map(|g| g[1..].iter().copied()).collect();
    let mut labels: Vec<Option<Labels>> = topics.iter().map(|_| None).collect();
    let mut added: HashMap<At, Vec<String>> = HashMap::new();
    for g in &merged {
        let s = absorb(topics, g, &mut labels, edits);
        added.insert(s.at, s.refs);
    }
    for (fi, t) in topics.iter().enumerate() {
        rewrite_file(t, fi, &removed, &added, &moves, &mut edits[fi]);
    }
    removed.len()
}

/// The labels of file `fi`, read once.
fn labels_of<'l>(labels: &'l mut [Option<Labels>], topics: &[Loaded], fi: usize) -> &'l mut Labels {
    labels[fi].get_or_insert_with(|| Labels::of(&topics[fi].path, &topics[fi].file))
}

/// The block that stays of `g` takes the evidence of the others: the
/// labels it must cite, and the definitions its file needs for them.
fn absorb(topics: &[Loaded], g: &[At], labels: &mut [Option<Labels>], edits: &mut [FileEdit<'_>]) -> Staying {
    let (sf, sb) = g[0];
    let block = &topics[sf].file.blocks[sb];
    let ours = labels_of(labels, topics, sf);
    let mut cited: HashSet<Resolved> =
        block.refs.iter().filter_map(|r| ours.get(&r.label).cloned()).collect();
    let mut gathered: Vec<(String, Resolved)> = Vec::new();
    for &(fi, bi) in &g[1..] {
        for r in &topics[fi].file.blocks[bi].refs {
            if let Some(ev) = labels_of(labels, topics, fi).get(&r.label) {
                if cited.insert(ev.clone()) {
                    gathered.push((r.label.clone(), ev.clone()));
                }
            }
        }
    }
    let path = &topics[sf].path;
    let ours = labels_of(labels, topics, sf);
    let mut refs = Vec::new();
    let mut first = true;
    for (wanted, ev) in gathered {
        let (label, line) = ours.cite(&wanted, &ev, path);
        if let Some(line) = line {
            // A blank line between the block and the definitions it takes.
            if std::mem::take(&mut first) {
                edits[sf].add_after(block.last_line, String::new());
            }
            edits[sf].add_after(block.last_line, line);
        }
        refs.push(label);
    }
    Staying { at: (sf, sb), refs }
}

/// One file's share of the merges: its removed blocks and the definitions
/// only they cited go, the staying blocks cite what they took, and links to
/// removed blocks follow them.
fn rewrite_file(
    t: &Loaded,
    fi: usize,
    removed: &HashSet<At>,
    added: &HashMap<At, Vec<String>>,
    moves: &Moves,
    e: &mut FileEdit<'_>,
) {
    let f: &TopicFile = e.file();
    let mut kept_labels: HashSet<&str> = HashSet::new();
    let mut gone_labels: BTreeSet<&str> = BTreeSet::new();
    for (bi, b) in f.blocks.iter().enumerate() {
        let labels = b.refs.iter().map(|r| r.label.as_str());
        if removed.contains(&(fi, bi)) {
            e.remove(b.first_line, b.last_line);
            gone_labels.extend(labels);
        } else {
            kept_labels.extend(labels);
            kept_labels.extend(added.get(&(fi, bi)).into_iter().flatten().map(String::as_str));
        }
    }
    for label in gone_labels.into_iter().filter(|l| !kept_labels.contains(l)) {
        if let Some(d) = f.definition(label) {
            e.remove(d.line, d.line);
        }
    }
    // The lines to rewrite: those that may hold links (the blocks' with
    // links, headings, ordinary footnote definitions: a reader follows
    // those too), and the last line of each block that takes citations
    // (with its id and the labels).
    let mut lines: BTreeMap<usize, Option<(&str, &[String])>> = BTreeMap::new();
    let ordinary = f.definitions.iter().filter(|d| d.evidence.is_none()).map(|d| d.line);
    for k in f.headings.iter().copied().chain(ordinary) {
        lines.insert(k, None);
    }
    for (bi, b) in f.blocks.iter().enumerate() {
        if removed.contains(&(fi, bi)) {
            continue;
        }
        for (k, _) in &b.links {
            lines.entry(*k).or_insert(None);
        }
        if let (Some(id), Some(refs)) = (b.id.as_deref(), added.get(&(fi, bi)).filter(|r| !r.is_empty())) {
            lines.insert(b.last_line, Some((id, refs)));
        }
    }
    for (k, cites) in lines {
        let mut line = links::retarget(&t.path, e.line(k), moves).unwrap_or_else(|| e.line(k).to_owned());
        if let Some((id, refs)) = cites {
            let suffix = format!(" ^{id}");
            let body = line.strip_suffix(&suffix).unwrap_or(&line).to_owned();
            let refs: String = refs.iter().map(|l| format!("[^{l}]")).collect();
            line = format!("{body}{refs}{suffix}");
        }
        if line != e.line(k) {
            e.set(k, line);
        }
    }
}

/// Sorts the `aliases` list of a people card; returns whether it changed.
fn sort_aliases(t: &Loaded, e: &mut FileEdit<'_>) -> bool {
    let Some(fm) = &t.file.front_matter else { return false };
    if fm.kind() != Some(TopicKind::Person) || t.problems.iter().any(|p| p.code == Diag::BadFrontMatter) {
        return false;
    }
    let mut changed = false;
    for entry in fm.entries.iter().filter(|x| x.key == "aliases") {
        let FmValue::List(items) = &entry.value else { continue };
        // Sorted and compared as read: `a\u{2c}b` and `a\u{2C}b` are one alias.
        let mut sorted: Vec<(String, String, &String)> = items
            .iter()
            .map(|a| {
                let read = unescape_item(a).into_owned();
                (fold_key(&read), read, a)
            })
            .collect();
        sorted.sort();
        sorted.dedup_by(|a, b| a.1 == b.1);
        let sorted: Vec<&str> = sorted.iter().map(|(_, _, a)| a.as_str()).collect();
        if sorted.len() != items.len() || sorted.iter().zip(items).any(|(a, b)| *a != b.as_str()) {
            e.set(entry.line, format!("aliases: [{}]", sorted.join(", ")));
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests;
