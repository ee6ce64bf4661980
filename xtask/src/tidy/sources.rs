//! The rules read from the Rust files themselves: every file opens with a
//! `//!` doc, no unfinished-code or debugging macros, and no source file of
//! a crate longer than [`MAX_FILE_LINES`] without its tests.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::lexer::code_only;

/// The most lines a source file under `crates/*/src` may have, not counting
/// its `#[cfg(test)]` modules; test files do not count at all.
pub(crate) const MAX_FILE_LINES: usize = 600;

/// The folders whose Rust files the source rules read.
pub(crate) const SOURCE_DIRS: &[&str] = &["crates", "xtask", "benches", "fuzz"];

/// Every `.rs` file under `dir`, build output, fuzz corpora and artifacts
/// left out.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && name != ".git" && name != "corpus" && name != "artifacts" {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The Rust files of [`SOURCE_DIRS`], sorted, each with its text and its
/// path relative to `root` (with `/`).
pub(crate) fn read_sources(root: &Path) -> Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    if files.is_empty() {
        bail!("no Rust files found under {}", root.display());
    }
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
        let rel = f.strip_prefix(root).unwrap_or(&f).to_string_lossy().replace('\\', "/");
        out.push((rel, text));
    }
    Ok(out)
}

/// Every Rust file documents itself and holds no unfinished code; no
/// crate source file is too long.
pub(crate) fn check_sources(sources: &[(String, String)], problems: &mut Vec<String>) {
    let banned: Vec<String> = ["todo", "unimplemented", "dbg"].iter().map(|m| format!("{m}!")).collect();
    for (rel, text) in sources {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if !first.starts_with("//!") {
            problems.push(format!("{rel}: must open with a `//!` doc saying what the module is"));
        }
        for (n, line) in text.lines().enumerate() {
            for b in &banned {
                if line.contains(b.as_str()) {
                    problems.push(format!("{rel}:{}: `{b}` is not allowed", n + 1));
                }
            }
        }
        if is_crate_source(rel) {
            let n = counted_lines(text);
            if n > MAX_FILE_LINES {
                problems.push(format!(
                    "{rel}: {n} lines without its test modules, over the {MAX_FILE_LINES} a source file may have: split it into modules"
                ));
            }
        }
    }
}

/// Whether the length rule reads `rel`: a file under `crates/*/src` that is
/// not a test file (`tests.rs`, or anything in a `tests` folder).
fn is_crate_source(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    parts.len() > 3
        && parts[0] == "crates"
        && parts[2] == "src"
        && !parts[3..parts.len() - 1].contains(&"tests")
        && parts.last() != Some(&"tests.rs")
}

/// Lines of `text` outside its test modules: a `#[cfg(test)]` (or
/// `#[cfg(all(test, …))]`) on a `mod`, from the attribute's line to the
/// module's closing brace (or its `;`), found by brace matching with
/// comments and literals blanked.
pub(crate) fn counted_lines(text: &str) -> usize {
    let code = code_only(text);
    let line_of = |offset: usize| code[..offset].matches('\n').count();
    let mut excluded = 0;
    let mut from = 0;
    while let Some(k) = code[from..].find("#[cfg(") {
        let start = from + k;
        let Some(attr_end) = closing(&code, start + 1, b'[', b']') else { break };
        from = attr_end;
        if !is_test_predicate(&code[start + "#[cfg(".len()..attr_end - 2]) {
            continue;
        }
        if let Some(end) = test_module_end(&code, attr_end) {
            excluded += line_of(end - 1) - line_of(start) + 1;
            from = end;
        }
    }
    text.lines().count() - excluded
}

/// Whether a `cfg` predicate holds only in tests: `test`, or `all(…)` with
/// `test` among its items.
fn is_test_predicate(predicate: &str) -> bool {
    let p: String = predicate.chars().filter(|c| !c.is_whitespace()).collect();
    if p == "test" {
        return true;
    }
    let Some(inner) = p.strip_prefix("all(").and_then(|s| s.strip_suffix(')')) else { return false };
    let mut depth = 0;
    let mut item = String::new();
    for ch in inner.chars().chain([',']) {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                if item == "test" {
                    return true;
                }
                item.clear();
                continue;
            }
            _ => {}
        }
        item.push(ch);
    }
    false
}

