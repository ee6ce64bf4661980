//! `update` (a patch as one transaction) and `promote` (pending sources
//! trusted, then written).

use std::io;
use std::path::Path;
use std::time::Duration;

use scriptorium::snapshot;
use scriptorium::{transaction, Code, Error};

use super::Ctx;
use crate::args::{ModelArgs, TierArg};
use crate::report::{self, Exit, Outcome};

/// The patch text: the file at `patch`, or stdin for `-`.
fn read_patch(patch: &str) -> Result<String, Error> {
    if patch == "-" {
        let mut s = String::new();
        return match io::Read::read_to_string(&mut io::stdin().lock(), &mut s) {
            Ok(_) => Ok(s),
            Err(e) => Err(Error::invalid(format!("cannot read the patch from stdin: {e}"))),
        };
    }
    match std::fs::read(patch) {
        Ok(b) => String::from_utf8(b)
            .map_err(|_| Error::invalid(format!("the patch {patch} is not UTF-8")).at(patch)),
        Err(e) => {
            let code = if e.kind() == io::ErrorKind::NotFound { Code::NotFound } else { Code::Io };
            Err(Error::new(code, format!("cannot read the patch {patch}: {e}")).at(patch))
        }
    }
}

/// Applies a patch as one validated, all-or-nothing transaction.
pub(super) fn update(ctx: &Ctx, patch: &str, tier: TierArg, timeout_ms: u64, as_json: bool) -> Outcome {
    let root = &ctx.root;
    let text = read_patch(patch)?;
    let tier = tier.tier();
    // INVALID_ARGUMENT (shape, paths, links and twins on disk), then
    // PERMISSION_DENIED, before the lock.
    let mut parsed = transaction::patch::parse(&text, transaction::Tier::Owner)?;
    if root.is_dir() {
        transaction::patch::check_paths_on_disk(root, &parsed)?;
    }
    transaction::patch::check_tier(&parsed, tier)?;
    snapshot::require(root)?;
    let mut w = super::writer(root, timeout_ms)?;
    super::note_core(w.migrate_core_before(&mut parsed)?);
    let by = transaction::observe::Provenance::by("update");
    let c = w.commit_as(&parsed, tier, transaction::Base::Check, &by)?;
    report::warn(&c.warnings);
    if as_json {
        report::json_line(&serde_json::json!({"revision": c.revision, "changed": c.changed}))
    } else {
        report::line(&format!("revision {}; {} file(s) changed", c.revision, c.changed.len()))
    }
}

/// Promotes pending sources, then writes the named records no block cites.
pub(super) fn promote(
    ctx: &Ctx,
    ids: &[String],
    as_json: bool,
    timeout_ms: u64,
    model: &ModelArgs,
) -> Outcome {
    let root: &Path = &ctx.root;
    snapshot::require(root)?;
    // The writer is chosen first: a bad choice promotes nothing.
    let mut chosen = scriptorium::writers::choose(&model.flags(), &ctx.config)?;
    let timeout = Duration::from_millis(timeout_ms);
    let p = scriptorium::writers::promote(root, ids, "owner", chosen.input_writer(), timeout)?;
    let shown = if as_json {
        report::json_line(&p)
    } else {
        let written = match &p.written {
            Some(b) => format!("; wrote {} record(s), {} file(s) changed", b.records, b.changed.len()),
            None => String::new(),
        };
        report::line(&format!(
            "promoted {} source(s); {} already trusted{written}",
            p.promotion.promoted.len(),
            p.promotion.already_trusted.len()
        ))
    };
    match &p.write_error {
        // The promotion stands; the failure is the exit status and the
        // error object on stderr.
        Some(e) => {
            shown?;
            report::error_object(e);
            Ok(Exit::Findings)
        }
        None => shown,
    }
}
