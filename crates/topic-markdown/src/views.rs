//! The derived views (FORMAT.md §4), as pure functions of the checked topic
//! files: rebuilding twice gives identical bytes, and only eligible blocks
//! (valid and not pending) appear.

use std::collections::{BTreeMap, HashMap};

pub mod relations;

pub use relations::relations_of;

use serde::Serialize;
use serde_json::json;

use crate::parse::{plain_text, TopicFile};
#[cfg(feature = "tokens")]
use crate::validate::{dir_of, join};
use crate::validate::{BlockState, Checked, Loaded, SourceResolver};

/// The first line of a rendered `core.md`.
pub const CORE_MARKER: &str = "<!-- scriptorium:derived core.md -->";

/// The default token budget of `core.md`.
pub const CORE_BUDGET: usize = 2_000;

/// The self (FORMAT.md §3): the topic files whose eligible blocks every
/// prompt starts with, in the order shown — the persona (how the agent
/// speaks and works), then the identity (who it is). Only these two paths
/// are the self, whatever `kind` other files declare.
pub const SELF_PATHS: [&str; 2] = ["topics/self/persona.md", "topics/self/identity.md"];

/// The most bytes one ordinary token of `o200k_base` stands for, so a text
/// of `n` bytes is at least `n / MAX_TOKEN_BYTES` tokens (rounded up): a
/// budget can refuse a longer text without counting it.
#[cfg(feature = "tokens")]
pub const MAX_TOKEN_BYTES: usize = 128;

/// Tokens of `text` in tiktoken's `o200k_base`.
#[cfg(feature = "tokens")]
pub fn count_tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().count_ordinary(text)
}

/// What the `core.md` render did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CoreReport {
    /// Tokens of the file as written (0 when there is nothing to write).
    pub tokens: usize,
    /// Ids of eligible blocks left out for the budget, in file order.
    pub omitted: Vec<String>,
}

/// The bytes of `core.md` (`None`: nothing to hold, remove it) and the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoreRender {
    /// The file, or `None` when no block is included.
    pub bytes: Option<String>,
    /// Tokens and omitted ids.
    pub report: CoreReport,
}

/// Rewrites the relative Markdown link targets of `line` (outside inline
/// code) so they resolve from the workspace root instead of `dir`.
#[cfg(feature = "tokens")]
fn rewrite_links(line: &str, dir: &str, self_path: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::with_capacity(line.len() + 16);
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let n = b[i..].iter().take_while(|&&c| c == b'`').count();
            let ticks = &line[i..i + n];
            i = match line[i + n..].find(ticks) {
                Some(k) => i + n + k + n,
                None => i + n,
            };
            continue;
        }
        if b[i] == b']' && b.get(i + 1) == Some(&b'(') {
            if let Some(k) = memchr::memchr(b')', &b[i + 2..]) {
                let after = i + 2 + k + 1;
                let mut start = i + 2;
                let inner = &line[start..start + k];
                let mut target = inner.split([' ', '\t']).next().unwrap_or("");
                if let Some(t) = inner.strip_prefix('<').and_then(|t| t.split_once('>')).map(|(t, _)| t) {
                    start += 1;
                    target = t;
                }
                let scheme =
                    target.split_once(':').is_some_and(|(s, _)| !s.contains('/') && !s.contains('#'));
                let rewritten = if target.is_empty() || scheme || target.starts_with("//") {
                    None
                } else if let Some(frag) = target.strip_prefix('#') {
                    Some(format!("{self_path}#{frag}"))
                } else {
                    let (p, frag) = match target.split_once('#') {
                        Some((p, f)) => (p, Some(f)),
                        None => (target, None),
                    };
                    join(dir, p).map(|j| match frag {
                        Some(f) => format!("{j}#{f}"),
                        None => j,
                    })
                };
                if let Some(new) = rewritten {
                    out.push_str(&line[copied..start]);
                    out.push_str(&new);
                    copied = start + target.len();
                }
                i = after;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&line[copied..]);
    out
}

