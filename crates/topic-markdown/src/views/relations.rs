//! `relations.json` (FORMAT.md §4.3) from per-file pieces.
//!
//! The nodes and edges one topic file contributes are a sorted run of JSON
//! objects; the document is the runs joined in order. Runs of different
//! files do not interleave unless one path extends another with a
//! character that sorts before `#` (`a.md` and `a.md!.md`): then
//! [`assemble`] says so and the caller sorts every item instead. A caller
//! that keeps the runs of earlier renders re-makes only the changed files'
//! runs and copies the others' bytes.

use std::collections::{BTreeMap, HashSet};

use crate::views::BlockViews;

/// A node's sort key: its id.
pub type NodeKey = String;
/// An edge's sort key: `(from, to)`.
pub type EdgeKey = (String, String);

/// Sorted, deduplicated, comma-joined JSON objects and their first and last
/// sort keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run<K> {
    /// The first item's key.
    pub first: K,
    /// The last item's key.
    pub last: K,
    /// How many items.
    pub count: usize,
    /// The items, joined by `,`.
    pub json: String,
}

/// What one topic file contributes to `relations.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The file and its eligible blocks (never empty: the file is a node).
    pub nodes: Run<NodeKey>,
    /// Links from its eligible blocks; `None` when there is none.
    pub edges: Option<Run<EdgeKey>>,
}

fn js(s: &str) -> String {
    scriptorium_source_archive::json::to_line::<str>(s)
}

fn node_json(id: &str, kind: &str) -> String {
    format!("{{\"id\":{},\"kind\":\"{kind}\"}}", js(id))
}

fn edge_json(from: &str, to: &str) -> String {
    format!("{{\"from\":{},\"to\":{}}}", js(from), js(to))
}

fn run<K: Clone>(items: &[(K, String)]) -> Option<Run<K>> {
    let (first, last) = (items.first()?, items.last()?);
    let mut json = String::with_capacity(items.iter().map(|i| i.1.len() + 1).sum());
    for (k, (_, item)) in items.iter().enumerate() {
        if k > 0 {
            json.push(',');
        }
        json.push_str(item);
    }
    Some(Run { first: first.0.clone(), last: last.0.clone(), count: items.len(), json })
}

/// The nodes of file `path` and of `blocks` (its eligible blocks).
fn nodes(path: &str, blocks: &[&BlockViews]) -> Vec<(NodeKey, String)> {
    let mut nodes: Vec<(NodeKey, &str)> = vec![(path.to_owned(), "file")];
    nodes.extend(blocks.iter().map(|b| (format!("{path}#^{}", b.id), "block")));
    nodes.sort_unstable();
    nodes.dedup();
    nodes.into_iter().map(|(id, kind)| (id.clone(), node_json(&id, kind))).collect()
}

/// The edges from `blocks`: a link to a block counts when `eligible(path,
/// id)` says that block is eligible; a link to a file always counts.
fn edges(blocks: &[&BlockViews], eligible: &dyn Fn(&str, &str) -> bool) -> Vec<(EdgeKey, String)> {
    let mut edges: Vec<EdgeKey> = Vec::new();
    for b in blocks {
        let from = format!("{}#^{}", b.path, b.id);
        for t in &b.links {
            let to = match &t.block_id {
                Some(bid) if eligible(&t.path, bid) => format!("{}#^{bid}", t.path),
                Some(_) => continue,
                None => t.path.clone(),
            };
            edges.push((from.clone(), to));
        }
    }
    edges.sort_unstable();
    edges.dedup();
    edges.into_iter().map(|(f, t)| ((f.clone(), t.clone()), edge_json(&f, &t))).collect()
}

/// The piece of topic file `path`, whose eligible blocks are `blocks`;
/// `eligible(path, id)` tells whether a linked block is eligible.
pub fn piece(path: &str, blocks: &[&BlockViews], eligible: &dyn Fn(&str, &str) -> bool) -> Piece {
    Piece {
        nodes: run(&nodes(path, blocks)).expect("a file is always a node"),
        edges: run(&edges(blocks, eligible)),
    }
}

