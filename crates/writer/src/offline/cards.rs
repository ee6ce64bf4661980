//! The people cards one write of the offline writer adds to: each person's
//! one card, whatever names the person showed in the batch (FORMAT.md §8,
//! *People cards*; `docs/writer.md`, *Where it goes*).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::files::FilePlan;
use super::route::{self, on_disk, Destination};
use crate::input::Turn;
use crate::people::{alias, Cards};

/// The cards of one write, by person key: the card a person's paragraphs
/// go to is the one this write already adds to, else the one the workspace
/// holds ([`Cards`], listed once, when first needed), else a new one, named
/// after the display of the person's first trusted turn that is not
/// pending in the batch (their first turn when there is none), so its file
/// name is its first alias.
pub(super) struct People<'t> {
    root: &'t Path,
    on_disk: Option<Cards>,
    card_of: HashMap<String, String>,
    namer: HashMap<&'t str, &'t Turn>,
}

impl<'t> People<'t> {
    /// The cards of a write of `turns` (those not written yet, in order)
    /// to the workspace at `root`.
    pub(super) fn of(root: &'t Path, turns: &[&'t Turn]) -> People<'t> {
        let mut namer: HashMap<&'t str, &'t Turn> = HashMap::new();
        for &t in turns {
            let Some(person) = t.person.as_deref() else { continue };
            let first = namer.entry(person).or_insert(t);
            if first.pending && !t.pending {
                *first = t;
            }
        }
        People { root, on_disk: None, card_of: HashMap::new(), namer }
    }

    /// The path of the file `destination` is for turn `t`, and the head a
    /// new one starts with; for a person's card, the one card of their key
    /// in this write.
    pub(super) fn file(&mut self, destination: Destination, t: &Turn) -> (String, String) {
        let person = match (destination, &t.person) {
            (Destination::Person, Some(person)) => person,
            _ => return route::file(self.root, destination, t),
        };
        let namer = self.namer.get(person.as_str()).copied().unwrap_or(t);
        let (path, head) = route::file(self.root, destination, namer);
        if let Some(card) = self.card_of.get(person) {
            return (card.clone(), head);
        }
        let card = self.on_disk().of(person).map_or(path, str::to_owned);
        self.card_of.insert(person.clone(), card.clone());
        (card, head)
    }

    /// The workspace's cards, listed once.
    fn on_disk(&mut self) -> &Cards {
        let root = self.root;
        self.on_disk.get_or_insert_with(|| Cards::scan(root, &on_disk(root, "topics/people")))
    }

    /// Adds to `files` the names (aliases, [`alias`]) the trusted turns
    /// among `turns` showed, each to its speaker's card: the card this
    /// write adds to, else the one the workspace holds; a person with no
    /// card gets none made for a name. Only a trusted turn that is not
    /// pending names anyone: the display comes from the transport, never
    /// from a body.
    pub(super) fn name(&mut self, turns: &[&Turn], files: &mut BTreeMap<String, FilePlan>) {
        let mut seen: std::collections::HashSet<(String, String)> = Default::default();
        for t in turns.iter().filter(|t| !t.pending) {
            let (Some(person), Some(display)) = (&t.person, &t.display) else { continue };
            let path = match self.card_of.get(person) {
                Some(p) => p.clone(),
                None => match self.on_disk().of(person) {
                    Some(p) => p.to_owned(),
                    None => continue,
                },
            };
            let name = alias(display);
            if seen.insert((path.clone(), name.clone())) {
                let file = files.entry(path).or_default();
                file.card = true;
                file.names.push((name, t.source.clone()));
            }
        }
    }
}
