//! The topic files' part of the document: every file with its headings
//! and blocks in file order, each block's text as parts (literal text,
//! evidence citations resolved against the archive, links to files or
//! blocks that exist), and where every file and block lives.

use std::collections::{BTreeMap, HashMap, HashSet};

use scriptorium_topic_markdown::diag::Diagnostic;
use scriptorium_topic_markdown::parse::{inline_spans, is_evidence_label, Inline, Link};
use scriptorium_topic_markdown::validate::{
    dir_of, join, link_target, ArchiveResolver, BlockState, Checked, Loaded, Resolution, SourceResolver,
};
use scriptorium_topic_markdown::views::percent_path;

use super::{BlockOut, CiteSource, Counts, FileOut, Item, Part, RecordOut};

/// Where block ids live: `(file index, block id)` → block index.
pub(super) type BlockIndex<'a> = HashMap<(usize, &'a str), usize>;

/// Where every topic file, block, block state and diagnostic lives.
pub(super) struct Index<'a> {
    /// Topic file path → file index.
    pub(super) file_index: HashMap<&'a str, usize>,
    /// Topic file path → indexes of its diagnostics.
    diag_of_file: HashMap<&'a str, Vec<usize>>,
    /// (file index, index in the file) → block index.
    pub(super) block_at: HashMap<(usize, usize), usize>,
    /// The first block of each id in each file.
    pub(super) blocks_by_id: BlockIndex<'a>,
    /// (file path, index in the file) → the block's state after the check.
    states: HashMap<(&'a str, usize), &'a BlockState>,
    /// How many blocks there are.
    blocks: usize,
}

impl<'a> Index<'a> {
    pub(super) fn new(
        topics: &'a [Loaded],
        checked: &'a Checked,
        diagnostics: &'a [Diagnostic],
    ) -> Index<'a> {
        let file_index: HashMap<&str, usize> =
            topics.iter().enumerate().map(|(k, t)| (t.path.as_str(), k)).collect();
        let mut diag_of_file: HashMap<&str, Vec<usize>> = HashMap::new();
        for (k, d) in diagnostics.iter().enumerate() {
            diag_of_file.entry(d.path.as_str()).or_default().push(k);
        }
        let mut block_at: HashMap<(usize, usize), usize> = HashMap::new();
        let mut blocks_by_id: BlockIndex<'_> = HashMap::new();
        let mut order = 0;
        for (f, t) in topics.iter().enumerate() {
            for (i, b) in t.file.blocks.iter().enumerate() {
                block_at.insert((f, i), order);
                if let Some(id) = &b.id {
                    blocks_by_id.entry((f, id.as_str())).or_insert(order);
                }
                order += 1;
            }
        }
        let states = checked.blocks.iter().map(|s| ((s.path.as_str(), s.index), s)).collect();
        Index { file_index, diag_of_file, block_at, blocks_by_id, states, blocks: order }
    }
}

/// Every source id cited by an evidence definition some block uses.
pub(super) fn cited_ids(topics: &[Loaded]) -> HashSet<String> {
    let mut out = HashSet::new();
    for t in topics {
        for b in &t.file.blocks {
            for r in &b.refs {
                if let Some(Some(Ok(ev))) = t.file.definition(&r.label).map(|d| &d.evidence) {
                    out.extend(ev.sources.iter().map(|s| s.id.clone()));
                }
            }
        }
    }
    out
}

/// The text a link shows: its link text, or a wiki link's alias or target.
fn link_text(link: &Link) -> String {
    match link {
        Link::Markdown { text, target } => {
            if text.is_empty() {
                target.clone()
            } else {
                text.clone()
            }
        }
        Link::Wiki { target, alias } => alias.clone().unwrap_or_else(|| target.clone()),
    }
}

/// A heading line's level and text (`## Text` → (2, "Text")).
fn heading(line: &str) -> (usize, String) {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    (level, line[level..].trim().to_owned())
}

