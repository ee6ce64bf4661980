//! Front matter, merged key by key.

use super::model::{Fm, Version};
use super::{Conflict, ConflictKind};

/// The merged front matter (`None`: neither side has one, or every key is
/// gone and one side removed it). Keys come in ours' order, then theirs'
/// own keys in theirs' order.
pub(super) fn merge(
    b: Option<&Version>,
    o: &Version,
    t: &Version,
    conflicts: &mut Vec<Conflict>,
) -> Option<Fm> {
    let (bi, oi, ti) = (items(b), items(Some(o)), items(Some(t)));
    let keys = oi.iter().chain(ti.iter().filter(|(k, _)| get(oi, k).is_none())).map(|(k, _)| k);
    let mut out = Vec::new();
    for key in keys {
        let (bv, ov, tv) = (get(bi, key), get(oi, key), get(ti, key));
        let kept = if ov == tv || bv == tv {
            ov
        } else if bv == ov {
            tv
        } else {
            conflicts.push(Conflict {
                kind: ConflictKind::FrontMatter { key: shown(key) },
                ours: ov.cloned().unwrap_or_default(),
                theirs: tv.cloned().unwrap_or_default(),
            });
            ov.or(tv)
        };
        if let Some(line) = kept {
            out.push((key.clone(), line.clone()));
        }
    }
    let open = o.fm.as_ref().or(t.fm.as_ref())?.open.clone();
    (!out.is_empty() || (o.fm.is_some() && t.fm.is_some())).then_some(Fm { open, items: out })
}

/// The front matter items of `v` (none without front matter).
fn items(v: Option<&Version>) -> &[(String, String)] {
    v.and_then(|v| v.fm.as_ref()).map_or(&[], |f| &f.items[..])
}

/// The line of `key` in `items`.
fn get<'i>(items: &'i [(String, String)], key: &str) -> Option<&'i String> {
    items.iter().find(|(k, _)| k == key).map(|(_, l)| l)
}

/// A key as a conflict shows it: without the occurrence number, and a line
/// that is not `key: value` as the line.
fn shown(key: &str) -> String {
    let key = key.split('\0').next().unwrap_or(key);
    key.strip_prefix(' ').unwrap_or(key).to_owned()
}
