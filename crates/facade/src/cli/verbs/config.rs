//! `config show`: every resolved setting, where it came from, secrets
//! hidden.

use scriptorium::config::{Origin, Setting};

use super::Ctx;
use crate::args::ModelArgs;
use crate::report::{self, Outcome};

/// The settings in force for the workspace, the model flags applied.
pub(super) fn show(ctx: &Ctx, workspace: Origin, model: &ModelArgs, as_json: bool) -> Outcome {
    let mut config = ctx.config.clone();
    let flags = model.flags();
    if let Some(u) = &flags.model_url {
        config.model_url = Some(u.clone());
        config.flagged("memory.writer.model_url");
    }
    if let Some(m) = flags.model_name.as_ref().or(flags.model.as_ref()) {
        config.model = Some(m.clone());
        config.flagged("memory.writer.model");
    }
    let mut settings = vec![Setting {
        key: "workspace".to_owned(),
        value: serde_json::Value::from(ctx.root.display().to_string()),
        source: workspace,
    }];
    settings.extend(config.settings());
    if as_json {
        return report::json_line(&serde_json::json!({ "settings": settings }));
    }
    let width = settings.iter().map(|s| s.key.len()).max().unwrap_or(0);
    let lines: Vec<String> =
        settings.iter().map(|s| format!("{:width$} = {}  ({})", s.key, s.value, s.source.as_str())).collect();
    report::line(&lines.join("\n"))
}
