//! The save nudge: after `memory.nudge.every_user_turns` user turns of a
//! session that no memory write has covered, what an agent is given for
//! that session adds one line (inside the fence) suggesting it save what
//! matters.
//!
//! A write covers a session's turns when its transaction names them in its
//! provenance (the session and the node ids written), which is what marks
//! them in the session store; so the count is the user turns recorded
//! after the session's newest marked node. No speaker, label or author
//! name takes part: text anyone can write cannot silence or trigger it.

use std::path::Path;

use scriptorium_scheduler::store::SESSIONS_DB;
use scriptorium_scheduler::{SessionStore, SqliteStore};
use scriptorium_transaction::layout;

use crate::error::Error;
use crate::fence::Fenced;

/// The user turns of `session` recorded since the last write that covered
/// any of its turns; 0 when the workspace or its session store does not
/// exist yet (nothing is created).
pub fn unwritten_user_turns(root: &Path, session: &str) -> Result<usize, Error> {
    let Some(identity) = layout::identity(root)? else { return Ok(0) };
    let Some(store) = SqliteStore::open_existing(&root.join(SESSIONS_DB))? else { return Ok(0) };
    Ok(store.user_turns_since_mark(session, &identity.id)?)
}

/// The nudge line for `session` when it is due (`every` unwritten user
/// turns or more; never when `every` is 0).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// // Nothing recorded: no nudge.
/// assert_eq!(scriptorium::nudge::due(dir.path(), "s1", 10).unwrap(), None);
/// assert!(scriptorium::nudge::line(12).contains("12 user turns"));
/// ```
pub fn due(root: &Path, session: &str, every: usize) -> Result<Option<String>, Error> {
    if every == 0 {
        return Ok(None);
    }
    let n = unwritten_user_turns(root, session)?;
    Ok((n >= every).then(|| line(n)))
}

/// The nudge line for `n` unwritten user turns.
pub fn line(n: usize) -> String {
    format!(
        "[Save nudge: {n} user turns of this session are not in memory yet. If they hold something worth keeping (a decision, a preference, a fact about a person or a project), save it with memory_update.]"
    )
}

/// Fences the nudge line (first, so capping keeps it) and `body` together.
pub fn fence_with(nudge: Option<&str>, body: &str) -> Fenced {
    let text = match nudge {
        Some(n) if !body.trim().is_empty() => format!("{n}\n{body}"),
        Some(n) => n.to_owned(),
        None => body.to_owned(),
    };
    crate::fence::fence_memory(&text)
}
