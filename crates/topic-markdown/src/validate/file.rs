//! What the checks of a file's blocks share: whether the file's grammar is
//! sound, which footnote definitions are malformed, and what resolving
//! each evidence definition gave.

use std::collections::{HashMap, HashSet};

use super::{diag, dir_of, join, Loaded, Resolution, SourceResolver};
use crate::diag::{Code, Diagnostic};
use crate::parse::TopicFile;

/// One file, checked as a whole.
pub(super) struct FileState<'t> {
    /// Its workspace-relative path.
    pub(super) path: &'t str,
    /// Its tree.
    pub(super) file: &'t TopicFile,
    /// Its grammar has no problem other than missing block ids and bad
    /// footnotes (which concern single blocks).
    pub(super) ok: bool,
    /// Labels of its malformed footnote definitions.
    pub(super) bad_defs: HashSet<&'t str>,
    /// Per evidence label (its first definition): every source resolves,
    /// and some source is pending (or unknown).
    pub(super) evidence: HashMap<&'t str, (bool, bool)>,
}

impl<'t> FileState<'t> {
    /// Reports the problems of `t`'s grammar and the evidence that cites
    /// no archived record into `out`.
    pub(super) fn check(t: &'t Loaded, resolver: &dyn SourceResolver, out: &mut Vec<Diagnostic>) -> Self {
        let mut state = FileState {
            path: t.path.as_str(),
            file: &t.file,
            ok: true,
            bad_defs: HashSet::new(),
            evidence: HashMap::new(),
        };
        state.grammar(t, out);
        state.resolve_evidence(resolver, out);
        state
    }

    /// The problems the parser found: a bad footnote marks its definition,
    /// anything but a missing block id makes the whole file unsound.
    fn grammar(&mut self, t: &'t Loaded, out: &mut Vec<Diagnostic>) {
        for p in &t.problems {
            match p.code {
                Code::MissingBlockId => {}
                Code::BadFootnote => {
                    if let Some(d) = self.file.definitions.iter().find(|d| d.line == p.line) {
                        self.bad_defs.insert(d.label.as_str());
                    }
                    out.push(diag(p.code, self.path, p.line, None, p.message.clone()));
                }
                code => {
                    self.ok = false;
                    out.push(diag(code, self.path, p.line, None, p.message.clone()));
                }
            }
        }
    }

    /// Resolves every source of every evidence definition once.
    fn resolve_evidence(&mut self, resolver: &dyn SourceResolver, out: &mut Vec<Diagnostic>) {
        let path = self.path;
        for d in &self.file.definitions {
            let Some(Ok(ev)) = &d.evidence else { continue };
            let mut ok = true;
            let mut pending = false;
            for s in &ev.sources {
                let resolved = join(dir_of(path), &s.path);
                let r = match &resolved {
                    Some(p) => resolver.resolve(&s.id, p, &s.anchor),
                    None => Resolution::Unknown,
                };
                match r {
                    Resolution::Trusted => {}
                    Resolution::Pending => pending = true,
                    Resolution::Unknown => {
                        ok = false;
                        pending = true;
                        out.push(diag(
                            Code::UnknownSource,
                            path,
                            d.line,
                            None,
                            format!(
                                "[^{}] cites {} at {}#{}, which is not an archived record there",
                                d.label,
                                s.id,
                                resolved.as_deref().unwrap_or(&s.path),
                                s.anchor
                            ),
                        ));
                    }
                }
            }
            self.evidence.entry(d.label.as_str()).or_insert((ok, pending));
        }
    }
}
