//! The flags of `sleep`, the dream pass on demand.

use super::ModelArgs;

/// What `sleep` selects, and how it reports.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SleepArgs {
    /// Consolidate these conversations (provider/thread, PCT-encoded, as
    /// --json's `selected` names them) instead of those with the most
    /// unreflected records.
    #[arg(long = "conversation", value_name = "ID", num_args = 1.., conflicts_with = "recent")]
    pub(crate) conversations: Vec<String>,
    /// Consolidate the N most recently active conversations.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) recent: Option<u64>,
    /// What to look at, in free text (at most 4,000 characters): handed to
    /// the model as data; without --conversation or --recent, the
    /// conversations whose records a search for it finds are taken.
    #[arg(long, value_name = "TEXT")]
    pub(crate) focus: Option<String>,
    /// Machine-readable output:
    /// {"selected","changed","reason","hygiene","focus"}.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}
