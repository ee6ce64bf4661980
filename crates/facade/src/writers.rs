//! Which writer writes (the offline baseline or a model), chosen the same
//! way for every verb, and `promote`: the audit line, then the promoted
//! records no block cites yet written through that writer.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use scriptorium_scheduler::{self as scheduler, BatchWriter, WriteFailure};
use scriptorium_transaction::{self as transaction, Promoted};
use scriptorium_writer::backfill::{self, Backfilled, InputWriter};
use scriptorium_writer::dream;
use scriptorium_writer::people::Limits;
use scriptorium_writer::{ModelWriter, Offline, OpenAiCompatible};

use crate::config::Config;
use crate::error::Error;

/// What the caller asked for, before configuration (FORMAT §8): `model`
/// (`offline` or a model name), `model_url`, `model_name`, and how long one
/// model call may take.
#[derive(Debug, Clone)]
pub struct WriterFlags {
    /// `offline`, or the name of the model at the URL.
    pub model: Option<String>,
    /// An OpenAI-compatible chat-completions base URL.
    pub model_url: Option<String>,
    /// The model's name at the URL.
    pub model_name: Option<String>,
    /// Seconds one model call may take (at least 1).
    pub model_timeout_secs: u64,
}

impl Default for WriterFlags {
    /// Nothing asked for (configuration decides), model calls of 120 s.
    fn default() -> WriterFlags {
        WriterFlags { model: None, model_url: None, model_name: None, model_timeout_secs: 120 }
    }
}

/// The chosen writer.
pub enum Chosen {
    /// The offline baseline.
    Offline(Offline),
    /// A model behind an OpenAI-compatible endpoint.
    Model(Box<ModelWriter<OpenAiCompatible>>),
}

impl std::fmt::Debug for Chosen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Chosen").field(&self.name()).finish()
    }
}

impl Chosen {
    /// The writer's name, as `write` reports it.
    pub fn name(&self) -> String {
        match self {
            Chosen::Offline(w) => w.name().to_owned(),
            Chosen::Model(w) => w.name().to_owned(),
        }
    }

    /// The writer as the scheduler drives it.
    pub fn batch_writer(&mut self) -> &mut dyn BatchWriter {
        match self {
            Chosen::Offline(w) => w,
            Chosen::Model(w) => w.as_mut(),
        }
    }

    /// The writer as backfill and promotion drive it.
    pub fn input_writer(&mut self) -> &mut dyn InputWriter {
        match self {
            Chosen::Offline(w) => w,
            Chosen::Model(w) => w.as_mut(),
        }
    }

    /// The dream pass ([`scriptorium_writer::dream::run`]): the selection,
    /// the offline hygiene, then, with a model, its consolidation of what
    /// was selected. The offline writer has no judgement to consolidate
    /// with: its pass is the hygiene, and it reports what a model would
    /// have been given.
    pub fn dream(&mut self, root: &Path, options: &dream::Options) -> Result<dream::Report, WriteFailure> {
        match self {
            Chosen::Offline(_) => dream::run(root, options, None),
            Chosen::Model(w) => dream::run(root, options, Some(w.as_mut())),
        }
    }
}

/// The options of an automatic dream pass (the nightly one, or `sleep`
/// without a pick): the caps `memory.dream.*` of `config`.
pub fn dream_options(config: &Config, lock_timeout: Duration) -> dream::Options {
    dream::Options {
        pick: dream::Pick::Auto,
        focus: None,
        caps: dream::Caps {
            max_conversations: config.dream_max_conversations,
            max_bytes: config.dream_max_bytes,
        },
        lock_timeout,
    }
}

