//! What the binary says: results on stdout, one line each; warnings and
//! notes on stderr; and the one reporter of a refusal, the FORMAT.md §5
//! error object on stderr with exit code 1.

use std::io::{self, Write};
use std::process::ExitCode;

use scriptorium::archive::{self, json};
use scriptorium::scheduler::{self, WriteFailure};
use scriptorium::{transaction, Code, Error};

/// How a verb that ran to its end exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Exit 0.
    Success,
    /// Exit 1 with nothing more said: the results printed are the findings
    /// (diagnostics, say).
    Findings,
}

/// Why a verb stopped.
#[derive(Debug)]
pub(crate) enum Failure {
    /// A refusal or failure, printed as the error object.
    Refused(Error),
    /// stdout was closed by its reader: exit 1, saying nothing.
    BrokenPipe,
}

/// What every verb returns.
pub(crate) type Outcome = Result<Exit, Failure>;

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Refused(e)
    }
}

impl From<transaction::Error> for Failure {
    fn from(e: transaction::Error) -> Failure {
        Failure::Refused(e.into())
    }
}

impl From<archive::Error> for Failure {
    fn from(e: archive::Error) -> Failure {
        Failure::Refused(e.into())
    }
}

impl From<scheduler::Error> for Failure {
    fn from(e: scheduler::Error) -> Failure {
        Failure::Refused(e.into())
    }
}

impl From<WriteFailure> for Failure {
    fn from(f: WriteFailure) -> Failure {
        Failure::Refused(f.into())
    }
}

/// A failure to write the output: a closed pipe ends the verb quietly.
impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Failure::BrokenPipe;
        }
        Failure::Refused(Error::new(Code::Io, format!("writing output: {e}")))
    }
}

/// A refusal with `code` and `message` about `path`, if any.
pub(crate) fn refusal(code: Code, message: impl Into<String>, path: Option<&std::path::Path>) -> Failure {
    let e = Error::new(code, message);
    Failure::Refused(match path {
        Some(p) => e.at(p.to_string_lossy().into_owned()),
        None => e,
    })
}

/// The exit status of a verb's outcome, after printing its error object.
pub(crate) fn finish(outcome: Outcome) -> ExitCode {
    match outcome {
        Ok(Exit::Success) => ExitCode::SUCCESS,
        Ok(Exit::Findings) | Err(Failure::BrokenPipe) => ExitCode::from(1),
        Err(Failure::Refused(e)) => {
            error_object(&e);
            ExitCode::from(1)
        }
    }
}

/// Prints `{"error": …}` on stderr.
pub(crate) fn error_object(e: &Error) {
    let _ = writeln!(io::stderr().lock(), "{}", json::to_line(&e.to_value()));
}

/// One line on stdout.
pub(crate) fn line(text: &str) -> Outcome {
    writeln!(io::stdout().lock(), "{text}")?;
    Ok(Exit::Success)
}

/// One JSON object on stdout, as one line.
pub(crate) fn json_line<T: serde::Serialize + ?Sized>(value: &T) -> Outcome {
    line(&json::to_line(value))
}

/// `warning: …` on stderr, one per warning.
pub(crate) fn warn(warnings: &[String]) {
    for w in warnings {
        let _ = writeln!(io::stderr().lock(), "warning: {w}");
    }
}

/// `note: …` on stderr.
pub(crate) fn note(text: &str) {
    let _ = writeln!(io::stderr().lock(), "note: {text}");
}

/// A value shown on a terminal: control and format characters (escape
/// sequences, bidi controls, line separators) are written as `\u{…}`, so
/// a file name or label can neither move the cursor nor break the line.
pub(crate) fn shown(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || archive::speaker::is_format_char(c) || matches!(c, '\u{2028}' | '\u{2029}') {
                format!("\\u{{{:x}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A hook's answer to a command line that does not parse: a notice for the
/// person on stdout, exit 0.
pub(crate) fn hook_usage(usage: &str) -> ExitCode {
    let first = usage.lines().next().unwrap_or("").trim_start_matches("error: ");
    let e = Error::invalid(format!("the hook's command line is not valid: {first}"));
    let answer = serde_json::json!({ "systemMessage": scriptorium::hooks::notice(&e) });
    let _ = writeln!(io::stdout().lock(), "{answer}");
    ExitCode::SUCCESS
}