#[cfg(feature = "tokens")]
fn block_lines_rewritten(file: &TopicFile, index: usize, dir: &str, path: &str) -> String {
    let b = &file.blocks[index];
    (b.first_line..=b.last_line)
        .map(
            |k| {
                if file.is_fenced(k) {
                    file.line(k).to_owned()
                } else {
                    rewrite_links(file.line(k), dir, path)
                }
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// Renders `core.md` from `topics/core.md` under `budget` tokens: eligible
/// blocks in file order, then each cited footnote definition once, links
/// rewritten to resolve from the workspace root; the render stops at the
/// first block that would push the whole file past the budget.
#[cfg(feature = "tokens")]
pub fn render_core(core: Option<&Loaded>, checked: &Checked, budget: usize) -> CoreRender {
    let Some(core) = core else { return CoreRender::default() };
    let path = core.path.as_str();
    let dir = dir_of(path);
    let states: Vec<&BlockState> = checked.blocks.iter().filter(|b| b.path == path && b.eligible()).collect();
    let mut included: Vec<(String, Vec<String>)> = Vec::new(); // (block text, labels)
    let mut render = CoreRender::default();
    let assemble = |blocks: &[(String, Vec<String>)]| -> String {
        let mut s = format!("{CORE_MARKER}\n");
        let mut labels: Vec<&str> = Vec::new();
        for (text, ls) in blocks {
            s.push('\n');
            s.push_str(text);
            s.push('\n');
            for l in ls {
                if !labels.contains(&l.as_str()) {
                    labels.push(l);
                }
            }
        }
        if !labels.is_empty() {
            s.push('\n');
            for l in labels {
                if let Some(d) = core.file.definition(l) {
                    s.push_str(&rewrite_links(core.file.line(d.line), dir, path));
                    s.push('\n');
                }
            }
        }
        s
    };
    for (k, st) in states.iter().enumerate() {
        let b = &core.file.blocks[st.index];
        let mut labels: Vec<String> = Vec::new();
        for r in &b.refs {
            if !labels.contains(&r.label) {
                labels.push(r.label.clone());
            }
        }
        included.push((block_lines_rewritten(&core.file, st.index, dir, path), labels));
        let candidate = assemble(&included);
        let tokens = count_tokens(&candidate);
        if tokens > budget {
            included.pop();
            render.report.omitted = states[k..].iter().filter_map(|s| s.id.clone()).collect();
            break;
        }
        render.report.tokens = tokens;
        render.bytes = Some(candidate);
    }
    if included.is_empty() {
        render.bytes = None;
        render.report.tokens = 0;
    }
    render
}

/// A path as Markdown link text on one line: `\\`, `[`, `]` escaped,
/// control characters replaced.
fn link_text(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '\\' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            // A control, format (bidi) or separator character in a file
            // name must not reorder or break the line it is shown on.
            c if c.is_control()
                || scriptorium_source_archive::speaker::is_format_char(c)
                || matches!(c, '\u{2028}' | '\u{2029}') =>
            {
                out.push('\u{FFFD}')
            }
            c => out.push(c),
        }
    }
    out
}

/// A path as a Markdown link destination or a URL path: bytes other than
/// `A-Za-z0-9 - . _ ~ /` percent-encoded (`%XX`, the `%` of archive file
/// names included).
///
/// ```
/// use scriptorium_topic_markdown::views::percent_path;
/// assert_eq!(percent_path("sources/chat/_v2/team 1%.md"), "sources/chat/_v2/team%201%25.md");
/// ```
pub fn percent_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What one eligible block contributes to the derived views. It depends
/// only on the block's file and its verdict, so a caller that knows which
/// verdicts a change can alter may keep these and re-render without
/// re-checking the other files ([`render_parts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockViews {
    /// Workspace-relative path of its file.
    pub path: String,
    /// The block id.
    pub id: String,
    /// `recent_events.jsonl`: the newest evidence time and the line (no
    /// newline).
    pub event: Option<(crate::time::Instant, String)>,
    /// `timeline/`: one `(UTC day, instant, line without newline)` per day
    /// its evidence falls on.
    pub days: Vec<((i64, i64, i64), crate::time::Instant, String)>,
    /// `relations.json`: the topic files and blocks it links to.
    pub links: Vec<crate::validate::LinkTarget>,
}

/// The view pieces of every eligible block of `checked` (whose files are
/// `topics`), in `checked` order.
pub fn block_views(topics: &[Loaded], checked: &Checked) -> Vec<BlockViews> {
    let files: HashMap<&str, &TopicFile> = topics.iter().map(|t| (t.path.as_str(), &t.file)).collect();
    let mut out = Vec::new();
    for b in checked.blocks.iter().filter(|b| b.eligible()) {
        let Some(id) = b.id.as_deref() else { continue };
        let Some(file) = files.get(b.path.as_str()) else { continue };
        let event = b.newest().map(|newest| {
            let text = plain_text(&file.block_text(&file.blocks[b.index]), Some(id));
            let line = json!({
                "time": newest.0,
                "path": b.path,
                "block_id": id,
                "text": text,
                "sources": b.sources,
                "visibility": b.visibility.as_str(),
            });
            (newest.1, scriptorium_source_archive::json::to_line(&line))
        });
        out.push(BlockViews {
            path: b.path.clone(),
            id: id.to_owned(),
            event,
            days: days_of(b, id),
            links: b.links.clone(),
        });
    }
    out
}

