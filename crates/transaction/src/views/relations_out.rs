//! `relations.json` as a commit makes it ([`RelationsOut`]): runs copied
//! from the file as written or made anew, and the plan that rearranges the
//! file in place into them.

use scriptorium_topic_markdown::views::relations::{self, Layout, Part, Stretch};

use crate::disk::{Place, Source};

/// `relations.json` as the write makes it.
#[derive(Debug)]
pub enum RelationsOut {
    /// Assembled in memory (sorted whole).
    Bytes(Vec<u8>),
    /// Runs to copy in `layout`'s order, each from the file as written or
    /// made anew.
    Runs {
        /// Where each run goes.
        layout: Layout,
        /// The edge runs.
        edges: Vec<Run>,
        /// The node runs.
        nodes: Vec<Run>,
    },
}

/// One run of `relations.json`.
#[derive(Debug)]
pub enum Run {
    /// `(offset, length)` in the file as written.
    Old(u64, u64),
    /// Made by this change.
    New(String),
}

impl RelationsOut {
    /// Writes the document to `out`; `old` is `relations.json` as written
    /// (the bytes [`Run::Old`] points into).
    pub fn write_to(&self, out: &mut dyn std::io::Write, old: &[u8]) -> std::io::Result<()> {
        match self {
            RelationsOut::Bytes(b) => out.write_all(b),
            RelationsOut::Runs { layout, edges, nodes } => {
                let part = |r| Part { first: &(), last: &(), json: run_bytes(r, old) };
                let e: Vec<Part<'_, ()>> = edges.iter().map(part).collect();
                let n: Vec<Part<'_, ()>> = nodes.iter().map(part).collect();
                relations::write_runs(out, layout, &e, &n)
            }
        }
    }
}

impl RelationsOut {
    /// Where each stretch of the document comes from, as a plan to
    /// rearrange `old` (the file as written) into it, with the document's
    /// length; `None` when it was assembled in memory. A bracket or comma
    /// that follows a run copied from `old` and is also what follows it
    /// there is taken from `old` too, so that the unchanged runs and what
    /// lies between them move as one.
    pub fn plan<'a>(&'a self, old: &[u8]) -> Option<(Vec<Place<'a>>, u64)> {
        let RelationsOut::Runs { layout, edges, nodes } = self else { return None };
        let mut plan = Vec::new();
        // The end in `old` of the last stretch taken from it.
        let mut old_end: Option<u64> = None;
        for (at, s) in relations::stretches(layout) {
            let what = match s {
                Stretch::Own(b) => match old_end {
                    Some(e) if old.get(e as usize..).is_some_and(|rest| rest.starts_with(b)) => {
                        Source::Old(e, b.len() as u64)
                    }
                    _ => Source::Bytes(b),
                },
                Stretch::Edge(i) => edges[i].source(),
                Stretch::Node(i) => nodes[i].source(),
            };
            old_end = match what {
                Source::Old(from, len) => Some(from + len),
                Source::Bytes(_) => None,
            };
            plan.push(Place { at, what });
        }
        Some((plan, layout.len))
    }
}

impl Run {
    fn source(&self) -> Source<'_> {
        match self {
            Run::Old(at, len) => Source::Old(*at, *len),
            Run::New(s) => Source::Bytes(s.as_bytes()),
        }
    }
}

fn run_bytes<'a>(r: &'a Run, old: &'a [u8]) -> &'a [u8] {
    match r {
        Run::Old(at, len) => &old[*at as usize..(*at + *len) as usize],
        Run::New(s) => s.as_bytes(),
    }
}
