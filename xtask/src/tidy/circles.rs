//! No import circles between the modules of a crate.
//!
//! The modules of a crate root (`src/lib.rs`, `src/main.rs`) are read from
//! its `mod x;` declarations, down the tree (`x.rs` or `x/mod.rs`, children
//! in `x/`), inline `mod x { … }` blocks included. A path a file names in
//! code (comments and literals blanked) — in a `use` (groups expanded) or
//! anywhere else — is resolved to a path from the crate root: `crate::…`
//! as it is, `super::…` from the module the path is written in (an inline
//! module counts), `$crate` ignored. Two modules with the same parent
//! (the root, or a module folder) are *siblings*; sibling `A` depends on
//! sibling `B` when code anywhere inside `A` (`A.rs`, `A/**`, its inline
//! modules and tests) names a path inside `B`. Every strongly connected
//! component of more than one sibling is a circle, reported with one
//! example reference per edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::lexer::code_only;
use super::scc::strongly_connected;

/// A module's path from the crate root (empty: the root).
type ModPath = Vec<String>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Semi,
    Comma,
    Dollar,
    Star,
    Other,
}

/// The tokens of blanked code that matter here, with their 1-based lines.
fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let tok = match ch {
            '\n' => {
                line += 1;
                i += 1;
                continue;
            }
            _ if ch.is_whitespace() => {
                i += 1;
                continue;
            }
            _ if ch.is_alphabetic() || ch == '_' => {
                let start = i;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                out.push((Tok::Ident(c[start..i].iter().collect()), line));
                continue;
            }
            ':' if c.get(i + 1) == Some(&':') => {
                i += 1;
                Tok::PathSep
            }
            '{' => Tok::Open,
            '}' => Tok::Close,
            ';' => Tok::Semi,
            ',' => Tok::Comma,
            '$' => Tok::Dollar,
            '*' => Tok::Star,
            _ => Tok::Other,
        };
        out.push((tok, line));
        i += 1;
    }
    out
}

/// What one file declares and names.
#[derive(Debug, Default)]
struct Scan {
    /// `mod x;` declarations: the child's path, and its folder relative to
    /// the file's children folder.
    declared: Vec<(ModPath, PathBuf)>,
    /// Inline `mod x { … }` blocks.
    inline: Vec<ModPath>,
    /// Paths named: from the module the path is in, to the path, at a line.
    named: Vec<(ModPath, ModPath, usize)>,
}

fn is(toks: &[(Tok, usize)], k: usize, t: &Tok) -> bool {
    toks.get(k).is_some_and(|(x, _)| x == t)
}

