//! The offline writer: a deterministic extractive baseline that needs no
//! model (FORMAT.md §8, `docs/writer.md`). It cannot summarise, but it
//! chooses: each sentence of a turn is kept only when it states something
//! durable ([`classify`]), and goes to one file ([`route`]):
//!
//! * `topics/core.md`: standing preferences and instructions of the user
//!   (`I prefer …`, `please avoid …`, `call me …`), and the durable facts of
//!   a speakerless user turn (`I'm a product manager`, `The project lives at
//!   ~/Projects/foo`): what every session should start with;
//! * `topics/people/<slug(attribution)>-<person key>.md`, one per trusted
//!   person (the key is a hash of the verbatim id, or of the display of a
//!   display-only identity): durable facts about that speaker and their
//!   dated plans and events;
//! * `topics/threads/<slug(provider-thread)>.md`: decisions and a group's
//!   dated plans and events, and what non-user roles state.
//!
//! Small talk stays in the archive, where search still finds it; so does
//! a durable sentence too long to quote whole (it is never cut). A kept
//! sentence carries the sentences right after it that qualify it
//! ([`statements`]): an instruction is never kept without its conditions.
//! A sentence its speaker (attribution, or role) already said, in a
//! paragraph citing that speaker's own record, is not written again; another speaker's, the assistant's or a pending turn's words never
//! keep a trusted turn's sentence out. Every paragraph cites exactly the
//! turn it came from and names that turn's attribution (FORMAT.md §2.3; or
//! its bare role), so nothing is ever attributed to anyone but the
//! transport's speaker — whatever the body claims — and no impostor reads
//! like the person it imitates. What the turn said is quoted exactly and
//! whole ([`said`]) or marked not verbatim. A paragraph whose block id is
//! already in its file is not written again.

mod classify;
mod known;
mod route;
mod text;

pub use classify::{
    classify, first_person, preference, qualifies, sentences, statements, Statement, QUALIFIERS,
};
pub use known::{said_by, Known, SaidBy, SAID_CACHE};
pub use route::{destination, on_disk, opener, slug, Destination};
pub use text::{fits, inert, key, said, said_keys, unquoted, Said, QUOTE_CHARS};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use sha2::{Digest, Sha256};

use scriptorium_scheduler::{BatchWriter, Code, WriteFailure, Written};
use scriptorium_transaction::observe::Provenance;
use scriptorium_transaction::{self as transaction, Base, Edit, Patch, Tier};

use crate::input::{hex, Input, Turn};

/// The offline baseline writer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offline;

/// The name reports print.
pub const NAME: &str = "offline";

impl BatchWriter for Offline {
    fn name(&self) -> &str {
        NAME
    }

    fn write_batch(&mut self, batch: &scriptorium_scheduler::Batch<'_>) -> Result<Written, WriteFailure> {
        write(&Input::of_batch(batch))
    }
}

/// Writes `input` with the offline writer, as one transaction: the records
/// always, the paragraphs chosen from them when there are any.
pub fn write(input: &Input<'_>) -> Result<Written, WriteFailure> {
    prepare(input)?.commit()
}

/// A batch the offline writer has planned, holding the workspace lock:
/// [`Prepared::commit`] makes it the one transaction of the batch.
/// ([`write`] is the two steps; they are apart so that the cost of the
/// commit can be measured on its own.)
#[derive(Debug)]
pub struct Prepared {
    writer: transaction::Committer<'static>,
    patch: Patch,
    provenance: Provenance,
}

impl Prepared {
    /// The patch the commit will make.
    pub fn patch(&self) -> &Patch {
        &self.patch
    }

    /// Commits the planned patch.
    pub fn commit(mut self) -> Result<Written, WriteFailure> {
        let done = self.writer.commit_as(&self.patch, Tier::Owner, Base::Any, &self.provenance)?;
        Ok(Written { revision: done.revision, changed: done.changed })
    }
}

