//! What a write left out to keep a people card within its limits
//! (FORMAT.md §8, *People cards*): the `limits` list of `write --json`,
//! of [`crate::Written`] and of [`crate::WriteReport`].

use serde::Serialize;

/// Which limit of a people card was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The most paragraphs the card holds: a full card got no new one.
    MaxEntries,
    /// The most characters of one paragraph: a longer one was not written
    /// (never cut).
    MaxEntryChars,
    /// The most characters of the card's aliases: a new name was not added.
    Aliases,
}

impl Limit {
    /// The limit as written in reports and front matter.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::MaxEntries => "max_entries",
            Limit::MaxEntryChars => "max_entry_chars",
            Limit::Aliases => "aliases",
        }
    }
}

/// One card and one limit it reached in a write: `{"path","limit","value",
/// "sources"}`, `value` the limit in force for that card and `sources` the
/// turns (source ids, text form) whose paragraph or name was left out, in
/// the order they came. Those turns stay in the archive, where search
/// finds them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LimitHit {
    /// The card, workspace-relative.
    pub path: String,
    /// The limit reached.
    pub limit: Limit,
    /// Its value for this card.
    pub value: usize,
    /// The turns left out because of it.
    pub sources: Vec<String>,
}

/// Adds `more` to `into`: one entry per card and limit, its sources in the
/// order they came (a turn is written by one batch, so no source comes
/// twice); entries sorted by path, then limit.
pub fn merge(into: &mut Vec<LimitHit>, more: Vec<LimitHit>) {
    for hit in more {
        match into.iter_mut().find(|h| h.path == hit.path && h.limit == hit.limit) {
            Some(h) => {
                h.value = hit.value;
                h.sources.extend(hit.sources);
            }
            None => into.push(hit),
        }
    }
    into.sort_by(|a, b| (&a.path, a.limit).cmp(&(&b.path, b.limit)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, limit: Limit, sources: &[&str]) -> LimitHit {
        LimitHit {
            path: path.into(),
            limit,
            value: 3,
            sources: sources.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn merging_keeps_one_entry_per_card_and_limit() {
        let mut all = vec![hit("b.md", Limit::MaxEntries, &["s1"])];
        merge(&mut all, vec![hit("b.md", Limit::MaxEntries, &["s2"]), hit("a.md", Limit::Aliases, &["s3"])]);
        assert_eq!(
            all,
            [hit("a.md", Limit::Aliases, &["s3"]), hit("b.md", Limit::MaxEntries, &["s1", "s2"])]
        );
        assert_eq!(
            serde_json::to_string(&all[0]).unwrap(),
            r#"{"path":"a.md","limit":"aliases","value":3,"sources":["s3"]}"#
        );
    }
}
