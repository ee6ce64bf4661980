//! Links to a removed block, pointed at the block that stays instead:
//! `[text](path#^id)` gets the staying block's path relative to the linking
//! file's folder (`#^id` alone within one file), `[[path#^id]]` its path
//! relative to `topics/` (with or without `.md`, as the link had it;
//! `[[#^id]]` within one file); link text, aliases and titles stay.

use std::collections::HashMap;

use scriptorium_topic_markdown::parse::{inline_spans, Inline, Link};
use scriptorium_topic_markdown::validate::{dir_of, link_target};

/// Where each removed block went: (path, id) → (path, id) of the block
/// that stays.
pub(super) type Moves = HashMap<(String, String), (String, String)>;

/// A target the link syntax holds as it is: nothing a link's grammar
/// reads (brackets, parentheses, angle brackets, `|`, `#`, `\`) and no
/// white space or control character.
fn plain(target: &str) -> bool {
    !target.chars().any(|c| c.is_whitespace() || c.is_control() || "[]()<>|#\\".contains(c))
}

/// The path of `to` relative to the folder of `from` (both
/// workspace-relative, `/`-separated).
pub(super) fn relative_path(from: &str, to: &str) -> String {
    let from: Vec<&str> = dir_of(from).split('/').filter(|s| !s.is_empty()).collect();
    let to: Vec<&str> = to.split('/').collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&to[common..]);
    parts.join("/")
}

/// The target a link in `from` gets for the block `id` of `to_path`; `None`
/// when it cannot be written as a plain target.
pub(super) fn new_target(from: &str, link: &Link, to_path: &str, id: &str) -> Option<String> {
    if to_path == from {
        return Some(format!("#^{id}"));
    }
    let path = match link {
        Link::Markdown { .. } => relative_path(from, to_path),
        Link::Wiki { target, .. } => {
            let under = to_path.strip_prefix("topics/")?;
            let keep_md = target.split('#').next().is_some_and(|p| p.ends_with(".md"));
            if keep_md { under } else { under.strip_suffix(".md").unwrap_or(under) }.to_owned()
        }
    };
    plain(&path).then(|| format!("{path}#^{id}"))
}

/// Where a link in `from` lands when it names a block `moves` removed.
fn moved<'m>(from: &str, link: &Link, moves: &'m Moves) -> Option<&'m (String, String)> {
    let t = link_target(from, link).ok()??;
    moves.get(&(t.path, t.block_id?))
}

/// `line` (in `from`) with every link to a removed block pointed at the
/// block that stays; `None` when it holds none.
pub(super) fn retarget(from: &str, line: &str, moves: &Moves) -> Option<String> {
    // One pass, copying the line between the targets replaced: linear in
    // the line however many links it holds.
    let mut out = String::with_capacity(line.len());
    let mut copied = 0;
    for span in inline_spans(line) {
        let Inline::Link(link) = &span.item else { continue };
        let Some((p, id)) = moved(from, link, moves) else { continue };
        let Some(target) = new_target(from, link, p, id) else { continue };
        let s = &line[span.range.clone()];
        let (old, at) = match link {
            Link::Markdown { target, .. } => {
                let Some(open) = s.find("](").map(|k| k + 2) else { continue };
                (target, open + usize::from(s[open..].starts_with('<')))
            }
            Link::Wiki { target, .. } => (target, 2),
        };
        let start = span.range.start + at;
        out.push_str(&line[copied..start]);
        out.push_str(&target);
        copied = start + old.len();
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&line[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves() -> Moves {
        let mut m = Moves::new();
        m.insert(("topics/a.md".into(), "r".into()), ("topics/people/ada.md".into(), "s".into()));
        m.insert(("topics/people/ada.md".into(), "r2".into()), ("topics/people/ada.md".into(), "s".into()));
        m
    }

    #[test]
    fn links_to_a_removed_block_follow_it() {
        let m = moves();
        let line = "See [x](a.md#^r \"t\"), [[a#^r|A]], [[a.md#^r]], <[y](<a.md#^r>)> and [z](a.md#^q).";
        assert_eq!(
            retarget("topics/b.md", line, &m).unwrap(),
            "See [x](people/ada.md#^s \"t\"), [[people/ada#^s|A]], [[people/ada.md#^s]], <[y](<people/ada.md#^s>)> and [z](a.md#^q)."
        );
        assert_eq!(
            retarget("topics/people/ada.md", "[[#^r2]] and [t](#^r2)", &m).unwrap(),
            "[[#^s]] and [t](#^s)"
        );
        assert_eq!(retarget("topics/x/y.md", "[t](../a.md#^r)", &m).unwrap(), "[t](../people/ada.md#^s)");
        assert_eq!(retarget("topics/b.md", "[t](a.md#^q) `[u](a.md#^r)`", &m), None, "code hides links");
    }

    #[test]
    fn paths_relative_to_a_folder() {
        assert_eq!(relative_path("topics/a/b.md", "topics/c.md"), "../c.md");
        assert_eq!(relative_path("topics/c.md", "topics/a/b.md"), "a/b.md");
        assert_eq!(relative_path("topics/a/b.md", "topics/a/d.md"), "d.md");
        assert!(new_target(
            "topics/b.md",
            &Link::Markdown { text: String::new(), target: String::new() },
            "topics/a b.md",
            "s"
        )
        .is_none());
    }
}