/// Takes the workspace lock and plans the one transaction of `input`: the
/// records always, the paragraphs chosen from them when there are any.
pub fn prepare(input: &Input<'_>) -> Result<Prepared, WriteFailure> {
    // The lock is held from reading the files to the install: nothing can
    // change under the plan.
    let writer = transaction::Committer::open(input.root, input.lock_timeout)?;
    input.refuse_conflicts()?;
    let rev = transaction::revision::compute(input.root)?;
    let index = transaction::validation::TopicIndex::load(input.root, &rev)?;
    let speakers: HashSet<String> = input.turns.iter().map(|t| unquoted(&opener(t.who()))).collect();
    let known = Known { index: Some(&index), said: said_by(input.root, &index, &speakers)? };
    let edits = plan(input.root, &input.turns, &known)?;
    let patch = Patch {
        base_revision: String::new(),
        message: format!("offline writer: {} turns of {}", input.turns.len(), input.origin),
        sources: input.archive.clone(),
        edits,
    };
    Ok(Prepared { writer, patch, provenance: input.provenance(NAME) })
}

/// One paragraph to add to one file.
struct Para {
    id: String,
    text: String,
    definition: String,
    label: String,
}

/// Whether a sentence `who` says in a turn (`pending` or not) is said
/// already: by a paragraph of the workspace citing a record of that same
/// speaker (the record's attribution, or role, is `who`) that is trusted or
/// promoted, or, for a pending turn, any record of that speaker; or by an
/// earlier turn of this write as trusted as it is. A paragraph that names
/// `who` but cites someone else's record says nothing for `who`.
struct Spoken<'a> {
    root: &'a Path,
    known: &'a Known<'a>,
    now: HashSet<(String, String, bool)>,
    promoted: Option<std::collections::BTreeSet<String>>,
    records: HashMap<String, Option<Cited>>,
}

/// What the writer needs of a cited record: who said it, as a paragraph
/// opens ([`opener`], [`unquoted`]), and whether it is trusted or promoted.
#[derive(Debug, Clone)]
struct Cited {
    who: String,
    trusted: bool,
}

impl Spoken<'_> {
    fn already(&mut self, who: &str, k: &str, pending: bool) -> bool {
        let (who, k) = (who.to_owned(), k.to_owned());
        if self.now.contains(&(who.clone(), k.clone(), false))
            || (pending && self.now.contains(&(who.clone(), k.clone(), true)))
        {
            return true;
        }
        let sources = self.known.said.get(&(who.clone(), k.clone())).cloned().unwrap_or_default();
        let said = sources
            .iter()
            .flatten()
            .any(|s| self.record(s).is_some_and(|r| r.who == who && (pending || r.trusted)));
        if !said {
            self.now.insert((who, k, pending));
        }
        said
    }

    /// The archived record `source`, `None` when the archive does not hold
    /// it; read only for a sentence a paragraph already quotes, from the
    /// one archive file.
    fn record(&mut self, source: &str) -> Option<Cited> {
        if let Some(r) = self.records.get(source) {
            return r.clone();
        }
        let promoted = self.promoted.get_or_insert_with(|| {
            scriptorium_source_archive::trust::promoted(self.root).unwrap_or_default()
        });
        let found = scriptorium_source_archive::SourceId::parse(source).ok().and_then(|id| {
            let dump = scriptorium_source_archive::archive::dump(&self.root.join(id.v2_path())).ok()?;
            let v = dump.records.into_iter().find(|v| v.source_id.as_deref() == Some(source))?;
            let trusted =
                v.trust != scriptorium_source_archive::json::Trust::Pending || promoted.contains(source);
            Some(Cited { who: unquoted(&opener(&v.attribution)), trusted })
        });
        self.records.insert(source.to_owned(), found.clone());
        found
    }
}

