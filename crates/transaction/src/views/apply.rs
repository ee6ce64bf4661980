//! The views after a change, from the views before it: only the re-checked
//! files' pieces are made anew; every other file's bytes are copied from
//! the views as written (`relations.json`, `recent_events.jsonl`, the
//! timeline files), or, where those cannot be trusted, read from its entry.
//!
//! The tables of the state are kept sorted in output order, so the new
//! `recent_events.jsonl` is the first [`RECENT_EVENTS`] rows of a merge,
//! and a timeline day is the rows of that day; a day is rendered again only
//! when a re-checked file's lines on it changed.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::rc::Rc;

use scriptorium_topic_markdown::views::relations::{self, EdgeKey, NodeKey, Part, Piece};
use scriptorium_topic_markdown::views::{BlockViews, RECENT_EVENTS};

use crate::views::entries;
pub use crate::views::relations_out::{RelationsOut, Run};
use crate::views::stamp::Stamp;
use crate::views::state::{FileRow, Row, Span, State};

/// A file's eligible blocks' pieces, with each block's rank (the position
/// of its id among the file's ids, sorted).
#[derive(Debug)]
pub struct Ranked {
    /// The pieces, in file order.
    pub blocks: Vec<BlockViews>,
    /// Rank → index in `blocks`.
    pub by_rank: Vec<usize>,
}

impl Ranked {
    /// Ranks `blocks`.
    pub fn new(blocks: Vec<BlockViews>) -> Ranked {
        let mut by_rank: Vec<usize> = (0..blocks.len()).collect();
        by_rank.sort_by(|&a, &b| blocks[a].id.cmp(&blocks[b].id));
        Ranked { blocks, by_rank }
    }

    fn at(&self, rank: u32) -> Option<&BlockViews> {
        self.blocks.get(*self.by_rank.get(rank as usize)?)
    }

    fn ids(&self) -> BTreeSet<&str> {
        self.blocks.iter().map(|b| b.id.as_str()).collect()
    }

    /// Every (day, line) of the file's timeline entries.
    fn day_lines(&self) -> Vec<(i32, &str)> {
        let mut v: Vec<(i32, &str)> = self
            .blocks
            .iter()
            .flat_map(|b| b.days.iter().map(|(d, _, line)| (day_number(*d), line.as_str())))
            .collect();
        v.sort_unstable();
        v
    }
}

/// `yyyymmdd`.
pub fn day_number((y, m, d): (i64, i64, i64)) -> i32 {
    (y * 10_000 + m * 100 + d) as i32
}

/// The timeline file of day `yyyymmdd`.
pub fn day_path(day: i32) -> String {
    format!("timeline/{:04}/{:02}/{:02}.md", day / 10_000, day / 100 % 100, day % 100)
}

/// What the views were before the change, as far as they can be trusted.
#[derive(Debug, Default)]
pub struct Before<'a> {
    /// The state the cache recorded (empty for a build from nothing).
    pub state: State,
    /// `relations.json` as written, when its stamp is intact.
    pub relations: Option<&'a [u8]>,
    /// `recent_events.jsonl` as written, when its stamp is intact.
    pub recent: Option<&'a [u8]>,
}

/// What the change makes of the views.
#[derive(Debug, Default)]
pub struct After {
    /// The new state (timeline stamps of the days in `days` still to set).
    pub state: State,
    /// Entry files to write: name → bytes.
    pub entries: Vec<(String, String)>,
    /// Entry names no longer used.
    pub unused: Vec<String>,
    /// `relations.json` (`None`: no topic file).
    pub relations: Option<RelationsOut>,
    /// Nodes and edges.
    pub counts: (usize, usize),
    /// `recent_events.jsonl` (`None`: no event) and its lines.
    pub recent: Option<Vec<u8>>,
    /// Lines of `recent_events.jsonl`.
    pub events: usize,
    /// The timeline days to write (`None`: remove the file).
    pub days: BTreeMap<i32, Option<String>>,
    /// True when `relations.json` had to be sorted whole (file names that
    /// make runs interleave): the state then holds no runs.
    pub unsorted: bool,
    /// `recent_events.jsonl` and `relations.json` are the bytes written
    /// before (trusted): nothing to write.
    pub unchanged: [bool; 2],
}

