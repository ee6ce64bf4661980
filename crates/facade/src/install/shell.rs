//! Shell words: quoting a path for a hook command, and reading the first
//! words of a command back to recognise one install wrote.

/// `s` as one POSIX shell word: in single quotes, each `'` written `'\''`.
/// Nothing inside is expanded, whatever it holds (spaces, `$`, backquotes,
/// newlines).
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The first `n` words of a command as a POSIX shell splits them: single
/// quotes, double quotes (a backslash escaping `"`, `\`, `$`, a backquote
/// or a newline) and backslash escapes outside quotes; fewer when the
/// command has fewer. Expansions are not performed: a word is its quoted
/// text with the quoting removed.
pub(crate) fn words(command: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = command.chars().peekable();
    while out.len() < n {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            match c {
                '\'' => word.extend(chars.by_ref().take_while(|&c| c != '\'')),
                '"' => {
                    while let Some(c) = chars.next() {
                        match c {
                            '"' => break,
                            '\\' if chars.peek().is_some_and(|n| "\"\\$`\n".contains(*n)) => {
                                word.extend(chars.next());
                            }
                            _ => word.push(c),
                        }
                    }
                }
                '\\' => word.extend(chars.next()),
                _ => word.push(c),
            }
        }
        out.push(word);
    }
    out
}

/// Whether `command` runs a `scriptorium` binary (any folder, `.exe` or
/// not) as `scriptorium hook <harness> …`: the commands install writes,
/// whatever binary and workspace they named.
pub(crate) fn is_hook_command(command: &str, harness: &str) -> bool {
    let w = words(command, 3);
    w.len() == 3 && is_scriptorium(&w[0]) && w[1] == "hook" && w[2] == harness
}

/// Whether `program` names a `scriptorium` binary.
pub(crate) fn is_scriptorium(program: &str) -> bool {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    name == "scriptorium" || name.eq_ignore_ascii_case("scriptorium.exe")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips() {
        for s in ["/usr/bin/scriptorium", "/a b/it's \"here\"/$HOME/`x`", "", "'", "\n"] {
            assert_eq!(words(&quote(s), 2), vec![s.to_owned()], "{s:?}");
        }
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn words_read_the_usual_quoting() {
        assert_eq!(words(r#"a "b c\"d" e\ f 'g'h"#, 9), ["a", "b c\"d", "e f", "gh"]);
        assert_eq!(words("  one   two ", 1), ["one"]);
        assert!(words("   ", 3).is_empty());
    }

    #[test]
    fn our_commands_are_recognised() {
        assert!(is_hook_command("scriptorium hook claude-code", "claude-code"));
        assert!(is_hook_command(
            &format!("{} hook codex --workspace {}", quote("/x y/scriptorium"), quote("/w")),
            "codex"
        ));
        assert!(is_hook_command(r#""C:\bin\scriptorium.exe" hook codex"#, "codex"));
        assert!(!is_hook_command("scriptorium hook codex", "claude-code"));
        assert!(!is_hook_command("scriptorium-other hook codex", "codex"));
        assert!(!is_hook_command("echo scriptorium hook codex", "codex"));
        assert!(!is_hook_command("scriptorium hookx codex", "codex"));
    }
}
