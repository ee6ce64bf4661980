//! One entry file per decodable topic file under `.scriptorium/views/`:
//! what each of its eligible blocks contributes to the views
//! ([`BlockViews`]), named by a hash of the path and the contents, so a
//! name read from the state always means the same bytes.

use std::path::{Path, PathBuf};

use scriptorium_topic_markdown::time::Instant;
use scriptorium_topic_markdown::validate::LinkTarget;
use scriptorium_topic_markdown::views::BlockViews;

/// The views cache folder, relative to the workspace root.
pub const VIEWS_DIR: &str = ".scriptorium/views";

fn js(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// The entry of the file `path` whose eligible blocks are `blocks`: its
/// name and its bytes.
pub fn encode(path: &str, blocks: &[BlockViews]) -> (String, String) {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(256 * blocks.len() + 64);
    let _ = writeln!(out, "F\t{}", js(path));
    for b in blocks {
        let _ = writeln!(out, "B\t{}", js(&b.id));
        if let Some((t, line)) = &b.event {
            let _ = writeln!(out, "E\t{}\t{}\t{line}", t.seconds, t.nanos);
        }
        for ((y, m, d), t, line) in &b.days {
            let _ = writeln!(out, "T\t{y}\t{m}\t{d}\t{}\t{}\t{line}", t.seconds, t.nanos);
        }
        for l in &b.links {
            let id = l.block_id.as_deref().map_or_else(|| "null".to_owned(), js);
            let _ = writeln!(out, "L\t{}\t{id}", js(&l.path));
        }
    }
    (name(path, &out), out)
}

fn name(path: &str, body: &str) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(path.as_bytes());
    h.update([0u8]);
    h.update(body.as_bytes());
    h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// True for a well-formed entry name.
pub fn is_name(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The path of entry `name` under workspace `root`.
pub fn path_of(root: &Path, name: &str) -> PathBuf {
    root.join(VIEWS_DIR).join(name)
}

/// Reads entry `name`, which must hold the pieces of `path`.
pub fn read(root: &Path, name: &str, path: &str) -> Option<Vec<BlockViews>> {
    if !is_name(name) {
        return None;
    }
    let text = std::fs::read_to_string(path_of(root, name)).ok()?;
    let (p, blocks) = decode(&text)?;
    (p == path).then_some(blocks)
}

fn decode(text: &str) -> Option<(String, Vec<BlockViews>)> {
    let mut path: Option<String> = None;
    let mut blocks: Vec<BlockViews> = Vec::new();
    let num = |s: &str| s.parse::<i64>().ok();
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        let (tag, rest) = line.split_once('\t')?;
        match tag {
            "F" if path.is_none() => path = Some(serde_json::from_str(rest).ok()?),
            "B" => {
                let id: String = serde_json::from_str(rest).ok()?;
                blocks.push(BlockViews {
                    path: path.clone()?,
                    id,
                    event: None,
                    days: Vec::new(),
                    links: Vec::new(),
                });
            }
            "E" => {
                let mut f = rest.splitn(3, '\t');
                let t = Instant { seconds: num(f.next()?)?, nanos: u32::try_from(num(f.next()?)?).ok()? };
                blocks.last_mut()?.event = Some((t, f.next()?.to_owned()));
            }
            "T" => {
                let mut f = rest.splitn(6, '\t');
                let day = (num(f.next()?)?, num(f.next()?)?, num(f.next()?)?);
                let t = Instant { seconds: num(f.next()?)?, nanos: u32::try_from(num(f.next()?)?).ok()? };
                blocks.last_mut()?.days.push((day, t, f.next()?.to_owned()));
            }
            "L" => {
                let (p, id) = rest.split_once('\t')?;
                let target: String = serde_json::from_str(p).ok()?;
                let block_id: Option<String> = serde_json::from_str(id).ok()?;
                blocks.last_mut()?.links.push(LinkTarget { path: target, block_id });
            }
            _ => return None,
        }
    }
    Some((path?, blocks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_round_trips_and_is_named_by_its_bytes() {
        let b = BlockViews {
            path: "topics/a\"b.md".into(),
            id: "a1".into(),
            event: Some((Instant { seconds: 5, nanos: 6 }, "{\"x\":\"tab\\there\"}".into())),
            days: vec![((2026, 8, 9), Instant { seconds: 5, nanos: 6 }, "- 2026-08-09 [x](y)".into())],
            links: vec![
                LinkTarget { path: "topics/b.md".into(), block_id: Some("b1".into()) },
                LinkTarget { path: "topics/c.md".into(), block_id: None },
            ],
        };
        let (name, body) = encode("topics/a\"b.md", std::slice::from_ref(&b));
        assert!(is_name(&name));
        assert_eq!(decode(&body), Some(("topics/a\"b.md".to_owned(), vec![b.clone()])));
        assert_ne!(encode("topics/other.md", &[b]).0, name);
        assert_eq!(decode("F\t\"p\"\nX\tjunk\n"), None);
    }
}