fn ident(toks: &[(Tok, usize)], k: usize) -> Option<&str> {
    match toks.get(k) {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

/// The paths of the use tree (or plain path) at `k` under `prefix`, and the
/// index after it.
fn use_tree(toks: &[(Tok, usize)], k: usize, prefix: &ModPath) -> (Vec<ModPath>, usize) {
    if is(toks, k, &Tok::Open) {
        let mut out = Vec::new();
        let mut j = k + 1;
        while j < toks.len() && !is(toks, j, &Tok::Close) {
            let (paths, next) = use_tree(toks, j, prefix);
            out.extend(paths);
            j = next;
            while j < toks.len() && !is(toks, j, &Tok::Comma) && !is(toks, j, &Tok::Close) {
                j += 1;
            }
            if is(toks, j, &Tok::Comma) {
                j += 1;
            }
        }
        return (out, j + 1);
    }
    match ident(toks, k) {
        Some("self") => (vec![prefix.clone()], k + 1),
        Some(name) => {
            let mut path = prefix.clone();
            path.push(name.to_owned());
            if is(toks, k + 1, &Tok::PathSep) {
                use_tree(toks, k + 2, &path)
            } else {
                (vec![path], k + 1)
            }
        }
        None => (vec![prefix.clone()], k + usize::from(is(toks, k, &Tok::Star))),
    }
}

/// Scans the blanked code of the file of module `module`.
fn scan(code: &str, module: &ModPath) -> Scan {
    let toks = tokens(code);
    let mut out = Scan::default();
    let mut depth = 0usize;
    // Inline modules open here: (name, depth inside their braces).
    let mut stack: Vec<(String, usize)> = Vec::new();
    let here = |stack: &[(String, usize)]| -> ModPath {
        module.iter().cloned().chain(stack.iter().map(|(n, _)| n.clone())).collect()
    };
    let mut k = 0;
    while k < toks.len() {
        let line = toks[k].1;
        let after_sep = k > 0 && is(&toks, k - 1, &Tok::PathSep);
        match &toks[k].0 {
            Tok::Open => depth += 1,
            Tok::Close => {
                depth = depth.saturating_sub(1);
                while stack.last().is_some_and(|(_, d)| *d > depth) {
                    stack.pop();
                }
            }
            Tok::Ident(w) if w == "mod" => {
                if let Some(name) = ident(&toks, k + 1) {
                    let mut path = here(&stack);
                    path.push(name.to_owned());
                    if is(&toks, k + 2, &Tok::Semi) {
                        let dir: PathBuf = stack.iter().map(|(n, _)| n.as_str()).chain([name]).collect();
                        out.declared.push((path, dir));
                    } else if is(&toks, k + 2, &Tok::Open) {
                        out.inline.push(path);
                        stack.push((name.to_owned(), depth + 1));
                    }
                }
            }
            Tok::Ident(w) if w == "crate" && !after_sep && is(&toks, k + 1, &Tok::PathSep) => {
                let dollar = k > 0 && is(&toks, k - 1, &Tok::Dollar);
                if !dollar {
                    let (paths, _) = use_tree(&toks, k + 2, &Vec::new());
                    out.named.extend(paths.into_iter().map(|p| (here(&stack), p, line)));
                }
            }
            Tok::Ident(w) if w == "super" && !after_sep && is(&toks, k + 1, &Tok::PathSep) => {
                let mut base = here(&stack);
                base.pop();
                let mut j = k + 2;
                while ident(&toks, j) == Some("super") && is(&toks, j + 1, &Tok::PathSep) {
                    base.pop();
                    j += 2;
                }
                let (paths, _) = use_tree(&toks, j, &base);
                out.named.extend(paths.into_iter().map(|p| (here(&stack), p, line)));
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// One crate root's modules and the paths named in them.
#[derive(Debug, Default)]
struct Crate {
    modules: BTreeSet<ModPath>,
    /// (from module, to path, file, line).
    named: Vec<(ModPath, ModPath, String, usize)>,
}

/// Reads the module tree under the root file `root_file`.
fn read_crate(repo: &Path, root_file: &Path) -> Result<Crate> {
    let mut krate = Crate::default();
    let dir = root_file.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut queue: Vec<(PathBuf, ModPath, PathBuf)> = vec![(root_file.to_path_buf(), Vec::new(), dir)];
    while let Some((file, module, children)) = queue.pop() {
        let text =
            std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
        let rel = file.strip_prefix(repo).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        let s = scan(&code_only(&text), &module);
        krate.modules.extend(s.inline);
        krate.named.extend(s.named.into_iter().map(|(from, to, line)| (from, to, rel.clone(), line)));
        for (path, sub) in s.declared {
            let folder = children.join(&sub);
            let flat = folder.with_extension("rs");
            let child = if flat.is_file() { flat } else { folder.join("mod.rs") };
            if child.is_file() {
                queue.push((child, path.clone(), folder));
            }
            krate.modules.insert(path);
        }
    }
    Ok(krate)
}

/// Sibling edges of a crate: per parent module, `from → to` with one
/// example (file, line, path named).
type Edges = BTreeMap<ModPath, BTreeMap<(String, String), (String, usize, ModPath)>>;

fn edges(krate: &Crate) -> Edges {
    let mut out = Edges::new();
    for (from, to, file, line) in &krate.named {
        let Some(l) = from.iter().zip(to).position(|(a, b)| a != b) else { continue };
        if !krate.modules.contains(&to[..=l]) {
            continue;
        }
        out.entry(from[..l].to_vec())
            .or_default()
            .entry((from[l].clone(), to[l].clone()))
            .or_insert_with(|| (file.clone(), *line, to.clone()));
    }
    out
}

/// The strongly connected components of more than one module, each
/// sorted.
fn circles(graph: &BTreeMap<(String, String), (String, usize, ModPath)>) -> Vec<Vec<String>> {
    let nodes: Vec<&String> =
        graph.keys().flat_map(|(a, b)| [a, b]).collect::<BTreeSet<_>>().into_iter().collect();
    let index_of = |n: &String| nodes.iter().position(|m| *m == n).unwrap_or(0);
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| graph.keys().filter(|(a, _)| a == *n).map(|(_, b)| index_of(b)).collect())
        .collect();
    let mut out: Vec<Vec<String>> = strongly_connected(&succ)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut names: Vec<String> = c.into_iter().map(|v| nodes[v].clone()).collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

/// The circles of the crate rooted at `root_file`, one problem each.
fn crate_circles(repo: &Path, root_file: &Path) -> Result<Vec<String>> {
    let krate = read_crate(repo, root_file)?;
    let rel = root_file.strip_prefix(repo).unwrap_or(root_file).to_string_lossy().replace('\\', "/");
    let mut problems = Vec::new();
    for (parent, graph) in edges(&krate) {
        let qualify = |m: &str| parent.iter().map(String::as_str).chain([m]).collect::<Vec<_>>().join("::");
        for circle in circles(&graph) {
            let mut examples = Vec::new();
            for ((a, b), (file, line, to)) in &graph {
                if circle.contains(a) && circle.contains(b) {
                    examples.push(format!(
                        "{} → {} ({file}:{line} names crate::{})",
                        qualify(a),
                        qualify(b),
                        to.join("::")
                    ));
                }
            }
            let names: Vec<String> = circle.iter().map(|m| qualify(m)).collect();
            problems.push(format!(
                "{rel}: import circle between modules {}: {}",
                names.join(", "),
                examples.join("; ")
            ));
        }
    }
    Ok(problems)
}

/// Every crate root of the workspace members at `member_dirs` is free of
/// import circles.
pub(crate) fn check_circles(repo: &Path, member_dirs: &[PathBuf], problems: &mut Vec<String>) -> Result<()> {
    for dir in member_dirs {
        for root_file in ["src/lib.rs", "src/main.rs"] {
            let f = dir.join(root_file);
            if f.is_file() {
                problems.extend(crate_circles(repo, &f)?);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The circle rule can fail, and reads paths as the compiler does.
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    #[test]
    fn circles_between_siblings_are_caught() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                ("src/lib.rs", "//! x\nmod a;\npub mod b;\nmod c;\nmod d;\npub use a::X;\n"),
                (
                    "src/a.rs",
                    "//! a\nuse crate::b::Y;\npub struct X;\n#[cfg(test)]\nmod tests {\n    use super::c;\n    use super::*;\n}\n",
                ),
                (
                    "src/b.rs",
                    "//! b\npub struct Y;\nfn f() -> super::a::X { let _ = \"crate::c::Z\"; crate::a::X } // crate::c\n",
                ),
                ("src/c.rs", "//! c\nuse crate::{a::X, b::{self, Y}};\npub struct Z;\nmacro_rules! m { () => { $crate::d::e::W } }\n"),
                ("src/d/mod.rs", "//! d\nmod e;\nmod f;\nmod g { pub(super) fn h() { super::f::V; } }\n"),
                ("src/d/e.rs", "//! e\npub struct W;\nfn k() { super::f::V; }\n"),
                ("src/d/f.rs", "//! f\npub struct V;\nuse crate::d::e::W;\nuse super::super::c::Z;\n"),
            ],
        );
        let problems = crate_circles(dir.path(), &dir.path().join("src/lib.rs")).unwrap();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert_eq!(
            problems[0],
            "src/lib.rs: import circle between modules a, b: a → b (src/a.rs:2 names crate::b::Y); b → a (src/b.rs:3 names crate::a::X)"
        );
        assert_eq!(
            problems[1],
            "src/lib.rs: import circle between modules d::e, d::f: d::e → d::f (src/d/e.rs:3 names crate::d::f::V); d::f → d::e (src/d/f.rs:3 names crate::d::e::W)"
        );
    }

    #[test]
    fn use_trees_expand() {
        let toks = tokens("{a::{self, b}, c::*, d}");
        let (paths, next) = use_tree(&toks, 0, &vec!["x".to_owned()]);
        assert_eq!(next, toks.len());
        let want: Vec<ModPath> = [vec!["x", "a"], vec!["x", "a", "b"], vec!["x", "c"], vec!["x", "d"]]
            .iter()
            .map(|p| p.iter().map(|s| s.to_string()).collect())
            .collect();
        assert_eq!(paths, want);
    }
}
