//! The function length rule, enforced by clippy: `too_many_lines` is on in
//! `[workspace.lints.clippy]` with its threshold in `clippy.toml`, and the
//! lint is allowed nowhere but at the functions listed in
//! [`LONG_FUNCTIONS`].

use std::path::Path;

use anyhow::{Context, Result};

use super::lexer::code_only;

/// The most lines a function may have, as clippy's `too_many_lines` counts
/// them (code lines of its body, not blank lines or comments).
pub(crate) const MAX_FUNCTION_LINES: i64 = 100;

/// How many functions may allow `clippy::too_many_lines` at all.
pub(crate) const MAX_LONG_FUNCTIONS: usize = 2;

/// The functions that may allow `clippy::too_many_lines`, as
/// `(file, function, why it cannot be split)`. Keep it empty unless a
/// function truly cannot be split.
pub(crate) const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[];

/// The clippy configuration is in place: the lint on for the workspace and
/// its threshold at most [`MAX_FUNCTION_LINES`].
pub(crate) fn check_config(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).context("cannot read Cargo.toml")?;
    let clippy_toml = std::fs::read_to_string(root.join("clippy.toml")).unwrap_or_default();
    config_problems(&manifest, &clippy_toml, problems)
}

fn config_problems(manifest: &str, clippy_toml: &str, problems: &mut Vec<String>) -> Result<()> {
    let manifest: toml::Table = manifest.parse().context("Cargo.toml is not valid TOML")?;
    let lint = manifest
        .get("workspace")
        .and_then(|w| w.get("lints"))
        .and_then(|l| l.get("clippy"))
        .and_then(|c| c.get("too_many_lines"));
    let level = lint.and_then(|l| l.as_str().or_else(|| l.get("level").and_then(toml::Value::as_str)));
    if !matches!(level, Some("warn" | "deny" | "forbid")) {
        problems.push(
            "Cargo.toml: `[workspace.lints.clippy]` must set `too_many_lines` to \"warn\" or \"deny\" (clippy runs with -D warnings in `cargo xtask ci`)".to_owned(),
        );
    }
    let clippy: toml::Table = clippy_toml.parse().context("clippy.toml is not valid TOML")?;
    let threshold = clippy.get("too-many-lines-threshold").and_then(toml::Value::as_integer);
    if threshold.is_none_or(|t| t > MAX_FUNCTION_LINES) {
        problems.push(format!(
            "clippy.toml: must set `too-many-lines-threshold = {MAX_FUNCTION_LINES}` (found {threshold:?})"
        ));
    }
    Ok(())
}

/// Every `allow`/`expect` of `clippy::too_many_lines` in the sources, as
/// `(file, line, function)`; `function` is `*` for an inner attribute (a
/// whole module).
fn long_function_allowances(sources: &[(String, String)]) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    for (rel, text) in sources {
        let code = code_only(text);
        let lines: Vec<&str> = code.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            if !compact.contains("clippy::too_many_lines")
                || !(compact.contains("allow(") || compact.contains("expect("))
            {
                continue;
            }
            let function = if compact.starts_with("#![") {
                "*".to_owned()
            } else {
                lines[n..].iter().find_map(|l| function_name(l)).unwrap_or_else(|| "?".to_owned())
            };
            out.push((rel.clone(), n + 1, function));
        }
    }
    out
}

/// The name of the function a line declares, if it declares one.
fn function_name(line: &str) -> Option<String> {
    let k = line.find("fn ")?;
    if k > 0 && line[..k].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let name: String =
        line[k + 3..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// At most [`MAX_LONG_FUNCTIONS`] allowances of `too_many_lines`, each at a
/// function listed in [`LONG_FUNCTIONS`].
pub(crate) fn check_allowances(sources: &[(String, String)], problems: &mut Vec<String>) {
    check_allowances_against(sources, LONG_FUNCTIONS, problems);
}

fn check_allowances_against(
    sources: &[(String, String)],
    listed: &[(&str, &str, &str)],
    problems: &mut Vec<String>,
) {
    if listed.len() > MAX_LONG_FUNCTIONS {
        problems.push(format!(
            "xtask/src/tidy/functions.rs: LONG_FUNCTIONS lists {} functions, at most {MAX_LONG_FUNCTIONS} may be long",
            listed.len()
        ));
    }
    let found = long_function_allowances(sources);
    if found.len() > MAX_LONG_FUNCTIONS {
        problems.push(format!(
            "clippy::too_many_lines is allowed {} times, at most {MAX_LONG_FUNCTIONS}: split the functions",
            found.len()
        ));
    }
    for (rel, line, function) in found {
        if !listed.iter().any(|(f, name, _)| *f == rel && *name == function) {
            problems.push(format!(
                "{rel}:{line}: `{function}` allows clippy::too_many_lines but is not in LONG_FUNCTIONS (xtask/src/tidy/functions.rs): split it into functions of at most {MAX_FUNCTION_LINES} lines"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    //! The function length rule can fail.
    use super::*;

    const MANIFEST: &str = "[workspace.lints.clippy]\ntoo_many_lines = \"deny\"\n";

    #[test]
    fn a_missing_lint_or_threshold_is_caught() {
        let mut problems = Vec::new();
        config_problems(MANIFEST, "too-many-lines-threshold = 100\n", &mut problems).unwrap();
        config_problems(
            "[workspace.lints.clippy]\ntoo_many_lines = { level = \"warn\", priority = 1 }\n",
            "too-many-lines-threshold = 80\n",
            &mut problems,
        )
        .unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        config_problems("[workspace.lints.clippy]\ntodo = \"deny\"\n", "", &mut problems).unwrap();
        assert_eq!(problems.len(), 2, "{problems:?}");
        problems.clear();
        config_problems(
            "[workspace.lints.clippy]\ntoo_many_lines = \"allow\"\n",
            "too-many-lines-threshold = 150\n",
            &mut problems,
        )
        .unwrap();
        assert_eq!(problems.len(), 2, "{problems:?}");
    }

    #[test]
    fn unlisted_and_excess_allowances_are_caught() {
        let attr = format!("#[allow(clippy::{})]", "too_many_lines");
        let text = format!(
            "//! x\n{attr}\nfn long_one() {{}}\n// {attr}\nconst S: &str = \"{attr}\";\n#[allow(clippy::print_stdout, clippy::{})]\npub(crate) fn other() {{}}\n",
            "too_many_lines"
        );
        let sources = [("crates/x/src/a.rs".to_owned(), text.clone()), ("benches/b.rs".to_owned(), text)];
        let found = long_function_allowances(&sources);
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(found[0], ("crates/x/src/a.rs".to_owned(), 2, "long_one".to_owned()));
        assert_eq!(found[1], ("crates/x/src/a.rs".to_owned(), 6, "other".to_owned()));

        let mut problems = Vec::new();
        let listed = [
            ("crates/x/src/a.rs", "long_one", "r"),
            ("crates/x/src/a.rs", "other", "r"),
            ("benches/b.rs", "long_one", "r"),
        ];
        check_allowances_against(&sources, &listed, &mut problems);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("LONG_FUNCTIONS lists 3"));
        assert!(problems[1].contains("allowed 4 times"));
        assert!(problems[2].starts_with("benches/b.rs:6: `other`"));

        problems.clear();
        check_allowances_against(&sources[..1], &listed[..2], &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
    }
}
