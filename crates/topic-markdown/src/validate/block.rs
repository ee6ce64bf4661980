//! The verdict on one block: its id, its citations, its quotations and its
//! links, each judged with the file it is in and the files it involves.

use std::collections::{HashMap, HashSet};

use super::file::FileState;
use super::ground::{self, Texts};
use super::{diag, link_target, BlockState, LeavesWorkspace, LinkTarget, Loaded, Visibility};
use crate::diag::{Code, Diagnostic};
use crate::parse::{is_evidence_label, Block, Link, SourceLink};
use crate::time::Instant;

/// Where every block id lives, for duplicates and links.
pub(super) struct Places<'t> {
    /// Block id → (path, first line) of every block holding it.
    ids: HashMap<&'t str, Vec<(&'t str, usize)>>,
    /// Path → the block ids of that file.
    files: HashMap<&'t str, HashSet<&'t str>>,
}

impl<'t> Places<'t> {
    /// The places of every block id of `topics`.
    pub(super) fn of(topics: &'t [Loaded]) -> Places<'t> {
        let mut places = Places { ids: HashMap::new(), files: HashMap::new() };
        for t in topics {
            let set = places.files.entry(t.path.as_str()).or_default();
            for b in &t.file.blocks {
                if let Some(id) = &b.id {
                    places.ids.entry(id.as_str()).or_default().push((t.path.as_str(), b.first_line));
                    set.insert(id.as_str());
                }
            }
        }
        places
    }
}

/// What a block's footnote references give.
#[derive(Default)]
struct Citations<'t> {
    /// Every reference is defined, well formed and resolves.
    valid: bool,
    /// Some cited evidence is pending or unresolvable.
    pending: bool,
    /// The `Time` of every cited evidence definition, in citation order.
    times: Vec<(String, Instant)>,
    /// The cited source ids, in citation order, each once.
    sources: Vec<String>,
    /// The source links of the cited evidence, for quotations.
    cited: Vec<&'t SourceLink>,
}

/// Judges block `index` (`b`) of the file `f`, reporting into `out`.
pub(super) fn check_block<'t>(
    f: &FileState<'t>,
    places: &Places<'t>,
    texts: &mut Texts<'_>,
    index: usize,
    b: &'t Block,
    out: &mut Vec<Diagnostic>,
) -> BlockState {
    let id = b.id.as_deref();
    let mut valid = f.ok && id.is_some();
    valid &= check_id(f.path, b, places, out);
    let c = citations(f, b, out);
    valid &= c.valid;
    let place = ground::Place { path: f.path, file: f.file, block: b, id };
    valid &= ground::check_block(texts, &place, &c.cited, out);
    let (links, links_ok) = links(f.path, b, places, out);
    valid &= links_ok;
    BlockState {
        path: f.path.to_owned(),
        index,
        id: id.map(str::to_owned),
        valid,
        pending: c.pending,
        times: c.times,
        sources: c.sources,
        links,
        visibility: Visibility::Paired,
    }
}

/// A missing block id, and an id some other block holds too; false for a
/// duplicate.
fn check_id(path: &str, b: &Block, places: &Places<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let Some(id) = b.id.as_deref() else {
        out.push(diag(
            Code::MissingBlockId,
            path,
            b.first_line,
            None,
            "the block's last line does not end in ` ^block-id` ([A-Za-z0-9-]{1,64})".into(),
        ));
        return true;
    };
    let places = &places.ids[id];
    if places.len() <= 1 {
        return true;
    }
    let others: Vec<String> = places
        .iter()
        .filter(|&&(p, l)| !(p == path && l == b.first_line))
        .map(|(p, l)| format!("{p}:{}", l + 1))
        .collect();
    out.push(diag(
        Code::DuplicateBlockId,
        path,
        b.first_line,
        Some(id),
        format!("block id ^{id} is also used at {}", others.join(", ")),
    ));
    false
}

/// Follows the block's footnote references (each label once) to their
/// definitions: undefined ones, malformed ones, and a block citing no
/// evidence at all are reported.
fn citations<'t>(f: &FileState<'t>, b: &Block, out: &mut Vec<Diagnostic>) -> Citations<'t> {
    let id = b.id.as_deref();
    let mut c = Citations { valid: true, ..Citations::default() };
    let mut source_set: HashSet<&str> = HashSet::new();
    let mut cited_evidence = false;
    let mut seen_labels = HashSet::new();
    for r in &b.refs {
        if !seen_labels.insert(r.label.as_str()) {
            continue;
        }
        let Some(def) = f.file.definition(&r.label) else {
            c.valid = false;
            out.push(diag(
                Code::UndefinedFootnote,
                f.path,
                b.first_line,
                id,
                format!("footnote [^{}] is not defined in this file", r.label),
            ));
            continue;
        };
        if f.bad_defs.contains(r.label.as_str()) {
            c.valid = false;
        }
        if !is_evidence_label(&r.label) {
            continue;
        }
        cited_evidence = true;
        match &def.evidence {
            Some(Ok(ev)) => {
                c.times.push((ev.time.clone(), ev.instant));
                for s in &ev.sources {
                    if source_set.insert(s.id.as_str()) {
                        c.sources.push(s.id.clone());
                    }
                }
                c.cited.extend(&ev.sources);
                let (ok, p) = f.evidence.get(r.label.as_str()).copied().unwrap_or((false, true));
                c.valid &= ok;
                c.pending |= p;
            }
            _ => {
                c.valid = false;
                c.pending = true;
            }
        }
    }
    if !cited_evidence {
        c.valid = false;
        out.push(diag(
            Code::UncitedBlock,
            f.path,
            b.first_line,
            id,
            "the block cites no evidence footnote [^e-HEX10]".into(),
        ));
    }
    c
}

/// The topic files and blocks the block links to, and whether every link
/// between topics resolves (those that do not are reported).
fn links(path: &str, b: &Block, places: &Places<'_>, out: &mut Vec<Diagnostic>) -> (Vec<LinkTarget>, bool) {
    let id = b.id.as_deref();
    let mut ok = true;
    let mut links = Vec::new();
    for (_line, link) in &b.links {
        match link_target(path, link) {
            Ok(None) => {}
            Ok(Some(t)) => {
                let exists = match (&t.block_id, places.files.get(t.path.as_str())) {
                    (_, None) => false,
                    (None, Some(_)) => true,
                    (Some(bid), Some(set)) => set.contains(bid.as_str()),
                };
                if exists {
                    links.push(t);
                } else {
                    ok = false;
                    out.push(diag(
                        Code::BrokenLink,
                        path,
                        b.first_line,
                        id,
                        format!(
                            "link to {}{} does not resolve",
                            t.path,
                            t.block_id.as_ref().map(|i| format!("#^{i}")).unwrap_or_default()
                        ),
                    ));
                }
            }
            Err(LeavesWorkspace) => {
                ok = false;
                let shown = match link {
                    Link::Markdown { target, .. } => target,
                    Link::Wiki { target, .. } => target,
                };
                out.push(diag(
                    Code::BrokenLink,
                    path,
                    b.first_line,
                    id,
                    format!("link {shown:?} leaves the workspace or topics/ and cannot resolve"),
                ));
            }
        }
    }
    (links, ok)
}
