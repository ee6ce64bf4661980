//! A hand-written root `core.md` (no derived marker line): moved to
//! `topics/core.md` when there is none and it is a valid topic file, else
//! preserved verbatim as an evidence record and converted into blocks of
//! `topics/core.md` citing it (appended when that file exists), in one
//! transaction (FORMAT.md §4.4). The original is then set aside, never
//! deleted.
//!
//! This module decides what to do ([`plan`]); the writer carries it out
//! (`commit::core_migration`).

use std::borrow::Cow;

use scriptorium_source_archive::{timestamp, Role, SourceId, SourceRecord};
use scriptorium_topic_markdown::convert::{convert_core, Citation, Converted, CORE_PATH};
use scriptorium_topic_markdown::validate::{Loaded, Resolution, SourceResolver};
use scriptorium_topic_markdown::views::{core_promotion, CorePromotion};

/// What to do with a hand-written `core.md`, decided while the index and
/// the topic files are open.
#[derive(Debug)]
pub(crate) enum Plan {
    /// A valid topic file and no `topics/core.md`: committed as
    /// `topics/core.md` as it is.
    Move(String),
    /// Preserved as `record`, and converted when that works: the whole new
    /// `topics/core.md`, which replaces the existing one when `onto`.
    Preserve { record: Box<SourceRecord>, converted: Option<Converted>, onto: bool },
    /// Not archivable (why): only set aside.
    Unarchivable(String),
    /// Migrated before (what was done), but not set aside then: only set
    /// aside now, nothing converted or appended again.
    Done(String),
}

/// What a migration of a hand-written `core.md` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreMigration {
    /// What was done, in words.
    pub note: String,
    /// Why the original could not be set aside, when it could not (it then
    /// stays where it is, and the next migration only retries the move).
    pub warnings: Vec<String>,
}

/// The resolver of the current workspace plus the record about to be
/// archived with the conversion.
struct Staged<'a> {
    inner: &'a dyn SourceResolver,
    record: &'a SourceRecord,
}

impl Staged<'_> {
    fn is_it(&self, source_id: &str, path: &str, anchor: &str) -> bool {
        let id = self.record.id();
        source_id == id.text() && path == id.v2_path() && anchor == id.anchor()
    }
}

impl SourceResolver for Staged<'_> {
    fn resolve(&self, source_id: &str, path: &str, anchor: &str) -> Resolution {
        if self.is_it(source_id, path, anchor) {
            Resolution::Trusted
        } else {
            self.inner.resolve(source_id, path, anchor)
        }
    }

    fn content(&self, source_id: &str, path: &str, anchor: &str) -> Option<Cow<'_, str>> {
        if self.is_it(source_id, path, anchor) {
            Some(Cow::Borrowed(self.record.content()))
        } else {
            self.inner.content(source_id, path, anchor)
        }
    }
}

/// The evidence footnote label of a source id: `e-` and ten hex digits of
/// a hash of it (the writers' scheme, so one record has one label).
fn label_of(source: &str) -> String {
    let d = <sha2::Sha256 as sha2::Digest>::digest(format!("evidence\0{source}").as_bytes());
    let hex: String = d.iter().take(5).map(|b| format!("{b:02x}")).collect();
    format!("e-{hex}")
}

/// Whether the hand-written `body` was moved to `core` before: `core` is
/// exactly that text, or holds every one of its blocks (id and text) after
/// later writes added to it.
fn moved_before(body: &str, core: &Loaded) -> bool {
    let hand = Loaded::parse(CORE_PATH, body).file;
    if hand.print() == core.file.print() {
        return true;
    }
    let held = |b: &scriptorium_topic_markdown::parse::Block| {
        b.id.is_some()
            && core.file.blocks.iter().any(|o| o.id == b.id && core.file.block_text(o) == hand.block_text(b))
    };
    !hand.blocks.is_empty() && hand.blocks.iter().all(held)
}

/// Decides what happens to the hand-written `text` (read as `bytes`),
/// checked with the topic files against `resolver`.
pub(crate) fn plan(bytes: &[u8], text: &str, topics: &[Loaded], resolver: &dyn SourceResolver) -> Plan {
    // A byte-order mark is not the person's text (the record keeps it).
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    if core_promotion(Some(body), topics, resolver) == CorePromotion::Move
        && std::str::from_utf8(bytes).is_ok()
    {
        return Plan::Move(body.to_owned());
    }
    let existing = topics.iter().find(|t| t.path == CORE_PATH);
    if existing.is_some_and(|t| moved_before(body, t)) {
        return Plan::Done("already moved to topics/core.md".to_owned());
    }
    let onto = existing.is_some();
    let digest = <sha2::Sha256 as sha2::Digest>::digest(bytes);
    let short: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let record = SourceId::new("workspace", "core-md", &format!("core-{short}"))
        .map_err(|e| e.message().to_owned())
        .and_then(|id| {
            SourceRecord::new(id, Role::System, &timestamp::now(), None, false, text.to_owned())
                .map_err(|e| e.message().to_owned())
        });
    let record = match record {
        Ok(r) => r,
        Err(why) => return Plan::Unarchivable(why),
    };
    let id = record.id();
    if resolver.resolve(&id.text(), &id.v2_path(), &id.anchor()) != Resolution::Unknown {
        return Plan::Done(format!("already archived as evidence in {}: not converted again", id.v2_path()));
    }
    let label = label_of(&id.text());
    let definition = format!(
        "[^{label}]: Time: `{}`; Sources: [{}](../{}#{})",
        record.timestamp(),
        id.text(),
        id.v2_path(),
        id.anchor()
    );
    let staged = Staged { inner: resolver, record: &record };
    let converted = convert_core(text, Citation { label: &label, definition: &definition }, topics, &staged);
    Plan::Preserve { record: Box::new(record), converted, onto }
}

#[cfg(test)]
mod tests {
    //! A hand-written `core.md` already in memory is not migrated again.
    use super::*;

    /// Resolves every citation as `answer`.
    struct All(Resolution);

    impl SourceResolver for All {
        fn resolve(&self, _: &str, _: &str, _: &str) -> Resolution {
            self.0
        }

        fn content(&self, _: &str, _: &str, _: &str) -> Option<Cow<'_, str>> {
            None
        }
    }

    #[test]
    fn a_moved_file_is_found_even_after_later_writes() {
        let body = "# Core\n\nBe terse. ^a1\n";
        let later = Loaded::parse(CORE_PATH, "# Core\n\nBe terse. ^a1\n\nLater. ^b2\n");
        assert!(moved_before(body, &later));
        assert!(moved_before(body, &Loaded::parse(CORE_PATH, body)));
        assert!(!moved_before(body, &Loaded::parse(CORE_PATH, "# Core\n\nBe brief. ^a1\n")));
        assert!(!moved_before("# Core\n", &later), "no block to find");
        assert!(matches!(plan(body.as_bytes(), body, &[later], &All(Resolution::Unknown)), Plan::Done(_)));
    }

    #[test]
    fn an_archived_record_of_the_same_bytes_is_not_converted_again() {
        let text = "Please call me Sam.\n";
        assert!(matches!(plan(text.as_bytes(), text, &[], &All(Resolution::Unknown)), Plan::Preserve { .. }));
        match plan(text.as_bytes(), text, &[], &All(Resolution::Trusted)) {
            Plan::Done(what) => assert!(what.contains("not converted again"), "{what}"),
            other => panic!("{other:?}"),
        }
    }
}