/// The edits the offline writer makes for `turns` in the workspace at
/// `root` (reading the topic files they add to). A turn some block already
/// cites was written (perhaps moved since by a reorganize) and is skipped;
/// so is a sentence too long to quote whole, one its speaker already said
/// ([`Spoken`]), and a paragraph whose block id exists.
pub fn plan(root: &Path, turns: &[Turn], known: &Known<'_>) -> Result<Vec<Edit>, WriteFailure> {
    let mut files: BTreeMap<String, (String, Vec<Para>)> = BTreeMap::new();
    let mut spoken = Spoken { root, known, now: HashSet::new(), promoted: None, records: HashMap::new() };
    let cited = known.cited_among(turns.iter().map(|t| t.source.as_str()))?;
    for t in turns.iter().filter(|t| !cited.contains(&t.source)) {
        let mut kept: BTreeMap<Destination, Vec<&str>> = BTreeMap::new();
        let who = unquoted(&opener(t.who()));
        for (sentence, s) in statements(&t.content, |s| classify(s).is_some()) {
            let Some(what) = classify(sentence) else { continue };
            // Kept whole, with its conditions, or not at all: a cut could
            // reverse its meaning.
            if !fits(s) || spoken.already(&who, &key(s), t.pending) {
                continue;
            }
            kept.entry(destination(what, t)).or_default().push(s);
        }
        for (destination, parts) in kept {
            let (path, head) = route::file(root, destination, t);
            add(&mut files, path, head, t, &parts);
        }
    }
    let held = known.held_among(files.values().flat_map(|(_, paras)| paras.iter().map(|p| p.id.as_str())))?;
    let mut edits = Vec::new();
    for (path, (head, paras)) in files {
        let existing = read(root, &path)?;
        let mut text = String::new();
        let base = existing.as_deref().unwrap_or("");
        for p in paras {
            if held.contains(&p.id) || text.contains(&format!(" ^{}\n", p.id)) {
                continue;
            }
            text.push('\n');
            text.push_str(&format!(
                "{} said{}[^{}] ^{}\n",
                unquoted(&p.label),
                p.text,
                evidence_label(&p.definition),
                p.id
            ));
            let def_prefix = format!("[^{}]:", evidence_label(&p.definition));
            if !base.contains(&def_prefix) && !text.contains(&def_prefix) {
                text.push('\n');
                text.push_str(&p.definition);
                text.push('\n');
            }
        }
        if text.is_empty() {
            continue;
        }
        match existing {
            None => edits.push(Edit::Create { path, content: format!("{head}{text}") }),
            Some(old) => {
                let sep = if old.is_empty() || old.ends_with('\n') { "" } else { "\n" };
                edits.push(Edit::Append { path, content: format!("{sep}{text}") });
            }
        }
    }
    Ok(edits)
}

/// The text of the workspace file at `path`, `None` when it does not exist.
fn read(root: &Path, path: &str) -> Result<Option<String>, WriteFailure> {
    match std::fs::read_to_string(root.join(path)) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(WriteFailure::new(Code::Io, format!("cannot read {path}: {e}"))),
    }
}

fn evidence_label(definition: &str) -> &str {
    definition.strip_prefix("[^").and_then(|s| s.split(']').next()).unwrap_or("")
}

/// Adds the paragraph of turn `t` saying `parts` to the file at `path`. Its
/// block id is `c-`/`p-`/`t-` and ten hex digits of a hash of the path and
/// the source id: the same turn in the same file always gets the same id.
fn add(
    files: &mut BTreeMap<String, (String, Vec<Para>)>,
    path: String,
    head: String,
    t: &Turn,
    parts: &[&str],
) {
    let prefix = match path.as_str() {
        "topics/core.md" => "c",
        p if p.starts_with("topics/people/") => "p",
        _ => "t",
    };
    let id = format!("{prefix}-{}", hex(&Sha256::digest(format!("{path}\0{}", t.source).as_bytes())[..5]));
    let para = Para {
        id,
        text: said(parts, &t.content),
        definition: t.evidence.definition(&path),
        label: opener(t.who()),
    };
    files.entry(path).or_insert_with(|| (head, Vec::new())).1.push(para);
}
