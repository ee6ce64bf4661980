//! What was recorded in a session since its newest marked node: the user
//! turns the save nudge counts and the agent steps the reflection cadence
//! counts, each read newest first down to that node.

use rusqlite::params;

use super::SqliteStore;
use crate::error::Result;

impl SqliteStore {
    /// The nodes of `session` recorded after its newest node marked for
    /// `workspace` that `sql` counts (its first column; the second says
    /// whether the node is marked). Newest first, up to the first marked
    /// node: what was recorded since the last write, not the whole session.
    pub(super) fn count_since_mark(&self, session: &str, workspace: &str, sql: &str) -> Result<usize> {
        let mut st = self.conn.prepare_cached(sql)?;
        let mut rows = st.query(params![session, workspace])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            if r.get::<_, bool>(1)? {
                break;
            }
            n += usize::from(r.get::<_, bool>(0)?);
        }
        Ok(n)
    }
}

/// The user turns since the newest mark ([`SqliteStore::count_since_mark`]).
pub(super) const USER_TURNS: &str = "SELECT n.role = 'user' AND n.kind = 'turn',
        EXISTS(SELECT 1 FROM marks m WHERE m.session = n.session AND m.node = n.id AND m.workspace = ?2)
    FROM nodes n WHERE n.session = ?1 ORDER BY n.row DESC";

/// The agent steps since the newest mark ([`SqliteStore::count_since_mark`]).
pub(super) const AGENT_STEPS: &str =
    "SELECT (n.role = 'assistant' AND n.kind = 'turn') OR n.kind = 'tool_call',
        EXISTS(SELECT 1 FROM marks m WHERE m.session = n.session AND m.node = n.id AND m.workspace = ?2)
    FROM nodes n WHERE n.session = ?1 ORDER BY n.row DESC";
