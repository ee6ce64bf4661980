//! `search`, `recall` (what an agent is given for one message) and `prompt`
//! (what it is given every session).

use std::io::{self, BufWriter, Write};

use scriptorium::archive::json::{self, Trust};
use scriptorium::fence::Fenced;
use scriptorium::index::{self, search::Filters, segment::Kind};
use scriptorium::search::{Hit, Method};
use scriptorium::{snapshot, Error};

use super::Ctx;
use crate::args::{KindArg, MethodArg, SearchArgs};
use crate::report::{self, shown, Exit, Outcome};

fn search_filters(a: &SearchArgs) -> Result<Filters, Error> {
    let day = |flag: &str, v: &Option<String>| -> Result<Option<i32>, Error> {
        match v {
            None => Ok(None),
            Some(s) => index::workspace::parse_day(s)
                .map(Some)
                .ok_or_else(|| Error::invalid(format!("{flag} {s:?} is not a date (YYYY-MM-DD)"))),
        }
    };
    let kind = a.kind.map(|k| match k {
        KindArg::Topic => Kind::Topic,
        KindArg::Source => Kind::Source,
    });
    if a.speaker.is_some() && kind == Some(Kind::Topic) {
        return Err(Error::invalid(
            "--speaker matches archived records only; it cannot be combined with --kind topic",
        ));
    }
    Ok(Filters {
        kind,
        path_prefix: a.path_prefix.clone(),
        day_from: day("--date-from", &a.date_from)?,
        day_to: day("--date-to", &a.date_to)?,
        speaker: None,
        include_pending: a.include_pending,
    })
}

fn method(m: MethodArg) -> Method {
    match m {
        MethodArg::Bm25 => Method::Bm25,
        MethodArg::Embedding => Method::Embedding,
        MethodArg::Hybrid => Method::Hybrid,
    }
}

/// The best hits for a query, one per line.
pub(super) fn search(ctx: &Ctx, a: &SearchArgs, as_json: bool) -> Outcome {
    if a.speaker.is_some() && a.method != MethodArg::Bm25 {
        return Err(Error::invalid(format!(
            "--speaker works only with --method bm25 (it matches archived records' trusted speaker fields), not {}",
            method(a.method).as_str()
        ))
        .into());
    }
    let _snapshot = super::snapshot(&ctx.root)?;
    let filters = search_filters(a)?;
    let answer = scriptorium::search::answer(
        &ctx.root,
        &ctx.config,
        method(a.method),
        &a.query,
        &filters,
        a.speaker.as_deref(),
        a.limit,
    )?;
    if let Some(why) = &answer.fallback {
        report::note(&shown(why));
    }
    if a.speaker.is_some() && !as_json {
        report::note("--speaker searches archived records only");
    }
    let mut out = BufWriter::new(io::stdout().lock());
    for hit in &answer.hits {
        let line = if as_json { json::to_line(hit) } else { human_hit(hit) };
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(Exit::Success)
}

/// `score  path#anchor  attribution  snippet` for a person reading a
/// terminal (a record's attribution, FORMAT.md §2.3: who said it, shown so
/// no impostor looks like the person it imitates).
fn human_hit(hit: &Hit) -> String {
    let anchor = shown(hit.anchor().unwrap_or(""));
    let who = hit.attribution().map(|l| format!("  {}", shown(l))).unwrap_or_default();
    let pending = if hit.trust() == Trust::Pending { "  (pending)" } else { "" };
    let tampered = if hit.tampered { "  (tampered)" } else { "" };
    format!(
        "{:.3}  {}#{anchor}{who}{pending}{tampered}  {}",
        hit.score,
        shown(hit.path()),
        shown(&hit.snippet)
    )
}

fn print_fenced(f: &Fenced, hits: usize, as_json: bool) -> Outcome {
    if as_json {
        report::json_line(&serde_json::json!({"text": f.as_str(), "hits": hits}))
    } else if f.is_empty() {
        Ok(Exit::Success)
    } else {
        report::line(f.as_str())
    }
}

/// What a session is given, fenced: the self, the save nudge when due,
/// the rendered `core.md`; with `--json`, `{"text","hits","self"}`.
pub(super) fn prompt(ctx: &Ctx, session: Option<&str>, as_json: bool) -> Outcome {
    snapshot::require(&ctx.root)?;
    super::migrate_core(&ctx.root)?;
    let _snapshot = super::snapshot(&ctx.root)?;
    // The nudge needs the session store; without it the prompt is still
    // worth giving (a read-only workspace, a damaged store): said on stderr.
    let nudge =
        match session.map(|s| scriptorium::nudge::due(&ctx.root, s, ctx.config.nudge_every_user_turns)) {
            Some(Ok(n)) => n,
            Some(Err(e)) => {
                report::warn(&[format!("no save nudge: {} ({})", e.message, e.code.as_str())]);
                None
            }
            None => None,
        };
    let core = scriptorium::recall::core_text(&ctx.root).map_err(|e| {
        Error::new(scriptorium::Code::Io, format!("cannot read core.md: {e}")).at(ctx
            .root
            .join("core.md")
            .display()
            .to_string())
    })?;
    let me = scriptorium::self_prompt::of_workspace(&ctx.root, ctx.config.self_budget)?;
    let f = scriptorium::self_prompt::fence_prompt(&me.text, nudge.as_deref(), &core);
    let blocks = core.lines().filter(|l| l.contains(" ^")).count();
    if as_json {
        report::json_line(&serde_json::json!({"text": f.as_str(), "hits": blocks, "self": me.report}))
    } else {
        print_fenced(&f, blocks, false)
    }
}

/// The top 5 blocks and records for one message, fenced.
pub(super) fn recall(ctx: &Ctx, text: &str, as_json: bool) -> Outcome {
    snapshot::require(&ctx.root)?;
    let _snapshot = super::snapshot(&ctx.root)?;
    let (f, hits) = scriptorium::recall::recall(&ctx.root, text)?;
    print_fenced(&f, hits, as_json)
}