/// Reads the entries of files outside the change, once each.
struct Lookup<'a> {
    root: &'a Path,
    rows: HashMap<&'a str, &'a FileRow>,
    fresh: &'a HashMap<String, Rc<Ranked>>,
    read: RefCell<HashMap<String, Option<Rc<Ranked>>>>,
}

impl Lookup<'_> {
    fn old(&self, path: &str) -> Option<Rc<Ranked>> {
        if let Some(r) = self.read.borrow().get(path) {
            return r.clone();
        }
        let got = self
            .rows
            .get(path)
            .and_then(|row| entries::read(self.root, &row.entry, path))
            .map(|b| Rc::new(Ranked::new(b)));
        self.read.borrow_mut().insert(path.to_owned(), got.clone());
        got
    }

    /// A file's pieces after the change.
    fn now(&self, path: &str) -> Option<Rc<Ranked>> {
        match self.fresh.get(path) {
            Some(r) => Some(Rc::clone(r)),
            None => self.old(path),
        }
    }

    fn eligible(&self, path: &str, id: &str) -> bool {
        match self.fresh.get(path) {
            Some(r) => r.blocks.iter().any(|b| b.id == id),
            None => self.old(path).is_some_and(|r| r.blocks.iter().any(|b| b.id == id)),
        }
    }
}

