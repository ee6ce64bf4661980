//! `search`, `recall` (what an agent is given for one message) and `prompt`
//! (what it is given every session).

use std::io::{self, BufWriter, Write};

use scriptorium::fence::Fenced;
use scriptorium::index::{
    self,
    search::{Bm25, Filters},
    segment::Kind,
    tokenize::TokenizerConfig,
};
use scriptorium::{snapshot, Code, Error};

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

fn method_name(m: MethodArg) -> &'static str {
    match m {
        MethodArg::Bm25 => "bm25",
        MethodArg::Embedding => "embedding",
        MethodArg::Hybrid => "hybrid",
    }
}

/// The best hits for a query, one per line.
pub(super) fn search(ctx: &Ctx, a: &SearchArgs, as_json: bool) -> Outcome {
    if a.speaker.is_some() && a.method != MethodArg::Bm25 {
        return Err(Error::invalid(format!(
            "--speaker works only with --method bm25 (it matches archived records' trusted speaker fields), not {}",
            method_name(a.method)
        ))
        .into());
    }
    snapshot::require(&ctx.root)?;
    let _snapshot = super::snapshot(&ctx.root)?;
    let filters = search_filters(a)?;
    let lines = if a.method == MethodArg::Bm25 {
        index::workspace::search_lines(
            &ctx.root,
            TokenizerConfig::default(),
            &a.query,
            &filters,
            a.speaker.as_deref(),
            a.limit,
            Bm25::default(),
        )?
    } else {
        let answer = scriptorium::embeddings::answer(
            &ctx.root,
            &ctx.config,
            method_name(a.method),
            &a.query,
            &filters,
            None,
            a.limit,
        )?;
        if let Some(why) = answer["fallback"].as_str() {
            report::note(&shown(why));
        }
        answer["hits"].as_array().into_iter().flatten().map(scriptorium::embeddings::hit_line).collect()
    };
    if a.speaker.is_some() && !as_json {
        report::note("--speaker searches archived records only");
    }
    let mut out = BufWriter::new(io::stdout().lock());
    for l in &lines {
        let line = if as_json { l.clone() } else { human_hit(l) };
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(Exit::Success)
}

/// `score  path#anchor  attribution  snippet` for a person reading a
/// terminal (a record's attribution, FORMAT.md §2.3: who said it, shown so
/// no impostor looks like the person it imitates).
fn human_hit(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    let anchor = shown(v["block_id"].as_str().or(v["anchor"].as_str()).unwrap_or(""));
    let who = v["attribution"].as_str().map(|l| format!("  {}", shown(l))).unwrap_or_default();
    let pending = if v["trust"] == "pending" { "  (pending)" } else { "" };
    format!(
        "{:.3}  {}#{anchor}{who}{pending}  {}",
        v["score"].as_f64().unwrap_or(0.0),
        shown(v["path"].as_str().unwrap_or("")),
        shown(v["snippet"].as_str().unwrap_or(""))
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

/// The rendered `core.md`, fenced.
pub(super) fn prompt(ctx: &Ctx, as_json: bool) -> Outcome {
    snapshot::require(&ctx.root)?;
    super::migrate_core(&ctx.root)?;
    let _snapshot = super::snapshot(&ctx.root)?;
    let f = scriptorium::recall::system_prompt(&ctx.root).map_err(|e| {
        Error::new(Code::Io, format!("cannot read core.md: {e}")).at(ctx
            .root
            .join("core.md")
            .display()
            .to_string())
    })?;
    let blocks = f.as_str().lines().filter(|l| l.contains(" ^")).count();
    print_fenced(&f, blocks, as_json)
}

/// The top 5 blocks and records for one message, fenced.
pub(super) fn recall(ctx: &Ctx, text: &str, as_json: bool) -> Outcome {
    snapshot::require(&ctx.root)?;
    let _snapshot = super::snapshot(&ctx.root)?;
    let (f, hits) = scriptorium::recall::recall(&ctx.root, text)?;
    print_fenced(&f, hits, as_json)
}