/// `timeline/YYYY/MM/DD.md` files: for each UTC day, the eligible blocks
/// whose evidence falls on it, oldest first, ties by path then id.
pub fn timeline(checked: &Checked) -> BTreeMap<String, String> {
    let views: Vec<BlockViews> = block_views_of_states(checked);
    timeline_of(views.iter())
}

/// The timeline entries of a block: its earliest time on each UTC day.
fn days_of(b: &BlockState, id: &str) -> Vec<((i64, i64, i64), crate::time::Instant, String)> {
    let mut per_day: BTreeMap<(i64, i64, i64), (crate::time::Instant, &str)> = BTreeMap::new();
    for (written, instant) in &b.times {
        let e = per_day.entry(instant.utc_day()).or_insert((*instant, written));
        if *instant < e.0 {
            *e = (*instant, written);
        }
    }
    per_day
        .into_iter()
        // A day that `YYYY` cannot name (an offset pushed it past 9999 or
        // before 0000) has no timeline file.
        .filter(|(day, _)| (0..=9999).contains(&day.0))
        .map(|(day, (instant, written))| {
            let line = format!(
                "- {written} [{}#^{id}](../../../{}#^{id})",
                link_text(&b.path),
                percent_path(&b.path)
            );
            (day, instant, line)
        })
        .collect()
}

/// Block views for callers holding only verdicts (no event lines, which
/// need the file text).
fn block_views_of_states(checked: &Checked) -> Vec<BlockViews> {
    checked
        .blocks
        .iter()
        .filter(|b| b.eligible())
        .filter_map(|b| {
            let id = b.id.as_deref()?;
            Some(BlockViews {
                path: b.path.clone(),
                id: id.to_owned(),
                event: None,
                days: days_of(b, id),
                links: b.links.clone(),
            })
        })
        .collect()
}

/// The timeline files of some block views.
pub fn timeline_of<'a>(blocks: impl Iterator<Item = &'a BlockViews>) -> BTreeMap<String, String> {
    type Entry<'b> = (crate::time::Instant, &'b str, &'b str, &'b str);
    let mut days: BTreeMap<(i64, i64, i64), Vec<Entry<'a>>> = BTreeMap::new();
    for b in blocks {
        for (day, instant, line) in &b.days {
            days.entry(*day).or_default().push((*instant, b.path.as_str(), b.id.as_str(), line.as_str()));
        }
    }
    let mut out = BTreeMap::new();
    for ((y, m, d), mut entries) in days {
        entries.sort_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
        let mut s = format!("# {y:04}-{m:02}-{d:02}\n\n");
        for (_, _, _, line) in entries {
            s.push_str(line);
            s.push('\n');
        }
        out.insert(format!("timeline/{y:04}/{m:02}/{d:02}.md"), s);
    }
    out
}

/// The most lines `recent_events.jsonl` holds: the newest eligible blocks.
pub const RECENT_EVENTS: usize = 1_000;

/// `recent_events.jsonl`: one line for each of the [`RECENT_EVENTS`]
/// newest eligible blocks, newest evidence first (ties by path then id);
/// `None` when there is none.
pub fn recent_events(topics: &[Loaded], checked: &Checked) -> (Option<String>, usize) {
    let views = block_views(topics, checked);
    recent_events_of(views.iter())
}

/// The `recent_events.jsonl` of some block views.
pub fn recent_events_of<'a>(blocks: impl Iterator<Item = &'a BlockViews>) -> (Option<String>, usize) {
    let mut events: Vec<(&crate::time::Instant, &str, &str, &str)> = blocks
        .filter_map(|b| b.event.as_ref().map(|(t, line)| (t, b.path.as_str(), b.id.as_str(), line.as_str())))
        .collect();
    let order = |a: &(&crate::time::Instant, &str, &str, &str),
                 b: &(&crate::time::Instant, &str, &str, &str)| {
        b.0.cmp(a.0).then_with(|| a.1.cmp(b.1)).then_with(|| a.2.cmp(b.2))
    };
    // The newest first, without sorting the rest: choosing them is linear.
    if events.len() > RECENT_EVENTS {
        events.select_nth_unstable_by(RECENT_EVENTS - 1, order);
        events.truncate(RECENT_EVENTS);
    }
    events.sort_by(order);
    if events.is_empty() {
        return (None, 0);
    }
    let mut s = String::with_capacity(events.iter().map(|e| e.3.len() + 1).sum());
    for (_, _, _, line) in &events {
        s.push_str(line);
        s.push('\n');
    }
    (Some(s), events.len())
}

