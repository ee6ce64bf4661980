//! Carrying out the migration of a hand-written root `core.md` that
//! [`crate::core_md`] planned: each step a commit of its own, then the
//! original set aside.

use scriptorium_source_archive::SourceRecord;
use scriptorium_topic_markdown::convert::{Converted, CORE_PATH};

use super::{Base, Committer};
use crate::core_md::{CoreMigration, Plan};
use crate::error::Error;
use crate::observe::Provenance;
use crate::patch::{Edit, Patch, Tier};

impl Committer<'_> {
    /// Carries out `plan`, then sets the original aside; says what was done.
    /// Failing to set it aside is a warning, never an error: the original
    /// then stays, and the next migration finds it done (`Plan::Done`).
    pub(crate) fn promote_core(&mut self, plan: Plan) -> CoreMigration {
        let note = match plan {
            Plan::Move(text) => {
                let p = Patch {
                    base_revision: String::new(),
                    message: "move the hand-written core.md to topics/core.md".into(),
                    sources: Vec::new(),
                    edits: vec![Edit::Create { path: CORE_PATH.into(), content: text }],
                };
                match self.commit_as(&p, Tier::Owner, Base::Any, &Provenance::by("migration")) {
                    Ok(_) => "moved to topics/core.md".to_owned(),
                    Err(e) => format!("could not be moved to topics/core.md ({e}): set aside"),
                }
            }
            Plan::Unarchivable(why) => {
                format!("not a valid topic file and not archivable ({why}): set aside")
            }
            Plan::Preserve { record, converted, onto } => self.preserve(*record, converted, onto),
            Plan::Done(what) => what,
        };
        match crate::layout::set_aside(self.root(), "core.md") {
            Ok(to) => CoreMigration {
                note: format!("{note}; the original is kept at {}", to.display()),
                warnings: Vec::new(),
            },
            Err(e) => CoreMigration {
                note: format!("{note}; the original stays at core.md"),
                warnings: vec![format!(
                    "the hand-written core.md could not be set aside ({e}): it stays where it is, is not \
                     migrated again, and the rendered core.md is written once it is moved away (memory is \
                     written to topics/ as usual)"
                )],
            },
        }
    }

    /// Archives `record` and writes the converted `topics/core.md` (created,
    /// or replacing the existing one it extends when `onto`) in one
    /// transaction; when that is refused, archives the record alone.
    fn preserve(&mut self, record: SourceRecord, converted: Option<Converted>, onto: bool) -> String {
        let at = record.id().v2_path();
        if let Some(c) = converted {
            let (path, content) = (CORE_PATH.to_owned(), c.text);
            let p = Patch {
                base_revision: String::new(),
                message: "convert the hand-written core.md into topics/core.md, preserved as evidence".into(),
                sources: vec![record.clone()],
                edits: vec![if onto {
                    Edit::Replace { path, content }
                } else {
                    Edit::Create { path, content }
                }],
            };
            let done = if onto {
                format!("topics/core.md exists: converted into {} block(s) appended to it", c.blocks)
            } else {
                format!("not a valid topic file: converted into {} block(s) of topics/core.md", c.blocks)
            };
            match self.commit_as(&p, Tier::Owner, Base::Any, &Provenance::by("migration")) {
                Ok(_) => return format!("{done}, each citing it as archived in {at}"),
                Err(e) => tracing::warn!(error = %e, "the converted core.md was refused; archiving it alone"),
            }
        }
        let p = Patch {
            base_revision: String::new(),
            message: "preserve the hand-written core.md as evidence".into(),
            sources: vec![record],
            edits: Vec::new(),
        };
        match self.commit_as(&p, Tier::Owner, Base::Any, &Provenance::by("migration")) {
            Ok(_) => format!("not a valid topic file and not convertible: archived as evidence in {at}"),
            Err(e) => format!("not a valid topic file and not archivable ({e}): set aside"),
        }
    }

    /// Migrates a hand-written root `core.md` if there is one (what `render`
    /// does first; `write`, `prompt` and `update` do it too), and rebuilds
    /// the derived views; says what was done, `None` when there was nothing
    /// to migrate.
    pub fn migrate_core(&mut self) -> Result<Option<CoreMigration>, Error> {
        if crate::views::CoreSlot::of(self.root()) != crate::views::CoreSlot::HandWritten {
            return Ok(None);
        }
        let derived = self.rebuild_derived()?;
        Ok(derived.hand_written_core.map(|note| CoreMigration { note, warnings: derived.warnings }))
    }

    /// [`Committer::migrate_core`] before committing `patch`: a patch based on
    /// the revision before the migration is based on the one after it (the
    /// migration only archives the preserved record and creates
    /// `topics/core.md`, which such a patch cannot have seen, so a `create`
    /// of it still conflicts).
    pub fn migrate_core_before(&mut self, patch: &mut Patch) -> Result<Option<CoreMigration>, Error> {
        if crate::views::CoreSlot::of(self.root()) != crate::views::CoreSlot::HandWritten {
            return Ok(None);
        }
        let before = crate::revision::compute(self.root())?.hex;
        let note = self.migrate_core()?;
        if note.is_some() && patch.base_revision == before {
            patch.base_revision = crate::revision::compute(self.root())?.hex;
        }
        Ok(note)
    }
}