/// Applies a change: `fresh` holds the re-checked files that exist and
/// decode (path → their eligible blocks' pieces), `gone` the re-checked
/// files that do not; `linking_to(path)` names the files linking to a
/// topic file. Files outside the change keep their pieces.
pub fn apply(
    root: &Path,
    before: &Before<'_>,
    fresh: &HashMap<String, Rc<Ranked>>,
    gone: &BTreeSet<String>,
    linking_to: &dyn Fn(&str) -> Vec<String>,
    revision: &str,
) -> After {
    let old = &before.state;
    let lookup = Lookup {
        root,
        rows: old.files.iter().map(|r| (r.path.as_str(), r)).collect(),
        fresh,
        read: RefCell::new(HashMap::new()),
    };
    let touched: BTreeSet<&str> =
        fresh.keys().map(String::as_str).chain(gone.iter().map(String::as_str)).collect();
    let old_fids: HashSet<u32> =
        old.files.iter().filter(|r| touched.contains(r.path.as_str())).map(|r| r.fid).collect();
    // The files: the untouched rows, then a row for every fresh file.
    let mut after =
        After { state: State { revision: revision.to_owned(), ..State::default() }, ..After::default() };
    let mut next_fid = old.next_fid;
    let mut files: Vec<FileRow> =
        old.files.iter().filter(|r| !touched.contains(r.path.as_str())).cloned().collect();
    let mut fids: HashMap<&str, u32> = HashMap::new();
    for (path, r) in fresh {
        let fid = match lookup.rows.get(path.as_str()) {
            Some(row) => row.fid,
            None => {
                next_fid += 1;
                next_fid - 1
            }
        };
        fids.insert(path, fid);
        let (name, body) = entries::encode(path, &r.blocks);
        if lookup.rows.get(path.as_str()).map(|row| &row.entry) != Some(&name) {
            after.entries.push((name.clone(), body));
        }
        let empty = Span { offset: 0, len: 0, count: 0, first: String::new(), last: String::new() };
        files.push(FileRow { fid, path: path.clone(), entry: name, nodes: empty, edges: None });
    }
    for row in old.files.iter().filter(|r| touched.contains(r.path.as_str())) {
        if files.iter().all(|f| f.entry != row.entry) {
            after.unused.push(row.entry.clone());
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    after.state.next_fid = next_fid;
    // Files whose eligible ids changed: their linkers' edges may change.
    let mut remake: BTreeSet<String> = fresh.keys().cloned().collect();
    for path in &touched {
        let before_ids =
            lookup.old(path).map(|r| r.ids().into_iter().map(str::to_owned).collect::<BTreeSet<_>>());
        let after_ids =
            fresh.get(*path).map(|r| r.ids().into_iter().map(str::to_owned).collect::<BTreeSet<_>>());
        if before_ids != after_ids {
            remake.extend(linking_to(path));
        }
    }
    relations_after(&lookup, before, &mut files, &remake, &mut after);
    let path_of: HashMap<u32, &str> = files.iter().map(|r| (r.fid, r.path.as_str())).collect();
    let fresh_fid: HashMap<u32, &str> = fids.iter().map(|(p, f)| (*f, *p)).collect();
    let (events, recent, n) = events_after(&lookup, before, &old_fids, &fids, &path_of, &fresh_fid);
    after.state.events = events;
    after.recent = recent;
    after.events = n;
    days_after(&lookup, old, &touched, &old_fids, &fids, &path_of, &fresh_fid, &mut after);
    after.state.files = files;
    after.unchanged = [
        before.recent.is_some() && after.recent.as_deref() == before.recent,
        // Always written: comparing would read it all again.
        false,
    ];
    after
}

/// The runs made anew: those of `remake`, and of every file whose runs
/// cannot be copied from `relations.json` as written (by index in `files`).
fn remade(
    lookup: &Lookup<'_>,
    before: &Before<'_>,
    files: &[FileRow],
    remake: &BTreeSet<String>,
) -> HashMap<usize, Piece> {
    let eligible = |p: &str, id: &str| lookup.eligible(p, id);
    let mut pieces: HashMap<usize, Piece> = HashMap::new();
    for (k, row) in files.iter().enumerate() {
        let old_bytes = before.relations.filter(|_| !remake.contains(&row.path) && row.nodes.len > 0);
        let copied = old_bytes.is_some_and(|b| {
            let end = |s: u64, l: u64| usize::try_from(s.saturating_add(l)).ok().filter(|&e| e <= b.len());
            end(row.nodes.offset, row.nodes.len).is_some()
                && row.edges.as_ref().is_none_or(|e| end(e.offset, e.len).is_some())
        });
        if !copied {
            let ranked = lookup.now(&row.path);
            let blocks: Vec<&BlockViews> =
                ranked.as_ref().map(|r| r.blocks.iter().collect()).unwrap_or_default();
            pieces.insert(k, relations::piece(&row.path, &blocks, &eligible));
        }
    }
    pieces
}

/// Remakes the runs of `remake` (and of every file when the old
/// `relations.json` cannot be trusted), copies the others, assembles.
fn relations_after(
    lookup: &Lookup<'_>,
    before: &Before<'_>,
    files: &mut [FileRow],
    remake: &BTreeSet<String>,
    after: &mut After,
) {
    if files.is_empty() {
        return;
    }
    let pieces = remade(lookup, before, files, remake);
    let old = before.relations.unwrap_or_default();
    let slice = |s: u64, l: u64| &old[s as usize..(s + l) as usize];
    let mut edge_parts: Vec<(usize, Part<'_, EdgeKey>)> = Vec::new();
    let mut node_parts: Vec<Part<'_, NodeKey>> = Vec::new();
    for (k, row) in files.iter().enumerate() {
        match pieces.get(&k) {
            Some(p) => {
                node_parts.push(Part {
                    first: &p.nodes.first,
                    last: &p.nodes.last,
                    json: p.nodes.json.as_bytes(),
                });
                if let Some(e) = &p.edges {
                    edge_parts.push((k, Part { first: &e.first, last: &e.last, json: e.json.as_bytes() }));
                }
            }
            None => {
                let n = &row.nodes;
                node_parts.push(Part { first: &n.first, last: &n.last, json: slice(n.offset, n.len) });
                if let Some(e) = &row.edges {
                    edge_parts
                        .push((k, Part { first: &e.first, last: &e.last, json: slice(e.offset, e.len) }));
                }
            }
        }
    }
    let edges: Vec<Part<'_, EdgeKey>> = edge_parts.iter().map(|(_, p)| *p).collect();
    // Where the copied runs are in the file as written.
    let old_nodes: Vec<(u64, u64)> = files.iter().map(|r| (r.nodes.offset, r.nodes.len)).collect();
    let old_edges: HashMap<usize, (u64, u64)> = files
        .iter()
        .enumerate()
        .filter_map(|(k, r)| Some((k, r.edges.as_ref().map(|e| (e.offset, e.len))?)))
        .collect();
    let Some(done) = relations::layout(&edges, &node_parts) else {
        sorted_whole(lookup, files, after);
        return;
    };
    let edge_ks: Vec<usize> = edge_parts.iter().map(|(k, _)| *k).collect();
    // Record where every run landed, with its keys.
    let mut new_edges: HashMap<usize, Span<(String, String)>> = HashMap::new();
    for ((k, p), &(offset, len)) in edge_parts.iter().zip(&done.edges) {
        let count = match pieces.get(k) {
            Some(piece) => piece.edges.as_ref().map_or(0, |e| e.count as u64),
            None => files[*k].edges.as_ref().map_or(0, |e| e.count),
        };
        new_edges.insert(*k, Span { offset, len, count, first: p.first.clone(), last: p.last.clone() });
    }
    let mut counts = (0, 0);
    for (k, (row, &(offset, len))) in files.iter_mut().zip(&done.nodes).enumerate() {
        let count = pieces.get(&k).map_or(row.nodes.count, |p| p.nodes.count as u64);
        let (first, last) = match pieces.get(&k) {
            Some(p) => (p.nodes.first.clone(), p.nodes.last.clone()),
            None => (row.nodes.first.clone(), row.nodes.last.clone()),
        };
        row.nodes = Span { offset, len, count, first, last };
        row.edges = new_edges.remove(&k);
        counts.0 += count as usize;
        counts.1 += row.edges.as_ref().map_or(0, |e| e.count as usize);
    }
    let run = |new: Option<&String>, old: (u64, u64)| match new {
        Some(json) => Run::New(json.clone()),
        None => Run::Old(old.0, old.1),
    };
    let edge_runs: Vec<Run> = edge_ks
        .iter()
        .map(|k| {
            let new = pieces.get(k).and_then(|p| p.edges.as_ref()).map(|e| &e.json);
            run(new, old_edges.get(k).copied().unwrap_or_default())
        })
        .collect();
    let node_runs: Vec<Run> =
        (0..old_nodes.len()).map(|k| run(pieces.get(&k).map(|p| &p.nodes.json), old_nodes[k])).collect();
    after.relations = Some(RelationsOut::Runs { layout: done, edges: edge_runs, nodes: node_runs });
    after.counts = counts;
}

/// `relations.json` for runs that interleave: every item sorted at once,
/// from every file's entry; no run keeps a place of its own, so the next
/// change remakes them all.
fn sorted_whole(lookup: &Lookup<'_>, files: &mut [FileRow], after: &mut After) {
    let all: Vec<Rc<Ranked>> = files.iter().filter_map(|r| lookup.now(&r.path)).collect();
    let blocks: Vec<&BlockViews> = all.iter().flat_map(|r| r.blocks.iter()).collect();
    let paths: Vec<&str> = files.iter().map(|r| r.path.as_str()).collect();
    let (bytes, nodes, edges) = relations::relations_of(&paths, &blocks);
    after.relations = bytes.map(|b| RelationsOut::Bytes(b.into_bytes()));
    after.counts = (nodes, edges);
    after.unsorted = true;
    for row in files.iter_mut() {
        row.nodes.len = 0;
        row.edges = None;
    }
}

type Paths<'a> = HashMap<u32, &'a str>;

/// The path of file `fid`; empty for a number no file has (a damaged
/// state: its rows then find no entry, and the views lack those lines
/// until the next rebuild, rather than the writer stopping).
fn name<'a>(paths: &Paths<'a>, fid: u32) -> &'a str {
    paths.get(&fid).copied().unwrap_or("")
}

/// Merges `new` (unsorted) into the rows of `old` (sorted) that are not
/// of a file in `dropped`, by `cmp`: one pass, one new table.
fn merge(
    old: &[Row],
    dropped: &HashSet<u32>,
    mut new: Vec<Row>,
    cmp: &dyn Fn(&Row, &Row) -> std::cmp::Ordering,
) -> Vec<Row> {
    new.sort_by(cmp);
    let mut out = Vec::with_capacity(old.len() + new.len());
    let mut a = old.iter().filter(|r| !dropped.contains(&r.fid)).copied().peekable();
    let mut b = new.into_iter().peekable();
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => cmp(x, y) != std::cmp::Ordering::Greater,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        out.extend(if take_a { a.next() } else { b.next() });
    }
    out
}