/// `relations.json`: topic files and eligible blocks as nodes, links from
/// eligible blocks to files or eligible blocks as edges, deduplicated and
/// sorted; `None` when there are no topic files.
pub fn relations(topics: &[Loaded], checked: &Checked) -> (Option<String>, usize, usize) {
    let views = block_views_of_states(checked);
    let files: Vec<&str> = topics.iter().map(|t| t.path.as_str()).collect();
    relations_of(&files, &views.iter().collect::<Vec<_>>())
}

/// What `render` rebuilt, as the CLI reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RenderReport {
    /// The `core.md` report.
    pub core: CoreReport,
    /// How many timeline day files exist after the render.
    pub timeline_files: usize,
    /// Lines of `recent_events.jsonl`.
    pub events: usize,
    /// Node and edge counts of `relations.json`.
    pub relations: RelationsReport,
}

/// Node and edge counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RelationsReport {
    /// Nodes.
    pub nodes: usize,
    /// Edges.
    pub edges: usize,
}

/// Every derived file, by workspace-relative path, with the report. A
/// derived path absent from `files` has nothing to hold and is removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    /// Path → bytes.
    pub files: BTreeMap<String, String>,
    /// The report.
    pub report: RenderReport,
}

/// Renders every derived view from checked topics.
#[cfg(feature = "tokens")]
pub fn render(topics: &[Loaded], checked: &Checked, budget: usize) -> Rendered {
    let core = render_core(topics.iter().find(|t| t.path == "topics/core.md"), checked, budget);
    let views = block_views(topics, checked);
    let files: Vec<&str> = topics.iter().map(|t| t.path.as_str()).collect();
    render_parts(&files, &views.iter().collect::<Vec<_>>(), core)
}

/// Renders every derived view from its parts: the topic files (decodable
/// ones, for `relations.json`), the view pieces of every eligible block,
/// and the rendered `core.md`. [`render`] is this over a fresh check.
pub fn render_parts(files: &[&str], blocks: &[&BlockViews], core: CoreRender) -> Rendered {
    let mut r = Rendered::default();
    if let Some(bytes) = core.bytes {
        r.files.insert("core.md".into(), bytes);
    }
    r.report.core = core.report;
    let tl = timeline_of(blocks.iter().copied());
    r.report.timeline_files = tl.len();
    r.files.extend(tl);
    let (events, n) = recent_events_of(blocks.iter().copied());
    r.report.events = n;
    if let Some(e) = events {
        r.files.insert("recent_events.jsonl".into(), e);
    }
    let (rel, nodes, edges) = relations_of(files, blocks);
    r.report.relations = RelationsReport { nodes, edges };
    if let Some(rel) = rel {
        r.files.insert("relations.json".into(), rel);
    }
    r
}

/// What to do with a root `core.md` that lacks the derived marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorePromotion {
    /// There is no hand-written `core.md` (absent, or rendered).
    Nothing,
    /// `topics/core.md` exists too: the loose file is preserved and its
    /// converted blocks appended to `topics/core.md` (see `convert`), then
    /// the render replaces it.
    Overwrite,
    /// It is a valid topic file: move it to `topics/core.md`.
    Move,
    /// It is not valid: preserve it as source evidence; these are why.
    PreserveAsEvidence(Vec<crate::Diagnostic>),
}

/// Decides the promotion of a hand-written root `core.md` (FORMAT.md §4):
/// checked as `topics/core.md` together with the other topic files.
pub fn core_promotion(
    root_core: Option<&str>,
    topics: &[Loaded],
    resolver: &dyn SourceResolver,
) -> CorePromotion {
    let Some(text) = root_core else { return CorePromotion::Nothing };
    if text.split('\n').next() == Some(CORE_MARKER) {
        return CorePromotion::Nothing;
    }
    if topics.iter().any(|t| t.path == "topics/core.md") {
        return CorePromotion::Overwrite;
    }
    let mut all: Vec<Loaded> = topics.to_vec();
    all.push(Loaded::parse("topics/core.md", text));
    let checked = crate::validate::check(&all, resolver);
    let problems: Vec<_> = checked.diagnostics.into_iter().filter(|d| d.path == "topics/core.md").collect();
    if problems.is_empty() {
        CorePromotion::Move
    } else {
        CorePromotion::PreserveAsEvidence(problems)
    }
}

#[cfg(all(test, feature = "tokens"))]
mod tests;