/// One run to assemble: its keys and its bytes.
#[derive(Debug)]
pub struct Part<'a, K> {
    /// The first item's key.
    pub first: &'a K,
    /// The last item's key.
    pub last: &'a K,
    /// The items, joined by `,`.
    pub json: &'a [u8],
}

/// The assembled document and where each part landed: `(offset, length)`
/// of every edge part, then of every node part, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    /// `relations.json`.
    pub bytes: Vec<u8>,
    /// Where each edge part is in `bytes`.
    pub edges: Vec<(u64, u64)>,
    /// Where each node part is in `bytes`.
    pub nodes: Vec<(u64, u64)>,
}

/// Where every run goes in the document, computed from the runs' keys and
/// lengths alone (nothing copied yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The edge parts, in document order.
    pub edge_order: Vec<usize>,
    /// The node parts, in document order.
    pub node_order: Vec<usize>,
    /// `(offset, length)` of each edge part, in the order given.
    pub edges: Vec<(u64, u64)>,
    /// `(offset, length)` of each node part, in the order given.
    pub nodes: Vec<(u64, u64)>,
    /// The document's length.
    pub len: u64,
}

impl<K> Clone for Part<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Part<'_, K> {}

const EDGES_OPEN: &[u8] = b"{\"edges\":[";
const NODES_OPEN: &[u8] = b"],\"nodes\":[";
const CLOSE: &[u8] = b"]}\n";