/// Every topic file and every block, in file order; counts the pending
/// and the invalid blocks into `counts`.
pub(super) fn files_and_blocks(
    topics: &[Loaded],
    index: &Index<'_>,
    cx: &PartsContext<'_>,
    root_url: &str,
    counts: &mut Counts,
) -> (Vec<FileOut>, Vec<BlockOut>) {
    let mut blocks = Vec::with_capacity(index.blocks);
    let mut files = Vec::with_capacity(topics.len());
    for (f, t) in topics.iter().enumerate() {
        files.push(file(f, t, index, cx, root_url, &mut blocks, counts));
    }
    debug_assert_eq!(blocks.len(), index.blocks);
    (files, blocks)
}

/// The topic file `t` (file index `f`): its front matter, and its headings
/// and blocks in file order, the blocks pushed onto `blocks`.
fn file(
    f: usize,
    t: &Loaded,
    index: &Index<'_>,
    cx: &PartsContext<'_>,
    root_url: &str,
    blocks: &mut Vec<BlockOut>,
    counts: &mut Counts,
) -> FileOut {
    let fm = t.file.front_matter.as_ref();
    let mut items = Vec::new();
    let mut headings = t.file.headings.iter().peekable();
    let mut title = None;
    let (mut n_blocks, mut n_pending) = (0, 0);
    let mut push_heading = |items: &mut Vec<Item>, h: usize| {
        let (level, text) = heading(t.file.line(h));
        title.get_or_insert_with(|| text.clone());
        items.push(Item::Heading { heading: text, level });
    };
    for (i, b) in t.file.blocks.iter().enumerate() {
        while let Some(&&h) = headings.peek() {
            if h > b.first_line {
                break;
            }
            push_heading(&mut items, h);
            headings.next();
        }
        let state = index.states.get(&(t.path.as_str(), i));
        let pending = state.is_some_and(|s| s.pending);
        let valid = state.is_some_and(|s| s.valid);
        let (parts, records) = block_parts(t, i, cx);
        items.push(Item::Block { block: blocks.len() });
        n_blocks += 1;
        n_pending += usize::from(pending);
        counts.invalid_blocks += usize::from(!valid);
        blocks.push(BlockOut {
            file: f,
            id: b.id.clone(),
            line: b.first_line + 1,
            pending,
            valid,
            times: state.map(|s| s.times.iter().map(|(w, _)| w.clone()).collect()).unwrap_or_default(),
            parts,
            records,
            commits: Vec::new(),
        });
    }
    for &h in headings {
        push_heading(&mut items, h);
    }
    counts.pending_blocks += n_pending;
    FileOut {
        url: format!("{root_url}{}", percent_path(&t.path)),
        path: t.path.clone(),
        kind: fm.and_then(|m| m.kind()).map(|k| k.as_str()),
        description: fm.and_then(|m| m.description()).map(str::to_owned),
        aliases: fm.map(|m| m.aliases().into_iter().map(str::to_owned).collect()).unwrap_or_default(),
        title,
        items,
        blocks: n_blocks,
        pending: n_pending,
        diagnostics: index.diag_of_file.get(t.path.as_str()).cloned().unwrap_or_default(),
    }
}

/// Notes on every embedded record which blocks cite it.
pub(super) fn cite_back(blocks: &[BlockOut], records: &mut [RecordOut]) {
    for (k, b) in blocks.iter().enumerate() {
        for &r in &b.records {
            records[r].cited_by.push(k);
        }
    }
}

/// Notes on every block with an id the commits that touched its
/// `path#^id` (`touched`: indexes into the history, newest first).
pub(super) fn commits_of(blocks: &mut [BlockOut], files: &[FileOut], touched: &BTreeMap<String, Vec<usize>>) {
    for b in blocks {
        if let Some(id) = &b.id {
            if let Some(commits) = touched.get(&format!("{}#^{id}", files[b.file].path)) {
                b.commits.clone_from(commits);
            }
        }
    }
}

/// Context for turning one block into parts.
pub(super) struct PartsContext<'a> {
    pub(super) resolver: &'a ArchiveResolver<'a>,
    pub(super) by_id: &'a HashMap<String, usize>,
    pub(super) file_index: &'a HashMap<&'a str, usize>,
    pub(super) blocks: &'a BlockIndex<'a>,
}