/// Splits bytes into lines (without the LF), the last one ended.
fn lines(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let body = bytes.strip_suffix(b"\n")?;
    Some(body.split(|&b| b == b'\n').collect())
}

fn events_after(
    lookup: &Lookup<'_>,
    before: &Before<'_>,
    old_fids: &HashSet<u32>,
    fids: &HashMap<&str, u32>,
    path_of: &Paths<'_>,
    fresh_fid: &Paths<'_>,
) -> (Vec<Row>, Option<Vec<u8>>, usize) {
    let old = &before.state;
    let mut new = Vec::new();
    for (path, &fid) in fids {
        let r = &lookup.fresh[*path];
        for rank in 0..r.blocks.len() as u32 {
            if let Some((time, _)) = r.at(rank).and_then(|b| b.event.as_ref()) {
                new.push(Row::new(0, *time, fid, rank));
            }
        }
    }
    let cmp = |a: &Row, b: &Row| {
        b.time()
            .cmp(&a.time())
            .then_with(|| name(path_of, a.fid).cmp(name(path_of, b.fid)))
            .then(a.rank.cmp(&b.rank))
    };
    let rows = merge(&old.events, old_fids, new, &cmp);
    // The lines shown before, by block: copied when still shown.
    let shown_before = old.events.len().min(RECENT_EVENTS);
    let mut copied: HashMap<(u32, u32), &[u8]> = HashMap::new();
    if let Some(ls) = before.recent.and_then(lines).filter(|ls| ls.len() == shown_before) {
        for (row, line) in old.events.iter().zip(ls) {
            if !old_fids.contains(&row.fid) {
                copied.insert((row.fid, row.rank), line);
            }
        }
    }
    let shown = rows.len().min(RECENT_EVENTS);
    let mut out: Vec<u8> = Vec::new();
    for row in &rows[..shown] {
        let line: Option<Vec<u8>> = match (fresh_fid.get(&row.fid), copied.get(&(row.fid, row.rank))) {
            (Some(path), _) => lookup.fresh[*path]
                .at(row.rank)
                .and_then(|b| b.event.as_ref())
                .map(|e| e.1.clone().into_bytes()),
            (None, Some(line)) => Some(line.to_vec()),
            (None, None) => lookup.old(name(path_of, row.fid)).and_then(|r| {
                r.at(row.rank).and_then(|b| b.event.as_ref()).map(|e| e.1.clone().into_bytes())
            }),
        };
        out.extend_from_slice(&line.unwrap_or_default());
        out.push(b'\n');
    }
    let recent = (shown > 0).then_some(out);
    (rows, recent, shown)
}

