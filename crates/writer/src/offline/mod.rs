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
//!   dated plans and events. It is the person's people card
//!   ([`crate::people`]): the card of that key wherever it is (a renamed
//!   person keeps one), the display names the transport showed kept in its
//!   `aliases`, and no more paragraphs, nor longer ones, than its limits
//!   allow (module `files`; what is left out is reported);
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

mod cards;
mod classify;
mod files;
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

use scriptorium_scheduler::{BatchWriter, LimitHit, WriteFailure, Written};
use scriptorium_transaction::observe::Provenance;
use scriptorium_transaction::{self as transaction, Base, Edit, Patch, Tier};

use crate::input::{hex, Input, Turn};
use crate::people::Limits;
use cards::People;
use files::{FilePlan, Para};

/// The offline baseline writer, with the limits of the people cards it
/// writes (`Offline::default()`: the default limits).
#[derive(Debug, Clone, Copy, Default)]
pub struct Offline {
    /// The people cards' limits, unless a card sets its own.
    pub limits: Limits,
}

impl Offline {
    /// The offline writer keeping people cards within `limits`.
    pub fn new(limits: Limits) -> Offline {
        Offline { limits }
    }
}

/// The name reports print.
pub const NAME: &str = "offline";

impl BatchWriter for Offline {
    fn name(&self) -> &str {
        NAME
    }

    fn write_batch(&mut self, batch: &scriptorium_scheduler::Batch<'_>) -> Result<Written, WriteFailure> {
        write_within(&Input::of_batch(batch), self.limits)
    }
}

/// Writes `input` with the offline writer and the default people-card
/// limits ([`write_within`]).
pub fn write(input: &Input<'_>) -> Result<Written, WriteFailure> {
    write_within(input, Limits::default())
}

/// Writes `input` with the offline writer, as one transaction: the records
/// always, the paragraphs chosen from them when there are any, people
/// cards kept within `limits` (what was left out is in
/// [`Written::limits`]).
pub fn write_within(input: &Input<'_>, limits: Limits) -> Result<Written, WriteFailure> {
    prepare(input, limits)?.commit()
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
    limits: Vec<LimitHit>,
}

impl Prepared {
    /// The patch the commit will make.
    pub fn patch(&self) -> &Patch {
        &self.patch
    }

    /// Commits the planned patch.
    pub fn commit(mut self) -> Result<Written, WriteFailure> {
        let done = self.writer.commit_as(&self.patch, Tier::Owner, Base::Any, &self.provenance)?;
        Ok(Written { revision: done.revision, changed: done.changed, limits: self.limits })
    }
}

/// Takes the workspace lock and plans the one transaction of `input`: the
/// records always, the paragraphs chosen from them when there are any,
/// people cards kept within `limits`.
pub fn prepare(input: &Input<'_>, limits: Limits) -> Result<Prepared, WriteFailure> {
    // The lock is held from reading the files to the install: nothing can
    // change under the plan.
    let writer = transaction::Committer::open(input.root, input.lock_timeout)?;
    input.refuse_conflicts()?;
    let rev = transaction::revision::compute(input.root)?;
    let index = transaction::validation::TopicIndex::load(input.root, &rev)?;
    let speakers: HashSet<String> = input.turns.iter().map(|t| unquoted(&opener(t.who()))).collect();
    let known = Known { index: Some(&index), said: said_by(input.root, &index, &speakers)? };
    let planned = plan(input.root, &input.turns, &known, limits)?;
    let patch = Patch {
        base_revision: String::new(),
        message: format!("offline writer: {} turns of {}", input.turns.len(), input.origin),
        sources: input.archive.clone(),
        edits: planned.edits,
    };
    Ok(Prepared { writer, patch, provenance: input.provenance(NAME), limits: planned.limits })
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

/// What the offline writer plans for a batch.
#[derive(Debug, Default)]
pub struct Planned {
    /// The edits of the topic files.
    pub edits: Vec<Edit>,
    /// What it left out to keep people cards within their limits.
    pub limits: Vec<LimitHit>,
}

/// The edits the offline writer makes for `turns` in the workspace at
/// `root` (reading the topic files they add to). A turn some block already
/// cites was written (perhaps moved since by a reorganize) and is skipped;
/// so is a sentence too long to quote whole, one its speaker already said
/// ([`Spoken`]), and a paragraph whose block id exists. A trusted speaker's
/// durable facts and dated plans go to their people card (the card of their
/// person key this write already adds to, else the one the workspace holds,
/// else a new one named after the display of the first of their turns to
/// reach it), which gets the names all the speaker's trusted turns showed
/// among its aliases: a person renamed within one batch keeps one card. A
/// card holds at most `limits` (its own, where it sets them).
pub fn plan(root: &Path, turns: &[Turn], known: &Known<'_>, limits: Limits) -> Result<Planned, WriteFailure> {
    let mut files: BTreeMap<String, FilePlan> = BTreeMap::new();
    let mut spoken = Spoken { root, known, now: HashSet::new(), promoted: None, records: HashMap::new() };
    let cited = known.cited_among(turns.iter().map(|t| t.source.as_str()))?;
    let fresh: Vec<&Turn> = turns.iter().filter(|t| !cited.contains(&t.source)).collect();
    let mut people = People::of(root, &fresh);
    for t in &fresh {
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
            let (path, head) = people.file(destination, t);
            let para = para(&path, t, &parts);
            let file = files.entry(path).or_insert_with(|| FilePlan { head, ..FilePlan::default() });
            file.card |= destination == Destination::Person;
            file.paras.push(para);
        }
    }
    people.name(&fresh, &mut files);
    let held = known.held_among(files.values().flat_map(|f| f.paras.iter().map(|p| p.id.as_str())))?;
    let mut planned = Planned::default();
    for (path, file) in files {
        if let Some(edit) = files::edit(root, &path, file, &held, limits, &mut planned.limits)? {
            planned.edits.push(edit);
        }
    }
    Ok(planned)
}

/// The paragraph of turn `t` saying `parts` in the file at `path`. Its
/// block id is `c-`/`p-`/`t-` and ten hex digits of a hash of the path and
/// the source id: the same turn in the same file always gets the same id.
fn para(path: &str, t: &Turn, parts: &[&str]) -> Para {
    let prefix = match path {
        "topics/core.md" => "c",
        p if p.starts_with("topics/people/") => "p",
        _ => "t",
    };
    let id = format!("{prefix}-{}", hex(&Sha256::digest(format!("{path}\0{}", t.source).as_bytes())[..5]));
    Para {
        id,
        text: said(parts, &t.content),
        definition: t.evidence.definition(path),
        label: opener(t.who()),
        source: t.source.clone(),
    }
}