/// Picks the writer: flags first, then configuration (`memory.writer.*`,
/// `SCRIPTORIUM_MODEL_URL` / `SCRIPTORIUM_MODEL_NAME`); `--model offline`
/// (with no URL) or nothing configured is the offline writer; a URL and a
/// model name make the OpenAI-compatible client, its key from the
/// configured variable (`SCRIPTORIUM_API_KEY` by default).
pub fn choose(a: &WriterFlags, c: &Config) -> Result<Chosen, WriteFailure> {
    let invalid = |m: String| Err(WriteFailure::new(scheduler::Code::InvalidArgument, m));
    if a.model.as_deref() == Some("offline") {
        if a.model_url.is_some() || a.model_name.is_some() {
            return invalid("--model offline takes no --model-url or --model-name".to_owned());
        }
        return Ok(Chosen::Offline(Offline::new(people_limits(c))));
    }
    if let (Some(m), Some(n)) = (&a.model, &a.model_name) {
        if m != n {
            return invalid(format!("--model {m:?} and --model-name {n:?} name two different models"));
        }
    }
    let flagged = a.model_url.is_some() || a.model_name.is_some() || a.model.is_some();
    if !flagged && c.model.as_deref() == Some("offline") {
        return Ok(Chosen::Offline(Offline::new(people_limits(c))));
    }
    let url = a.model_url.clone().or(c.model_url.clone());
    let name =
        a.model_name.clone().or_else(|| a.model.clone()).or(c.model.clone()).filter(|n| n != "offline");
    match (url, name) {
        (None, None) => Ok(Chosen::Offline(Offline::new(people_limits(c)))),
        (Some(u), None) => invalid(format!(
            "model URL {:?} without a model name (--model-name, --model, memory.writer.model or SCRIPTORIUM_MODEL_NAME)",
            scriptorium_writer::openai::redact_url(&u)
        )),
        (None, Some(n)) => invalid(format!(
            "model {n:?} without a URL (--model-url, memory.writer.model_url or SCRIPTORIUM_MODEL_URL)"
        )),
        (Some(u), Some(n)) => {
            let client =
                OpenAiCompatible::new(&u, &n, c.api_key(), Duration::from_secs(a.model_timeout_secs.max(1)))?;
            Ok(Chosen::Model(Box::new(ModelWriter::new(client).with_limits(people_limits(c)))))
        }
    }
}

/// The people cards' limits the configuration sets
/// (`memory.people.max_entries`, `memory.people.max_entry_chars`); a card
/// may set its own (FORMAT §8).
pub fn people_limits(c: &Config) -> Limits {
    Limits { max_entries: c.people_max_entries, max_entry_chars: c.people_max_entry_chars }
}

/// What `promote` did: the promotion, then what the writer wrote of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromoteReport {
    /// The promotion (the audit line).
    #[serde(flatten)]
    pub promotion: Promoted,
    /// What the writer wrote: the named trusted records no block cited, as
    /// one transaction (`records: 0` when every one was cited already);
    /// `null` when the writer failed.
    pub written: Option<Backfilled>,
    /// Why the writer failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_error: Option<Error>,
}

/// Promotes `ids` as `who` (the audit line, under the write lock), then
/// writes the named records that are trusted and that no block cites through
/// `writer`, as one transaction. A refused promotion is the error; a failed
/// write after it is reported in [`PromoteReport::write_error`].
pub fn promote(
    root: &Path,
    ids: &[String],
    who: &str,
    writer: &mut dyn InputWriter,
    lock_timeout: Duration,
) -> Result<PromoteReport, transaction::Error> {
    let promotion = {
        let mut w = transaction::Committer::open(root, lock_timeout)?;
        w.promote(ids, who)?
    };
    let (written, write_error) = match backfill::write_named(root, ids, writer, lock_timeout) {
        Ok(b) => (Some(b), None),
        Err(f) => {
            tracing::warn!(code = f.code.as_str(), reason = %f.reason, "promoted, but writing the records failed");
            let message = format!(
                "promoted, but writing the records failed: {}; run backfill, or promote them again, to write them",
                f.reason
            );
            (None, Some(Error { message, ..Error::from(f) }))
        }
    };
    Ok(PromoteReport { promotion, written, write_error })
}