/// The timeline lines of a file, by day.
fn by_day(r: Option<&Ranked>) -> BTreeMap<i32, Vec<&str>> {
    let mut m: BTreeMap<i32, Vec<&str>> = BTreeMap::new();
    for (day, line) in r.map(Ranked::day_lines).unwrap_or_default() {
        m.entry(day).or_default().push(line);
    }
    m
}

#[allow(clippy::too_many_arguments)]
fn days_after(
    lookup: &Lookup<'_>,
    old: &State,
    touched: &BTreeSet<&str>,
    old_fids: &HashSet<u32>,
    fids: &HashMap<&str, u32>,
    path_of: &Paths<'_>,
    fresh_fid: &Paths<'_>,
    after: &mut After,
) {
    let mut new = Vec::new();
    for (path, &fid) in fids {
        let r = &lookup.fresh[*path];
        for rank in 0..r.blocks.len() as u32 {
            for (day, time, _) in r.at(rank).map(|b| b.days.as_slice()).unwrap_or_default() {
                new.push(Row::new(day_number(*day), *time, fid, rank));
            }
        }
    }
    let cmp = |a: &Row, b: &Row| {
        (a.day, a.time())
            .cmp(&(b.day, b.time()))
            .then_with(|| name(path_of, a.fid).cmp(name(path_of, b.fid)))
            .then(a.rank.cmp(&b.rank))
    };
    let rows = merge(&old.days, old_fids, new, &cmp);
    // The days on which a touched file's lines changed.
    let mut affected: BTreeSet<i32> = BTreeSet::new();
    for path in touched {
        let old_entry = lookup.old(path);
        if old_entry.is_none() {
            let fid = lookup.rows.get(path).map(|r| r.fid);
            affected.extend(old.days.iter().filter(|r| Some(r.fid) == fid).map(|r| r.day));
        }
        let (a, b) = (by_day(old_entry.as_deref()), by_day(lookup.fresh.get(*path).map(|r| &**r)));
        for day in a.keys().chain(b.keys()) {
            if a.get(day) != b.get(day) {
                affected.insert(*day);
            }
        }
    }
    for day in affected {
        let range = |t: &[Row]| t.partition_point(|r| r.day < day)..t.partition_point(|r| r.day <= day);
        let on = &rows[range(&rows)];
        if on.is_empty() {
            after.days.insert(day, None);
            continue;
        }
        let copied = old_day_lines(lookup.root, old, day, &old.days[range(&old.days)]);
        let mut s = format!("# {:04}-{:02}-{:02}\n\n", day / 10_000, day / 100 % 100, day % 100);
        for row in on {
            let line = |r: &Ranked| -> Option<String> {
                r.at(row.rank)?.days.iter().find(|d| day_number(d.0) == day).map(|d| d.2.clone())
            };
            let text = match (fresh_fid.get(&row.fid), copied.get(&(row.fid, row.rank))) {
                (Some(path), _) => line(&lookup.fresh[*path]),
                (None, Some(l)) => Some((*l).to_owned()),
                (None, None) => lookup.old(name(path_of, row.fid)).and_then(|r| line(&r)),
            };
            s.push_str(&text.unwrap_or_default());
            s.push('\n');
        }
        after.days.insert(day, Some(s));
    }
    after.state.days = rows;
    after.state.day_files =
        old.day_files.iter().filter(|(d, _)| !after.days.contains_key(d)).copied().collect();
}

/// The lines of day `day`'s file as written, by block, when its stamp is
/// intact and it has one line per row.
fn old_day_lines(root: &Path, old: &State, day: i32, rows: &[Row]) -> HashMap<(u32, u32), String> {
    let mut out = HashMap::new();
    let Ok(at) = old.day_files.binary_search_by_key(&day, |(d, _)| *d) else { return out };
    let path = root.join(day_path(day));
    if Stamp::of(&path) != Some(old.day_files[at].1) {
        return out;
    }
    let Ok(text) = std::fs::read_to_string(&path) else { return out };
    let ls: Vec<&str> = text.strip_suffix('\n').unwrap_or("").split('\n').skip(2).collect();
    if ls.len() == rows.len() {
        for (row, line) in rows.iter().zip(ls) {
            out.insert((row.fid, row.rank), line.to_owned());
        }
    }
    out
}