/// The end (exclusive) of the `mod` item that follows an attribute ending
/// at `pos` (other attributes between are allowed), or `None` when the item
/// is not a module.
fn test_module_end(code: &str, mut pos: usize) -> Option<usize> {
    let b = code.as_bytes();
    let skip_ws = |mut p: usize| {
        while p < b.len() && b[p].is_ascii_whitespace() {
            p += 1;
        }
        p
    };
    pos = skip_ws(pos);
    while code[pos..].starts_with("#[") {
        pos = skip_ws(closing(code, pos + 1, b'[', b']')?);
    }
    if code[pos..].starts_with("pub") {
        pos = skip_ws(pos + 3);
        if b.get(pos) == Some(&b'(') {
            pos = skip_ws(closing(code, pos, b'(', b')')?);
        }
    }
    let rest = code[pos..].strip_prefix("mod")?;
    if !rest.starts_with(|c: char| c.is_whitespace()) {
        return None;
    }
    let k = rest.find([';', '{'])?;
    let at = pos + 3 + k;
    if b[at] == b';' {
        Some(at + 1)
    } else {
        closing(code, at, b'{', b'}')
    }
}

/// The end (exclusive) of the bracketed group opening at `open`.
fn closing(code: &str, open: usize, left: u8, right: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &ch) in code.as_bytes().iter().enumerate().skip(open) {
        if ch == left {
            depth += 1;
        } else if ch == right {
            depth -= 1;
            if depth == 0 {
                return Some(k + 1);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    //! The source rules can fail, and the length counts what it should.
    use super::*;

    #[test]
    fn undocumented_and_unfinished_files_are_caught() {
        let sources = [("crates/x/src/lib.rs".to_owned(), format!("fn f() {{ {}!() }}\n", "todo"))];
        let mut problems = Vec::new();
        check_sources(&sources, &mut problems);
        assert_eq!(problems.len(), 2, "{problems:?}");
    }

    #[test]
    fn test_modules_do_not_count() {
        let text = "//! doc\nfn a() {}\n\n#[cfg(test)]\nmod tests {\n    fn s() { let _ = \"}\"; } // }\n    #[test]\n    fn t() {}\n}\n#[cfg(all(test, feature = \"x\"))]\n#[allow(dead_code)]\npub(crate) mod more;\nfn b() {}\n#[cfg(test)]\nfn helper() {}\n#[cfg(not(test))]\nmod real {}\n";
        // 17 lines: the 6-line and 3-line test modules leave 8.
        assert_eq!(text.lines().count(), 17);
        assert_eq!(counted_lines(text), 8);
    }

    #[test]
    fn long_files_are_caught_but_not_test_files() {
        let long = format!("//! doc\n{}", "fn f() {}\n".repeat(MAX_FILE_LINES));
        let tests =
            format!("//! doc\n#[cfg(test)]\nmod tests {{\n{}}}\n", "fn f() {}\n".repeat(MAX_FILE_LINES));
        let sources = [
            ("crates/x/src/long.rs".to_owned(), long.clone()),
            ("crates/x/src/ok.rs".to_owned(), tests),
            ("crates/x/src/a/tests.rs".to_owned(), long.clone()),
            ("crates/x/src/a/tests/b.rs".to_owned(), long.clone()),
            ("crates/x/tests/it.rs".to_owned(), long.clone()),
            ("benches/src/long.rs".to_owned(), long),
        ];
        let mut problems = Vec::new();
        check_sources(&sources, &mut problems);
        assert_eq!(problems, [format!("crates/x/src/long.rs: 601 lines without its test modules, over the {MAX_FILE_LINES} a source file may have: split it into modules")]);
    }

    #[test]
    fn test_predicates() {
        assert!(is_test_predicate("test"));
        assert!(is_test_predicate("all(test, feature = \"tokens\")"));
        assert!(!is_test_predicate("any(test, fuzzing)"));
        assert!(!is_test_predicate("not(test)"));
        assert!(!is_test_predicate("all(not(test), unix)"));
        assert!(!is_test_predicate("doctest"));
    }
}
