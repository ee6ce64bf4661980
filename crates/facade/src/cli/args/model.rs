//! The flags that choose the writer, shared by every verb that writes.

/// Which model writes: `--model`, `--model-url`, `--model-name` (FORMAT §8).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct ModelArgs {
    /// `offline` (the extractive baseline, the default when nothing is
    /// configured) or the name of the model at --model-url.
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// An OpenAI-compatible chat-completions base URL (e.g.
    /// http://127.0.0.1:11434/v1); default $SCRIPTORIUM_MODEL_URL.
    #[arg(long)]
    pub(crate) model_url: Option<String>,
    /// The model's name at --model-url; default $SCRIPTORIUM_MODEL_NAME.
    #[arg(long)]
    pub(crate) model_name: Option<String>,
    /// Seconds one model call may take.
    #[arg(long, default_value_t = 120)]
    pub(crate) model_timeout_secs: u64,
}

impl ModelArgs {
    /// The flags as the library takes them.
    pub(crate) fn flags(&self) -> scriptorium::writers::WriterFlags {
        scriptorium::writers::WriterFlags {
            model: self.model.clone(),
            model_url: self.model_url.clone(),
            model_name: self.model_name.clone(),
            model_timeout_secs: self.model_timeout_secs,
        }
    }
}
