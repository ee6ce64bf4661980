//! Speaker keys of record documents, and how a speaker a person names is
//! resolved to one of them (FORMAT.md §7).
//!
//! A record of a trusted identity carries three kinds of key: its verbatim
//! id (exact bytes), its identity (the attribution, FORMAT.md §2.3, which
//! differs for every two identities), and a *name* key for each of its
//! normalised display, header label and attribution (NFC and full case
//! folding) together with the identity. A legacy record's untrusted hint
//! carries an identity and name keys (its display, id, label and
//! attribution), never an id key. [`resolve`] turns what a person typed
//! into one key: an exact id, else the one identity that has that name.

use std::collections::BTreeSet;

use scriptorium_source_archive::id::fold_key;
use scriptorium_source_archive::legacy::SpeakerHint;
use scriptorium_source_archive::speaker::{shown_id, Speaker};

use crate::search::View;
use crate::segment::Damaged;

/// Prefix of a verbatim-id key.
const ID: &str = "i\0";
/// Prefix of an identity key.
const IDENTITY: &str = "a\0";
/// Prefix of a name key.
const NAME: &str = "n\0";

/// The key of every record whose trusted identity has this verbatim id.
pub fn id_key(id: &str) -> String {
    format!("{ID}{id}")
}

/// The key of every record of the identity with this attribution.
pub fn identity_key(attribution: &str) -> String {
    format!("{IDENTITY}{attribution}")
}

fn name_prefix(name: &str) -> String {
    format!("{NAME}{}\0", fold_key(name))
}

fn keys(id: Option<&str>, names: &[&str], attribution: &str) -> Vec<String> {
    let mut keys: Vec<String> = names
        .iter()
        .chain([&attribution])
        .map(|n| format!("{}{attribution}", name_prefix(n)))
        .chain(id.map(id_key))
        .chain([identity_key(attribution)])
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The speaker keys of a record of a trusted identity.
pub fn trusted_keys(s: &Speaker) -> Vec<String> {
    let names: Vec<&str> = s.display().into_iter().chain([s.label()]).collect();
    keys(s.id(), &names, &s.attribution())
}

/// The speaker keys of a legacy record with an untrusted hint.
pub fn hint_keys(h: &SpeakerHint) -> Vec<String> {
    let label = h.label();
    keys(None, &[&h.display, &h.id, &label], &h.attribution())
}

/// What a named speaker resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// The speaker key to filter on.
    Key(String),
    /// No archived identity has that id or name: nothing matches.
    Nobody,
    /// Several identities have that name: their attributions, sorted.
    Ambiguous(Vec<String>),
}

/// Resolves `name`: an exact verbatim id of a trusted identity, else the
/// one identity (trusted or a legacy hint) whose display, label or
/// attribution equals it after NFC and full case folding. An id that is
/// also the name of an identity with another id is ambiguous, like a name
/// two identities share: a handle chosen as an id never takes over a
/// person's name. Pending records count: an identity is archived whether
/// or not its text is trusted yet.
pub fn resolve(view: &View, name: &str) -> Result<Resolved, Damaged> {
    let prefix = name_prefix(name);
    let found: BTreeSet<String> = live_keys(view, prefix.as_bytes())?
        .into_iter()
        .map(|k| String::from_utf8_lossy(&k[prefix.len()..]).into_owned())
        .collect();
    let id = id_key(name);
    if live_keys(view, id.as_bytes())?.iter().any(|k| *k == id.as_bytes()) {
        let with_id = format!("[id {}]", shown_id(name));
        if found.iter().all(|a| a.ends_with(&with_id)) {
            return Ok(Resolved::Key(id));
        }
        let mut all = found;
        for key in live_keys(view, IDENTITY.as_bytes())? {
            let attribution = String::from_utf8_lossy(&key[IDENTITY.len()..]);
            if attribution.ends_with(&with_id) {
                all.insert(attribution.into_owned());
            }
        }
        return Ok(Resolved::Ambiguous(all.into_iter().collect()));
    }
    let mut found: Vec<String> = found.into_iter().collect();
    Ok(match found.len() {
        0 => Resolved::Nobody,
        1 => Resolved::Key(identity_key(&found.remove(0))),
        _ => Resolved::Ambiguous(found),
    })
}

/// The speaker keys starting with `prefix` that some live document of the
/// view carries (a document counts unless the head deleted it).
fn live_keys(view: &View, prefix: &[u8]) -> Result<Vec<Vec<u8>>, Damaged> {
    let mut out = Vec::new();
    for (k, seg) in view.segments().iter().enumerate() {
        let tombs = view.tombstones(k)?;
        let deleted =
            |d: u32| tombs.is_some_and(|b| b.get(d as usize / 8).is_some_and(|x| x & (1 << (d % 8)) != 0));
        for (key, docs) in seg.speaker_keys_with_prefix(prefix)? {
            let live = docs
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .any(|d| !deleted(d));
            if live {
                out.push(key.to_vec());
            }
        }
    }
    Ok(out)
}
