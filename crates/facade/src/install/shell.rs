//! Shell words: quoting a path for a hook command, and reading the first
//! words of a command back to recognise one install wrote.

/// `s` as one POSIX shell word: in single quotes, each `'` written `'\''`.
/// Nothing inside is expanded, whatever it holds (spaces, `$`, backquotes,
/// newlines).
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The first `n` words of a command as a POSIX shell splits them (single
/// quotes, double quotes with their backslash escapes, backslash escapes
/// outside quotes; fewer when the command has fewer; a word is its quoted
/// text with the quoting removed, nothing expanded), and whether an
/// unquoted character that makes the shell do
/// more than run one program with its words (`;`, `&`, `|`, `<`, `>`,
/// `(`, `)`, `$`, a backquote, `#`, a newline) came up.
fn split(command: &str, n: usize) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut operator = false;
    let mut chars = command.chars().peekable();
    while out.len() < n {
        while chars.peek().is_some_and(|c| c.is_whitespace() && *c != '\n') {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() && c != '\n' {
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
                            '$' | '`' => {
                                operator = true;
                                word.push(c);
                            }
                            _ => word.push(c),
                        }
                    }
                }
                '\\' => word.extend(chars.next()),
                ';' | '&' | '|' | '<' | '>' | '(' | ')' | '$' | '`' | '#' | '\n' => {
                    operator = true;
                    word.push(c);
                }
                _ => word.push(c),
            }
        }
        out.push(word);
    }
    (out, operator)
}

/// Whether `command` is one install writes, whatever binary and workspace
/// it named: a `scriptorium` binary (any folder, `.exe` or not) run as
/// `scriptorium hook <harness>`, optionally with `--workspace DIR`, and
/// nothing else — a person's command that chains more (`&& notify-send`,
/// a pipe, a redirection, a second line) is theirs, never taken out.
pub(crate) fn is_hook_command(command: &str, harness: &str) -> bool {
    let (w, operator) = split(command, 6);
    if operator || w.len() < 3 || !is_scriptorium(&w[0]) || w[1] != "hook" || w[2] != harness {
        return false;
    }
    match &w[3..] {
        [] => true,
        [flag, _] => flag == "--workspace",
        [one] => one.starts_with("--workspace="),
        _ => false,
    }
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
            assert_eq!(split(&quote(s), 2).0, vec![s.to_owned()], "{s:?}");
        }
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn words_read_the_usual_quoting() {
        assert_eq!(split(r#"a "b c\"d" e\ f 'g'h"#, 9).0, ["a", "b c\"d", "e f", "gh"]);
        assert_eq!(split("  one   two ", 1).0, ["one"]);
        assert!(split("   ", 3).0.is_empty());
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
        for chained in [
            "scriptorium hook codex && notify-send done",
            "scriptorium hook codex; echo x",
            "scriptorium hook codex | tee log",
            "scriptorium hook codex > out",
            "scriptorium hook codex # note",
            "scriptorium hook codex\necho x",
            "scriptorium hook codex --workspace \"$HOME/w\"",
            "scriptorium hook codex --workspace /w --verbose",
        ] {
            assert!(!is_hook_command(chained, "codex"), "{chained:?}");
        }
        assert!(is_hook_command("scriptorium hook codex --workspace=/w", "codex"));
    }
}
