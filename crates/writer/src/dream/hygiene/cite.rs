//! Evidence carried from a removed block to the block that stays: each
//! cited definition resolved to what it says (its time and its sources at
//! their workspace paths), and cited in the staying block's file under a
//! label that file defines with exactly that — an existing one when the file
//! has one, else the removed block's label, else a new label when that one
//! is taken by another definition there.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use scriptorium_topic_markdown::parse::{Evidence, TopicFile};
use scriptorium_topic_markdown::validate::{dir_of, join};

use crate::input::{hex, relative};

/// An evidence definition as the workspace reads it: where its link paths
/// lead, not how they are spelled.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Resolved {
    time: String,
    /// (source id, workspace-relative archive path, anchor), in order.
    sources: Vec<(String, String, String)>,
}

impl Resolved {
    /// The evidence `ev` of a definition in the topic file at `path`;
    /// `None` when a link climbs out of the workspace.
    pub(super) fn of(path: &str, ev: &Evidence) -> Option<Resolved> {
        let sources = ev
            .sources
            .iter()
            .map(|s| Some((s.id.clone(), join(dir_of(path), &s.path)?, s.anchor.clone())))
            .collect::<Option<Vec<_>>>()?;
        Some(Resolved { time: ev.time.clone(), sources })
    }

    /// Its definition line under `label` in the topic file at `path`.
    fn line(&self, label: &str, path: &str) -> String {
        let links: Vec<String> = self
            .sources
            .iter()
            .map(|(id, target, anchor)| format!("[{id}]({}#{anchor})", relative(path, target)))
            .collect();
        format!("[^{label}]: Time: `{}`; Sources: {}", self.time, links.join(", "))
    }
}

/// The labels of one file, as the plan adds to them.
#[derive(Debug, Default)]
pub(super) struct Labels {
    /// Every label defined, with what it says (`None`: an ordinary
    /// footnote, a malformed definition, or a label some block cites that
    /// the file does not define: defining it would make that block cite
    /// evidence it never had).
    by_label: HashMap<String, Option<Resolved>>,
    /// The first label defined with each evidence.
    by_content: HashMap<Resolved, String>,
}

impl Labels {
    /// The labels `file` (at `path`) defines.
    pub(super) fn of(path: &str, file: &TopicFile) -> Labels {
        let mut l = Labels::default();
        for d in &file.definitions {
            let r = match &d.evidence {
                Some(Ok(ev)) => Resolved::of(path, ev),
                _ => None,
            };
            if let Some(r) = &r {
                l.by_content.entry(r.clone()).or_insert_with(|| d.label.clone());
            }
            l.by_label.entry(d.label.clone()).or_insert(r);
        }
        for r in file.blocks.iter().flat_map(|b| &b.refs) {
            l.by_label.entry(r.label.clone()).or_insert(None);
        }
        l
    }

    /// What `label` says in this file, when it is evidence.
    pub(super) fn get(&self, label: &str) -> Option<&Resolved> {
        self.by_label.get(label).and_then(Option::as_ref)
    }

    /// The label citing `r` in this file (at `path`), preferring `wanted`,
    /// and the definition line to add when the file has none yet.
    pub(super) fn cite(&mut self, wanted: &str, r: &Resolved, path: &str) -> (String, Option<String>) {
        if let Some(l) = self.by_content.get(r) {
            return (l.clone(), None);
        }
        let mut label = wanted.to_owned();
        let mut k = 0u32;
        while self.by_label.contains_key(&label) {
            let d = Sha256::digest(format!("hygiene\0{wanted}\0{k}").as_bytes());
            label = format!("e-{}", hex(&d[..5]));
            k += 1;
        }
        let line = r.line(&label, path);
        self.by_label.insert(label.clone(), Some(r.clone()));
        self.by_content.insert(r.clone(), label.clone());
        (label, Some(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> TopicFile {
        TopicFile::parse_lenient(text).0
    }

    const DEF: &str =
        "[^e-0000000001]: Time: `2026-01-01`; Sources: [chat/t/m1](../../sources/chat/_v2/t.md#source-aa)";

    #[test]
    fn evidence_moves_between_folders_with_its_paths_rewritten() {
        let from = file(&format!("A[^e-0000000001] ^a\n\n{DEF}\n"));
        let r = from.definitions[0].evidence.clone().unwrap().unwrap();
        let r = Resolved::of("topics/people/ada.md", &r).unwrap();
        let mut to = Labels::of("topics/core.md", &file("B ^b\n"));
        let (label, line) = to.cite("e-0000000001", &r, "topics/core.md");
        assert_eq!(label, "e-0000000001");
        assert_eq!(
            line.unwrap(),
            "[^e-0000000001]: Time: `2026-01-01`; Sources: [chat/t/m1](../sources/chat/_v2/t.md#source-aa)"
        );
        assert_eq!(to.cite("e-0000000009", &r, "topics/core.md"), ("e-0000000001".to_owned(), None), "once");
    }

    #[test]
    fn a_label_cited_but_undefined_here_is_taken() {
        // `^c` cites a label the file never defines: carrying evidence in
        // under that label would hand `^c` a citation it never had.
        let here = file("B[^e-0000000001] ^b\n\nC[^e-0000000007] ^c\n\n");
        let mut labels = Labels::of("topics/core.md", &here);
        let there = file(&format!("{}\n", DEF.replace("e-0000000001", "e-0000000007")));
        let ev = there.definitions[0].evidence.clone().unwrap().unwrap();
        let r = Resolved::of("topics/people/ada.md", &ev).unwrap();
        let (label, line) = labels.cite("e-0000000007", &r, "topics/core.md");
        assert_ne!(label, "e-0000000007");
        assert_ne!(label, "e-0000000001");
        assert!(line.unwrap().starts_with(&format!("[^{label}]: ")));
    }

    #[test]
    fn a_label_taken_by_other_evidence_gets_a_new_one() {
        let here = file(&format!("B[^e-0000000001] ^b\n\n{}\n", DEF.replace("m1", "m2")));
        let mut labels = Labels::of("topics/people/bo.md", &here);
        let there = file(&format!("{DEF}\n"));
        let ev = there.definitions[0].evidence.clone().unwrap().unwrap();
        let r = Resolved::of("topics/people/ada.md", &ev).unwrap();
        let (label, line) = labels.cite("e-0000000001", &r, "topics/people/bo.md");
        assert_ne!(label, "e-0000000001");
        assert!(label.starts_with("e-") && label.len() == 12, "{label}");
        assert_eq!(line.unwrap(), DEF.replace("e-0000000001", &label));
    }
}