/// A block's text as parts: literal text, evidence citations and links to
/// topic files or blocks that exist. Fenced lines stay text; the block id
/// at the end is left out (it is shown apart).
fn block_parts(t: &Loaded, index: usize, cx: &PartsContext<'_>) -> (Vec<Part>, Vec<usize>) {
    let file = &t.file;
    let b = &file.blocks[index];
    let mut parts = Vec::new();
    let mut text = String::new();
    // The cited records in first-cited order, and the set of them.
    let mut records: (Vec<usize>, HashSet<usize>) = (Vec::new(), HashSet::new());
    let mut numbers: HashMap<String, usize> = HashMap::new();
    let dir = dir_of(&t.path);
    for k in b.first_line..=b.last_line {
        if k > b.first_line {
            text.push('\n');
        }
        let mut line = file.line(k);
        if k == b.last_line {
            if let Some(id) = &b.id {
                if let Some(stripped) = line.strip_suffix(id.as_str()).and_then(|l| l.strip_suffix(" ^")) {
                    line = stripped;
                }
            }
        }
        if file.is_fenced(k) {
            text.push_str(line);
            continue;
        }
        let mut pos = 0;
        for span in inline_spans(line) {
            let range = span.range;
            if range.end > line.len() {
                break;
            }
            let part = match span.item {
                Inline::Footnote(label) if is_evidence_label(&label) => {
                    let next = numbers.len() + 1;
                    let n = *numbers.entry(label.clone()).or_insert(next);
                    Some(citation(t, dir, label, n, cx, &mut records))
                }
                Inline::Footnote(_) => None,
                Inline::Link(link) => match link_target(&t.path, &link) {
                    Ok(Some(target)) => cx.file_index.get(target.path.as_str()).copied().and_then(|f| {
                        let exists = match &target.block_id {
                            None => true,
                            Some(id) => cx.blocks.contains_key(&(f, id.as_str())),
                        };
                        exists.then(|| Part::Link { link: link_text(&link), file: f, block: target.block_id })
                    }),
                    _ => None,
                },
            };
            if let Some(p) = part {
                text.push_str(&line[pos..range.start]);
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text)));
                }
                parts.push(p);
                pos = range.end;
            }
        }
        text.push_str(&line[pos..]);
    }
    let trimmed = text.trim_end().len();
    text.truncate(trimmed);
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    (parts, records.0)
}

/// One evidence citation: its definition's time and sources, each
/// resolved against the archive and mapped to an embedded record.
fn citation(
    t: &Loaded,
    dir: &str,
    label: String,
    n: usize,
    cx: &PartsContext<'_>,
    records: &mut (Vec<usize>, HashSet<usize>),
) -> Part {
    let Some(def) = t.file.definition(&label) else {
        return Part::Cite {
            cite: label,
            n,
            time: None,
            sources: Vec::new(),
            problem: Some("no definition of this footnote in the file".into()),
        };
    };
    match &def.evidence {
        Some(Ok(ev)) => {
            let sources = ev
                .sources
                .iter()
                .map(|s| {
                    let status = match join(dir, &s.path) {
                        Some(p) => cx.resolver.resolve(&s.id, &p, &s.anchor),
                        None => Resolution::Unknown,
                    };
                    let record = match status {
                        Resolution::Unknown => None,
                        _ => cx.by_id.get(&s.id).copied(),
                    };
                    if let Some(r) = record {
                        if records.1.insert(r) {
                            records.0.push(r);
                        }
                    }
                    let status = match status {
                        Resolution::Trusted => "trusted",
                        Resolution::Pending => "pending",
                        Resolution::Unknown => "unknown",
                    };
                    CiteSource { id: s.id.clone(), record, status }
                })
                .collect();
            Part::Cite { cite: label, n, time: Some(ev.time.clone()), sources, problem: None }
        }
        Some(Err(why)) => {
            Part::Cite { cite: label, n, time: None, sources: Vec::new(), problem: Some(why.clone()) }
        }
        None => Part::Cite {
            cite: label,
            n,
            time: None,
            sources: Vec::new(),
            problem: Some("not an evidence footnote".into()),
        },
    }
}