fn order<K: Ord>(parts: &[Part<'_, K>]) -> Option<Vec<usize>> {
    let mut at: Vec<usize> = (0..parts.len()).collect();
    at.sort_by(|&a, &b| parts[a].first.cmp(parts[b].first));
    // Runs must not interleave: each starts after the previous one ends.
    at.windows(2).all(|w| parts[w[0]].last < parts[w[1]].first).then_some(at)
}

fn place<K>(at: &mut u64, parts: &[Part<'_, K>], order: &[usize]) -> Vec<(u64, u64)> {
    let mut spans = vec![(0, 0); parts.len()];
    for (k, &i) in order.iter().enumerate() {
        if k > 0 {
            *at += 1;
        }
        spans[i] = (*at, parts[i].json.len() as u64);
        *at += parts[i].json.len() as u64;
    }
    spans
}

/// The layout of `relations.json` from the runs of every topic file
/// (`nodes`: one per file; `edges`: the files that have any), in key order;
/// `None` when two runs interleave, or there is no file at all.
pub fn layout(edges: &[Part<'_, EdgeKey>], nodes: &[Part<'_, NodeKey>]) -> Option<Layout> {
    if nodes.is_empty() {
        return None;
    }
    let (edge_order, node_order) = (order(edges)?, order(nodes)?);
    let mut at = EDGES_OPEN.len() as u64;
    let edge_spans = place(&mut at, edges, &edge_order);
    at += NODES_OPEN.len() as u64;
    let node_spans = place(&mut at, nodes, &node_order);
    Some(Layout {
        edge_order,
        node_order,
        edges: edge_spans,
        nodes: node_spans,
        len: at + CLOSE.len() as u64,
    })
}

/// One stretch of the document a [`Layout`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stretch {
    /// Bytes of the document's own (brackets, a comma).
    Own(&'static [u8]),
    /// Edge part `i` (in the order given).
    Edge(usize),
    /// Node part `i` (in the order given).
    Node(usize),
}

/// The stretches of the document `layout` describes, in order, each with
/// its offset: what [`write_runs`] writes, for a writer that places the
/// parts itself.
pub fn stretches(layout: &Layout) -> Vec<(u64, Stretch)> {
    let mut out = Vec::with_capacity(2 * (layout.edge_order.len() + layout.node_order.len()) + 3);
    let mut at = 0;
    let own = |out: &mut Vec<(u64, Stretch)>, at: &mut u64, b: &'static [u8]| {
        out.push((*at, Stretch::Own(b)));
        *at += b.len() as u64;
    };
    own(&mut out, &mut at, EDGES_OPEN);
    for (k, &i) in layout.edge_order.iter().enumerate() {
        if k > 0 {
            own(&mut out, &mut at, b",");
        }
        out.push((at, Stretch::Edge(i)));
        at += layout.edges[i].1;
    }
    own(&mut out, &mut at, NODES_OPEN);
    for (k, &i) in layout.node_order.iter().enumerate() {
        if k > 0 {
            own(&mut out, &mut at, b",");
        }
        out.push((at, Stretch::Node(i)));
        at += layout.nodes[i].1;
    }
    own(&mut out, &mut at, CLOSE);
    debug_assert_eq!(at, layout.len, "the stretches fill the layout");
    out
}

/// Writes the document `layout` describes, copying each part's bytes once.
pub fn write_runs<K, L>(
    out: &mut (impl std::io::Write + ?Sized),
    layout: &Layout,
    edges: &[Part<'_, K>],
    nodes: &[Part<'_, L>],
) -> std::io::Result<()> {
    for (_, s) in stretches(layout) {
        out.write_all(match s {
            Stretch::Own(b) => b,
            Stretch::Edge(i) => edges[i].json,
            Stretch::Node(i) => nodes[i].json,
        })?;
    }
    Ok(())
}

/// `relations.json` assembled in memory ([`layout`] and [`write_runs`]);
/// `None` when two runs interleave, or there is no file at all.
pub fn assemble(edges: &[Part<'_, EdgeKey>], nodes: &[Part<'_, NodeKey>]) -> Option<Assembled> {
    let l = layout(edges, nodes)?;
    let mut bytes = Vec::with_capacity(usize::try_from(l.len).ok()?);
    write_runs(&mut bytes, &l, edges, nodes).expect("writing to memory cannot fail");
    Some(Assembled { bytes, edges: l.edges, nodes: l.nodes })
}

/// `relations.json` of the topic files `files` and the eligible blocks'
/// pieces, with its node and edge counts; `None` when there are no files.
pub fn relations_of(files: &[&str], blocks: &[&BlockViews]) -> (Option<String>, usize, usize) {
    if files.is_empty() {
        return (None, 0, 0);
    }
    let eligible: HashSet<(&str, &str)> = blocks.iter().map(|b| (b.path.as_str(), b.id.as_str())).collect();
    let is_eligible = |p: &str, id: &str| eligible.contains(&(p, id));
    let mut by_file: BTreeMap<&str, Vec<&BlockViews>> = files.iter().map(|f| (*f, Vec::new())).collect();
    for b in blocks {
        by_file.entry(b.path.as_str()).or_default().push(b);
    }
    let pieces: Vec<Piece> = by_file.iter().map(|(p, bs)| piece(p, bs, &is_eligible)).collect();
    let nodes = pieces.iter().map(|p| p.nodes.count).sum();
    let edges = pieces.iter().filter_map(|p| p.edges.as_ref()).map(|e| e.count).sum();
    let edge_parts: Vec<Part<'_, EdgeKey>> = pieces
        .iter()
        .filter_map(|p| p.edges.as_ref())
        .map(|e| Part { first: &e.first, last: &e.last, json: e.json.as_bytes() })
        .collect();
    let node_parts: Vec<Part<'_, NodeKey>> = pieces
        .iter()
        .map(|p| Part { first: &p.nodes.first, last: &p.nodes.last, json: p.nodes.json.as_bytes() })
        .collect();
    let bytes = match assemble(&edge_parts, &node_parts) {
        Some(a) => a.bytes,
        None => sorted_whole(&by_file, &is_eligible),
    };
    (Some(String::from_utf8(bytes).expect("assembled from strings")), nodes, edges)
}

/// The document with every item sorted at once: for files whose runs
/// interleave.
fn sorted_whole(
    by_file: &BTreeMap<&str, Vec<&BlockViews>>,
    eligible: &dyn Fn(&str, &str) -> bool,
) -> Vec<u8> {
    let mut all_nodes: Vec<(NodeKey, String)> = Vec::new();
    let mut all_edges: Vec<(EdgeKey, String)> = Vec::new();
    for (path, blocks) in by_file {
        all_nodes.extend(nodes(path, blocks));
        all_edges.extend(edges(blocks, eligible));
    }
    all_nodes.sort_unstable();
    all_nodes.dedup();
    all_edges.sort_unstable();
    all_edges.dedup();
    let mut out = b"{\"edges\":[".to_vec();
    for (k, (_, item)) in all_edges.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item.as_bytes());
    }
    out.extend_from_slice(b"],\"nodes\":[");
    for (k, (_, item)) in all_nodes.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item.as_bytes());
    }
    out.extend_from_slice(b"]}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::LinkTarget;

    fn block(path: &str, id: &str, links: &[(&str, Option<&str>)]) -> BlockViews {
        BlockViews {
            path: path.into(),
            id: id.into(),
            event: None,
            days: Vec::new(),
            links: links
                .iter()
                .map(|(p, b)| LinkTarget { path: (*p).into(), block_id: b.map(str::to_owned) })
                .collect(),
        }
    }

    /// Assembling the runs gives the document sorted whole, and refuses
    /// runs that interleave.
    #[test]
    fn runs_assemble_into_the_sorted_document() {
        let names = ["topics/a.md", "topics/a.md!.md", "topics/a.md .md", "topics/b.md", "topics/a.mdx.md"];
        for take in 1..=names.len() {
            let files: Vec<&str> = names[..take].to_vec();
            let blocks: Vec<BlockViews> = files
                .iter()
                .enumerate()
                .flat_map(|(k, f)| {
                    let next = files[(k + 1) % files.len()];
                    vec![
                        block(f, "x1", &[(next, Some("x1")), (next, None)]),
                        block(f, "y2", &[(f, Some("gone"))]),
                    ]
                })
                .collect();
            let refs: Vec<&BlockViews> = blocks.iter().collect();
            let (doc, nodes, edges) = relations_of(&files, &refs);
            let mut by_file: BTreeMap<&str, Vec<&BlockViews>> =
                files.iter().map(|f| (*f, Vec::new())).collect();
            for b in &refs {
                by_file.get_mut(b.path.as_str()).unwrap().push(b);
            }
            let eligible: HashSet<(&str, &str)> =
                refs.iter().map(|b| (b.path.as_str(), b.id.as_str())).collect();
            let whole = sorted_whole(&by_file, &|p, id| eligible.contains(&(p, id)));
            assert_eq!(doc.unwrap().into_bytes(), whole, "{files:?}");
            assert_eq!(nodes, 3 * take);
            assert_eq!(edges, 2 * take);
        }
        let piece = |f: &str| piece(f, &[], &|_, _| true);
        let (a, b) = (piece("topics/a.md"), piece("topics/a.md!.md"));
        fn part(p: &Piece) -> Part<'_, NodeKey> {
            Part { first: &p.nodes.first, last: &p.nodes.last, json: p.nodes.json.as_bytes() }
        }
        assert!(assemble(&[], &[part(&a), part(&b)]).is_some(), "file nodes alone do not interleave");
        let with = |f: &str| super::piece(f, &[&block(f, "z9", &[])], &|_, _| true);
        let (a, b) = (with("topics/a.md"), with("topics/a.md!.md"));
        assert!(assemble(&[], &[part(&a), part(&b)]).is_none(), "a.md#^z9 sorts after a.md!.md");
    }
}
