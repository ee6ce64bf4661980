//! New block ids: 8 lowercase hex digits, checked against the ids in use.

use sha2::{Digest, Sha256};

/// A new block id derived from `seed` (the new block's text, its path, a
/// batch id — anything that differs between blocks) that `taken` says is
/// not in use. Deterministic for the same seed and the same ids in use.
///
/// ```
/// use scriptorium_topic_markdown::ids::new_block_id;
/// let id = new_block_id(b"topics/people/ada.md\nAda likes tea.", &|_| false);
/// assert_eq!(id.len(), 8);
/// assert_ne!(new_block_id(b"same", &|i| i == new_block_id(b"same", &|_| false)), new_block_id(b"same", &|_| false));
/// ```
pub fn new_block_id(seed: &[u8], taken: &dyn Fn(&str) -> bool) -> String {
    let mut counter = 0u64;
    loop {
        let mut h = Sha256::new();
        h.update(seed);
        h.update(counter.to_le_bytes());
        let d = h.finalize();
        let id: String = d[..4].iter().map(|b| format!("{b:02x}")).collect();
        if !taken(&id) {
            return id;
        }
        counter += 1;
    }
}
